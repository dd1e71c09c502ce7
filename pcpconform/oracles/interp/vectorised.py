"""A vectorised Replay.schedule: the same Samples as the per-fetch path, computed per series.

``Replay.fetch``/``value_at`` are the reference: one fetch, one metric-instance at a time.
For a whole schedule without emulated deviations every rule except INTERP-EXIST-3 (no
counter value across a mark) is a pure function of the fetch time, so this module computes
each (metric, instance) over all fetch times at once with numpy (``searchsorted`` for the
bounds, the counter formulas of ``counter_value`` as the same IEEE double operations in the
same order, C's conversions as in ``cnum.c_int``/``cnum.c_uint``), and then applies INTERP-EXIST-3
in a cheap pass over the fetches.

Only series numpy provably reproduces exactly take the vectorised path: integer counters
whose values stay within 2^52 (so every int -> double conversion and difference is exact),
FLOAT/DOUBLE counters with finite values and finite, non-NaN results (no NaN payloads, no
float32 overflow, which raises in the reference), times in order. Anything else (other
values, strings as counters, unsorted times, ...) is computed by ``value_at`` for that
series, and counted by reason (``Result.series_fallbacks``). Marks out of order decline the
whole schedule with ``VectorisedFallback``; nothing else is caught: any other exception is
a bug and propagates.

The module reads the replay only through ``ReplayView`` (public attributes and methods) and
takes and returns the ``FetchState`` explicitly; the Replay applies the returned state.
"""

from __future__ import annotations

import bisect
import itertools
from array import array
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pcpconform.format.cnum import NUMERIC_TYPES
from pcpconform.format.pmtypes import PM_IN_NULL, PmSem, PmType, Timestamp
from pcpconform.format.values import F32
from pcpconform.oracles.interp.builtin import BUILTIN_REASON
from pcpconform.oracles.interp.model import (
    F32Column,
    FetchState,
    NoValue,
    ReplayView,
    Sample,
    Samples,
    ScheduleReason,
    VectorisedFallback,
    gc_paused,
)

__all__ = ["Result", "schedule", "SERIES_REASONS"]

#: why one series is computed by ``value_at`` instead (counted per reason)
TIMES_OUT_OF_ORDER = "times out of order"
VALUES_INEXACT = "values not exact in double"
RESULT_INEXACT = "result not provably exact"
SERIES_REASONS = (TIMES_OUT_OF_ORDER, VALUES_INEXACT, RESULT_INEXACT)
MARKS_OUT_OF_ORDER = ScheduleReason.MARKS_OUT_OF_ORDER

_EXACT_INT = 1 << 52            # integer counter values within this stay exact in doubles
_INT64_MAX = (1 << 63) - 1
_NOT_ALIVE, _NO_PRIOR, _MARK, _NO_NEXT = 1, 2, 3, 4
_F64 = np.float64


def _no_values() -> list[Any]:
    return [None, NoValue("not alive"), NoValue("no prior"), NoValue("mark"), NoValue("no next")]


def _c_int(x: np.ndarray, bits: int) -> np.ndarray:
    """cnum.c_int over an array: truncation, the most negative value when out of range."""
    low = -(1 << (bits - 1))
    t = np.trunc(x)
    ok = (t >= float(low)) & (t < float(-low))           # False for NaN
    return np.where(ok, t, float(low)).astype(np.int64)


_EXACT_RANGE: dict[int, tuple[int, int]] = {PmType.I32: (-(1 << 31), (1 << 31) - 1), PmType.U32: (0, (1 << 32) - 1),
              PmType.I64: (-_EXACT_INT, _EXACT_INT), PmType.U64: (0, _EXACT_INT)}


