"""libpcp's bound cache: the state a PM_MODE_INTERP context carries from fetch to fetch
(spec/interp.md INTERP-DEV-5, clauses INTERP-CACHE-*).

libpcp does not compute the rules of spec/interp.md from scratch at each fetch: per
(metric, instance) it keeps the bounds the fetches so far found (time, state and value of a
lower and an upper bound, with a "scanned" flag), the times before and after which it knows
there is nothing to find, and per context a read position in the archive. A fetch reads
records only where a bound is missing or out of date, so what it returns can depend on
what earlier fetches cached. ``Context`` holds that state and runs a fetch as libpcp's
``__pmLogFetchInterp`` does, record by record: positioning by the temporal index
(``__pmLogSetTime``), the fine positioning that skips marks, the roll towards the fetch time,
the backward and forward searches with their early ends (``t_first``, ``t_last``), the
instance lifetimes of large domains (``time_caliper``), the counter-across-a-mark rule and
the end-of-log test with the archive end read lazily. The result is what libpcp returns;
the oracle's rules give the same wherever the cache holds no surprise.

Facts from libpcp's ``interp.c``, ``logutil.c`` and ``fetch.c`` (6.0.3, 6.3.8, 7.2), each
measured against libpcp 6.0.3, 6.3.8 and 7.2.2 by the differential tests.
"""

from __future__ import annotations

import bisect
import heapq
from collections.abc import Iterable, Sequence
from typing import Any

from pcpconform.format.cnum import NUMERIC_TYPES
from pcpconform.format.pmtypes import PM_IN_NULL, PmSem, PmType, Timestamp
from pcpconform.io.archive import Archive
from pcpconform.oracles.interp.model import CALIPER, EDGE, NoValue, counter_value, timestamp_sub

__all__ = ["Archived", "Context", "Rec", "calipers", "index_positions"]

# the states of a bound (libpcp's S_* flags)
_UNDEFINED, _MARK, _VALUE, _SCANNED = 1, 2, 4, 16
_FORW, _BACK, _NONE = 1, 2, 0          # update_bounds' do_mark
_PM_ERR_TYPE = -12008                   # numval of a COUNTER metric of a non-numeric type

#: one record as the cache model reads it: start-relative time, mark, and per wanted
#: metric its (instances, values)
Rec = tuple[float, bool, tuple[tuple[int, tuple[int, ...], Sequence[Any]], ...]]
#: a value set as a context holds it: the cached bounds of its instances, and its values
_Set = tuple[tuple["_Inst", ...], Sequence[Any]]


class Archived:
    """The records of one archive in file order, as libpcp reads them, and its temporal
    index as record positions (position k: before record k), read when first needed."""

    def __init__(self, records: list[Rec], start: Timestamp, end: float,
                 archive: Archive | None = None,
                 index: list[tuple[Timestamp, int]] | None = None) -> None:
        self.records = records
        self.start = start
        self.end = end                   # the last record's time (__pmGetArchiveEnd)
        self._archive = archive
        self._index = index

    @property
    def index(self) -> list[tuple[Timestamp, int]]:
        """(entry time, position of the record it points at) per index entry (an entry in
        a missing volume is dropped, as libpcp's VolSkip passes over it)."""
        if self._index is None:
            self._index = index_positions(self._archive) if self._archive is not None else []
        return self._index

    def positioning_index(self, origin: Timestamp, direction: int) -> list[tuple[Timestamp, int]]:
        """The index entries pmSetMode positions a replay from ``origin`` by: all of them
        (an archive set's: those of the member it positions in, SET-REPLAY-6)."""
        return self.index


def index_positions(archive: Archive) -> list[tuple[Timestamp, int]]:
    """The archive's index entries as (time, record position)."""
    offsets: dict[int, list[int]] = {}
    first_of: dict[int, int] = {}
    for n, (vol, raw) in enumerate(archive.volume_records()):
        if vol not in offsets:
            offsets[vol], first_of[vol] = [], n
        offsets[vol].append(raw.offset)
    out = []
    for entry in archive.index_entries():
        if entry.vol in offsets:
            out.append((entry.timestamp, first_of[entry.vol] + bisect.bisect_left(offsets[entry.vol], entry.off_data)))
    return out


