"""Writing the output: one label for every file, the kept .meta records, the results in
order, and a temporal index rebuilt as pmlogger writes one (SALVAGE-INDEX-1).

The files are written into a private directory beside the output and moved into place
only when complete, so a salvage that stops leaves no half-written archive under the
output's name.
"""

from __future__ import annotations

import bisect
import itertools
import os
import shutil
import tempfile
from collections.abc import Iterable
from pathlib import Path

from pcpconform.format.pmtypes import Timestamp
from pcpconform.io.writer import ArchiveWriter, LabelFields
from pcpconform.salvage.meta import KeptMeta
from pcpconform.salvage.volumes import Spool

__all__ = ["write_output", "INDEX_EVERY"]

#: bytes of results between index entries, as pmlogger and libpcp_import space them
INDEX_EVERY = 100000


class _Index:
    """Index entries where pmlogger writes them: at the first result of each volume, at
    the first result metadata came into force for (a timestamped .meta record later than
    the result before), before a result that would take the volume more than INDEX_EVERY
    bytes past the last entry, and at the end.

    An entry before a result at time t points .meta at the first record not earlier than
    t, a record without a time (descriptor, help text) counting as of the next record that
    has one: pmlogger writes a result's metadata after indexing it. The entry at the end
    points past every record not later than the last result. Either way no .meta record
    before the offset is later than the entry (the index's invariant)."""

    def __init__(self, writer: ArchiveWriter, meta_starts: list[int], meta_end: int, stamps: list[int | None]) -> None:
        self.w = writer
        self.starts = meta_starts
        self.end = meta_end
        effective: list[int] = []
        following = 1 << 126
        for stamp in reversed(stamps):
            following = stamp if stamp is not None else following
            effective.append(following)
        effective.reverse()
        # running maximum: the first record at or after t is the first whose maximum is
        self.running = list(itertools.accumulate(effective, max))
        self.timed = sorted(s for s in stamps if s is not None)
        self.flush = 0
        self.last: int | None = None

    def _offset(self, k: int) -> int:
        return self.starts[k] if k < len(self.starts) else self.end

    def before(self, stamp: Timestamp, length: int, first_of_volume: bool) -> None:
        t = stamp.total_nsec()
        timed = self.timed
        new_meta = self.last is not None and bisect.bisect_right(timed, t) > bisect.bisect_right(timed, self.last)
        if first_of_volume or new_meta or self.w.data_offset() + length > self.flush:
            self.w.put_index(stamp, off_meta=self._offset(bisect.bisect_left(self.running, t)))
            self.flush = self.w.data_offset() + INDEX_EVERY
        self.last = t

    def finish(self, stamp: Timestamp) -> None:
        k = bisect.bisect_right(self.running, stamp.total_nsec())
        self.w.put_index(stamp, off_meta=self._offset(k))


def write_output(out_base: Path, version: int, label: LabelFields, meta: list[KeptMeta], spool: Spool,
                 order: Iterable[int], placed: list[tuple[int, int, int]] | None = None) -> tuple[int, int, int]:
    """Write the output archive; returns (results written, volumes, .meta records).
    ``placed`` (if given) gets (output volume, output offset, spool row) of every result."""
    out_base = Path(out_base)
    parent = out_base.parent if str(out_base.parent) else Path(".")
    parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{out_base.name}-salvage-", dir=parent))
    try:
        written, volumes = _write(work / out_base.name, version, label, meta, spool, order, placed)
        prefix = out_base.name + "."
        for path in sorted(work.iterdir()):
            os.replace(path, parent / (prefix + path.name[len(prefix):]))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return written, volumes, len(meta)


def _write(base: Path, version: int, label: LabelFields, meta: list[KeptMeta], spool: Spool,
           order: Iterable[int], placed: list[tuple[int, int, int]] | None) -> tuple[int, int]:
    w = ArchiveWriter(base, version)
    w.start(label)
    starts = []
    for rec in meta:
        starts.append(w.meta_offset())
        w.put_meta_bytes(rec.data)
    index = _Index(w, starts, w.meta_offset(), [rec.stamp for rec in meta])
    written = 0
    source_vol: int | None = None
    last: Timestamp | None = None
    try:
        for k in order:
            vol = spool.volumes[k]
            first = source_vol is None
            if source_vol is not None and vol > source_vol:
                w.new_volume()
                first = True
            if first:
                source_vol = vol
            record = spool.read(k)
            last = spool.stamp(k)
            index.before(last, len(record), first)
            if placed is not None:
                placed.append((w.vol, w.data_offset(), k))
            w.put_result_bytes(record)
            written += 1
        if last is not None:
            index.finish(last)
    finally:
        w.close()
    return written, w.vol + 1
