"""A component's records framed a chunk at a time (FMT-FRAME, FMT-META).

``Component.records`` reads each record with two reads of its own; on a file of many small
records those calls cost as much as checking them, and on a compressed file each goes
through the decompressor's Python layer. Here the component's own stream (plain or
decompressing) is framed from 1 MiB chunks instead, for as long as its records are whole and
their trailers agree; at the first record that is not (a bad length, a trailer that
differs, a cut record, stray bytes at the end) the reader's own framing takes over at that
record, reading the rest of the chunk and then the stream, so every framing finding and
every byte kept as a clean end is the reader's, word for word.

A read that fails (a damaged compressed stream, the decompression limit) is the reader's to
report too, and where it surfaces depends on how far ahead a read asks: the reader asks a
record (or an 8 KiB buffer) at a time. So a record is given only once the bytes 64 KiB past
its end have been read (or the stream has ended cleanly): the reader, asking less, reads it
too. At a failure the component is opened again and the reader frames it from the start,
its records up to the ones already given skipped, so the records after them and the error
are the reader's own. This is the registered fast path ``io.frames`` of
``Component.records``; a hand-over is counted (``FrameReason``).
"""

from __future__ import annotations

import enum
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pcpconform.errors import FormatError
from pcpconform.fastpath import PathStats, register
from pcpconform.format.schema import LABEL_SIZE
from pcpconform.io.files import ByteStream
from pcpconform.io.reader import Component, RawRecord, iter_framed, read_bounded

__all__ = ["framed_records", "FrameReason", "FRAMES"]

PATH = "io.frames"
_CHUNK = 1 << 20
#: bytes read past a record before it is given: more than the reader ever reads ahead
_MARGIN = 1 << 16
_WORD = struct.Struct(">I")


class FrameReason(enum.Enum):
    """Why the reader frames (the rest of) a component record by record."""

    HANDED_OVER = "a record not whole in the stream, or bytes after the last one: the reader frames from there"
    READ_FAILED = "a read failed: the reader frames the component again, from the record after those given"
    NOT_REGULAR = "not a regular file (it could not be opened again after a failed read)"


class _Rest:
    """What is left of a chunk, then the rest of the stream: the reader's framing reads on
    from the record the chunks could not frame."""

    def __init__(self, head: bytes, stream: ByteStream) -> None:
        self._head = head
        self._stream = stream

    def read(self, size: int = -1) -> bytes:
        head = self._head
        if not head:
            return self._stream.read(size)
        if size < 0:
            self._head = b""
            return head + self._stream.read()
        self._head = head[size:]
        if len(head) >= size:
            return head[:size]
        return head + self._stream.read(size - len(head))

    def close(self) -> None:
        self._stream.close()


class _Chunks:
    """The bytes read so far, whether the stream ended cleanly, and the exception of a read
    that failed (no read is tried after one)."""

    __slots__ = ("buf", "ended", "failure", "stream")

    def __init__(self, stream: ByteStream) -> None:
        self.stream = stream
        self.buf = b""
        self.ended = False
        self.failure: Exception | None = None

    def ensure(self, pos: int, n: int) -> tuple[bytes, int, bool]:
        """The buffer and ``pos`` in it (moved when the buffer is remade), and whether ``n``
        bytes from ``pos`` are read and the margin after them too (or the stream has ended
        cleanly after them)."""
        buf = self.buf
        while len(buf) - pos < n + _MARGIN and not self.ended and self.failure is None:
            try:
                # bounded reads: a length word is never an allocation (reader.py)
                more = read_bounded(self.stream, max(_CHUNK, n + _MARGIN - (len(buf) - pos)))
            except (EOFError, OSError, ValueError, FormatError) as exc:
                self.failure = exc
                break
            if not more:
                self.ended = True
            buf, pos = buf[pos:] + more, 0
        self.buf = buf
        left = len(buf) - pos
        return buf, pos, left >= n + _MARGIN or (self.ended and left >= n)


def framed_records(comp: Component, stats: PathStats, kind: str = "volume") -> Iterator[RawRecord]:
    """The records of an opened data volume (or .meta, ``kind`` "meta"), as
    ``comp.records(kind)`` gives them."""
    if not comp.regular:
        stats.decline(PATH, FrameReason.NOT_REGULAR)
        return comp.records(kind)
    return comp.framed(lambda stream: _framed(comp, stream, 8 if kind == "meta" else 4, stats))


def _framed(comp: Component, stream: ByteStream, clean_end_below: int, stats: PathStats) -> Iterator[RawRecord]:
    stats.answered[PATH] += 1
    chunks = _Chunks(stream)
    offset = LABEL_SIZE[comp.version]
    index = 1
    unpack = _WORD.unpack_from
    name = comp.name
    buf, pos = b"", 0
    while True:
        if len(buf) - pos < 8 + _MARGIN:
            buf, pos, ok = chunks.ensure(pos, 8)
            if not ok:
                break
        length = unpack(buf, pos)[0]
        if length < 8:
            break
        if len(buf) - pos < length + _MARGIN:
            buf, pos, ok = chunks.ensure(pos, length)
            if not ok:
                break
        if unpack(buf, pos + length - 4)[0] != length:
            break
        yield RawRecord(name, index, offset, buf[pos:pos + length])
        pos += length
        offset += length
        index += 1
    if chunks.failure is not None:
        stats.decline(PATH, FrameReason.READ_FAILED)
        with comp.reopened() as again:
            for rec in iter_framed(again, name, first_offset=LABEL_SIZE[comp.version],
                                   clean_end_below=clean_end_below, trailing=comp.trailing):
                if rec.index >= index:
                    yield rec
        return
    if chunks.ended and pos == len(buf):
        return                                          # a clean end after the last record
    # not a whole record here: the reader frames the rest, and reports what it finds
    stats.decline(PATH, FrameReason.HANDED_OVER)
    yield from iter_framed(_Rest(buf[pos:], stream), name, first_index=index,
                           first_offset=offset, clean_end_below=clean_end_below, trailing=comp.trailing)


def _framing(path: Path, fast: bool) -> tuple[list[tuple[int, int, bytes]], Any, bytes]:
    """A component's records (index, offset, bytes), the reader's error if any, and its
    trailing bytes, framed by ``framed_records`` or the reader; a name
    ending in .meta (before any compression suffix) is framed as a .meta."""
    out: list[tuple[int, int, bytes]] = []
    error: Any = None
    meta = ".meta" in path.name
    with Component(path) as comp:
        try:
            kind = "meta" if meta else "volume"
            records = framed_records(comp, PathStats(), kind) if fast else comp.records(kind)
            out.extend((r.index, r.offset, r.data) for r in records)
        except FormatError as exc:
            error = (exc.message, exc.location, exc.code)
        return out, error, b"".join(comp.trailing)


FRAMES = register(PATH, reference=lambda path: _framing(path, False),
                  fast=lambda path: _framing(path, True), reasons=FrameReason, inputs="volume-file")
