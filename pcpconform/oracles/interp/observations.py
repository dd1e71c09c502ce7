"""The observations a replay reads from an archive: one forward pass, whatever the schedule.

``Observations`` reads, for the metrics asked for, every record's time and mark flag, the
marks, the archive's end and per (metric, instance) its observations in record order
(``Series``), decoding runs of records of one layout with numpy and the rest one at a time
(both counted in ``stats``); a late forward replay starts the pass at an index entry
(INTERP-SEEK-1). The rules of spec/interp.md that turn observations into fetched values are
``replay.Replay``, a subclass.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Sequence
from typing import Any

from pcpconform.format.cnum import SECONDS
from pcpconform.format.pmtypes import PM_IN_NULL, PmType, Timestamp
from pcpconform.format.values import F32
from pcpconform.io.archive import Archive
from pcpconform.oracles.interp.builtin import BUILTIN, builtin_desc
from pcpconform.oracles.interp.model import ScheduleStats, Series, gc_paused, timestamp_sub
from pcpconform.oracles.interp.wanted import (
    Record,
    ValueWindow,
    WantedDecoder,
    wanted_windows,
)

__all__ = ["Observations", "WINDOW_SPLIT"]

_NULL_INST = (PM_IN_NULL,)
_RUN = 1024                    # records buffered per metric before they join the series
#: a window of records whose metrics change instance lists (or values that do not fit the
#: metric's array) is taken a record at a time (counted in stats.record_fallbacks)
WINDOW_SPLIT = "window taken a record at a time"


class _Run:
    """Consecutive value sets of one metric with the same instance list, not yet in series."""

    __slots__ = ("insts", "rows", "seqs", "times")

    def __init__(self, insts: tuple[int, ...]) -> None:
        self.insts = insts
        self.seqs: list[int] = []
        self.times: list[float] = []
        self.rows: list[tuple[Any, ...]] = []



class Observations:
    """An archive's observations of some metrics, read in one pass."""

    def __init__(self, archive: Archive, pmids: Iterable[int], *, from_time: Timestamp | None = None) -> None:
        """``from_time`` promises that no fetch will be earlier: the pass then starts at the
        latest index entry from which every requested instance is bounded below at that
        time, instead of at the start of the archive (INTERP-SEEK-1)."""
        self.archive = archive
        self.start = archive.start
        self.descs = {int(p): builtin_desc(archive, int(p)) for p in pmids}
        #: libpcp's built-in metrics asked for that the archive lacks (INTERP-BUILTIN-1)
        self.builtin = frozenset(p for p, d in self.descs.items() if BUILTIN.get(p) is d)
        self.series: dict[tuple[int, int], Series] = {}
        self.marks: list[float] = []
        #: every record's time and whether it is a mark, in file order (INTERP-DEV-5)
        self.record_times: array[float] = array("d")
        self.record_marks: list[bool] = []
        self.end = 0.0
        self.last = archive.start               # the latest record time, absolute
        self.first_record: Timestamp | None = None    # the first record's time (a full pass)
        self.instances = {pmid: self._candidates(desc) for pmid, desc in self.descs.items()}
        #: singular metrics whose values are not (only) PM_IN_NULL's: pmid -> the most values
        #: one value set held (INTERP-SINGULAR-1; more than 1 aborts libpcp 6.x)
        self.singular_quirks: dict[int, int] = {}
        self.seeked_from: Any = None            # the index entry the pass started at, if any
        self.from_time = from_time
        #: the temporal index, read once (seeking, and positioning for the deviations)
        self.index_entries = list(archive.index_entries())
        if from_time is not None:
            self.seeked_from = self._seek_entry(archive, self.index_entries, from_time)
        # only the value sets of the metrics asked for are decoded
        self.decoder = WantedDecoder(archive.version, {p: d.type for p, d in archive.metadata.descs.items()},
                                     self.descs)
        self.stats = ScheduleStats()
        self._read(archive)

    def _seek_entry(self, archive: Archive, index: list[Any], when: Timestamp) -> Any:
        """The latest index entry before ``when`` from which every requested instance has
        an event (an observation, or any mark) at or before ``when``; None for the start.
        Candidate entries are tried going back 1, 2, 4, ... entries."""
        entries = [e for e in index if e.timestamp.total_nsec() < when.total_nsec()]
        if len(entries) < 2:
            return None
        want = {(pmid, inst) for pmid, insts in self.instances.items() for inst in insts
                if pmid not in self.builtin}
        step, k = 1, len(entries) - 1
        limit = when.total_nsec()
        while k > 0:
            entry = entries[k]
            seen: set[tuple[int, int]] = set()
            covered = False
            for res in archive.results_from(entry.vol, entry.off_data):
                if res.timestamp.total_nsec() > limit:
                    break
                if not res.vsets:
                    covered = True          # a mark bounds every instance
                    break
                for vs in res.vsets:
                    if vs.numval > 0 and vs.pmid in self.descs:
                        if self.descs[vs.pmid].indom.is_null:      # INTERP-SINGULAR-1
                            seen.add((vs.pmid, PM_IN_NULL))
                        else:
                            seen.update((vs.pmid, inst) for inst in vs.columns[0])
            if covered or want <= seen:
                return entry
            k -= step
            step *= 2
        return None

    def _read(self, archive: Archive) -> None:
        """What the constructor reads of the records (a subclass may read less): runs of
        records of one layout decoded by numpy, the rest one at a time (both counted in
        ``stats``)."""
        singular = [pmid for pmid, desc in self.descs.items() if desc.indom.is_null]
        records: Iterable[Record | ValueWindow] = wanted_windows(archive, self.decoder, singular, self.stats,
                                                                 self.seeked_from, _RUN)
        with gc_paused():
            self._collect(archive, records)

    def _collect(self, archive: Archive, records: Iterable[Record | ValueWindow]) -> None:
        """The one forward pass, whatever the schedule: marks, the end, and per (pmid, inst)
        its observations in record order (INTERP-BOUND-1).

        Value sets of the requested metrics are buffered as the decoder's (instances,
        values) columns, a run of records with the same instance list at a time (at most
        ``_RUN`` records), and each run is appended to the compact series at once. A
        ``ValueWindow`` whose metrics keep one instance list each is appended a metric at
        a time (numpy arrays, no Python object per value); any other is taken a record at
        a time (counted). Nothing is kept of other metrics' value sets."""
        runs: dict[int, _Run] = {}
        wanted = self.descs
        singular = {pmid for pmid, desc in self.descs.items() if desc.indom.is_null}
        quirks = self.singular_quirks
        marks = self.marks
        rel = self.rel
        end, last = self.end, self.last
        seq = 0
        first = None
        found: dict[tuple[int, int], tuple[tuple[int, int], Series]] = {}
        sharing: dict[int, tuple[tuple[int, ...], array[float]]] = {}
        flush = self._flush

        record_times, record_marks = self.record_times, self.record_marks

        def take(stamp: Timestamp, mark: bool, vsets: list[Any]) -> None:
            nonlocal first, end, last, seq
            if first is None:
                first = stamp
            t = rel(stamp)
            record_times.append(t)
            record_marks.append(mark)
            if t > end:
                end, last = t, stamp
            if mark:
                marks.append(t)
                return
            for vs in vsets:                 # the wanted ones, with values
                pmid = vs.pmid
                if pmid in wanted:
                    insts, values = vs.columns
                    if pmid in singular and insts != _NULL_INST:
                        # INTERP-SINGULAR-1: every value is PM_IN_NULL's, the last wins
                        quirks[pmid] = max(quirks.get(pmid, 0), len(insts))
                        insts, values = _NULL_INST, values[-1:]
                    run = runs.get(pmid)
                    if run is None or run.insts != insts or len(run.times) >= _RUN:
                        if run is not None:
                            flush(pmid, run, found, sharing)
                        run = runs[pmid] = _Run(insts)
                    run.seqs.append(seq)
                    run.times.append(t)
                    run.rows.append(values)
                seq += 1

        for item in records:
            if item.__class__ is not ValueWindow:
                take(*item)                         # type: ignore[misc]
                continue
            assert isinstance(item, ValueWindow)
            merged = _merge_window(item, singular, self.descs)
            if merged is None:
                self.stats.record_fallbacks[WINDOW_SPLIT] += 1
                for pos, raw in enumerate(item.raw):
                    take(*(item.singles.get(pos) or self.decoder(raw)))
                continue
            metrics, starts = merged
            times = self.rel_many(item.stamps)
            record_times.extend(times)
            record_marks.extend(item.marks)
            for t, stamp, mark in zip(times, item.stamps, item.marks):
                if first is None:
                    first = stamp
                if t > end:
                    end, last = t, stamp
                if mark:
                    marks.append(t)
            every = array("d", times)       # extends a series' times by a copy of memory
            for pmid, (at, insts, positions, columns) in metrics.items():
                run = runs.pop(pmid, None)
                if run is not None:             # what came before goes in first
                    flush(pmid, run, found, sharing)
                # positions are distinct and sorted: as many as the records means every one
                self._append(pmid, insts, seq + starts[at[0]] + at[1],
                             every if len(positions) == len(times) else [times[p] for p in positions],
                             columns, found, sharing)
            seq += starts[-1]
        for pmid, run in runs.items():
            flush(pmid, run, found, sharing)
        self.end, self.last = end, last
        if self.seeked_from is None:
            self.first_record = first
        # in order of first appearance, as a record-by-record pass would insert them
        for key, (_, series) in sorted(found.items(), key=lambda item: item[1][0]):
            self.series[key] = series

    def _flush(self, pmid: int, run: _Run, found: dict[tuple[int, int], tuple[tuple[int, int], Series]],
               sharing: dict[int, tuple[tuple[int, ...], array[float]]]) -> None:
        """Append one run of same-instance-list records to the series of its instances."""
        insts = run.insts
        if len(set(insts)) != len(insts):       # an instance twice in one value set
            self._unshare(pmid, insts, found, sharing)
            ptype = self.descs[pmid].type
            for order, t, values in zip(run.seqs, run.times, run.rows):
                for pos, (inst, value) in enumerate(zip(insts, values)):
                    sr = found.get((pmid, inst))
                    if sr is None:
                        sr = found[(pmid, inst)] = ((order, pos), Series.of_type(ptype))
                    sr[1].extend((t,), (value,))
            return
        self._append(pmid, insts, run.seqs[0], run.times, list(zip(*run.rows)), found, sharing)

    @staticmethod
    def _unshare(pmid: int, insts: tuple[int, ...],
                 found: dict[tuple[int, int], tuple[tuple[int, int], Series]],
                 sharing: dict[int, tuple[tuple[int, ...], array[float]]]) -> None:
        """The first run with another instance list gives each instance that shared one
        times array a copy of its own."""
        shared = sharing.get(pmid)
        if shared is not None and shared[0] != insts:
            for inst in shared[0]:
                series = found[(pmid, inst)][1]
                series.times = array("d", series.times)
            del sharing[pmid]

    def _append(self, pmid: int, insts: tuple[int, ...], order: int, times: Sequence[float],
                columns: Any, found: dict[tuple[int, int], tuple[tuple[int, int], Series]],
                sharing: dict[int, tuple[tuple[int, ...], array[float]]]) -> None:
        """Append records' values (``columns``: per instance, a tuple of Python values, or a
        row of a ValueRun's numpy array) to the series of distinct instances ``insts``.

        Instances that have only ever been observed together (the same records) share one
        times array, extended once per run."""
        ptype = self.descs[pmid].type
        self._unshare(pmid, insts, found, sharing)
        shared = sharing.get(pmid)
        packed = columns.__class__ is not list
        floats = ptype == PmType.FLOAT
        if shared is None and len(insts) > 1 and not any((pmid, i) in found for i in insts):
            shared = sharing[pmid] = (insts, array("d"))
            for pos, inst in enumerate(insts):
                series = Series.of_type(ptype)
                series.times = shared[1]
                found[(pmid, inst)] = ((order, pos), series)
        if shared is not None:
            shared[1].extend(times)
        for pos, (inst, column) in enumerate(zip(insts, columns)):
            sr = found.get((pmid, inst))
            if sr is None:
                sr = found[(pmid, inst)] = ((order, pos), Series.of_type(ptype))
            if shared is None:
                sr[1].times.extend(times)
            if packed:
                sr[1].extend_packed(column, floats)
            else:
                sr[1].extend_values(column)

    def rel(self, ts: Timestamp) -> float:
        """Seconds from the archive start, computed as libpcp does (in double)."""
        return timestamp_sub(ts, self.start)

    def rel_many(self, stamps: Sequence[Timestamp]) -> list[float]:
        """``rel`` of each of ``stamps``."""
        sec, nsec = self.start.sec, self.start.nsec
        return SECONDS(self.archive.stats, [ts.sec - sec for ts in stamps], [ts.nsec - nsec for ts in stamps])

    def _candidates(self, desc: Any) -> list[int]:
        if desc.indom.is_null:
            return [PM_IN_NULL]
        seen: dict[int, None] = {}
        for rec in self.archive.indom_history(desc.indom):
            for inst in rec.instances:
                seen.setdefault(inst, None)
        return list(seen)


