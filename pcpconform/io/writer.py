"""Writing archives: record builders and a file writer that keeps offsets for the index.

``ArchiveWriter`` appends built records to ``B.meta``, ``B.N`` and ``B.index`` and knows
the offsets an index entry needs; ``layout_result`` turns typed values into the exact
pmResult libpcp encodes (value blocks in value order, padded with ``~``, DPTR indexes in
32-bit words from 8 bytes before the record).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from io import BufferedWriter
from pathlib import Path
from typing import Any

from construct import Container, ListContainer

from pcpconform.format.pmtypes import PmID, PmInDom, PmType, PmUnits, Timestamp, ValFmt
from pcpconform.format.schema import (
    PM_LOG_VOL_META,
    PM_LOG_VOL_TI,
    TYPE_DESC,
    TYPE_INDOM,
    TYPE_INDOM_DELTA,
    TYPE_INDOM_V2,
    TYPE_LABEL,
    TYPE_LABEL_V2,
    TYPE_TEXT,
    block_index,
    first_block_offset,
    structs,
)
from pcpconform.format.schema.common import encode_padded
from pcpconform.format.values import encode_block_payload, encode_insitu
from pcpconform.io.files import strip_compression

__all__ = ["LabelFields", "ValueSetSpec", "ArchiveWriter", "layout_result", "desc_body",
           "indom_body", "text_body", "labelset_body", "valfmt_for", "PAD_BYTE"]

#: Value-block padding byte modern libpcp writes.
PAD_BYTE = b"~"


@dataclass
class LabelFields:
    """What a label says, apart from its volume number."""

    hostname: str
    timezone: str
    start: Timestamp
    pid: int = 0
    zoneinfo: str = ""
    features: int = 0


def label_container(version: int, fields: LabelFields, vol: int) -> Container:
    s = structs(version)
    c = Container(magic=s.magic, pid=fields.pid, start=fields.start, vol=vol)
    host_size, tz_size = (64, 40) if version == 2 else (256, 256)
    c.hostname_raw = encode_padded(fields.hostname, host_size)
    c.timezone_raw = encode_padded(fields.timezone, tz_size)
    if version == 3:
        c.features = fields.features
        c.reserved = 0
        c.zoneinfo_raw = encode_padded(fields.zoneinfo, 256)
    return c


def valfmt_for(ptype: int) -> int:
    """Where libpcp stores a value of this type: INSITU for 32-bit ints, SPTR for the
    types libpcp does not copy, DPTR for the rest."""
    if ptype in (PmType.I32, PmType.U32):
        return ValFmt.INSITU
    if ptype in (PmType.AGGREGATE_STATIC, PmType.EVENT, PmType.HIGHRES_EVENT):
        return ValFmt.SPTR
    return ValFmt.DPTR


@dataclass
class ValueSetSpec:
    """One metric's values for ``layout_result``: numval < 0 is an error code."""

    pmid: int
    type: int
    values: Sequence[tuple[int, Any]] = ()
    numval: int | None = None


def layout_result(version: int, timestamp: Timestamp, vsets: Sequence[ValueSetSpec]) -> Container:
    """The pmResult container libpcp would encode for these values."""
    offset = first_block_offset(version, (len(v.values) for v in vsets))
    blocks = ListContainer()
    out_sets = ListContainer()
    for spec in vsets:
        numval = spec.numval if spec.numval is not None else len(spec.values)
        vs = Container(pmid=PmID(spec.pmid), numval=numval, valfmt=None, vlist=ListContainer())
        if numval > 0:
            vs.valfmt = valfmt_for(spec.type)
            for inst, value in spec.values:
                if vs.valfmt == ValFmt.INSITU:
                    word = encode_insitu(value, spec.type)
                else:
                    payload = encode_block_payload(value, spec.type)
                    vlen = 4 + len(payload)
                    pad = PAD_BYTE * (-vlen % 4)
                    blocks.append(Container(vtype=spec.type, vlen=vlen, vbuf=payload, pad=pad))
                    word = block_index(offset)
                    offset += vlen + len(pad)
                vs.vlist.append(Container(inst=inst, value=word))
        out_sets.append(vs)
    return Container(timestamp=timestamp, numpmid=len(out_sets), vset=out_sets, blocks=blocks)


def desc_body(pmid: int, ptype: int, indom: int, sem: int, units: PmUnits,
              names: Sequence[str]) -> Container:
    return Container(pmid=PmID(pmid), type=ptype, indom=PmInDom(indom), sem=sem, units=units,
                     names=ListContainer(n.encode() for n in names), tail=b"")


def indom_body(timestamp: Timestamp, indom: int, instances: Sequence[tuple[int, str | None]]) -> Container:
    """Instance-domain body; a name of None marks a deleted instance (delta records)."""
    offsets, table = [], bytearray()
    for _, name in instances:
        if name is None:
            offsets.append(-1)
            continue
        offsets.append(len(table))
        table += name.encode() + b"\0"
    return Container(timestamp=timestamp, indom=PmInDom(indom), numinst=len(instances),
                     instlist=ListContainer(i for i, _ in instances),
                     offsets=ListContainer(offsets), strtab=bytes(table))


