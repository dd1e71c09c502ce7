"""The parts the corpus build is made of: deterministic compression (with a .Z writer that
gzip and the kit both read), features found in a dump, coverage with exceptions, declared
clauses."""

from __future__ import annotations

import gzip
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from pcpconform.conform.casefile import declared_clauses
from pcpconform.corpusgen.compress import COMPRESSORS, lzw_compress
from pcpconform.corpusgen.coverage import Coverage, Exceptions
from pcpconform.corpusgen.features import archive_features
from pcpconform.io.files import COMPRESSION_SUFFIXES, open_component

ROOT = Path(__file__).resolve().parents[2]
DATA = (ROOT / "corpus/cases/valid/example-v2/a.index").read_bytes()


def test_every_suffix_has_a_deterministic_compressor() -> None:
    assert set(COMPRESSORS) == set(COMPRESSION_SUFFIXES)
    for suffix, compress in COMPRESSORS.items():
        assert compress(DATA) == compress(DATA), suffix


@pytest.mark.parametrize("suffix", sorted(COMPRESSION_SUFFIXES))
def test_the_kit_reads_back_what_each_compressor_writes(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"a.index{suffix}"
    path.write_bytes(COMPRESSORS[suffix](DATA))
    stream = open_component(path)
    try:
        assert stream.read() == DATA
    finally:
        stream.close()


def test_lzw_is_what_gzip_decompresses(tmp_path: Path) -> None:
    if shutil.which("gzip") is None:
        pytest.skip("no gzip")
    for data in (b"", b"a", b"abababababab", DATA, bytes(range(200))):
        path = tmp_path / "x.Z"
        path.write_bytes(lzw_compress(data))
        assert subprocess.run(["gzip", "-dc", str(path)], capture_output=True, check=True).stdout == data
    assert gzip.decompress(COMPRESSORS[".gz"](DATA)) == DATA


def test_lzw_refuses_what_needs_wider_codes() -> None:
    with pytest.raises(ValueError, match="codes"):
        lzw_compress(bytes(range(256)) * 2)


def test_features_of_a_dump() -> None:
    feats = archive_features((ROOT / "corpus/cases/valid/types-v3/dump.jsonl").read_bytes())
    assert {"events", "highres-events", "marks", "labels", "help", "indoms", "dptr", "sptr",
            "strings"} <= feats.found
    assert "multi-volume" not in feats.found and "delta-indom" not in feats.found
    assert {"type:aggregate-static", "type:highres-event", "type:32"} <= set(feats.tags())
    assert "FMT-TIME-2" in feats.clauses() and "FMT-TIME-1" not in feats.clauses()
    many = archive_features((ROOT / "corpus/cases/valid/multi-volume-v2/dump.jsonl").read_bytes())
    assert "multi-volume" in many.found and "FMT-VOL-1" in many.clauses() and "FMT-TIME-1" in many.clauses()
    assert "FMT-RESULT-2" not in many.clauses()          # no mark in it
    delta = archive_features((ROOT / "corpus/cases/valid/delta-indom-v3/dump.jsonl").read_bytes())
    assert "FMT-INDOM-6" in delta.clauses()


def test_coverage_counts_each_kind_and_reads_patterns() -> None:
    clauses = {"A-X-1": "a.md", "A-X-2": "a.md", "B-Y-1": "b.md"}
    exc = Exceptions({"valid": {"B-*": "tools"}, "invalid": {"A-X-2": "cannot be broken", "C-Z-1": "gone"}})
    cov = Coverage(clauses, {"valid": {"A-X-1", "A-X-2"}, "invalid": {"A-X-1", "B-Y-1"}}, exc)
    assert cov.unexcused("valid") == [] and cov.unexcused("invalid") == []
    assert cov.problems() == ["coverage: coverage-exceptions.json: invalid exception C-Z-1 is not a "
                              "clause of spec/"]
    cov.cited["valid"].discard("A-X-2")
    assert cov.unexcused("valid") == ["A-X-2"]
    assert "not cited by a valid case: B-Y-1 (b.md): excused: tools" in cov.listing()
    assert cov.summary()[0] == "a.md: valid 1/2 (+0 excused), invalid 1/2 (+1 excused)"


def test_declared_clauses() -> None:
    text = b"# a comment\n# clauses: FMT-DESC-1 GEN-MARK\nx = y\n# clauses: DERIVE-EVAL-2\n"
    assert declared_clauses(text) == ["FMT-DESC-1", "GEN-MARK", "DERIVE-EVAL-2"]


def test_plans_name_existing_cases_and_files() -> None:
    plans = json.loads((ROOT / "corpus/plans.json").read_text(encoding="utf-8"))
    valid = {p.name for p in (ROOT / "corpus/cases/valid").iterdir()}
    for entry in plans["interp"] + plans["derive"]:
        assert set(entry["cases"]) <= valid, entry["id"]
    for entry in plans["derive"]:
        assert (ROOT / "corpus/derive" / entry["config"]).is_file()