def _numbers(values: list[Any], ptype: int) -> np.ndarray | None:
    """The values as a numpy array when counter arithmetic on them is provably exact."""
    kinds = set(map(type, values))
    if ptype in _EXACT_RANGE:
        if not kinds <= {int}:
            return None
        try:
            arr = np.array(values, dtype=np.int64)
        except OverflowError:
            return None
        lo, hi = _EXACT_RANGE[ptype]
        return arr if arr.size == 0 or (int(arr.min()) >= lo and int(arr.max()) <= hi) else None
    if ptype in (PmType.FLOAT, PmType.DOUBLE):
        if not kinds <= {float, F32}:
            return None
        arr = np.array(values, dtype=_F64)
        return arr if bool(np.all(np.isfinite(arr))) else None
    return None


#: an observation column's array typecode -> the numpy dtype reading its buffer
_DTYPE_OF_CODE = {"i": np.int32, "I": np.uint32, "q": np.int64, "Q": np.uint64, "d": np.float64}


def _packed(values: Any) -> np.ndarray | None:
    """An observation column as a numpy view of its buffer (F32Column: its bits as
    float32), or None for a list."""
    if not len(values):
        return None
    if values.__class__ is array and values.typecode in _DTYPE_OF_CODE:
        return np.frombuffer(values, dtype=_DTYPE_OF_CODE[values.typecode])
    if values.__class__ is F32Column:
        return np.frombuffer(values.bits, dtype=np.uint32).view(np.float32)
    return None


def _numbers_at(values: Any, packed: np.ndarray | None, at: np.ndarray, ptype: int) -> np.ndarray | None:
    """``_numbers`` of the observations at indices ``at``, gathered from the column's
    buffer where it has one (the same values, so the same checks)."""
    if packed is None:
        return _numbers(list(map(values.__getitem__, at.tolist())), ptype)
    got = packed[at]
    if ptype in _EXACT_RANGE:
        if got.dtype.kind not in "iu" or (got.dtype == np.uint64 and got.size and int(got.max()) > _INT64_MAX):
            return None             # not all ints, or past int64 (_numbers' OverflowError)
        arr = got.astype(np.int64)
        lo, hi = _EXACT_RANGE[ptype]
        return arr if arr.size == 0 or (int(arr.min()) >= lo and int(arr.max()) <= hi) else None
    if ptype in (PmType.FLOAT, PmType.DOUBLE):
        if got.dtype.kind != "f":
            return None
        arr = got.astype(_F64)
        return arr if bool(np.all(np.isfinite(arr))) else None
    return None


def _listed(a: np.ndarray) -> list[Any]:
    """The array as Python numbers (int64/uint64 -> int, float64 -> float)."""
    out: list[Any] = a.tolist()
    return out


