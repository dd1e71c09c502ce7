"""The invalid corpus: one-fault archives, each made from a valid generated archive.

Every case starts from an archive that ``pcpconform.fixtures.generate`` writes from a bundled fixture
(``corpus/fixtures/example.yaml`` or ``events.yaml``), in version 2 and/or 3, and applies one
fault by editing bytes at offsets found by parsing the archive (``pcpconform.io.reader`` framing,
``pcpconform.format.schema`` layouts). Where the fault changes a record's length, the record is
rebuilt with the schema and the index offsets after it are moved by the same amount, so that
the fault stays the only one. Each case names the diagnostic codes the validator must report:
its error codes exactly, its warning and info codes at least.

    python -m pcpconform.check.corpus OUTDIR            # build the corpus and OUTDIR/manifest.json
    python -m pcpconform.check.corpus --readme [FILE]   # write the corpus README (table of cases)

``OUTDIR/manifest.json`` is an object: ``cases`` (a list of ``{"name", "archive", "fault",
"expect", "clause"}``, plus ``"options"`` for the keyword arguments of ``check_archive`` a case
needs), ``valid`` (the untouched originals, which must check clean) and ``uncovered`` (error
codes no byte edit can produce, each with the reason).
"""

from __future__ import annotations

import argparse
import dataclasses
import gzip
import json
import lzma
import shutil
import struct
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from construct import Container, ListContainer

from pcpconform.check.rules import RULES, Severity
from pcpconform.format.pmtypes import PmID, PmInDom, Timestamp
from pcpconform.format.schema import (
    TYPE_DESC,
    TYPE_INDOM,
    TYPE_INDOM_DELTA,
    TYPE_INDOM_V2,
    TYPE_LABEL,
    TYPE_LABEL_V2,
    TYPE_TEXT,
    block_index,
    block_offset,
    event_array,
    structs,
)

__all__ = ["Case", "CASES", "UNCOVERED", "ArchiveEdit", "build_corpus", "render_readme", "main"]

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "corpus" / "fixtures"
README = ROOT / "corpus" / "invalid" / "README.md"
BASE = "a"
SOURCES = ("example", "events")

#: Error codes that no edit of an archive's bytes can produce, and why.
UNCOVERED: dict[str, str] = {
    "check.internal": "reported only when the checker itself fails; no archive is meant to cause it",
    "file.too-large": "needs a version 2 .meta or data volume holding more than 2 GiB of "
                      "well-framed records (zero padding ends the records instead); even "
                      "compressed, checking it means decoding 2 GiB, too slow for this corpus",
}


# --------------------------------------------------------------------------------------------
# editing an archive in memory
# --------------------------------------------------------------------------------------------

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
        return self.s.meta_record.build(Container(type=rtype, body=body))

    def find_meta(self, kind: str, ident: int | None = None, nth: int = 0) -> int:
        """Record number of the nth .meta record of a kind (desc, indom, text, label)."""
        tags = {"desc": (TYPE_DESC,), "indom": (TYPE_INDOM_V2, TYPE_INDOM, TYPE_INDOM_DELTA),
                "text": (TYPE_TEXT,), "label": (TYPE_LABEL_V2, TYPE_LABEL)}[kind]
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
        at = self.s.result_header_size + sum(8 + (4 + 8 * v.numval if v.numval > 0 else 0)
                                             for v in c.vset)
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
        at = self.s.result_header_size + sum(8 + (4 + 8 * len(v.values) if v.numval > 0 else 0)
                                             for v in res.vsets)
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
        payload = self.s.result.build(Container(timestamp=res.timestamp, numpmid=len(out), vset=out,
                                                blocks=blocks)) + res.extra
        word = (len(payload) + 8).to_bytes(4, "big")
        return word + payload + word

    def put_result(self, i: int, res: Result, part: str = "0") -> None:
        self.replace(part, i, self.build_result(res))

    def vset(self, res: Result, pmid: str) -> VSet:
        want = int(PmID(pmid))
        return next(v for v in res.vsets if v.pmid == want)

    # -- labels --------------------------------------------------------------------------
    def label(self, part: str) -> Container:
        return self.s.label.parse(bytes(self.files[part][4:self.lsize - 4]))

    def put_label(self, part: str, lab: Container) -> None:
        self.files[part][0:self.lsize] = self.s.label_record.build(lab)

    def label_field(self, fld: str) -> int:
        """Byte offset of a label field from the start of the file."""
        v2 = {"magic": 4, "pid": 8, "start": 12, "vol": 20, "hostname": 24, "timezone": 88}
        v3 = {"magic": 4, "pid": 8, "start": 12, "vol": 24, "features": 28, "reserved": 32,
              "hostname": 36, "timezone": 292, "zoneinfo": 548}
        return (v2 if self.version == 2 else v3)[fld]

    # -- output --------------------------------------------------------------------------
    def save(self, base: Path) -> None:
        base.parent.mkdir(parents=True, exist_ok=True)
        for part, data in self.files.items():
            (base.parent / f"{base.name}.{part}").write_bytes(bytes(data))
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


# --------------------------------------------------------------------------------------------
# the cases
# --------------------------------------------------------------------------------------------

Mutation = Callable[[ArchiveEdit], None]


@dataclass
class Case:
    """One fault: applied to each listed version of the source archive."""

    name: str
    fault: str
    expect: list[str] | dict[int, list[str]]
    mutate: Mutation
    versions: tuple[int, ...] = (2, 3)
    source: str = "example"
    options: dict[str, Any] = field(default_factory=dict)

    def expected(self, version: int) -> list[str]:
        return list(self.expect[version] if isinstance(self.expect, dict) else self.expect)


CASES: list[Case] = []


def case(name: str, fault: str, expect: list[str] | dict[int, list[str]], *,
         versions: tuple[int, ...] = (2, 3), source: str = "example",
         options: dict[str, Any] | None = None) -> Callable[[Mutation], Mutation]:
    def register(fn: Mutation) -> Mutation:
        CASES.append(Case(name, fault, expect, fn, versions, source, options or {}))
        return fn
    return register


def _compress(kind: str, data: bytes) -> bytes:
    if kind == "gz":
        return gzip.compress(data, mtime=0)
    return lzma.compress(data)


# -- files -----------------------------------------------------------------------------------

@case("file-no-archive", "every file is renamed to base name `b`, so nothing is named `a.*`",
      ["file.no-archive"])
def _(ed: ArchiveEdit) -> None:
    for part in list(ed.files):
        ed.extra[f"b.{part}"] = bytes(ed.files.pop(part))


