"""Metadata records parsed in bulk: instance domains, descriptors, help text, label sets.

An instance-domain record of a per-process archive holds thousands of instances; the
construct schema reads its two arrays an integer at a time. ``parse_meta_fast``, the
registered fast path ``meta.parse`` of ``parse_meta_schema``, reads them with one
``struct`` unpack each (the header's timestamp too) and gives
the same container. Descriptors, help text and label sets, thousands of small records in
a large archive (each a tree of construct calls), it reads with ``struct`` (a descriptor's
units through the schema's own field). An unknown tag, and anything that does not fit, it
declines (``MetaReason``).
"""

from __future__ import annotations

import enum
import struct
from typing import Any

from construct import Container, ListContainer

from pcpconform.fastpath import Declined, PathStats, register
from pcpconform.format.pmtypes import PmID, PmInDom, Timestamp
from pcpconform.format.schema import INDOM_TAGS, LABEL_TAGS, TYPE_DESC, TYPE_INDOM_V2, TYPE_LABEL_V2, TYPE_TEXT, structs
from pcpconform.format.schema.common import PmUnitsField
from pcpconform.format.schema.meta import string_table_names
from pcpconform.io.reader import RawRecord, parse_payload

__all__ = ["MetaReason", "parse_meta", "parse_meta_fast", "parse_meta_schema", "META"]

_HEAD = struct.Struct(">iIi")          # the tag; then after the timestamp: indom, numinst
_DESC = struct.Struct(">IiIi4si")      # pmid, type, indom, sem, units, numnames
_TEXT = struct.Struct(">II")           # type, ident
_LABEL_HEAD = struct.Struct(">iIi")    # after the timestamp: type, ident, nsets
_SET_HEAD = struct.Struct(">Ii")       # inst, jsonlen
_LABEL = struct.Struct(">HBBHH")       # pmLabel: name, namelen, flags, value, valuelen
_T2 = struct.Struct(">ii")             # a v2 record time: sec, usec
_T3 = struct.Struct(">IIi")            # a v3 record time: the seconds' low and high words, nsec


def _timestamp(payload: bytes, v2: bool) -> Timestamp:
    """The record time after the tag, as ``timestamp_field`` parses it."""
    if v2:
        sec, usec = _T2.unpack_from(payload, 4)
        return Timestamp(sec, usec * 1000)
    return Timestamp.from_t3(*_T3.unpack_from(payload, 4))


class MetaReason(enum.Enum):
    """Why a .meta record is parsed by the construct schema."""

    OTHER = "a tag the schema does not know"
    SHORT = "shorter than its counts say"
    MALFORMED = "a negative count or length (the schema's error to raise)"


def parse_meta_schema(record: RawRecord, version: int) -> Any:
    """A .meta record parsed by the construct schema (the reference)."""
    return parse_payload(structs(version).meta, record, "meta")


def parse_meta_fast(record: RawRecord, version: int) -> Any:
    """``parse_meta_schema`` of an instance-domain record, its arrays unpacked at once."""
    payload = record.payload
    if len(payload) < 4:
        raise Declined(MetaReason.SHORT)
    tag = int.from_bytes(payload[:4], "big", signed=True)
    if tag == TYPE_DESC:
        return _desc(payload)
    if tag == TYPE_TEXT:
        if len(payload) < 12:
            raise Declined(MetaReason.SHORT)
        kind, ident = _TEXT.unpack_from(payload, 4)
        return Container(type=tag, body=Container(type=kind, ident=ident, text=payload[12:]))
    if tag in LABEL_TAGS:
        return _labels(payload, tag)
    if tag not in INDOM_TAGS:
        raise Declined(MetaReason.OTHER)
    size = 8 if tag == TYPE_INDOM_V2 else 12
    at = 4 + size
    if len(payload) < at + 8:
        raise Declined(MetaReason.SHORT)
    stamp = _timestamp(payload, size == 8)
    indom, numinst = struct.unpack_from(">Ii", payload, at)
    at += 8
    count = max(numinst, 0)
    if len(payload) < at + 8 * count:
        raise Declined(MetaReason.SHORT)
    ints = struct.Struct(f">{count}i")
    instlist = ListContainer(ints.unpack_from(payload, at))
    offsets = ListContainer(ints.unpack_from(payload, at + 4 * count))
    strtab = payload[at + 8 * count:]
    body = Container(timestamp=stamp, indom=PmInDom(indom), numinst=numinst,
                     instlist=instlist, offsets=offsets, strtab=strtab,
                     names=string_table_names(offsets, strtab))
    return Container(type=tag, body=body)


