"""A pmdumplog -a style listing of an archive, for people.

Results are listed a run of records at a time (``dump.text-run``): the compiled result
kernel reads the run's value sets, and a result's lines are one ``%`` template per layout,
which the kernel fills with every value printed (``io.result_kernel``). Its reference lists
each record on its own: the value-set lines a column at a time (``dump.text-vsets``, whose
reference is ``reference_vsets``, value by value), each column's values printed at once
(``dump.text-column``, reference ``printed_value`` of each).
"""

from __future__ import annotations

import bisect
import enum
import json
import math
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any, TextIO

from pcpconform.dump.jsonl import escape_bytes, sem_token
from pcpconform.fastpath import Declined, PathStats, register
from pcpconform.format.pmtypes import TYPE_DESCRIPTIONS, LabelType, PmID, PmInDom, PmType, Timestamp
from pcpconform.format.timezone import UTC_ZONE, ArchiveZone
from pcpconform.format.values import F32
from pcpconform.io.archive import Archive
from pcpconform.io.bulk import DecodedResult, decode_result
from pcpconform.io.decoded import result_head
from pcpconform.io.reader import RawRecord
from pcpconform.io.result_kernel import STATUS, KernelReason, filled_text, joined, run_columns

__all__ = ["write_text", "when_text", "value_text", "printed_value", "reference_vsets",
           "printed_values", "printed_column", "PrintReason", "run_text_records", "run_text_kernel",
           "RUN_RECORDS", "RUN_BYTES", "ResultLines"]


def when_text(ts: Timestamp) -> str:
    try:
        dt = datetime.fromtimestamp(ts.sec, tz=UTC)
        return dt.strftime("%Y-%m-%d %H:%M:%S") + f".{ts.nsec:09d}Z"
    except (OverflowError, OSError, ValueError):
        return f"@{ts.sec}.{ts.nsec:09d}"


def value_text(value: Any, ptype: int | None) -> str:
    if isinstance(value, F32):
        return repr(float(value))
    if isinstance(value, (bytes, bytearray)):
        if ptype == PmType.STRING:
            return '"' + escape_bytes(bytes(value).rstrip(b"\0")) + '"'
        return "[" + bytes(value).hex() + "]"
    if hasattr(value, "records"):
        return f"[{len(value.records)} event records]"
    return str(value)


def _c_g(value: float, digits: int) -> str:
    """C's ``%.<digits>g``, including its spelling of infinities and signed NaNs."""
    if math.isnan(value):
        return "-nan" if math.copysign(1.0, value) < 0 else "nan"
    return format(value, f".{digits}g")


def printed_value(value: Any, ptype: int | None) -> str:
    """A value as pmdumplog prints it (pmPrintValue: FLOAT ``%.8g``, DOUBLE ``%.16g``);
    DUMP-LIST-3. The JSON Lines dump, not this, is the lossless form."""
    if isinstance(value, F32):
        return _c_g(float(value), 8)
    if isinstance(value, float):
        return _c_g(value, 16)
    return value_text(value, ptype)


