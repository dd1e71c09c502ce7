"""Mutations of an archive held as bytes, chosen per field, per record and per file.

Field mutations parse a record with its schema (pcpconform.format.schema, through
ArchiveEdit), change one leaf to a value meaningful for its name and type, and build the
record again, keeping the framing; word mutations change a length, count or offset in place,
so that it disagrees with what it describes. Every mutation returns a short description;
one that finds nothing to change raises ``Skip``.
"""

from __future__ import annotations

import bz2
import functools
import gzip
import lzma
import random
import struct
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from construct import ListContainer

from pcpconform.check.corpus.edit import ArchiveEdit
from pcpconform.format.pmtypes import Timestamp
from pcpconform.fuzz.archive_edit import editor
from pcpconform.fuzz.values import extreme_bytes, field_values

__all__ = ["Skip", "ARCHIVE_MUTATORS", "mutate_archive", "leaves"]

Files = dict[str, bytes]


class Skip(Exception):
    """The mutation has nothing to work on in this archive."""


# -- walking a parsed record ---------------------------------------------------------------

Leaf = tuple[Any, Any, Any, str]     # (holder, key, value, path)


def leaves(node: Any, path: str = "") -> Iterator[Leaf]:
    """Every leaf of a parsed record: (holder, key, value, path), holder[key] == value."""
    items: Iterator[tuple[Any, Any]]
    if isinstance(node, dict):
        items = ((k, v) for k, v in node.items() if not str(k).startswith("_"))
    elif isinstance(node, list):
        items = enumerate(node)
    else:
        return
    for key, value in list(items):
        here = f"{path}/{key}"
        if isinstance(value, (dict, list)):
            yield node, key, value, here        # lists themselves are mutable leaves too
            yield from leaves(value, here)
        else:
            yield node, key, value, here


def _siblings_equal(holder: Any, key: Any, n: int) -> list[Any]:
    if not isinstance(holder, dict):
        return []
    return [k for k, v in holder.items() if k != key and type(v) is int and v == n]


def _retype(old: Any, new: int) -> Any:
    if type(old) is int:
        return new
    try:
        return type(old)(new)
    except (TypeError, ValueError):
        return new


def _related(tree: Any, name: str) -> list[int]:
    return [int(v) for _, k, v, _ in leaves(tree) if k == name and isinstance(v, int) and not isinstance(v, bool)]


def mutate_tree(tree: Any, rng: random.Random, related: Mapping[str, list[int]],
                build: Callable[[Any], bytes]) -> tuple[bytes, str]:
    """Change one leaf of a parsed record and build it again; ``related`` holds values of
    the same field names elsewhere in the archive (pmIDs, indoms, instances in force)."""
    candidates = [leaf for leaf in leaves(tree) if not str(leaf[1]).endswith("_raw")]
    rng.shuffle(candidates)
    for holder, key, value, path in candidates[:8]:
        name = str(key)
        for new, what in _proposals(holder, key, value, name, rng, related):
            saved = {k: holder[k] for k in (holder.keys() if isinstance(holder, dict) else ())}
            saved_list = list(holder) if isinstance(holder, list) else None
            try:
                holder[key] = new
                if isinstance(holder, dict):
                    _fix_counts(holder, key, value, new)
                return build(tree), f"{path} {what}"
            except Exception:       # construct refuses the value: try the next one
                if isinstance(holder, dict):
                    holder.clear()
                    holder.update(saved)
                elif saved_list is not None:
                    holder[:] = saved_list
    raise Skip("no leaf took a new value")