@case("file-missing-meta", "the `.meta` file is deleted", ["file.missing-meta", "value.undescribed"])
def _(ed: ArchiveEdit) -> None:
    del ed.files["meta"]


@case("file-missing-volume", "the only data volume `a.0` is deleted",
      ["file.missing-volume", "index.vol-missing"])
def _(ed: ArchiveEdit) -> None:
    del ed.files["0"]


@case("file-missing-index", "the `.index` file is deleted", ["file.missing-index"])
def _(ed: ArchiveEdit) -> None:
    del ed.files["index"]


@case("file-name", "a copy of volume 0 is added as `a.00` (not canonical decimal)", ["file.name"])
def _(ed: ArchiveEdit) -> None:
    ed.files["00"] = bytearray(ed.files["0"])


@case("file-duplicate", "a gzip copy `a.meta.gz` is added next to `a.meta`", ["file.duplicate"])
def _(ed: ArchiveEdit) -> None:
    ed.files["meta.gz"] = bytearray(_compress("gz", bytes(ed.files["meta"])))


@case("file-duplicate-volume", "an xz copy `a.0.xz` is added next to `a.0`", ["file.duplicate-volume"])
def _(ed: ArchiveEdit) -> None:
    ed.files["0.xz"] = bytearray(_compress("xz", bytes(ed.files["0"])))


@case("file-read", "`a.0` is replaced by `a.0.gz` whose gzip magic is damaged",
      ["file.read", "index.vol-missing"])
def _(ed: ArchiveEdit) -> None:
    data = bytearray(_compress("gz", bytes(ed.files.pop("0"))))
    data[0] ^= 0xFF
    ed.files["0.gz"] = data


@case("file-decompress-limit", "`a.0` is stored as `a.0.xz` and checked with a decompression "
      "limit of 64 bytes (options)", ["file.decompress-limit", "index.vol-missing"],
      options={"decompress_limit": 64})
def _(ed: ArchiveEdit) -> None:
    ed.files["0.xz"] = bytearray(_compress("xz", bytes(ed.files.pop("0"))))


@case("file-empty-meta", "`.meta` is cut back to its label (index `off_meta` moved to its end)",
      ["file.empty", "meta.no-desc", "value.undescribed"])
def _(ed: ArchiveEdit) -> None:
    del ed.files["meta"][ed.lsize:]
    for n, e in enumerate(ed.entries(), 1):
        e.off_meta = ed.lsize
        ed.put_entry(n, e)


@case("file-empty-volume0", "`a.0` is cut back to its label (index `off_data` moved to its end)",
      ["file.empty"])
def _(ed: ArchiveEdit) -> None:
    del ed.files["0"][ed.lsize:]
    for n, e in enumerate(ed.entries(), 1):
        e.off_data = ed.lsize
        ed.put_entry(n, e)


@case("file-empty-volume", "a volume `a.1` holding only its label is added", ["file.empty-volume"])
def _(ed: ArchiveEdit) -> None:
    lab = ed.label("0")
    lab.vol = 1
    ed.files["1"] = bytearray(ed.s.label_record.build(lab))


@case("volume-switch-unindexed", "a volume `a.1` is added whose one record (a copy of the last "
      "result, 10 s later) has no index entry", ["volume.switch-unindexed"])
def _(ed: ArchiveEdit) -> None:
    lab = ed.label("0")
    lab.vol = 1
    res = ed.result(len(ed.records("0")))
    res.timestamp = shifted(res.timestamp, 10)
    ed.files["1"] = bytearray(ed.s.label_record.build(lab) + ed.build_result(res))


# -- framing ---------------------------------------------------------------------------------

@case("frame-length", "the length word (and trailer) of the last result is set to 4; the last "
      "index entry then points past the readable end", ["frame.length", "index.offset"])
def _(ed: ArchiveEdit) -> None:
    offset, length = ed.records("0")[-1]
    ed.poke("0", offset, "I", 4)
    ed.poke("0", offset + length - 4, "I", 4)


@case("frame-truncated", "`a.0` loses its last 10 bytes, cutting the last result short; the last "
      "index entry then points past the readable end", ["frame.truncated", "index.offset"])
def _(ed: ArchiveEdit) -> None:
    del ed.files["0"][-10:]


@case("frame-trailer", "the trailing length word of a `.meta` descriptor is increased by 1",
      ["frame.trailer", "index.offset"])
def _(ed: ArchiveEdit) -> None:
    offset, length = ed.records("meta")[ed.desc("hinv.ncpu") - 1]
    ed.poke("meta", offset + length - 4, "I", length + 1)


@case("frame-stray-bytes", "3 bytes are appended to `a.0` after its last record", ["frame.stray-bytes"])
def _(ed: ArchiveEdit) -> None:
    ed.files["0"] += b"\0\0\0"


@case("frame-stray-bytes-meta", "7 bytes are appended to `a.meta` after its last record",
      ["frame.stray-bytes"])
def _(ed: ArchiveEdit) -> None:
    ed.files["meta"] += b"\0" * 7


@case("frame-align", "a mark record gets 2 extra zero bytes (length not a multiple of 4; the bytes "
      "do not decode as a value block)", ["frame.align", "result.decode", "result.mark-size"])
def _(ed: ArchiveEdit) -> None:
    i = next(k for k, (_, length) in enumerate(ed.records("0"), 1) if length == ed.s.mark_size)
    res = ed.result(i)
    res.extra = b"\0\0"
    ed.put_result(i, res)


# -- labels ----------------------------------------------------------------------------------

@case("label-truncated", "`.index` is cut to its first 6 bytes", ["label.truncated"])
def _(ed: ArchiveEdit) -> None:
    del ed.files["index"][6:]


@case("label-magic", "the `.index` label magic is 0x50052700|v instead of 0x50052600|v", ["label.magic"])
def _(ed: ArchiveEdit) -> None:
    ed.files["index"][6] ^= 0x01


@case("label-version", "the version byte of the `.index` label magic is 4", ["label.version"])
def _(ed: ArchiveEdit) -> None:
    ed.files["index"][7] = 4


@case("label-version-1", "the version byte of the `.meta` label magic is 1 (v1 archives are no "
      "longer readable)", ["label.version", "value.undescribed"])
def _(ed: ArchiveEdit) -> None:
    ed.files["meta"][7] = 1


@case("label-length", "the `.index` label's leading length word is 4 more than the version's size",
      ["label.length"])
def _(ed: ArchiveEdit) -> None:
    ed.poke("index", 0, "I", ed.lsize + 4)


@case("label-trailer", "the `.index` label's trailing length word is 4 more than its header",
      ["label.trailer"])
