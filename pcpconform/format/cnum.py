"""C-number semantics: how libpcp's arithmetic behaves on x86-64, in one place.

libpcp computes in C: integers wrap in two's complement, ``(float)`` rounds to float32 (and
overflows to infinity), conversions from double to integer truncate and give the "integer
indefinite" value when out of range, and time differences go through the x87 80-bit long
double. Every oracle and decoder that needs one of these takes it from here.
"""

from __future__ import annotations

import enum
import functools
import math
import struct
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

from pcpconform.fastpath import Declined, register
from pcpconform.format.pmtypes import PmType

__all__ = [
    "INTEGER_TYPES", "NUMERIC_TYPES", "INT_RANGE", "wrap", "wrap_type", "f32", "int_to_f32",
    "c_int", "c_uint", "round_bits", "round_ratio", "long_double_seconds", "SECONDS", "SecondsReason",
]

#: the PCP types that hold an integer
INTEGER_TYPES: frozenset[int] = frozenset({PmType.I32, PmType.U32, PmType.I64, PmType.U64})
#: the PCP types that hold a number (integers, FLOAT, DOUBLE)
NUMERIC_TYPES: frozenset[int] = INTEGER_TYPES | {PmType.FLOAT, PmType.DOUBLE}
#: (smallest, largest) value of each integer type
INT_RANGE: dict[int, tuple[int, int]] = {
    PmType.I32: (-(1 << 31), (1 << 31) - 1), PmType.U32: (0, (1 << 32) - 1),
    PmType.I64: (-(1 << 63), (1 << 63) - 1), PmType.U64: (0, (1 << 64) - 1),
}
_WIDTH: dict[int, tuple[int, bool]] = {PmType.I32: (32, True), PmType.U32: (32, False), PmType.I64: (64, True),
          PmType.U64: (64, False)}
_F32 = struct.Struct("<f")


def wrap(value: int, bits: int, signed: bool) -> int:
    """``value`` stored in a C integer of ``bits`` bits: two's complement wrap-around."""
    value &= (1 << bits) - 1
    return value - (1 << bits) if signed and value >> (bits - 1) else value


def wrap_type(value: int, ptype: int) -> int:
    """``value`` stored into the pmAtomValue field of an integer ``ptype``."""
    bits, signed = _WIDTH[ptype]
    return wrap(value, bits, signed)


def f32(x: float) -> float:
    """``(float) x``: the float32 nearest to ``x`` (ties to even), as a Python float; beyond
    float32's range after rounding, infinity, as C gives."""
    try:
        return float(_F32.unpack(_F32.pack(x))[0])
    except OverflowError:
        return math.copysign(math.inf, x)


def int_to_f32(n: int) -> float:
    """C's conversion of an integer to float: one rounding to 24 bits, ties to even (going
    through double first could round twice)."""
    size = abs(n).bit_length()
    if size <= 53:
        return f32(float(n))
    shift = size - 24
    q, r = divmod(abs(n), 1 << shift)
    half = 1 << (shift - 1)
    if r > half or (r == half and q & 1):
        q += 1
    return f32(math.copysign(float(q << shift), n))


def c_int(x: float, bits: int) -> int:
    """C's conversion of a double to a signed integer on x86-64 (cvttsd2si): truncation, and
    the "integer indefinite" value (the most negative integer) when out of range or NaN."""
    low = -(1 << (bits - 1))
    if x != x:
        return low
    if math.isinf(x):
        return low
    t = math.trunc(x)
    return t if low <= t < -low else low


def c_uint(x: float, bits: int) -> int:
    """C's conversion of a double to an unsigned integer as gcc emits it on x86-64."""
    if bits == 32:                      # through a 64-bit signed conversion, low 32 bits
        return c_int(x, 64) & 0xFFFFFFFF
    if x < 2.0 ** 63:
        return c_int(x, 64) & 0xFFFFFFFFFFFFFFFF
    return (c_int(x - 2.0 ** 63, 64) ^ (1 << 63)) & 0xFFFFFFFFFFFFFFFF


def round_bits(x: Fraction, bits: int) -> Fraction:
    """``x`` rounded to a binary floating-point number with ``bits`` of significand, ties to
    even (no exponent limits: the long double's range covers every time PCP stores)."""
    if x == 0:
        return x
    mag = abs(x)
    e = mag.numerator.bit_length() - mag.denominator.bit_length()
    if Fraction(2) ** e > mag:
        e -= 1
    scale = Fraction(2) ** (bits - 1 - e)
    return Fraction(round(x * scale)) / scale      # round() on a Fraction is half-even