def calipers(history: Sequence[tuple[float, Iterable[int]]], instances: Iterable[int]
             ) -> dict[int, tuple[float, float]]:
    """libpcp's ``time_caliper`` for a domain whose records (time, instances), in time order,
    reach 16 instances in one record (INTERP-EXIST-2): per instance (birth, death), birth the
    first record listing it, death the record after the latest one listing it, -1 for none;
    an empty table for smaller domains."""
    records = [(t, frozenset(insts)) for t, insts in history]
    if not records or max(len(i) for _, i in records) < CALIPER:
        return {}
    table: dict[int, tuple[float, float]] = {}
    later = -1.0                         # the time of the record after this one (newest first)
    for t, insts in reversed(records):
        for inst in insts:
            _, death = table.get(inst, (t, later))
            table[inst] = (t, death)     # walking back: birth moves earlier, death stays
        later = t
    return {inst: table.get(inst, (-1.0, -1.0)) for inst in instances}


class _Inst:
    """One instcntl_t: the bounds cached for one (metric, instance)."""

    __slots__ = ("birth", "death", "first", "inst", "last", "metric", "next_s", "next_t", "next_v",
                 "prior_s", "prior_t", "prior_v", "search")

    def __init__(self, metric: _Metric, inst: int, birth: float, death: float) -> None:
        self.metric = metric
        self.inst = inst
        self.first = self.last = -1.0
        self.prior_t = self.next_t = -1.0
        self.prior_s = self.next_s = _UNDEFINED
        self.prior_v: Any = None
        self.next_v: Any = None
        self.birth, self.death = birth, death
        self.search = False

    def forget(self) -> None:
        self.prior_t = self.next_t = -1.0
        self.prior_s = self.next_s = _UNDEFINED
        self.prior_v = self.next_v = None


class _Metric:
    """One pmidcntl_t."""

    __slots__ = ("desc", "insitu", "insts", "last_numval", "numval", "order", "pmid")

    def __init__(self, pmid: int, desc: Any) -> None:
        self.pmid = pmid
        self.desc = desc
        # 32-bit values live in the bound itself (PM_VAL_INSITU): a mark leaves them there
        self.insitu = desc.type in (PmType.I32, PmType.U32)
        self.insts: dict[int, _Inst] = {}
        self.order: list[_Inst] = []
        self.last_numval = -1
        self.numval = 0


