"""Measuring a salvage, independently of how salvage decides: what the output holds, what
a perfect salvage of a damaged copy of a known archive could keep, and whether any output
value is not the input's.

Nothing here uses salvage's framing or value walk. Values are read from a readable archive
with the kit's reader; a value of the output is checked against the raw bytes of the input
record it came from (its provenance) with the format layer's value codecs alone; the records
a perfect salvage keeps are the original's records whose bytes are found intact in the
damaged input, for metrics whose descriptor's bytes are found intact too. Value keys use
libpcp's own encoding (pm_read.py's: integers, ``f32:``/``f64:`` bits, ``str:`` hex up to
the NUL, ``agg:`` hex, ``event``), so the kit's and libpcp's readings compare directly.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pcpconform.format.pmtypes import PmID, PmType
from pcpconform.format.schema import RESULT_HEADER_SIZE, TYPE_DESC, block_offset
from pcpconform.format.values import F32, decode_block, decode_insitu
from pcpconform.io.archive import Archive
from pcpconform.io.bulk import decode_result, result_head
from pcpconform.io.files import strip_compression
from pcpconform.salvage.salvage import Provenance
from pcpconform.salvage.sources import Broken, decompress

__all__ = ["ValueKey", "Original", "encode", "archive_values", "perfect_values", "invented_values", "read_all"]

#: (time ns, pmID, instance, value in libpcp's encoding)
ValueKey = tuple[int, int, int, Any]
_VSET = struct.Struct(">Ii")
_PAIR = struct.Struct(">iI")
_WORD = struct.Struct(">I")


def encode(value: Any, ptype: int) -> Any:
    """A value in pm_read.py's encoding."""
    if ptype == PmType.FLOAT:
        return f"f32:{(value if isinstance(value, F32) else F32(value)).bits:08x}"
    if ptype == PmType.DOUBLE:
        return "f64:" + struct.pack(">d", value).hex()
    if ptype == PmType.STRING:
        return "str:" + bytes(value).split(b"\0", 1)[0].hex()
    if ptype in (PmType.AGGREGATE, PmType.AGGREGATE_STATIC):
        return "agg:" + bytes(value).hex()
    if ptype in (PmType.EVENT, PmType.HIGHRES_EVENT):
        return "event"
    return value


def archive_values(base: str | Path) -> set[ValueKey]:
    """Every value of a readable archive (the kit's reader), as keys."""
    a = Archive(base)
    types = {int(d.pmid): d.type for d in a.descs()}
    out: set[ValueKey] = set()
    for r in a.results():
        t = r.timestamp.total_nsec()
        for vs in r.vsets:
            ptype = types.get(vs.pmid)
            if ptype is None:
                continue
            for inst, v in vs.values:
                out.add((t, vs.pmid, inst, encode(v, ptype)))
    return out


def read_all(path: Path) -> bytes:
    """A file's bytes, decompressed as far as it decompresses."""
    if not strip_compression(path.name)[1]:
        return path.read_bytes()
    parts: list[bytes] = []
    chunks = decompress(path)
    while True:
        try:
            parts.append(next(chunks))
        except (StopIteration, Broken):
            return b"".join(parts)


def _parts(base: Path) -> dict[str, bytes]:
    """part (meta, index, 0, 1 ...) -> bytes, every copy of a part joined."""
    out: dict[str, bytes] = {}
    prefix = base.name + "."
    for path in sorted(base.parent.iterdir()):
        if path.is_file() and path.name.startswith(prefix):
            part = path.name[len(prefix):].split(".", 1)[0]
            out[part] = out.get(part, b"") + read_all(path)
    return out


def _framed(data: bytes, start: int) -> Iterable[tuple[int, bytes]]:
    pos = start
    while pos + 8 <= len(data):
        length = _WORD.unpack_from(data, pos)[0]
        if length < 8 or pos + length > len(data):
            return
        yield pos, data[pos:pos + length]
        pos += length


class Original:
    """A readable archive, indexed once for measuring salvages of damaged copies of it: its
    .meta records, and each result's bytes, place and values."""

    def __init__(self, base: str | Path) -> None:
        base = Path(base)
        a = Archive(base)
        lsize = 132 if a.version == 2 else 808
        parts = _parts(base)
        self.meta = [rec for _, rec in _framed(parts.get("meta", b""), lsize)]
        types = {int(d.pmid): d.type for d in a.descs()}
        starts: dict[int, int] = {}
        at = 0
        for part in sorted((k for k in parts if k.isdigit()), key=int):
            starts[int(part)] = at
            at += len(parts[part])
        #: (bytes, where in the volumes joined, [(pmID, key)...]) of every result
        self.results: list[tuple[bytes, int, list[tuple[int, ValueKey]]]] = []
        for number, record in a.volume_records():
            r = decode_result(record, a.version, types, a.stats)
            t = r.timestamp.total_nsec()
            keys = [(vs.pmid, (t, vs.pmid, inst, encode(v, types[vs.pmid])))
                    for vs in r.vsets if vs.pmid in types for inst, v in vs.values]
            self.results.append((record.data, starts.get(number, 0) + record.offset, keys))
        self.values: set[ValueKey] = {k for _, _, keys in self.results for _, k in keys}

    def perfect(self, damaged: str | Path) -> tuple[set[ValueKey], int]:
        """The values a perfect salvage of ``damaged`` (a damaged copy of this archive) keeps:
        those of the results whose bytes are intact somewhere in its volumes, for metrics
        whose first descriptor's bytes are intact in its .meta; and how many of this
        archive's records (results and .meta records) are not intact there."""
        bad = _parts(Path(damaged))
        volumes = b"".join(v for k, v in sorted(bad.items(), key=lambda kv: int(kv[0]) if kv[0].isdigit() else -1)
                           if k.isdigit())
        meta_bytes = bad.get("meta", b"")
        damaged_records = 0
        desc_ok: dict[int, bool] = {}
        for rec in self.meta:
            intact = rec in meta_bytes
            damaged_records += not intact
            if len(rec) >= 12 and _WORD.unpack_from(rec, 4)[0] == TYPE_DESC:
                desc_ok.setdefault(_WORD.unpack_from(rec, 8)[0], intact)
        keep: set[ValueKey] = set()
        for data, hint, keys in self.results:
            if volumes.find(data, max(0, hint - (1 << 16)), hint + len(data) + (1 << 16)) < 0 and data not in volumes:
                damaged_records += 1
                continue
            keep.update(k for pmid, k in keys if desc_ok.get(pmid))
        return keep, damaged_records