def _counter(ptype: int, P: np.ndarray, N: np.ndarray, f: np.ndarray, d: np.ndarray) -> list[Any] | None:
    """counter_value over arrays (same operations, same order), or None if not provably equal."""
    if P.size == 0:
        return []
    if not bool(np.all(d != 0)):
        return None
    if ptype == PmType.I32:
        delta = ((N - P + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)
        x = (0.5 + P.astype(_F64)) + (f * delta.astype(_F64)) / d
        return _listed(_c_int(x, 32))
    if ptype in (PmType.U32, PmType.U64):
        # (U64 values are within 2^52 here: their signed view is themselves)
        ge = N >= P
        q = (f * np.where(ge, N - P, P - N).astype(_F64)) / d
        base = 0.5 + P.astype(_F64)
        x = np.where(ge, base + q, base - q)
        if ptype == PmType.U32:
            return _listed(_c_int(x, 64) & 0xFFFFFFFF)
        if not bool(np.all(x < 2.0 ** 63)):
            return None
        return _listed(_c_int(x, 64).view(np.uint64))
    if ptype == PmType.I64:
        x = (0.5 + P.astype(_F64)) + (f * (N - P).astype(_F64)) / d
        return _listed(_c_int(x, 64))
    if ptype == PmType.FLOAT:
        a = (N - P).astype(np.float32)
        if not bool(np.all(np.isfinite(a))):
            return None                   # the reference's float32 rounding overflows (raises)
        y = P + (f * a.astype(_F64)) / d
        r = y.astype(np.float32)
        if not bool(np.all(np.isfinite(r))):
            return None
        return [F32(v, b) for v, b in zip(r.astype(_F64).tolist(), r.view(np.uint32).tolist())]
    if ptype == PmType.DOUBLE:
        x = P + (f * (N - P)) / d
        if bool(np.any(np.isnan(x))):
            return None
        return _listed(x)
    return None


class _Fetches:
    """The non-end-of-log fetch times of a schedule and their mark bounds."""

    def __init__(self, times: list[float], marks: list[float]) -> None:
        self.times = times
        self.t = np.asarray(times, dtype=_F64)
        m = np.asarray(marks, dtype=_F64)
        right = np.searchsorted(m, self.t, "right")
        left = np.searchsorted(m, self.t, "left")
        self.has_mp = right > 0
        self.has_mn = left < len(m)
        if len(m):
            self.mp = np.where(self.has_mp, m[np.maximum(right - 1, 0)], 0.0)
            self.mn = np.where(self.has_mn, m[np.minimum(left, len(m) - 1)], 0.0)
        else:
            self.mp = self.mn = np.zeros(len(times))
        self._bounds: list[tuple[float | None, float | None]] | None = None

    def mark_bounds(self) -> list[tuple[float | None, float | None]]:
        if self._bounds is None:
            mp = [x if h else None for x, h in zip(self.mp.tolist(), self.has_mp.tolist())]
            mn = [x if h else None for x, h in zip(self.mn.tolist(), self.has_mn.tolist())]
            self._bounds = list(zip(mp, mn))
        return self._bounds


class _Bounds:
    """prior/next per fetch for one list of observation times (shared by every instance
    of a metric observed in the same records), and the mark-derived reasons."""

    def __init__(self, times: list[float] | None, fx: _Fetches, sem: int) -> None:
        v = fx.t
        K = len(v)
        self.ok = True
        if times:
            T = np.asarray(times, dtype=_F64)
            self.ok = bool(np.all(T[1:] >= T[:-1]))
            n = len(T)
            i = np.searchsorted(T, v, "right")
            has_po = i > 0
            pi = np.maximum(i - 1, 0)
            tpo = T[pi]
            exact = has_po & (tpo == v)
            j = np.where(exact, i - 1, i)
            has_no = j < n
            nj = np.minimum(j, n - 1)
            tno = T[nj]
        else:
            has_po = has_no = exact = np.zeros(K, dtype=bool)
            tpo = tno = np.zeros(K)
            pi = nj = np.zeros(K, dtype=np.intp)
        prior_mark = fx.has_mp & (~has_po | (fx.mp > tpo))
        next_mark = fx.has_mn & (~has_no | (fx.mn < tno))
        conds = [~has_po & ~fx.has_mp, prior_mark]
        choices = [_NO_PRIOR, _MARK]
        if sem != PmSem.DISCRETE:
            conds += [~has_no & ~fx.has_mn, next_mark]
            choices += [_NO_NEXT, _MARK]
        self.codes = np.select(conds, choices, 0)
        self.pi, self.nj, self.tpo, self.tno, self.exact = pi, nj, tpo, tno, exact
        self.next_obs = has_no & ~next_mark


@dataclass
class Result:
    """A schedule's samples, the fetch state it leaves, and the series it handed to
    ``value_at`` (by reason)."""

    samples: list[Sample]
    state: FetchState
    series_fallbacks: Counter[str] = field(default_factory=Counter)


def _series_values(replay: ReplayView, pmid: int, desc: Any, inst: int, fx: _Fetches,
                   bounds: _Bounds, novalue: list[Any],
                   fallbacks: Counter[str]) -> tuple[list[Any], np.ndarray]:
    """(values per fetch, has-a-value mask) for one metric-instance over the fetches."""
    if not bounds.ok:
        return _scalar(replay, pmid, inst, fx, TIMES_OUT_OF_ORDER, fallbacks)
    v = fx.t
    sem, ptype = desc.sem, desc.type
    codes = bounds.codes
    table = replay.lifetimes(pmid)
    if table is not None:
        birth, death = table.get(inst, (None, None))
        dead = np.zeros(len(v), dtype=bool) if birth is None else v < birth
        if death is not None:
            dead |= v > death
        codes = np.where(dead, _NOT_ALIVE, codes)
    valid = codes == 0
    series = replay.series.get((pmid, inst))
    if series is None:
        return [novalue[c] for c in codes.tolist()], valid
    values = series.values
    packed = _packed(values)            # one numpy view of the column's buffer, if it has one
    pi, nj, exact = bounds.pi, bounds.nj, bounds.exact
    computed = None
    if ptype not in NUMERIC_TYPES:
        sel = pi
    else:
        tpo, tno, next_obs = bounds.tpo, bounds.tno, bounds.next_obs
        hit_n = next_obs & (tno == v) & ~exact
        rest = ~exact & ~hit_n
        if sem == PmSem.COUNTER:
            sel = np.where(hit_n, nj, pi)
            cm = valid & rest
            if cm.any():
                P = _numbers_at(values, packed, pi[cm], ptype)
                N = _numbers_at(values, packed, nj[cm], ptype)
                if P is None or N is None:
                    return _scalar(replay, pmid, inst, fx, VALUES_INEXACT, fallbacks)
                tp = tpo[cm]
                computed = _counter(ptype, P, N, v[cm] - tp, tno[cm] - tp)
                if computed is None:
                    return _scalar(replay, pmid, inst, fx, RESULT_INEXACT, fallbacks)
        elif replay.rules == "pcp-6.0":
            sel = np.where(hit_n, nj, pi)
        else:
            take = rest & next_obs & (v > (tpo + tno) / 2)
            sel = np.where(hit_n | take, nj, pi)
    # one gather over [computed counters] + [observations used as they are] + [reasons]
    bad = ~valid
    used = valid if computed is None else valid & ~cm
    source = computed if computed is not None else []
    nc = len(source)
    if values.__class__ is array and packed is not None:     # Python numbers, as the array gives them
        source = source + packed[sel[used]].tolist()
    else:
        source = source + list(map(values.__getitem__, sel[used].tolist()))
    nu = len(source) - nc
    source += novalue
    idx = np.empty(len(v), dtype=np.intp)
    if computed is not None:
        idx[cm] = np.arange(nc)
    idx[used] = np.arange(nc, nc + nu)
    idx[bad] = nc + nu + codes[bad]
    return list(map(source.__getitem__, idx.tolist())), valid


def _scalar(replay: ReplayView, pmid: int, inst: int, fx: _Fetches, reason: str,
            fallbacks: Counter[str]) -> tuple[list[Any], np.ndarray]:
    """One series by the reference ``value_at`` (pure without emulated deviations)."""
    fallbacks[reason] += 1
    value_at = replay.value_at
    vals = [value_at(pmid, inst, t, mb) for t, mb in zip(fx.times, fx.mark_bounds())]
    return vals, np.array([not isinstance(x, NoValue) for x in vals], dtype=bool)


def schedule(replay: ReplayView, state: FetchState, start: Timestamp, interval_nsec: int,
             count: int) -> Result:
    """What ``count`` successive fetches from ``state`` return, for a replay without emulated
    deviations (the caller checks), and the state they leave. Raises ``VectorisedFallback``
    for a schedule it does not compute."""
    # overflow and NaN are checked where they matter; the samples are ~10^5 acyclic
    # containers, which a cyclic collection would scan to free nothing
    with np.errstate(all="ignore"), gc_paused():
        return _schedule(replay, state, start, interval_nsec, count)


def _crossings(times: list[float], eol: list[bool], marks: list[float],
               prev: float | None) -> tuple[list[float], list[bool]]:
    """The fetches that are not end-of-log, and for each whether a mark lies between the
    previous fetch (end of log or not) and it, in the direction of travel (INTERP-EXIST-3)."""
    live: list[float] = []
    crossed: list[bool] = []
    for t, gone in zip(times, eol):
        if not gone:
            live.append(t)
            if prev is None:
                crossed.append(False)
            elif t >= prev:
                crossed.append(bisect.bisect_right(marks, t) > bisect.bisect_right(marks, prev))
            else:
                crossed.append(bisect.bisect_left(marks, prev) > bisect.bisect_left(marks, t))
        prev = t
    return live, crossed


def _schedule(replay: ReplayView, state: FetchState, start: Timestamp, interval_nsec: int,
              count: int) -> Result:
    at = start.total_nsec()
    whens = [Timestamp.from_nsec(at + k * interval_nsec) for k in range(count)]
    times = replay.rel_many(whens)
    eol = replay.end_of_log(times, state.prev_time)
    marks = replay.marks
    if any(b < a for a, b in itertools.pairwise(marks)):
        raise VectorisedFallback(MARKS_OUT_OF_ORDER)     # bisect needs them sorted

    live, crossed = _crossings(times, eol, marks, state.prev_time)
    K = len(live)
    fx = _Fetches(live, marks)
    novalue = _no_values()
    fallbacks: Counter[str] = Counter()
    across = NoValue("counter across mark")
    pmids = list(replay.descs)
    per_pmid: list[list[dict[int, Any]]] = []
    prev_had: dict[int, bool] = {}
    whole: dict[int, tuple[list[int], list[list[Any]], list[bool]]] = {}
    for pmid, desc in replay.descs.items():
        insts = list(replay.instances[pmid])
        if pmid in replay.builtin:               # INTERP-BUILTIN-1
            per_pmid.append([{PM_IN_NULL: NoValue(BUILTIN_REASON)} for _ in range(K)])
            prev_had[pmid] = False
            continue
        if desc.sem == PmSem.COUNTER and desc.type not in NUMERIC_TYPES:
            per_pmid.append([{} for _ in range(K)])
            prev_had[pmid] = False
            continue
        if insts:
            cols, masks = [], []
            shared: dict[int, tuple[list[float], _Bounds]] = {}
            for inst in insts:
                series = replay.series.get((pmid, inst))
                observed = series.times if series is not None else []
                bounds = None
                for other, b in shared.values():   # the same records: the same bounds
                    if other is observed or other == observed:
                        bounds = b
                        break
                if bounds is None:
                    bounds = _Bounds(observed, fx, desc.sem)
                    shared[len(shared)] = (observed, bounds)
                vals, valid = _series_values(replay, pmid, desc, inst, fx, bounds, novalue,
                                             fallbacks)
                cols.append(vals)
                masks.append(valid)
            dicts = list(map(dict, map(zip, itertools.repeat(insts, K), zip(*cols))))
            has_any = np.logical_or.reduce(masks).tolist()
            whole[pmid] = (insts, cols, np.logical_and.reduce(masks).tolist())
        else:
            dicts = [{} for _ in range(K)]
            has_any = [False] * K
        if desc.sem == PmSem.COUNTER:
            had = state.prev_had.get(pmid)
            for q in range(K):
                if crossed[q] and had:
                    dicts[q] = {inst: across for inst in insts}
                    if pmid in whole:
                        whole[pmid][2][q] = False
                    had = False
                else:
                    had = has_any[q]
            prev_had[pmid] = bool(had)
        elif K:
            prev_had[pmid] = bool(has_any[-1])
        per_pmid.append(dicts)

    rows = iter(zip(*per_pmid)) if pmids else iter([()] * K)
    samples = Samples(whole=whole)
    for when, gone in zip(whens, eol):
        if gone:
            samples.append(Sample(when, eol=True))
        else:
            samples.append(Sample(when, values=dict(zip(pmids, next(rows)))))
    # the state the per-fetch path leaves behind
    after = state.copy()
    if count:
        after.before = times[-2] if count > 1 else state.prev_time
        after.prev_time = times[-1]
        after.positioned = None
    if K:
        after.prev_had.update(prev_had)
    return Result(samples, after, fallbacks)
