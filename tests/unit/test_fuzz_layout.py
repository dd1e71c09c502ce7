"""Record layouts for the fuzzer: every field where the construct parse reads it, counts
tied to what they size, a layout reused only for a record of the same shape, and field
mutations that are byte patches which keep the record readable."""

from __future__ import annotations

import contextlib
import random
import struct
from collections.abc import Iterator
from typing import Any

import pytest
from construct import Construct

from pcpconform.corpusgen.invalid.edit import ArchiveEdit
from pcpconform.format.schema import structs
from pcpconform.fuzz import layout as layout_module
from pcpconform.fuzz import mutators
from pcpconform.fuzz.archive_edit import editor
from pcpconform.fuzz.fields import mutate_fields
from pcpconform.fuzz.layout import BYTES, INT, LIST, VALUE, Layout, LayoutError, layout, read_int
from pcpconform.fuzz.mutators import length_field, mutate_archive
from pcpconform.fuzz.seeds import archive_seeds

Record = tuple[str, Construct, bytes]


def _records(name: str) -> Iterator[Record]:
    """(where, schema, payload) of every label, .meta record and result of a seed."""
    ed = editor(dict(archive_seeds())[name])
    for part in sorted(ed.files):
        if part == "index":
            continue
        yield f"{name} {part} label", ed.s.label, bytes(ed.files[part][4:ed.lsize - 4])
        for i in range(1, len(ed.records(part)) + 1):
            _, raw = ed.record(part, i)
            yield f"{name} {part} {i}", ed.s.meta if part == "meta" else ed.s.result, raw[4:-4]


def _at(tree: Any, path: str) -> Any:
    for key in path.strip("/").split("/"):
        tree = tree[int(key)] if isinstance(tree, list) else tree[key]
    return tree


def _sized_names(lay: Layout) -> set[tuple[str, str, int]]:
    out = set()
    for i in range(lay.n):
        for c, extra in lay.sizers(i):
            out.add((lay.field(c).name, lay.field(i).name, extra))
    return out


@pytest.mark.parametrize("seed", [name for name, _ in archive_seeds()])
def test_every_field_is_where_the_construct_parse_reads_it(seed: str) -> None:
    for where, schema, payload in _records(seed):
        tree = schema.parse(payload)
        lay = layout(schema, payload)
        assert lay.size == len(payload), where
        for f in lay.fields():
            if f.path.rsplit("/", 1)[-1] in ("count", "length"):    # prefixes construct folds away
                continue
            value = _at(tree, f.path)
            if f.kind == INT:
                raw = value.to_word() if hasattr(value, "to_word") else int(value)
                assert raw == read_int(f, payload), (where, f.path)
            elif f.kind == BYTES:
                assert bytes(value) == payload[f.offset:f.offset + f.size], (where, f.path)
            elif f.kind == VALUE:
                assert f.con.parse(payload[f.offset:f.offset + f.size]) == value, (where, f.path)
            else:
                assert f.kind == LIST and len(value) == len(f.items), (where, f.path)


def test_large_lists_are_runs_of_one_shape() -> None:
    ed = editor(dict(archive_seeds())["extreme-indom"])
    _, raw = ed.record("0", 1)
    lay = layout(ed.s.result, raw[4:-4])
    assert lay.runs and lay.n > 10000 and len(lay.entries) < 100
    # a field made from a run is the one the walk would have made
    f = lay.field(lay.n - 1)
    assert f.path.startswith("/blocks/") and f.offset + f.size == len(raw) - 8


def test_counts_are_tied_to_what_they_size() -> None:
    found: set[tuple[str, str, int]] = set()
    for seed in ("example-v2", "example-v3", "events-v3"):
        for _, schema, payload in _records(seed):
            found |= _sized_names(layout(schema, payload))
    assert {("numpmid", "vset", 0), ("numval", "vlist", 0), ("vlen", "vbuf", 4), ("numinst", "instlist", 0),
            ("numinst", "offsets", 0), ("jsonlen", "json", 0), ("nlabels", "labels", 0), ("nsets", "sets", 0),
            ("count", "names", 0), ("length", "names", 0)} <= found
    assert all(name not in ("pmid", "sem", "inst", "value") for name, _, _ in found)


