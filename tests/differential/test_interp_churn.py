"""The interpolation oracle on the shapes real archives have, against each reference libpcp:
instance domains of up to 2,000 instances that churn (leave, return, are born), strings and
aggregates, missing values, marks, records 1 µs to hours apart and schedules before, inside
and after the archive (``churn_fixtures``, ``schedules``); and the per-process archives of
PCP's QA suite. libpcp's answer is the rules with its bound cache emulated (INTERP-DEV-5,
INTERP-CACHE-*), and with no end-of-log window left out (INTERP-EOL-2)."""

from __future__ import annotations

import functools
import itertools
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from pcpconform.extra.churn_strategies import ChurnShape, churn_fixtures, churn_shape, schedules
from pcpconform.fixtures.fixture import Fixture
from pcpconform.fixtures.generate import generate_archive
from pcpconform.format.pmtypes import Timestamp
from pcpconform.io.archive import Archive
from pcpconform.io.bulk import result_head
from pcpconform.oracles.interp.installed import repositions_on_set_mode
from pcpconform.oracles.interp.model import DEVIATIONS
from pcpconform.oracles.interp.replay import Replay
from tests.differential.libpcp.interp_bridge import (
    View,
    libpcp_segments_view,
    libpcp_view,
    oracle_segments_view,
    oracle_view,
    sample_view,
)
from tests.differential.libpcp.referees import LibpcpError, Referee

pytestmark = [pytest.mark.libpcp]
ALL = tuple(DEVIATIONS)

# CI draws a fixed set of examples (derandomized); PCPCONFORM_INTERP_CHURN_EXAMPLES=N explores
# N fresh ones per referee, PCPCONFORM_INTERP_CHURN_SIZE the largest domain (default 2000)
_EXPLORE = os.environ.get("PCPCONFORM_INTERP_CHURN_EXAMPLES")
_SIZE = int(os.environ.get("PCPCONFORM_INTERP_CHURN_SIZE", "2000"))


_SETTINGS = dict(deadline=None, derandomize=not _EXPLORE, database=None,
                 suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                        HealthCheck.data_too_large, HealthCheck.large_base_example])


def _replays_alike(tmp_path_factory: pytest.TempPathFactory, referee: Referee, data: st.DataObject,
                   fixture: Fixture) -> None:
    """One drawn schedule over the fixture's archive, value for value, every fetch."""
    base = tmp_path_factory.mktemp("churn") / "a"
    generate_archive(fixture, base)
    a = Archive(base)
    stamps = [r.timestamp.total_nsec() for r in a.results()]
    span = max(stamps[-1] - stamps[0], 1)
    offset, delta, count = data.draw(schedules(span), label="schedule")
    start = Timestamp.from_nsec(stamps[0] + offset)
    pmids = [int(d.pmid) for d in a.descs()]
    try:
        theirs = libpcp_view(referee, base, start, delta, count, pmids)
    except LibpcpError as exc:
        # INTERP-DEV-4: what libpcp did in this run (died by a signal) decides
        assume(exc.returncode >= 0)
        raise
    assert oracle_view(base, start, delta, count, pmids, referee.interp_rules, ALL) == theirs


@settings(max_examples=int(_EXPLORE or "25"), **_SETTINGS)
@given(data=st.data())
def test_churning_domains_match_libpcp(tmp_path_factory: pytest.TempPathFactory, referee: Referee,
                                       data: st.DataObject) -> None:
    """INTERP-EXIST-2, INTERP-DEV-5: value for value, every fetch, on random churn."""
    _replays_alike(tmp_path_factory, referee, data,
                   data.draw(churn_fixtures(max_instances=_SIZE), label="fixture"))


def test_domains_of_thousands_match_libpcp(tmp_path_factory: pytest.TempPathFactory, referee: Referee) -> None:
    """INTERP-EXIST-2, INTERP-DEV-5 on domains of ``_SIZE`` (2,000) ids that churn; one of the
    draws must list nearly all of them in one record, bring instances back and hold a mark,
    else the strategy no longer reaches the shapes this test is for."""
    shapes: list[ChurnShape] = []

    @settings(max_examples=int(_EXPLORE or "8"), **_SETTINGS)
    @given(data=st.data())
    def replay(data: st.DataObject) -> None:
        fixture = data.draw(churn_fixtures(min_instances=_SIZE, max_instances=_SIZE), label="fixture")
        shapes.append(churn_shape(fixture))
        _replays_alike(tmp_path_factory, referee, data, fixture)

    replay()
    assert any(s.listed >= 0.95 * _SIZE and s.returned and s.marks for s in shapes), shapes


