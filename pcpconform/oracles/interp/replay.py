"""Reference interpolation: what libpcp's PM_MODE_INTERP returns, as the explicit rules of
spec/interp.md, over the observations ``observations.Observations`` reads.

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
* a fetch more than 1 ms before the start or after the end of the archive is end-of-log;
* libpcp's named deviations from these rules (INTERP-DEV-*) are reproduced on request.
"""

from __future__ import annotations

import bisect
import copy
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from pcpconform.format.cnum import NUMERIC_TYPES
from pcpconform.format.pmtypes import PM_IN_NULL, PmSem, Timestamp
from pcpconform.io.archive import Archive
from pcpconform.oracles.interp.builtin import BUILTIN_REASON, MetricSource
from pcpconform.oracles.interp.cache import calipers
from pcpconform.oracles.interp.cached import CachedFetches
from pcpconform.oracles.interp.model import (
    DEVIATIONS,
    EDGE,
    RULE_SETS,
    FetchState,
    Lifetimes,
    NoValue,
    Sample,
    Series,
    VectorisedFallback,
    counter_value,
    gc_paused,
)
from pcpconform.oracles.interp.observations import Observations

__all__ = ["RULE_SETS", "DEVIATIONS", "NoValue", "Sample", "Replay", "interpolate"]


