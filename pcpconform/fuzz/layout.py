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

import bisect
import struct
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from construct import (
    BytesInteger,
    Computed,
    Construct,
    FocusedSeq,
    FormatField,
    Renamed,
)

from pcpconform.format.schema.visit import SchemaVisitor

__all__ = ["INT", "BYTES", "VALUE", "LIST", "Field", "Layout", "LayoutError", "layout", "remember", "read_int",
           "evaluated_with"]

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


class Layout:
    """Every field of one record, by index (``field(i)``, ``n`` of them): plain fields,
    and runs of list elements that share one shape, whose fields are made when asked for.

    A count sizes fields (``sized``); a sized field knows its counts and ``extra``, the
    count minus the measure (vlen counts its 4-byte header: extra 4); ``is_structural``
    says whether a size, count, condition or tag reads a field."""

    def __init__(self, w: _Walker, size: int) -> None:
        self.entries = tuple(w.entries)
        self.bounds = tuple(w.bounds)
        self.n = w.n
        self.size = size
        self.counts = {c: tuple(v) for c, v in w.counts.items()}
        self.extra = w.extra
        self.structural = frozenset(w.structural)
        self.guards = {c: tuple(v) for c, v in w.guards.items()}
        sized_by: dict[int, list[int]] = {}
        for c, xs in w.counts.items():
            for x in xs:
                sized_by.setdefault(x, []).append(c)
        self.sized_by = {x: tuple(v) for x, v in sized_by.items()}
        self.runs = tuple(e for e in self.entries if isinstance(e, _Run))
        self.count_ids = tuple(self.counts)
        spans = [(w.get(k).offset, w.get(k).size) for k in w.structural]
        for run in self.runs:
            spans.extend((start + rel, n) for start in run.starts for rel, n in run.shape.sig)
        #: reads the bytes of every structural field in one unpack; ``shape`` is what it
        #: read here: a record of the same size whose structural bytes agree has this layout
        self.probe = _probe(sorted(spans))
        self.shape: tuple[bytes, ...] = self.probe.unpack_from(w.data)

    def _locate(self, i: int) -> tuple[Field | _Run, int]:
        k = bisect.bisect_right(self.bounds, i) - 1
        return self.entries[k], i - self.bounds[k]

    def field(self, i: int) -> Field:
        entry, k = self._locate(i)
        return entry if isinstance(entry, Field) else entry.field(k)

    def fields(self) -> Iterator[Field]:
        for entry in self.entries:
            if isinstance(entry, Field):
                yield entry
            else:
                yield from (entry.field(k) for k in range(len(entry)))

    def is_structural(self, i: int) -> bool:
        if i in self.structural:
            return True
        entry, k = self._locate(i)
        return isinstance(entry, _Run) and k % len(entry.shape.protos) in entry.shape.structural

    def sizers(self, i: int) -> list[tuple[int, int]]:
        """(count, extra) for every count that sizes field ``i``."""
        entry, k = self._locate(i)
        if isinstance(entry, Field):
            pairs = [(c, self.extra[(c, i)]) for c in self.sized_by.get(i, ())]
        else:
            base = i - k % len(entry.shape.protos)
            pairs = [(base + c, extra) for c, extra in entry.shape.sizers.get(k % len(entry.shape.protos), ())]
        return [(c, extra) for c, extra in pairs if extra is not None]

    def depends(self, i: int) -> bool:
        """Whether field ``i``'s size depends on a count other than one for one."""
        entry, k = self._locate(i)
        if isinstance(entry, Field):
            return any(self.extra[(c, i)] is None for c in self.sized_by.get(i, ()))
        return any(extra is None for _, extra in entry.shape.sizers.get(k % len(entry.shape.protos), ()))

    def guards_of(self, c: int) -> tuple[tuple[Any, dict[str, Any]], ...]:
        """The conditions and tags that read field ``c`` (with their context)."""
        if c in self.guards:
            return self.guards[c]
        entry, k = self._locate(c)
        if isinstance(entry, Field):
            return ()
        return entry.shape.guards.get(k % len(entry.shape.protos), ())

    def sized(self, c: int) -> tuple[int, ...]:
        """The fields count ``c`` sizes."""
        if c in self.counts:
            return self.counts[c]
        entry, k = self._locate(c)
        if isinstance(entry, Field):
            return ()
        base = c - k % len(entry.shape.protos)
        return tuple(base + x for x in entry.shape.counts.get(k % len(entry.shape.protos), ()))

    def n_counts(self) -> int:
        return len(self.count_ids) + sum(len(r.starts) * len(r.shape.count_list) for r in self.runs)

    def count(self, r: int) -> int:
        """The index of the r-th count (0 <= r < n_counts())."""
        if r < len(self.count_ids):
            return self.count_ids[r]
        r -= len(self.count_ids)
        for run in self.runs:
            per = len(run.shape.count_list)
            if r < len(run.starts) * per:
                e, j = divmod(r, per)
                return run.base + e * len(run.shape.protos) + run.shape.count_list[j]
            r -= len(run.starts) * per
        raise IndexError(r)


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


