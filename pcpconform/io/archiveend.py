"""pmGetArchiveEnd: the time of an archive's last record, found as libpcp finds it.

The reference frames the last volume holding a record and reads what libpcp reads
(``_last_record_time_reference``). The registered fast path ``archive.end`` answers the
common case, a plain last volume whose records are whole to its last byte and whose last
record decodes, by hopping from length word to length word without reading the bodies,
and declines every other volume (``EndReason``).
"""

from __future__ import annotations

import enum
import os
import stat
import struct
from collections.abc import Callable
from typing import Any, BinaryIO

from pcpconform.errors import FormatError
from pcpconform.fastpath import Declined, register
from pcpconform.format.pmtypes import Timestamp
from pcpconform.format.schema import LABEL_SIZE
from pcpconform.io.archive import Archive
from pcpconform.io.bulk import decode_result
from pcpconform.io.files import strip_compression
from pcpconform.io.frames import framed_records
from pcpconform.io.reader import Component, RawRecord

__all__ = ["last_record_time", "EndReason", "END"]

_WORD = struct.Struct(">I")
_CHUNK = 1 << 20


class EndReason(enum.Enum):
    """Why the end of an archive is found by the reference."""

    COMPRESSED = "a compressed last volume"
    NOT_REGULAR = "the last volume is not a regular file"
    NOT_WHOLE = "the last volume's records are not whole to its end"
    NO_RECORD = "the last volume has no record"
    LAST_UNREADABLE = "the last record does not decode"
    UNREADABLE = "cannot be read"


class _Words:
    """Big-endian 32-bit words of a file at increasing offsets, read a chunk at a time."""

    def __init__(self, f: BinaryIO) -> None:
        self.f = f
        self.start = 0
        self.buf = b""

    def at(self, offset: int) -> int | None:
        pos = offset - self.start
        if pos < 0 or pos + 4 > len(self.buf):
            self.f.seek(offset)
            self.start, self.buf, pos = offset, self.f.read(_CHUNK), 0
            if len(self.buf) < 4:
                return None
        word: int = _WORD.unpack_from(self.buf, pos)[0]
        return word


def last_record_time(archive: Archive) -> Timestamp | None:
    """pmGetArchiveEnd (``__pmGetArchiveEnd_ctx``): the time of the last record of the last
    volume holding one, or None when libpcp finds none (it then reports PM_ERR_LOGREC)."""
    return END(archive.stats, archive)


def _last_record_time_fast(archive: Archive) -> Timestamp | None:
    """The reference's answer where the last volume frames cleanly to its last byte: its
    last record, when it decodes."""
    if not archive.files.volumes:
        raise Declined(EndReason.NO_RECORD)
    path = archive.files.volumes[max(archive.files.volumes)]
    if strip_compression(path.name)[1]:
        raise Declined(EndReason.COMPRESSED)
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            raise Declined(EndReason.NOT_REGULAR)
        with Component(path) as comp:
            version = comp.version
        with path.open("rb") as f:
            size = os.fstat(f.fileno()).st_size
            words = _Words(f)
            offset = last = LABEL_SIZE[version]
            while offset < size:
                length = words.at(offset)
                if length is None or length < 8 or offset + length > size or words.at(offset + length - 4) != length:
                    raise Declined(EndReason.NOT_WHOLE)
                last = offset
                offset += length
            if offset == LABEL_SIZE[version]:
                raise Declined(EndReason.NO_RECORD)
            f.seek(last)
            data = f.read(offset - last)
    except (OSError, FormatError):
        raise Declined(EndReason.UNREADABLE) from None
    types = {pmid: d.type for pmid, d in archive.metadata.descs.items()}
    try:
        return decode_result(RawRecord(path.name, 0, last, data), version, types, archive.stats).timestamp
    except FormatError:
        raise Declined(EndReason.LAST_UNREADABLE) from None


