"""An archive set (a directory, or a comma-separated list) as one source, as libpcp's
multi-archive contexts see it: ``ArchiveSet`` reads as an ``Archive`` whose records are
the members' records in replay order, with the seams libpcp makes between them.

Opening a set (spec/sets.md): the namelist (``setform.namelist``), each member opened in
its order and put in time order by label start; two members with one start time refuse the
set (PM_ERR_LOGOVERLAP), as do two hostnames (PM_ERR_LOGHOST) and descriptors that disagree
(PM_ERR_LOGCHANGE*); the metadata is the members' merged (``setmeta``). From PCP 7.1.4 a
member that cannot be opened is left out (SET-MEMBER-2).

Replay order depends on the direction a client reads in (SET-REPLAY-1..3): forwards, after
each member but the last comes a virtual mark 1 ms after that member's last record, and
the next member's records earlier than that mark are never delivered; backwards, the mark
lies 1 ms before the next member's label start and the earlier member's records after it
are never delivered. ``direction`` chooses the view; ``for_direction`` gives the other one
over the same opened members. Records are streamed a member at a time, so memory does not
grow with the number of members.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from pcpconform.errors import FormatError, Location, UsageError
from pcpconform.fastpath import PathStats
from pcpconform.format.pmtypes import PmID, Timestamp
from pcpconform.io.archive import Archive, Desc, _Metadata
from pcpconform.io.archiveend import last_record_time
from pcpconform.io.bulk import decode_result
from pcpconform.io.decoded import DecodedResult, result_head
from pcpconform.io.files import ArchiveFiles
from pcpconform.io.reader import RawRecord
from pcpconform.io.setform import SET_PROFILES, SetError, namelist, open_member
from pcpconform.io.setmeta import check_descs, merge_metadata
from pcpconform.io.setrecords import backward_mark_time, forward_mark_time, mark_record, v2_result_as_v3

__all__ = ["ArchiveSet", "Member", "Seam", "SetError", "libpcp_error", "open_source", "VOL_STRIDE"]

#: a member's volume v is volume ``position * VOL_STRIDE + v`` of the set
VOL_STRIDE = 1 << 32
#: libpcp's end-of-log slop in seconds (INTERP-EOL-1)
EDGE_SECONDS = 0.001


#: the PMAPI error libpcp gives where the kit finds a member it cannot open (SET-MEMBER-1)
_OPEN_ERRORS = {"file.empty": "PM_ERR_NODATA", "meta.no-desc": "PM_ERR_NODATA",
                "label.truncated": "PM_ERR_NODATA", "meta.type": "PM_ERR_RECTYPE"}


def libpcp_error(exc: Exception) -> str:
    """The PMAPI error libpcp reports for what the kit raised opening or reading a set."""
    if isinstance(exc, SetError):
        return exc.libpcp
    if isinstance(exc, FormatError):
        if exc.code in _OPEN_ERRORS:
            return _OPEN_ERRORS[exc.code]
        return "PM_ERR_LABEL" if exc.code.startswith("label.") else "PM_ERR_LOGREC"
    return "PM_ERR_LOGFILE"            # a missing .meta or data volume


@dataclass
class _Shared:
    """What the views of one replay of a set share (``ArchiveSet.member_view``)."""

    eol_member: int = 0
    dropped: list[tuple[str, FormatError]] = field(default_factory=list)
    #: what the fast paths reading the set's records did (``Archive.stats``)
    stats: PathStats = field(default_factory=PathStats)


@dataclass
class Member:
    """One archive of a set: its name in the namelist, where it stands in time order."""

    name: str
    archive: Archive
    loaded: int                 # position in the namelist (load order)
    position: int = 0           # position in time order
    _end: Timestamp | None = field(default=None, repr=False)
    _ended: bool = field(default=False, repr=False)

    @property
    def start(self) -> Timestamp:
        return self.archive.start

    def end(self) -> Timestamp | None:
        """The time of the member's last record, as pmGetArchiveEnd finds it (None: no record)."""
        if not self._ended:
            self._end = last_record_time(self.archive)
            self._ended = True
        return self._end


