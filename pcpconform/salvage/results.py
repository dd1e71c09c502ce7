"""One result record salvaged: every value that reads as its descriptor's type, none other.

A record libpcp writes (the bulk decoder calls it canonical) whose metrics are all described
is kept byte for byte. Any other record is walked value set by value set (SALVAGE-RESULT-*):
a value set whose pmID has no descriptor, whose storage does not suit the descriptor's type,
or whose value blocks are of another type or size is dropped; value blocks are trusted only
when every block of the record is sound and together they tile the record from the end of
the value sets to its trailer exactly, as libpcp lays them out (a pointer into the wrong
place cannot then pass unseen). What remains is written again as libpcp lays it out
(``writer.layout_result``): the same values, at the same time, for the same instances.
"""

from __future__ import annotations

import enum
import struct
from dataclasses import dataclass, field
from typing import Any

from pcpconform.fastpath import Declined, PathStats, register
from pcpconform.format.pmtypes import PmType, Timestamp
from pcpconform.format.schema import RESULT_HEADER_SIZE, block_offset, event_array, structs
from pcpconform.format.values import BLOCK_PAYLOAD_SIZE, decode_block, decode_insitu
from pcpconform.io.bulk import DecodeReason, decode_fast
from pcpconform.io.decoded import DecodedResult, DecodedValueSet, result_head
from pcpconform.io.encode import encode_result
from pcpconform.io.reader import RawRecord
from pcpconform.io.writer import ValueSetSpec, layout_result, valfmt_for
from pcpconform.salvage.plausible import time_ok

__all__ = ["Described", "ResultSalvage", "salvage_result", "walk_result", "keep_result", "KeepReason", "KEEP"]

_VSET_HEAD = struct.Struct(">Ii")
_WORD = struct.Struct(">I")
_PAIR = struct.Struct(">iI")
_INSITU, _DPTR, _SPTR = 0, 1, 2
_EVENTS = (PmType.EVENT, PmType.HIGHRES_EVENT)
#: value bytes of a fixed-size event parameter, by PM_TYPE (32, U32, 64, U64, FLOAT, DOUBLE)
_PARAM_SIZE = {0: 4, 1: 4, 2: 8, 3: 8, 4: 4, 5: 8}


@dataclass(frozen=True)
class Described:
    """What the output's descriptors say of each metric's values: its type, whether it is
    singular (no instance domain), and why a metric has no descriptor (a check code)."""

    types: dict[int, int]
    singular: frozenset[int] = frozenset()
    lost: dict[int, str] = field(default_factory=dict)


@dataclass
class ResultSalvage:
    """What one result record gives: the record to write (None: nothing to keep), the values
    read and kept, and what was dropped or repaired, each as (pmID or None, values, check
    code, detail)."""

    timestamp: Timestamp
    record: bytes | None
    values_in: int = 0
    values_out: int = 0
    dropped: list[tuple[int | None, int, str, str]] = field(default_factory=list)
    repaired: list[tuple[str, str]] = field(default_factory=list)
    fatal: tuple[str, str] | None = None

    @property
    def whole(self) -> bool:
        """Every value of the record is kept (it may have been written again)."""
        return self.fatal is None and not self.dropped and self.record is not None

    @property
    def is_mark(self) -> bool:
        return self.record is not None and self.values_out == 0 and not self.dropped


class KeepReason(enum.Enum):
    """Why a result record is not kept byte for byte as it is (it is walked instead)."""

    SHORT = "shorter than a header and a trailer"
    MARK = "a mark"
    TIME = "its timestamp is not a time"
    NOT_CANONICAL = "not laid out as the writer lays it out"
    UNDESCRIBED = "a metric without a descriptor"
    SINGULAR = "several values of a singular metric"


def salvage_result(data: bytes, version: int, described: Described, stats: PathStats) -> ResultSalvage | None:
    """Salvage a framed result record (``data`` with its length words) against the output's
    descriptors (``salvage.result``: a record the bulk decoder vouches for is kept as it
    is, any other walked; both counted in ``stats``). None when not even the header can be
    read."""
    return KEEP(stats, data, version, described, stats)


def walk_result(data: bytes, version: int, described: Described, stats: PathStats) -> ResultSalvage | None:
    """The reference of ``salvage.result``: the record walked value set by value set, what
    survives written again as libpcp lays it out (by ``bulk.encode``, counted in ``stats``)."""
    header = RESULT_HEADER_SIZE[version]
    if len(data) < header + 4:
        return None
    stamp, numpmid = result_head(data, version)
    out = ResultSalvage(stamp, None)
    if not time_ok(stamp, version):
        out.fatal = ("time.fraction", f"its timestamp {stamp} is not a time")
        return out
    mark_size = structs(version).mark_size
    if numpmid == 0:
        out.record = data
        if len(data) != mark_size:
            out.repaired.append(("result.mark-size", f"a mark of {len(data)} bytes is kept as a mark"))
            out.record = structs(version).result_record.build(layout_result(version, stamp, []))
        return out
    return _Walk(data, version, described, out, stats).run(numpmid)


