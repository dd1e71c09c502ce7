"""Each referee's pmlogcheck against `pcpconform check` on damaged and on libpcp-written archives.

Per referee (``referee`` fixture: PCP 6.0.3, 6.3, 7): whenever its pmlogcheck flags a mutant
of a valid archive (non-zero exit, any output, or death by a signal), ``check_archive`` must
report at least one diagnostic; and archives that this libpcp writes itself (libpcp_import)
must check without errors and pass its pmlogcheck. The mutants are the defect classes of
tests/differential/libpcp/mutants.py (a fixed subset of each, evenly spread, to keep each
referee within about a minute; ``python -m tests.differential.libpcp.mutants`` runs them all),
the invalid corpus, and random byte flips drawn by hypothesis (derandomized).

A pmlogcheck killed by a signal in this run (returncode < 0) is a crash: it counts as flagging
the archive, so pcpconform must flag it too, and every crash is reported (a warning and the
``pmlogcheck_crashes`` property of the test), never dropped.
"""

from __future__ import annotations

import json
import tempfile
import warnings
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pcpconform.check.engine import check_archive
from pcpconform.conform.adapters.libpcp import PMI_WRITE  # runs under the referee's Python
from pcpconform.corpusgen.invalid import ArchiveEdit, build_corpus
from pcpconform.fixtures import bundled_fixture
from pcpconform.fixtures.fixture import load_fixture
from tests.differential.libpcp import mutants
from tests.differential.libpcp.convert import fixture_to_pmi
from tests.differential.libpcp.referees import LibpcpError, Referee, archive_files

pytestmark = [pytest.mark.libpcp]

ORIGINALS = [(source, version) for source in mutants.SOURCES for version in mutants.VERSIONS]
#: mutants per class and original run by the tests (the full run is mutants.py's main)
PER_ORIGINAL = 30


RecordProperty = Callable[[str, object], None]


class PmlogcheckCrash(UserWarning):
    """pmlogcheck was killed by a signal on an archive."""


def _report_crashes(outcomes: list[mutants.Outcome], record_property: RecordProperty) -> None:
    crashes = [o.describe() for o in outcomes if o.crashed]
    record_property("pmlogcheck_crashes", len(crashes))
    if crashes:
        warnings.warn(PmlogcheckCrash(f"{len(crashes)} crashes:\n" + "\n".join(crashes[:20])), stacklevel=2)


def _missed(outcomes: list[mutants.Outcome]) -> list[str]:
    return [o.describe() for o in outcomes if o.pmlogcheck_flags and not o.pcpconform_flags]


def test_originals_pass_both_tools(referee: Referee, tmp_path: Path) -> None:
    for source, version in ORIGINALS:
        o = mutants.run_mutant(source, version, f"{source} v{version} unchanged", lambda ed: None,
                               tmp_path / "m", referee)
        assert not o.pmlogcheck_flags, o.describe()
        assert not o.pcpconform_flags, o.codes


def _pmi_write(referee: Referee, fixture: str, version: int, base: Path) -> None:
    doc = base.parent / f"{base.name}-pmi.json"
    doc.write_text(json.dumps(fixture_to_pmi(load_fixture(bundled_fixture(fixture)), version)), encoding="utf-8")
    proc = referee.python(PMI_WRITE, doc, base, files=[doc], outputs=[base])
    if proc.returncode != 0:
        raise LibpcpError(f"pmi_write.py {fixture} v{version} ({referee.name})", proc)


@pytest.mark.parametrize("version", [2, 3])
def test_libpcp_written_archives_check_clean(referee: Referee, version: int, tmp_path: Path) -> None:
    """What this libpcp writes has no error, and its own pmlogcheck passes it."""
    base = tmp_path / "example"
    _pmi_write(referee, "example", version, base)
    assert (tmp_path / "example.meta").exists()
    report = check_archive(base)
    assert report.errors == 0, [d for d in report.diagnostics if d.severity.value == "error"]
    run = mutants.pmlogcheck(referee, base)
    assert not run.flags, (run.status, run.output)