def _(ed: ArchiveEdit) -> None:
    ed.poke("index", ed.lsize - 4, "I", ed.lsize + 4)


@case("label-vol", "the `.index` label's volume number is -1 (the `.meta` number) instead of -2",
      ["label.vol"])
def _(ed: ArchiveEdit) -> None:
    ed.poke("index", ed.label_field("vol"), "i", -1)


@case("label-vol-data", "the `a.0` label's volume number is 1", ["label.vol"])
def _(ed: ArchiveEdit) -> None:
    ed.poke("0", ed.label_field("vol"), "i", 1)


@case("label-mismatch", "the `a.0` label's pid differs from the other labels' by 1", ["label.mismatch"])
def _(ed: ArchiveEdit) -> None:
    at = ed.label_field("pid")
    ed.poke("0", at, "i", ed.peek("0", at, "i") + 1)


@case("label-mismatch-version", "`a.0` is taken from the other version of the same archive "
      "(index offsets adjusted to it)", ["label.mismatch"], versions=(2,))
def _(ed: ArchiveEdit) -> None:
    other = ArchiveEdit(ed.originals[("example", 5 - ed.version)])
    ed.files["0"] = other.files["0"]
    for n, e in enumerate(ed.entries(), 1):
        e.off_data += other.lsize - ed.lsize
        ed.put_entry(n, e)


@case("label-features", "bit 0 of the v3 `features` word of `a.0` is set", ["label.features"],
      versions=(3,))
def _(ed: ArchiveEdit) -> None:
    ed.poke("0", ed.label_field("features"), "I", 1)


@case("label-reserved", "the v3 `reserved` word of `.meta` is 0xdeadbeef", ["label.reserved"],
      versions=(3,))
def _(ed: ArchiveEdit) -> None:
    ed.poke("meta", ed.label_field("reserved"), "I", 0xDEADBEEF)


@case("label-start-mismatch", "the `.index` label's start time is 1 s later than the others'",
      ["label.start-mismatch"])
def _(ed: ArchiveEdit) -> None:
    at = ed.label_field("start")
    ed.poke("index", at, "I", ed.peek("index", at, "I") + 1)


@case("label-timezone-mismatch", "the `a.0` label's timezone reads `XTC` instead of `UTC`",
      ["label.timezone-mismatch"])
def _(ed: ArchiveEdit) -> None:
    ed.files["0"][ed.label_field("timezone")] = ord("X")


@case("label-unterminated", "the hostname field of every label is filled with `h` bytes, no NUL",
      ["label.unterminated"])
def _(ed: ArchiveEdit) -> None:
    size = 64 if ed.version == 2 else 256
    at = ed.label_field("hostname")
    for part in ("meta", "index", "0"):
        ed.files[part][at:at + size] = b"h" * size


# -- .meta -----------------------------------------------------------------------------------

@case("meta-decode", "an 8-byte record (no type tag) is inserted after the first descriptor",
      ["meta.decode"])
def _(ed: ArchiveEdit) -> None:
    ed.insert("meta", 2, struct.pack(">II", 8, 8))


@case("desc-length", "the descriptor of hinv.ncpu claims 7 names but holds one",
      ["desc.length", "value.undescribed"])
def _(ed: ArchiveEdit) -> None:
    offset, _ = ed.records("meta")[ed.desc("hinv.ncpu") - 1]
    ed.poke("meta", offset + 28, "i", 7)


@case("meta-tag", "a help-text record's type tag is 9", ["meta.tag"])
def _(ed: ArchiveEdit) -> None:
    offset, _ = ed.records("meta")[ed.find_meta("text") - 1]
    ed.poke("meta", offset + 4, "i", 9)


@case("meta-tag-version", "the first instance domain is written as the other version's record "
      "(tag 5 with T3 in v2, tag 2 with T2 in v3)", ["meta.tag-version"])
def _(ed: ArchiveEdit) -> None:
    i = ed.find_meta("indom")
    rec = ed.meta(i)
    other = 3 if ed.version == 2 else 2
    data = structs(other).meta_record.build(Container(
        type=TYPE_INDOM if other == 3 else TYPE_INDOM_V2, body=rec.body))
    ed.replace("meta", i, data)


@case("meta-no-desc", "every descriptor record is removed from `.meta`",
      ["meta.no-desc", "value.undescribed", "indom.undescribed", "text.undescribed"])
def _(ed: ArchiveEdit) -> None:
    while True:
        try:
            i = ed.find_meta("desc")
        except IndexError:
            return
        ed.remove("meta", i)


def _add_tail(ed: ArchiveEdit, i: int) -> None:
    """Four zero bytes after the last field of .meta record i."""
    rec = ed.meta(i)
    rec.body.tail = b"\0\0\0\0"
    ed.put_meta(i, rec)


@case("meta-tail", "4 zero bytes are added after the names of hinv.ncpu's descriptor", ["meta.tail"])
def _(ed: ArchiveEdit) -> None:
    _add_tail(ed, ed.desc("hinv.ncpu"))


@case("desc-no-numnames", "hinv.ncpu's descriptor is cut to 32 bytes: no numnames word",
      ["desc.no-numnames", "value.undescribed"])
def _(ed: ArchiveEdit) -> None:
    i = ed.desc("hinv.ncpu")
    _, data = ed.record("meta", i)
    payload = data[4:28]
    word = struct.pack(">I", len(payload) + 8)
    ed.replace("meta", i, word + payload + word)


@case("indom-length", "the first indom record claims 3 instances but holds 2",
      ["indom.length", "value.no-indom"])
def _(ed: ArchiveEdit) -> None:
    offset, _ = ed.records("meta")[ed.find_meta("indom") - 1]
    ed.poke("meta", offset + (20 if ed.version == 2 else 24), "i", 40)


@case("labelset-length", "4 zero bytes are added after the context label set", ["labelset.length"])
def _(ed: ArchiveEdit) -> None:
    _add_tail(ed, ed.find_meta("label"))


@case("labelset-length-nsets", "the context label record claims 3 label sets but holds 1",
      ["labelset.length"])
def _(ed: ArchiveEdit) -> None:
    offset, _ = ed.records("meta")[ed.find_meta("label") - 1]
    at = offset + 8 + (8 if ed.version == 2 else 12) + 8
    assert ed.peek("meta", at, "i") == 1
    ed.poke("meta", at, "i", 3)


@case("meta-time-order", "the context label set's timestamp is 20 s after the start, later than "
      "the instance domain record that follows it", ["meta.time-order", "index.invariant"])