def _proposals(holder: Any, key: Any, value: Any, name: str, rng: random.Random,
               related: Mapping[str, list[int]]) -> Iterator[tuple[Any, str]]:
    if isinstance(value, Timestamp):
        for secs in (-1, -3600, 10 ** 9, -(10 ** 10), 1 << 33):
            yield Timestamp.from_nsec(value.total_nsec() + secs * 1_000_000_000), f"{secs:+d}s"
        return
    if isinstance(value, bool):
        return
    if isinstance(value, int):
        for number in field_values(name, int(value), related.get(name, []), rng)[:10]:
            if number != value:
                yield _retype(value, number), f"= {number}"
        return
    if isinstance(value, (bytes, bytearray)):
        for _ in range(3):
            data = extreme_bytes(bytes(value), rng)
            yield data, f"= {len(data)} bytes"
        return
    if isinstance(value, list) and value:
        n = len(value)
        if rng.random() < 0.5:
            yield ListContainer([value[0]] * min(n * rng.choice((2, 10, 100)), 20000)), "repeated"
        yield ListContainer(value[: rng.randrange(n)]), "shortened"
        yield ListContainer(rng.sample(list(value), n)), "shuffled"


def _fix_counts(holder: dict[str, Any], key: Any, old: Any, new: Any) -> None:
    """Keep counts and lengths of the same holder consistent with a changed list or string,
    so the change is valid-but-extreme content rather than a framing error."""
    if isinstance(old, (list, bytes, bytearray)) and isinstance(new, (list, bytes, bytearray)):
        for k in _siblings_equal(holder, key, len(old)):
            holder[k] = len(new)
        for k in _siblings_equal(holder, key, len(old) + 4):     # vlen counts its header
            holder[k] = len(new) + 4


# -- helpers over the archive --------------------------------------------------------------

def _parts(ed: ArchiveEdit, volumes_only: bool = False) -> list[str]:
    parts = [p for p in ed.files if p.isdigit()]
    return parts if volumes_only else [p for p in ed.files if p in ("meta", "index") or p.isdigit()]


def _related_in(ed: ArchiveEdit) -> dict[str, list[int]]:
    return {k: list(v) for k, v in _related_meta(bytes(ed.files.get("meta", b"")), ed.version).items()}


@functools.lru_cache(maxsize=256)
def _related_meta(meta: bytes, version: int) -> dict[str, list[int]]:
    """pmIDs, indoms, instances and idents the metadata holds (cached: the queue's inputs
    share their .meta files often)."""
    ed = editor({"meta": meta})
    out: dict[str, list[int]] = {"pmid": [], "indom": [], "inst": [], "ident": []}
    for i in range(1, min(len(ed.records("meta")), 200) + 1):
        try:
            rec = ed.meta(i)
        except Exception:
            continue
        for name in out:
            out[name].extend(_related(rec, name))
    out["pmid"] += [0, 0xFFFFFFFF, (60 << 22) | 99, (511 << 22) | 1]
    out["indom"] += [0xFFFFFFFF, (61 << 22) | 1]
    out["ident"] += out["pmid"] + out["indom"]
    return out


def _pick_record(ed: ArchiveEdit, part: str, rng: random.Random) -> tuple[int, int, int]:
    recs = ed.records(part)
    if not recs:
        raise Skip(f"{part} has no records")
    i = rng.randrange(len(recs))
    return i + 1, recs[i][0], recs[i][1]


# -- field mutations -----------------------------------------------------------------------

def meta_field(ed: ArchiveEdit, rng: random.Random, donors: list[Files]) -> str:
    i, _, _ = _pick_record(ed, "meta", rng)
    rec = ed.meta(i)
    data, what = mutate_tree(rec, rng, _related_in(ed), lambda t: bytes(ed.s.meta_record.build(t)))
    ed.replace("meta", i, data)
    return f"meta record {i}{what}"


def result_field(ed: ArchiveEdit, rng: random.Random, donors: list[Files]) -> str:
    part = rng.choice(_parts(ed, volumes_only=True) or ["0"])
    i, _, length = _pick_record(ed, part, rng)
    if length <= ed.s.mark_size:
        raise Skip("a mark")
    _, raw = ed.record(part, i)
    tree = ed.s.result.parse(raw[4:-4])

    def build(t: Any) -> bytes:
        payload = bytes(ed.s.result.build(t))
        word = struct.pack(">I", len(payload) + 8)
        return word + payload + word

    data, what = mutate_tree(tree, rng, _related_in(ed), build)
    ed.replace(part, i, data)
    return f"volume {part} record {i}{what}"


