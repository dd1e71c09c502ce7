"""Differential: what each referee's libpcp_import (pmi) writes and what ``generate`` writes.

``generate`` writes what PCP 6.0.3's pmi writes; 6.3.8's pmi writes the same bytes. PCP 7's
pmi departs from it by three measured version rules (FMT-PMI-1..3, see
tests/differential/libpcp/pmi_versions.py): the comparison with PCP 7 applies them to
``generate``'s output and is then byte-exact too. Every test runs against all three referees.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from pcpconform import check_archive
from pcpconform.extra.strategies import fixtures
from pcpconform.fixtures import bundled_fixture
from pcpconform.fixtures.fixture import Fixture, Sample, load_fixture
from pcpconform.fixtures.generate import generate_archive
from pcpconform.io.archive import Archive
from pcpconform.io.rebuild import rebuild_archive
from tests.differential.libpcp import bridge
from tests.differential.libpcp.compare import assert_reader_matches_libpcp
from tests.differential.libpcp.convert import fixture_to_pmi
from tests.differential.libpcp.pmi_versions import RULES, expected_pmi_archive, local_zoneinfo, pmi_rules
from tests.differential.libpcp.referees import Referee

pytestmark = pytest.mark.libpcp

EXAMPLE = bundled_fixture("example")
EVENTS = bundled_fixture("events")

#: per referee: modest, derandomized in CI (tests/conftest.py); no shrinking, which costs
#: minutes of subprocesses: the failing example is reported as drawn
RANDOM = settings(max_examples=15, deadline=None, phases=(Phase.explicit, Phase.reuse, Phase.generate),
                  suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


def first_difference(ours: Path, theirs: Path) -> str | None:
    """Where two archives' .meta, .index and .0 first differ, or None if they are the same."""
    for suffix in ("meta", "index", "0"):
        a = Path(f"{ours}.{suffix}").read_bytes()
        b = Path(f"{theirs}.{suffix}").read_bytes()
        if a != b:
            at = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
            return (f".{suffix} differs at byte {at} (ours {len(a)} bytes, libpcp {len(b)} bytes): "
                    f"ours {a[at:at + 16].hex()} libpcp {b[at:at + 16].hex()}")
    return None


def assert_same_archive(ours: Path, theirs: Path) -> None:
    diff = first_difference(ours, theirs)
    assert diff is None, diff


def pmi(referee: Referee, fixture: Fixture, tmp: Path, version: int, name: str = "pmi") -> Path:
    theirs = tmp / f"{name}-v{version}"
    bridge.pmi_write(referee, fixture_to_pmi(fixture, version), theirs)
    return theirs


def expected(referee: Referee, fixture: Fixture, theirs: Path, tmp: Path, version: int,
             rules: frozenset[str] | None = None, name: str = "gen") -> Path:
    return expected_pmi_archive(referee, dataclasses.replace(fixture, version=version),
                                tmp / f"{name}-v{version}", pid=Archive(theirs).label.pid, rules=rules)


@pytest.mark.parametrize("version", [2, 3])
def test_example_fixture_is_byte_identical_to_pmi(referee: Referee, tmp_path: Path, version: int) -> None:
    fixture = load_fixture(EXAMPLE)
    theirs = pmi(referee, fixture, tmp_path, version)
    assert_same_archive(expected(referee, fixture, theirs, tmp_path, version), theirs)
    assert_reader_matches_libpcp(referee, theirs)


def _one_sample(fixture: Fixture) -> Fixture:
    """The first values sample only: the first and the closing index entry share its time."""
    first = next(s for s in fixture.samples if s.kind == "values")
    return dataclasses.replace(fixture, samples=[Sample("values", first.time, first.values)])


#: a fixture on which each rule changes the bytes (v3): the example's disk indom grows (a
#: delta record under FMT-PMI-2), and a one-sample archive has two index entries of one
#: time (FMT-PMI-3); every v3 label carries a zoneinfo (FMT-PMI-1)
WITNESS = {"zoneinfo": lambda: load_fixture(EXAMPLE), "delta-indoms": lambda: load_fixture(EXAMPLE),
           "index-dedup": lambda: _one_sample(load_fixture(EXAMPLE))}


@pytest.mark.parametrize("rule", sorted(RULES))
def test_each_pmi_version_rule_holds_exactly_where_measured(referee: Referee, tmp_path: Path,
                                                            rule: str) -> None:
    """With the referee's own rules the bytes are pmi's; toggling any one rule (dropping it
    where the referee follows it, adding it where it does not) makes them differ."""
    fixture = WITNESS[rule]()
    theirs = pmi(referee, fixture, tmp_path, 3)
    own = pmi_rules(referee)
    assert_same_archive(expected(referee, fixture, theirs, tmp_path, 3), theirs)
    toggled = own ^ {rule}
    other = expected(referee, fixture, theirs, tmp_path, 3, rules=toggled, name="toggled")
    assert first_difference(other, theirs) is not None, \
        f"{referee.name}: rule {rule} ({RULES[rule]}) makes no difference on its witness"


