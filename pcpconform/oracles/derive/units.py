"""Units as derived metrics use them: libpcp's pmParseUnitsStr and pmConvScale.

``parse_units`` reads the text of ``rescale(x, "units")`` and ``mkconst(..., units=...)``
exactly as pmParseUnitsStr does (keywords, exponents, multipliers, a dividend and a
divisor around the first ``/``) and fails with pmParseUnitsStr's own message.
``conv_scale`` converts one value between scales with pmConvScale's integer and
floating-point arithmetic (spec/derive.md, DERIVE-EVAL-13).
"""

from __future__ import annotations

from pcpconform.errors import ConvScaleError
from pcpconform.format.cnum import f32, int_to_f32, wrap
from pcpconform.format.pmtypes import PmType, PmUnits
from pcpconform.format.values import F32
from pcpconform.oracles.derive.units_str import UnitsError, parse_units_str

__all__ = ["UnitsError", "ConvScaleError", "parse_units", "units_str", "conv_scale",
           "conv_factors"]

PM_ERR_CONV = -12362      # "Impossible value or scale conversion"
PM_ERR_UNIT = -12361      # "Illegal pmUnits specification"


def _signed4(value: int) -> int:
    value &= 0xF
    return value - 16 if value & 8 else value


def parse_units(text: str, *, asserts: bool = True) -> tuple[PmUnits, float]:
    """pmParseUnitsStr as the binder needs it: the units (scales held in pmUnits' 4-bit
    fields) and the multiplier; UnitsError with libpcp's message (one implementation,
    pcpconform.oracles.derive.units_str, serves the parser and the binder). ``asserts``
    as for parse_units_str (the profile's ``units_asserts``)."""
    u = parse_units_str(text, asserts=asserts)
    units = PmUnits(dimSpace=u.dim_space, dimTime=u.dim_time, dimCount=u.dim_count,
                    scaleSpace=u.scale_space & 0xF, scaleTime=u.scale_time & 0xF,
                    scaleCount=_signed4(u.scale_count))
    return units, u.multiplier


def units_str(units: PmUnits) -> str:
    """libpcp's pmUnitsStr ("" for no dimension and no scale)."""
    return units.unit_string()


# -- pmConvScale ------------------------------------------------------------------------

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
            div, mult = wrap(div * d, 64, True), wrap(mult * m, 64, True)
        else:
            mult, div = wrap(mult * d, 64, True), wrap(div * m, 64, True)
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
        div, mult = wrap(div * d, 64, True), wrap(mult * m, 64, True)
    if i.dimTime:
        d, m = _axis_factors(i.dimTime, i.scaleTime, o.scaleTime, [1000, 1000, 1000, 60, 60], 3)
        div, mult = wrap(div * d, 64, True), wrap(mult * m, 64, True)
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
                div, mult = wrap(div * d, 64, True), wrap(mult * m, 64, True)
        elif i.dimCount < 0:
            for _ in range(-i.dimCount):
                mult, div = wrap(mult * d, 64, True), wrap(div * m, 64, True)
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


def conv_scale(ptype: int, value: float, iunit: PmUnits, ounit: PmUnits) -> int | float:
    """pmConvScale of one value of type ``ptype``: ints wrap as C does, FLOAT is float32."""
    mult, div = conv_factors(iunit, ounit)
    if ptype in (PmType.I32, PmType.U32, PmType.I64) and div == 0:
        raise ConvScaleError(PM_ERR_CONV)      # not reachable with libpcp's scales
    if ptype == PmType.I32:
        num = wrap(int(value) * mult + _c_div(div, 2), 64, True)
        return wrap(_c_div(num, div), 32, True)
    if ptype == PmType.U32:
        num = wrap(int(value) * mult + _c_div(div, 2), 64, True)
        return _c_div(num, div) & 0xFFFFFFFF
    if ptype == PmType.I64:
        num = wrap(int(value) * mult + _c_div(div, 2), 64, True)
        return wrap(_c_div(num, div), 64, True)
    if ptype == PmType.U64:
        mask = (1 << 64) - 1
        num = (int(value) * (mult & mask) + (_c_div(div, 2) & mask)) & mask
        return num // (div & mask)
    if ptype == PmType.FLOAT:
        factor = f32(int_to_f32(mult) / int_to_f32(div))
        return F32(f32(float(value) * factor))
    if ptype == PmType.DOUBLE:
        return float(value) * (float(mult) / float(div))
    raise ConvScaleError(PM_ERR_CONV)
