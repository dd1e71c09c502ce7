"""The interpolation oracle against each reference libpcp's PM_MODE_INTERP (``referee``
fixture: 6.0.3 with the pcp-6.0 rules, 6.3.8 and 7.2.2 with the rule set each Referee names,
spec/interp.md INTERP-VER-*)."""

from __future__ import annotations

import csv
import io
import os
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from pcpconform.extra.strategies import fixtures
from pcpconform.fixtures.fixture import load_fixture, parse_fixture
from pcpconform.fixtures.generate import generate_archive
from pcpconform.format.pmtypes import PmID, Timestamp
from pcpconform.io.archive import Archive
from pcpconform.oracles.interp.model import DEVIATIONS
from tests.cli import run_cli
from tests.differential.libpcp.interp_bridge import View, libpcp_view, oracle_view
from tests.differential.libpcp.referees import LibpcpError, Referee, archive_files

ROOT = Path(__file__).resolve().parents[2]
SEED = ROOT / "corpus" / "fixtures" / "interp-seed.yaml"
pytestmark = [pytest.mark.libpcp]


def test_seed_worked_example_matches_libpcp(tmp_path: Path, referee: Referee) -> None:
    base = tmp_path / "seed"
    generate_archive(load_fixture(SEED), base)
    pmids = [int(Archive(base).desc(m).pmid) for m in ("seed.counter", "seed.instant", "seed.discrete")]
    start = Timestamp(1700000010)
    ours = oracle_view(base, start, 2_500_000_000, 33, pmids, referee.interp_rules)
    assert ours == libpcp_view(referee, base, start, 2_500_000_000, 33, pmids)
    counter = [s["values"]["245.0.1"][0][1]
               for s in oracle_view(base, Timestamp(1700000025), 25 * 10**9, 3, pmids, referee.interp_rules)]
    assert counter == [870, 1020, 1150]


# The default run is derandomized (a fixed set of examples, so CI is reproducible);
# PCPCONFORM_INTERP_EXAMPLES=N explores N fresh random examples per referee instead.
_EXPLORE = os.environ.get("PCPCONFORM_INTERP_EXAMPLES")


_DATABASE = settings().database if _EXPLORE else None


