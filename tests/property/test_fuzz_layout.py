"""The fuzzer's layout walk is the construct parse's twin on any bytes: where one reads a
record the other does, with the same values at the same paths (counts, tags and lengths
damaged at random included), and field mutations leave every seed record readable."""

from __future__ import annotations

import random
import struct
from typing import Any

from construct import Construct
from hypothesis import given, settings
from hypothesis import strategies as st

from pcpconform.fuzz.archive_edit import editor
from pcpconform.fuzz.fields import NoChange, mutate_fields
from pcpconform.fuzz.layout import BYTES, INT, LIST, LayoutError, layout, read_int
from pcpconform.fuzz.seeds import archive_seeds

SEEDS = ("example-v2", "example-v3", "events-v2", "events-v3", "extreme-names")


def _records() -> list[tuple[Construct, bytes]]:
    out = []
    for name in SEEDS:
        ed = editor(dict(archive_seeds())[name])
        for part in sorted(ed.files):
            if part == "index":
                continue
            out.append((ed.s.label, bytes(ed.files[part][4:ed.lsize - 4])))
            for i in range(1, len(ed.records(part)) + 1):
                _, raw = ed.record(part, i)
                out.append((ed.s.meta if part == "meta" else ed.s.result, raw[4:-4]))
    return out


RECORDS = _records()


def _at(tree: Any, path: str) -> Any:
    for key in path.strip("/").split("/"):
        tree = tree[int(key)] if isinstance(tree, list) else tree[key]
    return tree


def _damaged(payload: bytes, words: list[tuple[int, int]], cut: int | None) -> bytes:
    out = bytearray(payload)
    for at, value in words:
        if len(out) >= 4:
            struct.pack_into(">I", out, at % (len(out) - 3), value)
    return bytes(out[:cut] if cut is not None else out)


SMALL = st.sampled_from([0, 1, 2, 3, 4, 5, 7, 8, 12, 16, 0x7FFFFFFF, 0xFFFFFFFF, 0x80000000, 0x0300000C])


@settings(max_examples=300, deadline=None)
@given(st.integers(0, len(RECORDS) - 1), st.lists(st.tuples(st.integers(0, 1 << 16), SMALL), max_size=3),
       st.one_of(st.none(), st.integers(0, 4096)))
def test_the_walk_reads_what_construct_reads(index: int, words: list[tuple[int, int]], cut: int | None) -> None:
    schema, payload = RECORDS[index]
    data = _damaged(payload, words, cut)
    try:
        tree = schema.parse(data)
    except Exception:
        tree = None
    try:
        lay = layout(schema, data)
    except LayoutError:
        assert tree is None, "construct reads a record the walk refuses"
        return
    assert tree is not None, "the walk reads a record construct refuses"
    for f in lay.fields():
        if f.path.rsplit("/", 1)[-1] in ("count", "length"):
            continue
        value = _at(tree, f.path)
        if f.kind == INT:
            assert (value.to_word() if hasattr(value, "to_word") else int(value)) == read_int(f, data), f.path
        elif f.kind == BYTES:
            assert bytes(value) == data[f.offset:f.offset + f.size], f.path
        elif f.kind == LIST:
            assert len(value) == len(f.items), f.path


@settings(max_examples=200, deadline=None)
@given(st.integers(0, len(RECORDS) - 1), st.integers(0, 1 << 30))
def test_field_mutations_keep_records_readable(index: int, seed: int) -> None:
    schema, payload = RECORDS[index]
    try:
        out, _ = mutate_fields(schema, payload, random.Random(seed), {})
    except NoChange:
        return
    assert out != payload
    schema.parse(out)           # counts, lengths and padding follow what changed size
