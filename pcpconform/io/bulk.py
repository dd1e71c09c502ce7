"""Bulk decoding of pmResult records, derived from the same schema as the construct parser.

Interpreted construct spends most of its time on per-field bookkeeping. Results repeat the
same fixed shapes record after record (value-set header, pmValue pairs, 64-bit blocks), so
this module derives ``struct`` formats from the schema's own fixed-size declarations and
unpacks whole runs of values in one call. It is the registered fast path ``bulk.decode``
of the construct schema's decoding (``decode_result_schema``): anything unusual (odd block
sizes, event arrays, structural damage) it declines with a ``DecodeReason``, and the
schema decodes the record. ``bulk.canonical`` holds its claim that a record is what the
writer lays out; ``bulk.run`` holds ``decode_run`` (many records of one layout at once,
by numpy) to ``decode_result``.
"""

from __future__ import annotations

import enum
import struct
from functools import lru_cache
from typing import Any

from pcpconform.errors import FormatError
from pcpconform.fastpath import Declined, PathStats, register
from pcpconform.format.pmtypes import PmType
from pcpconform.format.schema import PmValue, block_offset, event_array, first_block_offset, structs
from pcpconform.format.schema.visit import numpy_type, struct_format
from pcpconform.format.values import BLOCK_PAYLOAD_SIZE, F32, decode_block, decode_insitu
from pcpconform.io.decoded import RESULT_HEAD, DecodedResult, DecodedValueSet, result_head
from pcpconform.io.events import parse_events
from pcpconform.io.reader import RawRecord, parse_payload
from pcpconform.io.writer import valfmt_for

__all__ = ["DecodedResult", "DecodedValueSet", "DecodeReason", "decode_result", "decode_fast",
           "decode_result_schema", "result_head", "LayoutReason", "ValueColumn", "ResultLayout",
           "result_layout", "decode_run", "numpy_type", "DECODE", "RUN", "VALFMT", "BLOCK_RUNS"]

#: valfmt writers use for each type (INSITU 0, DPTR 1, SPTR 2)
VALFMT: dict[int, int] = {t: valfmt_for(t) for t in PmType}

# Formats taken from the schema declarations themselves.
_PMVALUE = struct_format(PmValue)       # "iI"
_HEADER = RESULT_HEAD
VSET_HEAD = struct.Struct(">Ii")       # pmValueSet.pmid, numval
WORD = struct.Struct(">I")
#: fixed-size value blocks decoded a run at a time: vtype -> (header + payload format, vlen)
BLOCK_RUNS: dict[int, tuple[str, int]] = {
    PmType.U64: ("IQ", 12), PmType.I64: ("Iq", 12), PmType.DOUBLE: ("Id", 12), PmType.FLOAT: ("II", 8)}


@lru_cache(maxsize=4096)
def values_format(count: int) -> struct.Struct:
    """``count`` pmValues: (instance, word) pairs."""
    return struct.Struct(">" + _PMVALUE * count)


@lru_cache(maxsize=4096)
def signed_values_format(count: int) -> struct.Struct:
    """``count`` pmValues with PM_TYPE_32 insitu words read as signed in the same unpack."""
    return struct.Struct(">" + _PMVALUE.lower() * count)


@lru_cache(maxsize=4096)
def blocks_format(code: str, count: int) -> struct.Struct:
    return struct.Struct(">" + code * count)


class DecodeReason(enum.Enum):
    """Why the bulk decoder leaves a record to the construct schema."""

    SHORT = "shorter than a header and a trailer"
    NUMPMID = "numpmid negative or past the record"
    VSETS = "value sets run past the trailer"
    VALFMT = "valfmt not INSITU, DPTR or SPTR"
    BLOCK_OUTSIDE = "a value index points outside the record"
    BLOCK_VLEN = "a value block's vlen below 4 or past the record"
    EVENTS = "an event array that does not fit its block, or one of a large value set"
    RUN_HEADERS = "a run of fixed-size blocks with other headers"
    COVERAGE = "value blocks do not fill the record from the value sets to the trailer"
    TAIL = "bytes after the value sets"