def _(ed: ArchiveEdit) -> None:
    i = ed.find_meta("label")
    rec = ed.meta(i)
    rec.body.timestamp = shifted(rec.body.timestamp, 20)
    ed.put_meta(i, rec)


@case("meta-time-range", "the first instance domain's timestamp is 5 s before the archive start",
      ["meta.time-range"])
def _(ed: ArchiveEdit) -> None:
    i = ed.find_meta("indom")
    rec = ed.meta(i)
    rec.body.timestamp = shifted(rec.body.timestamp, -5)
    ed.put_meta(i, rec)


# -- descriptors and units -------------------------------------------------------------------

def _edit_desc(name: str, **changes: Any) -> Mutation:
    def mutate(ed: ArchiveEdit) -> None:
        i = ed.desc(name)
        rec = ed.meta(i)
        for key, value in changes.items():
            if key == "units":
                value = dataclasses.replace(rec.body.units, **value)
            rec.body[key] = value
        ed.put_meta(i, rec)
    return mutate


case("desc-type", "hinv.ncpu's descriptor type is 42", ["desc.type"])(_edit_desc("hinv.ncpu", type=42))
case("desc-sem", "kernel.all.load's descriptor semantics is 2 (the retired PM_SEM_COUNTER 2)",
     ["desc.sem"])(_edit_desc("kernel.all.load", sem=2))
case("desc-no-name", "hinv.ncpu's descriptor has no names", ["desc.no-name"])(
    _edit_desc("hinv.ncpu", names=ListContainer()))
case("desc-name", "hinv.ncpu's descriptor has one empty name", ["desc.name"])(
    _edit_desc("hinv.ncpu", names=ListContainer([b""])))
case("desc-name-long", "hinv.ncpu's descriptor has a 4096-byte name", ["desc.name"])(
    _edit_desc("hinv.ncpu", names=ListContainer([b"x" * 4096])))
case("desc-name-syntax", "hinv.ncpu's descriptor is named `hinv..ncpu`", ["desc.name-syntax"])(
    _edit_desc("hinv.ncpu", names=ListContainer([b"hinv..ncpu"])))
case("desc-name-reused", "hinv.ncpu's descriptor is named `kernel.all.load`, a name already bound",
     ["desc.name-reused"])(_edit_desc("hinv.ncpu", names=ListContainer([b"kernel.all.load"])))
case("desc-indom-domain", "disk.dev.read_bytes (domain 60) has indom 61.1",
     ["desc.indom-domain", "indom.undescribed", "value.no-indom"])(
    _edit_desc("disk.dev.read_bytes", indom=PmInDom("61.1")))
case("units-scale", "disk.dev.read_bytes has scaleSpace 9 (above PM_SPACE_EBYTE)", ["units.scale"])(
    _edit_desc("disk.dev.read_bytes", units={"scaleSpace": 9}))
case("units-scale-time", "network.interface.speed has dimTime -1 and scaleTime 6 (above PM_TIME_DAY)",
     ["units.scale"])(_edit_desc("network.interface.speed", units={"scaleTime": 6}))
case("units-dim", "mem.util.used has dimTime 3", ["units.dim"])(
    _edit_desc("mem.util.used", units={"dimTime": 3}))
case("units-scale-without-dim", "hinv.ncpu has scaleTime 2 with dimTime 0",
     ["units.scale-without-dim"])(_edit_desc("hinv.ncpu", units={"scaleTime": 2}))
case("units-extra", "mem.util.used has extraUnit 7 in the low byte", ["units.extra"])(
    _edit_desc("mem.util.used", units={"extraUnit": 7, "extraScale": 1}))
case("value-nosupport", "hinv.ncpu's descriptor type is -1 (NOSUPPORT) but it has values",
     ["value.nosupport"])(_edit_desc("hinv.ncpu", type=-1))


@case("desc-conflict", "a second descriptor of kernel.all.load with discrete semantics is appended",
      ["desc.conflict"])
def _(ed: ArchiveEdit) -> None:
    rec = ed.meta(ed.desc("kernel.all.load"))
    rec.body.sem = 4
    ed.insert("meta", len(ed.records("meta")) + 1, ed.s.meta_record.build(rec))


# -- instance domains ------------------------------------------------------------------------

def _edit_indom(fn: Callable[[Container], None], nth: int = 0) -> Mutation:
    def mutate(ed: ArchiveEdit) -> None:
        i = ed.find_meta("indom", nth=nth)
        rec = ed.meta(i)
        fn(rec.body)
        ed.put_meta(i, rec)
    return mutate


def _set(path: str, k: int, value: Any) -> Callable[[Container], None]:
    def fn(body: Container) -> None:
        body[path][k] = value
    return fn


def _unsort(body: Container) -> None:
    body.instlist = ListContainer(reversed(body.instlist))
    body.offsets = ListContainer(reversed(body.offsets))


def _rename(k: int, name: bytes) -> Callable[[Container], None]:
    def fn(body: Container) -> None:
        names = [n for n in body.names]
        names[k] = name
        table, offsets = b"", []
        for n in names:
            offsets.append(len(table))
            table += n + b"\0"
        body.offsets, body.strtab = ListContainer(offsets), table
    return fn


def _empty(body: Container) -> None:
    body.numinst, body.instlist, body.offsets, body.strtab = 0, ListContainer(), ListContainer(), b""


case("indom-inst-negative", "the first instance of the first indom record has id -5",
     ["indom.inst-negative", "value.unknown-inst"])(_edit_indom(_set("instlist", 0, -5)))
case("indom-offset", "a name offset of the first indom record is 100, past its string table",
     ["indom.offset", "value.unknown-inst"])(_edit_indom(_set("offsets", 1, 100)))
case("indom-deleted-in-full", "a name offset of the first (full) indom record is -1",
     ["indom.deleted-in-full", "value.unknown-inst"])(_edit_indom(_set("offsets", 1, -1)))
case("indom-unsorted", "the instances of the first v3 indom record are in descending order",
     ["indom.unsorted"], versions=(3,))(_edit_indom(_unsort))
case("indom-duplicate-id", "both instances of the first indom record have id 0",
     ["indom.duplicate-id", "value.unknown-inst"])(_edit_indom(_set("instlist", 1, 0)))
case("indom-duplicate-name", "both instances of the first indom record are named `sda`",
     ["indom.duplicate-name"])(_edit_indom(_rename(1, b"sda")))
case("indom-empty-name", "the second instance of the first indom record has an empty name",
     ["indom.empty-name"])(_edit_indom(_rename(1, b"")))
