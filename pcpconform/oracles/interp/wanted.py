"""The replay's pass decodes only the value sets of the metrics asked for.

``bulk.decode_result`` decodes every value of every record; the replay keeps only some
metrics'. ``WantedDecoder`` reads a record's header and value-set heads, checks with a few
whole-slice comparisons that its value blocks are what the bulk decoder reads in one
``unpack`` (each DPTR value set one run of equal fixed-size blocks, the runs back to back
in value-set order from the end of the value sets to the trailer), and decodes the wanted
value sets only, exactly as the bulk decoder would. Any other record (strings, events,
another layout, anything damaged) is decoded whole by ``decode_result`` and filtered, so
values and errors are the same (tests/unit/test_speed_interp_wanted.py).

``wanted_windows`` is the whole replay's pass: records come in windows, and in each the
records of one layout (``bulk.result_layout``: the same fixed words, only times and
values differ) are decoded together by ``bulk.decode_run`` into numpy arrays, which the
replay appends to its series' arrays without a Python object per value; the rest go
through the ``WantedDecoder``, counted by reason (tests/unit/test_speed_interp_bulk.py).
"""

from __future__ import annotations

import enum
import struct
from collections.abc import Iterable, Iterator
from functools import lru_cache
from typing import Any

from pcpconform.fastpath import Declined, PathStats
from pcpconform.format.pmtypes import PM_IN_NULL, PmType, Timestamp
from pcpconform.format.schema.result import RESULT_HEADER_SIZE, block_index
from pcpconform.format.values import F32, decode_insitu
from pcpconform.io.archive import Archive
from pcpconform.io.bulk import DecodedValueSet, ResultLayout, decode_result, decode_run, result_head, result_layout
from pcpconform.io.reader import RawRecord

__all__ = ["WantedDecoder", "WantedReason", "wanted_records", "wanted_windows", "ValueWindow", "Record"]

#: (time, is a mark, the wanted value sets with values)
Record = tuple[Timestamp, bool, list[DecodedValueSet]]

_VSET = struct.Struct(">Ii")
_WORD = struct.Struct(">I")
#: the block types the bulk decoder reads as one run: (struct codes, block size)
_RUNS: dict[int, tuple[str, int]] = {PmType.U64: ("IQ", 12), PmType.I64: ("Iq", 12),
                                     PmType.DOUBLE: ("Id", 12), PmType.FLOAT: ("II", 8)}


class WantedReason(enum.Enum):
    """Why a record is decoded whole by ``decode_result`` (``interp.wanted``)."""

    NOT_SELECTIVE = "more than half the metrics wanted"
    SHORT = "shorter than a header"
    NUMPMID = "numpmid negative or past the record"
    VSETS = "value sets run past the trailer"
    VALFMT = "valfmt not INSITU, DPTR or SPTR"
    BLOCKS = "blocks not one run of equal fixed-size blocks per value set, back to back"
    DAMAGED = "a field that does not unpack"


@lru_cache(maxsize=4096)
def _fmt(codes: str, count: int) -> struct.Struct:
    return struct.Struct(">" + codes * count)


@lru_cache(maxsize=4096)
def _run_words(first: int, step: int, count: int) -> bytes:
    """The DPTR words of a run of ``count`` blocks from index ``first``, as stored."""
    return struct.pack(f">{count}I", *range(first, first + step * count, step))


