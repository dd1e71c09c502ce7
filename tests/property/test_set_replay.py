"""A forward replay of an archive set member by member (oracles.interp.setreplay) gives
exactly the whole replay's samples, on random sets and schedules."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pcpconform.errors import FormatError, UsageError
from pcpconform.extra.set_strategies import archive_sets
from pcpconform.format.pmtypes import Timestamp
from pcpconform.io.archiveset import ArchiveSet
from pcpconform.oracles.interp.replay import Replay
from pcpconform.oracles.interp.setreplay import SetReplay


@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_member_by_member_is_the_whole_replay(tmp_path_factory: pytest.TempPathFactory,
                                              data: st.DataObject) -> None:
    plan = data.draw(archive_sets(lists=False), label="set")
    name = plan.write(tmp_path_factory.mktemp("sr") / "s")
    rules = data.draw(st.sampled_from(["pcp-6.0", "pcp-6.3"]), label="rules")
    profile = data.draw(st.sampled_from(["pcp-6.0", "pcp-6.3"]), label="profile")
    try:
        s = ArchiveSet(name, profile=profile)
        s.refuse_overlaps()
        pmids = sorted(int(d.pmid) for d in s.descs())
        whole = Replay(s, pmids, rules=rules)
    except (FormatError, UsageError):
        return                          # refused, or a member's files missing (SET-MEMBER-1)
    lo, hi = s.start.total_nsec(), s.end().total_nsec() if s.end() else s.start.total_nsec()
    span = max(hi - lo, 1)
    start = Timestamp.from_nsec(lo + data.draw(st.integers(-2 * 10**9, span), label="start"))
    delta = data.draw(st.integers(1, max(span // 3, 1)) | st.sampled_from([10**9, 7_300_000]), label="delta")
    count = data.draw(st.integers(1, 40), label="count")
    expected = whole.schedule(start, delta, count)
    pieces = SetReplay(ArchiveSet(name, profile=profile), pmids, rules=rules)
    got = [x for chunk in pieces.schedule_chunks(start, delta, count, chunk=7) for x in chunk]
    assert got == expected, plan.describe()


def test_one_member_at_a_time(tmp_path: Path) -> None:
    from tests.setmembers import T, member
    for k in range(4):
        member(tmp_path / f"m{k}", T + 100 * k, n=6)
    s = ArchiveSet(tmp_path)
    r = SetReplay(s, [int(d.pmid) for d in s.descs()], rules="pcp-6.3")
    r.schedule(Timestamp(T + 1), 7 * 10**9, 50)
    assert r.members_read == [0, 1, 2, 3]


def test_which_replay_a_command_gets(tmp_path: Path) -> None:
    """Member by member for a forward schedule without emulated deviations; the whole replay
    for a backward one, an emulated deviation or the pcp-7 profile (SET-MEMBER-3)."""
    from pcpconform.oracles.interp.setreplay import open_set_replay
    from tests.setmembers import T, member
    for k in range(3):
        member(tmp_path / f"m{k}", T + 100 * k, n=6)
    pmids = [int(d.pmid) for d in ArchiveSet(tmp_path).descs()]
    forward = open_set_replay(ArchiveSet(tmp_path), pmids, rules="pcp-6.3")
    assert isinstance(forward, SetReplay)
    assert type(open_set_replay(ArchiveSet(tmp_path).for_direction(-1), pmids, rules="pcp-6.3",
                                forward=False)) is Replay
    assert type(open_set_replay(ArchiveSet(tmp_path), pmids, rules="pcp-6.3",
                                emulate=["mark-first-fetch"])) is Replay
    assert type(open_set_replay(ArchiveSet(tmp_path, profile="pcp-7"), pmids, rules="pcp-6.3")) is Replay