case("indom-empty", "the first indom record has no instances",
     ["indom.empty", "value.no-indom"])(_edit_indom(_empty))


@case("indom-delta-no-full", "the first v3 indom record's tag is 6 (delta) instead of 5",
      ["indom.delta-no-full"], versions=(3,))
def _(ed: ArchiveEdit) -> None:
    offset, _ = ed.records("meta")[ed.find_meta("indom") - 1]
    ed.poke("meta", offset + 4, "i", TYPE_INDOM_DELTA)


@case("indom-delta-change", "a delta record 20 s after the start deletes absent instance 7 and "
      "re-adds present instance 0", ["indom.delta-change"], versions=(3,))
def _(ed: ArchiveEdit) -> None:
    rec = ed.meta(ed.find_meta("indom"))
    body = Container(timestamp=shifted(rec.body.timestamp, 20), indom=rec.body.indom, numinst=2,
                     instlist=ListContainer([0, 7]), offsets=ListContainer([0, -1]), strtab=b"sda\0")
    ed.insert("meta", len(ed.records("meta")) + 1, ed.build_meta(TYPE_INDOM_DELTA, body))


@case("indom-undescribed", "an instance domain 60.9 that no descriptor uses is appended",
      ["indom.undescribed"])
def _(ed: ArchiveEdit) -> None:
    rec = ed.meta(ed.find_meta("indom", nth=-1))
    rec.body.indom = PmInDom("60.9")
    ed.insert("meta", len(ed.records("meta")) + 1, ed.s.meta_record.build(rec))


# -- label sets and help text ----------------------------------------------------------------

def _edit_meta(kind: str, fn: Callable[[Container], None]) -> Mutation:
    def mutate(ed: ArchiveEdit) -> None:
        i = ed.find_meta(kind)
        rec = ed.meta(i)
        fn(rec.body)
        ed.put_meta(i, rec)
    return mutate


def _labels_nsets(body: Container) -> None:
    body.sets = ListContainer([body.sets[0], body.sets[0]])
    body.nsets = 2


def _labels_json(body: Container) -> None:
    s = body.sets[0]
    s.json = b"[" + s.json[1:]


def _labels_nlabels(body: Container) -> None:
    s = body.sets[0]
    s.labels = ListContainer(s.labels[:1])
    s.nlabels = 1


def _labels_span(body: Container) -> None:
    body.sets[0].labels[0].name = 200


def _labels_unsorted(body: Container) -> None:
    s = body.sets[0]
    s.labels = ListContainer(reversed(s.labels))


def _field(name: str, value: Any) -> Callable[[Container], None]:
    def fn(body: Container) -> None:
        body[name] = value
    return fn


case("labelset-type", "the context label set's type is 3", ["labelset.type"])(
    _edit_meta("label", _field("type", 3)))
case("labelset-ident", "the context label set's ident is 5 instead of PM_IN_NULL",
     ["labelset.ident"])(_edit_meta("label", _field("ident", 5)))
case("labelset-nsets", "the context label record holds two label sets", ["labelset.nsets"])(
    _edit_meta("label", _labels_nsets))
case("labelset-json", "the context label set's JSON starts with `[` (not an object)",
     ["labelset.json"])(_edit_meta("label", _labels_json))
case("labelset-nlabels", "the context label set lists 1 label for a JSON object of 2 members",
     ["labelset.nlabels"])(_edit_meta("label", _labels_nlabels))
case("labelset-span", "the first label's name offset is 200, past the end of the JSON",
     ["labelset.span"])(_edit_meta("label", _labels_span))
case("labelset-name", "the context label set lists its labels in reverse name order",
     ["labelset.name"])(_edit_meta("label", _labels_unsorted))
case("text-type", "a help text's type is 7 (both ONELINE and HELP)", ["text.type"])(
    _edit_meta("text", _field("type", 7)))
case("text-nul", "a help text loses its terminating NUL", ["text.nul"])(
    _edit_meta("text", lambda body: body.__setitem__("text", body.text.rstrip(b"\0"))))
case("text-undescribed", "a metric help text names pmID 60.0.99, which has no descriptor",
     ["text.undescribed"])(_edit_meta("text", _field("ident", int(PmID("60.0.99")))))


# -- times -----------------------------------------------------------------------------------

@case("time-fraction", "the first index entry's fraction of a second is 1.5 s "
      "(usec 1500000 / nsec 1500000000)", ["time.fraction"])
def _(ed: ArchiveEdit) -> None:
    at = ed.entry_offset(1)
    if ed.version == 2:
        ed.poke("index", at + 4, "i", 1_500_000)
    else:
        ed.poke("index", at + 8, "i", 1_500_000_000)


@case("time-fraction-meta", "the first indom record's nanoseconds are 1000000000 (v3) / "
      "microseconds 1000000 (v2)", ["time.fraction"])
def _(ed: ArchiveEdit) -> None:
    offset, _ = ed.records("meta")[ed.find_meta("indom") - 1]
    if ed.version == 2:
        ed.poke("meta", offset + 12, "i", 1_000_000)
    else:
        ed.poke("meta", offset + 16, "i", 1_000_000_000)


@case("time-fraction-result", "the second result's fraction of a second is negative",
      ["time.fraction"])
def _(ed: ArchiveEdit) -> None:
    offset, _ = ed.records("0")[1]
    ed.poke("0", offset + (8 if ed.version == 2 else 12), "i", -5000)


# -- results ---------------------------------------------------------------------------------

def _edit_result(i: int, fn: Callable[[ArchiveEdit, Result], None]) -> Mutation:
    def mutate(ed: ArchiveEdit) -> None:
        res = ed.result(i)
        fn(ed, res)
        ed.put_result(i, res)
    return mutate


@case("result-decode", "the first result's numpmid is 1000, far more value sets than it holds",
      ["result.decode"])
def _(ed: ArchiveEdit) -> None:
    offset, _ = ed.records("0")[0]
    ed.poke("0", offset + ed.s.result_header_size - 4, "i", 1000)


@case("result-mark-size", "a mark record carries an empty value block (vtype 0, vlen 4) after numpmid",
      ["result.mark-size"])
def _(ed: ArchiveEdit) -> None:
    i = next(k for k, (_, length) in enumerate(ed.records("0"), 1) if length == ed.s.mark_size)
    res = ed.result(i)
    res.extra = struct.pack(">I", 4)
    ed.put_result(i, res)


@case("result-valfmt", "the valfmt of the second result's first value set is 7", ["result.valfmt"])
def _(ed: ArchiveEdit) -> None:
    offset, _ = ed.records("0")[1]
    ed.poke("0", offset + ed.s.result_header_size + 8, "I", 7)