def keep_result(data: bytes, version: int, described: Described, stats: PathStats) -> ResultSalvage:
    """The fast path of ``salvage.result``: the record as it is, when the bulk decoder
    vouches for every byte of it (the writer's layout of its own values, every metric
    described, no singular metric with several values); ``Declined`` otherwise."""
    if len(data) < RESULT_HEADER_SIZE[version] + 4:
        raise Declined(KeepReason.SHORT)
    stamp, numpmid = result_head(data, version)
    if numpmid == 0:
        raise Declined(KeepReason.MARK)
    if not time_ok(stamp, version):
        raise Declined(KeepReason.TIME)
    types = described.types
    res = decode_fast(RawRecord("", 0, 0, data), version, types)
    if not res.canonical:
        raise Declined(KeepReason.NOT_CANONICAL)
    if any(vs.pmid not in types for vs in res.vsets):
        raise Declined(KeepReason.UNDESCRIBED)
    if any(vs.numval > 1 and vs.pmid in described.singular for vs in res.vsets):
        raise Declined(KeepReason.SINGULAR)
    values = sum(vs.numval for vs in res.vsets if vs.numval > 0)
    return ResultSalvage(res.timestamp, data, values, values)


class _Walk:
    def __init__(self, data: bytes, version: int, described: Described, out: ResultSalvage,
                 stats: PathStats) -> None:
        self.data = data
        self.stats = stats
        self.version = version
        self.types = described.types
        self.lost = described.lost
        self.singular = described.singular
        self.out = out
        self.end = len(data) - 4

    def run(self, numpmid: int) -> ResultSalvage:
        out, data, end = self.out, self.data, self.end
        pos = RESULT_HEADER_SIZE[self.version]
        if numpmid < 0 or numpmid * 8 > end - pos:
            out.fatal = ("result.decode", f"numpmid {numpmid} does not fit the record")
            return out
        vsets: list[tuple[int, int, int | None, list[tuple[int, int]]]] = []
        for _ in range(numpmid):
            if pos + 8 > end:
                out.fatal = ("result.decode", "the value sets run past the record")
                return out
            pmid, numval = _VSET_HEAD.unpack_from(data, pos)
            pos += 8
            if numval <= 0:
                vsets.append((pmid, numval, None, []))
                continue
            if pos + 4 + 8 * numval > end:
                out.fatal = ("result.decode", f"numval {numval} runs past the record")
                return out
            valfmt = _WORD.unpack_from(data, pos)[0]
            pairs = [_PAIR.unpack_from(data, pos + 4 + 8 * j) for j in range(numval)]
            vsets.append((pmid, numval, valfmt, pairs))
            pos += 4 + 8 * numval
        out.values_in = sum(n for _, n, _, _ in vsets if n > 0)
        blocks_bad = self._blocks(vsets, pos)
        specs = []
        for pmid, numval, valfmt, pairs in vsets:
            spec = self._vset(pmid, numval, valfmt, pairs, blocks_bad)
            if spec is not None:
                specs.append(spec)
        if not specs:
            out.fatal = ("result.decode", "no value of the record can be kept")
            return out
        out.values_out = sum(len(s.values) for s in specs)
        out.record = _encode(self.version, out.timestamp, specs, self.types, self.stats)
        return out

    def _blocks(self, vsets: list[tuple[int, int, int | None, list[tuple[int, int]]]], start: int) -> str | None:
        """None when the value blocks are sound and tile the record exactly, else the code."""
        extents = []
        for _, numval, valfmt, pairs in vsets:
            if numval <= 0 or valfmt not in (_DPTR, _SPTR):
                continue
            for _, word in pairs:
                off = block_offset(word)
                if off < start or off + 4 > self.end:
                    return "result.dptr"
                vlen = _WORD.unpack_from(self.data, off)[0] & 0xFFFFFF
                if vlen < 4 or off + vlen > self.end:
                    return "result.vlen"
                extents.append((off, vlen + (-vlen % 4)))
        at = start
        for off, size in sorted(extents):
            if off != at:
                return "result.blocks"
            at += size
        return None if at == self.end else "result.blocks"

    def _drop(self, pmid: int, count: int, code: str, detail: str) -> None:
        self.out.dropped.append((pmid, count, code, detail))

    def _vset(self, pmid: int, numval: int, valfmt: int | None, pairs: list[tuple[int, int]],
              blocks_bad: str | None) -> ValueSetSpec | None:
        dtype = self.types.get(pmid)
        count = max(numval, 0)
        if dtype is None:
            code = self.lost.get(pmid, "value.undescribed")
            self._drop(pmid, count, code, "its metric has no descriptor: its values have no type")
            return None
        if numval <= 0:
            return ValueSetSpec(pmid, dtype, (), numval=numval)
        if dtype not in range(0, 11):
            self._drop(pmid, count, "value.nosupport", "its descriptor's type (NOSUPPORT) reads no value")
            return None
        if valfmt not in (_INSITU, _DPTR, _SPTR):
            self._drop(pmid, count, "result.valfmt", f"valfmt {valfmt} is not INSITU, DPTR or SPTR")
            return None
        want = valfmt_for(dtype)
        if valfmt != want and not (valfmt == _INSITU and dtype == PmType.FLOAT) and not (
                valfmt != _INSITU and want != _INSITU):
            self._drop(pmid, count, "value.valfmt", f"valfmt {valfmt} cannot hold a {PmType(dtype).token}")
            return None
        if numval > 1 and pmid in self.singular:
            self._drop(pmid, count, "value.singular-inst", f"{numval} values for a metric without an instance "
                       "domain: libpcp 6.0 and 6.3 abort interpolating them, and which is the metric's is unknown")
            return None
        if valfmt == _INSITU:
            if dtype == PmType.FLOAT:
                self.out.repaired.append(("value.insitu-float", "a legacy INSITU float written as a value block"))
            return ValueSetSpec(pmid, dtype, [(inst, decode_insitu(word & 0xFFFFFFFF, dtype))
                                              for inst, word in pairs])
        if blocks_bad is not None:
            self._drop(pmid, count, blocks_bad, "the record's value blocks do not tile it: no pointer can be "
                       "trusted")
            return None
        values = []
        for inst, word in pairs:
            got = self._block(pmid, dtype, block_offset(word))
            if got is not None:
                values.append((inst, got))
        if not values:
            return None
        return ValueSetSpec(pmid, dtype, values)

    def _block(self, pmid: int, dtype: int, off: int) -> Any | None:
        head = _WORD.unpack_from(self.data, off)[0]
        vtype, vlen = head >> 24, head & 0xFFFFFF
        payload = self.data[off + 4:off + vlen]
        if vtype not in (0, dtype):
            self._drop(pmid, 1, "value.vtype", f"a block of type {vtype} for a {PmType(dtype).token} metric")
            return None
        size = BLOCK_PAYLOAD_SIZE.get(dtype)  # type: ignore[call-overload]
        if size is not None and len(payload) != size:
            self._drop(pmid, 1, "value.vlen", f"a {len(payload)}-byte payload for a {PmType(dtype).token}")
            return None
        if vtype == 0:
            self.out.repaired.append(("value.vtype-legacy", "a block of type 0 given its descriptor's type"))
        if dtype == PmType.STRING and not payload.endswith(b"\0"):
            self.out.repaired.append(("value.string-nul", "a string given the NUL it lacked"))
        if dtype in _EVENTS:
            problem = _event_problem(payload, dtype == PmType.HIGHRES_EVENT)
            if problem is not None:
                self._drop(pmid, 1, *problem)
                return None
            return payload
        return decode_block(dtype, payload)


