"""Units as derived metrics use them: libpcp's pmParseUnitsStr and pmConvScale.

``parse_units`` reads the text of ``rescale(x, "units")`` and ``mkconst(..., units=...)``
exactly as pmParseUnitsStr does (keywords, exponents, multipliers, a dividend and a
divisor around the first ``/``) and fails with pmParseUnitsStr's own message.
``conv_scale`` converts one value between scales with pmConvScale's integer and
floating-point arithmetic (spec/derive.md, DERIVE-EVAL-13).
"""

from __future__ import annotations

import math
import re
import struct
from fractions import Fraction

from ..pmtypes import PmType, PmUnits
from ..values import F32

__all__ = ["UnitsError", "ConvScaleError", "parse_units", "units_str", "conv_scale",
           "conv_factors", "f32", "int_to_f32"]

PM_ERR_CONV = -12362      # "Impossible value or scale conversion"
PM_ERR_UNIT = -12361      # "Illegal pmUnits specification"


class UnitsError(ValueError):
    """pmParseUnitsStr failed; ``message`` is libpcp's text (after "Illegal units:")."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class ConvScaleError(ValueError):
    """pmConvScale failed with ``code`` (PM_ERR_CONV or PM_ERR_UNIT)."""

    def __init__(self, code: int) -> None:
        super().__init__(f"pmConvScale error {code}")
        self.code = code


# -- pmParseUnitsStr --------------------------------------------------------------------

_TIME_KEYWORDS = [("nanoseconds", 0), ("nanosecond", 0), ("nanosec", 0), ("ns", 0),
                  ("microseconds", 1), ("microsecond", 1), ("microsec", 1), ("us", 1),
                  ("milliseconds", 2), ("millisecond", 2), ("millisec", 2), ("ms", 2),
                  ("seconds", 3), ("second", 3), ("sec", 3), ("s", 3),
                  ("minutes", 4), ("minute", 4), ("min", 4),
                  ("hours", 5), ("hour", 5), ("hr", 5), ("h", 5),
                  ("time-0", 0)] + [(f"time-{n}", n) for n in range(2, 16)] + [("time-1", 1)]
_SPACE_WORDS = ["", "K", "M", "G", "T", "P", "E", "Z", "Y"]
_SPACE_LONG = ["", "Kibi", "Mebi", "Gibi", "Tebi", "Pebi", "Exbi", "Zebi", "Yobi"]
_SPACE_OLD = ["", "Kilo", "Mega", "Giga", "Tera", "Peta", "Exa", "Zetta", "Yotta"]
_SPACE_KEYWORDS = [("bytes", 0), ("byte", 0)]
for _s in range(1, 9):
    _p = _SPACE_WORDS[_s]
    _SPACE_KEYWORDS += [(f"{_p}B", _s), (f"{_p}iB", _s), (f"{_p}bytes", _s), (f"{_p}byte", _s),
                        (f"{_SPACE_LONG[_s]}bytes", _s), (f"{_SPACE_LONG[_s]}byte", _s),
                        (f"{_SPACE_OLD[_s]}bytes", _s), (f"{_SPACE_OLD[_s]}byte", _s)]
_SPACE_KEYWORDS += [("space-0", 0)] + [(f"space-{n}", n) for n in range(2, 16)] + [("space-1", 1)]
_COUNT_KEYWORDS = ([(f"count x 10^{n}", n) for n in range(-8, 0)]
                   + [(f"count x 10^{n}", n) for n in range(2, 8)]
                   + [("count x 10", 1), ("counts", 0), ("count", 0)])
_EXPONENTS = ([(f"^{n}", n) for n in range(-8, 1)] + [(f"^{n}", n) for n in range(2, 16)]
              + [("^1", 1)])

_C_SPACE = " \t\n\v\f\r"
# what strtod(3) accepts after a leading '-', '.' or digit (the caller checks that char)
_STRTOD = re.compile(r"""[-+]?(?:
      0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][-+]?[0-9]+)?
    | (?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?
    | inf(?:inity)? | nan(?:\([0-9A-Za-z_]*\))? )""", re.X | re.I)
_DBL_MIN = 2.2250738585072014e-308


def _strtod(text: str, pos: int) -> tuple[float, int] | None:
    """strtod at ``pos``: (value, end) or None for "no conversion or ERANGE"."""
    m = _STRTOD.match(text, pos)
    if m is None:
        return None
    lit = m.group(0)
    low = lit.lower().lstrip("+-")
    # "0x" alone, or a hex prefix without digits, converts only the "0"
    if low.startswith("0x") and not re.match(r"0x(?:[0-9a-f]|\.[0-9a-f])", low):
        return (0.0, pos + (2 if lit[0] in "+-" else 1))
    if low.startswith(("inf", "nan")):
        sign = -1.0 if lit.startswith("-") else 1.0
        return (sign * (math.inf if low.startswith("inf") else math.nan), m.end())
    exact = (Fraction(float.fromhex(lit)) if low.startswith("0x") else Fraction(lit))
    try:
        value = float(exact)
    except OverflowError:
        return None
    if exact != 0 and (math.isinf(value) or abs(value) < _DBL_MIN):
        return None               # ERANGE: overflow, or an underflow to a subnormal
    return (value, m.end())


def _match_keyword(text: str, pos: int, end: int, keyword: str) -> bool:
    """libpcp's streqskip: a case-insensitive prefix followed by space, '^' or the end."""
    stop = pos + len(keyword)
    if stop > end or text[pos:stop].lower() != keyword.lower():
        return False
    return stop == end or text[stop] in _C_SPACE or text[stop] == "^"


