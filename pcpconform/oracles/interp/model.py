"""What both interpolation paths share: the result types, the rule sets, libpcp's time and
counter arithmetic, the fetch state a schedule carries, and the typed fallback signal.

``replay`` (the per-fetch reference) and ``vectorised`` (numpy over a whole schedule) import
this module; neither imports the other at module level, and ``vectorised`` never imports
``replay``.
"""

from __future__ import annotations

import contextlib
import enum
import functools
import gc
from array import array
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Protocol

from pcpconform.fastpath import Declined
from pcpconform.format.cnum import c_int, c_uint, f32, long_double_seconds, round_bits, wrap
from pcpconform.format.pmtypes import PmType, Timestamp
from pcpconform.format.values import F32

__all__ = ["RULE_SETS", "DEVIATIONS", "EDGE", "CALIPER", "NoValue", "Sample", "Samples", "Series",
           "F32Column", "FetchState", "ScheduleStats", "VectorisedFallback", "ScheduleReason", "ReplayView",
           "Lifetimes",
           "counter_value", "sub_parts", "sub_parts_exact", "timestamp_sub", "gc_paused"]

RULE_SETS = ("pcp-6.0", "pcp-6.3")
#: libpcp's known departures from the rules, by name -> the spec clause that describes them.
#: The oracle computes the rules; ``emulate`` asks it to reproduce a deviation instead.
DEVIATIONS = {
    "nonnumeric-exact-hit": "INTERP-DEV-1",
    "mark-first-fetch": "INTERP-DEV-2",
    "discrete-stale-next": "INTERP-DEV-3",
    "cached-bounds": "INTERP-DEV-5",
}
CALIPER = 16          # libpcp's HASH_THRESHOLD: lifetime checks for indoms this large
EDGE = 0.001          # fetches within 1 ms outside the archive still interpolate

#: per instance (birth, death): the first instance-domain record listing it, the first record
#: after the latest one listing it; None where libpcp has none (INTERP-EXIST-2)
Lifetimes = dict[int, tuple[float | None, float | None]]


@dataclass(frozen=True)
class NoValue:
    """Why an instance has no value at a time."""

    reason: str        # "no prior", "no next", "mark", "counter across mark", "not alive"


@dataclass
class Sample:
    """One fetch: its time, or end-of-log, and per metric the values by instance."""

    time: Timestamp
    eol: bool = False
    values: dict[int, dict[int, Any]] = field(default_factory=dict)   # pmid -> inst -> value|NoValue


class Samples(list):  # type: ignore[type-arg]   # list[Sample]
    """A schedule's samples, and, from the vectorised path, per metric what they hold as
    columns (``whole``): its instances, each one's value at every fetch that is not end of
    log (a ``NoValue`` too), and at each such fetch whether every instance has a value."""

    def __init__(self, samples: Iterable[Sample] = (),
                 whole: dict[int, tuple[list[int], list[list[Any]], list[bool]]] | None = None) -> None:
        super().__init__(samples)
        self.whole = whole if whole is not None else {}


#: array typecodes holding a numeric type's values exactly (8 bytes or fewer each)
_ARRAY_CODES: dict[int, str] = {PmType.I32: "i", PmType.U32: "I", PmType.I64: "q", PmType.U64: "Q",
                PmType.DOUBLE: "d"}


class F32Column:
    """PM_TYPE_FLOAT observations kept as their 32 bits, read back as F32 values."""

    __slots__ = ("bits",)

    def __init__(self) -> None:
        self.bits = array("I")

    def __len__(self) -> int:
        return len(self.bits)

    def __getitem__(self, i: int) -> F32:
        return F32.from_bits(self.bits[i])

    def __iter__(self) -> Iterator[F32]:
        return map(F32.from_bits, self.bits)

    def extend(self, values: Iterable[Any]) -> None:
        self.bits.extend([v.bits for v in values])   # AttributeError for a non-F32


def _column(ptype: int) -> Any:
    code = _ARRAY_CODES.get(ptype)
    if code is not None:
        return array(code)
    return F32Column() if ptype == PmType.FLOAT else []


@dataclass
class Series:
    """One (metric, instance)'s observations in record order: times in an array of doubles,
    values in an array of the metric's type (8 bytes an observation, not a Python object),
    or a list once a value does not fit it (another type's block, strings, events)."""

    times: Any = field(default_factory=lambda: array("d"))    # start-relative (INTERP-TIME-1)
    values: Any = field(default_factory=list)

    @classmethod
    def of_type(cls, ptype: int) -> Series:
        return cls(array("d"), _column(ptype))

    def extend(self, times: Iterable[float], values: Sequence[Any]) -> None:
        self.times.extend(times)
        self.extend_values(values)

    def extend_values(self, values: Sequence[Any]) -> None:
        """Append values only (their times are in a times array shared with other series)."""
        column = self.values
        if column.__class__ is list:
            column.extend(values)
            return
        kept = len(column)
        try:
            if column.__class__ is array and column.typecode == "d" and \
                    set(map(type, values)) != {float}:
                raise TypeError("not all doubles")      # array("d") would convert ints
            column.extend(values)
        except (TypeError, OverflowError, AttributeError):
            if column.__class__ is array:
                del column[kept:]       # an array keeps what extend appended before failing
            self.values = [*column, *values]


    def extend_packed(self, values: Any, floats: bool = False) -> None:
        """Append values from a native numpy array of the type's array code (``floats``:
        PM_TYPE_FLOAT's 32 bits), as ``extend_values`` appends the same Python values."""
        column = self.values
        if floats:
            if column.__class__ is F32Column:
                column.bits.frombytes(values.tobytes())
            else:
                self.extend_values(list(map(F32.from_bits, values.tolist())))
        elif column.__class__ is array and column.itemsize == values.itemsize and \
                column.typecode == _ARRAY_CODES_BY_KIND.get(values.dtype.char):
            column.frombytes(values.tobytes())
        else:
            self.extend_values(values.tolist())


