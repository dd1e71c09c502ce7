"""Event arrays (the payload of PM_TYPE_EVENT and PM_TYPE_HIGHRES_EVENT value blocks) read
by ``struct``: the registered pair ``events.parse``, whose reference is the schema's
``event_array(highres).parse``.

Archives of event metrics (PCP's QA suite has several) carry arrays of hundreds of event
records, each with its parameters: the construct schema spends milliseconds on each array.
The fast path builds the same containers (the same fields, in the same order, with the
schema's own types: ``Timestamp``, ``PmID``) for an array that fits its block, and declines
an array that does not, whose error the reference reports.
"""

from __future__ import annotations

import enum
import struct
from typing import Any

from construct import Container, ListContainer

from pcpconform.fastpath import Declined, register
from pcpconform.format.pmtypes import PmID, Timestamp
from pcpconform.format.schema import PM_EVENT_FLAG_MISSED, event_array

__all__ = ["EventReason", "parse_events", "parse_events_schema", "EVENTS"]

_COUNT = struct.Struct(">i")
#: a record's head: its time (T2: 32-bit seconds and microseconds; TS16: 64-bit seconds
#: and nanoseconds), flags, nparams
_HEAD = {False: struct.Struct(">iiIi"), True: struct.Struct(">qqIi")}
#: a parameter's head: pmID, type (8 bits) and len (24 bits: 4 + value bytes)
_PARAM = struct.Struct(">II")


class EventReason(enum.Enum):
    """Why ``parse_events`` leaves an array to the schema."""

    SHORT = "a record or parameter runs past the end of the block"
    PARAM_LEN = "a parameter's len is below 4"


def parse_events_schema(payload: bytes, highres: bool) -> Any:
    """The schema's parse of an event array (raises where it does not fit)."""
    return event_array(highres).parse(payload)


def parse_events(payload: bytes, highres: bool) -> Any:
    """``parse_events_schema``'s containers, by ``struct``; ``Declined`` where the array
    does not fit its block."""
    end = len(payload)
    if end < 4:
        raise Declined(EventReason.SHORT)
    nrecords = _COUNT.unpack_from(payload, 0)[0]
    head = _HEAD[highres]
    pos = 4
    records = ListContainer()
    for _ in range(max(nrecords, 0)):
        if pos + head.size > end:
            raise Declined(EventReason.SHORT)
        sec, frac, flags, nparams = head.unpack_from(payload, pos)
        pos += head.size
        params: Any = None
        if not flags & PM_EVENT_FLAG_MISSED:
            params = ListContainer()
            for _ in range(max(nparams, 0)):
                if pos + 8 > end:
                    raise Declined(EventReason.SHORT)
                pmid, word = _PARAM.unpack_from(payload, pos)
                size = word & 0xFFFFFF
                if size < 4:
                    raise Declined(EventReason.PARAM_LEN)
                value, pad = pos + 4 + size, -size % 4
                if value + pad > end:
                    raise Declined(EventReason.SHORT)
                params.append(Container(pmid=PmID(pmid), type=word >> 24, len=size,
                                        vbuf=payload[pos + 8:value], pad=payload[value:value + pad]))
                pos = value + pad
        records.append(Container(timestamp=Timestamp(sec, frac if highres else frac * 1000), flags=flags,
                                 nparams=nparams, params=params))
    return Container(nrecords=nrecords, records=records, tail=payload[pos:])


EVENTS = register("events.parse", reference=parse_events_schema, fast=parse_events,
                  reasons=EventReason, inputs="event-payload")
