"""Declarative construct schemas for every PCP archive record, one factory per version.

``ArchiveStructs(version)`` builds every record schema once for archive version 2 or 3;
version differences (timestamp width, label size, index offset width, which metadata tags
are written) are parameters of one declaration, never copies.
"""

from __future__ import annotations

from functools import cache

from construct import Construct

from pcpconform.format.schema.common import Framed
from pcpconform.format.schema.index import INDEX_ENTRY_SIZE, index_entry
from pcpconform.format.schema.label import LABEL_SIZE, PM_LOG_MAGIC, PM_LOG_VOL_META, PM_LOG_VOL_TI, label_payload
from pcpconform.format.schema.meta import (
    INDOM_TAGS,
    LABEL_TAGS,
    META_KINDS,
    META_TYPE_NAMES,
    META_TYPES,
    TYPE_DESC,
    TYPE_INDOM,
    TYPE_INDOM_DELTA,
    TYPE_INDOM_V2,
    TYPE_LABEL,
    TYPE_LABEL_V2,
    TYPE_TEXT,
    LabelSet,
    PmLabel,
    desc_payload,
    indom_payload,
    labelset_payload,
    meta_payload,
    text_payload,
)
from pcpconform.format.schema.result import (
    PM_EVENT_FLAG_MISSED,
    RESULT_HEADER_SIZE,
    PmValue,
    PmValueBlock,
    PmValueSet,
    block_index,
    block_offset,
    event_array,
    first_block_offset,
    result_payload,
)

__all__ = [
    "ArchiveStructs", "SUPPORTED_VERSIONS", "LABEL_SIZE", "INDEX_ENTRY_SIZE", "PM_LOG_MAGIC",
    "PM_LOG_VOL_META", "PM_LOG_VOL_TI", "META_TYPES", "META_TYPE_NAMES", "TYPE_DESC",
    "TYPE_INDOM_V2", "TYPE_LABEL_V2", "TYPE_TEXT", "TYPE_INDOM", "TYPE_INDOM_DELTA",
    "TYPE_LABEL", "PM_EVENT_FLAG_MISSED", "RESULT_HEADER_SIZE", "PmValue", "PmValueSet",
    "PmValueBlock", "PmLabel", "LabelSet", "block_index", "block_offset", "event_array",
    "first_block_offset", "META_KINDS", "INDOM_TAGS", "LABEL_TAGS",
]

SUPPORTED_VERSIONS = (2, 3)


class ArchiveStructs:
    """Every record schema of one archive version.

    Payload schemas (``label``, ``meta``, ``result``) describe what lies inside the record
    framing; the ``*_record`` forms add the framing; ``index_entry`` is unframed.
    """

    def __init__(self, version: int) -> None:
        if version not in SUPPORTED_VERSIONS:
            raise ValueError(f"archive version {version} is not 2 or 3")
        self.version = version
        self.label: Construct = label_payload(version)
        self.meta: Construct = meta_payload(version)
        self.result: Construct = result_payload(version)
        self.index_entry: Construct = index_entry(version)
        self.label_record: Construct = Framed(self.label)
        self.meta_record: Construct = Framed(self.meta)
        self.result_record: Construct = Framed(self.result)
        self.label_size = LABEL_SIZE[version]
        self.index_entry_size = INDEX_ENTRY_SIZE[version]
        self.result_header_size = RESULT_HEADER_SIZE[version]
        self.mark_size = self.result_header_size + 4
        self.magic = PM_LOG_MAGIC | version
        # per-tag body schemas, for the spec's field tables and the generators
        self.desc = desc_payload()
        self.indom = indom_payload(version)
        self.labelset = labelset_payload(version)
        self.text = text_payload()


@cache
def structs(version: int) -> ArchiveStructs:
    """The shared ArchiveStructs of a version (schemas are immutable, so one is enough)."""
    return ArchiveStructs(version)
