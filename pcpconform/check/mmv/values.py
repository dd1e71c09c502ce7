"""Values and string slots (MMV-CHK-VALUE-*, MMV-CHK-STR-1, MMV-CHK-TOC-4).

The PMDA follows a value's metric and instance back-pointers unchecked, and checks a STRING
value's slot with ``sizeof(MMV_STRINGMAX)`` (4) where 256 bytes are copied (reference
defect 1); here every one must be a whole entry of the right kind inside the file.
"""

from __future__ import annotations

from collections.abc import Container

import numpy as np

from pcpconform.check.mmv.columns import FALLBACKS, CheckFallback, ValueKeys, value_columns
from pcpconform.check.mmv.context import MmvContext, Section, SlotBatch
from pcpconform.mmv.model import TYPE_ELAPSED, TYPE_NOSUPPORT, TYPE_STRING
from pcpconform.mmv.schema import STRING_SIZE, TOC_STRINGS, TOC_VALUES, VALUE_SIZE

__all__ = ["check_values", "check_string_section"]


def check_values(ctx: MmvContext) -> None:
    sect = ctx.sections.get(TOC_VALUES)
    if sect is None:
        return
    assert ctx.structs is not None
    readable = {d.serial for d in ctx.indoms if d.readable}
    seen: dict[tuple[int, int | None], int] = {}
    flags = value_columns(ctx, sect) if ctx.columns else None
    if flags is not None and not flags.flagged.any():
        strings = np.flatnonzero(flags.string)
        if len(strings):
            ctx.slots.append(SlotBatch(flags.extras[strings], strings.astype(np.int64),
                                       ("values[{}].extra",), None, None,
                                       sect.offset + VALUE_SIZE * strings + 8))
        keys = flags.keys(len(ctx.metrics))
        _missing(ctx, keys, keys.counts)
        return
    if flags is not None:
        # the flagged entries one by one; the others record what those checks record
        FALLBACKS[CheckFallback.VALUE_ENTRIES] += int(flags.flagged.sum())
        rows = zip(flags.flagged.tolist(), flags.which.tolist(), flags.instances.tolist(),
                   flags.string.tolist(), flags.extras.tolist())
        for n, (flagged, index, instance, string, extra) in enumerate(rows):
            if flagged:
                _value(ctx, sect, n, seen, readable)
                continue
            seen.setdefault((index, None if instance == ValueKeys.NONE else instance), n)
            if string:
                ctx.slots.append((extra, f"values[{n}].extra", n,
                                  sect.offset + VALUE_SIZE * n + 8))
        _missing(ctx, seen)
        return
    if ctx.columns:
        FALLBACKS[CheckFallback.VALUES] += 1
    for n in range(sect.fitting(ctx.size)):
        _value(ctx, sect, n, seen, readable)
    _missing(ctx, seen)


def _value(ctx: MmvContext, sect: Section, n: int, seen: dict[tuple[int, int | None], int],
           readable: set[int]) -> None:
    """Check values[n]; ``seen`` maps the (metric, instance) of the values before it to the
    first value that has it."""
    assert ctx.structs is not None
    s = ctx.structs
    where = sect.offset + VALUE_SIZE * n
    f = f"values[{n}]"
    v = ctx.parse(s.value, where, VALUE_SIZE)
    m = ctx.metric_at.get(v.metric)
    if m is None:
        inside = v.metric > 0 and v.metric + s.metric_size <= ctx.size
        ctx.add("mmv.value-metric", f"metric back-pointer {v.metric} is not a metric entry"
                + ("" if inside else " and lies outside the file (the PMDA follows it"
                   " unchecked)"), record=n, offset=where + 16, field=f + ".metric")
        return
    instance: int | None = None
    known = True
    if m.indom in (0, 0xFFFFFFFF):
        if v.instance != 0:
            ctx.add("mmv.value-singular-instance", f"metrics[{m.index}] is singular, but the"
                    f" value points at {v.instance} (ignored)", record=n, offset=where + 24,
                    field=f + ".instance")
    elif m.indom not in readable:
        known = False   # the indom is undeclared or unreadable: reported already
    else:
        owner = ctx.instance_at.get(v.instance)
        if owner is None or owner[0] != m.indom:
            ctx.add("mmv.value-instance", f"instance back-pointer {v.instance} is not an"
                    f" instance of indom {m.indom}", record=n, offset=where + 24,
                    field=f + ".instance")
            return
        instance = owner[1]
    key = (m.index, instance)
    if known and key in seen:
        ctx.add("mmv.value-duplicate", f"values[{seen[key]}] already holds metrics[{m.index}]"
                + ("" if instance is None else f" instance {instance}") + " (the PMDA serves"
                " the first)", record=n, offset=where + 16, field=f + ".metric")
    seen.setdefault(key, n)
    if m.type == TYPE_STRING:
        ctx.slot(v.extra, code="mmv.string-value-offset", nul_code="mmv.string-value-nul",
                 fld=f + ".extra", record=n, where=where + 8)
    elif m.type == TYPE_ELAPSED and v.extra > 0:
        ctx.add("mmv.elapsed-extra", f"extra {v.extra} is positive (an open interval is"
                " negative; mmvdump flags it)", record=n, offset=where + 8, field=f + ".extra")


def _missing(ctx: MmvContext, seen: Container[tuple[int, int | None]],
             counts: list[int] | None = None) -> None:
    """``counts``: how many values each metric has, all distinct and of its own instances
    (the column pass's keys), so that as many as wanted means none is missing."""
    indoms = {d.serial: d for d in ctx.indoms}
    for m in ctx.metrics:
        if m.exported is None or m.type == TYPE_NOSUPPORT:
            continue
        singular = m.indom in (0, 0xFFFFFFFF)
        d = None if singular else indoms.get(m.indom)
        if counts is not None and counts[m.index] == (1 if singular else len(d.instances) if d
                                                      else 0):
            continue
        wanted: list[int | None] = [None] if singular else [] if d is None else list(d.instances)
        absent = [i for i in wanted if (m.index, i) not in seen]
        if absent:
            which = "" if absent == [None] else f" for instance(s) {absent[:5]}"
            ctx.add("mmv.value-missing", f"{m.exported} has no value{which}", record=m.index,
                    offset=m.offset, field=f"metrics[{m.index}]")


def check_string_section(ctx: MmvContext) -> None:
    """Every slot reached must be a slot of the strings section (the PMDA ignores that section,
    so this is a cross-check); reported once per file."""
    if not ctx.slots:
        return
    sect = ctx.sections.get(TOC_STRINGS)
    for held in ctx.slots:
        if isinstance(held, SlotBatch):
            at = held.offsets
            if len(at) == 0:
                continue
            if sect is not None:
                inside = (at >= sect.offset) & (at + STRING_SIZE <= sect.end) \
                    & ((at - sect.offset) % STRING_SIZE == 0)
                if inside.all():
                    continue
                held = held.entry(int(np.argmin(inside)))
            else:
                held = held.entry(0)
        slot, fld, record, where = held
        if sect is None or slot < sect.offset or slot + STRING_SIZE > sect.end \
                or (slot - sect.offset) % STRING_SIZE:
            ctx.add("mmv.toc-crosscheck", f"the string slot at {slot} is not a slot of the strings"
                    " section" + ("" if sect else " (there is none)"), record=record,
                    offset=where, field=fld)
            return