def _encode(version: int, stamp: Timestamp, specs: list[ValueSetSpec], types: dict[int, int],
            stats: PathStats) -> bytes:
    """The record libpcp lays out for these values (``bulk.encode``: the bulk encoder's
    packing where it builds the record, the schema's otherwise; the same bytes either way)."""
    res = DecodedResult(stamp, [DecodedValueSet(s.pmid, s.numval if s.numval is not None else len(s.values),
                                                None, list(s.values)) for s in specs], canonical=True)
    return encode_result(version, res, types, stats)


def _event_problem(payload: bytes, highres: bool) -> tuple[str, str] | None:
    try:
        arr = event_array(highres).parse(payload)
    except Exception:   # construct raises several kinds; all mean "does not fit"
        return "event.structure", "the event array does not fit its value block"
    if arr.nrecords < 0 or arr.tail:
        return "event.structure", "the event array does not fill its value block"
    for r in arr.records:
        for p in r.params or []:
            want = _PARAM_SIZE.get(p.type)
            if want is not None and len(p.vbuf) != want:
                return "event.param-len", f"an event parameter of type {p.type} has {len(p.vbuf)} value bytes"
    return None


KEEP = register("salvage.result", reference=walk_result, fast=keep_result, reasons=(KeepReason, DecodeReason),
                inputs="salvage-record")
