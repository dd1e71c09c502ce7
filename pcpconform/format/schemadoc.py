"""Describing construct schemas: field rows (offset, size, name, type, docs) for tables.

``struct_rows`` walks a Struct's fields; ``describe`` names a field's type from its
construct (FormatField, BytesInteger, Bytes, Array, If, Switch, PrefixedArray, Prefixed,
Computed, the project's Framed/ToEnd/RemainingBytes and its typed adapters). Comments are
the fields' ``docs`` (``"name" / Int32ub * "doc"``). Offsets stay numeric while every
earlier field has a fixed size and are ``var`` after the first variable-size field.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from construct import (
    Array,
    Computed,
    Construct,
    GreedyBytes,
    IfThenElse,
    Pass,
    Renamed,
)
from construct.expr import ExprMixin

from pcpconform.format.schema import LabelSet, PmLabel, PmValue, PmValueBlock, PmValueSet, event_array
from pcpconform.format.schema.common import (
    PmIDField,
    PmInDomField,
    PmUnitsField,
    TimespecTS16,
    TimestampT3,
    TimevalT2,
)
from pcpconform.format.schema.visit import SchemaVisitor

__all__ = ["Row", "struct_rows", "describe", "field", "element", "fixed_size", "event_structs"]

_FORMATS = {"b": "s8", "B": "u8", "h": "BE16 signed", "H": "BE16 unsigned",
            "i": "BE32 signed", "I": "BE32 unsigned", "l": "BE32 signed", "L": "BE32 unsigned",
            "q": "BE64 signed", "Q": "BE64 unsigned", "f": "BE IEEE-754 single",
            "d": "BE IEEE-754 double"}


@dataclass(frozen=True)
class Row:
    """One line of a field table."""

    offset: str
    size: str
    name: str
    type: str
    doc: str
    note: str = ""      # shown after the field name, e.g. "(tag)"


# -- describing constructs -------------------------------------------------------------

@lru_cache(maxsize=1)
def event_structs() -> dict[str, Construct]:
    """The event-array schemas and their record and parameter structs, built once."""
    out: dict[str, Construct] = {}
    for highres, key in ((False, "event"), (True, "highres")):
        array = event_array(highres)
        record = element(array, "records")
        out[f"{key}-array"] = array
        out[f"{key}-record"] = record
        out[f"{key}-parameter"] = element(record, "params")
    return out


@lru_cache(maxsize=1)
def _type_names() -> dict[int, str]:
    """Display names of the shared typed fields and nested structs, by object identity."""
    names: dict[int, str] = {
        id(TimevalT2): "T2 timestamp (8)", id(TimestampT3): "T3 timestamp (12)",
        id(TimespecTS16): "TS16 timestamp (16)", id(PmIDField): "pmID",
        id(PmInDomField): "pmInDom", id(PmUnitsField): "pmUnits", id(PmValue): "pmValue",
        id(PmValueSet): "pmValueSet", id(PmValueBlock): "pmValueBlock",
        id(LabelSet): "LabelSet", id(PmLabel): "pmLabel",
    }
    ev = event_structs()
    names[id(ev["event-record"])] = names[id(ev["highres-record"])] = "event record"
    names[id(ev["event-parameter"])] = names[id(ev["highres-parameter"])] = "event parameter"
    return names


def _unwrap(con: Construct) -> Construct:
    while isinstance(con, Renamed):
        con = con.subcon
    return con


def field(struct: Construct, name: str) -> Renamed:
    """The named field (a Renamed) of a Struct."""
    for sub in _unwrap(struct).subcons:
        if sub.name == name:
            return sub
    raise KeyError(f"no field {name!r} in {struct!r}")


def element(struct: Construct, name: str) -> Construct:
    """The innermost construct of a field, through Renamed, If and Array wrappers."""
    con = _unwrap(field(struct, name))
    while True:
        if isinstance(con, IfThenElse):
            con = con.thensubcon
        elif isinstance(con, (Array, Renamed)):
            con = con.subcon
        else:
            return con


def _expr(value: object, scope: Sequence[str]) -> str:
    """Readable form of a count, length or condition: a number, a construct ``this``
    expression, or a lambda (named by the sibling fields it reads)."""
    if isinstance(value, int):
        return str(value)
    if isinstance(value, ExprMixin):
        text = re.sub(r"this\['(\w+)'\]", r"\1", str(value))
        text = re.sub(r"(^|\()- ", r"\1-", text)
        return text[1:-1] if text.startswith("(") and text.endswith(")") else text
    code = getattr(value, "__code__", None)
    used = [n for n in (code.co_names if code else ()) if n in scope]
    return ", ".join(used) if used else "computed"


def fixed_size(con: Construct) -> int | None:
    """Size in bytes if the construct has one without context, else None."""
    try:
        return int(con.sizeof())
    except Exception:  # construct raises several error types for "no fixed size"
        return None


class _Describe(SchemaVisitor[str]):
    """The type column of a construct (``scope``: sibling field names, for counts)."""

    def visit(self, con: Construct, *args: Any) -> str:
        named = _type_names().get(id(con))
        return named if named is not None else super().visit(con, *args)

    def unknown(self, con: Construct, *args: Any) -> str:
        return type(con).__name__

    on_rebuild = on_fixed_sized = unknown     # shown by their class name, as the tables do

    def on_format(self, con: Construct, scope: Sequence[str]) -> str:
        code = con.fmtstr.lstrip("<>=!")
        text = _FORMATS.get(code, f"struct '{code}'")
        return str(text if con.fmtstr[0] in ">!" or code in "bB" else text.replace("BE", "LE"))

    def on_integer(self, con: Construct, scope: Sequence[str]) -> str:
        order = "LE" if con.swapped else "BE"
        return f"{order}{8 * con.length} {'signed' if con.signed else 'unsigned'}"

    def on_bytes(self, con: Construct, scope: Sequence[str]) -> str:
        return f"bytes[{_expr(con.length, scope)}]"

    def on_remaining(self, con: Construct, scope: Sequence[str]) -> str:
        return "remaining bytes"

    def on_array(self, con: Construct, scope: Sequence[str]) -> str:
        return f"array of {self.visit(con.subcon, scope)} ({_expr(con.count, scope)})"

    def on_choice(self, con: Construct, scope: Sequence[str]) -> str:
        cond = _expr(con.condfunc, scope)
        then = self.visit(con.thensubcon, scope)
        if con.elsesubcon is Pass:
            if isinstance(con.condfunc, ExprMixin):
                return f"{then}, only if {cond}"
            return f"{then}, depending on {cond}"
        return f"{then} or {self.visit(con.elsesubcon, scope)}, by {cond}"

    def on_switch(self, con: Construct, scope: Sequence[str]) -> str:
        keys = ", ".join(str(k) for k in sorted(con.cases))
        other = self.visit(con.default, scope) if con.default is not None else "error"
        return f"body by {_expr(con.keyfunc, scope)} ({keys}; other: {other})"

    def on_focused(self, con: Construct, scope: Sequence[str]) -> str:
        if [s.name for s in con.subcons] != ["count", "items"]:
            return type(con).__name__
        count = self.visit(field(con, "count").subcon.subcon, ())
        items = _unwrap(field(con, "items"))
        return f"{count} count, then that many × {self.visit(items.subcon, ())}"  # noqa: RUF001 (spec text)

    def on_prefixed(self, con: Construct, scope: Sequence[str]) -> str:
        inner = "bytes" if con.subcon is GreedyBytes else self.visit(con.subcon, ())
        return f"({self.visit(con.lengthfield, ())} length, {inner})"

    def on_to_end(self, con: Construct, scope: Sequence[str]) -> str:
        return f"{self.visit(con.subcon, scope)}, repeated to the end"

    def on_framed(self, con: Construct, scope: Sequence[str]) -> str:
        return f"framed {self.visit(con.payload, scope)}"

    def on_struct(self, con: Construct, scope: Sequence[str]) -> str:
        return "struct"


def describe(con: Construct, scope: Sequence[str] = ()) -> str:
    """The type column for a construct (``scope``: sibling field names, for counts)."""
    return _Describe().visit(con, scope)


def struct_rows(struct: Construct, *, start: int | None = 0) -> list[Row]:
    """One row per stored field of a Struct (Computed views are not stored, so skipped)."""
    subs = [s for s in _unwrap(struct).subcons if not isinstance(_unwrap(s), Computed)]
    scope = [s.name for s in subs if s.name]
    rows, offset = [], start
    for sub in subs:
        size = fixed_size(sub)
        rows.append(Row("var" if offset is None else str(offset),
                        "var" if size is None else str(size), sub.name or "",
                        describe(sub, scope), " ".join((sub.docs or "").split())))
        offset = None if offset is None or size is None else offset + size
    return rows