def _size_with(sizer: tuple[Any, dict[str, Any]], name: str, value: int) -> int:
    """A size expression evaluated with one field of its context set to ``value``."""
    return int(evaluated_with(sizer[0], sizer[1], name, value))


def evaluated_with(expr: Any, ctx: dict[str, Any], name: str, value: int) -> Any:
    """A schema expression evaluated with one field of its context set to ``value``."""
    again = _Ctx(ctx)
    dict.__setitem__(again, name, value)
    return expr(again)


def _int_con(con: Construct) -> Construct | None:
    while isinstance(con, Renamed):
        con = con.subcon
    return con if isinstance(con, (FormatField, BytesInteger)) else None


class _Walker(SchemaVisitor[tuple[int, Any]]):
    """The fields of one record's bytes, by the schema (one visitor of the construct tree)."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.entries: list[Field | _Run] = []
        self.bounds: list[int] = []          # the index of each entry's first field
        self.n = 0
        self.pos: dict[int, int] = {}         # a plain field's index -> its entry
        self.counts: dict[int, list[int]] = {}
        self.extra: dict[tuple[int, int], int | None] = {}
        self.structural: set[int] = set()
        #: a field -> the conditions and tags that read it, with their context
        self.guards: dict[int, list[tuple[Any, _Ctx]]] = {}

    def get(self, i: int) -> Field:
        entry = self.entries[self.pos[i]]
        assert isinstance(entry, Field)
        return entry

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
        self.pos[self.n] = len(self.entries)
        self.entries.append(f)
        self.bounds.append(self.n)
        self.n += 1
        return self.n - 1

    def _sized(self, index: int, counts: list[int], measure: int,
               sizer: tuple[Any, dict[str, Any]] | None = None) -> None:
        """Field ``index`` is sized by ``counts``; ``extra`` (count - measure) is kept
        where the size follows the count one for one, None where it only depends on it
        (the padding after a value block)."""
        for c in counts:
            self.counts.setdefault(c, []).append(index)
            value = self._value(c)
            linear = sizer is None or _size_with(sizer, self.get(c).name, value + 1) == measure + 1
            self.extra[(c, index)] = value - measure if linear else None

    def _guard(self, expr: Any, ctx: _Ctx, used: list[int]) -> None:
        for u in used:
            self.guards.setdefault(u, []).append((expr, ctx))

    def _value(self, index: int) -> int:
        return read_int(self.get(index), self.data)

    def walk(self, con: Construct, at: int, end: int, ctx: _Ctx, path: str, name: str) -> tuple[int, Any]:
        """Walk ``con`` from ``at`` (not past ``end``): the offset after it and its value
        for the context (integers and byte strings; None for the rest)."""
        return self.visit(con, at, end, ctx, path, name)

    def unknown(self, con: Construct, at: int, end: int, ctx: _Ctx, path: str, name: str) -> tuple[int, Any]:
        raise LayoutError(f"{path}: no layout for {type(con).__name__}")

    on_framed = on_fixed_sized = unknown      # never inside a record's payload

    def on_renamed(self, con: Construct, at: int, end: int, ctx: _Ctx, path: str, name: str) -> tuple[int, Any]:
        return self.walk(con.subcon, at, end, ctx, f"{path}/{con.name}" if con.name else path, con.name or name)

    def on_format(self, con: Construct, at: int, end: int, ctx: _Ctx, path: str, name: str) -> tuple[int, Any]:
        size = con.length
        if at + size > end:
            raise LayoutError(f"{path}: needs {size} bytes at {at}, {end - at} left")
        i = self._add(Field(path, name, at, size, INT, con))
        ctx.setdefault("__where__", {})[name] = i
        return at + size, self._value(i)

    on_integer = on_format

    def on_adapter(self, con: Construct, at: int, end: int, ctx: _Ctx, path: str, name: str) -> tuple[int, Any]:
        inner = _int_con(con.subcon)
        if inner is not None:       # pmID, pmInDom, pmUnits: the raw word is the field
            return self.walk(inner, at, end, ctx, path, name)
        try:
            size = con.sizeof()
        except Exception:   # construct's SizeofError: an adapter of no fixed size
            raise LayoutError(f"{path}: no layout for {type(con).__name__}") from None
        if at + size > end:
            raise LayoutError(f"{path}: needs {size} bytes at {at}, {end - at} left")
        self._add(Field(path, name, at, size, VALUE, con))
        return at + size, None

    def on_struct(self, con: Construct, at: int, end: int, ctx: _Ctx, path: str, name: str) -> tuple[int, Any]:
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

    on_focused = on_struct

    def on_choice(self, con: Construct, at: int, end: int, ctx: _Ctx, path: str, name: str) -> tuple[int, Any]:
        cond, used = self._eval(con.condfunc, ctx)
        self._guard(con.condfunc, ctx, used)
        return self.walk(con.thensubcon if cond else con.elsesubcon, at, end, ctx, path, name)

    def on_pass(self, con: Construct, at: int, end: int, ctx: _Ctx, path: str, name: str) -> tuple[int, Any]:
        return at, None

    def on_switch(self, con: Construct, at: int, end: int, ctx: _Ctx, path: str, name: str) -> tuple[int, Any]:
        key, used = self._eval(con.keyfunc, ctx)
        self._guard(con.keyfunc, ctx, used)
        return self.walk(con.cases.get(key, con.default), at, end, ctx, path, name)

    def on_array(self, con: Construct, at: int, end: int, ctx: _Ctx, path: str, name: str) -> tuple[int, Any]:
        count, used = self._eval(con.count, ctx)
        return self._list(con.subcon, at, end, ctx, path, name, used, int(count))

    def on_to_end(self, con: Construct, at: int, end: int, ctx: _Ctx, path: str, name: str) -> tuple[int, Any]:
        return self._list(con.subcon, at, end, ctx, path, name, [], None)

    def on_bytes(self, con: Construct, at: int, end: int, ctx: _Ctx, path: str, name: str) -> tuple[int, Any]:
        size, used = self._eval(con.length, ctx)
        return self._bytes(at, at + int(size), end, ctx, path, name, used,
                           (con.length, ctx) if used else None, not callable(con.length))

    def on_remaining(self, con: Construct, at: int, end: int, ctx: _Ctx, path: str, name: str) -> tuple[int, Any]:
        return self._bytes(at, end, end, ctx, path, name, [], None, False)

    def on_prefixed(self, con: Construct, at: int, end: int, ctx: _Ctx, path: str, name: str) -> tuple[int, Any]:
        after, length = self.walk(Renamed(con.lengthfield, newname="length"), at, end, _Ctx(_=ctx),
                                  f"{path}/length", "length")
        count = self.n - 1
        self.structural.add(count)
        stop = after + int(length)
        if length < 0 or stop > end:
            raise LayoutError(f"{path}: length {length} past the end")
        first = self.n
        done, value = self.walk(con.subcon, after, stop, ctx, path, name)
        if done != stop:
            raise LayoutError(f"{path}: {stop - done} bytes left inside the prefixed field")
        if self.n > first and first in self.pos:
            self._sized(first, [count], self.get(first).size)
        return done, value

    def _bytes(self, at: int, stop: int, end: int, ctx: _Ctx, path: str, name: str, used: list[int],
               sizer: tuple[Any, dict[str, Any]] | None, fixed: bool) -> tuple[int, bytes]:
        if stop < at or stop > end:
            raise LayoutError(f"{path}: {stop - at} bytes at {at}, {end - at} left")
        i = self._add(Field(path, name, at, stop - at, BYTES, sizer=sizer, fixed=fixed))
        self._sized(i, used, stop - at, sizer)
        return stop, self.data[at:stop]

    def _list(self, sub: Construct, at: int, end: int, ctx: _Ctx, path: str, name: str, used: list[int],
              count: int | None) -> tuple[int, None]:
        """A list's elements: the first of each shape walked, the rest of that shape kept
        as a run of start offsets (the elements of a result repeat a few shapes thousands
        of times)."""
        if count is not None and count < 0:
            raise LayoutError(f"{path}: count {count}")
        i = self._add(Field(path, name, at, 0, LIST))
        items: list[tuple[int, int]] = []
        shapes: dict[tuple[Any, ...], _Shape] = {}
        last: _Shape | None = None      # the shape whose probe keys the next element
        run: _Run | None = None
        while (len(items) < count) if count is not None else (at < end):
            start = at
            key = last.key(self.data, start, end) if last is not None else None
            shape = shapes.get(key) if key is not None else None
            if shape is not None:
                if run is None or run.shape is not shape:
                    run = _Run(shape, path, len(items), self.n)
                    self.entries.append(run)
                    self.bounds.append(self.n)
                run.starts.append(start)
                self.n += len(shape.protos)
                at = start + shape.size
            else:
                run = None
                e0, g0 = len(self.entries), self.n
                at, _ = self.walk(sub, at, end, _Ctx(_=ctx), f"{path}/{len(items)}", name)
                if at == start:
                    raise LayoutError(f"{path}: an element of no size")
                made = _Shape.of(self, e0, g0, start, at, f"{path}/{len(items)}")
                if made is not None:
                    k = made.key(self.data, start, end)
                    if k is not None:
                        shapes.setdefault(k, made)
                        last = made
            items.append((start, at - start))
        self.entries[self.pos[i]] = Field(path, name, self.get(i).offset, at - self.get(i).offset, LIST, sub,
                                          tuple(items))
        self._sized(i, used, len(items))
        return at, None


class _Shape:
    """The fields of one list element, relative to its start, for the next elements whose
    counts, lengths and tags hold the same bytes."""

    def __init__(self, w: _Walker, first: int, start: int, stop: int, prefix: str) -> None:
        self.size = stop - start
        last = w.n
        own = [w.get(k) for k in range(first, last)]
        self.protos = [(f.offset - start, f.path[len(prefix):], f.name, f.size, f.kind, f.con,
                        tuple((o - start, n) for o, n in f.items), f.sizer, f.fixed) for f in own]
        self.structural = frozenset(k - first for k in w.structural if first <= k < last)
        #: where the structural fields lie: the probe reads their bytes in one unpack
        self.sig = tuple(sorted((own[k].offset - start, own[k].size) for k in self.structural))
        self.probe = _probe(list(self.sig))
        self.counts = {c - first: tuple(x - first for x in xs) for c, xs in w.counts.items() if first <= c < last}
        self.count_list = tuple(sorted(self.counts))
        self.guards = {c - first: tuple(v) for c, v in w.guards.items() if first <= c < last}
        sizers: dict[int, list[tuple[int, int | None]]] = {}
        for (c, x), extra in w.extra.items():
            if first <= c < last:
                sizers.setdefault(x - first, []).append((c - first, extra))
        self.sizers = {x: tuple(v) for x, v in sizers.items()}

    @classmethod
    def of(cls, w: _Walker, e0: int, first: int, start: int, stop: int, prefix: str) -> _Shape | None:
        """The shape of the element just walked, if it is plain fields sized only from within."""
        if any(isinstance(e, _Run) for e in w.entries[e0:]):
            return None
        if any(c < first and any(x >= first for x in xs) for c, xs in w.counts.items()):
            return None
        return cls(w, first, start, stop, prefix)

    def key(self, data: bytes, start: int, end: int) -> tuple[Any, ...] | None:
        """Where and what the shape's structural fields are in the element at ``start``."""
        if start + self.size > end:
            return None
        return self.sig, self.probe.unpack_from(data, start)

    def field(self, j: int, start: int, prefix: str) -> Field:
        rel, tail, name, size, kind, con, items, sizer, fixed = self.protos[j]
        if items:
            items = tuple((o + start, n) for o, n in items)
        return Field(prefix + tail, name, start + rel, size, kind, con, items, sizer, fixed)


