"""A plain data volume's records framed a chunk at a time (FMT-FRAME).

``Component.records`` reads each record with two reads of its own; on a volume of many
small records those calls cost as much as checking them. A plain (uncompressed) volume is
framed here from 1 MiB chunks instead, for as long as its records are whole and their
trailers agree; at the first record that is not (a bad length, a trailer that differs,
stray bytes at the end) the reader's own framing takes over at that record's offset, so
every framing finding is the reader's, word for word. This is the registered fast path
``io.frames`` of ``Component.records``; a compressed component, or anything but a
regular file, it declines (``FrameReason``).
"""

from __future__ import annotations

import enum
import os
import stat
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

from pcpconform.errors import FormatError, Location
from pcpconform.fastpath import Declined, PathStats, register
from pcpconform.format.schema import LABEL_SIZE
from pcpconform.io.files import strip_compression
from pcpconform.io.reader import Component, RawRecord, iter_framed

__all__ = ["volume_records", "FrameReason", "FRAMES"]

_CHUNK = 1 << 20
_WORD = struct.Struct(">I")


class FrameReason(enum.Enum):
    """Why a volume is framed by the reader record by record."""

    COMPRESSED = "a compressed component"
    NOT_REGULAR = "not a regular file"
    UNREADABLE = "cannot be opened a second time"


def _plain_stream(comp: Component) -> BinaryIO:
    """The volume opened again for chunked reads, or ``Declined``."""
    if strip_compression(comp.name)[1]:
        raise Declined(FrameReason.COMPRESSED)
    try:
        # a regular file only: a second open of a pipe or device would not see the same bytes
        if not stat.S_ISREG(os.stat(comp.path).st_mode):
            raise Declined(FrameReason.NOT_REGULAR)
        return comp.path.open("rb")
    except OSError:
        raise Declined(FrameReason.UNREADABLE) from None


def volume_records(comp: Component, stats: PathStats) -> Iterator[RawRecord]:
    """The records of an opened data volume, as ``comp.records()`` gives them."""
    try:
        stream = _plain_stream(comp)
    except Declined as declined:
        stats.decline("io.frames", declined.reason)
        yield from comp.records()
        return
    stats.answered["io.frames"] += 1
    with stream:
        try:
            yield from _framed(comp, stream)
        except OSError as exc:     # as Component.records reports a read failure
            raise FormatError(f"cannot read: {exc}", Location(comp.name), "file.read") from None


def _framed(comp: Component, f: BinaryIO) -> Iterator[RawRecord]:
    size = os.fstat(f.fileno()).st_size
    offset = LABEL_SIZE[comp.version]
    index = 1
    f.seek(offset)
    buf, pos = b"", 0
    unpack = _WORD.unpack_from
    name = comp.name
    while True:
        if len(buf) - pos < 8:
            buf, pos = buf[pos:] + f.read(_CHUNK), 0
            if len(buf) == 0:
                return                                  # a clean end after the last record
            if len(buf) < 8:
                break
        length = unpack(buf, pos)[0]
        if length < 8 or offset + length > size:
            break
        if pos + length > len(buf):
            buf, pos = buf[pos:] + f.read(max(_CHUNK, length)), 0
            if length > len(buf):
                break
        if unpack(buf, pos + length - 4)[0] != length:
            break
        yield RawRecord(name, index, offset, buf[pos:pos + length])
        pos += length
        offset += length
        index += 1
    # not a whole record here: the reader frames the rest, and reports what it finds
    f.seek(offset)
    yield from iter_framed(f, name, first_index=index, first_offset=offset, clean_end_below=4,
                           trailing=comp.trailing)


def _framing(path: Path, fast: bool) -> tuple[list[tuple[int, int, bytes]], Any, bytes]:
    """A volume's records (index, offset, bytes), the reader's error if any, and its
    trailing bytes, framed by ``volume_records`` or the reader."""
    out: list[tuple[int, int, bytes]] = []
    error: Any = None
    with Component(path) as comp:
        try:
            records = _chunked(comp) if fast else comp.records()
            out.extend((r.index, r.offset, r.data) for r in records)
        except FormatError as exc:
            error = (exc.message, exc.location, exc.code)
        return out, error, b"".join(comp.trailing)


def _chunked(comp: Component) -> Iterator[RawRecord]:
    stream = _plain_stream(comp)
    with stream:
        yield from _framed(comp, stream)


FRAMES = register("io.frames", reference=lambda path: _framing(path, False),
                  fast=lambda path: _framing(path, True), reasons=FrameReason, inputs="volume-file")
