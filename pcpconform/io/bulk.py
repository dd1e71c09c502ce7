"""Bulk decoding of pmResult records, derived from the same schema as the construct parser.

Interpreted construct spends most of its time on per-field bookkeeping. Results repeat the
same fixed shapes record after record (value-set header, pmValue pairs, 64-bit blocks), so
this module derives ``struct`` formats from the schema's own fixed-size declarations and
unpacks whole runs of values in one call. Anything unusual (odd block sizes, event arrays,
structural damage) falls back to the construct schema, which is also the referee in the
tests: both paths must decode every record to the same values.
"""

from __future__ import annotations

import struct
from functools import lru_cache
from typing import Any

from construct import Adapter, Construct, FormatField, Renamed, Struct

from pcpconform.errors import FormatError
from pcpconform.format.pmtypes import PmType, Timestamp
from pcpconform.format.schema import (
    RESULT_HEADER_SIZE,
    PmValue,
    block_index,
    block_offset,
    event_array,
    structs,
)
from pcpconform.format.schema.common import TimestampT3, TimevalT2
from pcpconform.format.values import (
    BLOCK_PAYLOAD_SIZE,
    F32,
    decode_block,
    decode_insitu,
    encode_block_payload,
)
from pcpconform.io.reader import RawRecord, parse_payload
from pcpconform.io.writer import valfmt_for

# valfmt writers use for each type (INSITU 0, DPTR 1, SPTR 2)
_VALFMT: dict[int, int] = {t: valfmt_for(t) for t in PmType}

__all__ = ["struct_format", "DecodedResult", "DecodedValueSet", "decode_result", "decode_result_bulk", "encode_result",
           "ValueColumn", "ResultLayout", "result_layout", "decode_run", "numpy_type"]


def struct_format(con: Construct) -> str:
    """The ``struct`` format (without byte-order prefix) of a fixed-size schema."""
    while isinstance(con, (Renamed, Adapter)):
        con = con.subcon
    if isinstance(con, FormatField):
        fmtstr: str = con.fmtstr
        return fmtstr.lstrip("<>=!")
    if isinstance(con, Struct):
        return "".join(struct_format(sub) for sub in con.subcons)
    raise TypeError(f"{con!r} has no fixed struct format")


# Formats taken from the schema declarations themselves.
_T2 = struct_format(TimevalT2)          # "ii"
_T3 = struct_format(TimestampT3)        # "IIi"
_PMVALUE = struct_format(PmValue)       # "iI"
_HEADER = {2: struct.Struct(">" + _T2 + "i"), 3: struct.Struct(">" + _T3 + "i")}
_VSET_HEAD = struct.Struct(">Ii")       # pmValueSet.pmid, numval
_WORD = struct.Struct(">I")
#: fixed-size value blocks decoded a run at a time: vtype -> (header + payload format, vlen)
_BLOCK_BULK: dict[int, tuple[str, int]] = {
    PmType.U64: ("IQ", 12), PmType.I64: ("Iq", 12), PmType.DOUBLE: ("Id", 12), PmType.FLOAT: ("II", 8)}


@lru_cache(maxsize=4096)
def _values_format(count: int) -> struct.Struct:
    return struct.Struct(">" + _PMVALUE * count)


@lru_cache(maxsize=4096)
def _signed_values_format(count: int) -> struct.Struct:
    # PM_TYPE_32 insitu words read as signed in the same unpack
    return struct.Struct(">" + _PMVALUE.lower() * count)


@lru_cache(maxsize=4096)
def _blocks_format(code: str, count: int) -> struct.Struct:
    return struct.Struct(">" + code * count)


class DecodedValueSet:
    """One metric's values in a result: (instance, typed value) pairs.

    The bulk decoder keeps instances and values as two tuples and pairs them only when
    ``values`` is first read, since checks that work per column never need the pairs.
    """

    __slots__ = ("_columns", "_values", "numval", "pmid", "valfmt")

    def __init__(self, pmid: int, numval: int, valfmt: int | None,
                 values: list[tuple[int, Any]] | None = None,
                 columns: tuple[tuple[int, ...], tuple[Any, ...]] | None = None) -> None:
        self.pmid = pmid
        self.numval = numval
        self.valfmt = valfmt
        self._values = values
        self._columns = columns

    @property
    def values(self) -> list[tuple[int, Any]]:
        if self._values is None:
            self._values = list(zip(*self._columns)) if self._columns else []
        return self._values

    @property
    def columns(self) -> tuple[tuple[int, ...], tuple[Any, ...]]:
        """(instances, values) as two tuples."""
        if self._columns is None:
            vals = self._values or []
            self._columns = (tuple(i for i, _ in vals), tuple(v for _, v in vals))
        return self._columns

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, DecodedValueSet) and self.pmid == other.pmid
                and self.numval == other.numval and self.valfmt == other.valfmt
                and _same_values(self.values, other.values))

    def __repr__(self) -> str:
        return f"DecodedValueSet({self.pmid}, {self.numval}, {self.valfmt}, {self.values!r})"


