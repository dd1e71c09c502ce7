"""Encoding decoded results back into records: the writer's layout, packed in bulk.

``encode_schema`` is the reference: ``writer.layout_result`` of the values, built by the
construct schema. ``encode_fast`` (the registered fast path ``bulk.encode``) packs a
canonical result with the same ``struct`` formats the bulk decoder unpacks, and declines
(``EncodeReason``) what it does not build.
"""

from __future__ import annotations

import enum
import struct
from typing import Any

from pcpconform.fastpath import Declined, PathStats, register
from pcpconform.format.pmtypes import PmType
from pcpconform.format.schema import block_index, first_block_offset, structs
from pcpconform.format.values import encode_block_payload
from pcpconform.io.bulk import (
    BLOCK_RUNS,
    VALFMT,
    VSET_HEAD,
    WORD,
    DecodeReason,
    blocks_format,
    decode_fast,
    decode_result_schema,
    signed_values_format,
    values_format,
)
from pcpconform.io.decoded import RESULT_HEAD, DecodedResult
from pcpconform.io.reader import RawRecord
from pcpconform.io.writer import ValueSetSpec, layout_result

__all__ = ["EncodeReason", "encode_result", "encode_fast", "encode_schema", "ENCODE", "CANONICAL"]


class EncodeReason(enum.Enum):
    """Why the bulk encoder leaves a result to the schema."""

    NOT_CANONICAL = "not laid out as the writer lays it out"
    INSITU_TYPE = "insitu value of a non-32-bit-integer type"
    NOT_BYTES = "a variable-size value that is not bytes (an event array)"
    FRACTION = "a v2 time with a fraction of a microsecond"
    VALUES = "a value its type's format cannot pack"


def encode_schema(version: int, res: DecodedResult, types: dict[int, int]) -> bytes:
    """The record the writer lays out for these values (``layout_result``), built by the
    schema: the reference of ``bulk.encode``."""
    specs = [ValueSetSpec(vs.pmid, types.get(vs.pmid, PmType.U32), vs.values, vs.numval)
             for vs in res.vsets]
    built: bytes = structs(version).result_record.build(layout_result(version, res.timestamp, specs))
    return built


def encode_result(version: int, res: DecodedResult, types: dict[int, int], stats: PathStats) -> bytes:
    """The record the writer lays out for a result's values (``bulk.encode``, counted in
    ``stats``); raises what the schema raises for values it cannot build."""
    return ENCODE(stats, version, res, types)


def encode_fast(version: int, res: DecodedResult, types: dict[int, int]) -> bytes:
    """The bulk path of ``bulk.encode``: ``encode_schema``'s bytes for a canonical result
    (one ``pack`` per value set and per run of fixed-size blocks), or ``Declined``."""
    try:
        return _encode(version, res, types)
    except (struct.error, TypeError, ValueError, AttributeError, KeyError, OverflowError):
        raise Declined(EncodeReason.VALUES) from None


def _encode(version: int, res: DecodedResult, types: dict[int, int]) -> bytes:
    if not res.canonical:
        raise Declined(EncodeReason.NOT_CANONICAL)
    vsets = res.vsets
    offset = first_block_offset(version, (vs.numval for vs in vsets))
    heads: list[bytes] = []
    blocks: list[bytes] = []
    for vs in vsets:
        numval = vs.numval
        heads.append(VSET_HEAD.pack(vs.pmid, numval))
        if numval <= 0:
            continue
        ptype = types[vs.pmid]
        valfmt = VALFMT[ptype]
        insts, vals = vs.columns
        flat: list[Any] = [0] * (2 * numval)
        flat[0::2] = insts
        if valfmt == 0:
            if ptype == PmType.I32:
                flat[1::2] = vals
                heads.append(WORD.pack(0) + signed_values_format(numval).pack(*flat))
                continue
            if ptype != PmType.U32:
                raise Declined(EncodeReason.INSITU_TYPE)
            flat[1::2] = vals
        else:
            code, size = BLOCK_RUNS.get(ptype, ("", 0))
            if code:
                # one run of equal blocks, back to back, as the decoder's bulk case reads them
                step = size // 4
                first = block_index(offset)
                flat[1::2] = range(first, first + step * numval, step)
                payload: list[Any] = [ptype << 24 | size] * (2 * numval)
                payload[1::2] = [v.bits for v in vals] if ptype == PmType.FLOAT else vals
                blocks.append(blocks_format(code, numval).pack(*payload))
                offset += size * numval
            else:
                words = []
                for value in vals:
                    if not isinstance(value, bytes):
                        raise Declined(EncodeReason.NOT_BYTES)   # events keep the schema's path
                    body = encode_block_payload(value, ptype)
                    vlen = 4 + len(body)
                    pad = -vlen % 4
                    words.append(block_index(offset))
                    blocks.append(WORD.pack(ptype << 24 | vlen) + body + b"~" * pad)
                    offset += vlen + pad
                flat[1::2] = words
        heads.append(WORD.pack(valfmt) + values_format(numval).pack(*flat))
    size = offset + 4
    stamp = res.timestamp
    if version == 2:
        if stamp.nsec % 1000:
            raise Declined(EncodeReason.FRACTION)
        header = RESULT_HEAD[2].pack(stamp.sec, stamp.nsec // 1000, len(vsets))
    else:
        sec = stamp.sec & 0xFFFFFFFFFFFFFFFF
        header = RESULT_HEAD[3].pack(sec & 0xFFFFFFFF, sec >> 32, stamp.nsec, len(vsets))
    length = WORD.pack(size)
    return b"".join((length, header, *heads, *blocks, length))


ENCODE = register("bulk.encode", reference=encode_schema, fast=encode_fast, reasons=EncodeReason,
                  inputs="decoded-result")


def canonical_reference(record: RawRecord, version: int, types: dict[int, int]) -> bool:
    """Whether the record is the writer's layout of its own values (``encode_schema`` of
    what the schema decodes): the reference of ``bulk.canonical``."""
    try:
        return encode_schema(version, decode_result_schema(record, version, types), types) == record.data
    except Exception:  # values the writer cannot lay out: not its layout
        return False


def canonical_fast(record: RawRecord, version: int, types: dict[int, int]) -> bool:
    """The bulk decoder's ``canonical`` flag: it claims the writer's layout (and may leave
    a record unclaimed that is), so the pair holds an implication."""
    return decode_fast(record, version, types).canonical


CANONICAL = register("bulk.canonical", reference=canonical_reference, fast=canonical_fast,
                     reasons=DecodeReason, inputs="result-record",
                     same=lambda writer_layout, claimed: writer_layout or not claimed)
