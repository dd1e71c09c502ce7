"""Mutations of an archive held as bytes, chosen per field, per record and per file.

Field mutations find a field through its record's layout (pcpconform.fuzz.layout: offsets
read from the schema, once per record shape) and patch its bytes with a value meaningful
for its name and type, keeping the framing; word and length mutations change a length,
count or offset in place, so that it disagrees with what it describes. Every mutation
returns a short description; one that finds nothing to change raises ``Skip``.
"""

from __future__ import annotations

import bz2
import functools
import gzip
import lzma
import random
import struct
from collections.abc import Callable, Iterator, Mapping

from pcpconform.corpusgen.invalid.edit import ArchiveEdit
from pcpconform.format.pmtypes import Timestamp
from pcpconform.format.schema import structs
from pcpconform.fuzz.archive_edit import editor
from pcpconform.fuzz.fields import NoChange, field_values_named, mutate_fields
from pcpconform.fuzz.layout import LayoutError, layout, read_int

__all__ = ["Skip", "ARCHIVE_MUTATORS", "mutate_archive"]

Files = dict[str, bytes]


class Skip(Exception):
    """The mutation has nothing to work on in this archive."""


# -- helpers over the archive --------------------------------------------------------------

def _parts(ed: ArchiveEdit, volumes_only: bool = False) -> list[str]:
    parts = [p for p in ed.files if p.isdigit()]
    return parts if volumes_only else [p for p in ed.files if p in ("meta", "index") or p.isdigit()]


_RELATED = ("pmid", "indom", "inst", "ident", "instlist")


class _Related(Mapping[str, list[int]]):
    """The metadata's identifiers by field name, read from the .meta file only when a
    mutation asks for them (most fields are not identifiers)."""

    def __init__(self, ed: ArchiveEdit) -> None:
        self._ed = ed
        self._found: dict[str, list[int]] | None = None

    def _all(self) -> dict[str, list[int]]:
        if self._found is None:
            self._found = _related_meta(self._ed.version, bytes(self._ed.files.get("meta", b"")))
        return self._found

    def __getitem__(self, name: str) -> list[int]:
        if name not in _RELATED:
            raise KeyError(name)
        return self._all()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())


def _related_in(ed: ArchiveEdit) -> Mapping[str, list[int]]:
    return _Related(ed)


@functools.lru_cache(maxsize=32)
def _related_meta(version: int, meta: bytes) -> dict[str, list[int]]:
    """pmIDs, indoms, instances and idents the metadata holds, with PCP's edge identifiers
    (cached: the queue's inputs share their .meta files often)."""
    out: dict[str, list[int]] = {"pmid": [], "indom": [], "inst": [], "ident": []}
    ed = editor({"meta": meta})
    for offset, length in ed.records("meta")[:200]:
        for name, values in _related_record(version, meta[offset + 4:offset + length - 4]).items():
            out[name].extend(values)
    out["pmid"] += [0, 0xFFFFFFFF, (60 << 22) | 99, (511 << 22) | 1]
    out["indom"] += [0xFFFFFFFF, (61 << 22) | 1]
    out["ident"] += out["pmid"] + out["indom"]
    return out


@functools.lru_cache(maxsize=1024)
def _related_record(version: int, payload: bytes) -> dict[str, list[int]]:
    """The identifiers one .meta record holds (cached: mutants share most of their records);
    an indom's instance list counts as instances."""
    try:
        found = field_values_named(layout(structs(version).meta, payload), payload, _RELATED)
    except LayoutError:
        return {}
    found["inst"] += found.pop("instlist")
    return found


def _pick_record(ed: ArchiveEdit, part: str, rng: random.Random) -> tuple[int, int, int]:
    recs = ed.records(part)
    if not recs:
        raise Skip(f"{part} has no records")
    i = rng.randrange(len(recs))
    return i + 1, recs[i][0], recs[i][1]


def _framed(payload: bytes) -> bytes:
    word = struct.pack(">I", len(payload) + 8)
    return word + payload + word


# -- field mutations -----------------------------------------------------------------------

def meta_field(ed: ArchiveEdit, rng: random.Random, donors: list[Files]) -> str:
    i, offset, length = _pick_record(ed, "meta", rng)
    what = _field(ed, rng, "meta", i, offset, length, ed.s.meta, _related_in(ed))
    return f"meta record {i}{what}"


def result_field(ed: ArchiveEdit, rng: random.Random, donors: list[Files]) -> str:
    part = rng.choice(_parts(ed, volumes_only=True) or ["0"])
    i, offset, length = _pick_record(ed, part, rng)
    if length <= ed.s.mark_size:
        raise Skip("a mark")
    what = _field(ed, rng, part, i, offset, length, ed.s.result, _related_in(ed))
    return f"volume {part} record {i}{what}"


