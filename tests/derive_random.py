"""Random expressions over random archives, for tests/differential/test_derive_vs_libpcp.py.

``expressions(pool, archive, profile)`` draws fully parenthesised expressions over an
archive's metrics, mostly well typed; ``schedule_of`` a forward INTERP schedule. The
strategy steers around a few inputs known to kill libpcp (DERIVE-DEV-3, -8, -9, -12);
others are found by the comparison itself (tests/differential/libpcp/crashes.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hypothesis import assume
from hypothesis import strategies as st

from pcpconform.errors import DeriveSemanticError, DeriveSyntaxError, UnitsError
from pcpconform.format.pmtypes import PmType, PmUnits, Timestamp
from pcpconform.io.archive import Archive
from pcpconform.oracles.derive.bind import bind
from pcpconform.oracles.derive.parser import parse
from pcpconform.oracles.derive.units import parse_units

__all__ = ["Pool", "pool_of", "expressions", "schedule_of"]

_REGEXES = ["a", "^a", "b$", "[[:digit:]]", "^[a-m]", ".", "x|y", "^$", "[0-9]+"]


@dataclass
class Pool:
    """What the expression strategy may use: the archive's metrics by kind."""

    numeric: list[str]
    other: list[str]
    indom_metrics: dict[str, list[str]]       # metric -> its instance names


def pool_of(archive: Archive) -> Pool:
    numeric: list[str] = []
    other: list[str] = []
    indoms: dict[str, list[str]] = {}
    for d in archive.descs():
        name = d.names[0]
        (numeric if d.type in (0, 1, 2, 3, 4, 5) else other).append(name)
        if not d.indom.is_null and d.type in (0, 1, 2, 3, 4, 5):
            names = {n for r in archive.indom_history(d.indom) for n in r.instances.values()}
            indoms[name] = sorted(names)
    return Pool(numeric, other, indoms)


def _overflows(a: PmUnits, text: str) -> bool:
    """Whether pmConvScale's 64-bit factors overflow between ``a`` and ``text``'s units
    (libpcp then divides by zero: DERIVE-DEV-9)."""
    try:
        b = parse_units(text)[0]
    except UnitsError:
        return False
    scale = {"Space": 1024, "Time": 1000, "Count": 10}
    big = 0
    for axis, base in scale.items():
        dim = getattr(a, "dim" + axis)
        steps = abs(getattr(a, "scale" + axis) - getattr(b, "scale" + axis))
        big += abs(dim) * (steps + 4) * base.bit_length()
    return big >= 63


def _units_like(draw: st.DrawFn, units: PmUnits) -> str:
    """A units string with the dimensions of ``units`` and random scales."""
    parts = []
    for dim, words in ((units.dimSpace, ["byte", "Kbyte", "Mbyte", "Gbyte"]),
                       (units.dimTime, ["ns", "us", "ms", "sec", "min", "hour"]),
                       (units.dimCount, ["count", "count x 10", "count x 10^3"])):
        if dim:
            word = draw(st.sampled_from(words))
            parts.append(word if dim == 1 else f"{word}^{dim}")
    return " ".join(parts)