def _parse_part(text: str, start: int, end: int) -> tuple[list[int], float]:
    """__pmParseUnitsStrPart: [dimSpace, dimTime, dimCount, scaleSpace, scaleTime,
    scaleCount] with wide fields, and the product of the numbers seen."""
    dims = [0, 0, 0, 0, 0, 0]
    mult = 1.0
    pos = start
    while pos != end:
        ch = text[pos]
        if ch in _C_SPACE:
            pos += 1
            continue
        if ch == "-" or ch == "." or ch.isdigit() and ch.isascii():
            got = _strtod(text, pos)
            if got is None or got[1] == pos or got[1] > end:
                raise UnitsError("invalid floating point literal")
            mult *= got[0]
            pos = got[1]
            continue
        axis = None
        for index, table in ((1, _TIME_KEYWORDS), (0, _SPACE_KEYWORDS), (2, _COUNT_KEYWORDS)):
            if dims[index] != 0:
                continue
            hit = next(((k, s) for k, s in table if _match_keyword(text, pos, end, k)), None)
            if hit is not None:
                dims[3 + index] = hit[1]
                pos += len(hit[0])
                axis = index
                break
        if axis is None:
            raise UnitsError("unrecognized or duplicate base unit")
        if pos == end or text[pos] in _C_SPACE:
            dims[axis] = 1
        else:
            hit = next(((k, e) for k, e in _EXPONENTS if _match_keyword(text, pos, end, k)), None)
            if hit is not None:
                dims[axis] = hit[1]
                pos += len(hit[0])
    return dims, mult


def _c_pow(x: float, y: float) -> float:
    """C's pow(): overflow gives infinity rather than an exception."""
    try:
        return math.pow(x, y)
    except OverflowError:
        return math.inf
    except ValueError:
        return math.nan


def _c_ddiv(x: float, y: float) -> float:
    """C's double division (IEEE: x/0 is an infinity or NaN)."""
    if y == 0:
        return math.nan if x == 0 or math.isnan(x) else math.copysign(math.inf, x) * \
            math.copysign(1.0, y)
    return x / y


def _signed4(value: int) -> int:
    value &= 0xF
    return value - 16 if value & 8 else value