@pytest.mark.parametrize("cls", list(mutants.CLASSES))
def test_pmlogcheck_flag_implies_diagnostic(referee: Referee, cls: str, tmp_path: Path,
                                            record_property: RecordProperty) -> None:
    outcomes = []
    for source, version in ORIGINALS:
        cases = mutants.mutants(cls, source, version)
        assert cases, f"no {cls} mutant of {source} v{version}"
        for label, mutate in mutants.subset(cases, PER_ORIGINAL):
            outcomes.append(mutants.run_mutant(source, version, f"{source} v{version}: {label}", mutate,
                                               tmp_path / "m", referee))
    _report_crashes(outcomes, record_property)
    missed = _missed(outcomes)
    assert not missed, "pmlogcheck flags, pcpconform check is silent:\n" + "\n".join(missed)


def test_pmlogcheck_flag_implies_diagnostic_on_corpus(referee: Referee, tmp_path: Path,
                                                      record_property: RecordProperty) -> None:
    manifest = build_corpus(tmp_path / "corpus")
    outcomes = []
    for entry in manifest["cases"]:
        base = tmp_path / "corpus" / entry["archive"]
        report = check_archive(base, **entry.get("options", {}))
        outcomes.append(mutants.Outcome(entry["name"], referee.name, mutants.pmlogcheck(referee, base),
                                        report.codes()))
    _report_crashes(outcomes, record_property)
    missed = _missed(outcomes)
    assert not missed, "pmlogcheck flags, pcpconform check is silent:\n" + "\n".join(missed)


_FLIP_DIR = tempfile.TemporaryDirectory(prefix="pcpconform-flips-")


@settings(max_examples=150, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(original=st.sampled_from(ORIGINALS), part=st.sampled_from(["meta", "index", "0"]),
       data=st.data())
def test_random_byte_flips(referee: Referee, original: tuple[str, int], part: str,
                           data: st.DataObject) -> None:
    source, version = original
    size = len(ArchiveEdit(mutants.original(source, version)).files[part])
    flips = data.draw(st.lists(st.tuples(st.integers(0, size - 1), st.integers(1, 255)),
                               min_size=1, max_size=4), label="flips")

    def mutate(ed: ArchiveEdit) -> None:
        for offset, mask in flips:
            ed.files[part][offset] ^= mask

    label = f"{source} v{version} {part}: " + ", ".join(f"byte {o} ^ 0x{m:02x}" for o, m in flips)
    o = mutants.run_mutant(source, version, label, mutate, Path(_FLIP_DIR.name) / referee.name, referee)
    if o.crashed:
        warnings.warn(PmlogcheckCrash(o.describe()), stacklevel=1)
    assert o.pcpconform_flags or not o.pmlogcheck_flags, o.describe()


def test_comparison_doc_is_of_this_referee(referee: Referee) -> None:
    """The comparison doc names every defect class and has this referee's pmlogcheck."""
    text = mutants.DOC.read_text(encoding="utf-8")
    for cls in mutants.CLASSES:
        assert f"**{cls}**" in text, f"{cls} missing: python -m tests.differential.libpcp.mutants --write"
    assert f"pmlogcheck {referee.version}" in text, (
        f"{referee.name} ({referee.version}) missing: python -m tests.differential.libpcp.mutants --write")


DERIVED_NOTE = "corpus.load_x10 [511.2048.3]: domain of pmid (511) != domain of indom (60)"


def test_what_pmlogcheck_reports_that_check_does_not(referee: Referee) -> None:
    """docs/pmlogcheck-comparison.md, "What pmlogcheck reports that check does not": on
    pmlogger's archive with a derived metric, pmlogcheck 6.0.3 notes the derived metric's
    indom domain (exit 0), 6.3 and 7 print nothing, and check reports nothing (FMT-DESC-7)."""
    case = mutants.ROOT / "corpus" / "cases" / "valid" / "pmlogger-derived-v2"
    base = case / json.loads((case / "case.json").read_text())["archive"]
    proc = referee.tool(["pmlogcheck", base], files=archive_files(base))
    assert proc.returncode == 0
    if referee.name == "pcp-6.0.3":
        assert proc.stdout + proc.stderr == f"{base}.meta: {DERIVED_NOTE}\n"     # on the host
    else:
        assert proc.stdout + proc.stderr == ""
    assert check_archive(base).diagnostics == []
    assert mutants.NOT_CHECKED in mutants.DOC.read_text(encoding="utf-8")

