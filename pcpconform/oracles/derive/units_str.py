"""pmParseUnitsStr() of libpcp (units.c), as used by rescale(x, "units") and mkconst(units=).

A units string is ``[number] unit[^exp] ... [/ [number] unit[^exp] ...]``; libpcp checks it
at parse time and an error becomes the syntax error ``Illegal units: '<reason>'``
(DERIVE-SYN-10). The keywords, their order and the error texts are libpcp's; the same
code is in 6.0.3 and 6.3.x.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction

from pcpconform.errors import UnitsAbort, UnitsError

__all__ = ["Units", "UnitsError", "UnitsAbort", "parse_units_str"]

_TIME = [("nanoseconds", 0), ("nanosecond", 0), ("nanosec", 0), ("ns", 0),
         ("microseconds", 1), ("microsecond", 1), ("microsec", 1), ("us", 1),
         ("milliseconds", 2), ("millisecond", 2), ("millisec", 2), ("ms", 2),
         ("seconds", 3), ("second", 3), ("sec", 3), ("s", 3),
         ("minutes", 4), ("minute", 4), ("min", 4),
         ("hours", 5), ("hour", 5), ("hr", 5), ("h", 5),
         ("time-0", 0)] + [(f"time-{n}", n) for n in range(2, 16)] + [("time-1", 1)]
_SPACE = [("bytes", 0), ("byte", 0)]
for _n, _p in enumerate("KMGTPEZY", start=1):
    _bi = {"K": "Kibi", "M": "Mebi", "G": "Gibi", "T": "Tebi", "P": "Pebi", "E": "Exbi",
           "Z": "Zebi", "Y": "Yobi"}[_p]
    _si = {"K": "Kilo", "M": "Mega", "G": "Giga", "T": "Tera", "P": "Peta", "E": "Exa",
           "Z": "Zetta", "Y": "Yotta"}[_p]
    _SPACE += [(f"{_p}B", _n), (f"{_p}iB", _n), (f"{_p}bytes", _n), (f"{_p}byte", _n),
               (f"{_bi}bytes", _n), (f"{_bi}byte", _n), (f"{_si}bytes", _n), (f"{_si}byte", _n)]
_SPACE += [("space-0", 0)] + [(f"space-{n}", n) for n in range(2, 16)] + [("space-1", 1)]
_COUNT = [(f"count x 10^{n}", n) for n in range(-8, 0)] + \
         [(f"count x 10^{n}", n) for n in range(2, 8)] + \
         [("count x 10", 1), ("counts", 0), ("count", 0)]
_EXPONENT = [(f"^{n}", n) for n in range(-8, 1)] + [(f"^{n}", n) for n in range(2, 16)] + \
            [("^1", 1)]
_SPACE_CHARS = b" \t\n\v\f\r"

_DEC = re.compile(rb"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_HEX = re.compile(rb"[+-]?0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][+-]?[0-9]+)?")
_SPECIAL = re.compile(rb"[+-]?(?:inf(?:inity)?|nan(?:\([0-9A-Za-z_]*\))?)", re.IGNORECASE)
_DBL_MIN = 2.2250738585072014e-308


@dataclass(frozen=True)
class Units:
    dim_space: int
    dim_time: int
    dim_count: int
    scale_space: int
    scale_time: int
    scale_count: int
    multiplier: float
    #: False when libpcp read the multiplier's time factor from beyond its table
    #: (a time scale past HOUR folded in without the 6.x assertion: DERIVE-DEV-13)
    multiplier_known: bool = True


def _strtod(s: bytes, i: int) -> tuple[float, int] | None:
    """glibc strtod() on s[i:]: (value, end) or None for "no conversion or ERANGE"."""
    for rx in (_HEX, _SPECIAL, _DEC):
        m = rx.match(s, i)
        if m:
            break
    else:
        return None
    text = m.group(0).decode("ascii")
    if rx is _SPECIAL:
        v = math.nan if text.lower().lstrip("+-").startswith("nan") else math.inf
        return (-v if text.startswith("-") else v), m.end()
    if rx is _HEX:
        neg = text.startswith("-")
        body = text.lstrip("+-")
        if "p" not in body.lower():
            body += "p0"
        exact = _hex_fraction(body)
        try:
            v = float.fromhex(body)
        except OverflowError:
            return None
        if v != 0 and abs(v) < _DBL_MIN and Fraction(v) != exact:
            return None                 # inexact underflow: ERANGE
        if v == 0 and exact != 0:
            return None
        return (-v if neg else v), m.end()
    v = float(text)
    if math.isinf(v):
        return None                     # overflow: ERANGE
    digits = re.sub(r"[eE].*", "", text).strip("+-.").replace(".", "")
    if (v == 0 and digits.strip("0")) or (v != 0 and abs(v) < _DBL_MIN):
        return None                     # underflow: ERANGE
    return v, m.end()


def _hex_fraction(body: str) -> Fraction:
    mant, _, exp = body[2:].lower().partition("p")
    whole, _, frac = mant.partition(".")
    value = Fraction(int(whole or "0", 16)) + (Fraction(int(frac, 16), 16 ** len(frac)) if frac else 0)
    e = int(exp)
    return value * (Fraction(2) ** e)


def _kw(s: bytes, i: int, end: int, table: list[tuple[str, int]]) -> tuple[int, int] | None:
    # libpcp's streqskip(): case-insensitive, then a space, "^" or the end must follow
    for word, value in table:
        w = word.encode()
        j = i + len(w)
        if j <= end and s[i:j].lower() == w.lower() and (
                j == end or (j < len(s) and (s[j] in _SPACE_CHARS or s[j] == ord("^")))):
            return value, j
    return None


@dataclass
class _Part:
    """What __pmParseUnitsStrPart reads from one side of the "/"; ``dim`` and ``scale``
    are indexed by axis: 0 space, 1 time, 2 count."""

    dim: list[int] = field(default_factory=lambda: [0, 0, 0])
    scale: list[int] = field(default_factory=lambda: [0, 0, 0])
    mult: float = 1.0


def _part(s: bytes, i: int, end: int) -> _Part:
    """__pmParseUnitsStrPart: dimensions, scales and the multiplier of s[i:end]."""
    out = _Part()
    while i != end:
        c = s[i]
        if c in _SPACE_CHARS:
            i += 1
            continue
        if c == ord("-") or c == ord(".") or 48 <= c <= 57:
            r = _strtod(s, i)
            if r is None or r[1] > end:
                raise UnitsError("invalid floating point literal")
            out.mult *= r[0]
            i = r[1]
            continue
        dim = None
        for axis, table in ((1, _TIME), (0, _SPACE), (2, _COUNT)):
            if out.dim[axis] == 0:
                hit = _kw(s, i, end, table)
                if hit is not None:
                    out.scale[axis], i = hit
                    dim = axis
                    break
        if dim is None:
            raise UnitsError("unrecognized or duplicate base unit")
        if i == end or s[i] in _SPACE_CHARS:
            out.dim[dim] = 1
        else:
            hit = _kw(s, i, end, _EXPONENT)
            if hit is not None:
                out.dim[dim], i = hit
    return out


def _ieee_div(a: float, b: float) -> float:
    # C division: no exception for a zero divisor
    if b != 0:
        return a / b
    if a == 0 or math.isnan(a):
        return math.nan
    return math.copysign(math.inf, a) * math.copysign(1.0, b)


def parse_units_str(text: bytes | str, *, asserts: bool = True) -> Units:
    """pmParseUnitsStr(); raises UnitsError with libpcp's message. ``asserts``: libpcp
    checks a time scale it folds into the multiplier and aborts past HOUR (UnitsAbort;
    6.x), else it reads the factor from beyond its table (7.2.2, DERIVE-VER-5)."""
    s = text.encode("utf-8", "surrogateescape") if isinstance(text, str) else text
    nul = s.find(b"\0")
    if nul >= 0:
        s = s[:nul]
    slash = s.find(b"/")
    if slash < 0:
        top, bottom = _part(s, 0, len(s)), _Part()
    else:
        top, bottom = _part(s, 0, slash), _part(s, slash + 1, len(s))
    dims = []
    for axis, name in ((0, "space"), (1, "time"), (2, "count")):
        d = top.dim[axis] - bottom.dim[axis]
        if not -8 <= d <= 7:            # pmUnits has 4-bit signed dimensions
            raise UnitsError(f"{name} dimension out of bounds")
        dims.append(d)
    mult = _ieee_div(bottom.mult, top.mult)
    scales = [0, 0, 0]
    known = True
    factors: dict[int, Callable[[int], float]] = {
        0: lambda sc: 1024.0 ** sc, 2: lambda sc: 10.0 ** sc,
        1: lambda sc: (1e-9, 1e-6, 1e-3, 1.0, 60.0, 3600.0)[sc] if sc <= 5 else math.nan}
    for axis, unit in ((0, 0), (2, 0), (1, 3)):   # PM_SPACE_BYTE, PM_COUNT_ONE, PM_TIME_SEC
        if top.dim[axis] == 0 and bottom.dim[axis] != 0:
            scales[axis] = bottom.scale[axis]
        elif bottom.dim[axis] == 0 and top.dim[axis] != 0:
            scales[axis] = top.scale[axis]
        else:
            # both (or neither) have this dimension: fold the scales into the multiplier
            if axis == 1:
                for part, which in ((top, "dividend"), (bottom, "divisor")):
                    if part.scale[1] > 5 and asserts:
                        raise UnitsAbort(f"units.c: pmParseUnitsStr: Assertion "
                                         f"`{which}.scaleTime <= PM_TIME_HOUR' failed.")
                    if part.scale[1] > 5 and part.dim[1] != 0:
                        known = False       # factor**dim of memory past the table
            scales[axis] = unit if dims[axis] else 0
            with_f = factors[axis]
            try:
                mult *= with_f(top.scale[axis]) ** -top.dim[axis]
                mult *= with_f(bottom.scale[axis]) ** bottom.dim[axis]
            except (OverflowError, ZeroDivisionError):
                mult = math.nan
    return Units(dims[0], dims[1], dims[2], scales[0], scales[1], scales[2], mult, known)
