"""Streaming record reader: framing, labels and per-record parsing with exact locations.

Files are read one record at a time, so memory follows the largest record, never the file.
A length word is never trusted for allocation: bodies are read in bounded chunks, so a
record claiming 2 GiB in a 100-byte file costs 100 bytes. Every failure is a FormatError
naming file, record index (0 = label), byte offset and field; its ``code`` is the
validator's rule code (``frame.*``, ``label.*``, ``file.read``, ``file.decompress-limit``),
except ``record.decode`` for a payload its schema rejects (the rule depends on the record).
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import stat
import struct
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from construct import Construct, ConstructError

from pcpconform.errors import FormatError, Location
from pcpconform.format.schema import INDEX_ENTRY_SIZE, LABEL_SIZE, PM_LOG_MAGIC, structs
from pcpconform.io.files import ByteStream, open_component, strip_compression

__all__ = ["RawRecord", "Component", "read_label", "parse_payload", "iter_framed", "read_bounded"]

_CHUNK = 1 << 20
_BE32 = struct.Struct(">I")
_T = TypeVar("_T")


@dataclass(slots=True)
class RawRecord:
    """One framed record as stored: ``data`` holds length word, payload and trailer."""

    file: str
    index: int
    offset: int
    data: bytes

    @property
    def payload(self) -> bytes:
        return self.data[4:-4]

    def location(self, field: str | None = None, offset: int | None = None) -> Location:
        return Location(self.file, self.index, self.offset if offset is None else offset, field)


def read_bounded(stream: ByteStream, size: int) -> bytes:
    """Read up to ``size`` bytes in bounded chunks (short only at end of file)."""
    if size <= _CHUNK:
        return stream.read(size)
    parts = []
    left = size
    while left > 0:
        chunk = stream.read(min(left, _CHUNK))
        if not chunk:
            break
        parts.append(chunk)
        left -= len(chunk)
    return b"".join(parts)


def iter_framed(stream: ByteStream, file: str, *, first_index: int = 1,
                first_offset: int = 0, clean_end_below: int = 0,
                trailing: list[bytes] | None = None) -> Iterator[RawRecord]:
    """Yield framed records until end of file; raise FormatError on broken framing.

    Fewer than ``clean_end_below`` bytes left at a record boundary are what libpcp treats
    as a clean end of file: they are appended to ``trailing`` instead of being an error.
    """
    index, offset = first_index, first_offset
    while True:
        head = stream.read(4)
        if not head:
            return
        if len(head) < min(4, clean_end_below) and trailing is not None:
            trailing.append(head)
            return
        if len(head) < 4:
            raise FormatError(f"{len(head)} stray bytes at end of file (a truncated length word)",
                              Location(file, index, offset, "len"), "frame.truncated")
        length = _BE32.unpack(head)[0]
        if length < 8:
            if clean_end_below > 4 and trailing is not None:
                more = stream.read(clean_end_below - 4)
                if 4 + len(more) < clean_end_below:
                    trailing.append(head + more)
                    return
            raise FormatError(f"record length {length} is less than 8",
                              Location(file, index, offset, "len"), "frame.length")
        rest = read_bounded(stream, max(length - 4, 0))
        if len(rest) < length - 4 and 4 + len(rest) < clean_end_below and trailing is not None:
            trailing.append(head + rest)   # a cut header with nothing after it
            return
        if len(rest) < length - 4:
            raise FormatError(
                f"record truncated: length says {length} bytes, file has {len(rest) + 4}",
                Location(file, index, offset, "payload" if len(rest) < length - 8 else "trailer"),
                "frame.truncated")
        trailer = _BE32.unpack_from(rest, length - 8)[0]
        if trailer != length:
            raise FormatError(f"trailer length {trailer} != header length {length}",
                              Location(file, index, offset + length - 4, "trailer"),
                              "frame.trailer")
        yield RawRecord(file, index, offset, head + rest)
        index += 1
        offset += length


_PATH_RE = re.compile(r"\(parsing\)((?: -> [^\s]+)*)")


def parse_payload(schema: Construct, record: RawRecord, what: str) -> Any:
    """Parse a record payload with a schema; a failure names the field and its offset."""
    stream = io.BytesIO(record.payload)
    try:
        return schema.parse_stream(stream)
    except ConstructError as exc:
        m = _PATH_RE.search(str(exc))
        field_path = what + (m.group(1).replace(" -> ", ".") if m else "")
        detail = str(exc).split("\n")[-1]
        detail = re.sub(r"^Error in path \(parsing\)[^\n]*?\n?", "", detail).strip()
        raise FormatError(
            f"cannot decode {what}: {detail or type(exc).__name__}",
            record.location(field_path, record.offset + 4 + stream.tell()),
            "record.decode") from None


def read_label(stream: ByteStream, file: str) -> tuple[int, Any, RawRecord]:
    """Read and check the label record: returns (version, parsed label, raw record)."""
    head = stream.read(8)
    where = Location(file, 0, 0)
    if len(head) < 8:
        raise FormatError(f"file is {len(head)} bytes, too short for a label", where,
                          "label.truncated")
    length, magic = struct.unpack(">II", head)
    if magic >> 8 != PM_LOG_MAGIC >> 8:
        raise FormatError(f"bad label magic 0x{magic:08x} (expected 0x500526vv)",
                          Location(file, 0, 4, "label.magic"), "label.magic")
    version = magic & 0xFF
    if version not in LABEL_SIZE:
        what = "v1 archives are no longer readable" if version == 1 else "not 2 or 3"
        raise FormatError(f"archive version {version}: {what}",
                          Location(file, 0, 4, "label.magic"), "label.version")
    if length != LABEL_SIZE[version]:
        raise FormatError(f"label length {length} is not {LABEL_SIZE[version]} for version {version}",
                          Location(file, 0, 0, "label.len"), "label.length")
    rest = read_bounded(stream, length - 8)
    if len(rest) < length - 8:
        raise FormatError("label truncated", Location(file, 0, 0, "label"), "label.truncated")
    data = head + rest
    trailer = _BE32.unpack_from(data, length - 4)[0]
    if trailer != length:
        raise FormatError(f"label trailer {trailer} != header {length}",
                          Location(file, 0, length - 4, "label.trailer"), "label.trailer")
    record = RawRecord(file, 0, 0, data)
    return version, parse_payload(structs(version).label, record, "label"), record


class Component:
    """One file of an archive, opened for one sequential pass."""

    def __init__(self, path: Path, display: str | None = None, *,
                 max_bytes: int | None = None) -> None:
        self.path = path
        self.name = display or path.name
        self.max_bytes = max_bytes
        self._stream: ByteStream | None = None
        #: bytes after the last whole record that libpcp ignores (see records())
        self.trailing: list[bytes] = []

    def __enter__(self) -> Component:
        stream = self._stream = self._open()
        self.version, self.label, self.label_record = self._guard(
            lambda: read_label(stream, self.name))
        return self

    def _open(self) -> ByteStream:
        stream: ByteStream
        try:
            stream = open_component(self.path)
            if self.max_bytes is not None and strip_compression(self.name)[1]:
                stream = _Bounded(stream, self.max_bytes, self.name)
        except OSError as exc:
            raise FormatError(f"cannot open: {exc.strerror or exc}", Location(self.name),
                              "file.read") from None
        return stream

    @contextlib.contextmanager
    def reopened(self) -> Iterator[ByteStream]:
        """The file opened again, read to just after its label (for a second framing)."""
        stream = self._open()
        try:
            self._guard(lambda: read_label(stream, self.name))
            yield stream
        finally:
            stream.close()

    def __exit__(self, *exc: object) -> None:
        if self._stream is not None:
            self._stream.close()

    def _guard(self, fn: Callable[[], _T]) -> _T:
        # Decompressors raise their own errors on corrupt streams; report them in place.
        try:
            return fn()
        except FormatError:
            raise
        except (EOFError, OSError, ValueError) as exc:
            raise self._read_error(exc) from None

    def _read_error(self, exc: Exception) -> FormatError:
        what = "cannot decompress" if strip_compression(self.name)[1] else "cannot read"
        return FormatError(f"{what}: {exc}", Location(self.name), "file.read")

    def records(self, kind: str = "volume") -> Iterator[RawRecord]:
        """Framed records after the label (.meta and data volumes).

        Stray bytes at the end that libpcp reads as a clean end of file (fewer than 4 in a
        volume, fewer than 8 in .meta) end the records and are kept in ``trailing``.
        """
        return self.framed(lambda stream: iter_framed(
            stream, self.name, first_offset=LABEL_SIZE[self.version],
            clean_end_below=8 if kind == "meta" else 4, trailing=self.trailing))

    @property
    def regular(self) -> bool:
        """Whether the file is a regular file: one that can be opened again and read the
        same (what a fast path that reads ahead needs, to hand over after a failed read)."""
        try:
            return stat.S_ISREG(os.stat(self.path).st_mode)
        except OSError:
            return False

    @property
    def stream(self) -> ByteStream:
        """The opened stream, read as far as the pass has read (the label at least)."""
        assert self._stream is not None
        return self._stream

    def framed(self, framing: Callable[[ByteStream], Iterator[RawRecord]]) -> Iterator[RawRecord]:
        """The records ``framing`` frames from the stream after the label, a read or
        decompression failure reported as ``file.read``."""
        assert self._stream is not None
        it = framing(self._stream)
        try:
            yield from it       # one guard for the pass, not a call per record
        except FormatError:
            raise
        except (EOFError, OSError, ValueError) as exc:
            raise self._read_error(exc) from None

    def index_entries(self, stream: ByteStream | None = None, skip: int = 0) -> Iterator[tuple[int, int, Any]]:
        """Index entries after the label: (entry number, byte offset, parsed entry), one
        read and one schema parse each (the reference of ``index.entries``, io/index.py);
        from ``stream`` (one ``reopened``) where given, the first ``skip`` entries read
        but not given."""
        if stream is None:
            stream = self._stream
        assert stream is not None
        read = stream.read
        size = INDEX_ENTRY_SIZE[self.version]
        schema = structs(self.version).index_entry
        offset = LABEL_SIZE[self.version]
        number = 1
        while True:
            data = self._guard(lambda: read(size))
            if not data:
                return
            if len(data) < size:
                # libpcp ignores a partial last entry; keep its bytes
                self.trailing.append(data)
                return
            if number > skip:
                yield number, offset, schema.parse(data)
            number += 1
            offset += size


class _Bounded:
    """A decompressing stream that refuses to expand past a limit (compression bombs)."""

    def __init__(self, stream: ByteStream, limit: int, name: str) -> None:
        self._stream = stream
        self._left = limit
        self._limit = limit
        self._name = name

    def read(self, size: int = -1) -> bytes:
        want = self._left + 1 if size < 0 else min(size, self._left + 1)
        data = self._stream.read(want)
        self._left -= len(data)
        if self._left < 0:
            raise FormatError(f"decompresses to more than {self._limit} bytes",
                              Location(self._name), "file.decompress-limit")
        return data

    def close(self) -> None:
        self._stream.close()