def label_field(ed: ArchiveEdit, rng: random.Random, donors: list[Files]) -> str:
    """Label fields of one file changed (magic, pid, start, vol, hostname, timezone): breaks
    what the files of one archive must agree on."""
    part = rng.choice(_parts(ed))
    if len(ed.files[part]) < ed.lsize:
        raise Skip("short label")
    tree = ed.label(part)
    data, what = mutate_tree(tree, rng, {"vol": [0, 1, -1, -2]},
                             lambda t: bytes(ed.s.label.build(t)))
    if len(data) != ed.lsize - 8:
        raise Skip("label size changed")
    ed.files[part][4:ed.lsize - 4] = data
    return f"{part} label{what}"


_WORDS = ("length", "count", "offset")


def record_word(ed: ArchiveEdit, rng: random.Random, donors: list[Files]) -> str:
    """A 4- or 2-byte word inside a record set to a value that disagrees with the record:
    its length, the file's size, a neighbouring boundary, or a type edge."""
    part = rng.choice([p for p in _parts(ed) if p != "index"] or ["meta"])
    i, offset, length = _pick_record(ed, part, rng)
    size = rng.choice((4, 4, 4, 2))
    at = offset + rng.randrange(0, max(1, length - size + 1), size)
    old = int.from_bytes(ed.files[part][at:at + size], "big")
    values = [0, 1, old + 1, old - 1, old + 4, old - 4, length, length - 8, length + 8,
              len(ed.files[part]), (1 << (8 * size - 1)) - 1, 1 << (8 * size - 1), (1 << (8 * size)) - 1]
    new = rng.choice(values) % (1 << (8 * size))
    ed.files[part][at:at + size] = new.to_bytes(size, "big")
    return f"{part} record {i} word at +{at - offset} {old} -> {new}"


def index_field(ed: ArchiveEdit, rng: random.Random, donors: list[Files]) -> str:
    """An index entry's volume, offsets or time moved: off a record boundary, before the
    label, past the end, to another record."""
    if "index" not in ed.files:
        raise Skip("no index")
    entries = ed.entries()
    if not entries:
        raise Skip("empty index")
    n = rng.randrange(len(entries)) + 1
    e = entries[n - 1]
    fld = rng.choice(("vol", "off_meta", "off_data", "timestamp"))
    if fld == "timestamp":
        e.timestamp = Timestamp.from_nsec(e.timestamp.total_nsec() + rng.choice((-1, 1, -3600, 86400)) * 10 ** 9)
    else:
        part = "meta" if fld == "off_meta" else "0"
        bounds = [o for o, _ in ed.records(part)] if part in ed.files else []
        choices = [0, ed.lsize - 1, int(e[fld]) + 1, int(e[fld]) + 4, -1, 0x7FFFFFF0,
                   len(ed.files.get(part, b"")), *(rng.sample(bounds, min(2, len(bounds))))]
        if fld == "vol":
            choices = [-1, 1, 2, 7, 0x7FFFFFFF]
        e[fld] = rng.choice(choices)
    try:
        ed.put_entry(n, e)
    except Exception as exc:
        raise Skip(str(exc)) from None
    return f"index entry {n} {fld} = {e[fld]}"


def _length_pairs(tree: Any) -> list[tuple[Any, str, str, int]]:
    """(holder, count field, what it counts, extra) for every count or length in a parsed
    record: an integer whose value is the size of a sibling list or byte string (vlen
    counts its own 4-byte header, ``extra`` 4)."""
    out = []
    for _holder, _, node, _ in [(None, None, tree, "")] + list(leaves(tree)):
        if not isinstance(node, dict):
            continue
        for key, value in node.items():
            if type(value) is not int or key in _NOT_COUNTS:
                continue
            for sib, content in node.items():
                if sib != key and isinstance(content, (bytes, list)) and not str(sib).endswith("_raw"):
                    for extra in (0, 4):
                        if value == len(content) + extra and (content or extra == 0):
                            out.append((node, str(key), str(sib), extra))
    return out


_NOT_COUNTS = ("type", "sem", "valfmt", "vtype", "flags", "inst", "ident", "pmid", "indom")


