"""Metadata (.meta) record payloads: descriptors, instance domains, label sets, help text.

A .meta record's payload starts with a BE32 type tag. Records are not padded, so they may
begin at any byte offset. Every payload ends with ``tail``: bytes libpcp tolerates after
the last field, kept so that a rebuild loses nothing.
"""

from __future__ import annotations

import operator
from itertools import accumulate

from construct import (
    Array,
    Bytes,
    Computed,
    Construct,
    GreedyBytes,
    Int8ub,
    Int16ub,
    Int32sb,
    Int32ub,
    Prefixed,
    PrefixedArray,
    Switch,
    this,
)

from pcpconform.format.schema.common import (
    DocStruct,
    PmIDField,
    PmInDomField,
    PmUnitsField,
    RemainingBytes,
    timestamp_field,
)

__all__ = [
    "TYPE_DESC", "TYPE_INDOM_V2", "TYPE_LABEL_V2", "TYPE_TEXT", "TYPE_INDOM",
    "TYPE_INDOM_DELTA", "TYPE_LABEL", "META_TYPES", "META_TYPE_NAMES", "META_KINDS", "INDOM_TAGS",
    "LABEL_TAGS",
    "desc_payload", "indom_payload", "labelset_payload", "text_payload", "meta_payload",
    "string_table_names", "PmLabel", "LabelSet",
]

TYPE_DESC = 1
TYPE_INDOM_V2 = 2
TYPE_LABEL_V2 = 3
TYPE_TEXT = 4
TYPE_INDOM = 5
TYPE_INDOM_DELTA = 6
TYPE_LABEL = 7

#: Tags each archive version writes (libpcp loads all seven in either version).
META_TYPES = {2: (TYPE_DESC, TYPE_INDOM_V2, TYPE_LABEL_V2, TYPE_TEXT),
              3: (TYPE_DESC, TYPE_TEXT, TYPE_INDOM, TYPE_INDOM_DELTA, TYPE_LABEL)}
#: which tags make each kind of metadata record, in either version
META_KINDS = {"desc": (TYPE_DESC,), "indom": (TYPE_INDOM_V2, TYPE_INDOM, TYPE_INDOM_DELTA),
              "text": (TYPE_TEXT,), "label": (TYPE_LABEL_V2, TYPE_LABEL)}
INDOM_TAGS = META_KINDS["indom"]
LABEL_TAGS = META_KINDS["label"]
META_TYPE_NAMES = {TYPE_DESC: "desc", TYPE_INDOM_V2: "indom_v2", TYPE_LABEL_V2: "label_v2",
                   TYPE_TEXT: "text", TYPE_INDOM: "indom", TYPE_INDOM_DELTA: "indom_delta",
                   TYPE_LABEL: "label"}


def desc_payload() -> Construct:
    """TYPE_DESC: pmDesc then the metric's names (same layout in v2 and v3)."""
    return DocStruct(
        "pmid" / PmIDField * "metric identifier",
        "type" / Int32sb * "value type, PM_TYPE_* (-1 NOSUPPORT ... 10 HIGHRES_EVENT)",
        "indom" / PmInDomField * "instance domain, or PM_INDOM_NULL for a singular metric",
        "sem" / Int32sb * "semantics, PM_SEM_*: 1 counter, 3 instant, 4 discrete",
        "units" / PmUnitsField * "dimensions and scales, bit-packed into one word",
        "names" / PrefixedArray(Int32sb, Prefixed(Int32sb, GreedyBytes))
        * "numnames, then each name as its length and bytes, no NUL, no padding",
        "tail" / RemainingBytes() * "bytes after the last name (none in a well-formed record)",
    )


def string_table_names(offsets: list[int], strtab: bytes) -> list[bytes | None]:
    """Instance names from an indom string table; None where the offset is -1 (deleted)."""
    if strtab.endswith(b"\0"):       # the writer's table: each name once, in order, NUL after each
        parts = strtab[:-1].split(b"\0")
        # name k starts past the k names before it and their NULs
        if len(parts) == len(offsets) and list(offsets) == list(
                map(operator.add, accumulate(map(len, parts[:-1]), initial=0), range(len(parts)))):
            whole: list[bytes | None] = list(parts)
            return whole
    names: list[bytes | None] = []
    for off in offsets:
        if off < 0 or off > len(strtab):
            names.append(None)
            continue
        end = strtab.find(b"\0", off)
        names.append(strtab[off:] if end < 0 else strtab[off:end])
    return names


