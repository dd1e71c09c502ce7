"""Reference interpolation: what libpcp's PM_MODE_INTERP returns, as explicit rules.

The rules (spec chapter to come; facts from the reference notes, rules A1-A16):

* times are double seconds relative to the archive label start, as libpcp computes them;
* per (metric, instance), ``prior(t)``/``next(t)`` are the latest/earliest event at or
  before/after t, events being the instance's observations and every mark;
* COUNTER and INSTANT have a value iff both bounds exist and are observations; DISCRETE
  iff the prior bound does; an observation exactly at t is returned as is (numeric types);
* COUNTER values are interpolated linearly with libpcp's arithmetic (integers via double,
  +0.5 then truncation); INSTANT/DISCRETE take the prior value under ``pcp-6.0`` rules and
  the nearer one (ties to prior; DISCRETE only towards an observation) under ``pcp-6.3``;
* non-numeric types take the prior value under both;
* a COUNTER metric gets no values when a mark lies between the previous fetch and this one
  and the previous fetch gave it values (no rate across a gap);
* a fetch more than 1 ms before the start or after the end of the archive is end-of-log.
"""

from __future__ import annotations

import bisect
from array import array
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from pcpconform.format.cnum import NUMERIC_TYPES
from pcpconform.format.pmtypes import PM_IN_NULL, PmSem, PmType, Timestamp
from pcpconform.format.values import F32
from pcpconform.io.archive import Archive
from pcpconform.oracles.interp.builtin import BUILTIN, BUILTIN_REASON, MetricSource, builtin_desc
from pcpconform.oracles.interp.model import (
    CALIPER,
    DEVIATIONS,
    EDGE,
    RULE_SETS,
    FetchState,
    Lifetimes,
    NoValue,
    Sample,
    ScheduleStats,
    Series,
    VectorisedFallback,
    counter_value,
    gc_paused,
    timestamp_sub,
)
from pcpconform.oracles.interp.wanted import (
    Record,
    ValueWindow,
    WantedDecoder,
    wanted_records,
    wanted_windows,
)

__all__ = ["RULE_SETS", "DEVIATIONS", "NoValue", "Sample", "Replay", "interpolate"]

NO_NUMPY = "no numpy"          # a whole-schedule fallback reason (ScheduleStats.fallbacks)
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


