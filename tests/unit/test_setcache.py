"""libpcp's bound cache over an archive set (spec/sets.md SET-REPLAY-8, -9) without a libpcp:
the answers libpcp 6.0.3, 6.3.8 and 7.2.2 gave on the sets of
tests/differential/test_sets_cache_vs_libpcp.py, recorded, and the read semantics of a seam's
virtual mark."""

from __future__ import annotations

from pathlib import Path

from pcpconform.format.pmtypes import PmID, Timestamp
from pcpconform.io.archiveset import ArchiveSet
from pcpconform.oracles.interp.model import DEVIATIONS, NoValue
from pcpconform.oracles.interp.replay import Replay
from pcpconform.oracles.interp.setcache import SetContext
from tests.setmembers import T, member

COUNTER, INSTANT = int(PmID("60.0.1")), int(PmID("60.0.2"))


def _set(tmp_path: Path) -> ArchiveSet:
    member(tmp_path / "m1", T, n=1)
    member(tmp_path / "m2", T + 100, n=3)
    return ArchiveSet(tmp_path, profile="pcp-6.3")


def test_the_fetch_after_the_mark_was_made_reads_the_next_member(tmp_path: Path) -> None:
    s = _set(tmp_path)
    ours = Replay(s, [COUNTER, INSTANT], rules="pcp-6.3", emulate=DEVIATIONS).schedule(Timestamp(T), 1, 3)
    # libpcp 6.0.3, 6.3.8, 7.2.2: the counter's two instances at 0 and the instant 1.5, each fetch
    assert all(f.values[COUNTER] == {0: 0, 1: 0} and f.values[INSTANT] == {-1: 1.5} for f in ours)
    rules = Replay(s, [COUNTER, INSTANT], rules="pcp-6.3").schedule(Timestamp(T), 1, 3)
    assert all(isinstance(v, NoValue) for v in rules[1].values[COUNTER].values())


def test_a_virtual_mark_is_made_once_per_direction(tmp_path: Path) -> None:
    s = _set(tmp_path)
    replay = Replay(s, [COUNTER], rules="pcp-6.3", emulate=DEVIATIONS)
    replay.set_mode(Timestamp(T), 1)
    context = replay._cached_fetches().context
    assert isinstance(context, SetContext)
    (p, backward_mark), = context.virtual.items()
    forward_mark = context.records[p][0]
    context.pos = context.offset = p               # at the end of the first member
    assert context._read(True)[:2] == (forward_mark, True)           # made
    assert context._read(False)[:2] == (forward_mark, True)          # made again, the other way
    assert context._read(True)[:2] == (forward_mark, True)           # forgotten: made anew
    first = context._read(True)                                       # switch: the next member
    assert first is not None and not first[1] and first[0] == 100.0
    assert context.offset == p + 1                                    # ac_offset at its start
    context.pos = p + 1
    assert context._read(False)[:2] == (backward_mark, True)         # at the start, backwards
    last = context._read(False)                                       # switch: the member before
    assert last is not None and last[0] == 0.0 and context.offset == p
