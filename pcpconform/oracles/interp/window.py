"""A forward schedule replayed over a window of records: flat memory on any archive size.

``Replay`` keeps every observation of the metrics asked for, because a fetch may need any
of them. A forward schedule (positive interval, no emulated deviation) only ever needs,
per (metric, instance), the latest observation at or before its first fetch, everything
up to its last, and the first one after; and a mark supersedes every observation before
it. ``WindowReplay`` therefore reads the archive twice: a header-only pre-scan (record
times, marks, the end; no values decoded) and one decoding pass that advances with the
schedule, a piece of at most ``_GRID`` records at a time. Each piece is computed by the
same vectorised schedule over ``Series`` built from the window alone, so every value is
the one the whole replay gives (tests/property/test_interp_window.py).

What the window cannot do is handed to a whole ``Replay`` (typed, counted in
``stats.window_fallbacks``): record times out of order or an irregular record header
(decided before anything is computed), a schedule that goes backwards or jumps back, and
an instance whose next observation lies further ahead than ``READ_AHEAD`` values (an
instance that is never observed again and no mark after it). A fallback after the first
piece continues from the fetch state the window left: every piece already computed was
exact, and what the rest depends on is the fetch state and the observations.
"""

from __future__ import annotations

import bisect
import enum
from collections import Counter
from collections.abc import Iterable, Iterator
from typing import Any

from pcpconform.fastpath import Declined
from pcpconform.format.pmtypes import PM_IN_NULL, Timestamp
from pcpconform.format.schema.result import RESULT_HEADER_SIZE
from pcpconform.io.archive import Archive
from pcpconform.io.bulk import result_head
from pcpconform.oracles.interp.model import Sample, Series, gc_paused
from pcpconform.oracles.interp.replay import Replay
from pcpconform.oracles.interp.wanted import Record, wanted_records

__all__ = ["WindowReplay", "WindowDeclined", "WindowReason", "open_replay", "WINDOW_MIN_BYTES", "READ_AHEAD",
           "WINDOW_REASONS"]

#: archives (data volumes) smaller than this are replayed whole: the window only pays
#: for itself where the observations would not fit, and a whole pass reports a damaged
#: record before anything is written
WINDOW_MIN_BYTES = 64 * 10**6
READ_AHEAD = 4_000_000          # buffered values beyond which the window gives up
_GRID = 256                     # records a schedule piece spans at most (roughly)



class WindowReason(enum.StrEnum):
    """Why a whole Replay computes what the window would (``interp.window``)."""

    UNORDERED = "record times out of order"
    IRREGULAR = "irregular record header"
    BACKWARDS = "schedule backwards"
    REWOUND = "schedule went back"
    FAR_NEXT = "next observation too far ahead"
    EMULATED = "emulated deviation"


UNORDERED, IRREGULAR, BACKWARDS, REWOUND, FAR_NEXT = (
    WindowReason.UNORDERED, WindowReason.IRREGULAR, WindowReason.BACKWARDS, WindowReason.REWOUND,
    WindowReason.FAR_NEXT)
WINDOW_REASONS = (UNORDERED, IRREGULAR, BACKWARDS, REWOUND, FAR_NEXT)

_NULL_INST = (PM_IN_NULL,)


#: the window cannot replay this archive exactly, a whole Replay must (fastpath's one
#: ``Declined``, with a ``WindowReason``)
WindowDeclined = Declined


class _Pending:
    """One metric's value sets read but not yet dropped: (time, instances, values)."""

    __slots__ = ("records", "values")

    def __init__(self) -> None:
        self.records: list[tuple[float, tuple[int, ...], tuple[Any, ...]]] = []
        self.values = 0