@dataclass(frozen=True)
class Seam:
    """Where member ``before`` hands over to the next: the virtual marks and what a replay
    never delivers there (record indices of the member, by volume)."""

    before: int
    end: Timestamp | None           # the earlier member's last record
    start: Timestamp                # the later member's label start
    forward_mark: Timestamp | None  # None when the earlier member has no record
    forward_mark_nsec: int          # as libpcp reports it (SET-REPLAY-1)
    backward_mark: Timestamp
    overlap: bool                   # end > start: libpcp's switch fails (SET-REPLAY-5)


def open_source(name: str | os.PathLike[str], *, profile: str = "pcp-6.3", direction: int = 1) -> Archive:
    """An ``ArchiveSet`` when ``name`` is a set source (a directory or a comma-separated
    list), else an ``Archive``."""
    text = os.fspath(name)
    if "," in text or os.path.isdir(text):
        return ArchiveSet(text, profile=profile, direction=direction)
    return Archive(name)


class ArchiveSet(Archive):
    """A directory or comma-separated list of archives, read as libpcp reads the set."""

    def __init__(self, source: str | os.PathLike[str], *, profile: str = "pcp-6.3",
                 direction: int = 1, _members: list[Member] | None = None,
                 _meta: _Metadata | None = None, _skipped: list[tuple[str, FormatError | UsageError]] | None = None,
                 _only: int | None = None, _shared: _Shared | None = None) -> None:
        if profile not in SET_PROFILES:
            raise ValueError(f"profile must be one of {', '.join(SET_PROFILES)}")
        self.source = os.fspath(source)
        self.profile = profile
        self.direction = 1 if direction >= 0 else -1
        if _members is None:
            names = namelist(self.source, profile)
            if not names:
                raise UsageError(f"{self.source}: no archive in the directory (no *.meta file)")
            #: libpcp's multi-archive mode: more than one name (SET-FORM-3)
            self.multi = len(names) > 1
            self.skipped: list[tuple[str, FormatError | UsageError]] = []
            self.members = self._open(names)
            if self._lost_before == len(names) - 1:
                # the last name failed: libpcp reopens every member, in time order
                kept = list(self.members)
            else:
                kept = [m for m in sorted(self.members, key=lambda m: m.loaded) if m.loaded > self._lost_before]
            self._meta = merge_metadata([m.archive for m in kept], [m.archive for m in self.members], profile)
        else:
            self.multi = len(_members) > 1
            self.members = _members
            self.skipped = list(_skipped or [])
            self._meta = _meta
        #: what the views of one replay share (``member_view``): the end-of-log position, and
        #: the members libpcp 7 stops reading at a damaged record (name, the damage), as read
        self._shared = _shared if _shared is not None else _Shared()
        self.dropped = self._shared.dropped
        self.stats = self._shared.stats
        #: a member view's member: its records alone, between the virtual marks around it
        self._only = _only
        first = self.members[0].archive
        self.label = first.label
        self.version = max(m.archive.version for m in self.members)
        self.files = ArchiveFiles(base=Path(self.source), meta=first.files.meta,
                                  volumes={m.position * VOL_STRIDE + v: p for m in self.members
                                           for v, p in m.archive.files.volumes.items()})

    # -- opening -------------------------------------------------------------------------
    _lost_before = -1

    def _open(self, names: list[str]) -> list[Member]:
        """libpcp's initarchive: each name opened in turn, its hostname, descriptors and start
        checked against the members opened before it, in that order."""
        by_time: list[Member] = []
        descs: dict[int, tuple[Desc, Archive]] = {}
        for n, name in enumerate(names):
            try:
                archive = open_member(name)
            except (FormatError, UsageError) as exc:
                if self.profile == "pcp-7" and self.multi:
                    # PCP 7.1.4: skipped, and the metadata loaded before it is lost (SET-MEMBER-2)
                    self.skipped.append((name, exc))
                    self._lost_before = n
                    descs.clear()
                    continue
                raise
            if by_time and archive.hostname != by_time[0].archive.hostname:
                raise SetError(f"hostname {archive.hostname!r} differs from "
                               f"{by_time[0].archive.hostname!r} of {by_time[0].name}: libpcp refuses "
                               "the set (PM_ERR_LOGHOST)", _label_location(archive, "label.hostname"),
                               "set.host", "PM_ERR_LOGHOST")
            check_descs(descs, archive)
            at = len(by_time)
            duplicate = False
            for i, other in enumerate(by_time):
                if archive.start < other.start:
                    at = i
                    break
                if archive.start == other.start:
                    if name == other.name:
                        duplicate = True
                        break
                    raise SetError(f"starts at the same time as {other.name} ({archive.start}): "
                                   "libpcp refuses the set (PM_ERR_LOGOVERLAP)",
                                   _label_location(archive, "label.start"), "set.same-start", "PM_ERR_LOGOVERLAP")
            if not duplicate:
                by_time.insert(at, Member(name, archive, n))
        if not by_time:
            reasons = "; ".join(f"{name}: {exc}" for name, exc in self.skipped)
            raise UsageError(f"{self.source}: no member can be opened ({reasons})")
        for i, m in enumerate(by_time):
            m.position = i
        return by_time

    def member_view(self, k: int) -> ArchiveSet:
        """Member ``k`` alone, as a forward replay of the whole set reads it: the virtual mark
        before it, its records (those a replay delivers), the virtual mark after it. A forward
        replay of the set is the replays of its members one after another (every bound
        across a seam is a mark), each continuing from the fetch state the one before left;
        the views share the end-of-log position and what libpcp 7 dropped."""
        if self.direction < 0:
            raise ValueError("member views are for forward replays")
        return ArchiveSet(self.source, profile=self.profile, direction=1, _members=self.members,
                          _meta=self._meta, _skipped=self.skipped, _only=k, _shared=self._shared)

    def for_direction(self, direction: int) -> ArchiveSet:
        """The same opened set, read in the other direction's replay order."""
        if (1 if direction >= 0 else -1) == self.direction:
            return self
        return ArchiveSet(self.source, profile=self.profile, direction=direction, _members=self.members,
                          _meta=self._meta, _skipped=self.skipped)

    @property
    def label_version(self) -> int:
        """The version of the label the set reports: its first member's (records may be read
        as version 3, ``version``, in a set that mixes versions)."""
        return self.members[0].archive.version

    # -- metadata ------------------------------------------------------------------------
    @property
    def metadata(self) -> _Metadata:
        assert self._meta is not None
        return self._meta

    def meta_records(self) -> Iterator[Any]:
        for m in self.members:
            yield from m.archive.meta_records()

    # -- seams ---------------------------------------------------------------------------
    def seams(self) -> list[Seam]:
        out = []
        for a, b in zip(self.members, self.members[1:]):
            end = a.end()
            mark, nsec = forward_mark_time(end) if end is not None else (None, 0)
            out.append(Seam(a.position, end, b.start, mark, nsec, backward_mark_time(b.start),
                            end is not None and b.start < end))
        return out

    def end(self) -> Timestamp | None:
        """pmGetArchiveEnd of the set: the last member's last record."""
        return self.members[-1].end()

    # -- end of log ----------------------------------------------------------------------
    def end_of_log(self, times: list[float], prev: float | None, end: float,
                   rel: Callable[[Timestamp], float]) -> list[bool]:
        """End of log for consecutive fetches at ``times`` (seconds from the set's start, as
        ``rel`` computes them) after one at ``prev`` (SET-EOL-1): before the start, as for an
        archive; after ``end`` only while libpcp reads the last member. pmSetMode puts it in
        the member a fetch at the first time is positioned in; each fetch that is not end of
        log leaves it in the member of the first record (or virtual mark) after the fetch
        time, reading forwards."""
        last = len(self.members) - 1
        spans = self._spans(rel)
        if self._only is not None or spans[-1][0] != float("-inf"):
            end = spans[-1][0]      # the set's end, whatever part of it this view holds
        state = self._shared
        out = []
        for t in times:
            if prev is None:
                state.eol_member = self.positioned_member(t, rel)
            gone = t < -EDGE_SECONDS or (t - end > EDGE_SECONDS and state.eol_member == last)
            if not gone and self.direction > 0:
                state.eol_member = next((k for k, (stop, mark) in enumerate(spans)
                                         if t < stop or (mark is not None and t < mark)), last)
            out.append(gone)
            prev = t
        return out

    def _spans(self, rel: Callable[[Timestamp], float]) -> list[tuple[float, float | None]]:
        """Per member, its last record's time and its virtual mark's, from the set's start."""
        out: list[tuple[float, float | None]] = []
        for k, m in enumerate(self.members):
            end = m.end()
            stop = rel(end) if end is not None else float("-inf")
            mark = rel(forward_mark_time(end)[0]) if end is not None and k + 1 < len(self.members) else None
            out.append((stop, mark))
        return out

    def positioned_member(self, t: float, rel: Callable[[Timestamp], float]) -> int:
        """The member pmSetMode (__pmLogSetTime) positions a replay from ``t`` in: the first
        member starting at or after ``t``, one back reading forwards; the last when none
        does. Its temporal index alone places the first fetch (INTERP-DEV-2)."""
        k = next((i for i, m in enumerate(self.members) if rel(m.start) - t >= 0), len(self.members))
        if self.direction > 0:
            return max(k - 1, 0)
        return min(k, len(self.members) - 1)

    # -- records -------------------------------------------------------------------------
    def volume_records(self) -> Iterator[tuple[int, RawRecord]]:
        """Every record of the set in this direction's replay order (virtual marks included),
        each with its set volume number (``VOL_STRIDE`` per member), as the replay reads
        them (a virtual mark that shares its time with a record moved by one tick)."""
        yield from self._records(shift=True)

    def _records(self, *, shift: bool) -> Iterator[tuple[int, RawRecord]]:
        if self.direction > 0:
            yield from self._forward(shift)
        else:
            yield from self._backward(shift)

    def _member_records(self, m: Member) -> Iterator[tuple[int, RawRecord, Timestamp]]:
        """The member's records with set volume numbers and times. Under ``pcp-7`` (a set
        of more than one) a record libpcp cannot read ends the member there (SET-MEMBER-3):
        the damage is noted in ``dropped`` and the member's later records are never read."""
        version = m.archive.version
        convert = version < self.version
        base = m.position * VOL_STRIDE
        checked = self.profile == "pcp-7" and self.multi
        types = {pmid: d.type for pmid, d in self.metadata.descs.items()} if checked else {}
        records = m.archive.volume_records()

        def stamp(data: bytes) -> Timestamp:
            return result_head(data, version)[0] if len(data) >= 20 else Timestamp(0, 0)

        if not checked and not convert:          # the common case, without the per-record guards
            for vol, record in records:
                yield base + vol, record, stamp(record.data)
            return
        while True:
            try:
                vol, record = next(records)
                if checked:
                    decode_result(record, version, types, self.stats)
            except StopIteration:
                return
            except FormatError as exc:
                if not checked:
                    raise
                self.dropped.append((m.name, exc))
                return
            yield base + vol, v2_result_as_v3(record) if convert else record, stamp(record.data)

    def open_loads(self) -> list[int]:
        """The members (time-order positions) in the order a context loads their metadata
        when it opens the set: namelist order, then, in PCP 6.0, the first in time again
        (SET-META-5). PCP 6.0 loads a member once more on each later switch to it."""
        loads = [m.position for m in sorted(self.members, key=lambda m: m.loaded)]
        return loads + [0] if self.profile == "pcp-6.0" else loads

    def result_members(self) -> Iterator[int]:
        """For each record ``results`` yields (forwards), the member libpcp is reading when
        it returns it: a virtual mark's is the member before the seam (the switch comes
        with the next read)."""
        if self.direction < 0:
            raise ValueError("the members of a forward read")
        current = self._only or 0
        for gvol, record in self._records(shift=False):
            if record.index >= 0:
                current = gvol // VOL_STRIDE
            yield current

    def records_as_read(self) -> Iterator[tuple[int, RawRecord]]:
        """Every record a forward INTERP context reads, in order: each member's records,
        those a replay never delivers (SET-REPLAY-2) included, and each virtual mark at its
        own time. It is libpcp's bounds, not its reads, that leave those records out."""
        if self.direction < 0 or self._only is not None:
            raise ValueError("the records a whole set's forward replay reads")
        yield from self._forward(shift=False, hidden=True)

    def _forward(self, shift: bool, hidden: bool = False) -> Iterator[tuple[int, RawRecord]]:
        if self._only is not None:
            yield from self._forward_member(self._only, shift)
            return
        previous: Member | None = None
        last: Timestamp | None = None
        for m in self.members:
            floor: Timestamp | None = None
            damaged = previous is not None and self._damaged(previous)
            if previous is not None and last is not None and not damaged:
                floor = forward_mark_time(last)[0]
                yield from self._mark_before(m, previous, last, shift)
            if not damaged:
                last = None
            for gvol, record, stamp in self._member_records(m):
                last = stamp
                if floor is not None and stamp < floor and not hidden:
                    continue                # never delivered: earlier than the mark
                yield gvol, record
            previous = m

    def _forward_member(self, k: int, shift: bool) -> Iterator[tuple[int, RawRecord]]:
        """``member_view(k)``'s records: as ``_forward`` yields them around member k, the
        ends of the members around it taken from pmGetArchiveEnd (``Member.end``)."""
        m = self.members[k]
        floor: Timestamp | None = None
        if k and not self._damaged(self.members[k - 1]):
            previous = self.members[k - 1]
            last = previous.end()
            if last is not None:
                floor = forward_mark_time(last)[0]
                yield from self._mark_before(m, previous, last, shift)
        last = None
        for gvol, record, stamp in self._member_records(m):
            last = stamp
            if floor is None or not stamp < floor:
                yield gvol, record
        if k + 1 < len(self.members) and last is not None and not self._damaged(m):
            yield from self._mark_before(self.members[k + 1], m, last, shift)

    def seam_marks(self) -> list[Timestamp | None]:
        """Per seam, the time of the virtual mark a forward replay reads there (a tick
        before a record at the mark's own time: SET-REPLAY-2), None where there is none."""
        out: list[Timestamp | None] = []
        for previous, m in zip(self.members, self.members[1:]):
            last = previous.end()
            if last is None or self._damaged(previous):
                out.append(None)
                continue
            floor = forward_mark_time(last)[0]
            tied = self._first_time(m) == floor
            out.append(Timestamp.from_nsec(floor.total_nsec() - self._tick) if tied else floor)
        return out

    def refuse_damage(self) -> None:
        """UsageError when libpcp 7 would drop a damaged member while replaying forwards in
        PM_MODE_INTERP (SET-MEMBER-3): its replay then leaves the set's order (values of a
        later member, end of log for the rest, times measured from another start), which is
        not modelled."""
        if self.profile != "pcp-7" or not self.multi or self.direction < 0:
            return
        for m in self.members:
            for _ in self._member_records(m):
                pass
            hit = next(((name, exc) for name, exc in self.dropped if name == m.name), None)
            if hit is not None:
                name, exc = hit
                raise UsageError(f"{exc.location}: {name} is damaged ({exc.message}); a replay over a member "
                                 "libpcp 7 drops while reading is not modelled")

    def refuse_retyped(self) -> None:
        """UsageError when a member records a metric as another type than the set's
        descriptor (one whose metadata libpcp 7 lost, SET-MEMBER-2): a replay in
        PM_MODE_INTERP then reads the member's value bytes as the set's type (SET-META-6),
        which is not modelled."""
        for m in self.members:
            for pmid, d in m.archive.metadata.descs.items():
                described = self.metadata.descs.get(pmid)
                if described is not None and described.type != d.type:
                    raise UsageError(f"{m.name}: records {PmID(pmid)} as type {d.type}, the set describes it as "
                                     f"type {described.type}; a replay of such a member is not modelled")

    def _damaged(self, m: Member) -> bool:
        return any(name == m.name for name, _ in self.dropped)

    def _mark_before(self, m: Member, previous: Member, last: Timestamp, shift: bool
                     ) -> Iterator[tuple[int, RawRecord]]:
        """The virtual mark after ``previous`` (whose last record is at ``last``), before
        ``m``; then SetError when ``m`` starts before ``last`` (libpcp delivers the mark, then
        the switch fails: SET-REPLAY-5)."""
        floor = forward_mark_time(last)[0]
        # a record at the mark's own time bounds fetches after it (read after the mark) but
        # not before (a search for a next bound stops at the mark): the mark goes a tick
        # before it (SET-REPLAY-2)
        tied = shift and self._first_time(m) == floor
        at = Timestamp.from_nsec(floor.total_nsec() - self._tick) if tied else floor
        yield (m.position * VOL_STRIDE + min(m.archive.files.volumes),
               mark_record(at, self.version, f"<mark after {previous.name}>", -1))
        if m.start < last:
            raise _overlap(m, previous, last)

    def refuse_overlaps(self) -> None:
        """SetError (``set.overlap``) at the first seam where a member starts before the one
        before it ends: what a replay raises when it reaches the seam, raised at once."""
        for previous, m in zip(self.members, self.members[1:]):
            last = previous.end()
            if last is not None and m.start < last:
                raise _overlap(m, previous, last)

    def _backward(self, shift: bool) -> Iterator[tuple[int, RawRecord]]:
        if self.profile == "pcp-7" and self.multi:
            # which members libpcp 7 drops depends on where its backward reads meet the
            # damage: not modelled, so declined before anything is replayed
            for m in self.members:
                for _ in self._member_records(m):
                    pass
            if self.dropped:
                name, exc = self.dropped[0]
                raise UsageError(f"{exc.location}: {name} is damaged ({exc.message}); a backward replay "
                                 "over a member libpcp 7 drops while reading is not modelled")
        for i, m in enumerate(self.members):
            ceiling = backward_mark_time(self.members[i + 1].start) if i + 1 < len(self.members) else None
            if ceiling is not None:
                end = m.end()
                if end is not None and self.members[i + 1].start < end:
                    raise _overlap(self.members[i + 1], m, end)
            tie = False
            for gvol, record, stamp in self._member_records(m):
                if ceiling is not None and stamp > ceiling:
                    continue                # never delivered reading backwards
                tie = stamp == ceiling
                yield gvol, record
            if ceiling is not None:
                # a record at the mark's time: the mark bounds fetches after it, the record
                # those before it (SET-REPLAY-3)
                at = Timestamp.from_nsec(ceiling.total_nsec() + self._tick) if shift and tie else ceiling
                yield (m.position + 1) * VOL_STRIDE - 1, mark_record(
                    at, self.version, f"<mark before {self.members[i + 1].name}>", 1 << 62)

    @property
    def _tick(self) -> int:
        """The smallest step of the set's record times: 1 us in version 2, 1 ns in 3."""
        return 1000 if self.version == 2 else 1

    def _first_time(self, m: Member) -> Timestamp | None:
        """The time of the member's first record (None if it has none it can read)."""
        try:
            for _, record in m.archive.volume_records():
                return result_head(record.data, m.archive.version)[0] if len(record.data) >= 20 else None
        except FormatError:
            pass
        return None

    def results(self) -> Iterator[DecodedResult]:
        """The set's results as a client reading it in this direction gets them
        (pmFetchArchive), virtual marks at their own times."""
        types = {pmid: d.type for pmid, d in self.metadata.descs.items()}
        for _, record in self._records(shift=False):
            yield decode_result(record, self.version, types, self.stats)

    def results_from(self, vol: int, offset: int) -> Iterator[DecodedResult]:
        types = {pmid: d.type for pmid, d in self.metadata.descs.items()}
        for v, record in self.volume_records():
            if v < vol or (v == vol and record.offset < offset):
                continue
            yield decode_result(record, self.version, types, self.stats)

    def index_entries(self) -> Iterator[Any]:
        """Every member's index entries with set volume numbers, those of records a forward
        replay never delivers left out (a member view: its member's alone)."""
        first = self._only or 0
        before = self.members[first - 1].end() if first else None
        floor = forward_mark_time(before)[0] if before is not None else None
        for m in self.members[first:] if self._only is None else [self.members[first]]:
            for e in m.archive.index_entries():
                if self.direction > 0 and floor is not None and e.timestamp < floor:
                    continue
                yield SimpleNamespace(timestamp=e.timestamp, vol=m.position * VOL_STRIDE + e.vol,
                                      off_meta=e.off_meta, off_data=e.off_data, member=m.position)
            end = m.end()
            floor = forward_mark_time(end)[0] if end is not None else None


def _overlap(m: Member, previous: Member, last: Timestamp) -> SetError:
    return SetError(f"starts at {m.start}, before {previous.name} ends ({last}): libpcp's replay cannot cross "
                    "this seam (PM_ERR_LOGOVERLAP) and is not modelled", _label_location(m.archive, "label.start"),
                    "set.overlap", "PM_ERR_LOGOVERLAP")


def _label_location(archive: Archive, field: str) -> Location:
    meta = archive.files.meta
    return Location(str(meta) if meta is not None else str(archive.files.base), 0, 0, field)
