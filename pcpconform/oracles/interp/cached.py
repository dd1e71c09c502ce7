"""libpcp's bound cache (INTERP-DEV-5, ``cache.Context``) driven by a ``Replay``: the
records rebuilt from the replay's pass, a pmSetMode per schedule, and the result as the
replay's samples."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from pcpconform.format.pmtypes import PM_IN_NULL, Timestamp
from pcpconform.io.archive import Archive
from pcpconform.io.archiveset import ArchiveSet
from pcpconform.io.reader import RawRecord
from pcpconform.oracles.interp.builtin import BUILTIN_REASON
from pcpconform.oracles.interp.cache import Archived, Context, Rec, calipers
from pcpconform.oracles.interp.model import NoValue, Sample, timestamp_sub
from pcpconform.oracles.interp.setcache import SetArchived, SetContext
from pcpconform.oracles.interp.wanted import WantedDecoder

if TYPE_CHECKING:
    from pcpconform.oracles.interp.replay import Replay

__all__ = ["CachedFetches", "RECORDS_OF_ONE_TIME", "archived_from_series", "read_archived"]

#: the records are rebuilt from the replay's series unless two records have one time
RECORDS_OF_ONE_TIME = "records of one time decoded again"


class CachedFetches:
    """The libpcp context of one replay's fetches."""

    def __init__(self, replay: Replay) -> None:
        self.replay = replay
        self.fetched = [p for p in replay.descs if p not in replay.builtin]
        archived = archived_from_series(replay.archive, replay.record_times, replay.record_marks,
                                        replay.series)
        if archived is None:            # decoded again, counted
            replay.stats.record_fallbacks[RECORDS_OF_ONE_TIME] += 1
            types = {p: d.type for p, d in replay.archive.metadata.descs.items()}
            archived = read_archived(replay.archive, WantedDecoder(replay.archive.version, types, self.fetched))
        self.is_set = isinstance(replay.archive, ArchiveSet)
        context: type[Context] = Context
        if isinstance(replay.archive, ArchiveSet):     # an archive set's context (SET-REPLAY-8)
            if replay.archive.direction > 0:
                # libpcp reads the records a forward replay never delivers (SET-REPLAY-9)
                types = {p: d.type for p, d in replay.archive.metadata.descs.items()}
                archived = read_archived(replay.archive, WantedDecoder(replay.archive.version, types, self.fetched),
                                         list(replay.archive.records_as_read()))
            archived, context = SetArchived(archived, replay, replay.archive), SetContext
        lifetimes = {p: calipers([(replay.rel(r.timestamp), r.instances)
                                  for r in replay.archive.indom_history(replay.descs[p].indom)],
                                 replay.instances[p])
                     for p in self.fetched if not replay.descs[p].indom.is_null}
        self.context = context(archived, {p: replay.descs[p] for p in self.fetched},
                               {p: replay.instances[p] for p in self.fetched}, lifetimes, replay.rules,
                               reposition_on_set_mode=replay.reposition_on_set_mode)
        self.mode_set = False           # a pmSetMode was made for the fetches under way
        self.rules = replay.rules_twin()    # the rules' reasons where both give no value

    def set_mode(self, start: Timestamp, interval_nsec: int) -> None:
        self.context.set_mode(start, interval_nsec)
        self.rules.set_mode(start, interval_nsec)
        self.mode_set = True

    def fetch(self, when: Timestamp) -> Sample:
        """One fetch of the context. A fetch at another time than the context's comes after
        a pmSetMode to it (with no interval). Where libpcp has no value and the rules have
        none either, the rules' reason is given."""
        replay, context = self.replay, self.context
        if not self.mode_set or context.origin != when.total_nsec():
            context.set_mode(when, replay.direction)
            context.delta = 0
            self.mode_set = True
        ruled = self.rules.fetch(when)
        # an archive set's end of log is its own (SET-EOL-1), as the rules' twin found it
        got = context.fetch(self.fetched, ruled.eol if self.is_set else None)
        if got is None:
            return Sample(when, eol=True)
        sample = Sample(when)
        for pmid in replay.descs:
            if pmid in replay.builtin:
                sample.values[pmid] = {PM_IN_NULL: NoValue(BUILTIN_REASON)}
                continue
            values = got[pmid]
            theirs = ruled.values.get(pmid, {})
            for inst, v in values.items():
                if isinstance(v, NoValue) and isinstance(theirs.get(inst), NoValue):
                    values[inst] = theirs[inst]
            sample.values[pmid] = {inst: values[inst] for inst in replay.instances[pmid] if inst in values}
        return sample


def read_archived(archive: Archive, decoder: WantedDecoder,
                  raws: Iterable[tuple[int, RawRecord]] | None = None) -> Archived:
    """Every record of ``archive`` in file order (or ``raws``) with the value sets
    ``decoder`` wants (decoded again: for archives whose records cannot be placed from a
    replay's series)."""
    start = archive.start
    records: list[Rec] = []
    for _, raw in archive.volume_records() if raws is None else raws:
        stamp, mark, vsets = decoder(raw)
        records.append((timestamp_sub(stamp, start), mark,
                        tuple((vs.pmid, tuple(vs.columns[0]), vs.columns[1]) for vs in vsets)))
    return Archived(records, start, records[-1][0] if records else 0.0, archive)


def archived_from_series(archive: Archive, times: Sequence[float], marks: Sequence[bool],
                         series: dict[tuple[int, int], Any]) -> Archived | None:
    """The records rebuilt from a replay's pass: every record's time and mark flag in file
    order and the series of the wanted (metric, instance)s. None when two records that are
    not marks have one time (an observation at that time could be in either)."""
    at: dict[float, int] = {}
    for k, (t, mark) in enumerate(zip(times, marks)):
        if not mark:
            if t in at:
                return None
            at[t] = k
    per: list[dict[int, tuple[list[int], list[Any]]]] = [{} for _ in times]
    for (pmid, inst), s in series.items():
        for t, value in zip(s.times, s.values):
            insts, values = per[at[t]].setdefault(pmid, ([], []))
            insts.append(inst)
            values.append(value)
    shared: dict[tuple[int, ...], tuple[int, ...]] = {}
    records: list[Rec] = []
    for t, mark, sets in zip(times, marks, per):
        records.append((t, mark, tuple((pmid, shared.setdefault(tuple(i), tuple(i)), tuple(v))
                                       for pmid, (i, v) in sets.items())))
    return Archived(records, archive.start, times[-1] if len(times) else 0.0, archive)
