"""Data volumes: result records, their framing, times and marks (FMT-RESULT, FMT-FRAME-5).

A result whose layout repeats a clean earlier one is checked on that shape's columns
(columns.py); any other is checked on its columns as the compiled kernel reads them
(records.py), and where that declines goes the reference path: the bulk decoder, and a result it finds
canonical (the writer's layout) is known to satisfy the per-value storage rules, so only
instances, times and counters are checked for it (values.py), while any other result is
also walked field by field (structure.py). Both paths report the same findings.
"""

from __future__ import annotations

from collections.abc import Iterable

from pcpconform.check import times
from pcpconform.check.columns import ResultColumns
from pcpconform.check.records import RecordChecks
from pcpconform.check.state import Context, VolumeInfo
from pcpconform.check.structure import walk_result
from pcpconform.check.values import ValueChecks
from pcpconform.errors import FormatError
from pcpconform.format.schema import LABEL_SIZE, structs
from pcpconform.io.bulk import DecodedResult, decode_result
from pcpconform.io.frames import framed_records
from pcpconform.io.reader import Component, RawRecord

__all__ = ["check_volume"]

_STAMP_AT = 4                            # a result's timestamp follows its length word
#: decoder codes that are rules of their own; any other decoding failure is result.decode
_DECODER_RULES = ("result.valfmt", "result.dptr")


def check_volume(ctx: Context, values: ValueChecks, comp: Component, vol: int, first: bool,
                 probes: Iterable[int] = ()) -> None:
    """Check every record of an opened data volume; ``probes`` are the offsets the index
    names in it (answered as the records pass, for the index pass)."""
    info = ctx.st.volumes[vol] = VolumeInfo(comp.path, probes)
    version = comp.version
    types = {pmid: d.type for pmid, d in ctx.st.descs.items()}
    count = 0
    end = LABEL_SIZE[version]
    columns = ResultColumns(ctx, values, version) if ctx.columns else None
    records = RecordChecks(ctx, values, version, types)
    diagnostics = ctx.report.diagnostics
    try:
        for rec in (comp.records() if columns is None else framed_records(comp, ctx.report.paths)):
            count += 1
            end = rec.offset + len(rec.data)
            info.record(rec.offset)
            if columns is None:
                _result(ctx, values, rec, version, types, info)
            elif not columns.check(rec, info):
                columns.flush()
                found = len(diagnostics)
                if records.check(rec, info):
                    if columns.learning(rec):   # a shape is worth its decoding while shapes repeat
                        columns.learn(rec, decode_result(rec, version, types, ctx.report.paths),
                                      len(diagnostics) == found)
                    continue
                res = _result(ctx, values, rec, version, types, info)
                columns.learn(rec, res, len(diagnostics) == found)
    except FormatError as exc:
        ctx.reader_error(exc)
    finally:
        if columns is not None:
            columns.flush()
        info.finish()
    if comp.trailing:
        ctx.add("frame.stray-bytes", comp.name, f"{len(b''.join(comp.trailing))} bytes after "
                "the last record", offset=end)
    info.end = end
    info.size = end + len(b"".join(comp.trailing))
    if version == 2 and info.size > 0x7FFFFFFF:
        ctx.add("file.too-large", comp.name, f"{info.size} bytes; v2 offsets are 32-bit")
    ctx.report.bytes_checked += info.size
    if count == 0:
        code = "file.empty" if first else "file.empty-volume"
        ctx.add(code, comp.name, "the volume holds only its label")


def _result(ctx: Context, values: ValueChecks, rec: RawRecord, version: int, types: dict[int, int],
            info: VolumeInfo) -> DecodedResult | None:
    """The reference path: check one result; the decoded result, or None if it does not decode."""
    st, f, i = ctx.st, rec.file, rec.index
    if len(rec.data) % 4:
        ctx.add("frame.align", f, f"record length {len(rec.data)} is not a multiple of 4",
                record=i, offset=rec.offset, field="len")
    try:
        res = decode_result(rec, version, types, ctx.report.paths)
    except FormatError as exc:
        code = exc.code if exc.code in _DECODER_RULES else "result.decode"
        ctx.add(code, f, exc.message, record=i, offset=exc.location.offset, field=exc.location.field)
        walk_result(ctx, rec, version)
        st.counters.clear()  # an unreadable record is a gap, as libpcp sees it
        return None
    stamp = res.timestamp
    ctx.result_stamp = (f, i, stamp)
    info.stamp(stamp.total_nsec())
    for rule in times.RECORD_RULES:
        rule.check(ctx, rec, stamp, version)
    if res.is_mark:
        if len(rec.data) != structs(version).mark_size:
            ctx.add("result.mark-size", f, f"a mark of {len(rec.data)} bytes", record=i, offset=rec.offset)
        st.counters.clear()  # counters restart after a gap
        return res
    if not res.canonical or ctx.walk_canonical:     # canonical: nothing to find (check.canonical)
        walk_result(ctx, rec, version)
    for k, vs in enumerate(res.vsets):
        values.check(rec, k, vs, stamp)
    return res