class WantedDecoder:
    """Records -> (time, mark, wanted value sets), as ``decode_result`` then a filter."""

    def __init__(self, version: int, types: dict[int, int], wanted: Iterable[int],
                 stats: PathStats | None = None) -> None:
        self.stats = PathStats() if stats is None else stats
        self.version = version
        self.types = types
        self.wanted = frozenset(wanted)
        # checking the layout costs about what decoding it does: worth it only when at most
        # half the metrics are wanted (measured: 1.8x faster with 13 of 45, 1.2x slower
        # with all of them)
        self.selective = len(self.wanted & types.keys()) * 2 <= len(types)

    @property
    def whole(self) -> int:
        """Records decoded whole."""
        return sum(self.stats.reasons("interp.wanted").values())

    def __call__(self, record: RawRecord) -> Record:
        try:
            if not self.selective:
                raise Declined(WantedReason.NOT_SELECTIVE)
            got = self._selective(record)
        except (Declined, struct.error, ValueError) as exc:
            self.stats.decline("interp.wanted", exc.reason if isinstance(exc, Declined) else WantedReason.DAMAGED)
            res = decode_result(record, self.version, self.types, self.stats)
            wanted = self.wanted
            return (res.timestamp, not res.vsets,
                    [vs for vs in res.vsets if vs.pmid in wanted and vs.numval > 0])
        self.stats.answered["interp.wanted"] += 1
        return got

    def _selective(self, record: RawRecord) -> Record:
        data = record.data
        end = len(data) - 4
        pos = RESULT_HEADER_SIZE[self.version]
        if end < pos:
            raise Declined(WantedReason.SHORT)
        stamp, numpmid = result_head(data, self.version)
        if numpmid < 0 or numpmid * 8 > end - pos:
            raise Declined(WantedReason.NUMPMID)
        lowest = pos
        view = memoryview(data)
        first = cursor = -1                 # the first run's start; where the next must start
        out: list[DecodedValueSet] = []
        wanted, types = self.wanted, self.types
        for _ in range(numpmid):
            if pos + 8 > end:
                raise Declined(WantedReason.VSETS)
            pmid, numval = _VSET.unpack_from(data, pos)
            pos += 8
            if numval <= 0:
                continue
            at = pos + 4
            pos = at + 8 * numval
            if pos > end:
                raise Declined(WantedReason.VSETS)
            valfmt = _WORD.unpack_from(data, at - 4)[0]
            if valfmt == 0:
                if pmid in wanted:
                    ptype = types.get(pmid, PmType.U32)
                    flat = _fmt("ii" if ptype == PmType.I32 else "iI", numval).unpack_from(data, at)
                    words = flat[1::2]
                    if ptype not in (PmType.U32, PmType.I32):
                        words = tuple(decode_insitu(w, ptype) for w in words)
                    out.append(DecodedValueSet(pmid, numval, 0, None, (flat[0::2], words)))
                continue
            if valfmt > 2:
                raise Declined(WantedReason.VALFMT)
            if cursor < 0:                  # checked against the end of the value sets below
                first = cursor = 4 * _WORD.unpack_from(data, at + 4)[0] - 8
                if cursor < lowest:
                    raise Declined(WantedReason.BLOCKS)
            if cursor + 4 > end:
                raise Declined(WantedReason.BLOCKS)
            head = data[cursor:cursor + 4]
            vtype = head[0]
            run = _RUNS.get(vtype)
            if run is None or int.from_bytes(head[1:], "big") != run[1]:
                raise Declined(WantedReason.BLOCKS)
            codes, size = run
            stop = cursor + size * numval
            if stop > end:
                raise Declined(WantedReason.BLOCKS)
            step = size // 4
            if view[at:pos].cast("I")[1::2].tobytes() != _run_words(block_index(cursor), step, numval):
                raise Declined(WantedReason.BLOCKS)
            if view[cursor:stop].cast("I")[::step].tobytes() != head * numval:
                raise Declined(WantedReason.BLOCKS)
            if pmid in wanted:
                insts = _fmt("iI", numval).unpack_from(data, at)[0::2]
                flat = _fmt(codes, numval).unpack_from(data, cursor)
                if vtype == PmType.FLOAT:       # F32 keeps the bits beside the float
                    floats = _fmt("If", numval).unpack_from(data, cursor)[1::2]
                    values: tuple[Any, ...] = tuple(map(F32, floats, flat[1::2]))
                else:
                    values = flat[1::2]
                out.append(DecodedValueSet(pmid, numval, valfmt, None, (insts, values)))
            cursor = stop
        # the runs back to back from the end of the value sets to the trailer
        if (first if first >= 0 else pos) != pos or (cursor if cursor >= 0 else pos) != end:
            raise Declined(WantedReason.BLOCKS)
        return stamp, numpmid == 0, out


def wanted_records(archive: Archive, wanted: Iterable[int], start: Any = None,
                   decoder: WantedDecoder | None = None) -> Iterator[Record]:
    """Every record from index entry ``start`` on (or the first), as ``decoder`` gives it."""
    if decoder is None:
        types = {pmid: d.type for pmid, d in archive.metadata.descs.items()}
        decoder = WantedDecoder(archive.version, types, wanted)
    for vol, record in archive.volume_records():
        if start is not None and (vol < start.vol or (vol == start.vol and record.offset < start.off_data)):
            continue
        yield decoder(record)


_WINDOW_BYTES = 8 << 20        # a window's records at most (numpy copies them once more)
_LAYOUTS_PER_SIZE = 16        # layouts kept per record size (strings of one padded length)
TOO_MANY_LAYOUTS = "too many layouts of one record size"


