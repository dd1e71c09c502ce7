"""libpcp's bound cache (INTERP-DEV-5) over an archive set (spec/sets.md SET-REPLAY-8): one
context reading the set's members in turn, as ``__pmLogFetchInterp`` reads them through
``__pmLogRead_ctx``.

Two things differ from one archive's context (``cache.Context``):

* pmSetMode positions a replay by the temporal index of the member ``__pmLogSetTime``
  chooses (SET-REPLAY-6), not by the whole set's;
* the virtual mark of a seam is not a record on disk: libpcp makes it when a read meets the
  end of a member (forwards) or the start of the next (backwards), and makes it once
  (``ac_mark_done``) -- the next read in the same direction switches members and reads the
  first record there, and a read in the other direction makes the same mark again first
  (``cache_read``). A record read clears the flag. The switch moves the remembered read
  place (``ac_offset``) to the start (or, backwards, the end) of the member switched to
  (SET-REPLAY-9).

The end of log is the set's (SET-EOL-1), decided by the caller.
"""

from __future__ import annotations

import bisect
from typing import TYPE_CHECKING, Any

from pcpconform.format.pmtypes import Timestamp
from pcpconform.io.archiveset import VOL_STRIDE, ArchiveSet
from pcpconform.io.setrecords import backward_mark_time
from pcpconform.oracles.interp.cache import Archived, Context

if TYPE_CHECKING:
    from pcpconform.oracles.interp.replay import Replay

__all__ = ["SetArchived", "SetContext"]

_FORW, _BACK = 1, -1


class SetArchived(Archived):
    """A set's records in forward replay order (virtual marks included), with the member of
    every index entry and, per seam, the position of its virtual mark and the time of the
    mark a backward read makes there."""

    def __init__(self, archived: Archived, replay: Replay, archive: ArchiveSet) -> None:
        super().__init__(archived.records, archived.start, archived.end, archive)
        self._replay = replay
        self._set = archive
        rel = replay.rel
        forward = archive.direction > 0
        raws = archive.records_as_read() if forward else archive.volume_records()
        #: per position of a seam's virtual mark (a forward replay's: offset -1), the time
        #: of the mark a backward read makes there, 1 ms before the next member's start
        self.virtual: dict[int, float] = {}
        offsets: dict[int, list[int]] = {}
        first_of: dict[int, int] = {}
        for n, (vol, raw) in enumerate(raws):
            if vol not in offsets:
                offsets[vol], first_of[vol] = [], n
            offsets[vol].append(raw.offset)
            if raw.offset == -1:
                self.virtual[n] = rel(backward_mark_time(archive.members[vol // VOL_STRIDE].start))
        # every member's index entries (forwards, those of the records never delivered too:
        # libpcp positions among them), as record positions, with their members
        entries = ([(m.position * VOL_STRIDE + e.vol, e.timestamp, e.off_data, m.position)
                    for m in archive.members for e in m.archive.index_entries()] if forward else
                   [(e.vol, e.timestamp, e.off_data, e.member) for e in archive.index_entries()])
        self._index = []
        self._members: list[int] = []
        for vol, stamp, off_data, k in entries:
            if vol in offsets:
                self._index.append((stamp, first_of[vol] + bisect.bisect_left(offsets[vol], off_data)))
                self._members.append(k)

    def positioning_index(self, origin: Timestamp, direction: int) -> list[tuple[Timestamp, int]]:
        rel = self._replay.rel
        k = self._set.positioned_member(rel(origin), rel)
        return [e for e, member in zip(self.index, self._members, strict=True) if member == k]


class SetContext(Context):
    """``cache.Context`` reading a set: read position p of a seam's virtual mark is the end
    of the member before it, p + 1 the start of the member after."""

    def __init__(self, archived: SetArchived, *args: Any, **kwargs: Any) -> None:
        super().__init__(archived, *args, **kwargs)
        self.virtual = archived.virtual
        self.mark_done = 0              # ac_mark_done: the direction of the mark just made

    def _set_time(self) -> None:
        self.mark_done = 0              # __pmLogChangeArchive clears it, then positions
        super()._set_time()

    def _read(self, forward: bool) -> tuple[float, bool, tuple[Any, ...]] | None:
        p = self.pos
        if forward:
            if p in self.virtual:                       # at the end of the member before
                if self.mark_done == _FORW:             # made already: switch, read on
                    self.mark_done = 0
                    self.pos = self.offset = p + 1      # the switch remembers the start
                    return super()._read(True)
                if self.mark_done == _BACK:             # direction changed: made again
                    self.mark_done = 0
                    return (self.virtual[p], True, ())
                self.mark_done = _FORW
                return self.records[p]
            if p - 1 in self.virtual and self.mark_done == _BACK:
                self.mark_done = 0
                return (self.virtual[p - 1], True, ())
        else:
            if p in self.virtual and self.mark_done == _FORW:
                self.mark_done = 0
                return self.records[p]
            if p - 1 in self.virtual:                   # at the start of the member after
                if self.mark_done != _BACK:
                    self.mark_done = _BACK
                    return (self.virtual[p - 1], True, ())
                self.pos = self.offset = p - 1          # switch: remembered at its end
        self.mark_done = 0
        return super()._read(forward)
