"""Records an archive set adds or rewrites: virtual marks, and version 2 results in
version 3 form for sets that mix the versions.

A set replays as one stream; the decoders beneath the oracles read one archive version.
A set whose members are all of one version keeps its records as they are; in a set that
mixes versions 2 and 3 (SET-FORM-6) every version 2 result is rewritten as the version 3
result with the same content: the header's time as seconds and nanoseconds, and every
value-block index one word further on (the v3 header is one word longer). The rewrite
never changes what a decoder reads from the record, only where.
"""

from __future__ import annotations

import struct

from pcpconform.errors import FormatError, Location
from pcpconform.format.pmtypes import Timestamp
from pcpconform.io.reader import RawRecord

__all__ = ["MARK_GAP_NSEC", "mark_record", "forward_mark_time", "backward_mark_time",
           "v2_result_as_v3"]

#: a virtual mark lies 1 ms after a member's end (reading forwards) or before the next
#: member's start (reading backwards): __pmLogGenerateMark_ctx
MARK_GAP_NSEC = 1_000_000

_V2_HEAD = struct.Struct(">Iiii")        # length, sec, usec, numpmid
_V3_HEAD = struct.Struct(">IIIii")       # length, sec low, sec high, nsec, numpmid
_VSET = struct.Struct(">Ii")
_WORD = struct.Struct(">I")


def forward_mark_time(end: Timestamp) -> tuple[Timestamp, int]:
    """The time of the mark after a member that ends at ``end`` (SET-REPLAY-1), normalised,
    and the nanoseconds libpcp reports for it (1000000000 when the addition carries: libpcp
    tests ``> 1000000000`` where it means ``>=``)."""
    nsec = end.nsec + MARK_GAP_NSEC
    if nsec > 1_000_000_000:
        return Timestamp(end.sec + 1, nsec - 1_000_000_000), nsec - 1_000_000_000
    if nsec == 1_000_000_000:
        return Timestamp(end.sec + 1, 0), nsec
    return Timestamp(end.sec, nsec), nsec


def backward_mark_time(start: Timestamp) -> Timestamp:
    """The time of the mark before a member that starts at ``start``, read backwards."""
    return Timestamp.from_nsec(start.total_nsec() - MARK_GAP_NSEC)


def mark_record(stamp: Timestamp, version: int, file: str, offset: int) -> RawRecord:
    """A mark record (numpmid 0) at ``stamp`` as ``version`` lays it out."""
    if version == 2:
        data = struct.pack(">IiiiI", 20, stamp.sec, stamp.nsec // 1000, 0, 20)
    else:
        sec = stamp.sec & 0xFFFF_FFFF_FFFF_FFFF
        data = struct.pack(">IIIiiI", 24, sec & 0xFFFF_FFFF, sec >> 32, stamp.nsec, 0, 24)
    return RawRecord(file, -1, offset, data)


def v2_result_as_v3(record: RawRecord) -> RawRecord:
    """The version 3 form of a version 2 result; FormatError (``result.decode``) when its
    value sets do not fit the record (the v2 decoder would refuse it too)."""
    data = record.data
    end = len(data) - 4
    if end < 16:
        raise _bad(record, "a result shorter than its header")
    _, sec, usec, numpmid = _V2_HEAD.unpack_from(data, 0)
    if numpmid < 0:
        raise _bad(record, f"numpmid {numpmid} is negative")
    out = bytearray(_V3_HEAD.pack(len(data) + 4, sec & 0xFFFF_FFFF, 0xFFFF_FFFF if sec < 0 else 0,
                                  usec * 1000, numpmid))
    pos = 16
    for _ in range(numpmid):
        if pos + 8 > end:
            raise _bad(record, "value sets run past the record")
        _, numval = _VSET.unpack_from(data, pos)
        if numval <= 0:
            out += data[pos:pos + 8]
            pos += 8
            continue
        stop = pos + 12 + 8 * numval
        if stop > end:
            raise _bad(record, "value sets run past the record")
        valfmt = _WORD.unpack_from(data, pos + 8)[0]
        chunk = bytearray(data[pos:stop])
        if valfmt != 0:
            for at in range(16, len(chunk), 8):
                word = _WORD.unpack_from(chunk, at)[0]
                _WORD.pack_into(chunk, at, (word + 1) & 0xFFFF_FFFF)
        out += chunk
        pos = stop
    out += data[pos:end]
    out += _WORD.pack(len(data) + 4)
    return RawRecord(record.file, record.index, record.offset, bytes(out))


def _bad(record: RawRecord, why: str) -> FormatError:
    return FormatError(why, Location(record.file, record.index, record.offset, "result"), "result.decode")
