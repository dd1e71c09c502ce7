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
    Adapter,
    Array,
    Bytes,
    Computed,
    Const,
    Construct,
    Container,
    FixedSized,
    FocusedSeq,
    FormatField,
    GreedyBytes,
    IfThenElse,
    ListContainer,
    Pass,
    Prefixed,
    Renamed,
    Struct,
    Switch,
)
from construct.core import BytesInteger, evaluate

from pcpconform.extra import require
from pcpconform.format.schema.common import Framed, RemainingBytes, ToEnd

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
    return st.composite(lambda draw: _draw(draw, con, Container(), None))()


def _int_range(fmt: str) -> tuple[int, int]:
    code = fmt.lstrip("<>=!")
    size = struct.calcsize("<" + code)
    if code.isupper():
        return 0, (1 << (8 * size)) - 1
    return -(1 << (8 * size - 1)), (1 << (8 * size - 1)) - 1


def _draw(draw: Any, con: Construct, ctx: Container, name: str | None) -> Any:
    if isinstance(con, Renamed):
        return _draw(draw, con.subcon, ctx, con.name)
    if isinstance(con, Struct):
        obj = Container()
        inner = Container(_=ctx)
        for sub in con.subcons:
            value = _draw(draw, sub, inner, sub.name)
            if sub.name:
                inner[sub.name] = value
                obj[sub.name] = value
        return obj
    if isinstance(con, Computed):
        return con.func(ctx) if callable(con.func) else con.func
    if isinstance(con, Const):
        return con.value
    if isinstance(con, Adapter):
        raw = _draw(draw, con.subcon, ctx, name)
        return con._decode(raw, ctx, "(generate)")
    if isinstance(con, FormatField):
        if con.fmtstr[-1] in "fd":
            return draw(st.floats(width=32 if con.fmtstr[-1] == "f" else 64, allow_nan=False))
        lo, hi = _int_range(con.fmtstr)
        if name in SIZE_FIELDS:
            a, b = SIZE_FIELDS[name]
            return draw(st.integers(max(a, lo), min(b, hi)))
        return draw(st.one_of(st.integers(lo, hi), st.integers(0, 16)))
    if isinstance(con, BytesInteger):
        hi = (1 << (8 * con.length)) - 1
        if name in SIZE_FIELDS:
            a, b = SIZE_FIELDS[name]
            return draw(st.integers(a, min(b, hi)))
        return draw(st.integers(0, hi))
    if isinstance(con, Bytes):
        length = evaluate(con.length, ctx)
        if length < 0:
            from hypothesis import reject
            reject()
        return draw(st.binary(min_size=length, max_size=length))
    if isinstance(con, (RemainingBytes, type(GreedyBytes))):
        return draw(st.binary(max_size=8))
    if isinstance(con, Array):
        count = evaluate(con.count, ctx)
        return ListContainer(_draw(draw, con.subcon, ctx, None) for _ in range(count))
    if con is Pass:
        return None
    if isinstance(con, IfThenElse):
        branch = con.thensubcon if evaluate(con.condfunc, ctx) else con.elsesubcon
        return _draw(draw, branch, ctx, name)
    if isinstance(con, Switch):
        key = evaluate(con.keyfunc, ctx)
        return _draw(draw, con.cases.get(key, con.default), ctx, name)
    if isinstance(con, Prefixed):
        if isinstance(con.subcon, type(GreedyBytes)):
            return draw(st.binary(max_size=12))
        return _draw(draw, con.subcon, ctx, name)
    if isinstance(con, (ToEnd,)):
        return ListContainer(_draw(draw, con.subcon, ctx, None)
                             for _ in range(draw(st.integers(0, _SMALL_LIST))))
    if isinstance(con, Framed):
        return _draw(draw, con.payload, ctx, name)
    if isinstance(con, FixedSized):
        return _draw(draw, con.subcon, ctx, name)
    if isinstance(con, FocusedSeq) and con.parsebuildfrom == "items":
        # PrefixedArray: the count is rebuilt from the list, so draw the list
        items = next(sub for sub in con.subcons if sub.name == "items").subcon
        return ListContainer(_draw(draw, items.subcon, ctx, None)
                             for _ in range(draw(st.integers(0, _SMALL_LIST))))
    raise TypeError(f"no strategy for {con!r} (field {name})")