def _same_values(a: list[tuple[int, Any]], b: list[tuple[int, Any]]) -> bool:
    # NaN != NaN, so compare floats by their representation
    return len(a) == len(b) and all(
        x[0] == y[0] and (x[1] == y[1] or repr(x[1]) == repr(y[1])) for x, y in zip(a, b))


class DecodedResult:
    """A decoded pmResult: timestamp and value sets; a mark has none."""

    __slots__ = ("canonical", "record", "timestamp", "vsets")

    def __init__(self, timestamp: Timestamp, vsets: list[DecodedValueSet],
                 record: RawRecord | None = None, canonical: bool = False) -> None:
        self.timestamp = timestamp
        self.vsets = vsets
        self.record = record
        # True when the record is exactly what writer.layout_result makes of these values
        # (valfmt by type, blocks in value order with the descriptor's type, "~" padding)
        self.canonical = canonical

    @property
    def is_mark(self) -> bool:
        return not self.vsets

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, DecodedResult) and self.timestamp == other.timestamp
                and self.vsets == other.vsets)

    def __repr__(self) -> str:
        return f"DecodedResult({self.timestamp}, {self.vsets!r})"


class _Fallback(Exception):
    """The record needs the full schema parser."""


def decode_result(record: RawRecord, version: int, types: dict[int, int]) -> DecodedResult:
    """Decode a result record; ``types`` maps pmID to pmDesc type for INSITU words."""
    try:
        return _decode_fast(record, version, types)
    except _Fallback:
        return decode_result_schema(record, version, types)


def decode_result_bulk(record: RawRecord, version: int, types: dict[int, int]) -> DecodedResult | None:
    """The bulk path alone: None where ``decode_result`` would fall back to the schema."""
    try:
        return _decode_fast(record, version, types)
    except _Fallback:
        return None


def result_head(data: bytes, version: int) -> tuple[Timestamp, int]:
    """A result record's timestamp and numpmid, read from the header after its length word."""
    if version == 2:
        sec, usec, numpmid = _HEADER[2].unpack_from(data, 4)
        return Timestamp(sec, usec * 1000), numpmid
    lo, hi, nsec, numpmid = _HEADER[3].unpack_from(data, 4)
    sec = lo | hi << 32
    return Timestamp(sec - (1 << 64) if sec >> 63 else sec, nsec), numpmid


def _decode_fast(record: RawRecord, version: int, types: dict[int, int]) -> DecodedResult:
    data = record.data
    end = len(data) - 4
    header = _HEADER[version]
    if end < header.size + 4:
        raise _Fallback
    stamp, numpmid = result_head(data, version)
    pos = 4 + header.size
    if numpmid < 0 or numpmid * 8 > end - pos:
        raise _Fallback
    vsets: list[DecodedValueSet] = []
    pending: list[tuple[int, int]] = []      # (block offset, padded size) to check coverage
    canonical = [True]
    for _ in range(numpmid):
        if pos + 8 > end:
            raise _Fallback
        pmid, numval = _VSET_HEAD.unpack_from(data, pos)
        pos += 8
        if numval <= 0:
            vsets.append(DecodedValueSet(pmid, numval, None, []))
            continue
        if pos + 4 + 8 * numval > end:
            raise _Fallback
        valfmt = _WORD.unpack_from(data, pos)[0]
        ptype = types.get(pmid, PmType.U32)
        if pmid not in types or valfmt != _VALFMT.get(ptype, 1):
            canonical[0] = False
        if valfmt == 0 and ptype == PmType.I32:
            flat = _signed_values_format(numval).unpack_from(data, pos + 4)
        else:
            flat = _values_format(numval).unpack_from(data, pos + 4)
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
            raise _Fallback
        vsets.append(DecodedValueSet(pmid, numval, valfmt, None, columns))
    if pending:
        if canonical[0] and pending != sorted(pending):
            canonical[0] = False
        _check_coverage(pending, pos, end)
    elif pos != end:
        raise _Fallback
    return DecodedResult(stamp, vsets, record, canonical[0])