class Replay:
    """An archive's observations of some metrics, replayed at any times."""

    def __init__(self, archive: Archive, pmids: Iterable[int], *, rules: str = "pcp-6.3",
                 emulate: Iterable[str] = (), from_time: Timestamp | None = None) -> None:
        """``from_time`` promises that no fetch will be earlier: the pass then starts at the
        latest index entry from which every requested instance is bounded below at that
        time, instead of at the start of the archive (INTERP-SEEK-1)."""
        if rules not in RULE_SETS:
            raise ValueError(f"rules must be one of {', '.join(RULE_SETS)}")
        self.emulate = frozenset(emulate)
        unknown = self.emulate - DEVIATIONS.keys()
        if unknown:
            raise ValueError(f"unknown deviation {sorted(unknown)[0]!r}; known: {', '.join(DEVIATIONS)}")
        self.archive = archive
        self.rules = rules
        self.start = archive.start
        self.descs = {int(p): builtin_desc(archive, int(p)) for p in pmids}
        #: libpcp's built-in metrics asked for that the archive lacks (INTERP-BUILTIN-1)
        self.builtin = frozenset(p for p, d in self.descs.items() if BUILTIN.get(p) is d)
        self.series: dict[tuple[int, int], Series] = {}
        self.marks: list[float] = []
        self.end = 0.0
        self.last = archive.start               # the latest record time, absolute
        self.first_record: Timestamp | None = None    # the first record's time (a full pass)
        self.instances = {pmid: self._candidates(desc) for pmid, desc in self.descs.items()}
        #: singular metrics whose values are not (only) PM_IN_NULL's: pmid -> the most values
        #: one value set held (INTERP-SINGULAR-1; more than 1 aborts libpcp 6.x)
        self.singular_quirks: dict[int, int] = {}
        self.seeked_from: Any = None            # the index entry the pass started at, if any
        self.from_time = from_time
        index = list(archive.index_entries())   # read once: seeking and INTERP-DEV-2
        if from_time is not None:
            self.seeked_from = self._seek_entry(archive, index, from_time)
        # only the value sets of the metrics asked for are decoded
        self.decoder = WantedDecoder(archive.version, {p: d.type for p, d in archive.metadata.descs.items()},
                                     self.descs)
        self.stats = ScheduleStats()
        self._read(archive)
        self._lifetimes = {pmid: self._lifetime_table(desc) for pmid, desc in self.descs.items()}
        self._tracks_next = bool(self.emulate & {"discrete-stale-next", "nonnumeric-exact-hit"})
        # what one fetch leaves for the next; the before field is the previous fetch time,
        # for value_at (INTERP-DEV-1)
        self._fetch = FetchState()
        # libpcp's remembered upper bound per (pmid, inst): only refreshed when an event
        # at or after the fetch time exists (INTERP-DEV-3)
        self._held_next: dict[tuple[int, int], tuple[float, Any]] = {}
        self._exhausted: set[tuple[int, int]] = set()    # searched forwards, found nothing
        self._no_search = False
        self.direction = 1                   # sign of the schedule's interval
        self._index = [(self.rel(e.timestamp), e) for e in index]
        # INTERP-DEV-2: bounds the first positioning set past a mark, kept while fetches stay
        # between them (libpcp reads no records then, so it never sees the mark)
        self._held_pair: dict[tuple[int, int], tuple[tuple[float, Any], tuple[float, Any]]] = {}

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
        records: Iterable[Record | ValueWindow]
        try:
            import numpy  # noqa: F401  (the runs' decoder needs it)
        except ImportError:                 # counted, never silent
            self.stats.record_fallbacks[NO_NUMPY] += 1
            records = wanted_records(archive, self.descs, self.seeked_from, self.decoder)
        else:
            singular = [pmid for pmid, desc in self.descs.items() if desc.indom.is_null]
            records = wanted_windows(archive, self.decoder, singular, self.stats, self.seeked_from, _RUN)
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

        def take(stamp: Timestamp, mark: bool, vsets: list[Any]) -> None:
            nonlocal first, end, last, seq
            if first is None:
                first = stamp
            t = rel(stamp)
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
            times = [rel(stamp) for stamp in item.stamps]
            for t, stamp, mark in zip(times, item.stamps, item.marks):
                if first is None:
                    first = stamp
                if t > end:
                    end, last = t, stamp
                if mark:
                    marks.append(t)
            for pmid, (at, insts, positions, columns) in metrics.items():
                run = runs.pop(pmid, None)
                if run is not None:             # what came before goes in first
                    flush(pmid, run, found, sharing)
                self._append(pmid, insts, seq + starts[at[0]] + at[1],
                             [times[p] for p in positions], columns, found, sharing)
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

    def _append(self, pmid: int, insts: tuple[int, ...], order: int, times: list[float],
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

    def end_of_log(self, times: list[float], prev: float | None) -> list[bool]:
        """Whether each of consecutive fetches at ``times`` (after one at ``prev``) is end of
        log: more than 1 ms before the start or after the end (libpcp compares the
        difference); an archive set says it for itself (spec/sets.md SET-EOL-1)."""
        rule = getattr(self.archive, "end_of_log", None)
        if rule is not None:
            flags: list[bool] = rule(times, prev, self.end, self.rel)
            return flags
        return [t < -EDGE or t - self.end > EDGE for t in times]

    def _candidates(self, desc: Any) -> list[int]:
        if desc.indom.is_null:
            return [PM_IN_NULL]
        seen: dict[int, None] = {}
        for rec in self.archive.indom_history(desc.indom):
            for inst in rec.instances:
                seen.setdefault(inst, None)
        return list(seen)

    def lifetimes(self, pmid: int) -> Lifetimes | None:
        """INTERP-EXIST-2's table for metric ``pmid``: per instance (first record listing it,
        first later record omitting it); None when its domain has no lifetimes."""
        return self._lifetimes.get(pmid)

    def fetch_state(self) -> FetchState:
        """A copy of what the fetches so far leave for the next one."""
        return self._fetch.copy()

    def set_fetch_state(self, state: FetchState) -> None:
        """Continue as if the fetches so far had left ``state`` (a whole schedule computed
        elsewhere hands its end state back through this)."""
        self._fetch = state.copy()

    def _lifetime_table(self, desc: Any) -> Lifetimes | None:
        """INTERP-EXIST-2 per instance: (first record listing it, first later record
        omitting it); None when the domain never reaches 16 instances (no lifetimes)."""
        history = self.archive.indom_history(desc.indom) if not desc.indom.is_null else []
        if not history or max(len(r.instances) for r in history) < CALIPER:
            return None
        stamps = [(self.rel(r.timestamp), r.instances) for r in history]
        table: Lifetimes = {}
        for inst in self.instances[int(desc.pmid)]:
            first = next((t for t, insts in stamps if inst in insts), None)
            gone = None if first is None else min(
                (t for t, insts in stamps if t > first and inst not in insts), default=None)
            table[inst] = (first, gone)
        return table

    def _alive(self, desc: Any, inst: int, t: float) -> bool:
        table = self.lifetimes(int(desc.pmid))
        if table is None:
            return True
        first, gone = table.get(inst, (None, None))
        if first is None or t < first:
            return False
        return gone is None or t < gone

    def _mark_bounds(self, t: float) -> tuple[float | None, float | None]:
        """The latest mark at or before t and the earliest at or after it."""
        marks = self.marks
        m = bisect.bisect_right(marks, t)
        before = marks[m - 1] if m else None
        m = bisect.bisect_left(marks, t)
        return before, (marks[m] if m < len(marks) else None)

    def _bounds(self, s: Series | None, t: float,
                marks: tuple[float | None, float | None] | None = None
                ) -> tuple[tuple[float, Any] | None, tuple[float, Any] | None]:
        """(prior, next) events: (time, value) for an observation, (time, None) for a mark."""
        prior = nxt = None
        if s is not None:
            times = s.times
            i = bisect.bisect_right(times, t)
            if i:
                prior = (times[i - 1], s.values[i - 1])
                # an observation at t is both bounds
                j = i - 1 if times[i - 1] == t else i
            else:
                j = 0
            if j < len(times):
                nxt = (times[j], s.values[j])
        mp, mn = self._mark_bounds(t) if marks is None else marks
        if mp is not None and (prior is None or mp > prior[0]):
            prior = (mp, None)
        if mn is not None and (nxt is None or mn < nxt[0]):
            nxt = (mn, None)
        return prior, nxt

    def _index_point(self, t: float) -> float | None:
        """The time of the index entry libpcp's first positioning chooses for t: the entry
        at t, else the nearer of the entries around t (ties to the later one); in an
        archive set, among the entries of the member positioning chooses."""
        member = getattr(self.archive, "positioned_member", None)   # an archive set's (SET-EOL-1)
        k = member(t, self.rel) if member is not None else None
        stamps = [stamp for stamp, e in self._index if k is None or e.member == k]
        if not stamps:
            return None
        j = next((i for i, stamp in enumerate(stamps) if stamp >= t), len(stamps))
        if j < len(stamps) and stamps[j] == t:
            return stamps[j]
        if j < 1:
            return stamps[0]
        if j == len(stamps):
            return stamps[-1]
        return stamps[j] if stamps[j] - t <= t - stamps[j - 1] else stamps[j - 1]

    def _first_fetch_bound(self, s: Series | None, t: float) -> tuple[str, tuple[float, Any]] | None:
        """INTERP-DEV-2: the bound libpcp's first positioning sets while skipping marks:
        reading forwards from the index point up to t (non-positive interval) gives the
        latest observation in [point, t] as prior; reading backwards from an index point
        after t (positive interval) gives the earliest observation in (t, point) as next."""
        g = self._fetch.positioned
        if g is None or s is None:
            return None
        m = bisect.bisect_left(self.marks, t)
        if m < len(self.marks) and self.marks[m] == t:
            return None         # a mark at t itself is read again before the bounds are used
        if self.direction <= 0 and g <= t:
            i = bisect.bisect_right(s.times, t)
            if i and s.times[i - 1] >= g:
                return "prior", (s.times[i - 1], s.values[i - 1])
        elif self.direction > 0 and g > t:
            j = bisect.bisect_right(s.times, t)
            if j < len(s.times) and s.times[j] < g:
                return "next", (s.times[j], s.values[j])
        return None

    def _first_fetch_bounds(self, pmid: int, inst: int, series: Series | None, t: float,
                            prior: Any, nxt: Any) -> tuple[Any, Any]:
        key = (pmid, inst)
        held = self._held_pair.get(key)
        if held is not None:
            if held[0][0] <= t <= held[1][0]:
                return held
            del self._held_pair[key]
        override = self._first_fetch_bound(series, t)
        if override is None:
            return prior, nxt
        prior, nxt = (override[1], nxt) if override[0] == "prior" else (prior, override[1])
        if prior is not None and nxt is not None and prior[1] is not None and nxt[1] is not None:
            self._held_pair[key] = (prior, nxt)
        return prior, nxt

    def _hidden_marks(self, pmid: int) -> list[tuple[float, float]]:
        return [(p[0], n[0]) for (m, _), (p, n) in self._held_pair.items() if m == pmid]

    def _nothing_to_search(self, t: float) -> bool:
        """INTERP-DEV-1 shows only when libpcp reads no record at this fetch: every requested
        instance has a lower bound, and none lacks an upper bound at or after t (one that
        found none once is not searched for again). Marks the instances whose search finds
        nothing."""
        quiet = True
        for pmid in self.descs:
            for inst in self.instances[pmid]:
                key = (pmid, inst)
                prior, nxt = self._bounds(self.series.get(key), t)
                if prior is None:
                    quiet = False           # an instance without a lower bound: libpcp rolls
                held = self._held_next.get(key)
                if held is not None and held[0] == t and \
                        isinstance(self._event_before(self.series.get(key), t), NoValue):
                    quiet = False           # bounded below by a mark: libpcp searches on
                    continue
                if key in self._exhausted or (held is not None and held[0] >= t):
                    continue
                quiet = False
                if nxt is None:
                    self._exhausted.add(key)
        return quiet

    def _event_before(self, s: Series | None, t: float) -> Any:
        """The value of the latest event strictly before t (INTERP-DEV-1)."""
        obs = None
        if s is not None:
            i = bisect.bisect_left(s.times, t)
            if i:
                obs = (s.times[i - 1], s.values[i - 1])
        m = bisect.bisect_left(self.marks, t)
        if m and (obs is None or self.marks[m - 1] > obs[0]):
            return NoValue("mark")
        return NoValue("no prior") if obs is None else obs[1]

    def value_at(self, pmid: int, inst: int, t: float,
                 marks: tuple[float | None, float | None] | None = None) -> Any:
        desc = self.descs[pmid]
        if self.lifetimes(pmid) is not None and not self._alive(desc, inst, t):
            return NoValue("not alive")
        series = self.series.get((pmid, inst))
        prior, nxt = self._bounds(series, t, marks)
        if (self._fetch.positioned is not None or self._held_pair) and "mark-first-fetch" in self.emulate:
            prior, nxt = self._first_fetch_bounds(pmid, inst, series, t, prior, nxt)
        held = None
        if self._tracks_next:
            held = self._held_next.get((pmid, inst))
            if nxt is not None:
                self._held_next[(pmid, inst)] = nxt
        if nxt is None and (held is not None and held[1] is not None and "discrete-stale-next" in self.emulate
              and self.rules == "pcp-6.3" and desc.sem == PmSem.DISCRETE
              and desc.type in NUMERIC_TYPES and prior is not None and prior[1] is not None
              and prior[0] != t):
            return held[1]          # INTERP-DEV-3: the stale upper bound wins the midpoint test
        if prior is None:
            return NoValue("no prior")
        if prior[1] is None:
            return NoValue("mark")
        sem, ptype = desc.sem, desc.type
        if sem != PmSem.DISCRETE:
            if nxt is None:
                return NoValue("no next")
            if nxt[1] is None:
                return NoValue("mark")
        tp, p = prior
        if ptype not in NUMERIC_TYPES:
            if (held is not None and held[0] == t and held[1] is not None and tp == t
                    and "nonnumeric-exact-hit" in self.emulate and self._no_search
                    and self._fetch.before is not None and self._fetch.before < t):
                return self._event_before(series, t)    # INTERP-DEV-1
            return p
        if tp == t:
            return p
        if nxt is not None and nxt[0] == t and nxt[1] is not None:
            return nxt[1]
        if sem == PmSem.COUNTER:
            assert nxt is not None
            # intervals are differences of start-relative times (INTERP-TIME-1), as in libpcp
            return counter_value(ptype, p, nxt[1], t - tp, nxt[0] - tp)
        if self.rules == "pcp-6.0" or nxt is None or nxt[1] is None:
            return p
        return nxt[1] if t > (tp + nxt[0]) / 2 else p

    def fetch(self, when: Timestamp) -> Sample:
        """What one INTERP fetch at ``when`` returns (updates the mark-crossing state)."""
        t = self.rel(when)
        prev, self._fetch.prev_time = self._fetch.prev_time, t
        self._fetch.before = prev
        self._fetch.positioned = None
        if prev is None and "mark-first-fetch" in self.emulate:
            self._fetch.positioned = self._index_point(t)
            # any metric-instance the positioning leaves unbounded makes libpcp scan past
            # the skipped marks, which then bound every instance as the rules say
            if self._fetch.positioned is not None and any(
                    self._first_fetch_bound(self.series.get((pmid, inst)), t) is None
                    for pmid in self.descs for inst in self.instances[pmid]
                    if self.lifetimes(pmid) is None or self._alive(self.descs[pmid], inst, t)):
                self._fetch.positioned = None
        if self.end_of_log([t], prev)[0]:
            return Sample(when, eol=True)
        if prev is None:
            between: list[float] = []
        elif t >= prev:     # marks passed in the direction of travel
            between = self.marks[bisect.bisect_right(self.marks, prev):bisect.bisect_right(self.marks, t)]
        else:
            between = self.marks[bisect.bisect_left(self.marks, t):bisect.bisect_left(self.marks, prev)]
        marks = self._mark_bounds(t)
        if "nonnumeric-exact-hit" in self.emulate:
            self._no_search = self._nothing_to_search(t)
        value_at = self.value_at
        sample = Sample(when)
        for pmid, desc in self.descs.items():
            hidden = self._hidden_marks(pmid) if self._held_pair else []
            crossed = any(not any(lo < m < hi for lo, hi in hidden) for m in between)
            values: dict[int, Any] = {}
            if pmid in self.builtin:
                values = {PM_IN_NULL: NoValue(BUILTIN_REASON)}
            elif desc.sem == PmSem.COUNTER and desc.type not in NUMERIC_TYPES:
                values = {}
            elif desc.sem == PmSem.COUNTER and crossed and self._fetch.prev_had.get(pmid):
                values = {inst: NoValue("counter across mark") for inst in self.instances[pmid]}
            else:
                values = {inst: value_at(pmid, inst, t, marks) for inst in self.instances[pmid]}
            self._fetch.prev_had[pmid] = any(not isinstance(v, NoValue) for v in values.values())
            sample.values[pmid] = values
        return sample


    def schedule(self, start: Timestamp, interval_nsec: int, count: int) -> list[Sample]:
        """Fetch ``count`` times from ``start`` every ``interval_nsec`` (either sign).

        Without emulated deviations this takes the vectorised path, which gives exactly what
        ``schedule_reference`` (one ``fetch`` after another) gives. It declines a schedule
        only by raising ``VectorisedFallback`` (or when numpy is missing); each such fallback,
        and each series it hands back to ``value_at``, is counted in ``self.stats``. Any other
        exception propagates."""
        self.direction = 1 if interval_nsec > 0 else -1
        if self.emulate:                    # the deviations are modelled per fetch only
            return self.schedule_reference(start, interval_nsec, count)
        try:
            from pcpconform.oracles.interp import vectorised
        except ImportError:                 # an install without numpy: counted, never silent
            self.stats.fallbacks[NO_NUMPY] += 1
            return self.schedule_reference(start, interval_nsec, count)
        try:
            with gc_paused():
                result = vectorised.schedule(self, self.fetch_state(), start, interval_nsec, count)
        except VectorisedFallback as declined:
            self.stats.fallbacks[declined.reason] += 1
            return self.schedule_reference(start, interval_nsec, count)
        self.set_fetch_state(result.state)
        self.stats.vectorised += 1
        self.stats.series_fallbacks.update(result.series_fallbacks)
        return result.samples

    def schedule_chunks(self, start: Timestamp, interval_nsec: int, count: int,
                        chunk: int = 4096) -> Iterator[list[Sample]]:
        """``schedule`` in pieces of at most ``chunk`` fetches, each continuing from the
        state the one before leaves: the same samples, never all of them in memory."""
        at = start.total_nsec()
        for done in range(0, count, max(chunk, 1)):
            yield self.schedule(Timestamp.from_nsec(at + done * interval_nsec), interval_nsec,
                                min(chunk, count - done))

    def schedule_reference(self, start: Timestamp, interval_nsec: int, count: int) -> list[Sample]:
        """``schedule`` one ``fetch`` at a time: the reference the fast path is tested against."""
        at = start.total_nsec()
        self.direction = 1 if interval_nsec > 0 else -1
        self.stats.reference += 1
        out = []
        for _ in range(count):
            out.append(self.fetch(Timestamp.from_nsec(at)))
            at += interval_nsec
        return out


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


def interpolate(archive: Archive, metrics: Sequence[int | str], start: Timestamp,
                interval_nsec: int, count: int, *, rules: str = "pcp-6.3",
                emulate: Iterable[str] = ()) -> list[Sample]:
    """Replay ``metrics`` (names or pmIDs) on a schedule; see Replay.schedule."""
    pmids = [int(MetricSource(archive).desc(m).pmid) for m in metrics]
    return Replay(archive, pmids, rules=rules, emulate=emulate).schedule(start, interval_nsec, count)

