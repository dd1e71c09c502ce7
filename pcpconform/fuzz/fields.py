"""Field mutations as byte patches: one field of a record, found through the record's
layout (pcpconform.fuzz.layout), set to a value meaningful for its name and type.

A field of fixed size is rewritten in place with its own encoder, and the new record keeps
the old one's layout. A byte string or list that changes size takes the counts and lengths
that describe it along (jsonlen and the JSON, numinst and both instance lists, vlen and the
block's padding), so the change is valid-but-extreme content rather than a framing error;
counts, lengths and tags themselves are the length-field and switch-form mutations' work.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator, Mapping
from typing import Any

from pcpconform.format.pmtypes import Timestamp
from pcpconform.fuzz.layout import BYTES, INT, LIST, VALUE, Field, Layout, evaluated_with, layout, read_int, remember
from pcpconform.fuzz.values import extreme_bytes, field_values

__all__ = ["NoChange", "mutate_fields", "field_values_named"]

#: how many fields one mutation tries before it gives up
_TRIES = 8
#: a repeated list stops at this many elements or bytes (past them a mutant only costs more
#: to write, compress, run and judge)
_LIST_LIMIT = 20000
_LIST_BYTES = 1 << 20

Patch = tuple[int, int, bytes]      # (offset, bytes replaced, new bytes)


class NoChange(Exception):
    """No field of the record took a new value."""


def mutate_fields(schema: Any, payload: bytes, rng: random.Random,
                  related: Mapping[str, list[int]]) -> tuple[bytes, str]:
    """A copy of ``payload`` with one field changed, and what was changed (path and
    value); ``related`` holds values of the same field names elsewhere in the archive."""
    lay = layout(schema, payload)
    n = lay.n
    picks = [i for i in rng.sample(range(n), min(n, 4 * _TRIES)) if _mutable(lay, i)][:_TRIES]
    for i in picks:
        f = lay.field(i)
        for change, what in _proposals(f, payload, rng, related, bool(lay.sizers(i)) and not lay.depends(i)):
            patches = _patches(lay, i, payload, change)
            if patches is None:
                continue
            out = _apply(payload, patches)
            if out == payload:      # a shuffle of equal elements, say
                continue
            if f.kind != LIST and all(len(new) == size for _, size, new in patches):
                remember(schema, out, lay)      # same counts and tags: same layout
            return out, f"{f.path} {what}"
    raise NoChange("no field took a new value")


def _mutable(lay: Layout, i: int) -> bool:
    return not lay.is_structural(i) and (lay.field(i).kind != LIST or bool(lay.field(i).items))


def field_values_named(lay: Layout, payload: bytes, names: tuple[str, ...]) -> dict[str, list[int]]:
    """Values of the INT fields of these names (array elements carry the array's name)."""
    out: dict[str, list[int]] = {name: [] for name in names}
    for f in lay.fields():
        if f.kind == INT and f.name in out:
            out[f.name].append(read_int(f, payload))
    return out


def _proposals(f: Field, payload: bytes, rng: random.Random, related: Mapping[str, list[int]],
               sized: bool) -> Iterator[tuple[Any, str]]:
    """New contents for a field: bytes for INT, VALUE and BYTES, element indexes for LIST."""
    old = payload[f.offset:f.offset + f.size]
    if f.kind == VALUE:
        value = f.con.parse(old)
        if isinstance(value, Timestamp):
            for secs in (-1, -3600, 10 ** 9, -(10 ** 10), 1 << 33):
                try:
                    data = bytes(f.con.build(Timestamp.from_nsec(value.total_nsec() + secs * 1_000_000_000)))
                except Exception:   # construct refuses a value the field cannot hold
                    continue
                yield data, f"{secs:+d}s"
        return
    if f.kind == INT:
        value = read_int(f, payload)
        for number in field_values(f.name, value, related.get(f.name, []), rng)[:10]:
            if number == value:
                continue
            try:
                data = bytes(f.con.build(number))
            except Exception:       # out of the field's range: the next value
                continue
            yield data, f"= {number}"
        return
    if f.kind == BYTES:
        for _ in range(3):
            data = extreme_bytes(old, rng)
            if f.fixed or (f.sizer is not None and not sized):   # its size is not its own: kept
                data = (data + b"\0" * f.size)[:f.size]
                if data == old:
                    continue
            yield data, f"= {len(data)} bytes"
        return
    n = len(f.items)
    if rng.random() < 0.5:
        most = min(_LIST_LIMIT, _LIST_BYTES // max(1, f.items[0][1]))
        yield [0] * min(n * rng.choice((2, 10, 100)), most), "repeated"
    yield list(range(rng.randrange(n))), "shortened"
    yield rng.sample(range(n), n), "shuffled"


def _list_bytes(payload: bytes, f: Field, order: list[int]) -> bytes:
    return b"".join(payload[f.items[k][0]:f.items[k][0] + f.items[k][1]] for k in order)


def _patches(lay: Layout, i: int, payload: bytes, change: Any) -> list[Patch] | None:
    """The byte patches of one change, counts included; None when the schema cannot hold it."""
    f = lay.field(i)
    if f.kind in (INT, VALUE) or (f.kind == BYTES and len(change) == f.size):
        return [(f.offset, f.size, change)]
    if f.kind == BYTES:
        patches: list[Patch] = [(f.offset, f.size, change)]
        measure = len(change)
    else:
        patches = [(f.offset, f.size, _list_bytes(payload, f, change))]
        measure = len(change)
    for c, extra in lay.sizers(i):
        count = lay.field(c)
        new_count = measure + extra
        try:
            patches.append((count.offset, count.size, bytes(count.con.build(new_count))))
        except Exception:           # the count cannot say that many
            return None
        old_count = read_int(count, payload)
        for expr, ctx in lay.guards_of(c):     # a condition or tag it flips is not a patch
            if evaluated_with(expr, ctx, count.name, new_count) != evaluated_with(expr, ctx, count.name, old_count):
                return None
        for x in lay.sized(c):
            if x == i:
                continue
            other = lay.field(x)
            if other.kind == LIST and f.kind == LIST and len(other.items) == len(f.items):
                patches.append((other.offset, other.size, _list_bytes(payload, other, change)))
            elif other.kind == BYTES and other.sizer is not None:
                expr, ctx = other.sizer
                size = int(evaluated_with(expr, ctx, count.name, new_count))
                old = payload[other.offset:other.offset + other.size]
                patches.append((other.offset, other.size, (old + b"~" * size)[:size]))
            else:
                return None
    patches.sort()
    for (a, size, _), (b, _, _) in itertools.pairwise(patches):
        if a + size > b:
            return None             # nested changes: not one patch each
    return patches


def _apply(payload: bytes, patches: list[Patch]) -> bytes:
    out = []
    at = 0
    for offset, size, new in patches:
        out.append(payload[at:offset])
        out.append(new)
        at = offset + size
    out.append(payload[at:])
    return b"".join(out)

