"""Event arrays inside PM_TYPE_EVENT and PM_TYPE_HIGHRES_EVENT value blocks (FMT-EVENT)."""

from __future__ import annotations

from typing import Any

from pcpconform.check.state import Context
from pcpconform.format.schema import PM_EVENT_FLAG_MISSED
from pcpconform.io.events import EVENTS

__all__ = ["check_events"]

#: value bytes of a fixed-size parameter, by PM_TYPE (32, U32, 64, U64, FLOAT, DOUBLE)
_PARAM_SIZE = {0: 4, 1: 4, 2: 8, 3: 8, 4: 4, 5: 8}


def check_events(ctx: Context, f: str, where: dict[str, Any], fld: str, highres: bool, payload: bytes) -> None:
    try:
        arr = EVENTS(ctx.report.paths, payload, highres)
    except Exception:  # construct raises several kinds; all mean "does not fit"
        ctx.add("event.structure", f, "event array does not fit its value block", field=fld, **where)
        return
    if arr.nrecords < 0 or arr.tail:
        ctx.add("event.structure", f, f"nrecords {arr.nrecords}, {len(arr.tail)} bytes left over",
                field=fld, **where)
    for r in arr.records:
        if r.flags & PM_EVENT_FLAG_MISSED and r.flags != PM_EVENT_FLAG_MISSED:
            ctx.add("event.missed", f, f"MISSED record with flags 0x{r.flags:08x}", field=fld, **where)
        for p in r.params or []:
            want = _PARAM_SIZE.get(p.type)
            if want is not None and len(p.vbuf) != want:
                ctx.add("event.param-len", f, f"parameter {p.pmid} of type {p.type} has "
                        f"{len(p.vbuf)} value bytes", field=fld, **where)