@case("result-dptr", "the value pointer of kernel.uname.release in the first result points past "
      "the record (its block, the last, is removed)", ["result.dptr"])
def _(ed: ArchiveEdit) -> None:
    res = ed.result(1)
    vs = ed.vset(res, "60.12.0")
    vs.values = [(inst, 4096) for inst, _ in vs.values]
    ed.put_result(1, res)


@case("result-dptr-mid", "the first value pointer of the second result points one word into its "
      "block (the words there read as a block of vlen 0; the real block is orphaned)",
      ["result.dptr", "result.vlen", "result.blocks"])
def _(ed: ArchiveEdit) -> None:
    offset, _ = ed.records("0")[1]
    at = offset + ed.s.result_header_size + 12 + 4
    ed.poke("0", at, "I", ed.peek("0", at, "I") + 1)


@case("result-vlen", "the vlen of the last value block of the first result runs 8 bytes past the "
      "record (the block does not decode and then counts as missing)",
      ["result.vlen", "result.decode", "result.blocks"])
def _(ed: ArchiveEdit) -> None:
    res = ed.result(1)
    vs = ed.vset(res, "60.12.0")
    inst, b = vs.values[0]
    offset, length = ed.records("0")[0]
    head = offset + length - 4 - len(b.vbuf) - len(b.pad) - 4
    assert ed.peek("0", head, "I") & 0xFFFFFF == 4 + len(b.vbuf)
    ed.poke("0", head, "I", (b.vtype << 24) | (4 + len(b.vbuf) + 8))


@case("result-blocks", "in the first result both disk values point at the same value block; the "
      "other block is unreferenced", ["result.blocks"])
def _(ed: ArchiveEdit) -> None:
    offset, _ = ed.records("0")[0]
    at = offset + ed.s.result_header_size + 12
    # vlist[0] = (inst, index) at +12, vlist[1] at +20: point the second at the first's block
    ed.poke("0", at + 12, "I", ed.peek("0", at + 4, "I"))


@case("result-blocks-tail", "the first result has 12 zero bytes after its last value block",
      ["result.blocks"])
def _(ed: ArchiveEdit) -> None:
    res = ed.result(1)
    res.extra = struct.pack(">I", 12) + b"\0" * 8
    ed.put_result(1, res)


@case("result-time-order", "the third result's timestamp is 5 s before the second's",
      ["result.time-order"])
def _(ed: ArchiveEdit) -> None:
    third = ed.records("0")[2][0]
    stamp = ts_bytes(ed.version, shifted(ed.result(2).timestamp, -5))
    ed.files["0"][third + 4:third + 4 + len(stamp)] = stamp


@case("result-before-start", "the first result's timestamp is 1 s before the archive start",
      ["result.before-start"])
def _(ed: ArchiveEdit) -> None:
    offset, _ = ed.records("0")[0]
    stamp = ts_bytes(ed.version, shifted(ed.label("0").start, -1))
    ed.files["0"][offset + 4:offset + 4 + len(stamp)] = stamp


# -- values ----------------------------------------------------------------------------------

def _insitu(pmid: str) -> Callable[[ArchiveEdit, Result], None]:
    def fn(ed: ArchiveEdit, res: Result) -> None:
        vs = ed.vset(res, pmid)
        vs.valfmt = 0
        vs.values = [(inst, int.from_bytes(b.vbuf[:4], "big")) for inst, b in vs.values]
    return fn


def _payload(pmid: str, vbuf: Callable[[bytes], bytes], k: int = 0) -> Callable[[ArchiveEdit, Result], None]:
    def fn(ed: ArchiveEdit, res: Result) -> None:
        vs = ed.vset(res, pmid)
        inst, b = vs.values[k]
        vs.values[k] = (inst, Block(b.vtype, vbuf(b.vbuf)))
    return fn


def _vtype(pmid: str, vtype: int) -> Callable[[ArchiveEdit, Result], None]:
    def fn(ed: ArchiveEdit, res: Result) -> None:
        vs = ed.vset(res, pmid)
        inst, b = vs.values[0]
        vs.values[0] = (inst, Block(vtype, b.vbuf, b.pad))
    return fn


def _inst(pmid: str, k: int, inst: int) -> Callable[[ArchiveEdit, Result], None]:
    def fn(ed: ArchiveEdit, res: Result) -> None:
        vs = ed.vset(res, pmid)
        vs.values[k] = (inst, vs.values[k][1])
    return fn


def _numval(pmid: str, numval: int) -> Callable[[ArchiveEdit, Result], None]:
    def fn(ed: ArchiveEdit, res: Result) -> None:
        vs = ed.vset(res, pmid)
        vs.numval, vs.valfmt, vs.values = numval, None, []
    return fn


def _pmid(old: str, new: str) -> Callable[[ArchiveEdit, Result], None]:
    def fn(ed: ArchiveEdit, res: Result) -> None:
        ed.vset(res, old).pmid = int(PmID(new))
    return fn


case("value-valfmt", "network.interface.speed (double) is stored INSITU in the first result",
     ["value.valfmt"])(_edit_result(1, _insitu("60.3.0")))
case("value-vtype", "mem.util.used (type 64) has a U64 value block in the second result",
     ["value.vtype"])(_edit_result(2, _vtype("60.1.2", 3)))
case("value-vtype-legacy", "mem.util.used has a value block of type 0 in the second result",
     ["value.vtype-legacy"])(_edit_result(2, _vtype("60.1.2", 0)))
case("value-vlen", "network.interface.speed (double) has a 4-byte payload in the first result",
     ["value.vlen"])(_edit_result(1, _payload("60.3.0", lambda b: b[:4])))
case("value-string-nul", "kernel.uname.release loses its NUL in the first result",
     ["value.string-nul"])(_edit_result(1, _payload("60.12.0", lambda b: b.rstrip(b"\0"))))
case("value-singular-inst", "hinv.ncpu (no indom) has instance 3 in the first result",
     ["value.singular-inst"])(_edit_result(1, _inst("60.0.32", 0, 3)))
case("value-unknown-inst", "disk.dev.read_bytes has instance 9 in the second result",
     ["value.unknown-inst"])(_edit_result(2, _inst("60.0.4", 1, 9)))
case("value-duplicate-inst", "disk.dev.read_bytes lists instance 0 twice in the first result",
     ["value.duplicate-inst"])(_edit_result(1, _inst("60.0.4", 1, 0)))
