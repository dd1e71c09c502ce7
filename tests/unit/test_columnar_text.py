"""The text dump's value-set lines formatted as columns (``_ResultLines``) against the
value-by-value reference (``reference_vsets``): the same text on every corpus archive,
instance names with ``%`` in them included (random values: tests/property/test_fast_paths.py)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from pcpconform.dump.text import (
    _ResultLines,
    reference_vsets,
    write_text,
)
from pcpconform.errors import PcpConformError
from pcpconform.io.archive import Archive

ROOT = Path(__file__).resolve().parents[2]
CASES = sorted(p for p in (ROOT / "corpus" / "cases").glob("*/*") if list(p.glob("*.meta*")))


def test_columns_are_the_reference_on_the_corpus() -> None:
    compared = 0
    for case in CASES:
        try:
            archive = Archive(sorted(case.glob("*.meta*"))[0])
            types = {p: d.type for p, d in archive.metadata.descs.items()}
            lines = _ResultLines(archive, types, archive.stats)
            for res in archive.results():
                if not res.is_mark:
                    assert lines.vsets(res) == reference_vsets(archive, res), case.name
                    compared += 1
        except PcpConformError:
            continue
    assert compared > 1000


def test_instance_names_with_percent_signs_print_as_they_are() -> None:
    archive = Archive(ROOT / "corpus" / "cases" / "valid" / "example-v3" / "a")
    for history in archive.metadata.indoms.values():
        for record in history:
            for inst in record.instances:
                record.instances[inst] = f"%s %d %% {inst}"
    types = {p: d.type for p, d in archive.metadata.descs.items()}
    lines = _ResultLines(archive, types, archive.stats)
    shown = [lines.vsets(r) for r in archive.results() if not r.is_mark]
    assert any("%s %d %%" in text for text in shown)
    assert shown == [reference_vsets(archive, r) for r in archive.results() if not r.is_mark]


def test_write_text_shows_every_result_before_a_bad_record() -> None:
    archive = Archive(ROOT / "corpus" / "cases" / "invalid" / "frame-align-v2" / "a")
    out = io.StringIO()
    with pytest.raises(PcpConformError):
        write_text(archive, out)
    assert out.getvalue().endswith('    60.1.2 (mem.util.used): value 1100000\n\n')
