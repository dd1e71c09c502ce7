"""The replay's fast paths, registered with their references (pcpconform/fastpath.py).

* ``interp.schedule``: the vectorised schedule (vectorised.py) against one ``fetch`` after
  another (``Replay.schedule_reference``);
* ``interp.window``: a forward schedule replayed over a window of records (window.py)
  against the whole replay;
* ``interp.wanted``: only the wanted value sets decoded (``WantedDecoder``) against
  ``decode_result`` and a filter;
* ``interp.records``: the pass in windows, runs of one layout decoded by numpy
  (``wanted_windows``), against the pass a record at a time (``wanted_records``).
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

from pcpconform.errors import PcpConformError
from pcpconform.fastpath import Declined, PathStats, register
from pcpconform.format.pmtypes import Timestamp
from pcpconform.io.archive import Archive
from pcpconform.io.bulk import LayoutReason, decode_result
from pcpconform.io.reader import RawRecord
from pcpconform.oracles.interp import vectorised
from pcpconform.oracles.interp.model import NoValue, Sample, ScheduleReason, gc_paused
from pcpconform.oracles.interp.replay import Replay
from pcpconform.oracles.interp.wanted import Record, WantedDecoder, WantedReason, wanted_records
from pcpconform.oracles.interp.window import WindowReason, WindowReplay

__all__ = ["SCHEDULE", "WINDOW", "WANTED", "RECORDS", "OneAtATime", "exact_samples"]


def _exact(v: Any) -> Any:
    """A value's identity: its type and, for floats, its bits."""
    if isinstance(v, float):
        return (type(v).__name__, struct.pack("<d", v), getattr(v, "bits", None))
    if isinstance(v, NoValue):
        return ("NoValue", v.reason)
    return (type(v).__name__, v)


def exact_samples(samples: list[Sample]) -> list[Any]:
    """Samples as (time, eol, [(pmid, [(inst, exact value)])]) for comparison."""
    return [(s.time, s.eol, [(p, [(i, _exact(v)) for i, v in insts.items()])
                             for p, insts in s.values.items()]) for s in samples]


def _same_samples(a: list[Sample], b: list[Sample]) -> bool:
    return exact_samples(a) == exact_samples(b)


def _schedule_reference(base: Path, pmids: list[int], rules: str, start: Timestamp, step: int,
                        count: int) -> list[Sample]:
    return Replay(Archive(base), pmids, rules=rules).schedule_reference(start, step, count)


def _schedule_fast(base: Path, pmids: list[int], rules: str, start: Timestamp, step: int,
                   count: int) -> list[Sample]:
    replay = Replay(Archive(base), pmids, rules=rules)
    replay.direction = 1 if step > 0 else -1
    with gc_paused():
        return vectorised.schedule(replay, replay.fetch_state(), start, step, count).samples


def _window_reference(base: Path, pmids: list[int], rules: str, start: Timestamp, step: int,
                      count: int) -> list[Sample]:
    return Replay(Archive(base), pmids, rules=rules).schedule(start, step, count)


def _window_fast(base: Path, pmids: list[int], rules: str, start: Timestamp, step: int,
                 count: int) -> list[Sample]:
    replay = WindowReplay(Archive(base), pmids, rules=rules)
    return [s for piece in replay.schedule_chunks(start, step, count) for s in piece]


def _wanted_reference(record: RawRecord, version: int, types: dict[int, int],
                      wanted: frozenset[int]) -> Record:
    res = decode_result(record, version, types, PathStats())
    return (res.timestamp, not res.vsets, [vs for vs in res.vsets if vs.pmid in wanted and vs.numval > 0])


def _wanted_fast(record: RawRecord, version: int, types: dict[int, int],
                 wanted: frozenset[int]) -> Record:
    try:
        return WantedDecoder(version, types, wanted)._selective(record)
    except (struct.error, ValueError):
        raise Declined(WantedReason.DAMAGED) from None


class OneAtATime(Replay):
    """The pass a record at a time, by the WantedDecoder."""

    def _read(self, archive: Archive) -> None:
        with gc_paused():
            self._collect(archive, wanted_records(archive, self.descs, self.seeked_from, self.decoder))


def _kept(cls: type[Replay], base: Path, pmids: list[int]) -> Any:
    """What a replay's pass keeps: every series (times, values bit for bit, type for type),
    the marks, the end, the first record and the singular quirks; or the error."""
    try:
        r = cls(Archive(base), pmids)
    except PcpConformError as exc:
        return ("error", type(exc).__name__, str(exc))
    return ([(key, list(s.times), type(s.values).__name__, [_exact(v) for v in s.values])
             for key, s in r.series.items()], r.marks, r.end, r.last, r.first_record,
            r.singular_quirks)


SCHEDULE = register("interp.schedule", reference=_schedule_reference, fast=_schedule_fast,
                    reasons=ScheduleReason, inputs="interp-schedule", same=_same_samples)
WINDOW = register("interp.window", reference=_window_reference, fast=_window_fast,
                  reasons=WindowReason, inputs="interp-schedule", same=_same_samples)
WANTED = register("interp.wanted", reference=_wanted_reference, fast=_wanted_fast,
                  reasons=WantedReason, inputs="wanted-record")
RECORDS = register("interp.records", reference=lambda base, pmids: _kept(OneAtATime, base, pmids),
                   fast=lambda base, pmids: _kept(Replay, base, pmids), reasons=LayoutReason,
                   inputs="interp-archive")