def perfect_values(original: str | Path, damaged: str | Path) -> tuple[set[ValueKey], int]:
    """``Original(original).perfect(damaged)``."""
    return Original(original).perfect(damaged)


def invented_values(damaged: str | Path, out: str | Path, provenance: list[Provenance]) -> list[str]:
    """Every value of the output that is not, by the raw bytes of the input record it came
    from, a value of that record at the same time for the same metric and instance; and
    every descriptor of the output whose fields no descriptor of the input holds."""
    problems: list[str] = []
    a = Archive(out)
    damaged = Path(damaged)
    parts = _parts(damaged)
    meta = parts.get("meta", b"")
    for d in a.descs():
        fields = struct.pack(">IiIi", int(d.pmid), d.type, int(d.indom), d.sem)
        if fields not in meta:
            problems.append(f"descriptor of {d.pmid} (type {d.type}) is not in the input's .meta")
    types = {int(d.pmid): d.type for d in a.descs()}
    by_place = {(p.out_volume, p.out_offset): p for p in provenance}
    version = a.version
    for vol, record in a.volume_records():
        prov = by_place.get((vol, record.offset))
        if prov is None:
            problems.append(f"output volume {vol} offset {record.offset}: no provenance")
            continue
        src = parts.get(prov.in_file[len(damaged.name) + 1:].split(".", 1)[0], b"")
        length = _WORD.unpack_from(src, prov.in_offset)[0] if prov.in_offset + 4 <= len(src) else 0
        raw = src[prov.in_offset:prov.in_offset + length]
        stamp, _ = result_head(record.data, version)
        if len(raw) < RESULT_HEADER_SIZE[version] or result_head(raw, version)[0] != stamp:
            problems.append(f"output volume {vol} offset {record.offset}: the input record at "
                            f"{prov.in_file}:{prov.in_offset} has another time")
            continue
        theirs: dict[tuple[int, int], list[tuple[int, int]]] = {}
        for pmid, _, valfmt, pairs in _walk(raw, version):
            if valfmt in (0, 1, 2):
                for inst, word in pairs:
                    theirs.setdefault((pmid, inst), []).append((valfmt, word))
        for pmid, _, valfmt, pairs in _walk(record.data, version):
            ptype = types.get(pmid)
            for inst, word in pairs:
                want = None if ptype is None else _value(record.data, valfmt, word, ptype)
                if want is None or not any(_value(raw, f, w, ptype) == want  # type: ignore[arg-type]
                                           for f, w in theirs.get((pmid, inst), ())):
                    problems.append(f"{stamp} {PmID(pmid)} [{inst}]: not a value of {prov.in_file}:{prov.in_offset}")
    return problems


def _walk(data: bytes, version: int) -> list[tuple[int, int, int, list[tuple[int, int]]]]:
    """(pmID, numval, valfmt, [(inst, word)]) of every value set a record's bytes hold, as
    far as they lie inside it."""
    pos = RESULT_HEADER_SIZE[version]
    end = len(data) - 4
    numpmid = _WORD.unpack_from(data, pos - 4)[0]
    out: list[tuple[int, int, int, list[tuple[int, int]]]] = []
    for _ in range(min(numpmid, (end - pos) // 8)):
        if pos + 8 > end:
            break
        pmid, numval = _VSET.unpack_from(data, pos)
        pos += 8
        if numval <= 0:
            out.append((pmid, numval, -1, []))
            continue
        if pos + 4 + 8 * numval > end:
            break
        valfmt = _WORD.unpack_from(data, pos)[0]
        pairs = [_PAIR.unpack_from(data, pos + 4 + 8 * j) for j in range(numval)]
        out.append((pmid, numval, valfmt, pairs))
        pos += 4 + 8 * numval
    return out


def _value(data: bytes, valfmt: int, word: int, ptype: int) -> Any:
    if valfmt == 0:
        return encode(decode_insitu(word & 0xFFFFFFFF, ptype), ptype)
    off = block_offset(word)
    if off < 0 or off + 4 > len(data) - 4:
        return None
    head = _WORD.unpack_from(data, off)[0]
    vtype, vlen = head >> 24, head & 0xFFFFFF
    if vlen < 4 or off + vlen > len(data) - 4 or vtype not in (0, ptype):
        return None
    payload = data[off + 4:off + vlen]
    if ptype in (PmType.EVENT, PmType.HIGHRES_EVENT):
        return ("event", payload)
    return encode(decode_block(ptype, payload), ptype)
