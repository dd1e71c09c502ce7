"""Where every field of a record lies, read from its schema: a walk of the construct
declaration over a record's bytes that gives each field's path, byte offset, size and
encoder, and which fields size the others (counts, lengths) or select a form (tags,
conditions).

The walk is the schema's own: sizes and counts are evaluated from the declaration's
expressions on a context that notes which fields each expression reads, so no field offset
is written down twice. A layout depends only on a record's shape (its counts and tags), so
a mutation that leaves the shape alone hands the same layout to the new bytes
(``remember``) and the next mutation of that record is a byte patch, not a parse.
"""

from __future__ import annotations

import struct
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from construct import (
    Adapter,
    Array,
    Bytes,
    BytesInteger,
    Computed,
    Construct,
    FocusedSeq,
    FormatField,
    GreedyBytes,
    IfThenElse,
    Pass,
    Prefixed,
    Rebuild,
    Renamed,
    Struct,
    Switch,
)

from pcpconform.format.schema.common import RemainingBytes, ToEnd

__all__ = ["INT", "BYTES", "VALUE", "LIST", "Field", "Layout", "LayoutError", "layout", "remember", "read_int"]

#: field kinds: an integer word; a byte string; a fixed-size adapted value (a timestamp);
#: a list of elements (arrays, value blocks)
INT, BYTES, VALUE, LIST = "int", "bytes", "value", "list"


class LayoutError(Exception):
    """The bytes do not follow the schema (the construct parse would fail too)."""


@dataclass(slots=True)
class Field:
    """One field of a record: ``offset`` and ``size`` in the bytes the layout was made of.

    ``con`` encodes and decodes it (INT: the raw integer construct; VALUE: the adapter);
    ``items`` are a LIST's elements as (offset, size); ``sizer`` recomputes a BYTES field's
    size from its struct's context when a count it reads changes; ``fixed`` marks a byte
    string whose size is a constant of the schema."""

    path: str
    name: str
    offset: int
    size: int
    kind: str
    con: Any = None
    items: tuple[tuple[int, int], ...] = ()
    sizer: tuple[Any, dict[str, Any]] | None = None
    fixed: bool = False


@dataclass(frozen=True)
class Layout:
    """Every field of one record; ``counts`` maps a count's index to the indexes of the
    fields it sizes, with ``extra`` = count - measure (vlen counts its 4-byte header);
    ``structural`` holds every field a size, count, condition or tag reads."""

    fields: tuple[Field, ...]
    counts: dict[int, tuple[int, ...]]
    extra: dict[tuple[int, int], int]
    structural: frozenset[int]
    size: int
    #: a sized field's index -> the counts that size it
    sized_by: dict[int, tuple[int, ...]]
    #: reads the bytes of every structural field in one unpack; ``shape`` is what it read
    #: here: a record of the same size whose structural bytes agree has this layout
    probe: struct.Struct
    shape: tuple[bytes, ...]


_STRUCTS: dict[str, struct.Struct] = {}


def read_int(f: Field, data: bytes | bytearray, base: int = 0) -> int:
    """The raw integer an INT field holds in ``data`` (``base``: where the record starts)."""
    con = f.con
    if isinstance(con, FormatField):
        s = _STRUCTS.get(con.fmtstr) or _STRUCTS.setdefault(con.fmtstr, struct.Struct(con.fmtstr))
        return int(s.unpack_from(data, base + f.offset)[0])
    raw = bytes(data[base + f.offset:base + f.offset + f.size])
    return int.from_bytes(raw, "little" if con.swapped else "big", signed=con.signed)


class _Ctx(dict[str, Any]):
    """A construct context whose reads are noted: the fields an expression depends on."""

    reads: list[str] | None = None

    def __getitem__(self, key: str) -> Any:
        if self.reads is not None:
            self.reads.append(key)
        return dict.__getitem__(self, key)

    def __getattr__(self, key: str) -> Any:
        try:
            return self[key]
        except KeyError:
            raise AttributeError(key) from None


def _int_con(con: Construct) -> Construct | None:
    while isinstance(con, Renamed):
        con = con.subcon
    return con if isinstance(con, (FormatField, BytesInteger)) else None


