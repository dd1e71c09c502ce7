"""Result records checked against a learned shape: the validator's fast path (FMT-RESULT).

Almost every result of an archive repeats the layout of earlier ones: the same value sets,
instances, value formats and block headers, only the timestamp and the values change. Once
a record has been checked field by field (results.py, the reference path) and found clean,
its layout is kept as a ``Shape``: a bit mask of the bytes that may vary (timestamp, INSITU
words, block payloads and padding) and the bytes every other byte must equal. A later
record of the same length and first value set that matches the mask needs only what can
differ with the values: its time (fraction, order, archive start), the instance domain in
force (the same state, an interval of time), counter values against the previous result,
and each string's NUL. Anything else (a mark, a new layout, a finding, an event array)
goes to the reference path, counted under a ``Fallback`` reason, so a finding is always
reported by the same code in the same order, and the shape is learned again from it.

Kept per archive: the shapes (at most ``MAX_SHAPES``, their masks at most ``SHAPE_BYTES``
bytes) and nothing per result.
"""

from __future__ import annotations

import enum
import itertools
import operator
import struct
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from pcpconform.check.state import Context, VolumeInfo
from pcpconform.check.values import ValueChecks, is_counter
from pcpconform.format.pmtypes import PmType, Timestamp
from pcpconform.format.schema import RESULT_HEADER_SIZE, PmValue, block_offset
from pcpconform.format.values import F32
from pcpconform.io.bulk import DecodedResult, struct_format
from pcpconform.io.reader import RawRecord

__all__ = ["Fallback", "Shape", "ResultColumns", "MAX_SHAPES", "SHAPE_BYTES"]

#: shapes kept per archive; more distinct layouts than this start the cache again
MAX_SHAPES = 1024
#: record bytes the kept shapes may cover (each holds a mask and the masked record)
SHAPE_BYTES = 16 << 20
#: shapes kept per key (strings of one padded length differ in their block's vlen)
_PER_KEY = 4
_PMVALUE = struct_format(PmValue)                 # "iI": instance, value word
_PAIR = struct.calcsize(">" + _PMVALUE)
_WORD = struct.Struct(">I")
_STAMP = {2: struct.Struct(">ii"), 3: struct.Struct(">IIi")}
#: block payload formats of the numeric types a counter may have (FLOAT: its bits)
_BLOCK_CODE: dict[int, str] = {PmType.I64: "q", PmType.U64: "Q", PmType.DOUBLE: "d", PmType.FLOAT: "I"}
_BLOCK_SIZE = {code: struct.calcsize(">" + code) for code in _BLOCK_CODE.values()}
_INSITU_CODE: dict[int, str] = {PmType.I32: "i", PmType.U32: "I"}
_EVENTS = (PmType.EVENT, PmType.HIGHRES_EVENT)
_NSEC = 1_000_000_000
_lt = operator.lt


@lru_cache(maxsize=256)
def _words(count: int) -> struct.Struct:
    """The value words of ``count`` pmValues (their instances skipped)."""
    return struct.Struct(">" + ("4x" + _PMVALUE[1]) * count)


class Fallback(enum.Enum):
    """Why a result went to the reference path instead of its shape."""

    NEW_SHAPE = "new-shape"            # no shape of this length and first value set yet
    STRUCTURE = "structure"            # a byte of the layout differs from the shape's
    TIME = "time"                      # fraction out of range, out of order, before start
    INDOM = "indom"                    # another instance-domain state is in force
    COUNTER = "counter"                # a counter decreased, or its instances changed
    STRING = "string"                  # a string value without its NUL
    MARK = "mark"                      # a mark record (counters restart)
    UNDECODED = "undecoded"            # the record does not decode (reported)
    FINDING = "finding"                # learning: the reference path reported something
    UNSUPPORTED = "unsupported"        # learning: not canonical, event arrays, numval <= 0
    TOO_LARGE = "too-large"            # learning: a record too large to keep a shape of


@dataclass(frozen=True)
class _CounterColumn:
    """One counter's values in a shape: where they are and the instances they belong to."""

    pmid: int
    insts: tuple[int, ...]
    unpack: Callable[[bytes, int], tuple[Any, ...]]
    at: int
    floats: struct.Struct | None      # FLOAT: unpacked again as floats, paired with the bits


