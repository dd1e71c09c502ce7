"""An archive held as bytes (part -> bytes) and the record-level editor over it."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from pathlib import Path

from construct import Container

from pcpconform.corpusgen.invalid.edit import ArchiveEdit
from pcpconform.format.schema import structs
from pcpconform.fuzz.layout import Field, layout, read_int

__all__ = ["BASE", "editor", "archive_files", "read_archive"]

#: the base name every mutant archive is written under
BASE = "a"


class FuzzEdit(ArchiveEdit):
    """An ArchiveEdit whose index work reads and writes only the words it needs: the
    index offsets an edit moves are patched in place, where the entry's layout puts them."""

    def entry(self, n: int) -> Container:
        at = self.entry_offset(n)
        return self.s.index_entry.parse(bytes(self.files["index"][at:at + self.s.index_entry_size]))

    def _shift(self, part: str, at: int, delta: int) -> None:
        if "index" not in self.files or not delta:
            return
        data = self.files["index"]
        size = self.s.index_entry_size
        vol, off_meta, off_data = _index_fields(self.version)
        moved, vol_of = (off_meta, None) if part == "meta" else (off_data, int(part))
        for base in range(self.lsize, len(data) - size + 1, size):
            if vol_of is not None and read_int(vol, data, base) != vol_of:
                continue
            offset = read_int(moved, data, base)
            if offset > at:
                where = base + moved.offset
                data[where:where + moved.size] = moved.con.build(offset + delta)


@functools.cache
def _index_fields(version: int) -> tuple[Field, Field, Field]:
    """The vol, off_meta and off_data fields of an index entry, from its schema."""
    s = structs(version)
    by_name = {f.name: f for f in layout(s.index_entry, bytes(s.index_entry_size)).fields()}
    return by_name["vol"], by_name["off_meta"], by_name["off_data"]


def editor(files: Mapping[str, bytes]) -> ArchiveEdit:
    """An ArchiveEdit over in-memory parts; the version is the .meta label's (else a
    volume's, else 2), so damaged labels still give an editor."""
    ed = FuzzEdit.__new__(FuzzEdit)
    ed.name = BASE
    ed.files = {k: bytearray(v) for k, v in files.items()}
    ed.extra = {}
    ed.originals = {}
    version = 2
    for part in ("meta", "0", "index"):
        data = files.get(part, b"")
        if len(data) > 7 and data[7] in (2, 3):
            version = data[7]
            break
    ed.version = version
    ed.s = structs(version)
    ed.lsize = ed.s.label_size
    return ed


def archive_files(files: Mapping[str, bytes]) -> dict[str, bytes]:
    """File name -> bytes for writing the mutant as ``a.<part>``."""
    return {f"{BASE}.{part}": bytes(data) for part, data in files.items()}


def read_archive(base: Path) -> dict[str, bytes]:
    """The parts of an archive on disk (``base.meta``, ``base.0``, ... -> meta, 0, ...)."""
    prefix = base.name + "."
    return {p.name[len(prefix):]: p.read_bytes() for p in sorted(base.parent.iterdir())
            if p.is_file() and p.name.startswith(prefix)}