@st.composite
def expressions(draw: st.DrawFn, pool: Pool, archive: Archive, profile: Any,
                depth: int = 3) -> str:
    """An expression over the archive's metrics, fully parenthesised. Operands are chosen
    to be mostly well typed; whatever does not bind is compared as an error."""
    def metric() -> str:
        return draw(st.sampled_from(pool.numeric)) if pool.numeric else "1"

    def desc_of(text: str) -> Any:
        try:
            return bind(parse(text, profile), "d.tmp", archive, profile).desc
        except (DeriveSemanticError, DeriveSyntaxError):
            return None

    def leaf() -> str:
        choice = draw(st.integers(0, 11))
        if choice <= 4 or not pool.numeric:
            return metric() if pool.numeric else "1"
        if choice == 5:
            return str(draw(st.sampled_from([0, 1, 2, 7, 1000, 4294967295])))
        if choice == 6:
            return draw(st.sampled_from(["0.5", "1.5", "2.", ".25", "1000.0"]))
        if choice == 7:
            func = draw(st.sampled_from(["sum", "avg", "min", "max", "count"]))
            return f"{func}({metric()})"
        if choice == 8:
            func = draw(st.sampled_from(["rate", "delta", "instant"]))
            return f"{func}({metric()})"
        if choice == 9 and pool.indom_metrics:
            m = draw(st.sampled_from(sorted(pool.indom_metrics)))
            inst = draw(st.sampled_from(pool.indom_metrics[m] + ["nosuch"]))
            return f"{m}[{inst}]"
        if choice == 10 and pool.indom_metrics:
            m = draw(st.sampled_from(sorted(pool.indom_metrics)))
            bang = draw(st.sampled_from(["", "!"]))
            return f"matchinst({bang}/{draw(st.sampled_from(_REGEXES))}/, {m})"
        name = draw(st.sampled_from(pool.numeric + ["no.such"]))
        return f"defined({name})"

    def expr(level: int) -> str:
        if level == 0 or draw(st.integers(0, 3)) == 0:
            return leaf()
        kind = draw(st.integers(0, 9))
        if kind <= 3:
            left = expr(level - 1)
            ld = desc_of(left)
            op = draw(st.sampled_from(["+", "-", "*", "/", "<", ">=", "==", "!=", "&&", "||"]))
            if op in ("+", "-") and ld is not None and draw(st.booleans()):
                # the same dimensions: rescale a metric like the left operand
                target = _units_like(draw, ld.units)
                right = f"rescale({metric()}, \"{target}\")"
                right = right if desc_of(right) and not any(
                    _overflows(desc_of(m).units, target) for m in pool.numeric) \
                    else expr(level - 1)
            else:
                right = expr(level - 1)
            return f"({left} {op} {right})"
        if kind == 4:
            inner = expr(level - 1)
            d = desc_of(inner)
            if (d is not None and d.type in (PmType.I32, PmType.U32)) or draw(st.booleans()):
                return f"(!{inner})"
            return f"(-{inner})"
        if kind == 5:
            guard = expr(level - 1)
            then = expr(level - 1)
            d = desc_of(then)
            other = then if d is None or draw(st.booleans()) else expr(level - 1)
            if profile.novalue and draw(st.integers(0, 3)) == 0:
                other = "novalue()"             # never on the left: DERIVE-DEV-3 crash
            return f"({guard} ? {then} : {other})"
        if kind == 6:
            inner = expr(level - 1)
            d = desc_of(inner)
            target = _units_like(draw, d.units) if d is not None else ""
            if d is None or _overflows(d.units, target):
                return inner
            return f"rescale({inner}, \"{target}\")"
        if kind == 7 and profile.expr_args:
            func = draw(st.sampled_from(["rate", "delta"]))
            inner = expr(level - 1)
            if "instant(" in inner or "matchinst(" in inner:   # DERIVE-DEV-8, -12 crash
                return inner
            return f"{func}({inner})"
        if kind == 8 and profile.instance_fixes:
            inner = expr(level - 1)
            names = [n for insts in pool.indom_metrics.values() for n in insts] or ["x"]
            inst = draw(st.sampled_from(names))
            return draw(st.sampled_from([f"scalar({inner})", f"({inner})[{inst}]"]))
        return leaf()

    return expr(depth)


def schedule_of(draw: Callable[..., Any], archive: Archive) -> tuple[Timestamp, int, int]:
    times = [r.timestamp for r in archive.results()]
    lo, hi = times[0].total_nsec(), times[-1].total_nsec()
    span = max(hi - lo, 1)
    start = lo + draw(st.integers(-2 * 10**9, span + 10**9), label="start offset ns") \
        if draw(st.booleans()) else lo
    count = draw(st.integers(3, 16), label="count")
    # mostly steps that cover the archive, sometimes any step
    step = draw(st.sampled_from([max(span // (count - 1), 1), max(span // count, 1)])
                | st.integers(1, max(span // 3, 1)) | st.sampled_from([10**9, 250_000_000]),
                label="delta ns")
    fetches = [start + k * step for k in range(count)]
    # INTERP-EOL-2: the 1 ms edges of the archive are not modelled
    assume(not any(lo - 2_000_000 <= t < lo or hi < t <= hi + 2_000_000 for t in fetches))
    return Timestamp.from_nsec(start), step, count