def _decode_blocks(data: bytes, end: int, insts: tuple[int, ...], words: tuple[int, ...],
                   pending: list[tuple[int, int]], ptype: int,
                   canonical: list[bool]) -> tuple[tuple[int, ...], tuple[Any, ...]]:
    first = block_offset(words[0])
    if first < 0 or first + 4 > end:
        raise _Fallback
    head = _WORD.unpack_from(data, first)[0]
    vtype, vlen = head >> 24, head & 0xFFFFFF
    count = len(words)
    code, size = _BLOCK_BULK.get(vtype, ("", 0))
    if code and vlen == size and words == tuple(range(words[0], words[0] + size // 4 * count,
                                                      size // 4)):
        # a run of equal fixed-size blocks, back to back: one unpack for the whole run
        if first + size * count > end:
            raise _Fallback
        flat = _blocks_format(code, count).unpack_from(data, first)
        if flat[0::2].count(head) != count:
            raise _Fallback
        if vtype != ptype:
            canonical[0] = False
        pending.append((first, size * count))
        if vtype == PmType.FLOAT:           # F32 keeps the bits beside the float
            floats = _blocks_format("If", count).unpack_from(data, first)[1::2]
            return insts, tuple(map(F32, floats, flat[1::2]))
        return insts, flat[1::2]
    values = []
    for word in words:
        off = block_offset(word)
        if off < 0 or off + 4 > end:
            raise _Fallback
        head = _WORD.unpack_from(data, off)[0]
        vtype, vlen = head >> 24, head & 0xFFFFFF
        if vlen < 4 or off + vlen > end or vtype in (PmType.EVENT, PmType.HIGHRES_EVENT):
            raise _Fallback
        pad = -vlen % 4
        pending.append((off, vlen + pad))
        payload = data[off + 4:off + vlen]
        if canonical[0] and (vtype != ptype or data[off + vlen:off + vlen + pad] != b"~" * pad
                             or (vtype == PmType.STRING and not payload.endswith(b"\0"))
                             or len(payload) != BLOCK_PAYLOAD_SIZE.get(vtype, len(payload))):
            canonical[0] = False
        values.append(decode_block(vtype, payload))
    return insts, tuple(values)


def _check_coverage(pending: list[tuple[int, int]], start: int, end: int) -> None:
    # libpcp: blocks are contiguous, start right after the value sets, end at the trailer
    pending.sort()
    at = start
    for off, size in pending:
        if off != at:
            raise _Fallback
        at += size
    if at != end:
        raise _Fallback


def decode_result_schema(record: RawRecord, version: int,
                         types: dict[int, int]) -> DecodedResult:
    """Decode a result with the construct schema (the reference path; checks everything)."""
    parsed = parse_payload(structs(version).result, record, "result")
    header = structs(version).result_header_size
    offsets: dict[int, Any] = {}
    at = header + sum(8 + (4 + 8 * v.numval if v.numval > 0 else 0) for v in parsed.vset)
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


def encode_result(version: int, res: DecodedResult, types: dict[int, int]) -> bytes | None:
    """The record ``writer.layout_result`` makes of a canonical result's values, packed with
    the same ``struct`` formats the decoder unpacks (one ``pack`` per value set and per run
    of fixed-size blocks); None for what this does not build (the caller uses the schema)."""
    try:
        return _encode_fast(version, res, types)
    except (struct.error, TypeError, ValueError, AttributeError, KeyError, OverflowError):
        return None


def _encode_fast(version: int, res: DecodedResult, types: dict[int, int]) -> bytes | None:
    if not res.canonical:
        return None
    vsets = res.vsets
    offset = RESULT_HEADER_SIZE[version] + sum(
        8 + (4 + 8 * vs.numval if vs.numval > 0 else 0) for vs in vsets)
    heads: list[bytes] = []
    blocks: list[bytes] = []
    for vs in vsets:
        numval = vs.numval
        heads.append(_VSET_HEAD.pack(vs.pmid, numval))
        if numval <= 0:
            continue
        ptype = types[vs.pmid]
        valfmt = _VALFMT[ptype]
        insts, vals = vs.columns
        flat: list[Any] = [0] * (2 * numval)
        flat[0::2] = insts
        if valfmt == 0:
            if ptype == PmType.I32:
                flat[1::2] = vals
                heads.append(_WORD.pack(0) + _signed_values_format(numval).pack(*flat))
                continue
            if ptype != PmType.U32:
                return None
            flat[1::2] = vals
        else:
            code, size = _BLOCK_BULK.get(ptype, ("", 0))
            if code:
                # one run of equal blocks, back to back, as the decoder's bulk case reads them
                step = size // 4
                first = block_index(offset)
                flat[1::2] = range(first, first + step * numval, step)
                payload: list[Any] = [ptype << 24 | size] * (2 * numval)
                payload[1::2] = [v.bits for v in vals] if ptype == PmType.FLOAT else vals
                blocks.append(_blocks_format(code, numval).pack(*payload))
                offset += size * numval
            else:
                words = []
                for value in vals:
                    if not isinstance(value, bytes):
                        return None     # aggregates and events keep the schema's path
                    body = encode_block_payload(value, ptype)
                    vlen = 4 + len(body)
                    pad = -vlen % 4
                    words.append(block_index(offset))
                    blocks.append(_WORD.pack(ptype << 24 | vlen) + body + b"~" * pad)
                    offset += vlen + pad
                flat[1::2] = words
        heads.append(_WORD.pack(valfmt) + _values_format(numval).pack(*flat))
    size = offset + 4
    stamp = res.timestamp
    if version == 2:
        if stamp.nsec % 1000:
            return None
        header = _HEADER[2].pack(stamp.sec, stamp.nsec // 1000, len(vsets))
    else:
        sec = stamp.sec & 0xFFFFFFFFFFFFFFFF
        header = _HEADER[3].pack(sec & 0xFFFFFFFF, sec >> 32, stamp.nsec, len(vsets))
    length = _WORD.pack(size)
    return b"".join((length, header, *heads, *blocks, length))


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
        self.fixed: Any = None              # decode_run's word mask, made at its first use


def result_layout(record: RawRecord, version: int,
                  types: dict[int, int]) -> ResultLayout | str:
    """The layout of a result ``decode_result`` reads in its bulk path with every value
    typed as its descriptor says (INSITU 32-bit integers, or one run of equal fixed-size
    blocks of the descriptor's type per value set); else why not, in a few words."""
    try:
        return _layout(record, version, types)
    except (_Fallback, struct.error, ValueError, IndexError, KeyError):
        return "schema decoder"


def _layout(record: RawRecord, version: int, types: dict[int, int]) -> ResultLayout | str:
    res = _decode_fast(record, version, types)
    if not res.vsets:
        return "mark"
    data = record.data
    if len(data) % 4:
        return "unaligned record"
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
                return "insitu value of a non-32-bit-integer type"
            code = (_PMVALUE.lower() if ptype == PmType.I32 else _PMVALUE)[1]
            column = ValueColumn(vs.pmid, insts, at + 4, 8, code)
        else:
            first = block_offset(_WORD.unpack_from(data, at + 4)[0])
            head = _WORD.unpack_from(data, first)[0]
            vtype, vlen = head >> 24, head & 0xFFFFFF
            codes, size = _BLOCK_BULK.get(vtype, ("", 0))
            words = _values_format(vs.numval).unpack_from(data, at)[1::2]
            step = size // 4
            if not codes or vlen != size or words != tuple(
                    range(words[0], words[0] + step * vs.numval, step)):
                # _decode_blocks read these one at a time: so will decode_run, the
                # payloads variable, the headers (types, lengths) fixed
                blocks = []
                for word in words:
                    off = block_offset(word)
                    head = _WORD.unpack_from(data, off)[0]
                    blocks.append((off, head & 0xFFFFFF, head >> 24))
                    variable.append((off + 4, (head & 0xFFFFFF) - 4))
                columns.append(ValueColumn(vs.pmid, insts, -1, 0, "", tuple(blocks)))
                continue
            if vtype != ptype:
                return "block type not the descriptor's"
            column = ValueColumn(vs.pmid, insts, first + 4, size, codes[1])
        columns.append(column)
        width = struct.calcsize(">" + column.code)
        variable.extend((column.offset + j * column.stride, width) for j in range(vs.numval))
    return ResultLayout(bytes(data), tuple(columns), tuple(variable))


#: struct's standard-size codes -> numpy's kind (the size is struct's own)
_NUMPY_KINDS = {"b": "i", "h": "i", "i": "i", "l": "i", "q": "i",
                "B": "u", "H": "u", "I": "u", "L": "u", "Q": "u", "f": "f", "d": "f"}


def numpy_type(code: str) -> str:
    """The big-endian numpy type string of one ``struct`` code as the decoder reads it
    (standard sizes: "L" is 4 bytes here, 8 in numpy's own letters)."""
    return f">{_NUMPY_KINDS[code]}{struct.calcsize('>' + code)}"


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
        fixed = np.full(size // 4, 0xFFFFFFFF, dtype=np.uint32)
        for off, length in layout.variable:
            fixed[off // 4:(off + length + 3) // 4] = 0
        layout.fixed = fixed
    reference = np.frombuffer(layout.reference, dtype=np.uint32)
    matching = ~((words ^ reference) & layout.fixed).any(axis=1)
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