def _desc(payload: bytes) -> Any:
    """A descriptor record: pmDesc, then its names."""
    if len(payload) < 4 + _DESC.size:
        raise Declined(MetaReason.SHORT)
    pmid, ptype, indom, sem, units, numnames = _DESC.unpack_from(payload, 4)
    if numnames < 0:
        raise Declined(MetaReason.MALFORMED)
    at = 4 + _DESC.size
    names = ListContainer()
    for _ in range(numnames):
        if len(payload) < at + 4:
            raise Declined(MetaReason.SHORT)
        size = int.from_bytes(payload[at:at + 4], "big", signed=True)
        if size < 0:
            raise Declined(MetaReason.MALFORMED)
        if len(payload) < at + 4 + size:
            raise Declined(MetaReason.SHORT)
        names.append(payload[at + 4:at + 4 + size])
        at += 4 + size
    body = Container(pmid=PmID(pmid), type=ptype, indom=PmInDom(indom), sem=sem,
                     units=_units(units), names=names, tail=payload[at:])
    return Container(type=TYPE_DESC, body=body)


_UNITS: dict[bytes, Any] = {}


def _units(word: bytes) -> Any:
    """``PmUnitsField.parse(word)``, each word parsed once (PmUnits is frozen: shared)."""
    units = _UNITS.get(word)
    if units is None:
        if len(_UNITS) >= 4096:         # a hostile .meta: every word different
            _UNITS.clear()
        units = _UNITS[word] = PmUnitsField.parse(word)
    return units


def _labels(payload: bytes, tag: int) -> Any:
    """A label-set record: its sets, each with its JSON and pmLabel entries (a count below
    zero reads as none, as the schema reads it)."""
    size = 8 if tag == TYPE_LABEL_V2 else 12
    at = 4 + size
    if len(payload) < at + 12:
        raise Declined(MetaReason.SHORT)
    stamp = _timestamp(payload, size == 8)
    kind, ident, nsets = _LABEL_HEAD.unpack_from(payload, at)
    at += 12
    sets = ListContainer()
    for _ in range(max(nsets, 0)):
        if len(payload) < at + 8:
            raise Declined(MetaReason.SHORT)
        inst, jsonlen = _SET_HEAD.unpack_from(payload, at)
        at += 8
        end = at + max(jsonlen, 0)
        if len(payload) < end + 4:
            raise Declined(MetaReason.SHORT)
        json = payload[at:end]
        nlabels = int.from_bytes(payload[end:end + 4], "big", signed=True)
        at = end + 4
        count = max(nlabels, 0)
        if len(payload) < at + _LABEL.size * count:
            raise Declined(MetaReason.SHORT)
        labels = ListContainer(Container(name=n, namelen=nl, flags=fl, value=v, valuelen=vl)
                               for n, nl, fl, v, vl in _LABEL.iter_unpack(payload[at:at + _LABEL.size * count]))
        at += _LABEL.size * count
        sets.append(Container(inst=inst, jsonlen=jsonlen, json=json, nlabels=nlabels, labels=labels))
    body = Container(timestamp=stamp, type=kind, ident=ident, nsets=nsets,
                     sets=sets, tail=payload[at:])
    return Container(type=tag, body=body)


def parse_meta(record: RawRecord, version: int, stats: PathStats) -> Any:
    """A .meta record parsed (``meta.parse``, counted in ``stats``)."""
    return META(stats, record, version)


META = register("meta.parse", reference=parse_meta_schema, fast=parse_meta_fast, reasons=MetaReason,
                inputs="meta-record")
