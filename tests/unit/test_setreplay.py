"""A set's forward replay holds one member's observations at a time: a member's ``Replay``
is freed as soon as the schedule leaves it, by reference counting alone."""

from __future__ import annotations

import gc
import weakref
from pathlib import Path

from pcpconform.io.archiveset import ArchiveSet
from pcpconform.oracles.interp.replay import Replay
from pcpconform.oracles.interp.setreplay import SetReplay

CASE = Path(__file__).resolve().parents[2] / "corpus" / "cases" / "valid" / "set-split"


def test_a_member_replay_holds_no_reference_cycle() -> None:
    s = ArchiveSet(CASE, profile="pcp-6.3")
    pmids = [int(d.pmid) for d in s.descs()]
    replay = Replay(s.member_view(0), pmids, rules="pcp-6.3")
    replay.schedule(s.start, 10**9, 5)
    gone = weakref.ref(replay)
    gc.disable()
    try:
        del replay
        assert gone() is None
    finally:
        gc.enable()


def test_the_set_replay_drops_each_member_it_leaves() -> None:
    s = ArchiveSet(CASE, profile="pcp-6.3")
    pmids = [int(d.pmid) for d in s.descs()]
    replay = SetReplay(s, pmids, rules="pcp-6.3")
    first = weakref.ref(replay._replay)
    span = s.end().total_nsec() - s.start.total_nsec()     # type: ignore[union-attr]
    gc.disable()
    try:
        samples = replay.schedule(s.start, max(span // 20, 1), 20)
        assert len(samples) == 20 and len(replay.members_read) == len(s.members)
        assert first() is None
    finally:
        gc.enable()
