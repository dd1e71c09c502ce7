"""The .meta file: its records, their types and their time order (FMT-META).

Each record is decoded with the schema of its type and handed to the module of its area
(descs, indoms, text, labelsets); a record that frames but does not decode is reported
under the rule its type breaks, and the pass goes on with the next one.
"""

from __future__ import annotations

import struct
from typing import Any

from pcpconform.check.describe import stamp_text
from pcpconform.check.descs import check_desc
from pcpconform.check.indoms import check_indom
from pcpconform.check.labelsets import check_labelset
from pcpconform.check.state import Context
from pcpconform.check.text import check_text
from pcpconform.errors import FormatError
from pcpconform.format.pmtypes import Timestamp
from pcpconform.format.schema import (
    INDOM_TAGS,
    LABEL_SIZE,
    LABEL_TAGS,
    META_TYPES,
    TYPE_DESC,
    TYPE_INDOM_V2,
    TYPE_LABEL_V2,
    TYPE_TEXT,
)
from pcpconform.io.frames import framed_records
from pcpconform.io.meta import parse_meta
from pcpconform.io.reader import Component, RawRecord

__all__ = ["check_meta"]

_INDOM_TYPES = INDOM_TAGS
_LABEL_TYPES = LABEL_TAGS
_TAG = struct.Struct(">i")   # the type word after the length word
_STAMP_AT = 8                # a record's timestamp follows its length and type words


def check_meta(ctx: Context, comp: Component) -> None:
    """Check every record of an opened .meta file."""
    count = 0
    end = LABEL_SIZE[comp.version]
    last_stamp: Timestamp | None = None
    try:
        for rec in framed_records(comp, ctx.report.paths, "meta"):
            count += 1
            end = rec.offset + len(rec.data)
            ctx.st.meta_records.append(rec.offset)
            try:
                parsed = parse_meta(rec, comp.version, ctx.report.paths)
            except FormatError as exc:
                ctx.add(_decode_code(rec), rec.file, exc.message, record=rec.index,
                        offset=exc.location.offset, field=exc.location.field)
                continue
            stamp = _meta_record(ctx, rec, parsed.type, parsed.body, comp.version)
            if stamp is None:
                continue
            if last_stamp is not None and stamp < last_stamp:
                ctx.add("meta.time-order", rec.file, f"timestamp {stamp_text(stamp)} is before "
                        f"{stamp_text(last_stamp)}", stamp=stamp,
                        record=rec.index, offset=rec.offset + _STAMP_AT, field="timestamp")
            if ctx.st.start is not None and stamp < ctx.st.start:
                ctx.add("meta.time-range", rec.file, f"timestamp {stamp_text(stamp)} is before "
                        f"the archive start {stamp_text(ctx.st.start)}", stamp=stamp, record=rec.index,
                        offset=rec.offset + _STAMP_AT, field="timestamp")
            last_stamp = stamp if last_stamp is None else max(stamp, last_stamp)
            ctx.st.meta_offsets.append(rec.offset)
            ctx.st.meta_stamps.append(stamp.total_nsec())
    except FormatError as exc:
        ctx.reader_error(exc)
    if comp.trailing:
        ctx.add("frame.stray-bytes", comp.name, f"{len(b''.join(comp.trailing))} bytes after "
                "the last record", offset=end)
    if count == 0 and not comp.trailing:
        ctx.add("file.empty", comp.name, ".meta holds only its label (libpcp: empty archive)")
    if not ctx.st.descs:
        ctx.add("meta.no-desc", comp.name, ".meta holds no metric descriptor")
    # offsets up to the end of the last whole record are what an index may name
    ctx.st.meta_size = end
    if comp.version == 2 and ctx.st.meta_size > 0x7FFFFFFF:
        ctx.add("file.too-large", comp.name, f"{ctx.st.meta_size} bytes; v2 offsets are 32-bit")


def _decode_code(rec: RawRecord) -> str:
    """The rule a .meta record breaks when it does not decode, by its type."""
    tag = _TAG.unpack_from(rec.data, 4)[0] if len(rec.data) >= 12 else 0
    if tag == TYPE_DESC:
        return "desc.no-numnames" if len(rec.data) == 32 else "desc.length"
    if tag in _INDOM_TYPES:
        return "indom.length"
    if tag in _LABEL_TYPES:
        return "labelset.length"
    return "meta.decode"


def _meta_record(ctx: Context, rec: RawRecord, tag: int, body: Any, version: int) -> Timestamp | None:
    """Check one decoded record; its timestamp if it has one."""
    f, i = rec.file, rec.index
    if tag not in range(1, 8):
        ctx.add("meta.tag", f, f"record type {tag} is not 1..7 (libpcp: PM_ERR_RECTYPE)",
                record=i, offset=rec.offset + 4, field="meta.type")
        return None
    if tag not in META_TYPES[version]:
        ctx.add("meta.tag-version", f, f"record type {tag} does not belong in a version "
                f"{version} archive", record=i, offset=rec.offset + 4, field="meta.type")
    if tag == TYPE_DESC:
        check_desc(ctx, rec, body)
        return None
    if tag in _INDOM_TYPES:
        ctx.time(body.timestamp, f, i, rec.offset + _STAMP_AT, "indom.timestamp",
                 2 if tag == TYPE_INDOM_V2 else 3)
        check_indom(ctx, rec, tag, body)
        return body.timestamp  # type: ignore[no-any-return]
    if tag == TYPE_TEXT:
        check_text(ctx, rec, body)
        return None
    ctx.time(body.timestamp, f, i, rec.offset + _STAMP_AT, "labelset.timestamp",
             2 if tag == TYPE_LABEL_V2 else 3)
    check_labelset(ctx, rec, body)
    return body.timestamp  # type: ignore[no-any-return]
