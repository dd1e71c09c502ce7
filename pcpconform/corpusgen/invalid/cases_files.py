"""Faults of the archive's files and of record framing (FMT-FILE, FMT-COMPRESS, FMT-FRAME).
"""

from __future__ import annotations

import gzip
import lzma

from pcpconform.corpusgen.invalid.edit import ArchiveEdit, shifted
from pcpconform.corpusgen.invalid.registry import case


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
      ["frame.trailer", "index.offset", "value.undescribed"])
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
