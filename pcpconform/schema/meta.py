"""Metadata (.meta) record payloads: descriptors, instance domains, label sets, help text.

A .meta record's payload starts with a BE32 type tag. Records are not padded, so they may
begin at any byte offset. Every payload ends with ``tail``: bytes libpcp tolerates after
the last field, kept so that a rebuild loses nothing.
"""

from __future__ import annotations

from construct import (
    Array, Bytes, Computed, Construct, GreedyBytes, Int8ub, Int16ub, Int32sb, Int32ub, Prefixed, PrefixedArray, Struct,
    Switch, this,
)

from .common import PmIDField, PmInDomField, PmUnitsField, RemainingBytes, timestamp_field

__all__ = [
    "TYPE_DESC", "TYPE_INDOM_V2", "TYPE_LABEL_V2", "TYPE_TEXT", "TYPE_INDOM",
    "TYPE_INDOM_DELTA", "TYPE_LABEL", "META_TYPES", "META_TYPE_NAMES",
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
META_TYPE_NAMES = {TYPE_DESC: "desc", TYPE_INDOM_V2: "indom_v2", TYPE_LABEL_V2: "label_v2",
                   TYPE_TEXT: "text", TYPE_INDOM: "indom", TYPE_INDOM_DELTA: "indom_delta",
                   TYPE_LABEL: "label"}


def desc_payload() -> Construct:
    """TYPE_DESC: pmDesc then the metric's names (same layout in v2 and v3)."""
    return Struct(
        "pmid" / PmIDField,
        "type" / Int32sb,            # PM_TYPE_*
        "indom" / PmInDomField,      # or PM_INDOM_NULL
        "sem" / Int32sb,             # PM_SEM_*
        "units" / PmUnitsField,
        # numnames, then each name as BE32 length + bytes, no NUL, no padding
        "names" / PrefixedArray(Int32sb, Prefixed(Int32sb, GreedyBytes)),
        "tail" / RemainingBytes(),
    )


def string_table_names(offsets: list[int], strtab: bytes) -> list[bytes | None]:
    """Instance names from an indom string table; None where the offset is -1 (deleted)."""
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
    return Struct(
        "timestamp" / timestamp_field(version),
        "indom" / PmInDomField,
        "numinst" / Int32sb,
        "instlist" / Array(lambda ctx: max(ctx.numinst, 0), Int32sb),
        # byte offsets into the string table; -1 marks a deleted instance (delta only)
        "offsets" / Array(lambda ctx: max(ctx.numinst, 0), Int32sb),
        "strtab" / RemainingBytes(),   # packed NUL-terminated external names
        "names" / Computed(lambda ctx: string_table_names(ctx.offsets, ctx.strtab)),
    )


#: pmLabel: offsets and lengths of one name/value pair inside its label set's JSON.
PmLabel = Struct(
    "name" / Int16ub,
    "namelen" / Int8ub,
    "flags" / Int8ub,       # label class bits | PM_LABEL_COMPOUND 0x40 | PM_LABEL_OPTIONAL 0x80
    "value" / Int16ub,
    "valuelen" / Int16ub,
)

#: One label set: instance, JSON text, then nlabels pmLabel entries (none if nlabels < 0).
LabelSet = Struct(
    "inst" / Int32ub,
    "jsonlen" / Int32sb,
    "json" / Bytes(lambda ctx: max(ctx.jsonlen, 0)),
    "nlabels" / Int32sb,
    "labels" / Array(lambda ctx: max(ctx.nlabels, 0), PmLabel),
)


def labelset_payload(version: int) -> Construct:
    """TYPE_LABEL_V2 (T2) and TYPE_LABEL (T3): label sets for one (type, ident)."""
    return Struct(
        "timestamp" / timestamp_field(version),
        "type" / Int32sb,       # PM_LABEL_* (may carry COMPOUND/OPTIONAL bits)
        "ident" / Int32ub,      # domain, pmInDom, pmID or PM_IN_NULL by type
        "nsets" / Int32sb,
        "sets" / Array(lambda ctx: max(ctx.nsets, 0), LabelSet),
        "tail" / RemainingBytes(),
    )


def text_payload() -> Construct:
    """TYPE_TEXT: help text for a pmID or pmInDom, NUL-terminated."""
    return Struct(
        "type" / Int32ub,       # PM_TEXT_ONELINE|HELP | PM_TEXT_PMID|INDOM
        "ident" / Int32ub,      # pmID or pmInDom per the type bits
        "text" / RemainingBytes(),   # the writer includes the NUL terminator
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
    return Struct(
        "type" / Int32sb,
        "body" / Switch(this.type, _body_cases(version), default=RemainingBytes()),
    )