class WindowReplay(Replay):
    """A Replay whose ``schedule`` reads the records as the (forward) schedule advances."""

    def _read(self, archive: Archive) -> None:
        if self.emulate:
            raise WindowDeclined(WindowReason.EMULATED)
        self._prescan(archive)
        self._results: Iterator[Record] = wanted_records(archive, self.descs, self.seeked_from,
                                                         self.decoder)
        self._pending = {pmid: _Pending() for pmid in self.descs if pmid not in self.builtin}
        self._buffered = 0
        self._read_to = float("-inf")       # the latest record time read
        self._done = False                  # every record read
        self._consumed = float("-inf")      # the last fetch time computed
        self._whole: Replay | None = None

    def _prescan(self, archive: Archive) -> None:
        """Marks, the end and the first record from the record headers alone (what
        ``_collect`` finds), and the record times every ``_GRID`` records."""
        version = archive.version
        smallest = RESULT_HEADER_SIZE[version] + 4     # the header and both length words
        start = self.seeked_from
        rel = self.rel
        end, last, first = self.end, self.last, None
        marks = self.marks
        grid: list[float] = []
        before = float("-inf")
        n = 0
        for vol, record in archive.volume_records():
            if start is not None and (vol < start.vol or (vol == start.vol and record.offset < start.off_data)):
                continue
            data = record.data
            if len(data) < smallest:
                raise WindowDeclined(IRREGULAR)
            stamp, numpmid = result_head(data, version)
            if numpmid < 0 or not 0 <= stamp.nsec < 1_000_000_000:
                raise WindowDeclined(IRREGULAR)
            if first is None:
                first = stamp
            t = rel(stamp)
            if t < before:
                raise WindowDeclined(UNORDERED)
            before = t
            if t > end:
                end, last = t, stamp
            if numpmid == 0:
                marks.append(t)
            if n % _GRID == 0:
                grid.append(t)
            n += 1
        self.end, self.last = end, last
        if start is None:
            self.first_record = first
        self._grid = grid

    # -- reading ahead ------------------------------------------------------------------
    def _fill(self, t_b: float) -> None:
        """Read records until every requested instance has an observation after ``t_b``,
        or a mark after ``t_b`` has been passed by a later record, or the archive ends."""
        waiting: dict[int, set[int]] = {}
        for pmid, pend in self._pending.items():
            wanted = set(self.instances[pmid])
            seen: set[int] = set()
            for t, insts, _ in reversed(pend.records):
                if t <= t_b or seen >= wanted:
                    break
                seen.update(insts)
            if wanted - seen:
                waiting[pmid] = wanted - seen
        mark_after = None
        for m in self.marks[bisect.bisect_right(self.marks, t_b):]:
            mark_after = m
            break
        if mark_after is not None and self._read_to > mark_after:
            return
        pending = self._pending
        singular = self._singular
        quirks = self.singular_quirks
        rel = self.rel
        with gc_paused():
            while (waiting or self._read_to <= t_b) and not self._done:
                got = next(self._results, None)
                if got is None:
                    self._done = True
                    break
                stamp, _, vsets = got
                t = rel(stamp)
                self._read_to = t
                if mark_after is not None and t > mark_after:
                    waiting.clear()
                for vs in vsets:
                    found = pending.get(vs.pmid)
                    if found is None:
                        continue
                    pend = found
                    insts, values = vs.columns
                    if vs.pmid in singular and insts != _NULL_INST:
                        quirks[vs.pmid] = max(quirks.get(vs.pmid, 0), len(insts))   # INTERP-SINGULAR-1
                        insts, values = _NULL_INST, values[-1:]
                    pend.records.append((t, insts, values))
                    pend.values += len(values)
                    self._buffered += len(values)
                    if t > t_b and vs.pmid in waiting:
                        left = waiting[vs.pmid]
                        left.difference_update(insts)
                        if not left:
                            del waiting[vs.pmid]
                if self._buffered > READ_AHEAD:
                    raise WindowDeclined(FAR_NEXT)

    def _drop(self, t_b: float) -> None:
        """Forget what no fetch after ``t_b`` can need: per metric, records before the
        latest mark at or before t_b, and records before the latest one each instance has
        at or before t_b."""
        m = bisect.bisect_right(self.marks, t_b)
        mark = self.marks[m - 1] if m else float("-inf")
        for pmid, pend in self._pending.items():
            records = pend.records
            wanted = set(self.instances[pmid])
            k = bisect.bisect_right(records, t_b, key=lambda r: r[0])
            covered: set[int] = set()
            keep = k
            while keep > 0 and not covered >= wanted and records[keep - 1][0] >= mark:
                keep -= 1
                covered.update(records[keep][1])
            if keep:
                gone = sum(len(r[2]) for r in records[:keep])
                pend.values -= gone
                self._buffered -= gone
                del records[:keep]

    def _window_series(self) -> dict[tuple[int, int], Series]:
        """The buffered value sets as the Series a whole pass would hold for them."""
        out: dict[tuple[int, int], Series] = {}
        for pmid, pend in self._pending.items():
            ptype = self.descs[pmid].type
            records = pend.records
            if not records:
                continue
            insts = records[0][1]
            if len(set(insts)) == len(insts) and all(r[1] == insts for r in records):
                times = [r[0] for r in records]
                for inst, column in zip(insts, zip(*(r[2] for r in records))):
                    s = Series.of_type(ptype)
                    s.extend(times, column)
                    out[(pmid, inst)] = s
                continue
            for t, rinsts, values in records:        # instance lists change, or repeat
                for inst, value in zip(rinsts, values):
                    known = out.get((pmid, inst))
                    if known is None:
                        known = out[(pmid, inst)] = Series.of_type(ptype)
                    known.extend((t,), (value,))
        return out

    @property
    def _singular(self) -> set[int]:
        return {pmid for pmid, desc in self.descs.items() if desc.indom.is_null}

    # -- scheduling ---------------------------------------------------------------------
    def _fall_back(self, reason: enum.Enum) -> Replay:
        self.stats.window_fallbacks[reason] += 1
        whole = Replay(self.archive, list(self.descs), rules=self.rules, from_time=self.from_time)
        whole.instances = {pmid: list(insts) for pmid, insts in self.instances.items()}
        whole.set_fetch_state(self.fetch_state())
        whole.stats = self.stats
        self.singular_quirks.update(whole.singular_quirks)
        self._whole = whole
        self._pending.clear()
        return whole

    def schedule(self, start: Timestamp, interval_nsec: int, count: int) -> list[Sample]:
        if self._whole is not None:
            return self._whole.schedule(start, interval_nsec, count)
        if interval_nsec <= 0:
            return self._fall_back(BACKWARDS).schedule(start, interval_nsec, count)
        if count <= 0:
            return []
        at = start.total_nsec()
        t_a = self.rel(start)
        t_b = self.rel(Timestamp.from_nsec(at + (count - 1) * interval_nsec))
        if t_a <= self._consumed:
            return self._fall_back(REWOUND).schedule(start, interval_nsec, count)
        try:
            self._fill(t_b)
        except WindowDeclined as declined:
            return self._fall_back(declined.reason).schedule(start, interval_nsec, count)
        self.series = self._window_series()
        samples = super().schedule(start, interval_nsec, count)
        self.series = {}
        self.stats.windowed += 1
        self._consumed = t_b
        self._drop(t_b)
        return samples

    def schedule_chunks(self, start: Timestamp, interval_nsec: int, count: int,
                        chunk: int = 4096) -> Iterator[list[Sample]]:
        """Pieces of at most ``chunk`` fetches that each span about ``_GRID`` records at most."""
        at = start.total_nsec()
        done = 0
        grid = self._grid
        while done < count:
            t = self.rel(Timestamp.from_nsec(at + done * interval_nsec))
            g = bisect.bisect_right(grid, t)
            n = min(chunk, count - done)
            if interval_nsec > 0 and g + 1 < len(grid):
                # fetches up to the grid point after the next one
                span = grid[g + 1] - t
                n = max(1, min(n, int(span * 1e9 // interval_nsec)))
            yield self.schedule(Timestamp.from_nsec(at + done * interval_nsec), interval_nsec, n)
            done += n


def open_replay(archive: Archive, pmids: list[int], *, rules: str, emulate: Iterable[str] = (),
                from_time: Timestamp | None = None, whole_schedule: bool = False,
                min_bytes: int | None = None) -> Replay:
    """The Replay for a command: a WindowReplay for an archive of ``min_bytes`` or more
    replayed a piece at a time without emulated deviations, else a whole Replay (a
    window the pre-scan declines is counted in ``stats.window_fallbacks``)."""
    emulate = tuple(emulate)
    size = sum(p.stat().st_size for p in archive.files.volumes.values())
    if emulate or whole_schedule or size < (WINDOW_MIN_BYTES if min_bytes is None else min_bytes):
        return Replay(archive, pmids, rules=rules, emulate=emulate, from_time=from_time)
    try:
        replay = WindowReplay(archive, pmids, rules=rules, from_time=from_time)
    except WindowDeclined as declined:
        whole = Replay(archive, pmids, rules=rules, from_time=from_time)
        whole.stats.window_fallbacks[declined.reason] += 1
        return whole
    return replay


def window_counts(replay: Replay) -> Counter[str | enum.Enum]:
    """How the window went: pieces computed over it, and fallbacks by reason."""
    return Counter({"windowed": replay.stats.windowed, **replay.stats.window_fallbacks})