def write_text(archive: Archive, out: TextIO, *, utc: bool = False) -> None:
    """A pmdumplog -a style listing; times in the archive's timezone (as ``pmdumplog -z``)
    unless ``utc``."""
    md = archive.metadata
    lab = archive.label
    zone = ArchiveZone(None if utc else lab.timezone)
    out.write(f"Log Label (Log Format Version {archive.version})\n")
    out.write(f"Performance metrics from host {lab.hostname}\n")
    out.write(f"    commencing {zone.when(lab.start)}\n")
    out.write(f"Archive timezone: {lab.timezone}\n")
    if archive.version == 3 and lab.zoneinfo:
        out.write(f"Archive zoneinfo: {lab.zoneinfo}\n")
    out.write(f"PID for pmlogger: {lab.pid}\n\n")
    out.write("Descriptions for Metrics in the Log ...\n")
    texts: list[str] = []       # a section's lines written together: one write, not thousands
    for d in md.descs.values():
        try:
            tdesc = TYPE_DESCRIPTIONS[PmType(d.type)]
        except ValueError:
            tdesc = f"type {d.type}"
        indom_text = "PM_INDOM_NULL 0xffffffff" if d.indom.is_null else f"{d.indom} 0x{int(d.indom):x}"
        texts.append(f"PMID: {d.pmid} ({', '.join(d.names)})\n"
                     f"    Data Type: {tdesc}  InDom: {indom_text}\n"
                     f"    Semantics: {sem_token(d.sem)}  Units: {d.units}\n")
        for oneline in (True, False):
            text = archive.help_text(d.pmid, oneline=oneline)
            if text:
                texts.append(f"    {'Help' if oneline else 'Full help'}: {text}\n")
    out.write("".join(texts))
    out.write("\nInstance Domains in the Log ...\n")
    for indom, history in md.indoms.items():
        out.write(f"InDom: {PmInDom(indom)}\n")
        for rec in history:
            out.write(f"{zone.when(rec.timestamp)} {len(rec.instances)} instances\n")
            out.write("".join([f"   {inst} or \"{name}\"\n" for inst, name in rec.instances.items()]))
    if md.labels:
        out.write("\nLabel Sets in the Log ...\n")
        for lr in md.labels:
            try:
                ltype = LabelType(lr.type).name.lower()
            except ValueError:
                ltype = str(lr.type)
            for inst, js in lr.sets:
                where = "" if inst == 0xFFFFFFFF else f" inst {inst}"
                out.write(f"{zone.when(lr.timestamp)} {ltype} {lr.ident}{where}: "
                          f"{json.dumps(js) if isinstance(js, dict) else js}\n")
    entries = list(archive.index_entries())
    if entries:
        out.write("\nTemporal Index\n\t\tLog Vol    end(meta)     end(log)\n")
        for e in entries:
            out.write(f"{zone.when(e.timestamp)}\t{e.vol:7d} {e.off_meta:12d} {e.off_data:12d}\n")
    out.write("\n")
    lines = ResultLines(archive, zone, archive.stats)
    batch: list[str] = []
    try:
        for run in _runs(archive.volume_records()):
            try:
                batch.append(RUN(archive.stats, lines, run))
            except Exception:
                # what the run holds before its bad record is shown: again, record by record
                batch.extend(map(lines.record_text, run))
                raise
            out.write("".join(batch))       # a run's text at once: fewer, larger writes
            batch.clear()
    finally:                                # what was read before a bad record is shown
        out.write("".join(batch))


#: records a run holds at most, and their bytes (memory stays flat: a printed value is a
#: string until the run is written): the kernel's columns and printed values are made a
#: run at a time
RUN_RECORDS = 128
RUN_BYTES = 1 << 20
#: the characters of result templates kept for the layouts seen (then they are dropped)
LAYOUT_CHARS = 8 << 20


def _runs(records: Iterator[tuple[int, RawRecord]]) -> Iterator[list[RawRecord]]:
    """Runs of up to RUN_RECORDS records and about RUN_BYTES; a run read before a record
    that cannot be framed is given before the error is raised."""
    run: list[RawRecord] = []
    held = 0
    try:
        for _, record in records:
            run.append(record)
            held += len(record.data)
            if len(run) == RUN_RECORDS or held >= RUN_BYTES:
                yield run
                run = []
                held = 0
    except Exception:
        if run:
            yield run
        raise
    if run:
        yield run