class _Run:
    """List elements in a row that share one shape: their fields are the shape's, moved to
    each element's start, made when asked for."""

    __slots__ = ("base", "first_item", "prefix", "shape", "starts")

    def __init__(self, shape: _Shape, prefix: str, first_item: int, base: int) -> None:
        self.shape, self.prefix, self.first_item, self.base = shape, prefix, first_item, base
        self.starts: list[int] = []

    def __len__(self) -> int:
        return len(self.starts) * len(self.shape.protos)

    def field(self, k: int) -> Field:
        e, j = divmod(k, len(self.shape.protos))
        return self.shape.field(j, self.starts[e], f"{self.prefix}/{self.first_item + e}")


@dataclass
class _Cache:
    """Layouts by (schema, bytes), or why the bytes have none; least recently used dropped
    first, within a count and a byte budget (a layout holds about its record's size)."""

    limit: int = 4096
    budget: int = 64 << 20
    held: int = 0
    entries: OrderedDict[tuple[int, bytes], Layout | str] = field(default_factory=OrderedDict)

    def get(self, key: tuple[int, bytes]) -> Layout | str | None:
        found = self.entries.get(key)
        if found is not None:
            self.entries.move_to_end(key)
        return found

    def put(self, key: tuple[int, bytes], value: Layout | str) -> None:
        if key not in self.entries:
            self.held += 2 * len(key[1])
        self.entries[key] = value
        while self.entries and (len(self.entries) > self.limit or self.held > self.budget):
            (schema, data), dropped = self.entries.popitem(last=False)
            self.held -= 2 * len(data)
            recent = _BY_SIZE.get((schema, len(data)), [])
            if dropped in recent:
                recent.remove(dropped)
                if not recent:
                    del _BY_SIZE[(schema, len(data))]

    def clear(self) -> None:
        self.entries.clear()
        _BY_SIZE.clear()
        self.held = 0


_CACHE = _Cache()
_SCHEMAS: dict[int, Construct] = {}     # keeps every schema keyed by id alive


def _walk(schema: Construct, data: bytes) -> Layout:
    w = _Walker(data)
    end, _ = w.walk(schema, 0, len(data), _Ctx(), "", "")
    if end != len(data):
        raise LayoutError(f"{len(data) - end} bytes after the last field")
    return Layout(w, end)


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

