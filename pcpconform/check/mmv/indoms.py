"""Instance domains and their instances (MMV-CHK-INDOM-*).

The PMDA reaches instances through each indom's offset and count only, and follows a v2
instance's name offset without a bounds check (a crash: reference defect 2); mmvdump reaches
them through the instances section. Both routes are checked here.
"""

from __future__ import annotations

from pcpconform.check.mmv.columns import FALLBACKS, CheckFallback, instance_columns
from pcpconform.check.mmv.context import IndomFact, MmvContext
from pcpconform.mmv.schema import INDOM_SIZE, MMV_NAMEMAX, TOC_INDOMS, TOC_INSTANCES

__all__ = ["check_indoms", "check_instance_sections", "pmda_indom", "MAX_SERIAL"]

MAX_SERIAL = (1 << 22) - 1


def pmda_indom(cluster: int, serial: int) -> int:
    """The serial part of the InDom the PMDA builds: (cluster << 11 | serial) in 22 bits."""
    return ((cluster << 11) | serial) & MAX_SERIAL


def check_indoms(ctx: MmvContext) -> None:
    sect = ctx.sections.get(TOC_INDOMS)
    if sect is None:
        return
    assert ctx.structs is not None
    s = ctx.structs
    by_serial: dict[int, int] = {}
    by_indom: dict[int, tuple[int, int]] = {}
    reached = 0
    for n in range(sect.fitting(ctx.size)):
        where = sect.offset + INDOM_SIZE * n
        f = f"indoms[{n}]"
        d = ctx.parse(s.indom, where, INDOM_SIZE)
        if d.serial > MAX_SERIAL:
            ctx.add("mmv.indom-serial", f"serial {d.serial} is above 2^22-1: the PMDA skips the"
                    " indom", record=n, offset=where, field=f + ".serial")
        elif d.serial in by_serial:
            ctx.add("mmv.indom-duplicate", f"serial {d.serial} is also indoms[{by_serial[d.serial]}]"
                    " (the PMDA merges their instances)", record=n, offset=where, field=f + ".serial")
        else:
            by_serial[d.serial] = n
            key = pmda_indom(ctx.cluster, d.serial)
            other = by_indom.get(key)
            if other is not None:
                ctx.add("mmv.indom-collision", f"serial {d.serial} and serial {other[1]}"
                        f" (indoms[{other[0]}]) both become InDom 70.{key} in cluster"
                        f" {ctx.cluster}", record=n, offset=where, field=f + ".serial")
            by_indom.setdefault(key, (n, d.serial))
            if d.serial >= 2048:
                ctx.add("mmv.indom-wide-serial", f"serial {d.serial} uses bits the PMDA shares"
                        " with the cluster (InDom = cluster << 11 | serial)", record=n,
                        offset=where, field=f + ".serial")
        fact = IndomFact(n, where, d.serial)
        ctx.indoms.append(fact)
        reached += d.count
        _instances(ctx, fact, d.offset, d.count, f)
        for k, (label, off) in enumerate((("shorttext", d.shorttext), ("helptext", d.helptext))):
            ctx.slot(off, code="mmv.help-offset", nul_code="mmv.string-nul", fld=f"{f}.{label}",
                     record=n, where=where + 16 + 8 * k, optional=True)
    inst = ctx.sections.get(TOC_INSTANCES)
    if inst is not None and inst.count != reached:
        ctx.add("mmv.toc-crosscheck", f"the instances section counts {inst.count}, the indoms"
                f" hold {reached}", record=inst.toc, offset=40 + 16 * inst.toc + 4,
                field=f"toc[{inst.toc}].count")


