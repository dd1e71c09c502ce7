"""Data-volume records: pmResult, pmValueSet, pmValue, pmValueBlock and event arrays.

Every record of a data volume is a pmResult (there is no type tag). A result with
numpmid = 0 is a mark. DPTR/SPTR values point at value blocks with a BE32 index in 32-bit
words whose origin is 8 bytes before the record's length word, so a block's byte offset
from the record start is ``4*index - 8``. libpcp requires the blocks to be contiguous,
to start right after the last value set and to end right before the trailer; the schema
therefore reads them as one run to the end of the payload, each with its padding kept.
"""

from __future__ import annotations

from construct import (
    Array, Bytes, Construct, If, Int8ub, Int24ub, Int32sb, Int32ub, Struct, this,
)

from .common import PmIDField, RemainingBytes, TimespecTS16, TimevalT2, ToEnd, timestamp_field

__all__ = [
    "PmValue", "PmValueSet", "PmValueBlock", "result_payload", "event_array",
    "PM_EVENT_FLAG_MISSED", "RESULT_HEADER_SIZE", "block_offset", "block_index",
]

PM_EVENT_FLAG_MISSED = 0x80000000
#: Bytes before the first value set, framing length word included.
RESULT_HEADER_SIZE = {2: 16, 3: 20}

#: pmValue: the instance and one word, the value itself (INSITU) or a block index (DPTR).
PmValue = Struct(
    "inst" / Int32sb,
    "value" / Int32ub,
)

#: pmValueSet: valfmt is present only when numval > 0; numval < 0 is an error code.
PmValueSet = Struct(
    "pmid" / PmIDField,
    "numval" / Int32sb,
    "valfmt" / If(this.numval > 0, Int32ub),   # 0 INSITU, 1 DPTR, 2 SPTR
    "vlist" / Array(lambda ctx: max(ctx.numval, 0), PmValue),
)

#: pmValueBlock: vtype in the high byte, vlen (4 + payload bytes) in the low 24 bits,
#: the payload, then 0-3 padding bytes up to a 4-byte boundary (not counted in vlen).
PmValueBlock = Struct(
    "vtype" / Int8ub,
    "vlen" / Int24ub,
    "vbuf" / Bytes(this.vlen - 4),
    "pad" / Bytes(-this.vlen % 4),
)


def result_payload(version: int) -> Construct:
    """pmResult payload for archive version 2 (T2) or 3 (T3)."""
    return Struct(
        "timestamp" / timestamp_field(version),
        "numpmid" / Int32sb,
        "vset" / Array(this.numpmid, PmValueSet),
        "blocks" / ToEnd(PmValueBlock),   # every value block, in file order
    )


def block_offset(index: int) -> int:
    """Byte offset from the record's length word of the block a DPTR index names."""
    return 4 * index - 8


def block_index(offset: int) -> int:
    """The DPTR index of a block at this byte offset from the record's length word."""
    return (offset + 8) // 4


def _event_parameter() -> Construct:
    return Struct(
        "pmid" / PmIDField,
        "type" / Int8ub,        # PM_TYPE_* of the parameter value
        "len" / Int24ub,        # 4 + value bytes
        "vbuf" / Bytes(this.len - 4),
        "pad" / Bytes(-this.len % 4),
    )


def event_array(highres: bool) -> Construct:
    """Payload of a PM_TYPE_EVENT (T2 stamps) or PM_TYPE_HIGHRES_EVENT (TS16 stamps) block."""
    record = Struct(
        "timestamp" / (TimespecTS16 if highres else TimevalT2),
        "flags" / Int32ub,      # POINT 1, START 2, END 4, ID 8, PARENT 0x10, MISSED 0x80000000
        "nparams" / Int32sb,    # for a MISSED record: the number of missed events
        "params" / If(lambda ctx: not ctx.flags & PM_EVENT_FLAG_MISSED,
                      Array(lambda ctx: max(ctx.nparams, 0), _event_parameter())),
    )
    return Struct(
        "nrecords" / Int32sb,
        "records" / Array(lambda ctx: max(ctx.nrecords, 0), record),
        "tail" / RemainingBytes(),
    )

