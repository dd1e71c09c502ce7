"""A pmdumplog -a style listing of an archive, for people.

A result's value-set lines are formatted a column at a time (``dump.text-vsets``, whose
reference is ``reference_vsets``, value by value), each column's values printed at once
(``dump.text-column``, reference ``printed_value`` of each).
"""

from __future__ import annotations

import bisect
import enum
import json
import math
from datetime import UTC, datetime
from typing import Any, TextIO

from pcpconform.dump.jsonl import escape_bytes, sem_token
from pcpconform.fastpath import Declined, PathStats, register
from pcpconform.format.pmtypes import TYPE_DESCRIPTIONS, LabelType, PmID, PmInDom, PmType, Timestamp
from pcpconform.format.timezone import ArchiveZone
from pcpconform.format.values import F32
from pcpconform.io.archive import Archive
from pcpconform.io.bulk import DecodedResult

__all__ = ["write_text", "when_text", "value_text", "printed_value", "reference_vsets",
           "printed_values", "printed_column", "PrintReason"]


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
    for d in md.descs.values():
        try:
            tdesc = TYPE_DESCRIPTIONS[PmType(d.type)]
        except ValueError:
            tdesc = f"type {d.type}"
        indom_text = "PM_INDOM_NULL 0xffffffff" if d.indom.is_null else f"{d.indom} 0x{int(d.indom):x}"
        out.write(f"PMID: {d.pmid} ({', '.join(d.names)})\n")
        out.write(f"    Data Type: {tdesc}  InDom: {indom_text}\n")
        out.write(f"    Semantics: {sem_token(d.sem)}  Units: {d.units}\n")
        for oneline in (True, False):
            text = archive.help_text(d.pmid, oneline=oneline)
            if text:
                out.write(f"    {'Help' if oneline else 'Full help'}: {text}\n")
    out.write("\nInstance Domains in the Log ...\n")
    for indom, history in md.indoms.items():
        out.write(f"InDom: {PmInDom(indom)}\n")
        for rec in history:
            out.write(f"{zone.when(rec.timestamp)} {len(rec.instances)} instances\n")
            for inst, name in rec.instances.items():
                out.write(f"   {inst} or \"{name}\"\n")
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
    types = {pmid: d.type for pmid, d in md.descs.items()}
    lines = _ResultLines(archive, types, archive.stats)
    batch: list[str] = []
    try:
        for res in archive.results():
            size = len(res.record.data) if res.record is not None else 0
            if res.is_mark:
                batch.append(f"[{size} bytes]\n{zone.when(res.timestamp)}  <mark>\n\n")
            else:
                batch.append(f"[{size} bytes]\n{zone.when(res.timestamp)} {len(res.vsets)} "
                             f"metric{'s' if len(res.vsets) != 1 else ''}\n{lines.vsets(res)}\n")
            if len(batch) == 64:            # fewer, larger writes
                out.write("".join(batch))
                batch.clear()
    finally:                                # what was read before a bad record is shown
        out.write("".join(batch))


class _ResultLines:
    """A result's value-set lines; the instance lines of a value set are one ``%`` template
    per (instance domain record in force, instance list), filled with a column of values."""

    def __init__(self, archive: Archive, types: dict[int, int], stats: PathStats) -> None:
        self.archive = archive
        self.types = types
        self.stats = stats
        md = archive.metadata
        self.descs = md.descs
        self.stamps = {indom: [r.timestamp for r in history] for indom, history in md.indoms.items()}
        self.history = md.indoms
        self.templates: dict[tuple[int, int, tuple[int, ...]], str] = {}
        self.heads: dict[int, str] = {}

    def _head(self, pmid: int) -> str:
        head = self.heads.get(pmid)
        if head is None:
            head = self.heads[pmid] = f"    {PmID(pmid)} ({self.archive.metric_name(pmid)}):"
        return head

    def _template(self, indom: int, at: Timestamp, insts: tuple[int, ...]) -> str:
        stamps = self.stamps.get(indom)
        pos = bisect.bisect_right(stamps, at) if stamps else 0
        key = (indom, pos, insts)
        template = self.templates.get(key)
        if template is None:
            names = self.history[indom][pos - 1].instances if pos else {}
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
            desc = self.descs.get(vs.pmid)
            indom = -1 if desc is None or desc.indom.is_null else int(desc.indom)
            template = self._template(indom, res.timestamp, insts)
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
    """``_ResultLines.vsets`` value by value, with ``Archive.instances``: the reference the
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
    types = {pmid: d.type for pmid, d in archive.metadata.descs.items()}
    return _ResultLines(archive, types, archive.stats).vsets(res)


VSETS = register("dump.text-vsets", reference=reference_vsets, fast=column_vsets,
                 reasons=PrintReason, inputs="archive-result")