def _last_record_time_reference(archive: Archive) -> Timestamp | None:
    """pmGetArchiveEnd (``__pmGetArchiveEnd_ctx``): the time of the last record of the last
    volume holding one, found as libpcp finds it: the record that ends the file, when it is
    whole and readable; else, from the last index entry in the volume at or before its
    physical end, the records read forwards until one is not, starting with the one ending
    at that entry (which must be readable, or there is no end). None when libpcp finds
    none (it then reports PM_ERR_LOGREC). Records are framed, not decoded, except those
    libpcp reads."""
    types = {pmid: d.type for pmid, d in archive.metadata.descs.items()}
    entries: list[Any] | None = None

    def readable(record: RawRecord, version: int) -> Timestamp | None:
        try:
            return decode_result(record, version, types, archive.stats).timestamp
        except FormatError:
            return None

    for vol in sorted(archive.files.volumes, reverse=True):
        path = archive.files.volumes[vol]
        if not strip_compression(path.name)[1]:
            done, stamp = _plain_volume_end(archive, vol, readable)
            if done:
                return stamp
            continue
        spans: list[tuple[int, int]] = []           # offset, length of each whole record
        last: RawRecord | None = None
        version = archive.version
        whole = True
        try:
            with Component(archive.files.volumes[vol]) as comp:
                version = comp.version
                for record in framed_records(comp, archive.stats):
                    spans.append((record.offset, len(record.data)))
                    last = record
                whole = not comp.trailing
        except FormatError:
            whole = False
        if last is None:
            continue
        if whole:
            stamp = readable(last, version)
            if stamp is not None:
                return stamp
        if entries is None:
            entries = list(archive.index_entries()) if archive.files.index is not None else []
        size = spans[-1][0] + spans[-1][1]
        mine = [e.off_data for e in entries if e.vol == vol and e.off_data <= size]
        if not mine:
            continue
        logend = mine[-1]
        wanted = {offset for offset, length in spans if offset >= logend or offset + length == logend}
        found: dict[int, Timestamp | None] = {}
        try:
            with Component(archive.files.volumes[vol]) as comp:
                for record in framed_records(comp, archive.stats):
                    if record.offset in wanted:
                        found[record.offset] = readable(record, version)
        except FormatError:
            pass                        # the damage after the records framed above
        before = [o for o, length in spans if o + length == logend]
        if logend > spans[0][0] and (not before or found.get(before[0]) is None):
            return None                 # "badly damaged"
        # the backward read leaves the file at the start of the record ending at the entry:
        # the forward chase reads that record first
        start = before[0] if logend > spans[0][0] else logend
        end = None
        for offset, _ in spans:
            if offset < start:
                continue
            if found.get(offset) is None:
                break
            end = found[offset]
        if end is not None:
            return end
    return None


def _plain_volume_end(archive: Archive, vol: int,
                      readable: Callable[[RawRecord, int], Timestamp | None]) -> tuple[bool, Timestamp | None]:
    """``__pmGetArchiveEnd_ctx`` on one uncompressed volume, reading as libpcp reads, by
    seeking: the record that ends the file read backwards (its trailer gives its length);
    else the last index entry at or before the file's size, the record ending there read
    backwards and the records from it read forwards while they are readable. (True, the
    end's time); (True, None) when the record ending at the entry is unreadable (libpcp
    gives up: PM_ERR_LOGREC); (False, None) when the volume gives no end (libpcp tries the
    volume before)."""
    path = archive.files.volumes[vol]
    try:
        with Component(path) as comp:
            version = comp.version
        with path.open("rb") as f:
            size = os.fstat(f.fileno()).st_size
            label = LABEL_SIZE[version]
            if size <= label:
                return False, None

            def word(offset: int) -> int | None:
                f.seek(offset)
                data = f.read(4)
                return _WORD.unpack(data)[0] if len(data) == 4 else None

            def record(start: int, length: int) -> RawRecord | None:
                if length < 8 or start < label or start + length > size:
                    return None
                f.seek(start)
                data = f.read(length)
                if len(data) != length or _WORD.unpack_from(data, length - 4)[0] != length:
                    return None
                return RawRecord(path.name, 0, start, data)

            def backward(end: int) -> RawRecord | None:
                length = word(end - 4)
                return None if length is None or length > end else record(end - length, length)

            last = backward(size)
            if last is not None and (stamp := readable(last, version)) is not None:
                return True, stamp
            index = list(archive.index_entries()) if archive.files.index is not None else []
            mine = [e.off_data for e in index if e.vol == vol and e.off_data <= size]
            if not mine:
                return False, None
            offset = logend = mine[-1]
            if logend > label:
                before = backward(logend)
                if before is None or readable(before, version) is None:
                    return True, None       # "badly damaged"
                offset = logend - len(before.data)
            end: Timestamp | None = None
            while (length := word(offset)) is not None and offset + length <= size:
                rec = record(offset, length)
                got = readable(rec, version) if rec is not None else None
                if got is None:
                    break
                end, offset = got, offset + length
            return end is not None, end
    except (OSError, FormatError):
        return False, None


END = register("archive.end", reference=_last_record_time_reference, fast=_last_record_time_fast,
               reasons=EndReason, inputs="archive-object")