@dataclass(frozen=True)
class Shape:
    """A clean record's layout: the bytes that must repeat, and the columns to check."""

    mask: int                          # 1 bits: bytes that must equal the shape's
    expect: int                        # the record as an integer, masked
    counters: tuple[_CounterColumn, ...]
    nuls: tuple[int, ...]              # offsets of each string's last byte (must be 0)
    since: int                         # the instance domains used are in force from
    until: int                         # ... until (ns)


class ResultColumns:
    """The shapes of one archive's results and how often each path was taken."""

    def __init__(self, ctx: Context, values: ValueChecks, version: int) -> None:
        self.ctx = ctx
        self.values = values
        self.version = version
        self.header = RESULT_HEADER_SIZE[version]
        self.stamp = _STAMP[version]
        #: (record length, numpmid and first pmID) -> the shapes of that key, newest first
        self.shapes: dict[tuple[int, bytes], list[Shape]] = {}
        self._count = 0
        self._bytes = 0
        self.paths: Counter[str] = ctx.report.result_paths
        self._pending: tuple[str, int, int, int] | None = None   # last fast result's time

    def check(self, rec: RawRecord, info: VolumeInfo) -> bool:
        """True if ``rec`` matched its shape and passed every check (state updated); False
        (the reason counted, nothing changed) if the reference path must check it."""
        data = rec.data
        hdr = self.header
        shapes = self.shapes.get((len(data), data[hdr - 4:hdr + 4]))
        if shapes is None:
            return self._fallback(Fallback.MARK if data[hdr - 4:hdr] == b"\0\0\0\0" else Fallback.NEW_SHAPE)
        whole = int.from_bytes(data, "big")
        for shape in shapes:
            if whole & shape.mask == shape.expect:
                break
        else:
            return self._fallback(Fallback.STRUCTURE)
        if self.version == 3:
            lo, hi, nsec = self.stamp.unpack_from(data, 4)
            sec = lo | hi << 32
            if sec >> 63:
                sec -= 1 << 64
            if not 0 <= nsec < _NSEC:
                return self._fallback(Fallback.TIME)
        else:
            sec, usec = self.stamp.unpack_from(data, 4)
            if not 0 <= usec < 1_000_000:
                return self._fallback(Fallback.TIME)
            nsec = usec * 1000
        ns = sec * _NSEC + nsec
        st = self.ctx.st
        if (st.last_result is not None and ns < st.last_result) \
                or (st.start is not None and (sec, nsec) < (st.start.sec, st.start.nsec)):
            return self._fallback(Fallback.TIME)
        if not shape.since <= ns < shape.until:
            return self._fallback(Fallback.INDOM)
        for at in shape.nuls:
            if data[at]:
                return self._fallback(Fallback.STRING)
        counters = st.counters
        updates = []
        for col in shape.counters:
            now = col.unpack(data, col.at)
            if col.floats is not None:
                now = tuple(map(F32, col.floats.unpack_from(data, col.at), now))
            last = counters.get(col.pmid)
            if last is not None:
                if last[0] != col.insts:
                    return self._fallback(Fallback.COUNTER)
                try:
                    if any(map(_lt, now, last[1])):
                        return self._fallback(Fallback.COUNTER)
                except TypeError:   # the last values were of another type (value.vtype)
                    return self._fallback(Fallback.COUNTER)
            updates.append((col.pmid, (col.insts, now)))
        counters.update(updates)
        st.last_result = ns
        info.stamp(ns)
        self._pending = (rec.file, rec.index, sec, nsec)
        self.paths["columns"] += 1
        return True

    def _fallback(self, reason: Fallback) -> bool:
        self.paths[reason.value] += 1
        return False

    def flush(self) -> None:
        """Set the context's current result as the reference path would have left it."""
        if self._pending is not None:
            f, i, sec, nsec = self._pending
            self.ctx.result_stamp = (f, i, Timestamp(sec, nsec))
            self._pending = None

    def learn(self, rec: RawRecord, res: DecodedResult | None, clean: bool) -> None:
        """Keep the shape of a record the reference path has just checked."""
        if res is None:
            self.paths[Fallback.UNDECODED.value] += 1
            return
        if res.is_mark:
            return
        if not clean:
            self.paths[Fallback.FINDING.value] += 1
            return
        size = 2 * len(rec.data)                 # a mask and the masked record
        if 2 * size > SHAPE_BYTES:
            self.paths[Fallback.TOO_LARGE.value] += 1
            return
        shape = self._shape(rec.data, res)
        if shape is None:
            self.paths[Fallback.UNSUPPORTED.value] += 1
            return
        if self._count >= MAX_SHAPES or self._bytes + size > SHAPE_BYTES:
            self.shapes.clear()
            self._count = self._bytes = 0
        hdr = self.header
        shapes = self.shapes.setdefault((len(rec.data), rec.data[hdr - 4:hdr + 4]), [])
        shapes.insert(0, shape)
        self._count += 1
        self._bytes += size
        del shapes[_PER_KEY:]

    def _shape(self, data: bytes, res: DecodedResult) -> Shape | None:
        """The shape of a canonical, clean record (None for what it cannot hold)."""
        if not res.canonical:
            return None
        size = len(data)
        varies = bytearray(size)           # 0xFF where a byte may change record to record
        varies[4:self.header - 4] = b"\xff" * (self.header - 8)
        ns = res.timestamp.total_nsec()
        since, until = -(1 << 127), 1 << 127
        counters: list[_CounterColumn] = []
        nuls: list[int] = []
        pos = self.header
        for vs in res.vsets:
            pos += 8
            if vs.numval <= 0:
                return None
            info = self.values.desc_info(vs.pmid)
            if info is None:
                return None
            ptype, _sem, indom = info
            if indom is not None:
                span = self.values.members_span(indom, ns)
                if span is None:
                    return None
                since, until = max(since, span[0]), min(until, span[1])
            vlist = pos + 4
            pos = vlist + _PAIR * vs.numval
            if vs.valfmt == 0:
                for j in range(vs.numval):
                    at = vlist + _PAIR * j + 4
                    varies[at:at + 4] = b"\xff" * 4
            else:
                offsets = list(map(block_offset, _words(vs.numval).unpack_from(data, vlist)))
                for off in offsets:
                    vtype, vlen = divmod(_WORD.unpack_from(data, off)[0], 1 << 24)
                    if vtype in _EVENTS:
                        return None
                    padded = vlen + (-vlen % 4)
                    varies[off + 4:off + padded] = b"\xff" * (padded - 4)
                    if vtype == PmType.STRING:
                        nuls.append(off + vlen - 1)
            if is_counter(info):
                if any(c.pmid == vs.pmid for c in counters):
                    return None     # compared with itself within the record: reference path
                column = (self._insitu(vs.pmid, ptype, vs.columns[0], vlist) if vs.valfmt == 0
                          else self._blocks(vs.pmid, ptype, vs.columns[0], offsets))
                if column is None:
                    return None     # a counter the shape cannot hold a column of
                counters.append(column)
        whole = (1 << 8 * size) - 1
        mask = whole ^ int.from_bytes(varies, "big")
        return Shape(mask, int.from_bytes(data, "big") & mask, tuple(counters), tuple(nuls),
                     since, until)

    @staticmethod
    def _insitu(pmid: int, ptype: int, insts: tuple[int, ...], vlist: int) -> _CounterColumn | None:
        code = _INSITU_CODE.get(ptype)
        if code is None:
            return None
        fmt = struct.Struct(">" + ("4x" + code) * len(insts))
        return _CounterColumn(pmid, tuple(insts), fmt.unpack_from, vlist, None)

    @staticmethod
    def _blocks(pmid: int, ptype: int, insts: tuple[int, ...], offsets: list[int]) -> _CounterColumn | None:
        code = _BLOCK_CODE.get(ptype)
        if code is None:
            return None
        if any(b <= a for a, b in itertools.pairwise(offsets)):
            return None     # never in a canonical record: blocks follow value order
        parts, at = [], offsets[0]
        for off in offsets:
            parts.append(f"{off - at + 4}x{code}")
            at = off + 4 + _BLOCK_SIZE[code]
        fmt = struct.Struct(">" + "".join(parts))
        floats = struct.Struct(">" + "".join(parts).replace("I", "f")) if ptype == PmType.FLOAT else None
        return _CounterColumn(pmid, tuple(insts), fmt.unpack_from, offsets[0], floats)