def round_ratio(num: int, den: int, bits: int) -> tuple[int, int]:
    """``num/den`` (den > 0) rounded to ``bits`` of significand, ties to even, as ``(m, s)``
    meaning m / 2**s: the integer form of ``round_bits``, fast enough for every fetch."""
    if num == 0:
        return 0, 0
    mag = -num if num < 0 else num
    e = mag.bit_length() - den.bit_length()
    if (mag << -e if e < 0 else mag) < (den << e if e > 0 else den):
        e -= 1                               # now 2**e <= mag/den < 2**(e+1)
    s = bits - 1 - e
    q, r = divmod(mag << s, den) if s >= 0 else divmod(mag, den << -s)
    limit = den if s >= 0 else den << -s
    if 2 * r > limit or (2 * r == limit and q & 1):
        q += 1
    q = -q if num < 0 else q
    return (q, s) if s >= 0 else (q << -s, 0)


def long_double_seconds(sec: int, nsec: int) -> float:
    """``(double)(sec + (long double) nsec / 1e9L)``: how libpcp turns a (seconds,
    nanoseconds) pair or difference into double seconds on x86-64 (__pmTimestampSub,
    pmtimespecToReal): the quotient and the sum in long double, then one rounding to double."""
    q, s = _nsec_quotient(nsec)
    # sec + that, in long double: num / 2**s rounded to 64 significant bits, ties to even
    # (round_ratio's answer for a power-of-two denominator, by shifts)
    num = (sec << s) + q
    mag = -num if num < 0 else num
    k = mag.bit_length() - 64
    if k > 0:
        low = mag & ((1 << k) - 1)
        mag >>= k
        half = 1 << (k - 1)
        if low > half or (low == half and mag & 1):
            mag += 1
        s -= k
    m = -mag if num < 0 else mag
    return m / (1 << s) if s >= 0 else float(m << -s)     # rounds to nearest, as (double)


@functools.lru_cache(maxsize=4096)
def _nsec_quotient(nsec: int) -> tuple[int, int]:
    """(long double) nsec / 1e9L as round_ratio gives it (record times repeat a few counts)."""
    return round_ratio(nsec, 1_000_000_000, 64)


class SecondsReason(enum.Enum):
    """Why ``long_double_seconds`` of a list is taken one pair at a time."""

    NOT_X87 = "this platform's long double is not the x87 80-bit format of libpcp on x86-64"
    FEW = "too few pairs for numpy's fixed costs"
    RANGE = "a value outside 64-bit integers"


#: fewer pairs than this are converted one at a time
MIN_SECONDS = 32


@functools.cache
def _x87() -> Any:
    """numpy, if its long double is the x87 extended format (64-bit significand, 15-bit
    exponent): then numpy's long double arithmetic is the C arithmetic libpcp does."""
    import numpy as np

    info = np.finfo(np.longdouble)
    return np if (info.nmant, info.nexp) == (63, 15) else None


def seconds_reference(secs: Sequence[int], nsecs: Sequence[int]) -> list[float]:
    """``long_double_seconds`` of each (sec, nsec) pair."""
    return list(map(long_double_seconds, secs, nsecs))


def seconds_columns(secs: Sequence[int], nsecs: Sequence[int]) -> list[float]:
    """The same by numpy's long double, where that is x87's: the int64 to long double
    conversions are exact, the quotient and the sum round to 64 significant bits as the
    x87 unit does, and the conversion to double rounds once more, as (double) does."""
    if len(secs) < MIN_SECONDS:
        raise Declined(SecondsReason.FEW)
    np = _x87()
    if np is None:
        raise Declined(SecondsReason.NOT_X87)
    try:
        sec = np.array(secs, dtype=np.int64)
        nsec = np.array(nsecs, dtype=np.int64)
    except OverflowError:
        raise Declined(SecondsReason.RANGE) from None
    ld = np.longdouble
    out: list[float] = (sec.astype(ld) + nsec.astype(ld) / ld(1_000_000_000)).astype(np.float64).tolist()
    return out


SECONDS = register("cnum.seconds", reference=seconds_reference, fast=seconds_columns, reasons=SecondsReason,
                   inputs="seconds-pairs")
