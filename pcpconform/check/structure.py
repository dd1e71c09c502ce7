"""Field-by-field walk of a result the bulk decoder could not vouch for (FMT-RESULT, FMT-VALUE).

A result that does not decode, or decodes but is not laid out as the writer lays it out,
is walked here: value formats against the descriptor, each DPTR/SPTR index and value block,
and the blocks' coverage of the record (contiguous, from the end of the value sets to the
trailer). The layout is taken from the schema declarations (pmValueSet, pmValue,
pmValueBlock, the header size and ``block_offset``), never restated here.
"""

from __future__ import annotations

import struct
from typing import Any

from construct import Struct

from pcpconform.check.state import Context
from pcpconform.check.values import check_block
from pcpconform.format.pmtypes import PmType
from pcpconform.format.schema import (
    RESULT_HEADER_SIZE,
    PmValue,
    PmValueBlock,
    PmValueSet,
    block_offset,
    structs,
)
from pcpconform.format.schema.visit import struct_format
from pcpconform.io.reader import RawRecord
from pcpconform.io.writer import valfmt_for

__all__ = ["walk_result"]

_NUMPMID = struct.Struct(">i")                   # the header's last word
#: pmValueSet.pmid and .numval; then .valfmt (present when numval > 0); then .vlist
_VSET_HEAD = struct.Struct(">" + struct_format(Struct(*PmValueSet.subcons[:2])))
_VALFMT = struct.Struct(">" + struct_format(PmValueSet.valfmt.subcon.thensubcon))
_PMVALUE = struct.Struct(">" + struct_format(PmValue))
#: pmValueBlock header: vtype in the high bits, vlen below it
_VLEN_BITS = 8 * PmValueBlock.vlen.sizeof()
_BLOCK_HEAD = PmValueBlock.vtype.sizeof() + PmValueBlock.vlen.sizeof()
_INSITU, _DPTR, _SPTR = 0, 1, 2


def walk_result(ctx: Context, rec: RawRecord, version: int) -> None:
    data, f = rec.data, rec.file
    end = len(data) - 4                          # the trailer's offset
    where = {"record": rec.index, "offset": rec.offset}
    pos = RESULT_HEADER_SIZE[version]
    if pos > end:
        return
    numpmid = _NUMPMID.unpack_from(data, pos - _NUMPMID.size)[0]
    if numpmid == 0 and len(data) != structs(version).mark_size:
        ctx.add("result.mark-size", f, f"a mark of {len(data)} bytes", **where)
        return
    blocks: list[tuple[int, int]] = []           # (offset, padded size) of each value block
    for k in range(max(numpmid, 0)):
        if pos + _VSET_HEAD.size > end:
            return
        pmid, numval = _VSET_HEAD.unpack_from(data, pos)
        pos += _VSET_HEAD.size
        if numval <= 0:
            continue
        if pos + _VALFMT.size + _PMVALUE.size * numval > end:
            return
        valfmt = _VALFMT.unpack_from(data, pos)[0]
        pos += _VALFMT.size
        if valfmt not in (_INSITU, _DPTR, _SPTR):
            return  # already reported as result.valfmt
        desc = ctx.st.descs.get(pmid)
        fld = f"result.vset[{k}]"
        if desc is not None:
            _valfmt(ctx, f, where, fld, pmid, valfmt, desc.type)
        if valfmt != _INSITU:
            for j in range(numval):
                word = _PMVALUE.unpack_from(data, pos + _PMVALUE.size * j)[1]
                block = _value_block(ctx, f, where, f"{fld}.vlist[{j}]", data, end, block_offset(word), word,
                                     pmid, desc)
                if block is not None:
                    blocks.append(block)
        pos += _PMVALUE.size * numval
    _coverage(ctx, f, where, blocks, pos, end, numpmid)


def _valfmt(ctx: Context, f: str, where: dict[str, Any], fld: str, pmid: int, valfmt: int, dtype: int) -> None:
    """The value format against the one the descriptor's type calls for."""
    if dtype not in range(0, 11) or valfmt == valfmt_for(dtype):
        return
    if valfmt == _INSITU and dtype == PmType.FLOAT:
        ctx.add("value.insitu-float", f, f"{ctx.metric(pmid)}: INSITU float", field=fld + ".valfmt",
                pmid=pmid, **where)
    elif not (valfmt in (_DPTR, _SPTR) and valfmt_for(dtype) in (_DPTR, _SPTR)):
        ctx.add("value.valfmt", f, f"{ctx.metric(pmid)}: valfmt {valfmt} for type "
                f"{PmType(dtype).token}", field=fld + ".valfmt", pmid=pmid, **where)


def _value_block(ctx: Context, f: str, where: dict[str, Any], vfld: str, data: bytes, end: int, off: int,
                 word: int, pmid: int, desc: Any) -> tuple[int, int] | None:
    """Check the block a DPTR/SPTR index names; its (offset, padded size) if it fits."""
    if off < 0 or off + _BLOCK_HEAD > end:
        ctx.add("result.dptr", f, f"value index {word} points outside the record", field=vfld, pmid=pmid,
                **where)
        return None
    head = int.from_bytes(data[off:off + _BLOCK_HEAD], "big")
    vtype, vlen = head >> _VLEN_BITS, head & ((1 << _VLEN_BITS) - 1)
    if vlen < _BLOCK_HEAD or off + vlen > end:
        ctx.add("result.vlen", f, f"value block at {off} has vlen {vlen}", field=vfld, pmid=pmid, **where)
        return None
    if desc is not None:
        check_block(ctx, f, where, vfld, pmid, desc.type, vtype, data[off + _BLOCK_HEAD:off + vlen])
    return off, vlen + (-vlen % 4)


def _coverage(ctx: Context, f: str, where: dict[str, Any], blocks: list[tuple[int, int]], pos: int, end: int,
              numpmid: int) -> None:
    """libpcp: the blocks are contiguous, start after the value sets and end at the trailer."""
    if not blocks:
        if pos != end and numpmid > 0:
            ctx.add("result.blocks", f, f"{end - pos} bytes after the value sets", field="result.blocks",
                    **where)
        return
    blocks.sort()
    at = pos
    for off, size in blocks:
        if off != at:
            ctx.add("result.blocks", f, f"value blocks {'overlap' if off < at else 'leave a gap'} "
                    f"at byte {min(off, at)}", field="result.blocks", **where)
            return
        at += size
    if at != end:
        ctx.add("result.blocks", f, f"{end - at} bytes after the last value block",
                field="result.blocks", **where)