@functools.lru_cache(maxsize=4096)
def _count_pairs(schema: Any, body: bytes) -> int:
    """How many counts or lengths one record holds (cached by its bytes: a campaign
    mutates the same seed records over and over)."""
    return len(_length_pairs(schema.parse(body)))


@functools.lru_cache(maxsize=16384)
def _count_site(schema: Any, body: bytes, pair_index: int) -> tuple[str, str, int, int] | None:
    """(count field, what it counts, its value, its byte offset in ``body``) of the
    ``pair_index``-th count of one record, or None when its bytes cannot be located. The
    schema finds each count and what it describes (jsonlen and the JSON, numinst and the
    instances, numval and the values, vlen and the block ...); a marker build locates its
    bytes: one more element (4 more bytes) and the count raised to match, so the count's
    bytes are where the two builds first differ."""
    tree = schema.parse(body)
    node, key, sib, _ = _length_pairs(tree)[pair_index]
    value = node[key]
    before = bytes(schema.build(tree))
    grow = 4 if isinstance(node[sib], bytes) else 1
    for other, same in list(node.items()):        # lists counted together (instlist, offsets)
        if other == sib or (isinstance(same, list) and isinstance(node[sib], list) and same and
                            len(same) == len(node[sib]) and not str(other).endswith("_raw")):
            node[other] = same + b"\0" * 4 if isinstance(same, bytes) else ListContainer([*same, same[-1]])
    node[key] = value + grow
    try:
        after = bytes(schema.build(tree))
    except Exception:  # construct refuses some grown trees: that count is not located
        return None
    # the record's own length words differ too, but not from value to value + grow
    old_word = struct.pack(">I", value & 0xFFFFFFFF)
    new_word = struct.pack(">I", (value + grow) & 0xFFFFFFFF)
    at = before.find(old_word)
    while at >= 0 and after[at:at + 4] != new_word:
        at = before.find(old_word, at + 1)
    return None if at < 0 else (str(key), str(sib), int(value), at)


def length_field(ed: ArchiveEdit, rng: random.Random, donors: list[Files]) -> str:
    """A count or length that disagrees with what it counts (``_count_site`` finds it),
    set to a value past, short of, or far beyond the content."""
    part = rng.choice(["meta", *_parts(ed, volumes_only=True)])
    i, offset, length = _pick_record(ed, part, rng)
    _, raw = ed.record(part, i)
    if part == "meta":
        schema, skip = ed.s.meta_record, 0      # the meta record schema includes the length words
    else:
        if length <= ed.s.mark_size:
            raise Skip("a mark")
        schema, skip = ed.s.result, 4
    body = bytes(raw[skip:len(raw) - skip] if skip else raw)
    try:
        pairs = _count_pairs(schema, body)
        site = _count_site(schema, body, rng.randrange(pairs)) if pairs else None
    except Exception as exc:  # a record construct cannot parse: nothing to locate
        raise Skip(str(exc)) from None
    if not pairs:
        raise Skip("no counts")
    if site is None or skip + site[3] + 4 > length - 4:
        raise Skip("count not found")
    key, sib, value, at = site
    at += skip
    remaining = length - 4 - (at + 4)
    new = rng.choice([value + 1, value - 1, value + 4, 0, -1, remaining + 1, remaining + 8, 0xFFFF, 0x10000,
                      0x7FFFFFFF, -0x80000000, length, value * 16 + 16])
    struct.pack_into(">I", ed.files[part], offset + at, new & 0xFFFFFFFF)
    return f"{part} record {i} {key} (counting {sib}) {value} -> {new}"


# -- record mutations ----------------------------------------------------------------------

def delete_record(ed: ArchiveEdit, rng: random.Random, donors: list[Files]) -> str:
    part = rng.choice([p for p in _parts(ed) if p != "index"])
    i, _, _ = _pick_record(ed, part, rng)
    ed.remove(part, i)
    return f"{part} record {i} deleted"


def duplicate_record(ed: ArchiveEdit, rng: random.Random, donors: list[Files]) -> str:
    part = rng.choice([p for p in _parts(ed) if p != "index"])
    i, _, _ = _pick_record(ed, part, rng)
    _, data = ed.record(part, i)
    j = rng.randrange(1, len(ed.records(part)) + 2)
    ed.insert(part, j, data)
    return f"{part} record {i} copied before {j}"


