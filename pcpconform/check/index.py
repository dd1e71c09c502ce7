"""The temporal index: entries against the .meta file and data volumes (FMT-INDEX).

The index is checked last, when the offsets and timestamps of every .meta record are
known; what it asks of the data volumes (is there a record at this offset, how late are
the results before it) is answered while they are read, for the offsets ``index_probes``
reads from the index beforehand, so no list of every result is kept.
"""

from __future__ import annotations

import bisect
import itertools
import struct
from pathlib import Path
from typing import Any

from pcpconform.check.describe import stamp_text
from pcpconform.check.state import Context
from pcpconform.errors import FormatError
from pcpconform.format.schema import INDEX_ENTRY_SIZE, LABEL_SIZE, structs
from pcpconform.format.schema.visit import struct_format
from pcpconform.io.files import strip_compression
from pcpconform.io.index import index_entries
from pcpconform.io.reader import Component

__all__ = ["check_index", "index_probes"]

_CHUNK = 1 << 12                          # entries read ahead per chunk


def index_probes(ctx: Context, path: Path) -> dict[int, set[int]]:
    """volume -> the data offsets the index's entries name, read ahead of the volumes and
    quietly (the index pass reports what is wrong with the file). Exactly the entries the
    index pass will read: a plain file by its fixed entry format, anything else (or a file
    that fails part way) through the same reader the index pass uses."""
    probes: dict[int, set[int]] = {}
    try:
        if strip_compression(path.name)[1]:
            raise OSError("compressed: read through the reader")
        with path.open("rb") as stream:
            head = stream.read(8)
            version = head[7] if len(head) == 8 else 0
            if version not in INDEX_ENTRY_SIZE:
                return probes
            stream.seek(LABEL_SIZE[version])
            entry = _entry_format(version)
            while chunk := stream.read(entry.size * _CHUNK):
                for vol, off_data in entry.iter_unpack(chunk[:len(chunk) - len(chunk) % entry.size]):
                    probes.setdefault(vol, set()).add(off_data)
        return probes
    except OSError:
        pass
    try:
        with Component(path, max_bytes=ctx.decompress_limit) as comp:
            for _n, _offset, e in comp.index_entries():
                probes.setdefault(e.vol, set()).add(e.off_data)
    except Exception:  # whatever it is, the index pass reports it
        pass
    return probes


def _entry_format(version: int) -> struct.Struct:
    """An index entry's vol and off_data, the other fields skipped, from its schema."""
    parts = []
    for sub in structs(version).index_entry.subcons:
        fmt = struct_format(sub)
        parts.append(fmt if sub.name in ("vol", "off_data") else f"{struct.calcsize('>' + fmt)}x")
    return struct.Struct(">" + "".join(parts))


def check_index(ctx: Context, comp: Component) -> None:
    """Check every entry of an opened .index file."""
    _IndexPass(ctx, LABEL_SIZE[comp.version]).run(comp)


