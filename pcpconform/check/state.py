"""What the passes over one archive share: what earlier files said, and where findings go.

The engine reads .meta first, then the data volumes, then the index, so each pass can use
what the earlier ones recorded here (descriptors, instance domains, record offsets and
timestamps). ``Context.add`` is the one way a finding reaches the report.
"""

from __future__ import annotations

import math
import os
import re
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pcpconform.check.counters import CounterHistory
from pcpconform.check.describe import metric_text, stamp_text
from pcpconform.check.diagnostics import OsFailure, Report
from pcpconform.check.rules import RULES
from pcpconform.errors import FormatError
from pcpconform.format.pmtypes import PmID, Timestamp
from pcpconform.format.timezone import ArchiveZone
from pcpconform.io.reader import RawRecord

__all__ = ["VolumeInfo", "ArchiveState", "Context", "IndomHistory"]

#: how Python spells an OS error in a message: "[Errno 5] Input/output error"
_ERRNO = re.compile(r"\[Errno (\d+)\]")

#: One instance domain over time: (timestamp ns, instance ids, {id: name}) in time order.
IndomHistory = list[tuple[int, frozenset[int], dict[int, bytes]]]


class VolumeInfo:
    """What the index pass needs to know of one data volume, kept without a list per result.

    The index's data offsets (``probes``, read ahead of the volumes) are answered as the
    records stream past them: whether a record starts there, how many records start
    before it, and the latest timestamp among the first that many decoded results.
    """

    def __init__(self, path: Path, probes: Iterable[int] = ()) -> None:
        self.path = path
        self.size = 0
        self.end = 0                          # end of the last whole record
        self.records = 0                      # records framed
        self.decoded = 0                      # results that decoded (their stamps seen)
        self.latest: int | None = None        # the latest of those stamps (ns)
        #: offset -> (a record starts there, records before it)
        self.starts: dict[int, tuple[bool, int]] = {}
        #: k -> the latest stamp among the first min(k, decoded) results
        self.firsts: dict[int, int | None] = {}
        self._probes = sorted(set(probes), reverse=True)    # popped from the end
        self.next_probe: int | float = self._probes[-1] if self._probes else math.inf
        self._wanted: deque[int] = deque()

    def record(self, offset: int) -> None:
        """A record starts at ``offset`` (offsets increase)."""
        if offset >= self.next_probe:
            self._answer(offset)
        self.records += 1

    def stamp(self, ns: int) -> None:
        """The next decoded result has this time."""
        self.decoded += 1
        if self.latest is None or ns > self.latest:
            self.latest = ns
        wanted = self._wanted
        while wanted and wanted[0] <= self.decoded:
            self.firsts[wanted.popleft()] = self.latest

    def finish(self) -> None:
        """The last record has been read: answer the offsets beyond it."""
        self._answer(math.inf)
        while self._wanted:
            self.firsts[self._wanted.popleft()] = self.latest

    def _answer(self, offset: int | float) -> None:
        probes = self._probes
        while probes and probes[-1] <= offset:
            at = probes.pop()
            self.starts[at] = (at == offset, self.records)
            if self.records:
                self._want(self.records)
        self.next_probe = probes[-1] if probes else math.inf

    def _want(self, k: int) -> None:
        # k counts records before this one, so at least the results decoded so far
        if k == self.decoded:
            self.firsts[k] = self.latest
        else:
            self._wanted.append(k)


@dataclass
class ArchiveState:
    """Facts gathered by one pass for the passes after it."""

    version: int = 0
    start: Timestamp | None = None
    descs: dict[int, Any] = field(default_factory=dict)
    names: dict[bytes, int] = field(default_factory=dict)
    indoms: dict[int, IndomHistory] = field(default_factory=dict)
    indom_stamps: dict[int, list[int]] = field(default_factory=dict)    # each history's times
    meta_offsets: list[int] = field(default_factory=list)   # timestamped .meta records
    meta_stamps: list[int] = field(default_factory=list)    # and their timestamps (ns)
    meta_size: int | None = None                  # None: .meta missing or unreadable
    meta_records: list[int] = field(default_factory=list)   # every record's offset
    text_idents: list[tuple[int, int, RawRecord]] = field(default_factory=list)
    volumes: dict[int, VolumeInfo] = field(default_factory=dict)
    last_result: int | None = None
    valfmts: dict[int, int] = field(default_factory=dict)
    counters: CounterHistory = field(default_factory=CounterHistory)