case("value-numval-code", "kernel.all.load has numval -99999 (not a PMAPI error) in the second result",
     ["value.numval-code"])(_edit_result(2, _numval("60.2.0", -99999)))
case("value-undescribed", "hinv.ncpu's values in the first result carry pmID 60.0.99",
     ["value.undescribed"])(_edit_result(1, _pmid("60.0.32", "60.0.99")))
case("value-counter-decrease", "disk.dev.read_bytes[sda] drops to 1 in the third result (no mark "
     "before it)", ["value.counter-decrease"])(
    _edit_result(3, _payload("60.0.4", lambda b: (1).to_bytes(8, "big"))))


@case("value-valfmt-change", "kernel.uname.release is DPTR in the first result and SPTR in the "
      "second that has it", ["value.valfmt-change"])
def _(ed: ArchiveEdit) -> None:
    pmid = int(PmID("60.12.0"))
    seen = [i for i in range(1, len(ed.records("0")) + 1)
            if any(v.pmid == pmid for v in ed.result(i).vsets)]
    res = ed.result(seen[1])
    ed.vset(res, "60.12.0").valfmt = 2
    ed.put_result(seen[1], res)


@case("value-insitu-float", "kernel.all.load (float) is stored INSITU in every result",
      ["value.insitu-float"])
def _(ed: ArchiveEdit) -> None:
    pmid = int(PmID("60.2.0"))
    for i in range(1, len(ed.records("0")) + 1):
        res = ed.result(i)
        if any(v.pmid == pmid for v in res.vsets):
            _insitu("60.2.0")(ed, res)
            ed.put_result(i, res)


@case("value-no-indom", "the first indom record's timestamp is 5 s after the first result that "
      "uses it", ["value.no-indom"])
def _(ed: ArchiveEdit) -> None:
    i = ed.find_meta("indom")
    rec = ed.meta(i)
    rec.body.timestamp = shifted(rec.body.timestamp, 5)
    ed.put_meta(i, rec)


# -- events ----------------------------------------------------------------------------------

def _event(fn: Callable[[bytearray], None], pmid: str = "62.0.1") -> Mutation:
    def mutate(ed: ArchiveEdit) -> None:
        res = ed.result(1)
        vs = ed.vset(res, pmid)
        inst, b = vs.values[0]
        buf = bytearray(b.vbuf)
        fn(buf)
        vs.values[0] = (inst, Block(b.vtype, bytes(buf)))
        ed.put_result(1, res)
    return mutate


def _missed_flags(buf: bytearray) -> None:
    arr = event_array(False).parse(bytes(buf))
    arr.records[1].flags |= 1
    buf[:] = event_array(False).build(arr)


def _param_type(buf: bytearray) -> None:
    # nrecords(4), record 0: timestamp T2 (8), flags (4), nparams (4), param 0: pmid (4), type (1)
    assert buf[20:24] == int(PmID("62.0.3")).to_bytes(4, "big")
    buf[24] = 2   # PM_TYPE_64 with a 4-byte value


case("event-structure", "the first event array claims 5 records but holds 2", ["event.structure"],
     source="events")(_event(lambda buf: buf.__setitem__(slice(0, 4), (5).to_bytes(4, "big"))))
case("event-param-len", "an event parameter of type 64 holds 4 value bytes", ["event.param-len"],
     source="events")(_event(_param_type))
case("event-missed", "a MISSED event record also has the POINT flag", ["event.missed"],
     source="events")(_event(_missed_flags))


# -- index -----------------------------------------------------------------------------------

def _edit_entry(n: int, fn: Callable[[ArchiveEdit, Container], None]) -> Mutation:
    def mutate(ed: ArchiveEdit) -> None:
        e = ed.entry(n if n > 0 else len(ed.entries()) + 1 + n)
        fn(ed, e)
        ed.put_entry(n if n > 0 else len(ed.entries()) + 1 + n, e)
    return mutate


@case("index-partial", "5 bytes of a partial entry are appended to `.index`", ["index.partial"])
def _(ed: ArchiveEdit) -> None:
    ed.files["index"] += b"\0" * 5


@case("index-empty", "`.index` is cut back to its label", ["index.empty"])
def _(ed: ArchiveEdit) -> None:
    del ed.files["index"][ed.lsize:]


case("index-vol", "the first index entry names volume -1", ["index.vol"])(
    _edit_entry(1, lambda ed, e: e.__setitem__("vol", -1)))
case("index-vol-missing", "the last index entry names volume 5, which does not exist",
     ["index.vol-missing"])(_edit_entry(-1, lambda ed, e: e.__setitem__("vol", 5)))
case("index-offset", "the last index entry's off_data is 100 bytes past the end of `a.0`",
     ["index.offset"])(_edit_entry(-1, lambda ed, e: e.__setitem__("off_data", e.off_data + 100)))
case("index-offset-meta", "the first index entry's off_meta is 8 (inside the label)",
     ["index.offset"])(_edit_entry(1, lambda ed, e: e.__setitem__("off_meta", 8)))
case("index-time-order", "the second index entry is 1 s before the first",
     ["index.time-order", "index.before-start", "index.invariant"])(
    _edit_entry(2, lambda ed, e: e.__setitem__("timestamp", shifted(ed.entry(1).timestamp, -1))))
case("index-offset-order", "the last index entry's off_meta points back at the end of the label",
     ["index.offset-order"])(_edit_entry(-1, lambda ed, e: e.__setitem__("off_meta", ed.lsize)))
case("index-before-start", "the first index entry is 1 s before the archive start",
     ["index.before-start"])(
    _edit_entry(1, lambda ed, e: e.__setitem__("timestamp", shifted(e.timestamp, -1))))
case("index-boundary", "the second index entry's off_data is 4 bytes into a result",
     ["index.boundary"])(_edit_entry(2, lambda ed, e: e.__setitem__("off_data", e.off_data + 4)))

case("index-boundary-meta", "the second index entry's off_meta is 1 byte into a .meta record",
     ["index.boundary"])(_edit_entry(2, lambda ed, e: e.__setitem__("off_meta", e.off_meta + 1)))


@case("index-vol-order", "the second index entry names volume 1 (absent), the third volume 0",
      ["index.vol-order", "index.vol-missing"])
def _(ed: ArchiveEdit) -> None:
    e = ed.entry(2)
    e.vol = 1
    ed.put_entry(2, e)


@case("index-invariant", "the second index entry points at the mark, past a result later than it",
      ["index.invariant"])
def _(ed: ArchiveEdit) -> None:
    e = ed.entry(2)
    e.off_data = next(off for off, length in ed.records("0") if length == ed.s.mark_size)
    ed.put_entry(2, e)