def _instances(ctx: MmvContext, d: IndomFact, first: int, count: int, f: str) -> None:
    assert ctx.structs is not None
    s = ctx.structs
    size = s.instance_size
    if first + size * count > ctx.size or (count and first < ctx.toc_end):
        ctx.add("mmv.indom-bounds", f"{count} instances of {size} bytes at {first} are not inside"
                f" the file ({ctx.size} bytes) after the TOC: the PMDA skips the indom",
                record=d.index, offset=d.offset + 8, field=f + ".offset")
        d.readable = False
        return
    inst = ctx.sections.get(TOC_INSTANCES)
    if count and (inst is None or first < inst.offset or first + size * count > inst.end
                  or (first - inst.offset) % size):
        ctx.add("mmv.toc-crosscheck", f"the instances at {first} are not entries of the"
                " instances section", record=d.index, offset=d.offset + 8, field=f + ".offset")
    if ctx.columns:
        if instance_columns(ctx, d, first, count, f):
            return
        FALLBACKS[CheckFallback.INSTANCES] += 1
    names: dict[str, int] = {}
    for k in range(count):
        at = first + size * k
        fi = f"{f}.instances[{k}]"
        i = ctx.parse(s.instance, at, size)
        if i.indom + INDOM_SIZE > ctx.size:
            ctx.add("mmv.instance-indom-bounds", f"indom back-pointer {i.indom} is not a 32-byte"
                    f" entry inside the file ({ctx.size} bytes): mmvdump fails", record=d.index,
                    offset=at, field=fi + ".indom")
        elif i.indom != d.offset:
            ctx.add("mmv.instance-indom", f"indom back-pointer {i.indom} is not its indom's"
                    f" offset {d.offset}", record=d.index, offset=at, field=fi + ".indom")
        if i.internal < 0:
            ctx.add("mmv.instance-negative", f"internal id {i.internal} is negative", record=d.index,
                    offset=at + 12, field=fi + ".internal")
        name = _name(ctx, i.external, at, fi, d.index)
        if i.internal in d.instances:
            ctx.add("mmv.instance-duplicate", f"internal id {i.internal} repeats in indom"
                    f" {d.serial}", record=d.index, offset=at + 12, field=fi + ".internal")
        else:
            d.instances[i.internal] = name
        if name == "":
            ctx.add("mmv.instance-empty-name", "an empty instance name", record=d.index,
                    offset=at + 16, field=fi + ".external")
        elif name is not None:
            if name in names:
                ctx.add("mmv.instance-duplicate", f"name {name!r} repeats in indom {d.serial}"
                        f" (instances[{names[name]}])", record=d.index, offset=at + 16,
                        field=fi + ".external")
            names.setdefault(name, k)
        ctx.instance_at[at] = (d.serial, i.internal)


def _name(ctx: MmvContext, external: bytes | int, at: int, fi: str, record: int) -> str | None:
    if isinstance(external, bytes):      # v1: inline
        end = external.find(b"\0")
        if end < 0:
            ctx.add("mmv.name-nul", f"the inline name has no NUL in its {MMV_NAMEMAX} bytes (the"
                    " PMDA's instance name runs on into the next entry)", record=record,
                    offset=at + 16, field=fi + ".external")
            return None
        return external[:end].decode("utf-8", "surrogateescape")
    if external == 0 or external + 256 > ctx.size or external < ctx.toc_end:
        ctx.add("mmv.instance-name-offset", f"name offset {external} is not a 256-byte slot"
                f" inside the file ({ctx.size} bytes): the PMDA follows it unchecked",
                record=record, offset=at + 16, field=fi + ".external")
        return None
    return ctx.slot(external, code="mmv.instance-name-offset", nul_code="mmv.name-nul",
                    fld=fi + ".external", record=record, where=at + 16)


def check_instance_sections(ctx: MmvContext) -> None:
    """The entries of the instances section(s) no indom reaches, as mmvdump reads them: it
    fails on an indom back-pointer or (v2/v3) a name offset outside the file."""
    assert ctx.structs is not None
    s = ctx.structs
    first = ctx.sections.get(TOC_INSTANCES)
    sections = ([first] if first else []) + [x for x in ctx.extra_sections if x.type == TOC_INSTANCES]
    for sect in sections:
        if sect.toc in ctx.misplaced:
            continue        # its entries are another section's bytes: reported once
        for k in range(sect.fitting(ctx.size)):
            at = sect.offset + s.instance_size * k
            if at in ctx.instance_at:
                continue
            f = f"toc[{sect.toc}].instances[{k}]"
            i = ctx.parse(s.instance, at, s.instance_size)
            if i.indom + INDOM_SIZE > ctx.size:
                ctx.add("mmv.instance-indom-bounds", f"indom back-pointer {i.indom} of an entry no"
                        " indom reaches lies outside the file: mmvdump fails", record=k,
                        offset=at, field=f + ".indom")
            elif isinstance(i.external, int) and (i.external == 0 or i.external + 256 > ctx.size):
                ctx.add("mmv.instance-name-offset", f"name offset {i.external} of an entry no indom"
                        " reaches is not a slot inside the file: mmvdump fails", record=k,
                        offset=at + 16, field=f + ".external")