class _Walker:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.fields: list[Field] = []
        self.counts: dict[int, list[int]] = {}
        self.extra: dict[tuple[int, int], int] = {}
        self.structural: set[int] = set()

    def _eval(self, expr: Any, ctx: _Ctx) -> tuple[Any, list[int]]:
        """An expression's value and the indexes of the fields it read."""
        if not callable(expr):
            return expr, []
        ctx.reads = []
        try:
            value = expr(ctx)
        except (KeyError, AttributeError, TypeError) as exc:
            raise LayoutError(f"schema expression failed: {exc}") from None
        finally:
            reads, ctx.reads = ctx.reads, None
        where = ctx.get("__where__", {})
        used = [where[name] for name in reads if name in where]
        self.structural.update(used)
        return value, used

    def _add(self, f: Field) -> int:
        self.fields.append(f)
        return len(self.fields) - 1

    def _sized(self, index: int, counts: list[int], measure: int) -> None:
        for c in counts:
            self.counts.setdefault(c, []).append(index)
            self.extra[(c, index)] = self._value(c) - measure

    def _value(self, index: int) -> int:
        return read_int(self.fields[index], self.data)

    def walk(self, con: Construct, at: int, end: int, ctx: _Ctx, path: str, name: str) -> tuple[int, Any]:
        """Walk ``con`` from ``at`` (not past ``end``): the offset after it and its value
        for the context (integers and byte strings; None for the rest)."""
        if isinstance(con, Renamed):
            return self.walk(con.subcon, at, end, ctx, f"{path}/{con.name}" if con.name else path,
                             con.name or name)
        raw = _int_con(con)
        if raw is not None:
            size = raw.length
            if at + size > end:
                raise LayoutError(f"{path}: needs {size} bytes at {at}, {end - at} left")
            i = self._add(Field(path, name, at, size, INT, raw))
            ctx.setdefault("__where__", {})[name] = i
            return at + size, self._value(i)
        if isinstance(con, Adapter):
            inner = _int_con(con.subcon)
            if inner is not None:
                return self.walk(Renamed(inner, newname=None), at, end, ctx, path, name)
            try:
                size = con.sizeof()
            except Exception:   # construct's SizeofError: an adapter of no fixed size
                raise LayoutError(f"{path}: no layout for {type(con).__name__}") from None
            if at + size > end:
                raise LayoutError(f"{path}: needs {size} bytes at {at}, {end - at} left")
            self._add(Field(path, name, at, size, VALUE, con))
            return at + size, None
        if isinstance(con, (Struct, FocusedSeq)):
            inner_ctx = _Ctx(_=ctx)
            for sub in con.subcons:
                if isinstance(sub.subcon if isinstance(sub, Renamed) else sub, Computed):
                    continue
                # a FocusedSeq (PrefixedArray) reads as its focus: the focus keeps the path
                focus = isinstance(con, FocusedSeq) and sub.name == con.parsebuildfrom
                at, value = self.walk(sub.subcon if focus else sub, at, end, inner_ctx, path, name)
                if sub.name:
                    dict.__setitem__(inner_ctx, sub.name, value)
            return at, None
        if isinstance(con, Rebuild):
            return self.walk(con.subcon, at, end, ctx, path, name)
        if isinstance(con, IfThenElse):
            cond, _ = self._eval(con.condfunc, ctx)
            return self.walk(con.thensubcon if cond else con.elsesubcon, at, end, ctx, path, name)
        if con is Pass:
            return at, None
        if isinstance(con, Switch):
            key, _ = self._eval(con.keyfunc, ctx)
            return self.walk(con.cases.get(key, con.default), at, end, ctx, path, name)
        if isinstance(con, Array):
            count, used = self._eval(con.count, ctx)
            return self._list(con.subcon, at, end, ctx, path, name, used, int(count))
        if isinstance(con, ToEnd):
            return self._list(con.subcon, at, end, ctx, path, name, [], None)
        if isinstance(con, Bytes):
            size, used = self._eval(con.length, ctx)
            return self._bytes(at, at + int(size), end, ctx, path, name, used,
                               (con.length, ctx) if used else None, not callable(con.length))
        if con is GreedyBytes or isinstance(con, RemainingBytes):
            return self._bytes(at, end, end, ctx, path, name, [], None, False)
        if isinstance(con, Prefixed):
            after, length = self.walk(Renamed(con.lengthfield, newname="length"), at, end, _Ctx(_=ctx),
                                      f"{path}/length", "length")
            count = len(self.fields) - 1
            self.structural.add(count)
            stop = after + int(length)
            if length < 0 or stop > end:
                raise LayoutError(f"{path}: length {length} past the end")
            first = len(self.fields)
            done, value = self.walk(con.subcon, after, stop, ctx, path, name)
            if done != stop:
                raise LayoutError(f"{path}: {stop - done} bytes left inside the prefixed field")
            if len(self.fields) > first:
                self._sized(first, [count], self.fields[first].size)
            return done, value
        raise LayoutError(f"{path}: no layout for {type(con).__name__}")

    def _bytes(self, at: int, stop: int, end: int, ctx: _Ctx, path: str, name: str, used: list[int],
               sizer: tuple[Any, dict[str, Any]] | None, fixed: bool) -> tuple[int, bytes]:
        if stop < at or stop > end:
            raise LayoutError(f"{path}: {stop - at} bytes at {at}, {end - at} left")
        i = self._add(Field(path, name, at, stop - at, BYTES, sizer=sizer, fixed=fixed))
        self._sized(i, used, stop - at)
        return stop, self.data[at:stop]

    def _list(self, sub: Construct, at: int, end: int, ctx: _Ctx, path: str, name: str, used: list[int],
              count: int | None) -> tuple[int, None]:
        """A list's elements: the first of each shape walked, the rest of that shape stamped
        from it (the elements of a result repeat a few shapes thousands of times)."""
        if count is not None and count < 0:
            raise LayoutError(f"{path}: count {count}")
        i = self._add(Field(path, name, at, 0, LIST))
        items: list[tuple[int, int]] = []
        shapes: dict[tuple[Any, ...], _Shape] = {}
        shape: _Shape | None = None
        while (len(items) < count) if count is not None else (at < end):
            start = at
            if shape is not None:
                key = shape.key(self.data, start, end)
                shape = shapes.get(key) if key is not None else None
            if shape is not None:
                shape.stamp(self, start, f"{path}/{len(items)}")
                at = start + shape.size
            else:
                first = len(self.fields)
                at, _ = self.walk(sub, at, end, _Ctx(_=ctx), f"{path}/{len(items)}", name)
                if at == start:
                    raise LayoutError(f"{path}: an element of no size")
                shape = _Shape(self, first, start, at, f"{path}/{len(items)}")
                k = shape.key(self.data, start, end)
                if k is not None:
                    shapes[k] = shape
            items.append((start, at - start))
        self.fields[i] = Field(path, name, self.fields[i].offset, at - self.fields[i].offset, LIST, sub, tuple(items))
        self._sized(i, used, len(items))
        return at, None


