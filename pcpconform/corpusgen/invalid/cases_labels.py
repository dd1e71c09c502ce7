"""Faults of label records (FMT-LABEL).
"""

from __future__ import annotations

from pcpconform.corpusgen.invalid.edit import ArchiveEdit
from pcpconform.corpusgen.invalid.registry import case

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
      "(index offsets adjusted to it)", ["label.mismatch", "index.boundary"], versions=(2,))
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
