"""Metrics (MMV-CHK-METRIC-*): names by the PMDA's rule and by the PMNS rule, items, types,
semantics, units and indom references."""

from __future__ import annotations

import re
from functools import cache
from typing import Any, NamedTuple

import numpy as np

from pcpconform.check.mmv.columns import (
    FALLBACKS,
    CheckFallback,
    inline_texts,
    section_table,
    slot_texts,
    slots_ok,
)
from pcpconform.check.mmv.context import MetricFact, MmvContext, Section, SlotBatch
from pcpconform.format.pmtypes import PmUnits
from pcpconform.mmv.model import (
    MMV_TYPES,
    SEM_COUNTER,
    SEM_DISCRETE,
    SEM_INSTANT,
    TYPE_ELAPSED,
    exported_name,
    pmda_name_ok,
)
from pcpconform.mmv.pmns import CONTROL_NAMES, CONTROL_NAMES_PCP7, Placed, Placement, PmdaNamespace
from pcpconform.mmv.schema import MMV_NAMEMAX, TOC_METRICS

__all__ = ["check_metrics", "pmda_name_ok", "pmns_name_ok", "report_placement"]

#: the PMNS rule: each dot-separated component starts with a letter
_PMNS_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z][A-Za-z0-9_]*)*")
_SEMANTICS = (0, SEM_COUNTER, SEM_INSTANT, SEM_DISCRETE)
_USEC = PmUnits(dimTime=1, scaleTime=1).to_word()


def pmns_name_ok(name: str) -> bool:
    return _PMNS_NAME.fullmatch(name) is not None


def check_metrics(ctx: MmvContext) -> None:
    sect = ctx.sections.get(TOC_METRICS)
    if sect is None:
        return
    assert ctx.structs is not None
    s = ctx.structs
    serials = {d.serial for d in ctx.indoms}
    if ctx.columns:
        if _metric_columns(ctx, sect, serials):
            return
        FALLBACKS[CheckFallback.METRICS] += 1
    items: dict[int, int] = {}
    names = _FileNames()
    for n in range(sect.fitting(ctx.size)):
        where = sect.offset + s.metric_size * n
        f = f"metrics[{n}]"
        m = ctx.parse(s.metric, where, s.metric_size)
        name = _name(ctx, m.name, where, f, n)
        fact = _metric(ctx, n, where, name, m, serials, items, names)
        base = where + _after_name(ctx)
        for k, label in enumerate(("shorttext", "helptext")):
            ctx.slot(m[label], code="mmv.help-offset", nul_code="mmv.string-nul",
                     fld=f"{f}.{label}", record=n, where=base + 24 + 8 * k, optional=True)
        ctx.metrics.append(fact)
        ctx.metric_at[where] = fact


def _metric(ctx: MmvContext, n: int, where: int, name: str | None, m: Any, serials: set[int],
            items: dict[int, int], names: _FileNames) -> MetricFact:
    """Everything about metrics[n] but its string slots; ``items`` maps the items met so far
    to their first metric, ``names`` is the PMDA's namespace of the file so far."""
    f = f"metrics[{n}]"
    exported = None
    if name is not None:
        exported = _check_name(ctx, name, where, f, n)
    if m.item > 1023:
        ctx.add("mmv.metric-item", f"item {m.item} does not fit the PMID's 10 bits: not exported",
                record=n, offset=where + _after_name(ctx), field=f + ".item")
        exported = None
    elif m.item in items:
        ctx.add("mmv.metric-item-duplicate", f"item {m.item} is also metrics[{items[m.item]}]:"
                " the PMDA drops this one", record=n, offset=where + _after_name(ctx),
                field=f + ".item")
        exported = None
    items.setdefault(m.item, n)
    candidate = exported        # the name the PMDA inserts (its name and item pass)
    if exported is not None:
        placed = names.add(exported)
        if not placed.exported:
            owner = names.owners.get(placed.other or "")
            report_placement(ctx, placed, exported, n, where,
                             "the PMDA's own metric" if owner is None else f"metrics[{owner}]")
            exported = None
        else:
            names.owners[exported] = n
    fact = MetricFact(n, where, name, exported, m.item, m.type, m.semantics, m.dimension,
                      m.indom & 0xFFFFFFFF, candidate)
    _check_desc(ctx, fact, serials, f)
    return fact


