"""Metadata records parsed in bulk where they are large: instance domains.

An instance-domain record of a per-process archive holds thousands of instances; the
construct schema reads its two arrays an integer at a time. ``parse_meta_fast``, the
registered fast path ``meta.parse`` of ``parse_meta_schema``, reads them with one
``struct`` unpack each (the header's timestamp through the schema's own field) and gives
the same container; every other record, and anything that does not fit, it declines
(``MetaReason``).
"""

from __future__ import annotations

import enum
import struct
from typing import Any

from construct import Container, ListContainer

from pcpconform.fastpath import Declined, PathStats, register
from pcpconform.format.pmtypes import PmInDom
from pcpconform.format.schema import INDOM_TAGS, TYPE_INDOM_V2, structs
from pcpconform.format.schema.common import timestamp_field
from pcpconform.format.schema.meta import string_table_names
from pcpconform.io.reader import RawRecord, parse_payload

__all__ = ["MetaReason", "parse_meta", "parse_meta_fast", "parse_meta_schema", "META"]

_HEAD = struct.Struct(">iIi")          # the tag; then after the timestamp: indom, numinst
_TIMESTAMPS = {2: (timestamp_field(2), 8), 3: (timestamp_field(3), 12)}


class MetaReason(enum.Enum):
    """Why a .meta record is parsed by the construct schema."""

    NOT_INDOM = "not an instance-domain record"
    SHORT = "shorter than its counts say"


def parse_meta_schema(record: RawRecord, version: int) -> Any:
    """A .meta record parsed by the construct schema (the reference)."""
    return parse_payload(structs(version).meta, record, "meta")


def parse_meta_fast(record: RawRecord, version: int) -> Any:
    """``parse_meta_schema`` of an instance-domain record, its arrays unpacked at once."""
    payload = record.payload
    if len(payload) < 4:
        raise Declined(MetaReason.SHORT)
    tag = int.from_bytes(payload[:4], "big", signed=True)
    if tag not in INDOM_TAGS:
        raise Declined(MetaReason.NOT_INDOM)
    stamp, size = _TIMESTAMPS[2 if tag == TYPE_INDOM_V2 else 3]
    at = 4 + size
    if len(payload) < at + 8:
        raise Declined(MetaReason.SHORT)
    indom, numinst = struct.unpack_from(">Ii", payload, at)
    at += 8
    count = max(numinst, 0)
    if len(payload) < at + 8 * count:
        raise Declined(MetaReason.SHORT)
    ints = struct.Struct(f">{count}i")
    instlist = ListContainer(ints.unpack_from(payload, at))
    offsets = ListContainer(ints.unpack_from(payload, at + 4 * count))
    strtab = payload[at + 8 * count:]
    body = Container(timestamp=stamp.parse(payload[4:4 + size]), indom=PmInDom(indom), numinst=numinst,
                     instlist=instlist, offsets=offsets, strtab=strtab,
                     names=string_table_names(offsets, strtab))
    return Container(type=tag, body=body)


def parse_meta(record: RawRecord, version: int, stats: PathStats) -> Any:
    """A .meta record parsed (``meta.parse``, counted in ``stats``)."""
    return META(stats, record, version)


META = register("meta.parse", reference=parse_meta_schema, fast=parse_meta_fast, reasons=MetaReason,
                inputs="meta-record")