def parse_units(text: str) -> tuple[PmUnits, float]:
    """pmParseUnitsStr: the units and the multiplier; UnitsError with libpcp's message."""
    text = text.split("\0", 1)[0]            # a C string ends at its first NUL
    slash = text.find("/")
    if slash < 0:
        top, top_mult = _parse_part(text, 0, len(text))
        bottom, bottom_mult = [0] * 6, 1.0
    else:
        top, top_mult = _parse_part(text, 0, slash)
        bottom, bottom_mult = _parse_part(text, slash + 1, len(text))
    dims = []
    for axis, word in ((0, "space"), (1, "time"), (2, "count")):
        dim = top[axis] - bottom[axis]
        if _signed4(dim) != dim:
            raise UnitsError(f"{word} dimension out of bounds")
        dims.append(dim)
    mult = _c_ddiv(bottom_mult, top_mult)
    scales = [0, 0, 0]
    bases = {0: 1024.0, 2: 10.0}
    for axis in (0, 2, 1):            # libpcp's order: space, count, time
        t_dim, b_dim = top[axis], bottom[axis]
        if t_dim == 0 and b_dim != 0:
            scales[axis] = bottom[3 + axis]
        elif b_dim == 0 and t_dim != 0:
            scales[axis] = top[3 + axis]
        else:
            if axis == 1:
                if top[4] > 5 or bottom[4] > 5:
                    raise UnitsError("time scale out of range")   # libpcp asserts here
                steps = [1e-9, 1e-6, 0.001, 1.0, 60.0, 3600.0]
                mult *= _c_pow(steps[top[4]], -float(t_dim))
                mult *= _c_pow(steps[bottom[4]], float(b_dim))
                scales[axis] = 3
            else:
                base = bases[axis]
                mult *= _c_pow(_c_pow(base, float(top[3 + axis])), -float(t_dim))
                mult *= _c_pow(_c_pow(base, float(bottom[3 + axis])), float(b_dim))
                scales[axis] = 0
            if dims[axis] == 0:
                scales[axis] = 0
    units = PmUnits(dimSpace=dims[0], dimTime=dims[1], dimCount=dims[2],
                    scaleSpace=scales[0] & 0xF, scaleTime=scales[1] & 0xF,
                    scaleCount=_signed4(scales[2]))
    return units, mult


def units_str(units: PmUnits) -> str:
    """libpcp's pmUnitsStr ("" for no dimension and no scale)."""
    return units.unit_string()


# -- pmConvScale ------------------------------------------------------------------------

def _wrap64(value: int) -> int:
    value &= (1 << 64) - 1
    return value - (1 << 64) if value >> 63 else value


def _axis_factors(dim: int, iscale: int, oscale: int, base: list[int],
                  canonical: int) -> tuple[int, int]:
    """(div, mult) of one axis: ``base[k]`` is the factor between scale k and k+1."""
    def factor(lo: int, hi: int) -> int:
        out = 1
        for k in range(lo, hi):
            out *= base[k]
        return out
    top = len(base)
    if not (0 <= iscale <= top and 0 <= oscale <= top):
        raise ConvScaleError(PM_ERR_UNIT)
    d = m = 1
    if iscale < canonical:
        d = factor(iscale, canonical)
    elif iscale > canonical:
        m = factor(canonical, iscale)
    if oscale < canonical:
        m *= factor(oscale, canonical)
    elif oscale > canonical:
        d *= factor(canonical, oscale)
    div = mult = 1
    for _ in range(abs(dim)):
        if dim > 0:
            div, mult = _wrap64(div * d), _wrap64(mult * m)
        else:
            mult, div = _wrap64(mult * d), _wrap64(div * m)
    return div, mult


