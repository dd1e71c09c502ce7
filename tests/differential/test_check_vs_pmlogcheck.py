"""pmlogcheck (PCP 6.0.3) against `pcpconform check` on damaged archives.

Whenever pmlogcheck flags a mutant of a valid archive (non-zero exit, death by a signal, or
any output), ``check_archive`` must report at least one diagnostic. The mutants are the
defect classes of tests/differential/libpcp/mutants.py (truncations, length words, DPTR indexes,
timestamps, descriptors, undefined pmIDs, index offsets, labels, stray bytes, byte flips),
the invalid corpus, and random byte flips drawn by hypothesis.

pmlogcheck crashes (SIGSEGV) on values of an undescribed pmID followed by a mark and on some
broken event arrays; such a crash counts as flagging the archive.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pcpconform.check.engine import check_archive
from pcpconform.check.corpus import ArchiveEdit, build_corpus
from tests.conftest import needs_libpcp
from tests.differential.libpcp import bridge, mutants

pytestmark = [pytest.mark.libpcp, needs_libpcp,
              pytest.mark.skipif(shutil.which("pmlogcheck") is None, reason="pmlogcheck is not installed")]

ORIGINALS = [(source, version) for source in mutants.SOURCES for version in mutants.VERSIONS]


def _describe(o: mutants.Outcome) -> str:
    return f"{o.label}: pmlogcheck exit {o.pmlogcheck_status}: {o.pmlogcheck_output[:300]}"


def test_originals_pass_both_tools(tmp_path: Path) -> None:
    for source, version in ORIGINALS:
        o = mutants.run_mutant(source, version, "unchanged", lambda ed: None, tmp_path / "m")
        assert not o.pmlogcheck_flags, _describe(o)
        assert not o.pcpconform_flags, o.codes


@pytest.mark.parametrize("source,version", ORIGINALS, ids=[f"{s}-v{v}" for s, v in ORIGINALS])
@pytest.mark.parametrize("cls", list(mutants.CLASSES))
def test_pmlogcheck_flag_implies_diagnostic(cls: str, source: str, version: int, tmp_path: Path) -> None:
    cases = mutants.mutants(cls, source, version)
    assert cases, f"no {cls} mutant of {source} v{version}"
    missed = []
    for label, mutate in cases:
        o = mutants.run_mutant(source, version, label, mutate, tmp_path / "m")
        if o.pmlogcheck_flags and not o.pcpconform_flags:
            missed.append(_describe(o))
    assert not missed, "pmlogcheck flags, pcpconform check is silent:\n" + "\n".join(missed)


def test_pmlogcheck_flag_implies_diagnostic_on_corpus(tmp_path: Path) -> None:
    manifest = build_corpus(tmp_path / "corpus")
    missed = []
    for entry in manifest["cases"]:
        base = tmp_path / "corpus" / entry["archive"]
        proc = bridge.pmlogcheck(base)
        flagged = proc.returncode != 0 or bool((proc.stdout + proc.stderr).strip())
        if flagged and not check_archive(base, **entry.get("options", {})).diagnostics:
            missed.append(entry["name"])
    assert not missed


_FLIP_DIR = tempfile.TemporaryDirectory(prefix="pcpconform-flips-")


@settings(max_examples=150, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(original=st.sampled_from(ORIGINALS), part=st.sampled_from(["meta", "index", "0"]),
       data=st.data())
def test_random_byte_flips(original: tuple[str, int], part: str, data: st.DataObject) -> None:
    source, version = original
    size = len(ArchiveEdit(mutants.original(source, version)).files[part])
    flips = data.draw(st.lists(st.tuples(st.integers(0, size - 1), st.integers(1, 255)),
                               min_size=1, max_size=4), label="flips")

    def mutate(ed: ArchiveEdit) -> None:
        for offset, mask in flips:
            ed.files[part][offset] ^= mask

    label = f"{source} v{version} {part}: " + ", ".join(f"byte {o} ^ 0x{m:02x}" for o, m in flips)
    o = mutants.run_mutant(source, version, label, mutate, Path(_FLIP_DIR.name) / "m")
    assert o.pcpconform_flags or not o.pmlogcheck_flags, _describe(o)


def test_comparison_doc_names_every_class() -> None:
    text = mutants.DOC.read_text(encoding="utf-8")
    for cls in mutants.CLASSES:
        assert f"**{cls}**" in text, f"{cls} missing: python -m tests.differential.libpcp.mutants --write"