class Replay(Observations):
    """An archive's observations of some metrics, replayed at any times."""

    def __init__(self, archive: Archive, pmids: Iterable[int], *, rules: str = "pcp-6.3",
                 emulate: Iterable[str] = (), from_time: Timestamp | None = None,
                 reposition_on_set_mode: bool = False) -> None:
        """``from_time`` promises that no fetch will be earlier: the pass then starts at the
        latest index entry from which every requested instance is bounded below at that
        time, instead of at the start of the archive (INTERP-SEEK-1).
        ``reposition_on_set_mode``: the libpcp emulated (INTERP-DEV-5) is 7.x, whose later
        pmSetModes make it position again (INTERP-VER-2)."""
        if rules not in RULE_SETS:
            raise ValueError(f"rules must be one of {', '.join(RULE_SETS)}")
        self.emulate = frozenset(emulate)
        unknown = self.emulate - DEVIATIONS.keys()
        if unknown:
            raise ValueError(f"unknown deviation {sorted(unknown)[0]!r}; known: {', '.join(DEVIATIONS)}")
        self.rules = rules
        self.reposition_on_set_mode = reposition_on_set_mode
        # libpcp's cache (INTERP-DEV-5) depends on records before any time: no seeking
        super().__init__(archive, pmids, from_time=from_time if "cached-bounds" not in self.emulate else None)
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
        self._index = [(self.rel(e.timestamp), e) for e in self.index_entries]
        # INTERP-DEV-2: bounds the first positioning set past a mark, kept while fetches stay
        # between them (libpcp reads no records then, so it never sees the mark)
        self._held_pair: dict[tuple[int, int], tuple[tuple[float, Any], tuple[float, Any]]] = {}
        # INTERP-DEV-5: libpcp's whole bound cache, one context, made at the first fetch
        self._cached: CachedFetches | None = None

    def set_mode(self, start: Timestamp, interval_nsec: int) -> None:
        """pmSetMode(PM_MODE_INTERP, start, interval): the direction of the fetches to come,
        and for INTERP-DEV-5 libpcp's positioning and forgetting."""
        self.direction = 1 if interval_nsec > 0 else -1
        if "cached-bounds" in self.emulate:
            self._cached_fetches().set_mode(start, interval_nsec)

    def _cached_fetches(self) -> CachedFetches:
        if self._cached is None:
            self._cached = CachedFetches(self)
        return self._cached

    def rules_twin(self) -> Replay:
        """This replay's observations under the rules alone (nothing emulated), with a fetch
        state of its own: INTERP-DEV-5 asks it why the rules give no value where libpcp
        gives none either."""
        twin = copy.copy(self)
        twin.emulate = frozenset()
        twin._tracks_next = False
        twin.new_context()
        return twin

    def new_context(self) -> None:
        """Go on as a new libpcp context would, the observations kept: no fetch before,
        nothing cached (each of several schedules then replays as in its own process)."""
        self._fetch = FetchState()
        self._held_next, self._exhausted, self._held_pair = {}, set(), {}
        self._no_search = False
        self._cached = None
        self.direction = 1

    def end_of_log(self, times: list[float], prev: float | None) -> list[bool]:
        """Whether each of consecutive fetches at ``times`` (after one at ``prev``) is end of
        log: more than 1 ms before the start or after the end (libpcp compares the
        difference); an archive set says it for itself (spec/sets.md SET-EOL-1)."""
        rule = getattr(self.archive, "end_of_log", None)
        if rule is not None:
            flags: list[bool] = rule(times, prev, self.end, self.rel)
            return flags
        return [t < -EDGE or t - self.end > EDGE for t in times]

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
        """INTERP-EXIST-2 per instance, as libpcp's time_caliper computes it: (birth, death),
        birth the first instance-domain record listing it, death the first record after
        the latest one listing it (None: none, or before the label's start, which libpcp
        does not test); None when the domain never reaches 16 instances (no lifetimes)."""
        if desc.indom.is_null:
            return None
        history = [(self.rel(r.timestamp), r.instances) for r in self.archive.indom_history(desc.indom)]
        table = calipers(history, self.instances[int(desc.pmid)])
        if not table:
            return None
        return {inst: (birth if birth >= 0 else None, death if death >= 0 else None)
                for inst, (birth, death) in table.items()}

    def _alive(self, desc: Any, inst: int, t: float) -> bool:
        table = self.lifetimes(int(desc.pmid))
        if table is None:
            return True
        birth, death = table.get(inst, (None, None))
        # libpcp compares t_req < t_birth and t_req > t_death: alive at both ends
        return not ((birth is not None and t < birth) or (death is not None and t > death))

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
        if "cached-bounds" in self.emulate:
            return self._cached_fetches().fetch(when)
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
        from pcpconform.oracles.interp import vectorised  # numpy, imported when first needed
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
            piece = Timestamp.from_nsec(at + done * interval_nsec), interval_nsec, min(chunk, count - done)
            # one pmSetMode for the whole schedule (INTERP-DEV-5)
            yield self.schedule(*piece) if not done else self._continue(*piece)

    def _continue(self, start: Timestamp, interval_nsec: int, count: int) -> list[Sample]:
        """``schedule`` going on from the fetches before it, without a new pmSetMode."""
        if "cached-bounds" in self.emulate:
            return self.schedule_reference(start, interval_nsec, count, set_mode=False)
        return self.schedule(start, interval_nsec, count)

    def schedule_reference(self, start: Timestamp, interval_nsec: int, count: int, *,
                           set_mode: bool = True) -> list[Sample]:
        """``schedule`` one ``fetch`` at a time: the reference the fast path is tested against."""
        at = start.total_nsec()
        if set_mode:
            self.set_mode(start, interval_nsec)
        self.stats.reference += 1
        out = []
        for _ in range(count):
            out.append(self.fetch(Timestamp.from_nsec(at)))
            at += interval_nsec
        return out


def interpolate(archive: Archive, metrics: Sequence[int | str], start: Timestamp,
                interval_nsec: int, count: int, *, rules: str = "pcp-6.3",
                emulate: Iterable[str] = ()) -> list[Sample]:
    """Replay ``metrics`` (names or pmIDs) on a schedule; see Replay.schedule."""
    pmids = [int(MetricSource(archive).desc(m).pmid) for m in metrics]
    return Replay(archive, pmids, rules=rules, emulate=emulate).schedule(start, interval_nsec, count)