def indom_payload(version: int) -> Construct:
    """TYPE_INDOM_V2 (T2), TYPE_INDOM and TYPE_INDOM_DELTA (T3): instance ids, offsets, names."""
    return DocStruct(
        "timestamp" / timestamp_field(version) * "time from which this record is in force",
        "indom" / PmInDomField * "instance domain identifier",
        "numinst" / Int32sb * "N: number of instances (in a delta: added plus deleted)",
        "instlist" / Array(lambda ctx: max(ctx.numinst, 0), Int32sb)
        * "internal instance identifiers, each >= 0",
        "offsets" / Array(lambda ctx: max(ctx.numinst, 0), Int32sb)
        * "byte offset of each name in the string table; -1 marks a deleted instance"
          " (delta records only)",
        "strtab" / RemainingBytes() * "string table: packed NUL-terminated external names",
        "names" / Computed(lambda ctx: string_table_names(ctx.offsets, ctx.strtab)),
    )


#: pmLabel: offsets and lengths of one name/value pair inside its label set's JSON.
PmLabel = DocStruct(
    "name" / Int16ub * "byte offset of the label name in the set's JSON",
    "namelen" / Int8ub * "length of the name in bytes",
    "flags" / Int8ub * "label class bit(s) | PM_LABEL_COMPOUND 0x40 | PM_LABEL_OPTIONAL 0x80",
    "value" / Int16ub * "byte offset of the label value in the set's JSON",
    "valuelen" / Int16ub * "length of the value in bytes",
)

#: One label set: instance, JSON text, then nlabels pmLabel entries (none if nlabels < 0).
LabelSet = DocStruct(
    "inst" / Int32ub * "instance; PM_IN_NULL unless the record's type is INSTANCES",
    "jsonlen" / Int32sb * "J: length of the JSON text, 0 to 65535",
    "json" / Bytes(lambda ctx: max(ctx.jsonlen, 0)) * "the labels as one JSON object, no NUL",
    "nlabels" / Int32sb * "K: number of pmLabel entries (< 0: an error code, no entries)",
    "labels" / Array(lambda ctx: max(ctx.nlabels, 0), PmLabel) * "name/value locations",
)


def labelset_payload(version: int) -> Construct:
    """TYPE_LABEL_V2 (T2) and TYPE_LABEL (T3): label sets for one (type, ident)."""
    return DocStruct(
        "timestamp" / timestamp_field(version) * "time from which these sets are in force",
        "type" / Int32sb
        * "PM_LABEL_* class (may carry the COMPOUND/OPTIONAL bits, which readers mask off)",
        "ident" / Int32ub * "what is labelled: PM_IN_NULL, domain, pmInDom or pmID by type",
        "nsets" / Int32sb * "number of label sets (1 unless the type is INSTANCES)",
        "sets" / Array(lambda ctx: max(ctx.nsets, 0), LabelSet) * "the label sets, packed",
        "tail" / RemainingBytes() * "bytes after the last set (none in a well-formed record)",
    )


def text_payload() -> Construct:
    """TYPE_TEXT: help text for a pmID or pmInDom, NUL-terminated."""
    return DocStruct(
        "type" / Int32ub
        * "PM_TEXT_ONELINE 1 or PM_TEXT_HELP 2, or-ed with PM_TEXT_PMID 4 or PM_TEXT_INDOM 8",
        "ident" / Int32ub * "pmID or pmInDom, as the type bits say",
        "text" / RemainingBytes() * "the text, NUL-terminated (the NUL is stored)",
    )


def _body_cases(version: int) -> dict[int, Construct]:
    # Every tag is parsed in every version, as libpcp does; the version only sets the
    # timestamp width of the timestamped records.
    return {
        TYPE_DESC: desc_payload(),
        TYPE_INDOM_V2: indom_payload(2),
        TYPE_LABEL_V2: labelset_payload(2),
        TYPE_TEXT: text_payload(),
        TYPE_INDOM: indom_payload(3),
        TYPE_INDOM_DELTA: indom_payload(3),
        TYPE_LABEL: labelset_payload(3),
    }


def meta_payload(version: int) -> Construct:
    """A .meta record payload: the BE32 type tag and the body it selects."""
    return DocStruct(
        "type" / Int32sb * "record type tag, TYPE_*",
        "body" / Switch(this.type, _body_cases(version), default=RemainingBytes())
        * "record body, selected by the tag",
    )