class _Shape:
    """The fields of one list element, relative to its start, to stamp onto the next
    elements whose counts, lengths and tags hold the same bytes."""

    def __init__(self, w: _Walker, first: int, start: int, stop: int, prefix: str) -> None:
        self.size = stop - start
        last = len(w.fields)
        self.protos = [(f.offset - start, f.path[len(prefix):], f.name, f.size, f.kind, f.con,
                        tuple((o - start, n) for o, n in f.items), f.sizer, f.fixed) for f in w.fields[first:]]
        self.structural = [k - first for k in sorted(w.structural) if first <= k < last]
        probes = sorted((w.fields[first + k].offset - start, w.fields[first + k].size) for k in self.structural)
        #: the structural fields' bytes in one unpack (shapes agree when these bytes do)
        self.probe = _probe(probes)
        self.sig = tuple(probes)
        self.counts = [(c - first, [x - first for x in xs]) for c, xs in w.counts.items() if first <= c < last]
        self.extra = [((c - first, x - first), v) for (c, x), v in w.extra.items() if first <= c < last]

    def key(self, data: bytes, start: int, end: int) -> tuple[Any, ...] | None:
        """Where and what the shape's structural fields are in the element at ``start``."""
        if start + self.size > end:
            return None
        return self.sig, self.probe.unpack_from(data, start)

    def stamp(self, w: _Walker, start: int, prefix: str) -> None:
        base = len(w.fields)
        append = w.fields.append
        for rel, tail, name, size, kind, con, items, sizer, fixed in self.protos:
            if items:
                items = tuple((o + start, n) for o, n in items)
            append(Field(prefix + tail, name, start + rel, size, kind, con, items, sizer, fixed))
        if self.structural:
            w.structural.update([base + k for k in self.structural])
        for c, xs in self.counts:
            w.counts.setdefault(base + c, []).extend([base + x for x in xs])
        for (c, x), v in self.extra:
            w.extra[(base + c, base + x)] = v