def report_placement(ctx: MmvContext, placed: Placed, name: str, n: int, where: int,
                     owner: str) -> None:
    """A name the PMDA does not export (MMV-ID-3): a duplicate, or a leaf/non-leaf conflict
    with an earlier name, ``placed.other``, which ``owner`` describes ("metrics[3]",
    "metrics[3] of file a")."""
    f = f"metrics[{n}].name"
    if placed.placement is Placement.DUPLICATE:
        if placed.other in CONTROL_NAMES_PCP7:
            whose = ("the name of PCP 7's own control metric (PCP 6.0 and 6.3 export this"
                     " metric)")
        elif placed.other in CONTROL_NAMES:
            whose = "the name of the PMDA's own control metric"
        else:
            whose = f"the name of {owner}"
        ctx.add("mmv.metric-name-duplicate", f"{name} is also {whose}: the PMDA does not create"
                " this metric", record=n, offset=where, field=f)
    elif placed.placement is Placement.UNDER_LEAF:
        ctx.add("mmv.metric-name-prefix", f"{name} lies below {placed.other}, the name of"
                f" {owner}: the PMDA serves its PMID but no name or traversal reaches it",
                record=n, offset=where, field=f)
    else:
        ctx.add("mmv.metric-name-prefix", f"{name} is a non-leaf of the PMNS, above"
                f" {placed.other} ({owner}): the PMDA serves its PMID with no name",
                record=n, offset=where, field=f)


def _metric_columns(ctx: MmvContext, sect: Section, serials: set[int]) -> bool:
    """The metrics checked as check_metrics checks them, their names and help texts read by
    columns; False (nothing reported or recorded) when a string slot needs the per-entry
    checks."""
    assert ctx.structs is not None
    count = sect.fitting(ctx.size)
    table = section_table(ctx, ctx.structs.metric, sect.offset, count)
    if ctx.version == 1:
        names = inline_texts(table["name"])
    else:
        names = slot_texts(ctx, table["name"].astype(np.int64).tolist())
    # as signed: an offset above 2^63 is no slot
    helps = np.stack([table["shorttext"], table["helptext"]], axis=1).astype(np.int64)
    if names is None or not slots_ok(ctx, helps[helps != 0].tolist()):
        return False
    items: dict[int, int] = {}
    exported = _FileNames()
    size = ctx.structs.metric_size
    entries = map(_Entry._make, zip(table["item"].tolist(), table["type"].tolist(),
                                    table["semantics"].tolist(), table["dimension"].tolist(),
                                    table["indom"].tolist()))
    for n, (name, m) in enumerate(zip(names, entries)):
        where = sect.offset + size * n
        fact = _metric(ctx, n, where, name, m, serials, items, exported)
        ctx.metrics.append(fact)
        ctx.metric_at[where] = fact
    # the slots in the per-entry order: each metric's name (v2 and v3), short, long help
    wheres = sect.offset + size * np.arange(count, dtype=np.int64)
    after = _after_name(ctx)
    slots = np.concatenate([table["name"].astype(np.int64)[:, None] if ctx.version > 1
                            else np.zeros((count, 1), np.int64), helps], axis=1)
    at = np.stack([wheres, wheres + after + 24, wheres + after + 32], axis=1)
    present = slots != 0
    if ctx.version > 1:
        present[:, 0] = True
    rows, kinds = np.nonzero(present)
    if len(rows):
        ctx.slots.append(SlotBatch(slots[present], rows.astype(np.int64),
                                   ("metrics[{}].name", "metrics[{}].shorttext",
                                    "metrics[{}].helptext"), kinds.astype(np.int64), None,
                                   at[present]))
    return True


class _FileNames(PmdaNamespace):
    """The namespace of one file checked alone, and the metric that owns each name."""

    def __init__(self) -> None:
        super().__init__()
        self.owners: dict[str, int] = {}


class _Entry(NamedTuple):
    """The fields of a metric entry _metric reads."""

    item: int
    type: int
    semantics: int
    dimension: int
    indom: int


def _after_name(ctx: MmvContext) -> int:
    return MMV_NAMEMAX if ctx.version == 1 else 8


def _name(ctx: MmvContext, raw: bytes | int, where: int, f: str, n: int) -> str | None:
    if isinstance(raw, bytes):           # v1: inline
        end = raw.find(b"\0")
        if end < 0:
            ctx.add("mmv.name-nul", f"the inline name has no NUL in its {MMV_NAMEMAX} bytes (the"
                    " PMDA's name runs on into the item)", record=n, offset=where, field=f + ".name")
            return None
        return raw[:end].decode("utf-8", "surrogateescape")
    return ctx.slot(raw, code="mmv.metric-name-offset", nul_code="mmv.name-nul",
                    fld=f + ".name", record=n, where=where)


