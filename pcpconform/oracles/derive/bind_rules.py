"""The binder's arithmetic of types, units and guards, as libpcp's derive_parser.y.in
computes them: promote[][] (DERIVE-BIND-10), map_units' scale reconciliation
(DERIVE-BIND-9), eval_guard for ternaries decided at binding (DERIVE-BIND-24) and
check_metrics' first unbound operand."""

from __future__ import annotations

from dataclasses import replace

from pcpconform.format.cnum import wrap
from pcpconform.format.pmtypes import PmType, PmUnits
from pcpconform.oracles.derive.tree import BoundNode, DerivedDesc

__all__ = ["promote", "map_units", "static_guard", "first_unbound"]

# scale steps between adjacent scales: time ns-us-ms-s-min-hour, space x1024, count x10
_TIME_FACTORS = (1000, 1000, 1000, 60, 60)


_PROMOTION = (PmType.DOUBLE, PmType.FLOAT, PmType.U64, PmType.I64, PmType.U32)


def promote(ltype: int, rtype: int) -> int:
    """libpcp's promote[][] for two arithmetic types (DERIVE-BIND-10)."""
    for t in _PROMOTION:
        if ltype == t or rtype == t:
            return t
    return PmType.I32


def map_units(node: BoundNode, desc: DerivedDesc) -> DerivedDesc:
    """libpcp's map_units for + - * /: scale reconciliation (setting the operands' scale
    factors and the DOUBLE type), then the dimensions and scales of the result."""
    left, right = node.left, node.right
    assert left is not None and right is not None
    lu, ru = left.desc.units, right.desc.units
    out = {"dimSpace": desc.units.dimSpace, "dimTime": desc.units.dimTime,
           "dimCount": desc.units.dimCount, "scaleSpace": desc.units.scaleSpace,
           "scaleTime": desc.units.scaleTime, "scaleCount": desc.units.scaleCount,
           "extraUnit": desc.units.extraUnit, "extraScale": desc.units.extraScale}
    ptype = desc.type

    def scale(operand: BoundNode, positive: bool, factor: int) -> None:
        if positive:
            operand.div = wrap(operand.div * factor, 32, True)
        else:
            operand.mul = wrap(operand.mul * factor, 32, True)

    if lu.dimCount and ru.dimCount:
        diff = lu.scaleCount - ru.scaleCount
        if diff > 0:
            for _ in range(diff):
                scale(right, ru.dimCount > 0, 10)
            ptype = PmType.DOUBLE
        elif diff < 0:
            out["scaleCount"] = ru.scaleCount
            for _ in range(-diff):
                scale(left, lu.dimCount > 0, 10)
            ptype = PmType.DOUBLE
    if lu.dimTime and ru.dimTime:
        if lu.scaleTime > ru.scaleTime:
            for k in range(ru.scaleTime, lu.scaleTime):
                scale(right, ru.dimTime > 0, _time_factor(k))
            ptype = PmType.DOUBLE
        elif lu.scaleTime < ru.scaleTime:
            out["scaleTime"] = ru.scaleTime
            for k in range(lu.scaleTime, ru.scaleTime):
                scale(left, ru.dimTime > 0, _time_factor(k))   # sic: the right's sign
            ptype = PmType.DOUBLE
    if lu.dimSpace and ru.dimSpace:
        diff = lu.scaleSpace - ru.scaleSpace
        if diff > 0:
            for _ in range(diff):
                scale(right, ru.dimSpace > 0, 1024)
            ptype = PmType.DOUBLE
        elif diff < 0:
            out["scaleSpace"] = ru.scaleSpace
            for _ in range(-diff):
                scale(left, ru.dimSpace > 0, 1024)             # sic: the right's sign
            ptype = PmType.DOUBLE
    if node.kind == "STAR":
        out["dimCount"] = lu.dimCount + ru.dimCount
        out["dimTime"] = lu.dimTime + ru.dimTime
        out["dimSpace"] = lu.dimSpace + ru.dimSpace
    elif node.kind == "SLASH":
        out["dimCount"] = lu.dimCount - ru.dimCount
        out["dimTime"] = lu.dimTime - ru.dimTime
        out["dimSpace"] = lu.dimSpace - ru.dimSpace
    for axis in ("Count", "Time", "Space"):
        if out["dim" + axis] != 0 and getattr(lu, "dim" + axis) == 0:
            out["scale" + axis] = getattr(ru, "scale" + axis)
    for axis in ("Count", "Time", "Space"):
        if out["dim" + axis] == 0:
            out["scale" + axis] = 0
    # the pmUnits bit-fields are 4 bits wide: dimensions and scales wrap
    units = PmUnits.from_word(PmUnits(**out).to_word())
    return replace(desc, type=ptype, units=units)


def _time_factor(k: int) -> int:
    """libpcp's timefactor[k], k a time scale; past HOUR it reads beyond the array."""
    return _TIME_FACTORS[k] if 0 <= k < len(_TIME_FACTORS) else 1


def static_guard(node: BoundNode) -> int:
    """libpcp's eval_guard: 1/0 for a guard decidable at bind time, else -1."""
    if node.kind == "DEFINED":
        return 1 if node.defined else 0
    if node.kind == "INTEGER":
        return 0 if _atoi(node.text or "0") == 0 else 1
    if node.kind == "NOT":
        assert node.left is not None
        g = static_guard(node.left)
        return g if g == -1 else 1 - g
    if node.kind == "OR":
        assert node.left is not None and node.right is not None
        g = static_guard(node.left)
        return static_guard(node.right) if g == 0 else g
    if node.kind == "AND":
        assert node.left is not None and node.right is not None
        g = static_guard(node.left)
        return static_guard(node.right) if g == 1 else g
    return -1


def _atoi(text: str) -> int:
    """C's atoi on a decimal literal: strtol's value truncated to int."""
    digits = ""
    for ch in text.strip():
        if ch.isdigit():
            digits += ch
        else:
            break
    return wrap(int(digits), 32, True) if digits else 0


def first_unbound(node: BoundNode) -> BoundNode | None:
    """libpcp's check_metrics: the first operand name not found, honouring nested
    ternaries' bindings."""
    if node.left is not None and (node.kind != "COLON" or node.bind in ("left", "both")):
        bad = first_unbound(node.left)
        if bad is not None:
            return bad
    if node.kind == "NAME" and node.pmid is None and node.derived is None:
        return node
    if node.right is not None and (node.kind != "COLON" or node.bind in ("right", "both")):
        return first_unbound(node.right)
    return None