def test_pmi_zoneinfo_is_the_writing_hosts(referee: Referee, tmp_path: Path) -> None:
    """FMT-PMI-1 measured: whatever time zone pmiSetTimezone names, PCP 7 stores the
    writing host's zoneinfo; 6.x store none once a time zone was set."""
    doc = fixture_to_pmi(load_fixture(EXAMPLE), 3)
    doc["archive"]["timezone"] = "EST5"
    base = tmp_path / "tz"
    bridge.pmi_write(referee, doc, base)
    label = Archive(base).label
    assert label.timezone == "EST5"
    want = local_zoneinfo(referee) if "zoneinfo" in pmi_rules(referee) else ""
    assert want != "" or "zoneinfo" not in pmi_rules(referee)
    assert label.zoneinfo == want
    assert bridge.pm_read(referee, base)["label"]["zoneinfo"] == want


@RANDOM
@given(data=st.data())
def test_random_fixtures_match_pmi_bytes_and_values(referee: Referee, tmp_path_factory: pytest.TempPathFactory,
                                                    data: st.DataObject) -> None:
    version = data.draw(st.sampled_from([2, 3]), label="version")
    fixture = data.draw(fixtures(version=version), label="fixture")
    tmp = tmp_path_factory.mktemp("gen")
    theirs = pmi(referee, fixture, tmp, version)
    assert_same_archive(expected(referee, fixture, theirs, tmp, version), theirs)
    # the reader gets from libpcp's own archive exactly what libpcp reads from it
    assert_reader_matches_libpcp(referee, theirs)
    # and from generate's own (6.0.3) bytes too, whatever the referee's pmi writes
    plain = tmp / "plain"
    generate_archive(fixture, plain, version=version)
    assert_reader_matches_libpcp(referee, plain)
    # the validator finds no error in what libpcp wrote (random content may earn warnings:
    # counters that go down, help text for an indom no metric uses)
    report = check_archive(theirs)
    assert report.errors == 0, report.diagnostics
    assert report.codes() <= {"value.counter-decrease", "text.undescribed", "indom.undescribed"}
    # and the archive rebuilds to the same bytes
    rebuild_archive(theirs, tmp / "rebuilt")
    assert_same_archive(tmp / "rebuilt", theirs)


def _pmlogcheck_clean(referee: Referee, base: Path) -> None:
    check = bridge.pmlogcheck(referee, base)
    assert check.returncode == 0 and check.stdout.strip() == "", check.stdout + check.stderr


@RANDOM
@given(data=st.data())
def test_generated_archives_beyond_pmi_are_read_alike_by_libpcp(referee: Referee,
                                                                 tmp_path_factory: pytest.TempPathFactory,
                                                                 data: st.DataObject) -> None:
    """Delta indoms, requested volume switches, NaN and infinities: libpcp reads what the
    fixture says, and pmlogcheck finds nothing."""
    fixture = data.draw(fixtures(pmi_compatible=False), label="fixture")
    base = tmp_path_factory.mktemp("beyond") / "gen"
    generate_archive(fixture, base)
    assert_reader_matches_libpcp(referee, base)
    _pmlogcheck_clean(referee, base)
    assert check_archive(base).errors == 0


@pytest.mark.parametrize("version", [2, 3])
def test_event_fixture_reads_alike_in_libpcp(referee: Referee, tmp_path: Path, version: int) -> None:
    base = tmp_path / "ev"
    generate_archive(load_fixture(EVENTS), base, version=version)
    assert_reader_matches_libpcp(referee, base)
    dump = bridge.pmdumplog(referee, base, "-a")
    assert '62.0.4 (ev.param.str): value "fetch #1"' in dump.stdout
    assert "3 missed event records" in dump.stdout
    assert bridge.pmlogcheck(referee, base).returncode == 0


@pytest.mark.parametrize("version", [2, 3])
def test_example_passes_pmlogcheck_and_pmdumplog(referee: Referee, tmp_path: Path, version: int) -> None:
    base = tmp_path / "ex"
    generate_archive(load_fixture(EXAMPLE), base, version=version)
    _pmlogcheck_clean(referee, base)
    dump = bridge.pmdumplog(referee, base, "-a")
    assert dump.returncode == 0
    assert "disk.dev.read_bytes" in dump.stdout and "<mark>" in dump.stdout
    assert_reader_matches_libpcp(referee, base)