@dataclass
class _Cache:
    """Layouts by (schema, bytes), or why the bytes have none; least recently used dropped first."""

    limit: int = 4096
    entries: OrderedDict[tuple[int, bytes], Layout | str] = field(default_factory=OrderedDict)

    def get(self, key: tuple[int, bytes]) -> Layout | str | None:
        found = self.entries.get(key)
        if found is not None:
            self.entries.move_to_end(key)
        return found

    def put(self, key: tuple[int, bytes], value: Layout | str) -> None:
        self.entries[key] = value
        if len(self.entries) > self.limit:
            self.entries.popitem(last=False)


_CACHE = _Cache()
_SCHEMAS: dict[int, Construct] = {}     # keeps every schema keyed by id alive


def _walk(schema: Construct, data: bytes) -> Layout:
    w = _Walker(data)
    end, _ = w.walk(schema, 0, len(data), _Ctx(), "", "")
    if end != len(data):
        raise LayoutError(f"{len(data) - end} bytes after the last field")
    sized_by: dict[int, list[int]] = {}
    for c, xs in w.counts.items():
        for x in xs:
            sized_by.setdefault(x, []).append(c)
    probe = _probe(sorted((w.fields[k].offset, w.fields[k].size) for k in w.structural))
    return Layout(tuple(w.fields), {c: tuple(v) for c, v in w.counts.items()}, w.extra,
                  frozenset(w.structural), end, {x: tuple(v) for x, v in sized_by.items()},
                  probe, probe.unpack_from(data))


def _probe(spans: list[tuple[int, int]]) -> struct.Struct:
    """One struct that reads these (offset, size) spans as byte strings."""
    fmt, at = ">", 0
    for offset, size in spans:
        fmt += f"{offset - at}x{size}s" if offset > at else f"{size}s"
        at = offset + size
    return struct.Struct(fmt)


#: recent layouts by (schema, record size): a mutant's record is tried against these first
_BY_SIZE: dict[tuple[int, int], list[Layout]] = {}
_SAME_SIZE = 4


def _same_shape(schema: Construct, data: bytes) -> Layout | None:
    for known in _BY_SIZE.get((id(schema), len(data)), ()):
        if known.probe.unpack_from(data) == known.shape:
            return known
    return None


def layout(schema: Construct, data: bytes) -> Layout:
    """The layout of ``data`` (one record's payload) under ``schema``; LayoutError where
    the bytes do not follow it."""
    key = (id(schema), bytes(data))
    found = _CACHE.get(key)
    if isinstance(found, str):
        raise LayoutError(found)
    if found is None:
        _SCHEMAS[id(schema)] = schema
        found = _same_shape(schema, key[1])
        if found is None:
            try:
                found = _walk(schema, key[1])
            except LayoutError as exc:  # kept too: a damaged record is walked once
                _CACHE.put(key, str(exc))
                raise
            if len(_BY_SIZE) > _CACHE.limit:
                _BY_SIZE.clear()
            recent = _BY_SIZE.setdefault((id(schema), len(key[1])), [])
            recent.insert(0, found)
            del recent[_SAME_SIZE:]
        _CACHE.put(key, found)
    return found


def remember(schema: Construct, data: bytes, same_as: Layout) -> None:
    """``data`` has the shape of a record whose layout is ``same_as`` (a patch changed no
    count, length or tag): its layout is known without a walk."""
    _SCHEMAS[id(schema)] = schema
    _CACHE.put((id(schema), bytes(data)), same_as)

