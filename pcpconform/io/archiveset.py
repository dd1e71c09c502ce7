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
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from pcpconform.errors import FormatError, Location, UsageError
from pcpconform.format.pmtypes import Timestamp
from pcpconform.io.archive import Archive, Desc, _Metadata
from pcpconform.io.bulk import DecodedResult, decode_result, result_head
from pcpconform.io.files import ArchiveFiles
from pcpconform.io.reader import Component, RawRecord
from pcpconform.io.setform import SET_PROFILES, namelist
from pcpconform.io.setmeta import check_descs, merge_metadata
from pcpconform.io.setrecords import backward_mark_time, forward_mark_time, mark_record, v2_result_as_v3

__all__ = ["ArchiveSet", "Member", "Seam", "open_source", "VOL_STRIDE"]

#: a member's volume v is volume ``position * VOL_STRIDE + v`` of the set
VOL_STRIDE = 1 << 32


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


def last_record_time(archive: Archive) -> Timestamp | None:
    """The time of the last record of the last volume holding one (pmGetArchiveEnd)."""
    for vol in sorted(archive.files.volumes, reverse=True):
        last: Timestamp | None = None
        try:
            with Component(archive.files.volumes[vol]) as comp:
                for record in comp.records():
                    if len(record.data) >= 20:
                        last = result_head(record.data, comp.version)[0]
        except FormatError:
            pass                        # the last good record before the damage
        if last is not None:
            return last
    return None


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
                 _meta: _Metadata | None = None, _skipped: list[tuple[str, FormatError | UsageError]] | None = None
                 ) -> None:
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
            loaded = sorted(self.members, key=lambda m: m.loaded)
            kept = [m for m in loaded if m.loaded > self._lost_before]
            self._meta = merge_metadata([m.archive for m in kept], [m.archive for m in self.members], profile)
        else:
            self.multi = len(_members) > 1
            self.members = _members
            self.skipped = list(_skipped or [])
            self._meta = _meta
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
                raise FormatError(f"hostname {archive.hostname!r} differs from "
                                  f"{by_time[0].archive.hostname!r} of {by_time[0].name}: libpcp refuses "
                                  "the set (PM_ERR_LOGHOST)", _label_location(archive, "label.hostname"),
                                  "set.host")
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
                    raise FormatError(f"starts at the same time as {other.name} ({archive.start}): "
                                      "libpcp refuses the set (PM_ERR_LOGOVERLAP)",
                                      _label_location(archive, "label.start"), "set.same-start")
            if not duplicate:
                by_time.insert(at, Member(name, archive, n))
        if not by_time:
            reasons = "; ".join(f"{name}: {exc}" for name, exc in self.skipped)
            raise UsageError(f"{self.source}: no member can be opened ({reasons})")
        for i, m in enumerate(by_time):
            m.position = i
        return by_time

    def for_direction(self, direction: int) -> ArchiveSet:
        """The same opened set, read in the other direction's replay order."""
        if (1 if direction >= 0 else -1) == self.direction:
            return self
        return ArchiveSet(self.source, profile=self.profile, direction=direction, _members=self.members,
                          _meta=self._meta, _skipped=self.skipped)

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

    # -- records -------------------------------------------------------------------------
    def volume_records(self) -> Iterator[tuple[int, RawRecord]]:
        """Every record of the set in this direction's replay order (virtual marks included),
        each with its set volume number (``VOL_STRIDE`` per member)."""
        if self.direction > 0:
            yield from self._forward()
        else:
            yield from self._backward()

    def _member_records(self, m: Member) -> Iterator[tuple[int, RawRecord, Timestamp]]:
        version = m.archive.version
        convert = version < self.version
        base = m.position * VOL_STRIDE
        for vol, record in m.archive.volume_records():
            if len(record.data) < 20:
                stamp = Timestamp(0, 0)     # the decoder reports it
            else:
                stamp = result_head(record.data, version)[0]
            yield base + vol, v2_result_as_v3(record) if convert else record, stamp

    def _forward(self) -> Iterator[tuple[int, RawRecord]]:
        previous: Member | None = None
        last: Timestamp | None = None
        for m in self.members:
            floor: Timestamp | None = None
            if previous is not None and last is not None:
                if m.start < last:
                    raise FormatError(
                        f"starts at {m.start}, before {previous.name} ends ({last}): libpcp's replay "
                        "cannot cross this seam (PM_ERR_LOGOVERLAP) and is not modelled",
                        _label_location(m.archive, "label.start"), "set.overlap")
                floor, _ = forward_mark_time(last)
                first_vol = m.position * VOL_STRIDE + min(m.archive.files.volumes)
                yield first_vol, mark_record(floor, self.version, f"<mark after {previous.name}>", -1)
            last = None
            for gvol, record, stamp in self._member_records(m):
                last = stamp
                if floor is not None and stamp < floor:
                    continue                # never delivered: earlier than the mark
                yield gvol, record
            previous = m

    def _backward(self) -> Iterator[tuple[int, RawRecord]]:
        for i, m in enumerate(self.members):
            ceiling = backward_mark_time(self.members[i + 1].start) if i + 1 < len(self.members) else None
            if ceiling is not None:
                end = m.end()
                if end is not None and self.members[i + 1].start < end:
                    nxt = self.members[i + 1]
                    raise FormatError(
                        f"starts at {nxt.start}, before {m.name} ends ({end}): libpcp's replay "
                        "cannot cross this seam (PM_ERR_LOGOVERLAP) and is not modelled",
                        _label_location(nxt.archive, "label.start"), "set.overlap")
            for gvol, record, stamp in self._member_records(m):
                if ceiling is not None and stamp > ceiling:
                    continue                # never delivered reading backwards
                yield gvol, record
            if ceiling is not None:
                yield (m.position + 1) * VOL_STRIDE - 1, mark_record(
                    ceiling, self.version, f"<mark before {self.members[i + 1].name}>", 1 << 62)

    def results(self) -> Iterator[DecodedResult]:
        types = {pmid: d.type for pmid, d in self.metadata.descs.items()}
        for _, record in self.volume_records():
            yield decode_result(record, self.version, types)

    def results_from(self, vol: int, offset: int) -> Iterator[DecodedResult]:
        types = {pmid: d.type for pmid, d in self.metadata.descs.items()}
        for v, record in self.volume_records():
            if v < vol or (v == vol and record.offset < offset):
                continue
            yield decode_result(record, self.version, types)

    def index_entries(self) -> Iterator[Any]:
        """Every member's index entries with set volume numbers, those of records a forward
        replay never delivers left out."""
        floor: Timestamp | None = None
        for m in self.members:
            for e in m.archive.index_entries():
                if self.direction > 0 and floor is not None and e.timestamp < floor:
                    continue
                yield SimpleNamespace(timestamp=e.timestamp, vol=m.position * VOL_STRIDE + e.vol,
                                      off_meta=e.off_meta, off_data=e.off_data)
            end = m.end()
            floor = forward_mark_time(end)[0] if end is not None else None