class ResultLines:
    """A result's value-set lines; the instance lines of a value set are one ``%`` template
    per (instance domain record in force, instance list), filled with a column of values."""

    def __init__(self, archive: Archive, zone: ArchiveZone, stats: PathStats) -> None:
        self.archive = archive
        self.zone = zone
        self.stats = stats
        md = archive.metadata
        self.types = {pmid: d.type for pmid, d in md.descs.items()}
        self.descs = md.descs
        # (sec, nsec) pairs: compared in C by bisect, as Timestamp compares them
        self.stamps = {indom: [(r.timestamp.sec, r.timestamp.nsec) for r in history]
                       for indom, history in md.indoms.items()}
        self.history = md.indoms
        self.contents: dict[int, list[int]] = {}       # per instance domain: _contents
        self.templates: dict[tuple[int, int, tuple[int, ...]], str] = {}
        self.heads: dict[int, str] = {}
        self.indoms: dict[int, int] = {}
        # pmID -> (head with % escaped, indom, its line of one value, its line before instances)
        self.escaped: dict[int, tuple[str, int, str, str]] = {}
        # result templates by layout (pmIDs, numvals, instances), each with the instance
        # domain records it was made with (layout_template)
        self.layouts: dict[tuple[bytes, bytes, bytes], tuple[str, tuple[tuple[Any, list[int], int], ...]]] = {}
        self.layout_chars = 0

    def record_text(self, record: RawRecord) -> str:
        """A result's lines, from its record decoded on its own."""
        res = decode_result(record, self.archive.version, self.types, self.stats)
        when = self.zone.when(res.timestamp)
        if res.is_mark:
            return f"[{len(record.data)} bytes]\n{when}  <mark>\n\n"
        n = len(res.vsets)
        return f"[{len(record.data)} bytes]\n{when} {n} metric{'s' if n != 1 else ''}\n{self.vsets(res)}\n"

    def layout_template(self, at: tuple[int, int], pmids: list[int], numvals: list[int],
                        insts: list[int], bounds: list[int]) -> tuple[str, tuple[tuple[Any, list[int], int], ...]]:
        """The value-set lines of a result of this layout at time ``at``, a ``%s`` for each
        value (value set ``k`` has ``pmids[k]``, ``numvals[k]``, and instances
        ``insts[bounds[k]:bounds[k + 1]]``), and what they hold while: for each instance
        domain with records, its records' times, its ``_contents`` and the one at ``at``."""
        out = []
        used: dict[int, None] = {}
        escaped = self.escaped
        at_pos: dict[int, int] = {}      # per instance domain: its records in force at ``at``
        for k, pmid in enumerate(pmids):
            known = escaped.get(pmid)
            if known is None:
                head = self._head(pmid).replace("%", "%%")
                known = escaped[pmid] = (head, self._indom(pmid), f"{head} value %s\n", head + "\n")
            head, indom, single, head_line = known
            numval = numvals[k]
            lo, hi = bounds[k], bounds[k + 1]
            if numval < 0:
                out.append(f"{head} error {numval}\n")
            elif numval == 0:
                out.append(f"{head} No values returned!\n")
            elif hi - lo == 1 and insts[lo] == -1:
                out.append(single)
            else:
                pos = at_pos.get(indom)
                if pos is None:         # the domain's records in force at ``at``
                    stamps = self.stamps.get(indom)
                    pos = at_pos[indom] = bisect.bisect_right(stamps, at) if stamps else 0
                used[indom] = None
                out.append(head_line)
                out.append(self._template(indom, pos, tuple(insts[lo:hi])))
        out.append("\n")
        held = []
        for indom in used:
            stamps = self.stamps.get(indom)
            if stamps:
                ids = self._contents(indom)
                held.append((stamps, ids, ids[bisect.bisect_right(stamps, at)]))
        return "".join(out), tuple(held)

    def _contents(self, indom: int) -> list[int]:
        """Per count of the domain's records in force (0 to all of them), the first record
        of the stretch that holds the same instances and names (a pmlogger writes a domain
        again unchanged, at each new volume and more): lines made under one hold for all."""
        ids = self.contents.get(indom)
        if ids is None:
            history = self.history.get(indom, [])
            ids = [0]
            for p in range(1, len(history) + 1):
                ids.append(ids[-1] if p >= 2 and history[p - 1].instances == history[p - 2].instances else p)
            self.contents[indom] = ids
        return ids

    def _indom(self, pmid: int) -> int:
        indom = self.indoms.get(pmid)
        if indom is None:
            desc = self.descs.get(pmid)
            indom = self.indoms[pmid] = -1 if desc is None or desc.indom.is_null else int(desc.indom)
        return indom

    def _head(self, pmid: int) -> str:
        head = self.heads.get(pmid)
        if head is None:
            head = self.heads[pmid] = f"    {PmID(pmid)} ({self.archive.metric_name(pmid)}):"
        return head

    def _template(self, indom: int, pos: int, insts: tuple[int, ...]) -> str:
        """The instance lines of ``insts`` under the domain's first ``pos`` records."""
        first = self._contents(indom)[pos] if pos else 0
        key = (indom, first, insts)
        template = self.templates.get(key)
        if template is None:
            names = self.history[indom][first - 1].instances if first else {}
            template = "".join(
                "        inst [" + (f'{inst} or "{names[inst]}"' if inst in names else
                                    f"{inst} or ???").replace("%", "%%") + "] value %s\n"
                for inst in insts)
            if len(self.templates) > 4096:
                self.templates.clear()
            self.templates[key] = template
        return template

    def vsets(self, res: DecodedResult) -> str:
        out = []
        for vs in res.vsets:
            head = self._head(vs.pmid)
            if vs.numval < 0:
                out.append(f"{head} error {vs.numval}\n")
                continue
            if vs.numval == 0:
                out.append(f"{head} No values returned!\n")
                continue
            ptype = self.types.get(vs.pmid)
            insts, values = vs.columns
            if len(insts) == 1 and insts[0] == -1:
                out.append(f"{head} value {printed_value(values[0], ptype)}\n")
                continue
            indom = self._indom(vs.pmid)
            stamps = self.stamps.get(indom)
            pos = bisect.bisect_right(stamps, (res.timestamp.sec, res.timestamp.nsec)) if stamps else 0
            template = self._template(indom, pos, tuple(insts))
            out.append(head + "\n" + template % tuple(COLUMN(self.stats, values, ptype)))
        return "".join(out)