def decode_result(record: RawRecord, version: int, types: dict[int, int],
                  stats: PathStats) -> DecodedResult:
    """Decode a result record; ``types`` maps pmID to pmDesc type for INSITU words. The bulk
    path's answers and declines are counted in ``stats`` under ``bulk.decode``."""
    return DECODE(stats, record, version, types)


def decode_fast(record: RawRecord, version: int, types: dict[int, int]) -> DecodedResult:
    """The bulk path: ``decode_result_schema``'s answer, with ``canonical`` set, or
    ``Declined``."""
    data = record.data
    end = len(data) - 4
    header = _HEADER[version]
    if end < header.size + 4:
        raise Declined(DecodeReason.SHORT)
    stamp, numpmid = result_head(data, version)
    pos = 4 + header.size
    if numpmid < 0 or numpmid * 8 > end - pos:
        raise Declined(DecodeReason.NUMPMID)
    vsets: list[DecodedValueSet] = []
    pending: list[tuple[int, int]] = []      # (block offset, padded size) to check coverage
    canonical = [True]
    for _ in range(numpmid):
        if pos + 8 > end:
            raise Declined(DecodeReason.VSETS)
        pmid, numval = VSET_HEAD.unpack_from(data, pos)
        pos += 8
        if numval <= 0:
            vsets.append(DecodedValueSet(pmid, numval, None, []))
            continue
        if pos + 4 + 8 * numval > end:
            raise Declined(DecodeReason.VSETS)
        valfmt = WORD.unpack_from(data, pos)[0]
        ptype = types.get(pmid, PmType.U32)
        if pmid not in types or valfmt != VALFMT.get(ptype, 1):
            canonical[0] = False
        if valfmt == 0 and ptype == PmType.I32:
            flat = signed_values_format(numval).unpack_from(data, pos + 4)
        else:
            flat = values_format(numval).unpack_from(data, pos + 4)
        pos += 4 + 8 * numval
        insts = flat[0::2]
        words = flat[1::2]
        if valfmt == 0:
            if ptype not in (PmType.U32, PmType.I32):
                words = tuple(decode_insitu(w, ptype) for w in words)
            columns = (insts, words)
        elif valfmt in (1, 2):
            columns = _decode_blocks(data, end, insts, words, pending, ptype, canonical)
        else:
            raise Declined(DecodeReason.VALFMT)
        vsets.append(DecodedValueSet(pmid, numval, valfmt, None, columns))
    if pending:
        if canonical[0] and pending != sorted(pending):
            canonical[0] = False
        _check_coverage(pending, pos, end)
    elif pos != end:
        raise Declined(DecodeReason.TAIL)
    return DecodedResult(stamp, vsets, record, canonical[0])