def open_member(name: str) -> Archive:
    """A member as libpcp's ``__pmLogOpen`` opens it: FormatError (or UsageError for
    missing files) on what makes libpcp refuse it (SET-MEMBER-1)."""
    archive = Archive(name)
    meta = archive.files.meta
    assert meta is not None
    labels = []
    for path in [meta, archive.files.volumes[min(archive.files.volumes)],
                 *([archive.files.index] if archive.files.index is not None else [])]:
        with Component(path) as comp:
            labels.append((path, comp.version, comp.label))
            if path == archive.files.index:
                if next(comp.index_entries(), None) is None:
                    raise FormatError("the .index holds no entry (PM_ERR_NODATA)", Location(path.name, 1),
                                      "file.empty")
            elif next(comp.records("meta" if path == meta else "volume"), None) is None:
                raise FormatError("the file holds only its label (PM_ERR_NODATA)", Location(path.name, 1),
                                  "file.empty")
    _, version, label = labels[0]
    for path, v, other in labels[1:]:
        if v != version or other.pid != label.pid or other.hostname != label.hostname:
            raise FormatError("version, pid or hostname differ from the .meta label (PM_ERR_LABEL)",
                              Location(path.name, 0, 0, "label"), "label.mismatch")
    if not archive.metadata.descs:
        raise FormatError("the .meta holds no descriptor (PM_ERR_NODATA)", Location(meta.name), "meta.no-desc")
    return archive


def _label_location(archive: Archive, field: str) -> Location:
    meta = archive.files.meta
    return Location(meta.name if meta is not None else str(archive.files.base), 0, 0, field)