def swap_records(ed: ArchiveEdit, rng: random.Random, donors: list[Files]) -> str:
    part = rng.choice([p for p in _parts(ed) if p != "index"])
    recs = ed.records(part)
    if len(recs) < 2:
        raise Skip("fewer than two records")
    i = rng.randrange(1, len(recs))
    _, a = ed.record(part, i)
    _, b = ed.record(part, i + 1)
    ed.replace(part, i + 1, a)
    ed.replace(part, i, b)
    return f"{part} records {i} and {i + 1} swapped"


def truncate(ed: ArchiveEdit, rng: random.Random, donors: list[Files]) -> str:
    part = rng.choice(_parts(ed))
    data = ed.files[part]
    if not data:
        raise Skip("empty")
    cut = rng.randrange(len(data))
    del data[cut:]
    return f"{part} cut at {cut}"


def splice(ed: ArchiveEdit, rng: random.Random, donors: list[Files]) -> str:
    """A record of another archive (same kind of file, maybe the other version) inserted."""
    if not donors:
        raise Skip("no donors")
    donor = editor(rng.choice(donors))
    part = rng.choice(["meta", "0"])
    if part not in donor.files or part not in ed.files:
        raise Skip("no such part")
    i, _, _ = _pick_record(donor, part, rng)
    _, data = donor.record(part, i)
    j = rng.randrange(1, len(ed.records(part)) + 2)
    ed.insert(part, j, data)
    return f"{part} record {i} of a v{donor.version} archive spliced before {j}"


_SWITCH = {1: 1, 2: 5, 5: 2, 3: 7, 7: 3, 4: 4, 6: 2}


def switch_form(ed: ArchiveEdit, rng: random.Random, donors: list[Files]) -> str:
    """A version-specific form switched: a .meta record tag to the other version's (indom
    2 <-> 5, label 3 <-> 7, delta indom 6), or a file's label version byte."""
    if rng.random() < 0.5:
        i, offset, _ = _pick_record(ed, "meta", rng)
        old = ed.peek("meta", offset + 4, "I")
        new = _SWITCH.get(old, rng.choice((0, 8, 0xFFFF)))
        if new == old:
            new = 6
        ed.poke("meta", offset + 4, "I", new)
        return f"meta record {i} type {old} -> {new}"
    part = rng.choice(_parts(ed))
    if len(ed.files[part]) < 8:
        raise Skip("short")
    old = ed.files[part][7]
    ed.files[part][7] = 5 - old if old in (2, 3) else 2
    return f"{part} label version {old} -> {ed.files[part][7]}"


# -- file mutations ------------------------------------------------------------------------

def volumes(ed: ArchiveEdit, rng: random.Random, donors: list[Files]) -> str:
    """Volume numbering and the set of files: a volume renumbered, a copy as the next
    volume, a file removed."""
    choice = rng.randrange(4)
    vols = sorted(_parts(ed, volumes_only=True), key=int)
    if choice == 0 and vols:
        old = rng.choice(vols)
        new = str(int(vols[-1]) + rng.choice((1, 2, 100)))
        ed.files[new] = ed.files.pop(old)
        return f"volume {old} renamed {new}"
    if choice == 1 and vols:
        new = str(int(vols[-1]) + 1)
        ed.files[new] = bytearray(ed.files[vols[-1]])
        return f"volume {vols[-1]} copied as {new}"
    victim = rng.choice([p for p in ("index", "meta", *vols) if p in ed.files] or ["x"])
    if victim not in ed.files or len(ed.files) < 2:
        raise Skip("nothing to remove")
    del ed.files[victim]
    return f"{victim} removed"


_COMPRESSORS: dict[str, Callable[[bytes], bytes]] = {
    "xz": lambda b: lzma.compress(b, format=lzma.FORMAT_XZ),
    "gz": lambda b: gzip.compress(b, mtime=0),
    "bz2": bz2.compress,
}


