"""Index entries read a chunk at a time: the registered fast path ``index.entries`` of
``Component.index_entries`` (one read and one construct parse an entry, ~25 µs: most of
a small archive's index pass).

An entry's fields are unpacked by ``struct`` from chunks of 4096 entries and given as the
schema gives them (a ``Container`` of ``timestamp``, ``vol``, ``off_meta``, ``off_data``,
equal to the schema's; without the ``_io`` key construct adds, which ``==`` passes over);
a partial last entry is kept in ``trailing`` as the reader keeps it. A failed read (or a
decompression past the limit), and a short read that is not the end, are the reader's to
answer: the file is opened again and the reader reads on from the entry after the last one
given, so what it gives and where it stops or fails are its own. A file that is not
regular (it could not be read again) is left to the reader.
"""

from __future__ import annotations

import enum
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from construct import Container

from pcpconform.errors import FormatError
from pcpconform.fastpath import PathStats, register
from pcpconform.format.pmtypes import Timestamp
from pcpconform.format.schema import INDEX_ENTRY_SIZE, LABEL_SIZE
from pcpconform.io.reader import Component

__all__ = ["IndexReason", "index_entries", "PATH", "ENTRIES"]

PATH = "index.entries"
#: entries read at a time
_ENTRIES = 4096
#: an entry by version: v2 timeval (sec, usec), vol, 32-bit offsets; v3 the seconds' low
#: and high words, nsec, vol, 64-bit offsets (format/schema/index.py)
_ENTRY = {2: struct.Struct(">iiiii"), 3: struct.Struct(">IIiiqq")}


class IndexReason(enum.Enum):
    """Why the reader reads (the rest of) an index an entry at a time."""

    READ_FAILED = "a read failed: the reader reads the index again, from the entry after those given"
    SHORT_READ = "a read gave fewer bytes than asked before the end: the reader reads the index again, likewise"
    NOT_REGULAR = "not a regular file (it could not be read again after a failed read)"


def _v2(fields: tuple[int, ...]) -> Any:
    sec, usec, vol, off_meta, off_data = fields
    return Container(timestamp=Timestamp(sec, usec * 1000), vol=vol, off_meta=off_meta, off_data=off_data)


def _v3(fields: tuple[int, ...]) -> Any:
    lo, hi, nsec, vol, off_meta, off_data = fields
    return Container(timestamp=Timestamp.from_t3(lo, hi, nsec), vol=vol, off_meta=off_meta, off_data=off_data)


def index_entries(comp: Component, stats: PathStats) -> Iterator[tuple[int, int, Any]]:
    """``comp.index_entries()`` (an opened .index), read a chunk at a time."""
    if not comp.regular:
        stats.decline(PATH, IndexReason.NOT_REGULAR)
        return comp.index_entries()
    return _chunked(comp, stats)


def _chunked(comp: Component, stats: PathStats) -> Iterator[tuple[int, int, Any]]:
    version = comp.version
    size = INDEX_ENTRY_SIZE[version]
    unpack = _ENTRY[version].iter_unpack
    make = _v2 if version == 2 else _v3
    stream = comp.stream
    number, offset = 1, LABEL_SIZE[version]
    want = size * _ENTRIES
    while True:
        try:
            data = stream.read(want)
            more = stream.read(1) if len(data) < want else b""      # short: the end, or a pause?
        except (FormatError, EOFError, OSError, ValueError):
            yield from _reread(comp, stats, IndexReason.READ_FAILED, number)
            return
        if more:
            yield from _reread(comp, stats, IndexReason.SHORT_READ, number)
            return
        whole = len(data) - len(data) % size
        for fields in unpack(memoryview(data)[:whole]):
            yield number, offset, make(fields)
            number += 1
            offset += size
        if len(data) < want:
            if whole < len(data):       # libpcp ignores a partial last entry; its bytes kept
                comp.trailing.append(data[whole:])
            stats.answer(PATH)
            return


def _reread(comp: Component, stats: PathStats, reason: IndexReason, number: int) -> Iterator[tuple[int, int, Any]]:
    """The reader's entries from entry ``number`` on, the file read again from its start."""
    stats.decline(PATH, reason)
    with comp.reopened() as again:
        yield from comp.index_entries(again, skip=number - 1)


def _entries(path: Path, fast: bool) -> tuple[list[tuple[int, int, Any]], Any, bytes]:
    """An index's entries, the reader's error if any, and its trailing bytes."""
    out: list[tuple[int, int, Any]] = []
    error: Any = None
    with Component(path) as comp:
        try:
            out.extend(index_entries(comp, PathStats()) if fast else comp.index_entries())
        except FormatError as exc:
            error = (exc.message, exc.location, exc.code)
        return out, error, b"".join(comp.trailing)


ENTRIES = register(PATH, reference=lambda path: _entries(path, False), fast=lambda path: _entries(path, True),
                   reasons=IndexReason, inputs="index-file")