class PrintReason(enum.Enum):
    """Why a column's values are printed one at a time."""

    NAN = "a NaN among floats"
    OTHER = "values of mixed classes, or strings, aggregates or events"


def printed_values(values: tuple[Any, ...], ptype: int | None) -> list[str]:
    """``printed_value`` of each value: the reference of ``dump.text-column``."""
    return [printed_value(v, ptype) for v in values]


def printed_column(values: tuple[Any, ...], ptype: int | None) -> list[str]:
    """``printed_values`` for a column of integers, or of floats without a NaN, at once."""
    classes = set(map(type, values))
    if classes == {int}:
        return list(map(str, values))
    if classes == {float} or classes == {F32}:
        if not all(v == v for v in values):
            raise Declined(PrintReason.NAN)
        if classes == {float}:
            return [format(v, ".16g") for v in values]       # plain %.16g
        return [format(float(v), ".8g") for v in values]     # plain %.8g
    raise Declined(PrintReason.OTHER)


COLUMN = register("dump.text-column", reference=printed_values, fast=printed_column,
                  reasons=PrintReason, inputs="printed-column")


def reference_vsets(archive: Archive, res: DecodedResult) -> str:
    """``ResultLines.vsets`` value by value, with ``Archive.instances``: the reference the
    tests hold the columns to."""
    md = archive.metadata
    out = []
    for vs in res.vsets:
        head = f"    {PmID(vs.pmid)} ({archive.metric_name(vs.pmid)}):"
        if vs.numval < 0:
            out.append(f"{head} error {vs.numval}\n")
            continue
        if vs.numval == 0:
            out.append(f"{head} No values returned!\n")
            continue
        ptype = md.descs[vs.pmid].type if vs.pmid in md.descs else None
        desc = md.descs.get(vs.pmid)
        if len(vs.values) == 1 and vs.values[0][0] == -1:
            out.append(f"{head} value {printed_value(vs.values[0][1], ptype)}\n")
            continue
        out.append(head + "\n")
        names = archive.instances(desc.indom, res.timestamp) if desc and not desc.indom.is_null else {}
        for inst, v in vs.values:
            label = f'{inst} or "{names[inst]}"' if inst in names else f"{inst} or ???"
            out.append(f"        inst [{label}] value {printed_value(v, ptype)}\n")
    return "".join(out)