#: numpy's type character -> the array code holding the same values
_ARRAY_CODES_BY_KIND = {"i": "i", "I": "I", "q": "q", "Q": "Q", "d": "d", "l": "q", "L": "Q"}


@dataclass
class FetchState:
    """What one fetch leaves for the next (the part a whole schedule reads and writes):
    the previous fetch time, the one before it, INTERP-DEV-2's index point, and per metric
    whether the previous fetch gave it a value (INTERP-EXIST-3)."""

    prev_time: float | None = None
    before: float | None = None
    positioned: float | None = None
    prev_had: dict[int, bool] = field(default_factory=dict)

    def copy(self) -> FetchState:
        return FetchState(self.prev_time, self.before, self.positioned, dict(self.prev_had))


#: the vectorised path declines a whole schedule it cannot compute exactly (fastpath's one
#: ``Declined``, with a ``ScheduleReason``); the reference path computes it instead. Any
#: other exception is a bug and propagates.
VectorisedFallback = Declined


class ScheduleReason(enum.StrEnum):
    """Why a whole schedule is computed by the reference path (``interp.schedule``)."""

    MARKS_OUT_OF_ORDER = "marks out of order"


@dataclass
class ScheduleStats:
    """Which path computed what, per Replay: schedules by path, whole-schedule fallbacks
    by reason, and series the vectorised path handed to ``value_at``, by reason."""

    vectorised: int = 0                   # schedules the vectorised path computed
    reference: int = 0                    # schedules the per-fetch path computed
    fallbacks: Counter[str | enum.Enum] = field(default_factory=Counter)
    series_fallbacks: Counter[str] = field(default_factory=Counter)
    windowed: int = 0                     # schedule pieces computed over a window of records
    window_fallbacks: Counter[str | enum.Enum] = field(default_factory=Counter)   # window -> full replay
    bulk_records: int = 0                 # records the pass decoded a run at a time (numpy)
    record_fallbacks: Counter[str] = field(default_factory=Counter)   # records one at a time


class ReplayView(Protocol):
    """What the vectorised path reads of a Replay (all of it public)."""

    rules: str
    end: float
    marks: list[float]
    descs: dict[int, Any]
    instances: dict[int, list[int]]
    series: dict[tuple[int, int], Series]
    builtin: frozenset[int]

    def rel(self, ts: Timestamp) -> float: ...

    def rel_many(self, stamps: Sequence[Timestamp]) -> list[float]: ...

    def end_of_log(self, times: list[float], prev: float | None) -> list[bool]: ...

    def lifetimes(self, pmid: int) -> Lifetimes | None: ...

    def value_at(self, pmid: int, inst: int, t: float,
                 marks: tuple[float | None, float | None] | None = None) -> Any: ...


def counter_value(ptype: int, p: Any, n: Any, f: float, d: float) -> Any:
    """libpcp's counter interpolation of prior p and next n, f seconds after the prior,
    d seconds between them (INTERP-VAL-2; no $PCP_COUNTER_WRAP). Results out of the
    type's range convert as C does on x86-64 (INTERP-VAL-7)."""
    if ptype == PmType.I32:
        delta = wrap(n - p, 32, True)
        return c_int(0.5 + p + (f * delta) / d, 32)
    if ptype == PmType.U32:
        if n >= p:
            return c_uint(0.5 + p + f * (n - p) / d, 32)
        return c_uint(0.5 + p - f * (p - n) / d, 32)
    if ptype == PmType.I64:
        delta = wrap(n - p, 64, True)
        return c_int(0.5 + float(p) + f * float(delta) / d, 64)
    if ptype == PmType.U64:
        # libpcp holds U64 bounds in signed 64-bit variables: compare and subtract signed
        ps, ns = wrap(p, 64, True), wrap(n, 64, True)
        if ns >= ps:
            return c_uint(0.5 + float(ps) + f * float(wrap(ns - ps, 64, True)) / d, 64)
        return c_uint(0.5 + float(ps) - f * float(wrap(ps - ns, 64, True)) / d, 64)
    if ptype == PmType.FLOAT:
        return F32(f32(float(p) + f * f32(float(n) - float(p)) / d))
    return float(p) + f * (float(n) - float(p)) / d


def sub_parts_exact(dsec: int, dnsec: int) -> float:
    """sub_parts with Fractions: the definition (tests check sub_parts against it)."""
    whole = round_bits(dsec + round_bits(Fraction(dnsec, 1_000_000_000), 64), 64)
    return float(whole)                      # float(Fraction) rounds to nearest, as (double)


#: a small cache: record times repeat only across nearby calls, and each entry costs ~170 bytes
sub_parts = functools.lru_cache(maxsize=1 << 12)(long_double_seconds)


def timestamp_sub(a: Timestamp, b: Timestamp) -> float:
    """a - b in seconds exactly as libpcp's __pmTimestampSub computes it on x86-64:
    ``(double)(dsec + (long double)dnsec / 1e9L)``, i.e. the nanosecond quotient and the sum
    in 80-bit extended precision (64-bit mantissa), then rounded to double (INTERP-TIME-1)."""
    return sub_parts(a.sec - b.sec, a.nsec - b.nsec)


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """No cyclic garbage collection while bulk-building acyclic containers (the pass and
    the fast schedule make ~10^6 of them; a collection scans them all to free nothing)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()

