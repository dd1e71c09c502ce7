"""The data volumes: every result salvaged, spooled, then put in time order.

Volumes are read in volume order, each framed with resynchronisation; each result kept is
appended to a spool file as it will be written, and only its time, place in the spool and
source are held in memory (a few machine words per record, in arrays), so memory stays flat
whatever the size of the archive. Results out of time order are then put in order
(SALVAGE-ORDER-1): every libpcp replays all their values that way (spec/salvage.md gives
the measurement), where dropping them loses theirs.
"""

from __future__ import annotations

import tempfile
from array import array
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import BinaryIO

import numpy as np

from pcpconform.format.pmtypes import PmID, Timestamp
from pcpconform.format.schema import LABEL_SIZE
from pcpconform.salvage.framing import Frame, Gap, frames
from pcpconform.salvage.report import Item, SalvageReport
from pcpconform.salvage.results import Described, ResultSalvage, salvage_result
from pcpconform.salvage.sources import Source

__all__ = ["Spool", "salvage_volume", "ORDER_RULES"]

#: what to do with results earlier than one before them: put them in order, drop them, or
#: leave them (``keep`` is for measuring what libpcp does with them: the validator rejects it)
ORDER_RULES = ("sort", "drop", "keep")
_DAY = 86400 * 10**9
#: how far from the archive's known times a result may lie and still be resynchronised on
_PLAUSIBLE_AFTER = 366 * _DAY


@dataclass
class Spool:
    """The kept results, in the order read: bytes in a temporary file, the rest in arrays."""

    # closed by close()
    file: BinaryIO = field(default_factory=lambda: tempfile.TemporaryFile(prefix="pcpconform-salvage-"))  # noqa: SIM115
    secs: array[int] = field(default_factory=lambda: array("q"))       # seconds (any 64-bit time)
    nsecs: array[int] = field(default_factory=lambda: array("q"))
    offsets: array[int] = field(default_factory=lambda: array("q"))    # in the spool
    lengths: array[int] = field(default_factory=lambda: array("q"))
    volumes: array[int] = field(default_factory=lambda: array("q"))    # input volume
    sources: array[int] = field(default_factory=lambda: array("q"))    # input offset
    values: array[int] = field(default_factory=lambda: array("q"))     # values it holds
    size: int = 0
    earliest: int | None = None                                         # ns
    latest: int | None = None

    def add(self, stamp: Timestamp, record: bytes, vol: int, source: int, values: int) -> None:
        self.file.write(record)
        self.secs.append(stamp.sec)
        self.nsecs.append(stamp.nsec)
        ns = stamp.total_nsec()
        self.earliest = ns if self.earliest is None else min(self.earliest, ns)
        self.latest = ns if self.latest is None else max(self.latest, ns)
        self.offsets.append(self.size)
        self.lengths.append(len(record))
        self.volumes.append(vol)
        self.sources.append(source)
        self.values.append(values)
        self.size += len(record)

    def __len__(self) -> int:
        return len(self.secs)

    def stamp(self, k: int) -> Timestamp:
        return Timestamp(self.secs[k], self.nsecs[k])

    def span(self) -> tuple[int, int] | None:
        """The earliest and latest times (ns) kept so far."""
        return None if self.earliest is None or self.latest is None else (self.earliest, self.latest)

    def read(self, k: int) -> bytes:
        self.file.seek(self.offsets[k])
        return self.file.read(self.lengths[k])

    def late(self) -> list[int]:
        """The records earlier than some record before them (result.time-order's finding)."""
        out = []
        latest: tuple[int, int] | None = None
        for k, stamp in enumerate(zip(self.secs, self.nsecs)):
            if latest is not None and stamp < latest:
                out.append(k)
            else:
                latest = stamp
        return out

    def order(self, rule: str, report: SalvageReport) -> Iterator[int]:
        """The spool's records in output order under ``rule`` (ORDER_RULES), reported."""
        late = self.late()
        if not late or rule == "keep":
            yield from range(len(self))
            return
        span = (min(self.stamp(k) for k in late), max(self.stamp(k) for k in late))
        if rule == "drop":
            dropped = set(late)
            report.add(Item("result.time-order", "dropped", "SALVAGE-ORDER-1", "(volumes)",
                            f"{len(late)} results earlier than a result before them dropped",
                            first=span[0], last=span[1], records=len(late),
                            values=sum(self.values[k] for k in late)))
            yield from (k for k in range(len(self)) if k not in dropped)
            return
        report.add(Item("result.time-order", "reordered", "SALVAGE-ORDER-1", "(volumes)",
                        f"{len(late)} results earlier than a result before them put in time order",
                        first=span[0], last=span[1]))
        secs, nsecs = np.frombuffer(self.secs, dtype=np.int64), np.frombuffer(self.nsecs, dtype=np.int64)
        yield from (int(k) for k in np.lexsort((np.arange(len(self)), nsecs, secs)))

    def close(self) -> None:
        self.file.close()


