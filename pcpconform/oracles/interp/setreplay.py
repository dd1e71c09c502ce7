"""A forward replay of an archive set, one member at a time (spec/sets.md).

Every bound of a forward INTERP replay across a seam of a set is the seam's virtual mark
(SET-REPLAY-1): no value before it reaches an observation after it. So a forward replay of
the set is the replays of its members one after another, each over
``ArchiveSet.member_view(k)`` (the member's records between the marks around it), each
continuing from the fetch state the one before left, the views sharing the end-of-log
position (SET-EOL-1). Each member is read when the schedule reaches it, by the whole
``Replay`` (its vectorised, numpy-decoded pass), and dropped when the schedule leaves it:
memory is one member's observations, whatever the number of members.

``SetReplay`` offers what the ``interp`` command reads of a ``Replay``; backward schedules
and emulated deviations are the whole replay's (``open_set_replay`` chooses).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Iterator
from typing import Any

from pcpconform.format.pmtypes import Timestamp
from pcpconform.io.archiveset import ArchiveSet
from pcpconform.oracles.interp.model import Sample
from pcpconform.oracles.interp.replay import Replay

__all__ = ["SetReplay", "open_set_replay"]


class SetReplay:
    """A set's forward replay, member by member."""

    def __init__(self, archive: ArchiveSet, pmids: Iterable[int], *, rules: str) -> None:
        archive.refuse_overlaps()   # before anything is replayed, as the whole replay refuses it
        self.archive = archive
        self.pmids = list(pmids)
        self.rules = rules
        self._replay = Replay(archive.member_view(0), self.pmids, rules=rules)
        self._member = 0
        self.descs = self._replay.descs
        self.instances = self._replay.instances
        self.singular_quirks = self._replay.singular_quirks
        self.first_record = self._replay.first_record
        self.last = archive.end() or self._replay.last
        #: the members read, in order (each read whole by its ``Replay``)
        self.members_read = [0]
        rel = self._replay.rel
        self._bounds = [rel(m) if m is not None else None for m in archive.seam_marks()]

    def _member_of(self, t: float) -> int:
        """The member whose view bounds a fetch at ``t``: after the mark of the seam before it."""
        marks = [b if b is not None else float("-inf") for b in self._bounds]
        return bisect.bisect_right(marks, t)

    def _at(self, k: int) -> Replay:
        if k != self._member:
            state = self._replay.fetch_state()
            # one member's observations in memory at a time: a replay holds no reference
            # cycle, so it is freed here (no gc.collect, which would walk every live object)
            del self._replay
            replay = Replay(self.archive.member_view(k), self.pmids, rules=self.rules)
            replay.instances = self.instances
            replay.set_fetch_state(state)
            self._replay = replay
            self._member = k
            self.members_read.append(k)
            for pmid, n in self._replay.singular_quirks.items():
                self.singular_quirks[pmid] = max(n, self.singular_quirks.get(pmid, 0))
        return self._replay

    def schedule_chunks(self, start: Timestamp, interval_nsec: int, count: int,
                        chunk: int = 4096) -> Iterator[list[Sample]]:
        if interval_nsec <= 0:
            raise ValueError("a set is replayed member by member forwards only")
        at = start.total_nsec()
        rel = self._replay.rel
        i = 0
        while i < count:
            k = self._member_of(rel(Timestamp.from_nsec(at + i * interval_nsec)))
            j = i + 1
            while j < count and self._member_of(rel(Timestamp.from_nsec(at + j * interval_nsec))) == k:
                j += 1
            # no reference to a member's replay outlives its part of the schedule
            yield from self._at(k).schedule_chunks(Timestamp.from_nsec(at + i * interval_nsec), interval_nsec,
                                                   j - i, chunk)
            i = j

    def schedule(self, start: Timestamp, interval_nsec: int, count: int) -> list[Sample]:
        return [s for piece in self.schedule_chunks(start, interval_nsec, count) for s in piece]


def open_set_replay(archive: ArchiveSet, pmids: list[int], *, rules: str, emulate: Iterable[str] = (),
                    forward: bool = True, **whole: Any) -> Replay | SetReplay:
    """The replay for a command on a set: member by member for a forward schedule of a set
    of more than one member without emulated deviations, else the whole replay. Under the
    ``pcp-7`` profile a damaged member joins its neighbours with no mark between
    (SET-MEMBER-3), which no member alone can show: the whole replay then; a set with a
    damaged member under that profile is declined (``ArchiveSet.refuse_damage``), and so is
    a set with a member that records a metric as another type (``ArchiveSet.refuse_retyped``)."""
    emulate = tuple(emulate)
    archive.refuse_retyped()
    if forward:
        archive.refuse_damage()
    if (forward and not emulate and len(archive.members) > 1 and archive.direction > 0
            and archive.profile != "pcp-7"):
        return SetReplay(archive, pmids, rules=rules)
    return Replay(archive, pmids, rules=rules, emulate=emulate, **whole)