def conv_factors(iunit: PmUnits, ounit: PmUnits) -> tuple[int, int]:
    """pmConvScale's (mult, div) for the two units, or ConvScaleError."""
    def counted(u: PmUnits) -> PmUnits:
        if u.dimSpace == 0 and u.dimTime == 0 and u.dimCount == 0:
            return PmUnits(0, 0, 1, u.scaleSpace, u.scaleTime, u.scaleCount)
        return u
    i, o = counted(iunit), counted(ounit)
    if (i.dimSpace, i.dimTime, i.dimCount) != (o.dimSpace, o.dimTime, o.dimCount):
        raise ConvScaleError(PM_ERR_CONV)
    div = mult = 1
    if i.dimSpace:
        d, m = _axis_factors(i.dimSpace, i.scaleSpace, o.scaleSpace, [1024] * 6, 2)
        div, mult = _wrap64(div * d), _wrap64(mult * m)
    if i.dimTime:
        d, m = _axis_factors(i.dimTime, i.scaleTime, o.scaleTime, [1000, 1000, 1000, 60, 60], 3)
        div, mult = _wrap64(div * d), _wrap64(mult * m)
    if i.dimCount or (i.dimSpace == 0 and i.dimTime == 0):
        d = m = 1
        if i.scaleCount < 0:
            d *= 10 ** -i.scaleCount
        elif i.scaleCount > 0:
            m *= 10 ** i.scaleCount
        if o.scaleCount < 0:
            m *= 10 ** -o.scaleCount
        elif o.scaleCount > 0:
            d *= 10 ** o.scaleCount
        if i.dimCount > 0:
            for _ in range(i.dimCount):
                div, mult = _wrap64(div * d), _wrap64(mult * m)
        elif i.dimCount < 0:
            for _ in range(-i.dimCount):
                mult, div = _wrap64(mult * d), _wrap64(div * m)
        else:
            mult, div = m, d
    if div == 0:
        # libpcp computes mult % div here and dies of SIGFPE (DERIVE-DEV-9)
        raise ConvScaleError(PM_ERR_CONV)
    if _c_mod(mult, div) == 0:
        mult, div = _c_div(mult, div), 1
    return mult, div


def _c_div(a: int, b: int) -> int:
    """C integer division: truncation towards zero."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _c_mod(a: int, b: int) -> int:
    return a - _c_div(a, b) * b


def f32(x: float) -> float:
    """The float32 nearest to double ``x`` (round to nearest even), as a Python float."""
    try:
        return struct.unpack("<f", struct.pack("<f", x))[0]
    except OverflowError:           # beyond FLT_MAX after rounding: infinity, as C gives
        return math.copysign(math.inf, x)


def int_to_f32(n: int) -> float:
    """C's conversion of an integer to float: one rounding to 24 bits, half to even
    (going through double first could round twice)."""
    size = abs(n).bit_length()
    if size <= 53:
        return f32(float(n))
    shift = size - 24
    q, r = divmod(abs(n), 1 << shift)
    half = 1 << (shift - 1)
    if r > half or r == half and q & 1:
        q += 1
    return f32(math.copysign(float(q << shift), n))


def int_to_double(n: int) -> float:
    """C's conversion of a 64-bit integer to double (Python rounds the same way)."""
    return float(n)


def conv_scale(ptype: int, value: object, iunit: PmUnits, ounit: PmUnits) -> object:
    """pmConvScale of one value of type ``ptype``: ints wrap as C does, FLOAT is float32."""
    mult, div = conv_factors(iunit, ounit)
    if ptype in (PmType.I32, PmType.U32, PmType.I64) and div == 0:
        raise ConvScaleError(PM_ERR_CONV)      # not reachable with libpcp's scales
    if ptype == PmType.I32:
        num = _wrap64(int(value) * mult + _c_div(div, 2))  # type: ignore[call-overload]
        return _wrap_signed(_c_div(num, div), 32)
    if ptype == PmType.U32:
        num = _wrap64(int(value) * mult + _c_div(div, 2))  # type: ignore[call-overload]
        return _c_div(num, div) & 0xFFFFFFFF
    if ptype == PmType.I64:
        num = _wrap64(int(value) * mult + _c_div(div, 2))  # type: ignore[call-overload]
        return _wrap64(_c_div(num, div))
    if ptype == PmType.U64:
        mask = (1 << 64) - 1
        num = (int(value) * (mult & mask) + (_c_div(div, 2) & mask)) & mask  # type: ignore[call-overload]
        return num // (div & mask)
    if ptype == PmType.FLOAT:
        factor = f32(int_to_f32(mult) / int_to_f32(div))
        return F32(f32(float(value) * factor))  # type: ignore[arg-type]
    if ptype == PmType.DOUBLE:
        return float(value) * (float(mult) / float(div))  # type: ignore[arg-type]
    raise ConvScaleError(PM_ERR_CONV)


def _wrap_signed(value: int, bits: int) -> int:
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >> (bits - 1) else value
