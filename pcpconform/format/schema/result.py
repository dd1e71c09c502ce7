"""Data-volume records: pmResult, pmValueSet, pmValue, pmValueBlock and event arrays.

Every record of a data volume is a pmResult (there is no type tag). A result with
numpmid = 0 is a mark. DPTR/SPTR values point at value blocks with a BE32 index in 32-bit
words whose origin is 8 bytes before the record's length word, so a block's byte offset
from the record start is ``4*index - 8``. libpcp requires the blocks to be contiguous,
to start right after the last value set and to end right before the trailer; the schema
therefore reads them as one run to the end of the payload, each with its padding kept.
"""

from __future__ import annotations

from collections.abc import Iterable

from construct import (
    Array,
    Bytes,
    Construct,
    If,
    Int8ub,
    Int24ub,
    Int32sb,
    Int32ub,
    this,
)

from pcpconform.format.schema.common import (
    DocStruct,
    PmIDField,
    RemainingBytes,
    TimespecTS16,
    TimevalT2,
    ToEnd,
    timestamp_field,
)

__all__ = [
    "PmValue", "PmValueSet", "PmValueBlock", "result_payload", "event_array",
    "PM_EVENT_FLAG_MISSED", "RESULT_HEADER_SIZE", "block_offset", "block_index", "first_block_offset",
]

PM_EVENT_FLAG_MISSED = 0x80000000
#: Bytes before the first value set, framing length word included.
RESULT_HEADER_SIZE = {2: 16, 3: 20}

#: pmValue: the instance and one word, the value itself (INSITU) or a block index (DPTR).
PmValue = DocStruct(
    "inst" / Int32sb * "internal instance identifier; PM_IN_NULL (-1) for a singular metric",
    "value" / Int32ub * "INSITU: the value itself; DPTR/SPTR: index of the value block in"
                        " 32-bit words, counted from 8 bytes before the record's length word",
)

#: pmValueSet: valfmt is present only when numval > 0; numval < 0 is an error code.
PmValueSet = DocStruct(
    "pmid" / PmIDField * "metric identifier",
    "numval" / Int32sb * "number of values; 0 none; < 0 an error code (PM_ERR_*, -errno)",
    "valfmt" / If(this.numval > 0, Int32ub)
    * "where the values are: 0 INSITU, 1 DPTR, 2 SPTR",
    "vlist" / Array(lambda ctx: max(ctx.numval, 0), PmValue) * "one pmValue per instance",
)

#: pmValueBlock: vtype in the high byte, vlen (4 + payload bytes) in the low 24 bits,
#: the payload, then 0-3 padding bytes up to a 4-byte boundary (not counted in vlen).
PmValueBlock = DocStruct(
    "vtype" / Int8ub * "PM_TYPE_* of the payload; it, not the pmDesc, decides byte order",
    "vlen" / Int24ub * "4 + payload bytes (padding not counted)",
    "vbuf" / Bytes(this.vlen - 4) * "payload: the value (see the payload encodings)",
    "pad" / Bytes(-this.vlen % 4)
    * "0-3 bytes up to a 4-byte boundary; content unspecified, libpcp writes `~`",
)


def result_payload(version: int) -> Construct:
    """pmResult payload for archive version 2 (T2) or 3 (T3)."""
    return DocStruct(
        "timestamp" / timestamp_field(version) * "time of the sample",
        "numpmid" / Int32sb * "number of value sets; 0 makes the record a mark",
        "vset" / Array(this.numpmid, PmValueSet) * "one pmValueSet per metric",
        "blocks" / ToEnd(PmValueBlock)
        * "every value block, contiguous, from the end of the value sets to the trailer",
    )


def first_block_offset(version: int, numvals: Iterable[int]) -> int:
    """Byte offset from the record's length word of the first value block: right after the
    value sets of these numvals (a pmValueSet's pmid and numval, and with values its valfmt
    and one pmValue each)."""
    return RESULT_HEADER_SIZE[version] + sum(8 + (4 + 8 * n if n > 0 else 0) for n in numvals)


def block_offset(index: int) -> int:
    """Byte offset from the record's length word of the block a DPTR index names."""
    return 4 * index - 8


def block_index(offset: int) -> int:
    """The DPTR index of a block at this byte offset from the record's length word."""
    return (offset + 8) // 4


def _event_parameter() -> Construct:
    return DocStruct(
        "pmid" / PmIDField * "metric identifier of the parameter",
        "type" / Int8ub * "PM_TYPE_* of the parameter value",
        "len" / Int24ub * "4 + value bytes (padding not counted)",
        "vbuf" / Bytes(this.len - 4)
        * "value: integers and floats big-endian; strings without a NUL",
        "pad" / Bytes(-this.len % 4) * "0-3 bytes up to a 4-byte boundary",
    )


def event_array(highres: bool) -> Construct:
    """Payload of a PM_TYPE_EVENT (T2 stamps) or PM_TYPE_HIGHRES_EVENT (TS16 stamps) block."""
    record = DocStruct(
        "timestamp" / (TimespecTS16 if highres else TimevalT2) * "time of the event",
        "flags" / Int32ub
        * "POINT 0x1, START 0x2, END 0x4, ID 0x8, PARENT 0x10, MISSED 0x80000000",
        "nparams" / Int32sb
        * "number of parameters; in a MISSED record the number of missed events",
        "params" / If(lambda ctx: not ctx.flags & PM_EVENT_FLAG_MISSED,
                      Array(lambda ctx: max(ctx.nparams, 0), _event_parameter()))
        * "the parameters, packed; absent when the MISSED flag is set",
    )
    return DocStruct(
        "nrecords" / Int32sb * "number of event records",
        "records" / Array(lambda ctx: max(ctx.nrecords, 0), record)
        * "the event records, packed, each 4-byte aligned",
        "tail" / RemainingBytes() * "bytes after the last record (none in a well-formed array)",
    )

