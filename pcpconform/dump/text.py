"""A pmdumplog -a style listing of an archive, for people."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime
from typing import Any, TextIO

from pcpconform.dump.jsonl import escape_bytes, sem_token
from pcpconform.format.pmtypes import TYPE_DESCRIPTIONS, LabelType, PmID, PmInDom, PmType, Timestamp
from pcpconform.format.timezone import ArchiveZone
from pcpconform.format.values import F32
from pcpconform.io.archive import Archive

__all__ = ["write_text", "when_text", "value_text", "printed_value"]


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
    for res in archive.results():
        size = len(res.record.data) if res.record is not None else 0
        out.write(f"[{size} bytes]\n")
        if res.is_mark:
            out.write(f"{zone.when(res.timestamp)}  <mark>\n\n")
            continue
        out.write(f"{zone.when(res.timestamp)} {len(res.vsets)} metric{'s' if len(res.vsets) != 1 else ''}\n")
        for vs in res.vsets:
            name = archive.metric_name(vs.pmid)
            head = f"    {PmID(vs.pmid)} ({name}):"
            if vs.numval < 0:
                out.write(f"{head} error {vs.numval}\n")
                continue
            if vs.numval == 0:
                out.write(f"{head} No values returned!\n")
                continue
            ptype = types.get(vs.pmid)
            desc = md.descs.get(vs.pmid)
            if len(vs.values) == 1 and vs.values[0][0] == -1:
                out.write(f"{head} value {printed_value(vs.values[0][1], ptype)}\n")
                continue
            out.write(head + "\n")
            names = archive.instances(desc.indom, res.timestamp) if desc and not desc.indom.is_null else {}
            for inst, v in vs.values:
                label = f'{inst} or "{names[inst]}"' if inst in names else f"{inst} or ???"
                out.write(f"        inst [{label}] value {printed_value(v, ptype)}\n")
        out.write("\n")