class Context:
    """One archive being checked: its state, its report and the labels seen so far."""

    def __init__(self, base: Path, report: Report, decompress_limit: int, columns: bool = True,
                 walk_canonical: bool = False) -> None:
        self.base = base
        self.report = report
        self.decompress_limit = decompress_limit
        #: check results on learned shapes (columns.py) where they repeat
        self.columns = columns
        #: walk even the results the bulk decoder finds canonical field by field (the
        #: reference of ``check.canonical``: a canonical result has nothing to find there)
        self.walk_canonical = walk_canonical
        self.st = ArchiveState()
        #: file name -> (archive version, parsed label), in the order the files were opened
        self.labels: dict[str, tuple[int, Any]] = {}
        #: (file, record, time) of the result being checked
        self.result_stamp: tuple[str, int, Timestamp] | None = None
        self._zone: ArchiveZone | None = None

    def add(self, code: str, file: str, message: str, **where: Any) -> None:
        """Report a finding at ``record``, ``offset``, ``field``; ``pmid`` names its metric,
        ``stamp`` its time (by default the time of the result being checked, when the
        finding is about that record)."""
        pmid: int | None = where.pop("pmid", None)
        stamp: Timestamp | None = where.pop("stamp", None)
        metric: str | None = where.pop("metric", None)
        if stamp is None and self.result_stamp is not None \
                and self.result_stamp[:2] == (file, where.get("record")):
            stamp = self.result_stamp[2]
        self.report.add(code, file, message, **where,
                        metric=metric if pmid is None else self.metric_name(pmid),
                        time=None if stamp is None else self.when(stamp))

    def metric_name(self, pmid: int) -> str:
        """The metric's first name in the archive's PMNS, else its pmID."""
        names = getattr(self.st.descs.get(int(pmid)), "names", None)
        if names:
            return bytes(names[0]).decode("utf-8", "replace")
        return str(PmID(pmid))

    def metric(self, pmid: int) -> str:
        """``60.0.4 (disk.dev.read_bytes)`` for messages."""
        names = getattr(self.st.descs.get(int(pmid)), "names", None)
        return metric_text(pmid, bytes(names[0]).decode("utf-8", "replace") if names else None)

    def when(self, stamp: Timestamp) -> str:
        """A time in the archive's timezone (its first label's), as pmdumplog -z shows it."""
        if self._zone is None:
            first = next(iter(self.labels.values()), None)
            tz = getattr(first[1], "timezone", None) if first is not None else None
            if isinstance(tz, bytes):
                tz = tz.split(b"\0", 1)[0].decode("utf-8", "replace")
            self._zone = ArchiveZone(tz if isinstance(tz, str) else None)
        if not 0 <= stamp.nsec < 1_000_000_000:
            return stamp_text(stamp)
        return self._zone.when(stamp)

    def reader_error(self, exc: FormatError) -> None:
        """Report what the reader raised; its codes are rule codes. An OS error (the
        reader's message carries its errno) stops the check instead (``OsFailure``)."""
        loc = exc.location
        os_error = _ERRNO.search(exc.message)
        if os_error is not None:
            self.report.diagnostics.clear()
            self.report.os_error = f"{self.base.parent / loc.file}: {os.strerror(int(os_error.group(1)))}"
            raise OsFailure(self.report.os_error)
        # anything that is not a rule (a label that does not decode) is a read failure
        code = exc.code if exc.code in RULES else "file.read"
        self.add(code, loc.file, exc.message, record=loc.record, offset=loc.offset, field=loc.field)

    def time(self, ts: Timestamp, file: str, record: int | None, offset: int | None, fld: str,
             version: int | None = None) -> None:
        """time.fraction: the fraction of a second is out of range for the version."""
        version = version or self.st.version
        bad = ts.nsec < 0 or (ts.nsec >= 1_000_000_000) or (version == 2 and ts.nsec % 1000)
        if bad or (version == 2 and ts.usec >= 1_000_000):
            self.add("time.fraction", file, f"fraction of a second out of range: {stamp_text(ts)}",
                     record=record, offset=offset, field=fld)