def text_body(kind: int, ident: int, text: str) -> Container:
    return Container(type=kind, ident=ident & 0xFFFFFFFF, text=text.encode() + b"\0")


def labelset_body(timestamp: Timestamp, ltype: int, ident: int,
                  sets: Sequence[tuple[int, bytes, Sequence[Container]]]) -> Container:
    return Container(
        timestamp=timestamp, type=ltype, ident=ident & 0xFFFFFFFF, nsets=len(sets),
        sets=ListContainer(Container(inst=inst & 0xFFFFFFFF, jsonlen=len(js), json=js,
                                     nlabels=len(labels), labels=ListContainer(labels))
                           for inst, js, labels in sets),
        tail=b"")


class ArchiveWriter:
    """Appends records to the files of a new archive ``base`` (version 2 or 3)."""

    def __init__(self, base: str | Path, version: int) -> None:
        self.base = Path(base)
        self.version = version
        self.s = structs(version)
        self.label: LabelFields | None = None
        self.vol = 0
        # open between start() and close(): the writer appends to all three in turn
        self._meta: BufferedWriter | None = None
        self._data: BufferedWriter | None = None
        self._index: BufferedWriter | None = None
        self.meta_types = {
            "indom": TYPE_INDOM if version == 3 else TYPE_INDOM_V2,
            "label": TYPE_LABEL if version == 3 else TYPE_LABEL_V2,
        }

    @property
    def started(self) -> bool:
        return self.label is not None

    def start(self, label: LabelFields) -> None:
        """Create the files and write their labels (index, meta, volume 0 as libpcp does)."""
        if self.base.parent and not self.base.parent.exists():
            self.base.parent.mkdir(parents=True)
        # remove an earlier archive of the same name, and nothing else
        for stale in self.base.parent.glob(self.base.name + ".*"):
            plain, _ = strip_compression(stale.name[len(self.base.name) + 1:])
            if plain in ("meta", "index") or re.fullmatch(r"0|[1-9][0-9]*", plain):
                stale.unlink()
        self.label = label
        self._index = open(f"{self.base}.index", "wb")  # noqa: SIM115 (closed by close())
        self._meta = open(f"{self.base}.meta", "wb")  # noqa: SIM115
        self._data = open(f"{self.base}.0", "wb")  # noqa: SIM115
        self._index.write(self.s.label_record.build(label_container(self.version, label, PM_LOG_VOL_TI)))
        self._meta.write(self.s.label_record.build(label_container(self.version, label, PM_LOG_VOL_META)))
        self._data.write(self.s.label_record.build(label_container(self.version, label, 0)))

    def meta_offset(self) -> int:
        assert self._meta is not None
        return self._meta.tell()

    def data_offset(self) -> int:
        assert self._data is not None
        return self._data.tell()

    def put_meta(self, rtype: int, body: Container) -> None:
        assert self._meta is not None
        self._meta.write(self.s.meta_record.build(Container(type=rtype, body=body)))

    def put_desc(self, *args: Any) -> None:
        self.put_meta(TYPE_DESC, desc_body(*args))

    def put_indom(self, timestamp: Timestamp, indom: int,
                  instances: Sequence[tuple[int, str | None]], *, delta: bool = False) -> None:
        rtype = TYPE_INDOM_DELTA if delta else self.meta_types["indom"]
        self.put_meta(rtype, indom_body(timestamp, indom, instances))

    def put_text(self, kind: int, ident: int, text: str) -> None:
        self.put_meta(TYPE_TEXT, text_body(kind, ident, text))

    def put_labels(self, *args: Any) -> None:
        self.put_meta(self.meta_types["label"], labelset_body(*args))

    def encode_result(self, result: Container) -> bytes:
        record: bytes = self.s.result_record.build(result)
        return record

    def put_result_bytes(self, record: bytes) -> None:
        assert self._data is not None
        self._data.write(record)

    def put_index(self, timestamp: Timestamp, *, off_meta: int | None = None,
                  off_data: int | None = None) -> None:
        assert self._index is not None
        entry = Container(timestamp=timestamp, vol=self.vol,
                          off_meta=self.meta_offset() if off_meta is None else off_meta,
                          off_data=self.data_offset() if off_data is None else off_data)
        self._index.write(self.s.index_entry.build(entry))

    def new_volume(self) -> None:
        """Close the current volume and start the next with the same label but its number."""
        assert self._data is not None and self.label is not None
        self._data.close()
        self.vol += 1
        self._data = open(f"{self.base}.{self.vol}", "wb")  # noqa: SIM115 (closed by close())
        self._data.write(self.s.label_record.build(label_container(self.version, self.label, self.vol)))

    def close(self) -> None:
        for fh in (self._index, self._meta, self._data):
            if fh is not None:
                fh.close()
