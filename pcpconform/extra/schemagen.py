"""Hypothesis strategies derived from the construct schemas themselves.

``from_schema(con)`` walks a schema and draws objects that its ``build`` accepts: fields
are drawn in declaration order into a context, so counts (``numinst``), lengths (``vlen``,
``jsonlen``) and conditions (``valfmt`` only when ``numval > 0``) are read back from what
was already drawn, exactly as the parser reads them. Adapters draw their raw form and
decode it, so typed fields (pmID, timestamps, pmUnits) come out typed, and ``Computed``
views are evaluated, so a drawn object equals what parsing its bytes gives.

Fields that size other fields are drawn small (see SIZE_FIELDS) so examples stay small.
Requires hypothesis.
"""

from __future__ import annotations

import struct
from typing import TYPE_CHECKING, Any

from construct import (
    Construct,
    Container,
    GreedyBytes,
    ListContainer,
)
from construct.core import evaluate

from pcpconform.extra import require
from pcpconform.format.schema.visit import SchemaVisitor

if TYPE_CHECKING:
    from hypothesis import strategies as st
else:  # without hypothesis, say which extra provides it
    st = require("hypothesis.strategies", "strategies", "pcpconform.extra.schemagen")

__all__ = ["from_schema", "SIZE_FIELDS"]

#: Fields whose value sizes or counts later fields: drawn from a small range.
SIZE_FIELDS = {
    "numinst": (0, 6), "nsets": (0, 3), "jsonlen": (0, 24), "nlabels": (-2, 4),
    "numval": (-12400, 5), "numpmid": (0, 4), "vlen": (4, 24), "len": (4, 24),
    "nrecords": (0, 3), "nparams": (0, 3),
}
_SMALL_LIST = 4


def from_schema(con: Construct) -> st.SearchStrategy[Any]:
    """A strategy for objects ``con.build`` accepts and ``con.parse`` gives back."""
    return st.composite(lambda draw: _Draw(draw).visit(con, Container(), None))()


def _int_range(fmt: str) -> tuple[int, int]:
    code = fmt.lstrip("<>=!")
    size = struct.calcsize("<" + code)
    if code.isupper():
        return 0, (1 << (8 * size)) - 1
    return -(1 << (8 * size - 1)), (1 << (8 * size - 1)) - 1


class _Draw(SchemaVisitor[Any]):
    """Draws one object of a construct, given the context drawn so far and its field name."""

    def __init__(self, draw: Any) -> None:
        self.draw = draw

    def unknown(self, con: Construct, ctx: Container, name: str | None) -> Any:
        raise TypeError(f"no strategy for {con!r} (field {name})")

    def on_renamed(self, con: Construct, ctx: Container, name: str | None) -> Any:
        return self.visit(con.subcon, ctx, con.name)

    def on_struct(self, con: Construct, ctx: Container, name: str | None) -> Any:
        obj = Container()
        inner = Container(_=ctx)
        for sub in con.subcons:
            value = self.visit(sub, inner, sub.name)
            if sub.name:
                inner[sub.name] = value
                obj[sub.name] = value
        return obj

    def on_computed(self, con: Construct, ctx: Container, name: str | None) -> Any:
        return con.func(ctx) if callable(con.func) else con.func

    def on_const(self, con: Construct, ctx: Container, name: str | None) -> Any:
        return con.value

    def on_adapter(self, con: Construct, ctx: Container, name: str | None) -> Any:
        raw = self.visit(con.subcon, ctx, name)
        return con._decode(raw, ctx, "(generate)")

    def on_format(self, con: Construct, ctx: Container, name: str | None) -> Any:
        draw = self.draw
        if con.fmtstr[-1] in "fd":
            return draw(st.floats(width=32 if con.fmtstr[-1] == "f" else 64, allow_nan=False))
        lo, hi = _int_range(con.fmtstr)
        if name in SIZE_FIELDS:
            a, b = SIZE_FIELDS[name]
            return draw(st.integers(max(a, lo), min(b, hi)))
        return draw(st.one_of(st.integers(lo, hi), st.integers(0, 16)))

    def on_integer(self, con: Construct, ctx: Container, name: str | None) -> Any:
        hi = (1 << (8 * con.length)) - 1
        if name in SIZE_FIELDS:
            a, b = SIZE_FIELDS[name]
            return self.draw(st.integers(a, min(b, hi)))
        return self.draw(st.integers(0, hi))

    def on_bytes(self, con: Construct, ctx: Container, name: str | None) -> Any:
        length = evaluate(con.length, ctx)
        if length < 0:
            from hypothesis import reject
            reject()
        return self.draw(st.binary(min_size=length, max_size=length))

    def on_remaining(self, con: Construct, ctx: Container, name: str | None) -> Any:
        return self.draw(st.binary(max_size=8))

    def on_array(self, con: Construct, ctx: Container, name: str | None) -> Any:
        count = evaluate(con.count, ctx)
        return ListContainer(self.visit(con.subcon, ctx, None) for _ in range(count))

    def on_pass(self, con: Construct, ctx: Container, name: str | None) -> Any:
        return None

    def on_choice(self, con: Construct, ctx: Container, name: str | None) -> Any:
        branch = con.thensubcon if evaluate(con.condfunc, ctx) else con.elsesubcon
        return self.visit(branch, ctx, name)

    def on_switch(self, con: Construct, ctx: Container, name: str | None) -> Any:
        key = evaluate(con.keyfunc, ctx)
        return self.visit(con.cases.get(key, con.default), ctx, name)

    def on_prefixed(self, con: Construct, ctx: Container, name: str | None) -> Any:
        if isinstance(con.subcon, type(GreedyBytes)):
            return self.draw(st.binary(max_size=12))
        return self.visit(con.subcon, ctx, name)

    def on_to_end(self, con: Construct, ctx: Container, name: str | None) -> Any:
        return ListContainer(self.visit(con.subcon, ctx, None)
                             for _ in range(self.draw(st.integers(0, _SMALL_LIST))))

    def on_focused(self, con: Construct, ctx: Container, name: str | None) -> Any:
        if con.parsebuildfrom != "items":
            return self.unknown(con, ctx, name)
        # PrefixedArray: the count is rebuilt from the list, so draw the list
        items = next(sub for sub in con.subcons if sub.name == "items").subcon
        return ListContainer(self.visit(items.subcon, ctx, None)
                             for _ in range(self.draw(st.integers(0, _SMALL_LIST))))

    on_rebuild = unknown                  # never drawn: build computes it