def test_a_layout_is_reused_only_for_the_same_shape() -> None:
    ed = editor(dict(archive_seeds())["example-v3"])
    _, raw = ed.record("0", 2)
    payload = bytearray(raw[4:-4])
    lay = layout(ed.s.result, bytes(payload))
    inst = next(f for f in lay.fields() if f.name == "inst")
    numval = next(f for f in lay.fields() if f.name == "numval")
    same = bytearray(payload)
    struct.pack_into(">i", same, inst.offset, 12345)
    assert layout(ed.s.result, bytes(same)) is lay
    other = bytearray(payload)
    struct.pack_into(">i", other, numval.offset, read_int(numval, payload) + 1)
    with contextlib.suppress(LayoutError):      # the walk may also find it damaged
        assert layout(ed.s.result, bytes(other)) is not lay


def test_damaged_records_raise_a_layout_error_every_time() -> None:
    s = structs(3)
    _, raw = editor(dict(archive_seeds())["example-v3"]).record("0", 2)
    payload = bytearray(raw[4:-4])
    struct.pack_into(">i", payload, 12, 0x7FFFFFFF)             # numpmid far past the bytes
    for _ in range(2):
        with pytest.raises(LayoutError):
            layout(s.result, bytes(payload))
    with pytest.raises(LayoutError):
        layout(s.result, bytes(payload[:7]))


def _seed_records() -> list[Record]:
    return [r for seed in ("example-v2", "example-v3", "events-v3", "extreme-names") for r in _records(seed)]


def test_field_mutations_are_patches_that_keep_the_record_readable() -> None:
    records = _seed_records()
    kinds = set()
    for k in range(400):
        rng = random.Random(k)
        where, schema, payload = records[k % len(records)]
        try:
            out, what = mutate_fields(schema, payload, rng, {})
        except Exception as exc:        # NoChange only: nothing else may escape
            assert type(exc).__name__ == "NoChange", (where, exc)
            continue
        path = what.split(" ", 1)[0]
        f = next(f for f in layout(schema, payload).fields() if f.path == path)
        kinds.add(f.kind)
        assert out != payload, (where, what)
        schema.parse(out)               # counts and lengths follow a resized field
        if f.kind in (INT, VALUE) or f.fixed:  # in place: only the field's own bytes change
            changed = [i for i in range(len(out)) if out[i] != payload[i]]
            assert len(out) == len(payload) and f.offset <= changed[0] and changed[-1] < f.offset + f.size
    assert kinds == {INT, BYTES, VALUE, LIST}


def test_length_field_changes_one_count_and_names_it() -> None:
    seed = dict(archive_seeds())["example-v3"]
    named = set()
    for k in range(60):
        ed = editor(seed)
        try:
            note = length_field(ed, random.Random(k), [])
        except mutators.Skip:
            continue
        named.add(note.split()[3])
        changed = [(p, i) for p, data in ed.files.items() for i in range(len(data)) if data[i] != seed[p][i]]
        assert changed and len({p for p, _ in changed}) == 1 and changed[-1][1] - changed[0][1] < 4, note
    assert {"numval", "numpmid"} <= named


def _clear_caches() -> None:
    layout_module._CACHE.clear()
    mutators._related_record.cache_clear()
    mutators._related_meta.cache_clear()


def _chain(seed: str, n: int, clear: bool) -> list[tuple[dict[str, bytes], list[str]]]:
    files = dict(dict(archive_seeds())[seed])
    out = []
    for k in range(n):
        if clear:
            _clear_caches()
        files, notes = mutate_archive(files, random.Random(f"chain:{k}"), [])
        out.append((files, notes))
    return out


@pytest.mark.parametrize("seed", ["example-v3", "extreme-indom"])
def test_mutants_do_not_depend_on_what_the_caches_hold(seed: str) -> None:
    _clear_caches()
    cold = _chain(seed, 25, clear=True)
    warm = _chain(seed, 25, clear=False)
    assert cold == warm


def test_index_offsets_move_as_the_record_editor_moves_them() -> None:
    for name, parts in archive_seeds():
        for part in [p for p in parts if p != "index"]:
            fast, slow = editor(parts), editor(parts)
            for at in (0, 200, 900, 5000):
                for delta in (-4, 7, 100):
                    fast._shift(part, at, delta)
                    ArchiveEdit._shift(slow, part, at, delta)
                    assert fast.files["index"] == slow.files["index"], (name, part, at, delta)