class Context:
    """One PM_MODE_INTERP archive context: ``set_mode`` then ``fetch``, as a client calls
    pmSetMode and pmFetch. ``reposition_on_set_mode``: libpcp 7's pmSetMode, which makes a
    context that has fetched position again at its next fetch (INTERP-VER-2)."""

    def __init__(self, archived: Archived, descs: dict[int, Any], instances: dict[int, list[int]],
                 lifetimes: dict[int, dict[int, tuple[float, float]]], rules: str,
                 reposition_on_set_mode: bool = False) -> None:
        self.arch = archived
        self.rules = rules
        self.reposition = reposition_on_set_mode
        self.metrics: dict[int, _Metric] = {}
        for pmid, desc in descs.items():
            m = self.metrics[pmid] = _Metric(pmid, desc)
            table = lifetimes.get(pmid, {})
            for inst in instances[pmid]:
                birth, death = table.get(inst, (-1.0, -1.0))
                icp = m.insts[inst] = _Inst(m, inst, birth, death)
                m.order.append(icp)
        self.want = [icp for m in self.metrics.values() for icp in m.order]
        # each record's value sets with their instances' bounds looked up once, as libpcp's
        # update_bounds finds them (an unknown instance of a singular metric is PM_IN_NULL's)
        shared: dict[tuple[int, tuple[int, ...]], tuple[_Inst, ...]] = {}
        self.records: list[tuple[float, bool, tuple[_Set, ...]]] = []
        for t, mark, vsets in archived.records:
            sets = []
            for pmid, insts, values in vsets:
                icps = shared.get((pmid, insts))
                if icps is None:
                    icps = shared[(pmid, insts)] = self._lookup(pmid, insts)
                sets.append((icps, values))
            self.records.append((t, mark, tuple(sets)))
        self.serial = False              # ac_serial: positioned for serial reading
        self.pos = 0                     # where the next forward read starts
        self.offset = 0                  # ac_offset: the remembered place
        self.ac_end = 0.0                # the archive end as last read (0 until needed)
        self.origin = archived.start.total_nsec()
        self.delta = 0
        self.direction = 0
        self.fetched = False             # a fetch got past end of log (libpcp's pmid hash exists)

    def _lookup(self, pmid: int, insts: tuple[int, ...]) -> tuple[_Inst, ...]:
        m = self.metrics.get(pmid)
        if m is None:
            return ()
        null = m.insts.get(PM_IN_NULL)
        found = [m.insts.get(inst, null) for inst in insts]
        if None in found:       # values of instances no instance-domain record lists
            return tuple(icp if icp is not None else _Inst(m, inst, -1.0, -1.0)
                         for icp, inst in zip(found, insts))
        return tuple(found)     # type: ignore[arg-type]

    # -- reading -----------------------------------------------------------------------
    def _read(self, forward: bool) -> tuple[float, bool, tuple[_Set, ...]] | None:
        recs = self.records
        if forward:
            if self.pos >= len(recs):
                return None
            self.pos += 1
            return recs[self.pos - 1]
        if self.pos <= 0:
            return None
        self.pos -= 1
        return recs[self.pos]

    def _set_time(self) -> None:
        """__pmLogSetTime: gross positioning by the temporal index (INTERP-CACHE-2)."""
        forward = self.direction > 0
        index = self.arch.positioning_index(Timestamp.from_nsec(self.origin), self.direction)
        if not index:
            self.pos = 0 if forward else len(self.arch.records)
        else:
            origin = Timestamp.from_nsec(self.origin)
            self.serial = True
            j, match = len(index), False
            for i, (stamp, _) in enumerate(index):
                t_hi = timestamp_sub(stamp, origin)
                if t_hi >= 0:
                    j, match = i, t_hi == 0
                    break
            if match:
                self.pos = index[j][1]
                self.serial = forward
            elif j < 1:
                self.pos = index[0][1]
            elif j == len(index):
                self.pos = index[-1][1]
                self.serial = forward
            else:
                t_hi = timestamp_sub(index[j][0], origin)
                t_lo = timestamp_sub(origin, index[j - 1][0])
                if t_hi <= t_lo:
                    self.pos = index[j][1]
                    self.serial = not forward
                else:
                    self.pos = index[j - 1][1]
                    self.serial = forward
                if self.serial and forward:
                    self._read(False)    # "index points to the END of the record"
        self.offset = self.pos

    def set_mode(self, origin: Timestamp, delta_nsec: int) -> None:
        """pmSetMode(PM_MODE_INTERP, origin, delta): position, and forget every cached bound
        that does not bracket the new time (INTERP-CACHE-2)."""
        self.origin = origin.total_nsec()
        self.delta = delta_nsec
        self.direction = (delta_nsec > 0) - (delta_nsec < 0)
        self._set_time()
        t_req = self._t_req()
        for m in self.metrics.values():
            for icp in m.order:
                if icp.prior_t > t_req or icp.next_t < t_req:
                    icp.forget()
        if self.reposition and self.fetched:   # INTERP-VER-2: libpcp 7's __pmLogResetInterp
            self.serial = False

    def _t_req(self) -> float:
        return timestamp_sub(Timestamp.from_nsec(self.origin), self.arch.start)

    # -- update_bounds -----------------------------------------------------------------
    def _update(self, rec: tuple[float, bool, tuple[_Set, ...]], t_req: float, do_mark: int,
                searching: list[int] | None) -> bool:
        """update_bounds for one record (INTERP-CACHE-3); returns whether a mark set a
        bound the way that counts as seen (the caller's seen_mark)."""
        t_this, mark, vsets = rec
        if mark:
            return self._mark(t_this, t_req, do_mark, searching)
        back = do_mark == _BACK and searching is not None
        forw = do_mark == _FORW and searching is not None
        for icps, values in vsets:
            if t_this < t_req:          # a lower bound only
                for icp, value in zip(icps, values):
                    pt = icp.prior_t
                    if pt > t_req or t_this >= pt:
                        if pt < icp.next_t and pt >= t_req:     # shuffle prior to next
                            icp.next_t, icp.next_s, icp.next_v = pt, icp.prior_s & ~_SCANNED, icp.prior_v
                        icp.prior_t, icp.prior_s, icp.prior_v = t_this, _VALUE, value
                        if back and icp.search:
                            icp.search = False
                            searching[0] += 1   # type: ignore[index]
                            icp.prior_s |= _SCANNED
            elif t_this > t_req:        # an upper bound only
                for icp, value in zip(icps, values):
                    nt = icp.next_t
                    if nt < t_req or t_this <= nt:
                        if icp.prior_t < nt and nt <= t_req:    # shuffle next to prior
                            icp.prior_t, icp.prior_s, icp.prior_v = nt, icp.next_s & ~_SCANNED, icp.next_v
                        icp.next_t, icp.next_s, icp.next_v = t_this, _VALUE, value
                        if forw and icp.search:
                            icp.search = False
                            searching[0] += 1   # type: ignore[index]
                            icp.next_s |= _SCANNED
            else:
                for icp, value in zip(icps, values):
                    self._at_t_req(icp, value, t_req, back, forw, searching)
        return False

    @staticmethod
    def _at_t_req(icp: _Inst, value: Any, t_this: float, back: bool, forw: bool,
                  searching: list[int] | None) -> None:
        """A value observed exactly at the fetch time: both bounds, in libpcp's order."""
        pt = icp.prior_t
        if pt > t_this or t_this >= pt:
            if pt < icp.next_t and pt >= t_this:
                icp.next_t, icp.next_s, icp.next_v = pt, icp.prior_s & ~_SCANNED, icp.prior_v
            icp.prior_t, icp.prior_s, icp.prior_v = t_this, _VALUE, value
            if back and icp.search:
                icp.search = False
                searching[0] += 1   # type: ignore[index]
                icp.prior_s |= _SCANNED
        nt = icp.next_t
        if nt < t_this or t_this <= nt:
            if icp.prior_t < nt and nt <= t_this:
                icp.prior_t, icp.prior_s, icp.prior_v = nt, icp.next_s & ~_SCANNED, icp.next_v
            icp.next_t, icp.next_s, icp.next_v = t_this, _VALUE, value
            if forw and icp.search:
                icp.search = False
                searching[0] += 1   # type: ignore[index]
                icp.next_s |= _SCANNED

    def _mark(self, t_this: float, t_req: float, do_mark: int, searching: list[int] | None) -> bool:
        """update_bounds for a mark: a bound for every requested instance it is closer
        than (INTERP-CACHE-3); fine positioning (do_mark NONE) passes over it."""
        if do_mark == _NONE:
            return False
        seen = False
        for icp in self.want:
            if t_this <= t_req and (t_this >= icp.prior_t or icp.prior_t > t_req):
                icp.prior_t, icp.prior_s = t_this, _MARK
                if not icp.metric.insitu:
                    icp.prior_v = None
                if do_mark == _BACK:
                    if icp.search and searching is not None:
                        icp.search = False
                        searching[0] += 1
                        icp.prior_s |= _SCANNED
                else:
                    seen = True
            if t_this >= t_req and (t_this <= icp.next_t or icp.next_t < 0 or icp.next_t < t_req):
                icp.next_t, icp.next_s = t_this, _MARK
                if not icp.metric.insitu:
                    icp.next_v = None
                if do_mark == _FORW:
                    if icp.search and searching is not None:
                        icp.search = False
                        searching[0] += 1
                        icp.next_s |= _SCANNED
                else:
                    seen = True
        return seen

    def _roll(self, t_req: float) -> bool:
        """do_roll: read towards t_req in the direction of travel (INTERP-CACHE-4)."""
        seen = False
        if self.direction > 0:
            while (rec := self._read(True)) is not None and rec[0] <= t_req:
                self.offset = self.pos
                seen |= self._update(rec, t_req, _FORW, None)
        else:
            while (rec := self._read(False)) is not None and rec[0] >= t_req:
                self.offset = self.pos
                seen |= self._update(rec, t_req, _BACK, None)
        return seen

    # -- the fetch ---------------------------------------------------------------------
    def fetch(self, pmids: Sequence[int], eol: bool | None = None) -> dict[int, dict[int, Any]] | None:
        """One pmFetch: per metric its values by instance (NoValue where libpcp returns
        none, with a reason), or None for end of log (PM_ERR_EOL). The context time then
        moves on by the interval, as libpcp's does even at end of log. ``eol``: whether the
        fetch is end of log, where the caller decides it (an archive set's rule, SET-EOL-1)."""
        try:
            return self._fetch(pmids, eol)
        finally:
            self.origin += self.delta

    def _fetch(self, pmids: Sequence[int], eol: bool | None) -> dict[int, dict[int, Any]] | None:
        t_req = self._t_req()
        if eol is not None:
            if eol:
                return None
        elif t_req < -EDGE:
            return None
        elif t_req > self.ac_end + EDGE:    # INTERP-CACHE-1: the end is read when needed
            self.ac_end = self.arch.end
            if t_req > self.ac_end:
                return None
        self.fetched = True
        metrics = [self.metrics[p] for p in pmids]
        want = [icp for m in metrics for icp in m.order]
        self.want = want
        for m in metrics:
            m.numval = len(m.order)
            for icp in m.order:
                icp.search = False
        if not self.serial:
            self._set_time()
            # fine positioning: back up (against the direction of travel) to t_req,
            # marks not seen (INTERP-CACHE-3)
            forward = self.direction > 0
            while (rec := self._read(not forward)) is not None and \
                    (rec[0] > t_req if forward else rec[0] <= t_req):
                self.offset = self.pos
                self._update(rec, t_req, _NONE, None)
            self.serial = True
            for m in metrics:
                m.last_numval = -1
        self.pos = self.offset
        seen_mark = False
        rolled = False
        # second pass: which instances have no lower bound (INTERP-CACHE-5)
        back: list[_Inst] = []
        for icp in want:
            if icp.first >= 0 and t_req < icp.first:
                continue
            if not self._alive_for_search(icp, t_req):
                continue
            if (icp.prior_t < 0 or icp.prior_t > t_req) and not back and not rolled:
                rolled = True           # forwards to t_req before scanning back
                if self.direction > 0:
                    seen_mark |= self._roll(t_req)
            if ((icp.prior_s & _UNDEFINED and not icp.prior_s & _SCANNED)
                    or (icp.prior_t > t_req and (self.direction < 0 or not icp.prior_s & _SCANNED))
                    or (icp.next_s & _MARK and icp.prior_t == t_req)):
                icp.search = True
                back.append(icp)
        if back:
            seen_mark |= self._search(back, t_req, False)
        # third pass: which have no upper bound (INTERP-CACHE-6)
        forw: list[_Inst] = []
        for icp in want:
            if icp.last >= 0 and t_req > icp.last:
                continue
            if not self._alive_for_search(icp, t_req):
                continue
            if (icp.next_t < 0 or icp.next_t < t_req) and not forw and not rolled:
                rolled = True           # backwards to t_req before scanning forwards
                if self.direction < 0:
                    seen_mark |= self._roll(t_req)
            if ((icp.next_s & _UNDEFINED and not icp.next_s & _SCANNED)
                    or (icp.next_t < t_req and (self.direction > 0 or not icp.next_s & _SCANNED))
                    or (icp.prior_s & _MARK and icp.next_t == t_req)):
                icp.search = True
                forw.append(icp)
        if forw:
            seen_mark |= self._search(forw, t_req, True)
        out = {m.pmid: self._values(m, t_req, seen_mark) for m in metrics}
        return out

    @staticmethod
    def _alive_for_search(icp: _Inst, t_req: float) -> bool:
        """time_caliper's lifetime, as the searches test it (INTERP-EXIST-2)."""
        if icp.birth >= 0 and t_req < icp.birth:
            return False
        return not (icp.death >= 0 and t_req > icp.death)

    def _search(self, unbound: list[_Inst], t_req: float, forward: bool) -> bool:
        """The backward search for lower bounds or the forward one for upper bounds, until
        each is found or known not to be there (INTERP-CACHE-5, -6).

        libpcp keeps the searching instances in a list sorted by ``t_first`` (descending)
        or ``t_last`` (ascending) and, after each record, gives up on those it can no
        longer find: going backwards, those whose ``t_first`` is at or after the record;
        going forwards, those whose ``t_last`` (when known) is at or before it. A heap on
        that time does the same."""
        self.pos = self.offset
        done = [0]
        seen = False
        wanted = len(unbound)
        if forward:
            heap = [(icp.last, k, icp) for k, icp in enumerate(unbound) if icp.last >= 0]
        else:
            heap = [(-icp.first, k, icp) for k, icp in enumerate(unbound)]
        heapq.heapify(heap)
        while done[0] < wanted:
            rec = self._read(forward)
            if rec is None:
                break
            t_this = rec[0]
            # the remembered place follows the search while it is short of t_req
            if (t_this <= t_req and self.direction > 0) if forward else (t_this >= t_req and self.direction < 0):
                self.offset = self.pos
            seen |= self._update(rec, t_req, _FORW if forward else _BACK, done)
            while heap and (heap[0][0] <= t_this if forward else -heap[0][0] >= t_this):
                icp = heapq.heappop(heap)[2]
                if icp.search:
                    icp.search = False
                    if forward:
                        icp.next_s |= _SCANNED
                    else:
                        icp.prior_s |= _SCANNED
                    done[0] += 1
        for icp in unbound:              # nothing before t_first / after t_last
            if not icp.search:
                continue                 # found, or given up on: libpcp's trim leaves it
            if forward:
                if icp.next_t < t_req and (icp.last < 0 or t_req < icp.last):
                    icp.last = t_req
                    icp.next_s |= _SCANNED
            elif (icp.prior_s & _UNDEFINED or icp.prior_t > t_req) and icp.first < t_req:
                icp.first = t_req
                icp.prior_s |= _SCANNED
            icp.search = False
        return seen

    # -- building the result -------------------------------------------------------------
    def _values(self, m: _Metric, t_req: float, seen_mark: bool) -> dict[int, Any]:
        desc = m.desc
        sem, ptype = desc.sem, desc.type
        numeric = ptype in NUMERIC_TYPES
        out: dict[int, Any] = {}
        numval = len(m.order)
        for icp in m.order:
            reason = self._missing(icp, t_req, sem)
            if reason is None and sem == PmSem.COUNTER:
                if not numeric:
                    numval = _PM_ERR_TYPE
                elif seen_mark and m.last_numval > 0:
                    reason = "counter across mark"
            if reason is not None:
                if numval >= 0:
                    numval -= 1
                out[icp.inst] = NoValue(reason)
                continue
            out[icp.inst] = self._value(icp, t_req, sem, ptype, numeric)
        if numval < 0:                   # PM_ERR_TYPE: no values at all
            out = {}
        m.last_numval = numval
        return out

    @staticmethod
    def _missing(icp: _Inst, t_req: float, sem: int) -> str | None:
        """Why libpcp leaves this instance out of the result, or None."""
        if sem == PmSem.DISCRETE:
            if icp.birth != -1 and icp.birth > t_req:
                return "not alive"
            if icp.prior_s & (_MARK | _UNDEFINED) or icp.prior_t > t_req:
                return "mark" if icp.prior_s & _MARK else "no prior"
            if icp.death != -1 and t_req > icp.death:
                return "not alive"
            return None
        if icp.prior_s & (_MARK | _UNDEFINED) or icp.prior_t > t_req:
            return "mark" if icp.prior_s & _MARK else "no prior"
        if icp.next_s & (_MARK | _UNDEFINED) or icp.next_t < t_req:
            return "mark" if icp.next_s & _MARK else "no next"
        return None

    def _value(self, icp: _Inst, t_req: float, sem: int, ptype: int, numeric: bool) -> Any:
        if not numeric:
            return icp.prior_v           # strings, aggregates, events: the lower bound's
        if icp.prior_t == t_req:
            return icp.prior_v
        if icp.next_t == t_req:
            if icp.next_s & _MARK:
                # a DISCRETE instance bounded above by a mark at the fetch time: libpcp
                # returns what the bound holds, a 32-bit word the mark left (0 at first)
                # (INTERP-CACHE-7)
                return (icp.next_v or 0) if icp.metric.insitu else NoValue("mark")
            return icp.next_v
        p, n = icp.prior_v, icp.next_v
        if sem == PmSem.COUNTER:
            return counter_value(ptype, p, n, t_req - icp.prior_t, icp.next_t - icp.prior_t)
        if self.rules == "pcp-6.0":
            return p
        if sem == PmSem.DISCRETE and not icp.next_s & _VALUE:
            return p
        return p if t_req <= (icp.prior_t + icp.next_t) / 2 else n