def _field(ed: ArchiveEdit, rng: random.Random, part: str, i: int, offset: int, length: int,
           schema: object, related: Mapping[str, list[int]]) -> str:
    payload = bytes(ed.files[part][offset + 4:offset + length - 4])
    try:
        data, what = mutate_fields(schema, payload, rng, related)
    except (LayoutError, NoChange) as exc:
        raise Skip(str(exc)) from None
    if len(data) == len(payload):
        ed.files[part][offset + 4:offset + length - 4] = data
    else:
        ed.replace(part, i, _framed(data))
    return what


def label_field(ed: ArchiveEdit, rng: random.Random, donors: list[Files]) -> str:
    """Label fields of one file changed (magic, pid, start, vol, hostname, timezone): breaks
    what the files of one archive must agree on."""
    part = rng.choice(_parts(ed))
    if len(ed.files[part]) < ed.lsize:
        raise Skip("short label")
    payload = bytes(ed.files[part][4:ed.lsize - 4])
    try:
        data, what = mutate_fields(ed.s.label, payload, rng, {"vol": [0, 1, -1, -2]})
    except (LayoutError, NoChange) as exc:
        raise Skip(str(exc)) from None
    if len(data) != len(payload):
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
    count = max(0, (len(ed.files["index"]) - ed.lsize) // ed.s.index_entry_size)
    if not count:
        raise Skip("empty index")
    n = rng.randrange(count) + 1
    e = ed.entry(n)
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


def length_field(ed: ArchiveEdit, rng: random.Random, donors: list[Files]) -> str:
    """A count or length that disagrees with what it counts (the record's layout names
    each count and what it sizes), set to a value past, short of, or far beyond the content."""
    part = rng.choice(["meta", *_parts(ed, volumes_only=True)])
    i, offset, length = _pick_record(ed, part, rng)
    if part != "meta" and length <= ed.s.mark_size:
        raise Skip("a mark")
    payload = bytes(ed.files[part][offset + 4:offset + length - 4])
    try:
        lay = layout(ed.s.meta if part == "meta" else ed.s.result, payload)
    except LayoutError as exc:      # a record that does not follow the schema: nothing to locate
        raise Skip(str(exc)) from None
    counts = lay.n_counts()
    if not counts:
        raise Skip("no counts")
    c = lay.count(rng.randrange(counts))
    count = lay.field(c)
    sized = lay.field(lay.sized(c)[0])
    value = read_int(count, payload)
    remaining = len(payload) - (count.offset + count.size)
    bits = 8 * count.size
    new = rng.choice([value + 1, value - 1, value + 4, 0, -1, remaining + 1, remaining + 8, 0xFFFF, 0x10000,
                      0x7FFFFFFF, -0x80000000, length, value * 16 + 16])
    word = (new & ((1 << bits) - 1)).to_bytes(count.size, "big")
    at = offset + 4 + count.offset
    ed.files[part][at:at + count.size] = word
    key, counted = count.path.rsplit("/", 1)[-1], sized.path.rsplit("/", 1)[-1]
    return f"{part} record {i} {key} (counting {counted}) {value} -> {new}"


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
    # the fastest presets: any valid stream serves, and a campaign compresses often
    "xz": lambda b: lzma.compress(b, format=lzma.FORMAT_XZ, preset=0),
    "gz": lambda b: gzip.compress(b, compresslevel=1, mtime=0),
    "bz2": lambda b: bz2.compress(b, 1),
}


@functools.lru_cache(maxsize=64)
def _packed_cached(suffix: str, data: bytes) -> bytes:
    return _COMPRESSORS[suffix](data)


def _packed(suffix: str, data: bytes) -> bytes:
    """``data`` compressed; most parts of a mutant are its parent's, so small ones are
    compressed once."""
    return _packed_cached(suffix, data) if len(data) <= 1 << 17 else _COMPRESSORS[suffix](data)


def compress(ed: ArchiveEdit, rng: random.Random, donors: list[Files]) -> str:
    """A file wrapped in a compression format, maybe with its compressed bytes damaged."""
    parts = [p for p in _parts(ed) if p != "index"]
    if not parts:
        raise Skip("nothing to compress")
    part = rng.choice(parts)
    suffix = rng.choice(sorted(_COMPRESSORS))
    packed = bytearray(_packed(suffix, bytes(ed.files.pop(part))))
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
