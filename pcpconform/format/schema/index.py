"""Temporal index (.index) entries: unframed, fixed size, after the framed label."""

from __future__ import annotations

from construct import Construct, Int32sb, Int64sb

from pcpconform.format.schema.common import DocStruct, timestamp_field

__all__ = ["index_entry", "INDEX_ENTRY_SIZE"]

INDEX_ENTRY_SIZE = {2: 20, 3: 32}


def index_entry(version: int) -> Construct:
    """One index entry: at this time, volume ``vol`` can be read from ``off_data`` and
    ``.meta`` has been written up to ``off_meta``. v2 offsets are BE32, v3 BE64."""
    offset = Int32sb if version == 2 else Int64sb
    return DocStruct(
        "timestamp" / timestamp_field(version) * "time of the entry",
        "vol" / Int32sb * "data volume number",
        "off_meta" / offset * "byte offset in `.meta` up to which metadata had been written",
        "off_data" / offset * "byte offset in volume `vol` from which to read at this time",
    )