def _check_name(ctx: MmvContext, name: str, where: int, f: str, n: int) -> str | None:
    """The name the PMDA exports, or None (reported) when it does not export the metric."""
    full = exported_name(ctx.name, name, ctx.flags)
    if not name:
        ctx.add("mmv.metric-name", "an empty metric name", record=n, offset=where, field=f + ".name")
        return None
    if not pmda_name_ok(full):
        # the file's own name is part of every name unless NOPREFIX is set
        blame = "" if pmda_name_ok(exported_name(ctx.name, "x", ctx.flags)) else \
            f" (the file name {ctx.name!r} is part of it: rename the file or set NOPREFIX)"
        ctx.add("mmv.metric-name", f"{full!r} fails the PMDA's rule (a letter, then letters,"
                f" digits, '_' or '.'): not exported{blame}", record=n, offset=where,
                field=f + ".name")
        return None
    if not pmns_name_ok(full):
        ctx.add("mmv.metric-name-pmns", f"{full!r} is exported, but a component does not start"
                " with a letter (the PMNS rule)", record=n, offset=where, field=f + ".name")
    return full


def _check_desc(ctx: MmvContext, m: MetricFact, serials: set[int], f: str) -> None:
    base = m.offset + _after_name(ctx)
    if m.type not in MMV_TYPES:
        ctx.add("mmv.metric-type", f"type {m.type} is not an MMV type (-1, 0..6, 9): the PMDA"
                " exports it and fetches garbage", record=m.index, offset=base + 4, field=f + ".type")
    if m.type == TYPE_ELAPSED:
        if m.semantics not in (0, SEM_COUNTER) or m.dimension not in (0, _USEC):
            ctx.add("mmv.elapsed-desc", f"ELAPSED with semantics {m.semantics} and units"
                    f" {PmUnits.from_word(m.dimension)}: the PMDA exports a microsecond counter",
                    record=m.index, offset=base + 8, field=f + ".semantics")
    elif m.semantics not in _SEMANTICS:
        ctx.add("mmv.metric-semantics", f"semantics {m.semantics} is not counter (1), instant (3)"
                " or discrete (4): the PMDA exports it as it is", record=m.index, offset=base + 8,
                field=f + ".semantics")
    elif m.semantics == 0:
        ctx.add("mmv.semantics-zero", "semantics 0: the PMDA exports a counter", record=m.index,
                offset=base + 8, field=f + ".semantics")
        if m.dimension == 0:
            ctx.add("mmv.units-missing", "semantics 0 and no units, as pcp.mmv of PCP before 6.3.1"
                    " writes every metric", record=m.index, offset=base + 12, field=f + ".dimension")
    if m.type != TYPE_ELAPSED:
        _units(ctx, m, base + 12, f)
    if m.indom not in (0, 0xFFFFFFFF) and m.indom not in serials:
        ctx.add("mmv.metric-indom", f"indom {m.indom} is not declared: the PMDA exports an instance"
                " domain it cannot list", record=m.index, offset=base + 16, field=f + ".indom")


def _units(ctx: MmvContext, m: MetricFact, where: int, f: str) -> None:
    bad = _unit_problems(m.dimension)
    if bad:
        ctx.add("mmv.metric-units", f"pmUnits word {m.dimension:#010x}: " + "; ".join(bad),
                record=m.index, offset=where, field=f + ".dimension")


@cache
def _unit_problems(word: int) -> tuple[str, ...]:
    """What is wrong with a pmUnits word (a file uses few words, for many metrics)."""
    u = PmUnits.from_word(word)
    bad = []
    for label, dim, scale, top in (("Space", u.dimSpace, u.scaleSpace, 6),
                                   ("Time", u.dimTime, u.scaleTime, 5)):
        if scale > top:
            bad.append(f"scale{label} {scale} is above {top}")
        elif scale and not dim:
            bad.append(f"scale{label} {scale} with dim{label} 0")
    if u.scaleCount and not u.dimCount:
        bad.append(f"scaleCount {u.scaleCount} with dimCount 0")
    if word & 0xFF:
        bad.append(f"the low byte is {word & 0xFF:#x}")
    return tuple(bad)
