"""Result records checked against a learned shape: the validator's fast path (FMT-RESULT).

Almost every result of an archive repeats the layout of earlier ones: the same value sets,
instances, value formats and block headers, only the timestamp and the values change. Once
a record has been checked by the reference path (results.py) and found clean, its layout is
kept as a ``Shape``: a bit mask of the bytes that may vary (timestamp, INSITU words, block
payloads and padding) and the bytes every other byte must equal. That is all this engine
knows of the format: what a later record of the shape must still satisfy is each rule's
own column form (``columns``, beside its per-record check in times.py and values.py),
asked once per shape (shape.py) for a check to run on every record of it. A record whose
every check passes is done (the rules' state committed); anything else (a mark, a new
layout, a record a rule might report something on) goes to the reference path, counted
under its reason (``Fallback``, or the rule's own), so a finding is always reported by the
same code in the same order, and the shape is learned again from it.

Kept per archive: the shapes (at most ``MAX_SHAPES``, their masks at most ``SHAPE_BYTES``
bytes) and nothing per result.
"""

from __future__ import annotations

import enum
import struct
from dataclasses import dataclass
from functools import lru_cache

from pcpconform.check import times
from pcpconform.check.shape import LearnedShape, ShapeCheck, VsetShape
from pcpconform.check.state import Context, VolumeInfo
from pcpconform.check.values import ValueChecks
from pcpconform.fastpath import Declined
from pcpconform.format.pmtypes import Timestamp
from pcpconform.format.schema import RESULT_HEADER_SIZE, PmValue, block_offset
from pcpconform.format.schema.visit import struct_format
from pcpconform.io.decoded import DecodedResult
from pcpconform.io.reader import RawRecord

__all__ = ["Fallback", "Shape", "ResultColumns", "MAX_SHAPES", "SHAPE_BYTES", "PATH"]

PATH = "check.columns"
#: shapes kept per archive; more distinct layouts than this start the cache again
MAX_SHAPES = 1024
#: record bytes the kept shapes may cover (each holds a mask and the masked record)
SHAPE_BYTES = 16 << 20
#: shapes kept per key (strings of one padded length differ in their block's vlen)
_PER_KEY = 4
#: shapes learned before ``learning`` asks whether they are used
_FIRST_SHAPES = 8
#: keys (length, first value set) of records seen once, kept to learn at the second
_SEEN_KEYS = 1 << 16
_PMVALUE = struct_format(PmValue)                 # "iI": instance, value word
_PAIR = struct.calcsize(">" + _PMVALUE)
_WORD = struct.Struct(">I")
_STAMP = {2: struct.Struct(">ii"), 3: struct.Struct(">IIi")}
_NSEC = 1_000_000_000


@lru_cache(maxsize=256)
def _words(count: int) -> struct.Struct:
    """The value words of ``count`` pmValues (their instances skipped)."""
    return struct.Struct(">" + ("4x" + _PMVALUE[1]) * count)


class Fallback(enum.Enum):
    """Why a result went to the reference path instead of its shape (``check.columns``);
    the rules' column forms give their own reasons (``ValueReason``, ``TimeReason``)."""

    NEW_SHAPE = "new-shape"            # no shape of this length and first value set yet
    STRUCTURE = "structure"            # a byte of the layout differs from the shape's
    MARK = "mark"                      # a mark record (counters restart)
    UNDECODED = "undecoded"            # the record does not decode (reported)
    FINDING = "finding"                # learning: the reference path reported something
    UNSUPPORTED = "unsupported"        # learning: not canonical, numval <= 0, undescribed
    TOO_LARGE = "too-large"            # learning: a record too large to keep a shape of


