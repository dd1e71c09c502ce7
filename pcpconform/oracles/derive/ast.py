"""Expression trees of derived metrics, shared by the parser, the binder and the evaluator.

Every node records ``pos``, the offset in the expression text where it starts, and
``text``, the source text libpcp would print for it in a semantic error (a metric name or
a literal as written; "<expr>" for anything else). Operators keep libpcp's spelling.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Node", "Metric", "Integer", "Double", "Unary", "Binary", "Ternary", "Call",
           "Rescale", "MatchInst", "InstSelect", "Spec", "MkConst", "NoValueExpr",
           "ARITHMETIC", "RELATIONAL", "BOOLEAN", "NAME_FUNCTIONS", "EXPR_FUNCTIONS", "indom_of_spec"]

ARITHMETIC = ("+", "-", "*", "/")
RELATIONAL = ("<", "<=", "==", ">=", ">", "!=")
BOOLEAN = ("&&", "||")
#: functions whose argument must be a metric name in every version
NAME_FUNCTIONS = ("avg", "count", "max", "min", "sum", "defined", "anon")
#: functions that take an expression (delta/rate/instant only from 6.3.0)
EXPR_FUNCTIONS = ("delta", "rate", "instant", "scalar")


@dataclass(frozen=True)
class Node:
    pos: int


@dataclass(frozen=True)
class Metric(Node):
    name: str


@dataclass(frozen=True)
class Integer(Node):
    value: int          # 0 .. 2**32-1
    text: str


@dataclass(frozen=True)
class Double(Node):
    value: float
    text: str


@dataclass(frozen=True)
class Unary(Node):
    op: str             # "-" (libpcp's NEG) or "!" (NOT)
    operand: Node


@dataclass(frozen=True)
class Binary(Node):
    op: str             # one of ARITHMETIC, RELATIONAL, BOOLEAN
    left: Node
    right: Node


@dataclass(frozen=True)
class Ternary(Node):
    guard: Node
    then: Node
    other: Node


@dataclass(frozen=True)
class Call(Node):
    func: str           # one of NAME_FUNCTIONS or EXPR_FUNCTIONS
    arg: Node           # a Metric for NAME_FUNCTIONS (and, before 6.3.0, delta/rate/instant)


@dataclass(frozen=True)
class Rescale(Node):
    operand: Node
    units: str          # pmParseUnitsStr text, as written between the quotes


@dataclass(frozen=True)
class MatchInst(Node):
    pattern: str        # POSIX ERE, "\/" already unescaped
    negate: bool
    operand: Node


@dataclass(frozen=True)
class InstSelect(Node):
    operand: Node
    instance: str       # external instance name, escapes removed


@dataclass(frozen=True)
class Spec:
    """mkconst()/novalue() metadata: keys are lower-case type/semantics/units/indom/meta."""

    items: tuple[tuple[str, str], ...] = ()

    def get(self, key: str) -> str | None:
        return next((v for k, v in self.items if k == key), None)


@dataclass(frozen=True)
class MkConst(Node):
    value: Integer | Double
    spec: Spec


@dataclass(frozen=True)
class NoValueExpr(Node):
    spec: Spec


_SCAN_U = r"[ \t\n\v\f\r]*[+-]?[0-9]+"     # C isspace() and ASCII digits


def _scan_u(text: str) -> int:
    """What sscanf's %u stores for a matched field: strtoul's value (ULONG_MAX on overflow,
    negated modulo 2^64 after a minus), cut to 32 bits."""
    text = text.strip()
    negative = text.startswith("-")
    value = int(text.lstrip("+-"))
    value = min(value, 2**64 - 1)
    if negative:
        value = -value % 2**64
    return value & 0xFFFFFFFF


def indom_of_spec(text: str) -> tuple[int, int] | None:
    """indom=DOMAIN.SERIAL as libpcp 7 takes it: (domain, serial), or None when sscanf's
    "%u.%u%n" does not read the whole text or the numbers are out of range."""
    m = re.fullmatch(f"({_SCAN_U})\\.({_SCAN_U})", text)
    if m is None:
        return None
    domain, serial = _scan_u(m.group(1)), _scan_u(m.group(2))
    return (domain, serial) if domain < 511 and serial < (1 << 22) else None