class _VolumePass:
    def __init__(self, source: Source, vol: int, version: int, described: Described,
                 names: dict[int, str], start: Timestamp | None, spool: Spool, report: SalvageReport) -> None:
        self.src = source
        self.vol = vol
        self.version = version
        self.described = described
        self.names = names
        self.spool = spool
        self.report = report
        known = [start.total_nsec()] if start is not None else []
        span = spool.span()
        if span is not None:
            known += list(span)
        self.low = min(known) - _DAY if known else None
        self.high = max(known) + _PLAUSIBLE_AFTER if known else None

    def decode(self, data: bytes) -> ResultSalvage | None:
        return salvage_result(data, self.version, self.described, self.report.paths)

    def proven(self, rs: ResultSalvage) -> bool:
        if not rs.whole:
            return False
        if self.low is None or self.high is None:
            return True
        return self.low <= rs.timestamp.total_nsec() <= self.high

    def run(self) -> None:
        for got in frames(self.src, LABEL_SIZE[self.version], min_len=8, aligned=True, stray_below=4,
                          decode=self.decode, proven=self.proven, undecodable="result.decode",
                          strong=lambda rs: rs.values_out > 0):
            if isinstance(got, Gap):
                self.gap(got)
            else:
                self.record(got)

    def gap(self, gap: Gap) -> None:
        if gap.code == "frame.stray-bytes":
            detail = gap.detail
        elif gap.end >= self.src.size:
            detail = f"{gap.detail}; no whole record can be proven after it: the rest of the volume is lost"
        else:
            detail = f"{gap.detail}; {gap.end - gap.start} bytes skipped to the next record proven by its own framing"
        self.report.add(Item(gap.code, "dropped", "SALVAGE-FRAME-2" if gap.end < self.src.size else "SALVAGE-FRAME-1",
                             self.src.name, detail, gap.start, gap.end))

    def record(self, frame: Frame) -> None:
        if frame.repaired is not None:
            self.report.add(Item(frame.repaired[0], "repaired", "SALVAGE-FRAME-5", self.src.name, frame.repaired[1],
                                 frame.offset, frame.offset + len(frame.data)))
        rs: ResultSalvage | None = frame.decoded
        self.report.records_in += 1
        start, end = frame.offset, frame.offset + len(frame.data)
        if rs is None or rs.fatal is not None:
            code, detail = ("result.decode", "too short for a result header") if rs is None else rs.fatal  # type: ignore[misc]
            values = rs.values_in if rs is not None else 0
            self.report.values_in += values
            stamp = rs.timestamp if rs is not None and code != "time.fraction" else None
            clause = "SALVAGE-FRAME-3" if rs is None else "SALVAGE-RESULT-1"
            self.report.add(Item(code, "dropped", clause, self.src.name, detail, start, end,
                                 stamp, stamp, records=1, values=values), fold=True)
            return
        self.report.values_in += rs.values_in
        for pmid, count, code, detail in rs.dropped:
            metric = (self.names.get(pmid) or str(PmID(pmid))) if pmid is not None else None
            self.report.add(Item(code, "dropped", _clause(code), self.src.name, detail, start, end,
                                 rs.timestamp, rs.timestamp, values=count, metric=metric), fold=True)
        for code, detail in rs.repaired:
            self.report.add(Item(code, "repaired", "SALVAGE-RESULT-3", self.src.name, detail, start, end,
                                 rs.timestamp, rs.timestamp), fold=True)
        assert rs.record is not None
        self.spool.add(rs.timestamp, rs.record, self.vol, frame.offset, rs.values_out)


def _clause(code: str) -> str:
    if code.startswith("desc.") or code in ("value.undescribed", "value.nosupport"):
        return "SALVAGE-META-1"
    return "SALVAGE-RESULT-4" if code == "value.singular-inst" else "SALVAGE-RESULT-2"


def salvage_volume(source: Source, vol: int, version: int, described: Described, names: dict[int, str],
                   start: Timestamp | None, spool: Spool, report: SalvageReport) -> None:
    """Salvage one data volume's results into ``spool``."""
    if source.size <= LABEL_SIZE[version]:
        return
    _VolumePass(source, vol, version, described, names, start, spool, report).run()
