"""An archive held as bytes (part -> bytes) and the record-level editor over it."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from pcpconform.check.corpus.edit import ArchiveEdit
from pcpconform.format.schema import structs

__all__ = ["BASE", "editor", "archive_files", "read_archive"]

#: the base name every mutant archive is written under
BASE = "a"


def editor(files: Mapping[str, bytes]) -> ArchiveEdit:
    """An ArchiveEdit over in-memory parts; the version is the .meta label's (else a
    volume's, else 2), so damaged labels still give an editor."""
    ed = ArchiveEdit.__new__(ArchiveEdit)
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