# --------------------------------------------------------------------------------------------
# building
# --------------------------------------------------------------------------------------------

def _primary_clause(codes: list[str]) -> str:
    errors = [c for c in codes if RULES[c].severity == Severity.ERROR]
    return RULES[(errors or codes)[0]].clause


def build_corpus(outdir: str | Path, *, fixtures: str | Path = FIXTURES) -> dict[str, Any]:
    """Write every case under ``outdir`` and return (and write) the manifest."""
    from pcpconform.fixtures.fixture import load_fixture
    from pcpconform.fixtures.generate import generate_archive

    out = Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    originals: dict[tuple[str, int], Path] = {}
    valid = []
    for source in SOURCES:
        fixture = load_fixture(Path(fixtures) / f"{source}.yaml")
        for version in (2, 3):
            name = f"valid-{source}-v{version}"
            target = out / name
            if target.exists():
                shutil.rmtree(target)
            generate_archive(fixture, target / BASE, version=version)
            originals[(source, version)] = target / BASE
            valid.append({"name": name, "archive": f"{name}/{BASE}", "source": f"{source}.yaml",
                          "version": version})
    cases = []
    for c in CASES:
        for version in c.versions:
            name = f"{c.name}-v{version}"
            ed = ArchiveEdit(originals[(c.source, version)])
            ed.originals = originals
            c.mutate(ed)
            target = out / name
            if target.exists():
                shutil.rmtree(target)
            target.mkdir()
            ed.save(target / BASE)
            expect = c.expected(version)
            entry: dict[str, Any] = {"name": name, "archive": f"{name}/{BASE}", "fault": c.fault,
                                     "expect": expect, "clause": _primary_clause(expect),
                                     "source": f"{c.source}.yaml", "version": version}
            if c.options:
                entry["options"] = dict(c.options)
            cases.append(entry)
    manifest = {
        "generator": "python -m pcpconform.check.corpus",
        "cases": cases,
        "valid": valid,
        "uncovered": [{"code": code, "reason": reason} for code, reason in sorted(UNCOVERED.items())],
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    return manifest


def render_readme(manifest: dict[str, Any]) -> str:
    """The corpus README: how to build it, and one table row per case."""
    lines = [
        "# The invalid corpus",
        "",
        "One-fault archives for validators: each is a valid archive generated from a bundled",
        "fixture (`corpus/fixtures/example.yaml` or `events.yaml`, in version 2 and/or 3) with",
        "one fault applied by editing bytes at offsets found by parsing it. The archives are not",
        "committed; build them with",
        "",
        "```sh",
        "python -m pcpconform.check.corpus OUTDIR",
        "```",
        "",
        "which writes `OUTDIR/<case>/a.{meta,index,0}` for every case, the untouched originals",
        "as `OUTDIR/valid-<fixture>-v<version>/a`, and `OUTDIR/manifest.json`: `cases` (name,",
        "archive base relative to OUTDIR, fault, expected codes, clause, and `options` for",
        "`check_archive` where a case needs them), `valid` and `uncovered` (error codes that no",
        "edit of an archive can produce, with the reason).",
        "",
        "A validator conforms on a case when the set of *error* codes it reports is exactly the",
        "expected error codes, and every expected warning or info code is among the codes it",
        "reports (further warnings are allowed: a fault may make a benign oddity visible).",
        "The originals must check clean. `tests/test_invalid_corpus.py` runs the corpus against",
        "`pcpconform.check`.",
        "",
        "This file is generated: `python -m pcpconform.check.corpus --readme corpus/invalid/README.md`.",
        "",
        f"## Cases ({len({_stem(c['name']) for c in manifest['cases']})} faults, "
        f"{len(manifest['cases'])} archives)",
        "",
        "| case | versions | fault | expected codes | clause |",
        "|---|---|---|---|---|",
    ]
    rows: dict[str, dict[str, Any]] = {}
    for entry in manifest["cases"]:
        stem = _stem(entry["name"])
        row = rows.setdefault(stem, {"versions": [], "fault": entry["fault"], "expect": {},
                                     "clause": entry["clause"]})
        row["versions"].append(str(entry["version"]))
        row["expect"][entry["version"]] = entry["expect"]
    for stem, row in rows.items():
        expects = list(row["expect"].values())
        if all(e == expects[0] for e in expects):
            codes = _codes_cell(expects[0])
        else:
            codes = "; ".join(f"v{v}: {_codes_cell(e)}" for v, e in row["expect"].items())
        fault = row["fault"].replace("|", "\\|")
        lines.append(f"| `{stem}` | {', '.join(row['versions'])} | {fault} | {codes} | {row['clause']} |")
    lines += ["", "Codes in *italics* are warnings or info: they must be reported, but other",
              "warnings may accompany them.", "", "## Error codes not covered", ""]
    if manifest["uncovered"]:
        lines += ["| code | reason |", "|---|---|"]
        lines += [f"| `{u['code']}` | {u['reason']} |" for u in manifest["uncovered"]]
    else:
        lines.append("None: every error code of `pcpconform/check/rules.py` has a case.")
    return "\n".join(lines) + "\n"


def _stem(name: str) -> str:
    return name.rsplit("-v", 1)[0]


def _codes_cell(codes: list[str]) -> str:
    return ", ".join(f"`{c}`" if RULES[c].severity == Severity.ERROR else f"*`{c}`*" for c in codes)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pcpconform.check.corpus",
                                     description="Build the invalid corpus of one-fault archives.")
    parser.add_argument("outdir", nargs="?", help="directory to build the corpus in")
    parser.add_argument("--readme", nargs="?", const=str(README), metavar="FILE",
                        help=f"write the corpus README (default {README.relative_to(ROOT)}); '-' for stdout")
    parser.add_argument("--fixtures", default=str(FIXTURES), help="directory of the bundled fixtures")
    args = parser.parse_args(argv)
    if args.outdir is None and args.readme is None:
        parser.error("give OUTDIR, --readme, or both")
    if args.outdir is not None:
        manifest = build_corpus(args.outdir, fixtures=args.fixtures)
        print(f"{len(manifest['cases'])} cases in {args.outdir}", file=sys.stderr)
    else:
        with tempfile.TemporaryDirectory(prefix="pcpconform-corpus-") as tmp:
            manifest = build_corpus(tmp, fixtures=args.fixtures)
    if args.readme is not None:
        text = render_readme(manifest)
        if args.readme == "-":
            sys.stdout.write(text)
        else:
            Path(args.readme).parent.mkdir(parents=True, exist_ok=True)
            Path(args.readme).write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