def _merge_window(window: ValueWindow, singular: set[int], descs: dict[int, Any]
                  ) -> tuple[dict[int, tuple[tuple[int, int], tuple[int, ...], list[int], Any]], list[int]] | None:
    """Per wanted metric of a window: where it first appears (record position, place
    among the record's wanted value sets), its one instance list, the positions of the
    records holding it and its values (a numpy array, instances x records, or tuples
    per instance when only single records hold it); and per record the count of
    wanted value sets before it. None when a metric changes instance list, repeats an
    instance, is singular with instances, or a single record's values do not fit the
    array of the records decoded together."""
    import numpy as np

    per: dict[int, list[Any]] = {}      # pmid -> [at, insts, [(positions, array)], [(pos, values)]]
    counts = [0] * len(window.raw)
    for positions, columns in window.groups:
        for k, (pmid, insts, values) in enumerate(columns):
            entry = per.get(pmid)
            if entry is None:
                entry = per[pmid] = [(positions[0], k), insts, [], []]
            elif entry[1] != insts:
                return None
            else:
                entry[0] = min(entry[0], (positions[0], k))
            if values.__class__ is list:        # blocks decoded one at a time
                entry[3].extend(zip(positions, values))
            else:
                entry[2].append((positions, values))
        for p in positions:
            counts[p] = len(columns)
    for pos, (_, _, vsets) in window.singles.items():
        counts[pos] = len(vsets)
        for k, vs in enumerate(vsets):
            insts, values = vs.columns
            if len(set(insts)) != len(insts) or (vs.pmid in singular and insts != _NULL_INST):
                return None
            entry = per.get(vs.pmid)
            if entry is None:
                per[vs.pmid] = [(pos, k), insts, [], [(pos, values)]]
            elif entry[1] != insts:
                return None
            else:
                entry[0] = min(entry[0], (pos, k))
                entry[3].append((pos, values))
    starts = [0]
    for n in counts:
        starts.append(starts[-1] + n)
    out: dict[int, tuple[tuple[int, int], tuple[int, ...], list[int], Any]] = {}
    for pmid, (at, insts, groups, singles) in per.items():
        if not groups:
            singles.sort(key=lambda item: item[0])
            out[pmid] = (at, insts, [p for p, _ in singles], list(zip(*(v for _, v in singles))))
            continue
        arrays = [values for _, values in groups]
        positions = [p for ps, _ in groups for p in ps]
        if singles:
            packed = _packed([v for _, v in singles], arrays[0].dtype,
                             descs[pmid].type == PmType.FLOAT)
            if packed is None:
                return None
            arrays.append(packed)
            positions += [p for p, _ in singles]
        matrix = arrays[0] if len(arrays) == 1 else np.concatenate(arrays, axis=1)
        if len(arrays) > 1:
            order = np.argsort(np.array(positions), kind="stable")
            matrix = matrix[:, order]
            positions = sorted(positions)
        out[pmid] = (at, insts, positions, matrix)
    # in order of first appearance, as the records hold them
    return dict(sorted(out.items(), key=lambda item: item[1][0])), starts


def _packed(rows: list[tuple[Any, ...]], dtype: Any, floats: bool) -> Any:
    """Records' values (a tuple per record) as a numpy array of ``dtype`` (instances x
    records), when each fits it exactly as the array decoder would have given it (FLOAT
    as its bits, doubles only from floats, integers only from ints in range); else None."""
    import numpy as np

    flat = [v for row in rows for v in row]
    kinds = set(map(type, flat))
    if floats:
        if kinds != {F32}:
            return None
        flat = [v.bits for v in flat]
    elif dtype.kind == "f":
        if kinds != {float}:
            return None
    else:
        info = np.iinfo(dtype)
        if kinds != {int} or min(flat) < info.min or max(flat) > info.max:
            return None
    return np.array(flat, dtype=dtype).reshape(len(rows), -1).T
