"""Editing an archive in memory: its files as bytes, with record-level helpers.

Offsets come from parsing the archive (the framing, the schema layouts), never from
constants; edits that change a record's size move the index offsets after it.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from construct import Container, ListContainer

from pcpconform.format.pmtypes import PmID, Timestamp
from pcpconform.format.schema import (
    META_KINDS,
    TYPE_DESC,
    block_index,
    block_offset,
    first_block_offset,
    structs,
)


@dataclass
class Block:
    """A value block: type, payload and padding (None: libpcp's ``~`` padding)."""

    vtype: int
    vbuf: bytes
    pad: bytes | None = None


@dataclass
class VSet:
    """A value set of an editable result: values are INSITU words or Blocks."""

    pmid: int
    numval: int
    valfmt: int | None
    values: list[tuple[int, Any]] = field(default_factory=list)


@dataclass
class Result:
    """An editable pmResult; ``extra`` is appended after the value blocks."""

    timestamp: Timestamp
    vsets: list[VSet]
    extra: bytes = b""


class ArchiveEdit:
    """The files of one archive as byte arrays, with record-level edit helpers.

    Parts are named by their suffix: ``meta``, ``index``, ``0`` ... Records are numbered as
    the reader numbers them (the label is record 0, the first record after it is 1). Edits
    that change a record's size move every index offset that lies after the record.
    """

    def __init__(self, base: Path) -> None:
        self.name = base.name
        self.files: dict[str, bytearray] = {}
        for path in sorted(base.parent.glob(base.name + ".*")):
            self.files[path.name[len(base.name) + 1:]] = bytearray(path.read_bytes())
        #: files saved under names of their own (not ``<base>.<part>``)
        self.extra: dict[str, bytes] = {}
        self.version = self.files["meta"][7]
        self.s = structs(self.version)
        self.lsize = self.s.label_size
        #: the valid originals by (fixture, version), for faults that mix two archives
        self.originals: dict[tuple[str, int], Path] = {}

    # -- raw bytes -----------------------------------------------------------------------
    def peek(self, part: str, offset: int, fmt: str) -> Any:
        values = struct.unpack_from(">" + fmt, self.files[part], offset)
        return values[0] if len(values) == 1 else values

    def poke(self, part: str, offset: int, fmt: str, *values: Any) -> None:
        struct.pack_into(">" + fmt, self.files[part], offset, *values)

    def records(self, part: str) -> list[tuple[int, int]]:
        """(offset, length) of each framed record after the label, while framing holds."""
        data = self.files[part]
        out, at = [], self.lsize
        while at + 8 <= len(data):
            length = struct.unpack_from(">I", data, at)[0]
            if length < 8 or at + length > len(data):
                break
            out.append((at, length))
            at += length
        return out

    def record(self, part: str, i: int) -> tuple[int, bytes]:
        offset, length = self.records(part)[i - 1]
        return offset, bytes(self.files[part][offset:offset + length])

    # -- index entries -------------------------------------------------------------------
    def entry_offset(self, n: int) -> int:
        return self.lsize + (n - 1) * self.s.index_entry_size

    def entries(self) -> list[Container]:
        data = self.files["index"]
        size = self.s.index_entry_size
        return [self.s.index_entry.parse(bytes(data[off:off + size]))
                for off in range(self.lsize, len(data) - size + 1, size)]

    def entry(self, n: int) -> Container:
        return self.entries()[n - 1]

    def put_entry(self, n: int, entry: Container) -> None:
        at = self.entry_offset(n)
        self.files["index"][at:at + self.s.index_entry_size] = self.s.index_entry.build(entry)

    def _shift(self, part: str, at: int, delta: int) -> None:
        if "index" not in self.files or not delta:
            return
        for n, e in enumerate(self.entries(), 1):
            if part == "meta" and e.off_meta > at:
                e.off_meta += delta
            elif part != "meta" and e.vol == int(part) and e.off_data > at:
                e.off_data += delta
            else:
                continue
            self.put_entry(n, e)

    # -- whole records -------------------------------------------------------------------
    def replace(self, part: str, i: int, data: bytes) -> None:
        offset, length = self.records(part)[i - 1]
        self.files[part][offset:offset + length] = data
        self._shift(part, offset, len(data) - length)

    def insert(self, part: str, i: int, data: bytes) -> None:
        """Insert a record before record i (i = count + 1 appends)."""
        recs = self.records(part)
        offset = recs[i - 1][0] if i <= len(recs) else (recs[-1][0] + recs[-1][1] if recs else self.lsize)
        self.files[part][offset:offset] = data
        self._shift(part, offset, len(data))

    def remove(self, part: str, i: int) -> None:
        offset, length = self.records(part)[i - 1]
        del self.files[part][offset:offset + length]
        self._shift(part, offset, -length)

    # -- .meta records -------------------------------------------------------------------
    def meta(self, i: int) -> Container:
        _, data = self.record("meta", i)
        return self.s.meta.parse(data[4:-4])

    def put_meta(self, i: int, rec: Container) -> None:
        self.replace("meta", i, self.s.meta_record.build(rec))

    def build_meta(self, rtype: int, body: Container) -> bytes:
        return bytes(self.s.meta_record.build(Container(type=rtype, body=body)))

    def find_meta(self, kind: str, ident: int | None = None, nth: int = 0) -> int:
        """Record number of the nth .meta record of a kind (desc, indom, text, label)."""
        tags = META_KINDS[kind]
        hits = []
        for i in range(1, len(self.records("meta")) + 1):
            rec = self.meta(i)
            if rec.type not in tags:
                continue
            if ident is not None:
                own = {"desc": "pmid", "indom": "indom", "text": "ident", "label": "ident"}[kind]
                if int(rec.body[own]) != ident:
                    continue
            hits.append(i)
        return hits[nth]

    def desc(self, name: str) -> int:
        for i in range(1, len(self.records("meta")) + 1):
            rec = self.meta(i)
            if rec.type == TYPE_DESC and name.encode() in rec.body.names:
                return i
        raise KeyError(name)

    # -- results -------------------------------------------------------------------------
    def result(self, i: int, part: str = "0") -> Result:
        _, data = self.record(part, i)
        c = self.s.result.parse(data[4:-4])
        blocks: dict[int, Container] = {}
        at = first_block_offset(self.version, (v.numval for v in c.vset))
        for b in c.blocks:
            blocks[at] = b
            at += 4 + len(b.vbuf) + len(b.pad)
        vsets = []
        for vs in c.vset:
            values: list[tuple[int, Any]] = []
            if vs.numval > 0:
                for pv in vs.vlist:
                    if vs.valfmt == 0:
                        values.append((pv.inst, pv.value))
                    else:
                        b = blocks[block_offset(pv.value)]
                        values.append((pv.inst, Block(b.vtype, bytes(b.vbuf), bytes(b.pad))))
            vsets.append(VSet(int(vs.pmid), vs.numval, vs.valfmt if vs.numval > 0 else None, values))
        return Result(c.timestamp, vsets)

    def build_result(self, res: Result) -> bytes:
        """Lay a result out as libpcp does: blocks in value order after the value sets.

        A value that is the *same* Block object as an earlier one shares its block."""
        at = first_block_offset(self.version, (len(v.values) if v.numval > 0 else 0 for v in res.vsets))
        blocks = ListContainer()
        where: dict[int, int] = {}
        out = ListContainer()
        for vs in res.vsets:
            c = Container(pmid=PmID(vs.pmid), numval=vs.numval, valfmt=None, vlist=ListContainer())
            if vs.numval > 0:
                c.valfmt = vs.valfmt
                for inst, value in vs.values:
                    if isinstance(value, Block):
                        if id(value) not in where:
                            pad = value.pad if value.pad is not None else b"~" * (-(4 + len(value.vbuf)) % 4)
                            blocks.append(Container(vtype=value.vtype, vlen=4 + len(value.vbuf),
                                                    vbuf=value.vbuf, pad=pad))
                            where[id(value)] = at
                            at += 4 + len(value.vbuf) + len(pad)
                        word = block_index(where[id(value)])
                    else:
                        word = value & 0xFFFFFFFF
                    c.vlist.append(Container(inst=inst, value=word))
            out.append(c)
        payload = bytes(self.s.result.build(Container(timestamp=res.timestamp, numpmid=len(out), vset=out,
                                                      blocks=blocks))) + res.extra
        length = (len(payload) + 8).to_bytes(4, "big")
        return length + payload + length

    def put_result(self, i: int, res: Result, part: str = "0") -> None:
        self.replace(part, i, self.build_result(res))

    def vset(self, res: Result, pmid: str) -> VSet:
        want = int(PmID(pmid))
        return next(v for v in res.vsets if v.pmid == want)

    # -- labels --------------------------------------------------------------------------
    def label(self, part: str) -> Container:
        return self.s.label.parse(bytes(self.files[part][4:self.lsize - 4]))

    def label_field(self, fld: str) -> int:
        """Byte offset of a label field from the start of the file."""
        v2 = {"magic": 4, "pid": 8, "start": 12, "vol": 20, "hostname": 24, "timezone": 88}
        v3 = {"magic": 4, "pid": 8, "start": 12, "vol": 24, "features": 28, "reserved": 32,
              "hostname": 36, "timezone": 292, "zoneinfo": 548}
        return (v2 if self.version == 2 else v3)[fld]

    # -- output --------------------------------------------------------------------------
    def save(self, base: Path) -> None:
        base.parent.mkdir(parents=True, exist_ok=True)
        for part, content in self.files.items():
            (base.parent / f"{base.name}.{part}").write_bytes(bytes(content))
        for name, data in self.extra.items():
            (base.parent / name).write_bytes(data)


def ts_bytes(version: int, ts: Timestamp) -> bytes:
    """A record timestamp as stored (T2 or T3)."""
    if version == 2:
        return struct.pack(">ii", ts.sec, ts.nsec // 1000)
    sec = ts.sec & 0xFFFFFFFFFFFFFFFF
    return struct.pack(">IIi", sec & 0xFFFFFFFF, sec >> 32, ts.nsec)


def shifted(ts: Timestamp, seconds: float) -> Timestamp:
    return Timestamp.from_nsec(ts.total_nsec() + int(seconds * 1_000_000_000))