def _decode_blocks(data: bytes, end: int, insts: tuple[int, ...], words: tuple[int, ...],
                   pending: list[tuple[int, int]], ptype: int,
                   canonical: list[bool]) -> tuple[tuple[int, ...], tuple[Any, ...]]:
    first = block_offset(words[0])
    if first < 0 or first + 4 > end:
        raise Declined(DecodeReason.BLOCK_OUTSIDE)
    head = WORD.unpack_from(data, first)[0]
    vtype, vlen = head >> 24, head & 0xFFFFFF
    count = len(words)
    code, size = BLOCK_RUNS.get(vtype, ("", 0))
    if code and vlen == size and words == tuple(range(words[0], words[0] + size // 4 * count,
                                                      size // 4)):
        # a run of equal fixed-size blocks, back to back: one unpack for the whole run
        if first + size * count > end:
            raise Declined(DecodeReason.BLOCK_OUTSIDE)
        flat = blocks_format(code, count).unpack_from(data, first)
        if flat[0::2].count(head) != count:
            raise Declined(DecodeReason.RUN_HEADERS)
        if vtype != ptype:
            canonical[0] = False
        pending.append((first, size * count))
        if vtype == PmType.FLOAT:           # F32 keeps the bits beside the float
            floats = blocks_format("If", count).unpack_from(data, first)[1::2]
            return insts, tuple(map(F32, floats, flat[1::2]))
        return insts, flat[1::2]
    if count >= _MANY and not len(data) % 4:
        return insts, _many_blocks(data, end, words, pending, ptype, canonical)
    values = []
    for word in words:
        off = block_offset(word)
        if off < 0 or off + 4 > end:
            raise Declined(DecodeReason.BLOCK_OUTSIDE)
        head = WORD.unpack_from(data, off)[0]
        vtype, vlen = head >> 24, head & 0xFFFFFF
        if vlen < 4 or off + vlen > end:
            raise Declined(DecodeReason.BLOCK_VLEN)
        pad = -vlen % 4
        pending.append((off, vlen + pad))
        payload = data[off + 4:off + vlen]
        if vtype in (PmType.EVENT, PmType.HIGHRES_EVENT):
            try:
                values.append(parse_events(payload, vtype == PmType.HIGHRES_EVENT))
            except Declined:
                raise Declined(DecodeReason.EVENTS) from None
            canonical[0] = False            # the field walk checks the array (check.events)
            continue
        if canonical[0] and (vtype != ptype or data[off + vlen:off + vlen + pad] != b"~" * pad
                             or (vtype == PmType.STRING and not payload.endswith(b"\0"))
                             or len(payload) != BLOCK_PAYLOAD_SIZE.get(vtype, len(payload))):
            canonical[0] = False
        values.append(decode_block(vtype, payload))
    return insts, tuple(values)


#: value sets of at least this many blocks of varying size are read with numpy
_MANY = 32
_TILDE = ord("~")


def _many_blocks(data: bytes, end: int, words: tuple[int, ...], pending: list[tuple[int, int]],
                 ptype: int, canonical: list[bool]) -> tuple[Any, ...]:
    """The blocks of a large value set (strings, mostly) as the loop above reads them: the
    headers, bounds and canonical form checked for all at once; the payloads sliced."""
    import numpy as np

    offs = np.array(words, dtype=np.int64) * 4 - 8
    if offs.min() < 0 or offs.max() + 4 > end:
        raise Declined(DecodeReason.BLOCK_OUTSIDE)
    heads = np.frombuffer(data, dtype=">u4")[offs >> 2]
    vtypes = heads >> 24
    vlens = (heads & 0xFFFFFF).astype(np.int64)
    if (vlens < 4).any() or (offs + vlens > end).any():
        raise Declined(DecodeReason.BLOCK_VLEN)
    if ((vtypes == PmType.EVENT) | (vtypes == PmType.HIGHRES_EVENT)).any():
        raise Declined(DecodeReason.EVENTS)
    padded = vlens + (-vlens % 4)
    starts, ends = offs.tolist(), (offs + vlens).tolist()
    if (offs[1:] == offs[:-1] + padded[:-1]).all():
        pending.append((starts[0], int(padded.sum())))       # back to back, in order: one span
    else:
        pending.extend(zip(starts, padded.tolist()))
    if canonical[0]:
        raw = np.frombuffer(data, dtype=np.uint8)
        stored = vlens - 4
        if (vtypes != ptype).any() or (ptype == PmType.STRING and (
                (stored == 0).any() or raw[offs + vlens - 1].any())) \
                or (ptype in BLOCK_PAYLOAD_SIZE and (stored != BLOCK_PAYLOAD_SIZE[PmType(ptype)]).any()) \
                or any((raw[(offs + vlens + k)[padded - vlens > k]] != _TILDE).any() for k in range(3)):
            canonical[0] = False
    payloads = [data[a + 4:b] for a, b in zip(starts, ends)]
    if (vtypes == PmType.STRING).all():      # decode_block gives a string's stored bytes
        return tuple(payloads)
    return tuple(map(decode_block, vtypes.tolist(), payloads))


def _check_coverage(pending: list[tuple[int, int]], start: int, end: int) -> None:
    # libpcp: blocks are contiguous, start right after the value sets, end at the trailer
    pending.sort()
    at = start
    for off, size in pending:
        if off != at:
            raise Declined(DecodeReason.COVERAGE)
        at += size
    if at != end:
        raise Declined(DecodeReason.COVERAGE)


def decode_result_schema(record: RawRecord, version: int,
                         types: dict[int, int]) -> DecodedResult:
    """Decode a result with the construct schema (the reference path; checks everything)."""
    parsed = parse_payload(structs(version).result, record, "result")
    offsets: dict[int, Any] = {}
    at = first_block_offset(version, (v.numval for v in parsed.vset))
    for block in parsed.blocks:
        offsets[at] = block
        at += 4 + len(block.vbuf) + len(block.pad)
    vsets = []
    for i, vs in enumerate(parsed.vset):
        values: list[tuple[int, Any]] = []
        if vs.numval > 0:
            if vs.valfmt not in (0, 1, 2):
                raise FormatError(f"valfmt {vs.valfmt} is not 0 (INSITU), 1 (DPTR) or 2 (SPTR)",
                                  record.location(f"result.vset[{i}].valfmt"), "result.valfmt")
            for j, pv in enumerate(vs.vlist):
                if vs.valfmt == 0:
                    values.append((pv.inst, decode_insitu(pv.value, types.get(vs.pmid, PmType.U32))))
                    continue
                block = offsets.get(block_offset(pv.value))
                if block is None:
                    raise FormatError(
                        f"value block index {pv.value} (byte {block_offset(pv.value)}) "
                        "is not the start of a value block",
                        record.location(f"result.vset[{i}].vlist[{j}].value"), "result.dptr")
                values.append((pv.inst, _block_value(block)))
        vsets.append(DecodedValueSet(vs.pmid, vs.numval, vs.valfmt if vs.numval > 0 else None, values))
    return DecodedResult(parsed.timestamp, vsets, record)


def _block_value(block: Any) -> Any:
    if block.vtype in (PmType.EVENT, PmType.HIGHRES_EVENT):
        try:
            return event_array(block.vtype == PmType.HIGHRES_EVENT).parse(block.vbuf)
        except Exception:  # an undecodable array is still the stored bytes
            return block.vbuf
    return decode_block(block.vtype, block.vbuf)


# -- runs of records with one layout: the values of many records in one numpy view ---------

class ValueColumn:
    """Where one value set's values lie in a record: ``numval`` values ``stride`` bytes
    apart from byte ``offset``, each of struct code ``code`` (the decoder's own); or, with
    no code, value blocks the decoder reads one at a time: (offset, vlen, vtype) each."""

    __slots__ = ("blocks", "code", "insts", "offset", "pmid", "stride")

    def __init__(self, pmid: int, insts: tuple[int, ...], offset: int, stride: int,
                 code: str, blocks: tuple[tuple[int, int, int], ...] = ()) -> None:
        self.pmid = pmid
        self.insts = insts
        self.offset = offset
        self.stride = stride
        self.code = code
        self.blocks = blocks


class ResultLayout:
    """A result record's shape: its size, its value sets' values as columns, and which
    4-byte words may differ between records of this shape (the timestamp and the values);
    every other word must be equal for another record to decode as this one does."""

    __slots__ = ("columns", "fixed", "reference", "size", "variable")

    def __init__(self, reference: bytes, columns: tuple[ValueColumn, ...],
                 variable: tuple[tuple[int, int], ...]) -> None:
        self.reference = reference          # the record the layout was read from
        self.size = len(reference)
        self.columns = columns
        self.variable = variable            # (byte offset, byte length), word-aligned
        self.fixed: Any = None              # decode_run's (fixed words' indices, their reference), made at first use


class LayoutReason(enum.StrEnum):
    """Why a record has no layout ``decode_run`` can read other records by (the last two:
    why other records do not decode by it)."""

    SCHEMA = "schema decoder"
    MARK = "mark"
    UNALIGNED = "unaligned record"
    INSITU_TYPE = "insitu value of a non-32-bit-integer type"
    BLOCK_TYPE = "block type not the descriptor's"
    EVENTS = "an event array"
    OTHER_SIZE = "a record of another size"
    OTHER_WORDS = "a record whose fixed words differ"


def result_layout(record: RawRecord, version: int,
                  types: dict[int, int]) -> ResultLayout | LayoutReason:
    """The layout of a result ``decode_result`` reads in its bulk path with every value
    typed as its descriptor says (INSITU 32-bit integers, or one run of equal fixed-size
    blocks of the descriptor's type per value set); else why not."""
    try:
        return _layout(record, version, types)
    except (Declined, struct.error, ValueError, IndexError, KeyError):
        return LayoutReason.SCHEMA


def _layout(record: RawRecord, version: int, types: dict[int, int]) -> ResultLayout | LayoutReason:
    res = decode_fast(record, version, types)
    if not res.vsets:
        return LayoutReason.MARK
    data = record.data
    if len(data) % 4:
        return LayoutReason.UNALIGNED
    header = _HEADER[version]
    pos = 4 + header.size
    columns: list[ValueColumn] = []
    variable = [(4, header.size - 4)]      # the timestamp; numpmid stays fixed
    for vs in res.vsets:
        pos += 8
        if vs.numval <= 0:
            continue
        at = pos + 4
        pos = at + 8 * vs.numval
        ptype = types.get(vs.pmid, PmType.U32)
        insts = vs.columns[0]
        if vs.valfmt == 0:
            if ptype not in (PmType.U32, PmType.I32):
                return LayoutReason.INSITU_TYPE
            code = (_PMVALUE.lower() if ptype == PmType.I32 else _PMVALUE)[1]
            column = ValueColumn(vs.pmid, insts, at + 4, 8, code)
        else:
            first = block_offset(WORD.unpack_from(data, at + 4)[0])
            head = WORD.unpack_from(data, first)[0]
            vtype, vlen = head >> 24, head & 0xFFFFFF
            codes, size = BLOCK_RUNS.get(vtype, ("", 0))
            words = values_format(vs.numval).unpack_from(data, at)[1::2]
            step = size // 4
            if not codes or vlen != size or words != tuple(
                    range(words[0], words[0] + step * vs.numval, step)):
                # _decode_blocks read these one at a time: so will decode_run, the
                # payloads variable, the headers (types, lengths) fixed
                blocks = []
                for word in words:
                    off = block_offset(word)
                    head = WORD.unpack_from(data, off)[0]
                    if head >> 24 in (PmType.EVENT, PmType.HIGHRES_EVENT):
                        return LayoutReason.EVENTS      # decode_run reads payloads as bytes
                    blocks.append((off, head & 0xFFFFFF, head >> 24))
                    variable.append((off + 4, (head & 0xFFFFFF) - 4))
                columns.append(ValueColumn(vs.pmid, insts, -1, 0, "", tuple(blocks)))
                continue
            if vtype != ptype:
                return LayoutReason.BLOCK_TYPE
            column = ValueColumn(vs.pmid, insts, first + 4, size, codes[1])
        columns.append(column)
        width = struct.calcsize(">" + column.code)
        variable.extend((column.offset + j * column.stride, width) for j in range(vs.numval))
    return ResultLayout(bytes(data), tuple(columns), tuple(variable))


def decode_run(layout: ResultLayout, datas: list[bytes],
               pmids: frozenset[int] | set[int]) -> tuple[Any, list[tuple[ValueColumn, Any]]]:
    """Which of ``datas`` (records of ``layout.size`` bytes) have every fixed word of the
    record the layout was read from (a numpy bool per record), and for those records the
    values of the value sets of ``pmids``: per column a native numpy array of shape
    (instances, records), typed as ``decode_result`` types them (FLOAT as its 32 bits),
    or for blocks read one at a time a list of each record's values (Python objects).
    A record that has the reference's fixed words decodes as the reference does, its
    timestamp and values aside. numpy is imported here, by the callers that use this."""
    import numpy as np

    size = layout.size
    buf = b"".join(datas)
    count = len(datas)
    words = np.frombuffer(buf, dtype=np.uint32).reshape(count, size // 4)
    if layout.fixed is None:
        fixed = np.ones(size // 4, dtype=bool)
        for off, length in layout.variable:
            fixed[off // 4:(off + length + 3) // 4] = False
        at = np.flatnonzero(fixed)
        layout.fixed = (at, np.frombuffer(layout.reference, dtype=np.uint32)[at])
    at, reference = layout.fixed
    # only the fixed words, compared as booleans: any() over integer words is several times slower
    matching = (words[:, at] == reference).all(axis=1)
    every = bool(matching.all())
    out: list[tuple[ValueColumn, Any]] = []
    kept = datas if every else [d for d, ok in zip(datas, matching.tolist()) if ok]
    for column in layout.columns:
        if column.pmid not in pmids:
            continue
        if not column.code:
            blocks = column.blocks
            out.append((column, [tuple(decode_block(vtype, data[off + 4:off + vlen])
                                       for off, vlen, vtype in blocks) for data in kept]))
            continue
        stored = np.dtype(numpy_type(column.code))
        view = np.ndarray((count, len(column.insts)), dtype=stored, buffer=buf,
                          offset=column.offset, strides=(size, column.stride))
        if not every:
            view = view[matching]
        out.append((column, view.T.astype(stored.newbyteorder("="), order="C")))
    return matching, out


RunColumns = list[list[tuple[int, tuple[int, ...], tuple[Any, ...]]]]


def run_columns_reference(records: list[RawRecord], version: int, types: dict[int, int]) -> RunColumns:
    """Per record, (pmID, instances, values) of each value set with values, as the schema
    decodes them: the reference of ``bulk.run``."""
    out: RunColumns = []
    for record in records:
        res = decode_result_schema(record, version, types)
        out.append([(vs.pmid, *vs.columns) for vs in res.vsets if vs.numval > 0])
    return out


def run_columns_fast(records: list[RawRecord], version: int, types: dict[int, int]) -> RunColumns:
    """``run_columns_reference`` by ``decode_run``, with the layout of the first record."""
    layout = result_layout(records[0], version, types)
    if isinstance(layout, LayoutReason):
        raise Declined(layout)
    if any(len(r.data) != layout.size for r in records):
        raise Declined(LayoutReason.OTHER_SIZE)
    matching, columns = decode_run(layout, [r.data for r in records], {c.pmid for c in layout.columns})
    if not matching.all():
        raise Declined(LayoutReason.OTHER_WORDS)
    per_column: list[list[tuple[Any, ...]]] = []
    for column, got in columns:
        if not column.code:
            per_column.append(got)
            continue
        rows = got.T.tolist()
        if types.get(column.pmid) == PmType.FLOAT:
            rows = [[F32.from_bits(bits) for bits in row] for row in rows]
        per_column.append([tuple(row) for row in rows])
    return [[(column.pmid, column.insts, per_column[k][r]) for k, (column, _) in enumerate(columns)]
            for r in range(len(records))]


DECODE = register("bulk.decode", reference=decode_result_schema, fast=decode_fast,
                  reasons=DecodeReason, inputs="result-record")
RUN = register("bulk.run", reference=run_columns_reference, fast=run_columns_fast,
               reasons=LayoutReason, inputs="result-records")
