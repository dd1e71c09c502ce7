"""C arithmetic of libpcp's derived-metric evaluation (spec/derive.md DERIVE-EVAL-5..-7,
DERIVE-EVAL-9, DERIVE-EVAL-16): bin_op's promotion and operators, IEEE division as x86-64
gives it, the value types of the interp oracle, and libpcp's timespec arithmetic.
"""

from __future__ import annotations

import math
import struct
from typing import Any

from pcpconform.format.cnum import INTEGER_TYPES, f32, int_to_f32, long_double_seconds, wrap_type
from pcpconform.format.pmtypes import PmType
from pcpconform.format.values import F32

__all__ = ["Unpredictable", "UNPREDICTABLE", "REL", "BOOL", "bin_op", "as_double", "as_float",
           "ieee_div", "typed", "timespec_seconds", "timespec_sub", "origin_add", "pairs_key",
           "time_scale"]

REL = frozenset({"LT", "LEQ", "EQ", "GEQ", "GT", "NEQ"})
BOOL = frozenset({"AND", "OR"})


class Unpredictable:
    """A value (or instance) libpcp takes from uninitialised memory."""

    _instance: Unpredictable | None = None

    def __new__(cls) -> Unpredictable:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "UNPREDICTABLE"


UNPREDICTABLE = Unpredictable()

# -- C arithmetic ----------------------------------------------------------------------

def as_double(value: Any, ptype: int) -> float:
    return float(value)


def as_float(value: Any, ptype: int) -> float:
    if ptype in INTEGER_TYPES:
        return int_to_f32(int(value))
    return f32(float(value))


def ieee_div(x: float, y: float) -> float:
    """x / y as IEEE arithmetic gives it (Python raises for a zero divisor)."""
    if y != 0 or math.isnan(y):
        try:
            return x / y
        except OverflowError:
            return math.copysign(math.inf, x) * math.copysign(1.0, y)
    if math.isnan(x):
        return x                    # a NaN operand propagates as it is
    if x == 0:
        return float(DEFAULT_NAN)  # 0/0: x86's default NaN has the sign bit set
    return math.copysign(math.inf, x) * math.copysign(1.0, y)


#: the NaN an x86-64 invalid operation produces (bits fff8000000000000), as libpcp gets it
DEFAULT_NAN = struct.unpack(">d", bytes.fromhex("fff8000000000000"))[0]


def c_compare(op: str, a: Any, b: Any) -> int:
    return int({"LT": a < b, "LEQ": a <= b, "EQ": a == b, "GEQ": a >= b, "GT": a > b,
                "NEQ": a != b, "AND": a != 0 and b != 0, "OR": a != 0 or b != 0}[op])


def bin_op(rtype: int, op: str, a: Any, ltype: int, lmul: int, ldiv: int, b: Any,
           btype: int, rmul: int, rdiv: int) -> Any:
    """libpcp's bin_op: promote both operands to ``rtype`` and apply ``op`` there."""
    if a is UNPREDICTABLE or b is UNPREDICTABLE:
        return UNPREDICTABLE
    if rtype in INTEGER_TYPES:
        # 32-bit results read the operands' union as is; wider ones convert
        left, right = wrap_type(int(a), rtype), wrap_type(int(b), rtype)
        if op in REL or op in BOOL:
            return c_compare(op, left, right)
        value = {"PLUS": left + right, "MINUS": left - right, "STAR": left * right}[op]
        return wrap_type(value, rtype)
    if rtype == PmType.FLOAT:
        fl, fr = as_float(a, ltype), as_float(b, btype)
        if op in REL or op in BOOL:
            return c_compare(op, fl, fr)
        return f32({"PLUS": fl + fr, "MINUS": fl - fr, "STAR": fl * fr}[op])
    dl = (as_double(a, ltype) / float(ldiv) if ldiv else ieee_div(as_double(a, ltype), 0.0)) \
        * float(lmul)
    dr = (as_double(b, btype) / float(rdiv) if rdiv else ieee_div(as_double(b, btype), 0.0)) \
        * float(rmul)
    if op in REL or op in BOOL:
        return c_compare(op, dl, dr)
    if op == "SLASH":
        return 0.0 if dl == 0 else ieee_div(dl, dr)
    return {"PLUS": dl + dr, "MINUS": dl - dr, "STAR": dl * dr}[op]


def typed(value: Any, ptype: int) -> Any:
    """The Python value the interp oracle uses for a value of ``ptype``."""
    if value is UNPREDICTABLE:
        return value
    if ptype == PmType.FLOAT:
        return value if isinstance(value, F32) else F32(float(value))
    if ptype == PmType.DOUBLE:
        return float(value)
    if ptype in INTEGER_TYPES:
        return int(value)
    return value


def timespec_seconds(sec: int, nsec: int) -> float:
    """libpcp's pmtimespecToReal: sec + (long double) nsec / 1e9, returned as double."""
    return long_double_seconds(sec, nsec)


def timespec_sub(a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int]:
    """pmtimespecDec: one borrow, so a result may keep nsec == 1e9."""
    sec, nsec = a[0] - b[0], a[1] - b[1]
    if nsec < 0:
        nsec += 1_000_000_000
        sec -= 1
    return sec, nsec


def origin_add(origin: tuple[int, int], delta: tuple[int, int]) -> tuple[int, int]:
    """__pmLogFetchInterp's origin update: it normalises only nsec > 1e9 (not == 1e9)."""
    sec, nsec = origin[0] + delta[0], origin[1] + delta[1]
    while nsec > 1_000_000_000:
        sec, nsec = sec + 1, nsec - 1_000_000_000
    while nsec < 0:
        sec, nsec = sec - 1, nsec + 1_000_000_000
    return sec, nsec


def pairs_key(pairs: list[tuple[Any, Any]]) -> list[tuple[Any, Any]]:
    """Pairs compared by the bits of their values (NaN equals itself)."""
    def bits(value: Any) -> Any:
        if isinstance(value, F32):
            return ("f32", value.bits)
        if isinstance(value, float):
            return ("f64", struct.pack(">d", value))
        return value
    return [(inst, bits(value)) for inst, value in pairs]


def time_scale(scale_time: int) -> float:
    """rate()'s factor from a time counter's scale to seconds (computed in double)."""
    factor = 1.0
    if scale_time > 3:
        for _ in range(3, scale_time):
            factor *= 60
    else:
        for _ in range(scale_time, 3):
            factor /= 1000
    return factor