def column_vsets(archive: Archive, res: DecodedResult) -> str:
    """A result's value-set lines a column at a time, as ``write_text`` prints them."""
    return ResultLines(archive, UTC_ZONE, archive.stats).vsets(res)


VSETS = register("dump.text-vsets", reference=reference_vsets, fast=column_vsets,
                 reasons=PrintReason, inputs="archive-result")


RUN_PATH = "dump.text-run"


def run_text_records(lines: ResultLines, records: list[RawRecord]) -> str:
    """The lines of a run of results, each record decoded on its own: the reference of
    ``dump.text-run``."""
    return "".join(map(lines.record_text, records))


def run_text_kernel(lines: ResultLines, records: list[RawRecord]) -> str:
    """``run_text_records`` from the compiled kernel's columns of the whole run, its values
    printed by the kernel into their layouts' templates (``io.result_kernel``). A record the
    kernel does not read is listed by the reference (``ResultLines.record_text``) in its
    place, counted as declined with the kernel's reason; ``Declined`` where it reads none.
    No numpy: a small archive's dump does not load it."""
    version = lines.archive.version
    buf, bounds = joined(records)
    columns = run_columns(buf, bounds, version)
    status = columns[0]
    if status and status.count(0) == 0:       # none read
        raise Declined(STATUS[status[0]])
    unread = any(status)
    rec_vset, vset_val = memoryview(columns[1]).cast("q").tolist(), memoryview(columns[5]).cast("q").tolist()
    # a record's layout: its pmIDs, numvals and instances; its template is reused while the
    # instance domain records they were made with are still the ones in force
    pmid_b, numval_b, inst_b = columns[2], columns[3], columns[6]
    pmids = numvals = insts = None      # as lists: only where a new layout is made
    when, known, bisect_right = lines.zone.when, lines.layouts, bisect.bisect_right
    heads: list[str] = []
    templates: list[str] = []
    for r, record in enumerate(records):
        if unread and status[r]:
            # a record the kernel does not read (event arrays, a layout not the writer's)
            # has no rows: its lines are the reference's, in its place, counted
            lines.stats.decline(RUN_PATH, STATUS[status[r]])
            heads.append(lines.record_text(record))
            templates.append("")
            continue
        stamp = result_head(record.data, version)[0]
        k0, k1 = rec_vset[r], rec_vset[r + 1]
        if k0 == k1:
            heads.append(f"[{len(record.data)} bytes]\n{when(stamp)}  <mark>\n\n")
            templates.append("")
            continue
        at = (stamp.sec, stamp.nsec)
        v0, v1 = vset_val[k0], vset_val[k1]
        key = (pmid_b[4 * k0:4 * k1], numval_b[4 * k0:4 * k1], inst_b[4 * v0:4 * v1])
        hit = known.get(key)
        if hit is not None and all(ids[bisect_right(stamps, at)] == first for stamps, ids, first in hit[1]):
            template = hit[0]
        else:
            if pmids is None:
                pmids = memoryview(pmid_b).cast("I").tolist()
                numvals, insts = memoryview(numval_b).cast("i").tolist(), memoryview(inst_b).cast("i").tolist()
            assert numvals is not None and insts is not None
            template, held = lines.layout_template(at, pmids[k0:k1], numvals[k0:k1], insts, vset_val[k0:k1 + 1])
            lines.layout_chars += len(template)
            if lines.layout_chars > LAYOUT_CHARS:   # memory stays flat where layouts never repeat
                known.clear()
                lines.layout_chars = len(template)
            known[key] = (template, held)
        heads.append(f"[{len(record.data)} bytes]\n{when(stamp)} {k1 - k0} metric{'s' if k1 - k0 != 1 else ''}\n")
        templates.append(template)
    return filled_text(buf, bounds, columns, lines.types, heads, templates)


RUN = register(RUN_PATH, reference=run_text_records, fast=run_text_kernel,
               reasons=KernelReason, inputs="text-run")