@settings(max_examples=int(_EXPLORE or "12"), **_SETTINGS)
@given(data=st.data())
def test_set_mode_again_mid_replay_matches_libpcp(tmp_path_factory: pytest.TempPathFactory, referee: Referee,
                                                  data: st.DataObject) -> None:
    """INTERP-VER-2, INTERP-CACHE-2: two or three pmSetModes in one context (a new start,
    direction or interval each) on random churn, value for value; libpcp 7 positions again
    at the fetch after each, 6.x as its index positioning says."""
    fixture = data.draw(churn_fixtures(max_instances=min(_SIZE, 300), max_records=8), label="fixture")
    base = tmp_path_factory.mktemp("setmode") / "a"
    generate_archive(fixture, base)
    a = Archive(base)
    stamps = [r.timestamp.total_nsec() for r in a.results()]
    span = max(stamps[-1] - stamps[0], 1)
    segments = []
    for k in range(data.draw(st.integers(2, 3), label="pmSetModes")):
        offset, delta, count = data.draw(schedules(span, max_count=6), label=f"schedule {k}")
        segments.append((Timestamp.from_nsec(stamps[0] + offset), delta, count))
    pmids = [int(d.pmid) for d in a.descs()]
    try:
        theirs = libpcp_segments_view(referee, base, segments, pmids)
    except LibpcpError as exc:
        assume(exc.returncode >= 0)     # INTERP-DEV-4: libpcp died in this run
        raise
    again = repositions_on_set_mode(referee.version)
    assert oracle_segments_view(base, segments, pmids, referee.interp_rules, ALL, again) == theirs


# ---- PCP's QA per-process archives ------------------------------------------------------

QA = Path(os.environ.get("PCPCONFORM_QA_ARCHIVES", "/var/lib/pcp/testsuite/archives"))
#: the large one (320 MB decompressed, ~1 min a replay) only when asked for
_BIG = {"20180416.10.00"}
_WITH_BIG = bool(os.environ.get("PCPCONFORM_QA_BIG"))


def _per_process_archives() -> list[str]:
    """Every QA archive (base name) holding a proc.* metric with an instance domain."""
    bases = sorted({p.name.split(".meta")[0] for p in QA.glob("*.meta*")}) if QA.is_dir() else []
    out = []
    for base in bases:
        if base in _BIG and not _WITH_BIG:
            continue
        try:
            descs = Archive(QA / base).descs()
        except Exception:       # a QA archive the kit rejects is not a replay case
            continue
        if any(n.startswith(("proc.", "hotproc.")) and not d.indom.is_null for d in descs for n in d.names):
            out.append(base)
    return out


def _sample_metrics(a: Archive) -> list[int]:
    """Up to four per-process metrics (first, middle and last by name, of varied types) and
    proc.nprocs when logged."""
    procs = sorted((n, d) for d in a.descs() for n in d.names
                   if n.startswith(("proc.", "hotproc.")) and not d.indom.is_null)
    picked = {int(procs[k][1].pmid) for k in {0, len(procs) // 2, len(procs) - 1}}
    strings = [d for _, d in procs if d.type == 6]        # a string one when there is one
    if strings:
        picked.add(int(strings[0].pmid))
    picked |= {int(d.pmid) for d in a.descs() if "proc.nprocs" in d.names}
    return sorted(picked)


def _qa_schedules(a: Archive) -> list[tuple[Timestamp, int, int]]:
    """Forwards from the start and backwards from the end at a twelfth of the archive, and
    forwards at the archive's own logging step from inside it."""
    stamps = [result_head(raw.data, a.version)[0].total_nsec() for _, raw in a.volume_records()]
    span = max(stamps[-1] - stamps[0], 12)
    step = min((y - x for x, y in itertools.pairwise(stamps) if y > x), default=span)
    return [(Timestamp.from_nsec(start), delta, count) for start, delta, count in
            [(stamps[0], span // 12, 13), (stamps[-1], -(span // 12), 13),
             (stamps[len(stamps) // 3] + step // 3, step, 12)]]


@functools.cache
def _qa_oracle(base: str, rules: str) -> tuple[list[int], list[tuple[Timestamp, int, int]], list[View]]:
    """The sampled metrics, the schedules and the oracle's view of each (INTERP-DEV-5
    emulated), each schedule as a new context on one pass over the archive, shared by the
    referees of one rule set (one pmSetMode each: INTERP-VER-2 cannot differ)."""
    a = Archive(QA / base)
    pmids = _sample_metrics(a)
    schedules = _qa_schedules(a)
    replay = Replay(a, pmids, rules=rules, emulate=ALL)
    views = []
    for start, delta, count in schedules:
        replay.new_context()
        views.append(sample_view(a, replay.schedule(start, delta, count)))
    return pmids, schedules, views


@pytest.mark.parametrize("base", _per_process_archives())
def test_qa_per_process_archives_match_libpcp(base: str, referee: Referee) -> None:
    """INTERP-EXIST-2, INTERP-DEV-5 on PCP's own per-process archives: every schedule of
    ``_qa_schedules``, value for value."""
    pmids, schedules, ours = _qa_oracle(base, referee.interp_rules)
    for (start, delta, count), view in zip(schedules, ours):
        assert view == libpcp_view(referee, QA / base, start, delta, count, pmids), (base, start, delta)
