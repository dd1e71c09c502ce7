"""Instance domains, full and delta, and their history over time (FMT-INDOM)."""

from __future__ import annotations

import bisect
from typing import Any

from pcpconform.check.state import Context
from pcpconform.format.schema import TYPE_INDOM_DELTA, TYPE_INDOM_V2
from pcpconform.io.reader import RawRecord

__all__ = ["check_indom"]

_DELETED = -1   # a delta's name offset for a deleted instance


def check_indom(ctx: Context, rec: RawRecord, tag: int, b: Any) -> None:
    """Check one instance domain record and add it to the indom's history."""
    f = rec.file
    where = {"record": rec.index, "offset": rec.offset}
    delta = tag == TYPE_INDOM_DELTA
    if b.numinst <= 0:
        ctx.add("indom.empty", f, f"instance domain {b.indom} with {b.numinst} instances", field="indom.numinst",
                **where)
        return
    if _clean(b.instlist, b.offsets, b.names, b.strtab):     # nothing for the walk below to find
        names = dict(zip(b.instlist, b.names))
    else:
        names = _walk(ctx, f, where, delta, b)
    if tag != TYPE_INDOM_V2 and list(b.instlist) != sorted(b.instlist):
        ctx.add("indom.unsorted", f, "instance ids are not in ascending order", field="indom.instlist", **where)
    history = ctx.st.indoms.setdefault(int(b.indom), [])
    stamps = ctx.st.indom_stamps.setdefault(int(b.indom), [])
    stamp = b.timestamp.total_nsec()
    pos = bisect.bisect_right(stamps, stamp)
    if delta:
        names = _apply_delta(ctx, f, where, b, history[pos - 1][2] if history and pos else None)
    history.insert(pos, (stamp, frozenset(names), names))
    stamps.insert(pos, stamp)


def _clean(instlist: list[int], offsets: list[int], names: list[bytes | None], strtab: bytes) -> bool:
    """Whether ``_walk`` would report nothing: ids not negative and distinct, each name
    offset inside a table that ends in a NUL (so every name has its NUL; none deleted),
    names not empty and distinct. A per-process indom has thousands of instances."""
    n = len(instlist)
    return (strtab.endswith(b"\0") and min(instlist, default=0) >= 0 and min(offsets, default=0) >= 0
            and max(offsets, default=0) < len(strtab) and len(set(instlist)) == n
            and all(names) and len(set(names)) == n)


def _walk(ctx: Context, f: str, where: dict[str, Any], delta: bool, b: Any) -> dict[int, bytes]:
    """Each instance checked in turn; the instances with a name, by id."""
    names: dict[int, bytes] = {}
    seen_names: set[bytes] = set()
    strtab = b.strtab
    for k, (inst, off, name) in enumerate(zip(b.instlist, b.offsets, b.names)):
        fld = f"indom.instlist[{k}]"
        if inst < 0:
            ctx.add("indom.inst-negative", f, f"instance id {inst}", field=fld, **where)
        if off == _DELETED:
            if not delta:
                ctx.add("indom.deleted-in-full", f, "name offset -1 in a full instance domain",
                        field=f"indom.offsets[{k}]", **where)
            continue
        if off < 0 or off >= len(strtab) or strtab.find(b"\0", off) < 0:     # no copy of the table's rest
            ctx.add("indom.offset", f, f"name offset {off} with a string table of {len(strtab)} bytes",
                    field=f"indom.offsets[{k}]", **where)
            continue
        if inst in names:
            ctx.add("indom.duplicate-id", f, f"instance id {inst} twice", field=fld, **where)
        if name in seen_names:
            ctx.add("indom.duplicate-name", f, f"instance name {name[:40]!r} twice", field=fld, **where)
        if not name:
            ctx.add("indom.empty-name", f, f"instance {inst} has an empty name", field=fld, **where)
        names[inst] = name or b""
        seen_names.add(name or b"")
    return names


def _apply_delta(ctx: Context, f: str, where: dict[str, Any], b: Any,
                 before: dict[int, bytes] | None) -> dict[int, bytes]:
    """The instances after a delta applied to those in force before it."""
    if before is None:
        ctx.add("indom.delta-no-full", f, f"delta for {b.indom} with no earlier full instance domain",
                field="indom", **where)
    state = dict(before or {})
    for inst, name in zip(b.instlist, b.names):
        if name is None:
            if inst not in state:
                ctx.add("indom.delta-change", f, f"delta deletes absent instance {inst}", field="indom", **where)
            state.pop(inst, None)
        else:
            if inst in state:
                ctx.add("indom.delta-change", f, f"delta re-adds present instance {inst}", field="indom", **where)
            state[inst] = name
    return state
