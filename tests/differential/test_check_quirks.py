"""Quirky but readable archives (pcpconform.corpusgen.invalid.quirks) against each referee: its
PMAPI reads the values written (what pcpconform's reader reads), its pmdumplog -a reads the
archive without complaint, its pmlogcheck exits 0, and ``pcpconform check`` exits 0 with
the quirk's warnings (and fails under ``--strict``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pcpconform.check.engine import check_archive
from pcpconform.check.rules import RULES, Severity
from pcpconform.cli import main
from pcpconform.corpusgen.invalid.quirks import QUIRKS, Quirk, build_quirk
from tests.differential.libpcp import bridge
from tests.differential.libpcp.compare import assert_reader_matches_libpcp
from tests.differential.libpcp.referees import Referee

pytestmark = [pytest.mark.libpcp]

CASES = [(q, v) for q in QUIRKS for v in q.versions]


def test_the_quirks_are_registered() -> None:
    names = {q.name for q in QUIRKS}
    assert {"nosupport-sem0", "index-past-end", "index-time-1us"} <= names
    for q in QUIRKS:
        assert q.warnings and all(RULES[c].severity is Severity.WARNING for c in q.warnings), q.name


@pytest.mark.parametrize(("q", "version"), CASES, ids=[f"{q.name}-v{v}" for q, v in CASES])
def test_quirk_is_read_by_libpcp_and_checks_clean(referee: Referee, q: Quirk, version: int,
                                                  tmp_path: Path) -> None:
    base = build_quirk(q, version, tmp_path / "a")
    report = check_archive(base)
    assert report.errors == 0, [(d.code, d.message) for d in report.diagnostics]
    assert set(q.warnings) <= report.codes()
    assert main(["check", "-q", str(base)]) == 0
    assert main(["check", "-q", "--strict", str(base)]) == 1
    dump = bridge.pmdumplog(referee, base, "-a")
    assert dump.returncode == 0 and not dump.stderr.strip(), dump.stderr
    logcheck = bridge.pmlogcheck(referee, base)
    assert logcheck.returncode == 0, logcheck.stdout + logcheck.stderr
    assert_reader_matches_libpcp(referee, base)