class ValueWindow:
    """Consecutive records decoded together: each record's time and whether it is a mark,
    the records decoded one at a time (by position), and per group of records of one
    layout (``bulk.result_layout``) their positions and, per wanted value set, its
    instances and values as a numpy array (instances x records)."""

    __slots__ = ("groups", "marks", "raw", "singles", "stamps")

    def __init__(self, raw: list[RawRecord]) -> None:
        self.raw = raw                      # the records, for a pass one at a time
        self.stamps: list[Timestamp] = []
        self.marks: list[bool] = []
        self.singles: dict[int, Record] = {}
        self.groups: list[tuple[list[int], list[tuple[int, tuple[int, ...], Any]]]] = []


def _stamp(data: bytes, version: int) -> Timestamp:
    # as the bulk decoder reads a result's time
    return result_head(data, version)[0]


def _bulk_reason(layout: ResultLayout | str, wanted: frozenset[int], singular: frozenset[int]) -> str:
    """Why records of this layout are not decoded a group at a time ("" when they are)."""
    if isinstance(layout, str):
        return layout
    for column in layout.columns:
        if column.pmid not in wanted:
            continue
        if len(set(column.insts)) != len(column.insts):
            return "an instance twice in a value set"
        if column.pmid in singular and column.insts != (PM_IN_NULL,):
            return "singular metric with instances"
    return ""


def wanted_windows(archive: Archive, decoder: WantedDecoder, singular: Iterable[int],
                   stats: Any, start: Any = None, size: int = 1024) -> Iterator[ValueWindow]:
    """``wanted_records`` in windows of at most ``size`` records (and about
    ``_WINDOW_BYTES``): in each, the records of one layout are decoded together by numpy
    (``bulk.decode_run``), without a Python object per value; every other record by
    ``decoder``, its reason counted in ``stats.record_fallbacks``; ``stats.bulk_records``
    counts the others. Values and errors are ``wanted_records``': of several bad records,
    the first one's error."""
    version, types, wanted = decoder.version, decoder.types, decoder.wanted
    quirky = frozenset(singular)
    fallbacks = stats.record_fallbacks
    layouts: dict[int, list[ResultLayout]] = {}     # by record size, the first ones seen
    declined: dict[int, str] = {}       # record sizes whose first record has no layout

    def single(window: ValueWindow, pos: int, reason: str, errors: dict[int, Exception]) -> None:
        fallbacks[reason] += 1
        try:
            window.singles[pos] = decoder(window.raw[pos])
        except Exception as exc:        # raised below, the first record's first
            errors[pos] = exc

    def build(raw: list[RawRecord]) -> ValueWindow:
        window = ValueWindow(raw)
        errors: dict[int, Exception] = {}
        classes: dict[int, list[int]] = {}
        for pos, record in enumerate(raw):
            length = len(record.data)
            if length in declined:
                single(window, pos, declined[length], errors)
                continue
            classes.setdefault(length, []).append(pos)
        for length, positions in classes.items():
            known = layouts.setdefault(length, [])
            tried = 0
            while positions:
                if tried < len(known):
                    layout = known[tried]
                elif len(known) < _LAYOUTS_PER_SIZE:
                    # a layout from the first record left
                    found = result_layout(raw[positions[0]], version, types)
                    reason = _bulk_reason(found, wanted, quirky)
                    if reason or isinstance(found, str):
                        if not known:
                            declined[length] = reason
                        single(window, positions.pop(0), reason, errors)
                        continue
                    known.append(found)
                    layout = found
                else:
                    for pos in positions:
                        single(window, pos, TOO_MANY_LAYOUTS, errors)
                    break
                tried += 1
                matching, columns = decode_run(layout, [raw[p].data for p in positions], wanted)
                flags = matching.tolist()
                kept = [p for p, ok in zip(positions, flags) if ok]
                positions = [p for p, ok in zip(positions, flags) if not ok]
                if kept:
                    stats.bulk_records += len(kept)
                    window.groups.append((kept, [(c.pmid, c.insts, v) for c, v in columns]))
        if errors:
            raise errors[min(errors)]
        singles = window.singles
        for pos, record in enumerate(raw):
            got = singles.get(pos)
            if got is None:
                window.stamps.append(_stamp(record.data, version))
                window.marks.append(False)
            else:
                window.stamps.append(got[0])
                window.marks.append(got[1])
        return window

    batch: list[RawRecord] = []
    held = 0                            # bytes in the batch
    records = archive.volume_records()
    while True:
        try:
            vol, record = next(records)
        except StopIteration:
            break
        except Exception:
            if batch:
                build(batch)            # an earlier record's error comes first, as it would
            raise
        if start is not None and (vol < start.vol or (vol == start.vol and record.offset < start.off_data)):
            continue
        batch.append(record)
        held += len(record.data)
        if len(batch) >= size or held >= _WINDOW_BYTES:
            yield build(batch)
            batch, held = [], 0
    if batch:
        yield build(batch)