@settings(max_examples=int(_EXPLORE or "40"), deadline=None, derandomize=not _EXPLORE, database=_DATABASE,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_random_archives_and_schedules_match_libpcp(tmp_path_factory: pytest.TempPathFactory,
                                                    referee: Referee, data: st.DataObject) -> None:
    fixture = data.draw(fixtures(), label="fixture")
    base = tmp_path_factory.mktemp("interp") / "a"
    generate_archive(fixture, base)
    a = Archive(base)
    pmids = [int(d.pmid) for d in a.descs()]
    first = [r.timestamp for r in a.results()]
    span = max(first[-1].total_nsec() - first[0].total_nsec(), 1)
    offset = data.draw(st.integers(-2 * 10**9, span + 2 * 10**9), label="start offset ns")
    start = Timestamp.from_nsec(first[0].total_nsec() + offset)
    delta = data.draw(st.integers(1, max(span // 3, 1)) | st.sampled_from([10**9, 250_000_000]),
                      label="delta ns")
    if data.draw(st.booleans(), label="backwards"):
        delta = -delta
    count = data.draw(st.integers(1, 12), label="count")
    # INTERP-EOL-2: libpcp's end-of-log edges within 1 ms of the ends are not modelled
    lo, hi = first[0].total_nsec(), first[-1].total_nsec()
    times = [start.total_nsec() + k * delta for k in range(count)]
    assume(not any(lo - 2_000_000 <= t < lo or hi < t <= hi + 2_000_000 for t in times))
    try:
        theirs = libpcp_view(referee, base, start, delta, count, pmids)
    except LibpcpError as exc:
        # INTERP-DEV-4: libpcp itself dies by a signal on some backward replays; what it
        # did in this run, not the input, decides that there is nothing to compare
        assume(exc.returncode >= 0)
        raise
    assert oracle_view(base, start, delta, count, pmids, referee.interp_rules, tuple(DEVIATIONS)) == theirs


# ---- named deviations (spec/interp.md, INTERP-DEV-*), each pinned against every referee ----

def _build(tmp_path: Path, doc: dict[str, Any]) -> Path:
    base = tmp_path / "dev"
    generate_archive(parse_fixture(doc), base)
    return base


def _three(referee: Referee, base: Path, start: Timestamp, delta: int, count: int,
           emulate: tuple[str, ...]) -> tuple[View, View, View]:
    """(the rules, the rules with ``emulate``, libpcp) on one schedule over every metric."""
    a = Archive(base)
    pmids = [int(d.pmid) for d in a.descs()]
    rules = referee.interp_rules
    return (oracle_view(base, start, delta, count, pmids, rules),
            oracle_view(base, start, delta, count, pmids, rules, emulate),
            libpcp_view(referee, base, start, delta, count, pmids))


STRINGS = {
    "archive": {"version": 3, "hostname": "h", "timezone": "UTC", "interval": 10},
    "metrics": [{"name": "s.str", "pmid": "245.0.1", "type": "string", "sem": "instant"},
                {"name": "s.num", "pmid": "245.0.3", "type": "u32", "sem": "instant"}],
    "samples": [{"time": 1700000010, "values": {"s.str": "a", "s.num": 1}},
                {"values": {"s.str": "b", "s.num": 2}},
                {"values": {"s.str": "c", "s.num": 3}},
                {"values": {"s.str": "d", "s.num": 4}}],
}


def test_nonnumeric_exact_hit_deviation(tmp_path: Path, referee: Referee) -> None:
    """INTERP-DEV-1: a string observed at the fetch time, already the previous upper bound."""
    base = _build(tmp_path, STRINGS)
    rules_view, emulated, theirs = _three(referee, base, Timestamp(1700000015), 5 * 10**9, 6,
                                          ("nonnumeric-exact-hit",))

    def strings(view: View) -> list[Any]:
        return [s["values"]["245.0.1"][0][1] for s in view]

    assert strings(theirs) == ["str:61", "str:61", "str:62", "str:62", "str:63", "str:63"]
    assert strings(emulated) == strings(theirs)
    assert strings(rules_view) == ["str:61", "str:62", "str:62", "str:63", "str:63", "str:64"]
    assert emulated == theirs
    # a schedule that lands on every sample without it being a previous bound: no deviation
    rules_view, emulated, theirs = _three(referee, base, Timestamp(1700000010), 10 * 10**9, 4,
                                          ("nonnumeric-exact-hit",))
    assert rules_view == emulated == theirs


MARKED = {
    "archive": {"version": 2, "hostname": "h", "timezone": "UTC"},
    "metrics": [{"name": "m.ctr", "pmid": "1.0.0", "type": "32", "sem": "counter"}],
    "samples": [{"time": 1000000000, "values": {"m.ctr": 0}},
                {"mark": True},
                {"time": "1000000000.002", "values": {"m.ctr": 4}},
                {"mark": True},
                {"time": "1000000000.004", "values": {"m.ctr": 8}}],
}


def test_mark_first_fetch_deviation(tmp_path: Path, referee: Referee) -> None:
    """INTERP-DEV-2: backwards from 1.000001 ms, libpcp interpolates across the mark at 1 ms."""
    base = _build(tmp_path, MARKED)
    rules_view, emulated, theirs = _three(referee, base, Timestamp(1000000000, 1_000_001), -1, 2,
                                          ("mark-first-fetch",))
    assert [s["values"]["1.0.0"] for s in rules_view] == [[], []]
    assert [s["values"]["1.0.0"] for s in theirs] == [[[-1, 2]], [[-1, 2]]]
    assert emulated == theirs
    # forwards from the same time the mark is seen, as the rules say
    rules_view, emulated, theirs = _three(referee, base, Timestamp(1000000000, 1_000_001), 1, 2,
                                          ("mark-first-fetch",))
    assert rules_view == emulated == theirs


STALE = {
    "archive": {"version": 2, "hostname": "h", "timezone": "UTC"},
    "metrics": [{"name": "m.disc", "pmid": "1.0.0", "type": "32", "sem": "discrete"},
                {"name": "m.other", "pmid": "1.0.1", "type": "32", "sem": "instant"}],
    "samples": [{"time": 1000000000, "values": {"m.other": 0}},
                {"time": "1000000000.002", "values": {"m.disc": 2}},
                {"mark": True},
                {"time": "1000000000.006", "values": {"m.disc": 0}},
                {"time": "1000000000.029", "values": {"m.disc": 0}},
                {"time": "1000000000.031", "values": {"m.disc": 0}},
                {"time": "1000000001.567", "values": {"m.other": 0}}],
}


def test_discrete_stale_next_deviation(tmp_path: Path, referee: Referee) -> None:
    """INTERP-DEV-3: after its last observation a DISCRETE value comes back stale (pcp-6.3
    rules: the midpoint test of INTERP-VAL-5 picks the stale upper bound)."""
    base = _build(tmp_path, STALE)
    rules_view, emulated, theirs = _three(referee, base, Timestamp(1000000000), 10**9, 2,
                                          ("discrete-stale-next",))
    assert rules_view[1]["values"]["1.0.0"] == [[-1, 0]]
    stale = referee.interp_rules != "pcp-6.0"
    assert theirs[1]["values"]["1.0.0"] == ([[-1, 2]] if stale else [[-1, 0]])
    assert emulated == theirs


CRASHER = {
    "archive": {"version": 2, "hostname": "h", "timezone": "UTC"},
    "metrics": [{"name": "m.dbl", "pmid": "1.0.2", "type": "double", "sem": "counter"}],
    "samples": [{"time": 1000000000, "values": {"m.dbl": 0.0}},
                {"mark": True},
                {"time": "1000000000.002", "values": {"m.dbl": 1.0}}],
}
#: INTERP-DEV-4, measured: does this libpcp die replaying CRASHER backwards onto its start?
CRASHES = {"pcp-6.0.3": True, "pcp-6.3": True, "pcp-7": True}


def test_libpcp_crashes_replaying_backwards_onto_the_start(tmp_path: Path, referee: Referee) -> None:
    """INTERP-DEV-4: libpcp 6.0.3, 6.3.8 and 7.2.2 abort; the oracle answers with the rules'
    values. A referee that no longer crashes must give those values."""
    base = _build(tmp_path, CRASHER)
    pmids = [int(PmID("1.0.2"))]
    start = Timestamp(1000000000, 1)
    ours = oracle_view(base, start, -1, 2, pmids, referee.interp_rules)
    assert [s["values"]["1.0.2"] for s in ours] == [[], [[-1, "f64:0000000000000000"]]]
    try:
        theirs = libpcp_view(referee, base, start, -1, 2, pmids)
    except LibpcpError as exc:
        assert exc.returncode < 0, exc          # killed by a signal (SIGABRT), not an error exit
        assert CRASHES[referee.name], f"{referee.name} was recorded as not crashing here"
        return
    assert not CRASHES[referee.name], f"{referee.name} no longer crashes: record it (INTERP-DEV-4)"
    assert ours == theirs


# ---- INTERP-RATE-1: --rate against pmval's default counter conversion ----

_PMVAL_ROW = re.compile(r"^\d\d:\d\d:[\d.]+\s+(.*)$")


@pytest.mark.parametrize("interval", ["10", "7.5", "3"])
def test_rates_equal_pmval(tmp_path: Path, referee: Referee, interval: str) -> None:
    """INTERP-RATE-1: ``pcpconform interp --rate`` against the referee's pmval."""
    base = tmp_path / "seed"
    generate_archive(load_fixture(SEED), base)
    proc = referee.run(["pmval", "-z", "-f", "6", "-a", base, "-t", interval, "seed.counter"],
                       files=archive_files(base), env={"PCP_DERIVED_CONFIG": ""}, timeout=60)
    assert proc.returncode == 0, proc.stderr
    theirs = [m.group(1).strip() for line in proc.stdout.splitlines() if (m := _PMVAL_ROW.match(line))]
    status, out, _ = run_cli("interp", str(base), "seed.counter", "--rate", "--rules", referee.interp_rules,
                             "--interval", interval, "--format", "csv")
    assert status == 0
    ours = []
    for row in list(csv.DictReader(io.StringIO(out)))[1:]:       # pmval prints no base line
        if row["reason"] == "counter decreased":
            ours.append("!")
        elif row["reason"]:
            ours.append("No values available")
        else:
            ours.append(f"{float(row['value']):.6f}")
    assert len(theirs) > 3 and ours == theirs