def compress(ed: ArchiveEdit, rng: random.Random, donors: list[Files]) -> str:
    """A file wrapped in a compression format, maybe with its compressed bytes damaged."""
    parts = [p for p in _parts(ed) if p != "index"]
    if not parts:
        raise Skip("nothing to compress")
    part = rng.choice(parts)
    suffix = rng.choice(sorted(_COMPRESSORS))
    packed = bytearray(_COMPRESSORS[suffix](bytes(ed.files.pop(part))))
    what = f"{part} compressed as .{suffix}"
    damage = rng.randrange(3)
    if damage == 1:
        at = rng.randrange(len(packed))
        packed[at] ^= 1 << rng.randrange(8)
        what += f", byte {at} flipped"
    elif damage == 2:
        del packed[rng.randrange(len(packed)):]
        what += f", cut to {len(packed)} bytes"
    ed.files[f"{part}.{suffix}"] = packed
    return what


def byte_noise(ed: ArchiveEdit, rng: random.Random, donors: list[Files]) -> str:
    """Bytes flipped, set, inserted or appended; never skips (the last resort of a mutant)."""
    parts = [p for p, d in ed.files.items() if d]
    if not parts:                   # nothing but empty files left: give one some bytes
        part = rng.choice(list(ed.files) or ["meta"])
        ed.files[part] = bytearray(bytes(rng.randrange(256) for _ in range(rng.choice((1, 4, 8)))))
        return f"{part} given {len(ed.files[part])} bytes"
    part = rng.choice(parts)
    data = ed.files[part]
    choice = rng.randrange(4)
    at = rng.randrange(len(data))
    if choice == 0:
        data[at] ^= 1 << rng.randrange(8)
        return f"{part} byte {at} bit flipped"
    if choice == 1:
        data[at] = rng.choice((0, 0xFF, 0x7F, 0x80))
        return f"{part} byte {at} = {data[at]}"
    if choice == 2:
        n = rng.choice((1, 3, 4, 8))
        data[at:at] = bytes(rng.randrange(256) for _ in range(n))
        return f"{part} {n} bytes inserted at {at}"
    data += bytes([rng.choice((0, 0xFF))]) * rng.choice((1, 4, 8, 16))
    return f"{part} bytes appended"


#: name -> (weight, mutation); field mutations first, the way they are most often chosen
ARCHIVE_MUTATORS: dict[str, tuple[int, Callable[[ArchiveEdit, random.Random, list[Files]], str]]] = {
    "meta-field": (6, meta_field),
    "result-field": (6, result_field),
    "record-word": (3, record_word),
    "length-field": (5, length_field),
    "label-field": (2, label_field),
    "index-field": (2, index_field),
    "delete-record": (2, delete_record),
    "duplicate-record": (2, duplicate_record),
    "swap-records": (2, swap_records),
    "splice": (2, splice),
    "switch-form": (1, switch_form),
    "truncate": (1, truncate),
    "volumes": (1, volumes),
    "compress": (1, compress),
    "byte-noise": (2, byte_noise),
}


def mutate_archive(files: Mapping[str, bytes], rng: random.Random, donors: list[Files],
                   stack: int | None = None) -> tuple[Files, list[str]]:
    """Apply 1 to 3 mutations (``stack``) to a copy of ``files``; the descriptions of those applied."""
    names = list(ARCHIVE_MUTATORS)
    weights = [ARCHIVE_MUTATORS[n][0] for n in names]
    current = dict(files)
    notes: list[str] = []
    for _ in range(stack or rng.choice((1, 1, 1, 2, 2, 3))):
        for _attempt in range(6):
            name = rng.choices(names, weights)[0]
            try:
                ed = editor(current)
                note = ARCHIVE_MUTATORS[name][1](ed, rng, donors)
            except Exception:       # Skip, or the mutation met a file it cannot parse
                continue
            current = {k: bytes(v) for k, v in ed.files.items()}
            notes.append(f"{name}: {note}")
            break
    if not notes:
        ed = editor(current)
        notes.append("byte-noise: " + byte_noise(ed, rng, donors))
        current = {k: bytes(v) for k, v in ed.files.items()}
    return current, notes