class _IndexPass:
    def __init__(self, ctx: Context, lsize: int) -> None:
        self.ctx = ctx
        self.st = ctx.st
        self.lsize = lsize                                   # label size: the first offset
        self.indexed: set[tuple[int, int]] = set()           # (volume, off_data) of every entry
        self._running_max: dict[int, list[int]] = {}
        self._meta_starts: set[int] | None = None
        #: missing volume -> (entries naming it, where the first one is)
        self._missing: dict[int, tuple[int, dict[str, Any]]] = {}

    def run(self, comp: Component) -> None:
        ctx, version = self.ctx, comp.version
        prev = None
        count = 0
        try:
            for number, offset, e in index_entries(comp, ctx.report.paths):
                count += 1
                self.entry(comp.name, number, offset, e, prev)
                prev = e
        except FormatError as exc:
            ctx.reader_error(exc)
        if comp.trailing:
            ctx.add("index.partial", comp.name, f"{len(comp.trailing[0])} bytes of a partial entry "
                    f"(entries are {INDEX_ENTRY_SIZE[version]} bytes)",
                    offset=self.lsize + count * INDEX_ENTRY_SIZE[version])
        for vol, (entries, where) in sorted(self._missing.items()):
            ctx.add("index.vol-missing", comp.name, f"volume {vol} does not exist; "
                    f"{entries} index {'entry names' if entries == 1 else 'entries name'} it "
                    f"(the first shown)", field="index.vol", **where)
        if count == 0:
            ctx.add("index.empty", comp.name, ".index holds no entry (libpcp: empty archive)")
        for vol in sorted(self.st.volumes)[1:]:
            if self.st.volumes[vol].records and (vol, self.lsize) not in self.indexed:
                ctx.add("volume.switch-unindexed", comp.name, f"volume {vol} starts with no index entry")

    def entry(self, f: str, n: int, offset: int, e: Any, prev: Any) -> None:
        ctx, st = self.ctx, self.st
        where = {"record": n, "offset": offset, "stamp": e.timestamp}
        ctx.time(e.timestamp, f, n, offset, "index.timestamp")
        if e.timestamp.sec < 0:
            ctx.add("time.fraction", f, f"negative timestamp {stamp_text(e.timestamp)}",
                    field="index.timestamp", **where)
        if st.start is not None and e.timestamp < st.start:
            ctx.add("index.before-start", f, f"timestamp {stamp_text(e.timestamp)} before the archive start",
                    field="index.timestamp", **where)
        if e.vol < 0:
            ctx.add("index.vol", f, f"volume {e.vol}", field="index.vol", **where)
        elif e.vol not in st.volumes:
            entries, first = self._missing.get(e.vol, (0, where))
            self._missing[e.vol] = (entries + 1, first)
        self._meta_offset(f, where, e)
        self._data_offset(f, where, e)
        m = bisect.bisect_left(st.meta_offsets, e.off_meta)
        if m and self._latest(st.meta_stamps, m) > e.timestamp.total_nsec():
            ctx.add("index.invariant", f, f"a .meta record before off_meta {e.off_meta} is later than "
                    f"{stamp_text(e.timestamp)}",
                    field="index.off_meta", **where)
        if prev is not None:
            if e.timestamp < prev.timestamp:
                ctx.add("index.time-order", f, f"timestamp {stamp_text(e.timestamp)} before "
                        f"{stamp_text(prev.timestamp)} (libpcp reads every result; only seeking uses the index)",
                        field="index.timestamp", **where)
            if e.vol < prev.vol:
                ctx.add("index.vol-order", f, f"volume {e.vol} after {prev.vol}", field="index.vol", **where)
            elif e.vol == prev.vol and (e.off_data < prev.off_data or e.off_meta < prev.off_meta):
                ctx.add("index.offset-order", f, "offsets decrease within one volume", field="index", **where)

    def _meta_offset(self, f: str, where: dict[str, Any], e: Any) -> None:
        meta_end = self.st.meta_size
        if meta_end is None:
            return
        if not self.lsize <= e.off_meta <= meta_end:
            self.ctx.add("index.offset", f, f"off_meta {e.off_meta} outside {self.lsize}..{meta_end}",
                         field="index.off_meta", **where)
        elif e.off_meta != meta_end and e.off_meta not in self._meta_record_starts():
            self.ctx.add("index.boundary", f, f"off_meta {e.off_meta} is not the start of a .meta record",
                         field="index.off_meta", **where)

    def _data_offset(self, f: str, where: dict[str, Any], e: Any) -> None:
        info = self.st.volumes.get(e.vol)
        if info is None:
            return
        if not self.lsize <= e.off_data <= info.size:
            self.ctx.add("index.offset", f, f"off_data {e.off_data} outside {self.lsize}..{info.size} "
                         f"of volume {e.vol}", field="index.off_data", **where)
        else:
            starts, k = info.starts[e.off_data]
            if e.off_data not in (info.end, info.size) and not starts:
                self.ctx.add("index.boundary", f, f"off_data {e.off_data} is not the start of a record",
                             field="index.off_data", **where)
            latest = info.firsts.get(k) if k else None
            if latest is not None and latest > e.timestamp.total_nsec():
                self.ctx.add("index.invariant", f, f"a record before off_data {e.off_data} is later than "
                             f"{stamp_text(e.timestamp)}", field="index.off_data", **where)
        self.indexed.add((e.vol, e.off_data))

    def _latest(self, stamps: list[int], count: int) -> int:
        """The latest of the first ``count`` stamps; running maxima computed once per list
        (the index pass runs after the lists are complete)."""
        running = self._running_max.get(id(stamps))
        if running is None:
            running = self._running_max[id(stamps)] = list(itertools.accumulate(stamps, max))
        return running[count - 1]

    def _meta_record_starts(self) -> set[int]:
        if self._meta_starts is None:
            self._meta_starts = set(self.st.meta_records)
        return self._meta_starts
