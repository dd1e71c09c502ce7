"""Metrics (MMV-CHK-METRIC-*): names by the PMDA's rule and by the PMNS rule, items, types,
semantics, units and indom references."""

from __future__ import annotations

import re

from pcpconform.check.mmv.context import MetricFact, MmvContext
from pcpconform.format.pmtypes import PmUnits
from pcpconform.mmv.model import (
    MMV_TYPES,
    SEM_COUNTER,
    SEM_DISCRETE,
    SEM_INSTANT,
    TYPE_ELAPSED,
    exported_name,
)
from pcpconform.mmv.schema import MMV_NAMEMAX, TOC_METRICS

__all__ = ["check_metrics", "pmda_name_ok", "pmns_name_ok"]

#: the PMDA's check of the whole exported name: a letter, then letters, digits, '_' or '.'
_PMDA_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_.]*")
#: the PMNS rule: each dot-separated component starts with a letter
_PMNS_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z][A-Za-z0-9_]*)*")
_SEMANTICS = (0, SEM_COUNTER, SEM_INSTANT, SEM_DISCRETE)
_USEC = PmUnits(dimTime=1, scaleTime=1).to_word()


def pmda_name_ok(name: str) -> bool:
    """verify_metric_name's character rule (isalpha/isalnum in the C locale: ASCII only)."""
    return _PMDA_NAME.fullmatch(name) is not None


def pmns_name_ok(name: str) -> bool:
    return _PMNS_NAME.fullmatch(name) is not None


def check_metrics(ctx: MmvContext) -> None:
    sect = ctx.sections.get(TOC_METRICS)
    if sect is None:
        return
    assert ctx.structs is not None
    s = ctx.structs
    items: dict[int, int] = {}
    names: dict[str, int] = {}
    serials = {d.serial for d in ctx.indoms}
    for n in range(sect.fitting(ctx.size)):
        where = sect.offset + s.metric_size * n
        f = f"metrics[{n}]"
        m = ctx.parse(s.metric, where, s.metric_size)
        name = _name(ctx, m.name, where, f, n)
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
        if exported is not None:
            if exported in names:
                ctx.add("mmv.metric-name-duplicate", f"{exported} is also metrics[{names[exported]}]:"
                        " the PMDA drops this one silently", record=n, offset=where, field=f + ".name")
                exported = None
            else:
                names[exported] = n
        fact = MetricFact(n, where, name, exported, m.item, m.type, m.semantics, m.dimension,
                          m.indom & 0xFFFFFFFF)
        _check_desc(ctx, fact, serials, f)
        base = where + _after_name(ctx)
        for k, label in enumerate(("shorttext", "helptext")):
            ctx.slot(m[label], code="mmv.help-offset", nul_code="mmv.string-nul",
                     fld=f"{f}.{label}", record=n, where=base + 24 + 8 * k, optional=True)
        ctx.metrics.append(fact)
        ctx.metric_at[where] = fact


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
    return ctx.slot(raw, code="mmv.metric-name-offset", nul_code="mmv.string-nul",
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
    u = PmUnits.from_word(m.dimension)
    bad = []
    for label, dim, scale, top in (("Space", u.dimSpace, u.scaleSpace, 6),
                                   ("Time", u.dimTime, u.scaleTime, 5)):
        if scale > top:
            bad.append(f"scale{label} {scale} is above {top}")
        elif scale and not dim:
            bad.append(f"scale{label} {scale} with dim{label} 0")
    if u.scaleCount and not u.dimCount:
        bad.append(f"scaleCount {u.scaleCount} with dimCount 0")
    if m.dimension & 0xFF:
        bad.append(f"the low byte is {m.dimension & 0xFF:#x}")
    if bad:
        ctx.add("mmv.metric-units", f"pmUnits word {m.dimension:#010x}: " + "; ".join(bad),
                record=m.index, offset=where, field=f + ".dimension")