@dataclass(frozen=True)
class Shape:
    """A clean record's layout: the bytes that must repeat, and the rules' checks."""

    mask: int                          # 1 bits: bytes that must equal the shape's
    expect: int                        # the record as an integer, masked
    checks: tuple[ShapeCheck, ...]


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
        self._seen: set[tuple[int, bytes]] = set()    # keys of records not learned from
        self._unlearnable: set[tuple[int, bytes]] = set()   # keys whose shape was declined
        self._count = 0
        self._bytes = 0
        self.stats = ctx.report.paths
        self._pending: tuple[str, int, int, int] | None = None   # last fast result's time
        self.hits = 0                    # records checked on a shape
        self.learned = 0                 # records a shape was learned from (or tried)

    def check(self, rec: RawRecord, info: VolumeInfo) -> bool:
        """True if ``rec`` matched its shape and passed every rule's check (state updated);
        False (the reason counted, nothing changed) if the reference path must check it."""
        data = rec.data
        hdr = self.header
        shapes = self.shapes.get(self._key(data))
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
        else:
            sec, usec = self.stamp.unpack_from(data, 4)
            nsec = usec * 1000
        ns = sec * _NSEC + nsec
        commits = []
        try:
            for rule_check in shape.checks:
                commit = rule_check(data, ns)
                if commit is not None:
                    commits.append(commit)
        except Declined as declined:
            self.stats.decline(PATH, declined.reason)
            return False
        for commit in commits:
            commit()
        info.stamp(ns)
        self._pending = (rec.file, rec.index, sec, nsec)
        self.stats.answered[PATH] += 1
        self.hits += 1
        return True

    def _key(self, data: bytes) -> tuple[int, bytes]:
        """What shapes are kept by: a record's length and its first value set's head (the
        numpmid before it and the pmID)."""
        return len(data), data[self.header - 4:self.header + 4]

    def learning(self, rec: RawRecord) -> bool:
        """Whether the shape of ``rec`` (checked on the records path) is worth its decoding:
        while every shape learned has been used once on average (not where no layout
        repeats: per-process metrics), only at the second record of its length and first
        value set (a record whose layout never comes again is not decoded twice), and not
        for a length and first value set whose shape was declined before."""
        if self.learned >= _FIRST_SHAPES and self.hits < self.learned:
            return False
        key = self._key(rec.data)
        if key in self._unlearnable:
            return False
        if key in self._seen:
            return True
        if len(self._seen) >= _SEEN_KEYS:
            self._seen.clear()
        self._seen.add(key)
        return False

    def _fallback(self, reason: Fallback) -> bool:
        self.stats.decline(PATH, reason)
        return False

    def flush(self) -> None:
        """Set the context's current result as the reference path would have left it."""
        if self._pending is not None:
            f, i, sec, nsec = self._pending
            self.ctx.result_stamp = (f, i, Timestamp(sec, nsec))
            self._pending = None

    def learn(self, rec: RawRecord, res: DecodedResult | None, clean: bool) -> None:
        """Keep the shape of a record the reference path has just checked."""
        self.learned += 1
        if res is None:
            self.stats.decline(PATH, Fallback.UNDECODED)
            return
        if res.is_mark:
            return
        if not clean:
            self.stats.decline(PATH, Fallback.FINDING)
            return
        size = 2 * len(rec.data)                 # a mask and the masked record
        if 2 * size > SHAPE_BYTES:
            self.stats.decline(PATH, Fallback.TOO_LARGE)
            return
        try:
            shape = self._shape(rec.data, res)
        except Declined as declined:
            self.stats.decline(PATH, declined.reason)
            if len(self._unlearnable) >= _SEEN_KEYS:
                self._unlearnable.clear()
            self._unlearnable.add(self._key(rec.data))
            return
        if self._count >= MAX_SHAPES or self._bytes + size > SHAPE_BYTES:
            self.shapes.clear()
            self._count = self._bytes = 0
        shapes = self.shapes.setdefault(self._key(rec.data), [])
        shapes.insert(0, shape)
        self._count += 1
        self._bytes += size
        del shapes[_PER_KEY:]

    def _shape(self, data: bytes, res: DecodedResult) -> Shape:
        """The shape of a canonical, clean record, with every rule's column check."""
        if not res.canonical:
            raise Declined(Fallback.UNSUPPORTED)
        size = len(data)
        varies = bytearray(size)           # 0xFF where a byte may change record to record
        varies[4:self.header - 4] = b"\xff" * (self.header - 8)
        vsets: list[VsetShape] = []
        pos = self.header
        for k, vs in enumerate(res.vsets):
            pos += 8
            info = self.values.desc_info(vs.pmid)
            if vs.numval <= 0 or info is None:
                raise Declined(Fallback.UNSUPPORTED)
            vlist = pos + 4
            pos = vlist + _PAIR * vs.numval
            blocks: tuple[tuple[int, int, int], ...] = ()
            if vs.valfmt == 0:
                for j in range(vs.numval):
                    at = vlist + _PAIR * j + 4
                    varies[at:at + 4] = b"\xff" * 4
            else:
                heads = []
                for off in map(block_offset, _words(vs.numval).unpack_from(data, vlist)):
                    vtype, vlen = divmod(_WORD.unpack_from(data, off)[0], 1 << 24)
                    padded = vlen + (-vlen % 4)
                    varies[off + 4:off + padded] = b"\xff" * (padded - 4)
                    heads.append((off, vlen, vtype))
                blocks = tuple(heads)
            assert vs.valfmt is not None
            vsets.append(VsetShape(k, vs.pmid, vs.numval, vs.valfmt, vs.columns[0], *info, vlist, blocks))
        learned = LearnedShape(self.version, bytes(data), res.timestamp.total_nsec(), tuple(vsets))
        checks = [rule.columns(self.ctx, learned) for rule in times.RECORD_RULES]
        checks += self.values.columns(learned)
        whole = (1 << 8 * size) - 1
        mask = whole ^ int.from_bytes(varies, "big")
        return Shape(mask, int.from_bytes(data, "big") & mask,
                     tuple(check for check in checks if check is not None))
