"""The rules across the members of an archive set (spec/sets.md, spec/validator.md CHECK-SET-*).

``check_set(source)`` reports what libpcp refuses when it opens the set (members it cannot
open, two hostnames, two members with one start time, descriptors that disagree), what it
cannot replay (overlapping members, damaged records), what it silently hides or merges
(records earlier than a seam's virtual mark, a name bound to two pmIDs, help text and
timezones that differ) and what makes ``pmlogextract`` refuse to merge the set (hostnames,
descriptors, names). Each member is also checked on its own by ``check_archive``; this
report holds the rules between them, each diagnostic naming the member file, record and
time it is about. Severities are by measurement on PCP 6.0.3, 6.3.8 and 7.2.2: ``error``
where one of them refuses or misreads the set (or pmlogextract refuses it).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from pcpconform.check.describe import metric_text, sem_text, type_text
from pcpconform.check.diagnostics import Diagnostic, DiagnosticLimit, Report
from pcpconform.check.engine import check_archive
from pcpconform.check.rules import RULES, Severity
from pcpconform.errors import FormatError, Location, UsageError
from pcpconform.format.pmtypes import PmID, PmInDom, TextType, Timestamp
from pcpconform.format.schema import TYPE_TEXT
from pcpconform.format.timezone import ArchiveZone
from pcpconform.io.archive import Archive
from pcpconform.io.archiveset import libpcp_error
from pcpconform.io.bulk import decode_result
from pcpconform.io.decoded import result_head
from pcpconform.io.reader import RawRecord
from pcpconform.io.setform import log_base_name, namelist, open_member
from pcpconform.io.setmeta import desc_conflict, desc_location
from pcpconform.io.setrecords import backward_mark_time, forward_mark_time

__all__ = ["check_set", "check_set_and_members"]


def check_set(source: str | os.PathLike[str], max_diagnostics: int | None = None) -> Report:
    """Check the rules across the members of the set ``source`` (a directory or a
    comma-separated list); never raises for bad input."""
    report = Report(os.fspath(source), max_diagnostics=max_diagnostics)
    started = time.perf_counter()
    try:
        _SetCheck(os.fspath(source), report).run()
    except DiagnosticLimit:
        pass
    except Exception as exc:  # a bug of ours must not look like a clean set
        report.diagnostics.append(Diagnostic("check.internal", Severity.ERROR, os.fspath(source), None, None, None,
                                             f"the check stopped on an internal error: {type(exc).__name__}: {exc}",
                                             RULES["check.internal"].clause))
    report.seconds = time.perf_counter() - started
    return report


def check_set_and_members(source: str | os.PathLike[str], max_diagnostics: int | None = None) -> Report:
    """One report for the whole set: every member's own diagnostics (``check_archive``),
    then the rules across them (``check_set``); what a validator answers for a set."""
    report = Report(os.fspath(source))
    for name in namelist(os.fspath(source)):
        if Path(name).parent.is_dir() and any(Path(name).parent.glob(Path(name).name + ".*")):
            report.diagnostics += check_archive(name, max_diagnostics=max_diagnostics).diagnostics
    report.diagnostics += check_set(source, max_diagnostics).diagnostics
    return report


class _SetCheck:
    def __init__(self, source: str, report: Report) -> None:
        self.source = source
        self.report = report
        self.zone: ArchiveZone | None = None

    def when(self, ts: Timestamp) -> str:
        assert self.zone is not None
        return self.zone.when(ts)

    def add(self, code: str, loc: Location, message: str, *, metric: str | None = None,
            time: Timestamp | None = None) -> None:
        self.report.add(code, loc.file, message, record=loc.record, offset=loc.offset, field=loc.field,
                        metric=metric, time=self.when(time) if time is not None and self.zone else None)

    def run(self) -> None:
        names = namelist(self.source)
        if not names:
            self.report.add("set.empty", self.source, "no archive in the directory (no .meta file): libpcp "
                            "cannot open it (PM_ERR_LOGFILE)")
            return
        self._zst(names)
        opened: list[tuple[str, Archive]] = []
        for name in names:
            try:
                opened.append((name, open_member(name)))
            except (FormatError, UsageError) as exc:
                self._unreadable(name, exc, names)
        if not opened:
            return
        seen: dict[str, str] = {}
        members: list[tuple[str, Archive]] = []
        for name, a in opened:
            if name in seen:
                loc = Location(_meta(a), 0, 0, "label")
                self.add("set.duplicate", loc, f"{name} is named twice: libpcp reads it once")
                continue
            seen[name] = name
            members.append((name, a))
        members.sort(key=lambda m: m[1].start.total_nsec())
        first = members[0][1]
        self.zone = ArchiveZone(first.timezone)
        if len(members) == 1:
            self.report.add("set.single", self.source, f"one archive ({members[0][0]}): libpcp reads it as "
                            "a single archive, not as a set")
        self._labels(members)
        self._descs([(n, a) for n, a in opened if n in seen])
        self._names(members)
        self._text(members)
        self._seams(members)

    # -- members libpcp cannot open ---------------------------------------------------------
    def _unreadable(self, name: str, exc: FormatError | UsageError, names: list[str]) -> None:
        loc = exc.location if isinstance(exc, FormatError) else Location(name)
        why = exc.message if isinstance(exc, FormatError) else str(exc)
        later = "; PCP 7.1.4 and later leave it out" + (
            ", and lose the metadata of the members opened before it" if names[-1] != name else "")
        self.add("set.member-unreadable", loc, f"{name} cannot be opened ({why}): PCP 6 refuses the whole "
                 f"set ({libpcp_error(exc)}){later}")

    def _zst(self, names: list[str]) -> None:
        for item in self.source.split(","):
            if not os.path.isdir(item):
                continue
            for entry in sorted(os.listdir(item)):
                found = log_base_name(entry)
                if found and found[1] == "meta" and log_base_name(entry, "pcp-6.0") is None:
                    self.report.add("set.zst-member", str(Path(item) / entry),
                                    f"{entry}: PCP before 6.3.2 does not take a .zst file as an archive's, "
                                    "so its directory scan leaves this member out")

    # -- labels ---------------------------------------------------------------------------
    def _labels(self, members: list[tuple[str, Archive]]) -> None:
        first_name, first = members[0]
        for name, a in members[1:]:
            if a.hostname != first.hostname:
                self.add("set.host", Location(_meta(a), 0, 0, "label.hostname"),
                         f"{name} is of host {a.hostname!r}, {first_name} of {first.hostname!r}: libpcp refuses "
                         "the set (PM_ERR_LOGHOST) and pmlogextract will not merge it")
            if a.timezone != first.timezone:
                self.add("set.timezone", Location(_meta(a), 0, 0, "label.timezone"),
                         f"{name} is in timezone {a.timezone!r}, {first_name} in {first.timezone!r}: libpcp "
                         "reports the first member's for the whole set, pmlogextract the last's")
        for (name, a), (prev_name, prev) in zip(members[1:], members):
            if a.start == prev.start:
                self.add("set.same-start", Location(_meta(a), 0, 0, "label.start"),
                         f"{name} and {prev_name} both start at {a.start}: libpcp refuses the set "
                         "(PM_ERR_LOGOVERLAP)", time=a.start)
        versions = sorted({a.version for _, a in members})
        if len(versions) > 1:
            self.report.add("set.versions", self.source, "members of archive versions "
                            f"{' and '.join(map(str, versions))}: libpcp reads them as one set")

    # -- metadata -------------------------------------------------------------------------
    def _descs(self, loaded: list[tuple[str, Archive]]) -> None:
        seen: dict[int, tuple[str, Archive]] = {}
        reported: set[tuple[int, str]] = set()
        for name, a in loaded:
            for pmid, desc in a.metadata.descs.items():
                if pmid not in seen:
                    seen[pmid] = (name, a)
                    continue
                other_name, other = seen[pmid]
                old = other.metadata.descs[pmid]
                clash = desc_conflict(old, desc)
                if clash is None or (pmid, name) in reported:
                    continue
                reported.add((pmid, name))
                field, error = clash
                words = {"type": type_text, "sem": sem_text}.get(field, str)
                self.add("set.desc", desc_location(a, pmid),
                         f"{field} is {words(getattr(desc, field))} in {name}, {words(getattr(old, field))} "
                         f"in {other_name}: libpcp refuses the set ({error}) and pmlogextract will not merge it",
                         metric=metric_text(pmid, (desc.names or old.names or (None,))[0]))

    def _names(self, members: list[tuple[str, Archive]]) -> None:
        bound: dict[str, tuple[int, str]] = {}
        named: dict[int, tuple[tuple[str, ...], str]] = {}
        for name, a in members:
            for pmid, desc in a.metadata.descs.items():
                for n in desc.names:
                    first = bound.setdefault(n, (pmid, name))
                    if first[0] != pmid:
                        self.add("set.name-pmid", desc_location(a, pmid),
                                 f"{n} is {PmID(pmid)} in {name}, {PmID(first[0])} in {first[1]}: libpcp binds "
                                 "the name to the pmID of the member it opens first (the other's values are "
                                 "reachable by pmID only); pmlogextract will not merge the set", metric=n)
                have = named.setdefault(pmid, (desc.names, name))
                if set(have[0]) != set(desc.names) and desc.names and have[0]:
                    self.add("set.pmid-names", desc_location(a, pmid),
                             f"{PmID(pmid)} is named {', '.join(desc.names)} in {name}, {', '.join(have[0])} in "
                             f"{have[1]}: libpcp answers every name, pmlogextract will not merge the set",
                             metric=metric_text(pmid, desc.names[0]))

    def _text(self, members: list[tuple[str, Archive]]) -> None:
        texts: dict[tuple[int, int], tuple[str, str]] = {}
        for name, a in members:
            for key, body in a.metadata.text.items():
                first = texts.setdefault(key, (body, name))
                if first[0] != body:
                    kind, ident = key
                    what = f"instance domain {PmInDom(ident)}" if kind & TextType.INDOM else str(PmID(ident))
                    self.add("set.text", _text_location(a, key),
                             f"the help text of {what} differs between {first[1]} and {name}: libpcp 6.3 and "
                             "later answer the one of the member opened last, 6.0 that of the member a replay "
                             "last reached; pmlogextract keeps the last")

    # -- seams and records ----------------------------------------------------------------------
    def _seams(self, members: list[tuple[str, Archive]]) -> None:
        """One pass over each member's records, in time order: its damage, its end, and the
        records a replay of the set never delivers at the seams on either side of it."""
        end: Timestamp | None = None
        for k, (name, a) in enumerate(members):
            prev_name = members[k - 1][0] if k else ""
            floor = None
            if k and end is not None:
                if a.start < end:
                    self.add("set.overlap", Location(_meta(a), 0, 0, "label.start"),
                             f"{name} starts at {self.when(a.start)}, before {prev_name} ends at {self.when(end)}: "
                             "libpcp's replay stops at this seam (PM_ERR_LOGOVERLAP; an INTERP replay gives no "
                             "values after it); pmlogextract interleaves the two", time=a.start)
                else:
                    floor = forward_mark_time(end)[0]
            nxt = members[k + 1] if k + 1 < len(members) else None
            ceiling = backward_mark_time(nxt[1].start) if nxt is not None else None
            seen = self._records(name, a, floor, ceiling)
            end = seen.end
            if seen.before:
                first, count = seen.before
                self.add("set.hidden", first.location("result.timestamp"),
                         f"{count} record(s) of {name} lie before the virtual mark 1 ms after {prev_name}'s last "
                         "record: a client reading the set forwards never sees their values",
                         time=result_head(first.data, a.version)[0])
            if seen.after and nxt is not None:
                first, count = seen.after
                self.add("set.hidden", first.location("result.timestamp"),
                         f"{count} record(s) of {name} lie after the virtual mark 1 ms before {nxt[0]} starts: "
                         "a client reading the set backwards never sees their values",
                         time=result_head(first.data, a.version)[0])

    def _records(self, name: str, a: Archive, floor: Timestamp | None, ceiling: Timestamp | None) -> _Pass:
        """Read every record of a member as libpcp would: the first it cannot read is
        reported; the time of the last readable record (pmGetArchiveEnd), and the first of
        (and how many) records lie before ``floor`` and after ``ceiling``."""
        types = {pmid: d.type for pmid, d in a.metadata.descs.items()}
        out = _Pass()
        try:
            for _, record in a.volume_records():
                stamp = decode_result(record, a.version, types, a.stats).timestamp
                out.end = stamp
                if floor is not None and stamp < floor:
                    out.before = (out.before[0], out.before[1] + 1) if out.before else (record, 1)
                if ceiling is not None and stamp > ceiling:
                    out.after = (out.after[0], out.after[1] + 1) if out.after else (record, 1)
        except FormatError as exc:
            self.add("set.member-damaged", exc.location,
                     f"{name} has a record libpcp cannot read ({exc.message}): PCP 6 stops a replay of the set "
                     "there (PM_ERR_LOGREC), PCP 7.1.4 and later leave the rest of the member out, pmlogextract "
                     "stops extracting it there", time=out.end)
        return out


class _Pass:
    """What one pass over a member's records found."""

    def __init__(self) -> None:
        self.end: Timestamp | None = None
        self.before: tuple[RawRecord, int] | None = None
        self.after: tuple[RawRecord, int] | None = None


def _meta(a: Archive) -> str:
    return str(a.files.meta) if a.files.meta is not None else str(a.files.base)


def _text_location(a: Archive, key: tuple[int, int]) -> Location:
    kind, ident = key
    for m in a.meta_records():
        if m.type == TYPE_TEXT and (m.body.type, m.body.ident) == (kind, ident):
            return m.record.location("text.text")
    return Location(_meta(a))
