"""The header and the table of contents (MMV-CHK-HDR-*, MMV-CHK-TOC-*)."""

from __future__ import annotations

import struct

from pcpconform.check.mmv.context import MmvContext, Section
from pcpconform.mmv.model import FLAG_NOPREFIX, FLAG_PROCESS, FLAG_SENTINEL
from pcpconform.mmv.schema import (
    HEADER_SIZE,
    MMV_MAGIC,
    MMV_VERSIONS,
    TOC_INDOMS,
    TOC_INSTANCES,
    TOC_LABELS,
    TOC_METRICS,
    TOC_NAMES,
    TOC_SIZE,
    TOC_STRINGS,
    TOC_VALUES,
    mmv_structs,
)

__all__ = ["check_header", "check_toc", "PMDA_LIMITS", "header_accepted"]

#: sections the PMDA never reads (it reaches instances and strings through offsets)
IGNORED_BY_PMDA = (TOC_INSTANCES, TOC_STRINGS)
#: the most entries the PMDA reads of a section; beyond, it skips the whole section
PMDA_LIMITS = {TOC_METRICS: (1 << 10) - 1, TOC_INDOMS: (1 << 22) - 1, TOC_LABELS: (1 << 8) - 1}
_KNOWN_FLAGS = FLAG_NOPREFIX | FLAG_PROCESS | FLAG_SENTINEL


def header_accepted(head: bytes, size: int) -> bool:
    """Whether the PMDA loads a file of ``size`` bytes that starts with ``head`` (its header
    checks pass; a PROCESS writer is assumed alive)."""
    if size < HEADER_SIZE or len(head) < HEADER_SIZE or head[:4] != MMV_MAGIC:
        return False
    version, g1, g2, tocs, _flags, _pid, cluster = struct.unpack_from("<iQQiIii", head, 4)
    return (version in MMV_VERSIONS and g1 != 0 and g1 == g2 and tocs >= 2
            and size >= HEADER_SIZE + TOC_SIZE * tocs and 0 <= cluster <= 4095)


def check_header(ctx: MmvContext) -> bool:
    """Check the header; False when nothing after it can be read (reported)."""
    if ctx.size < HEADER_SIZE:
        ctx.add("mmv.header-short", f"{ctx.size} bytes, shorter than the 40-byte header",
                offset=0, field="header")
        return False
    hdr = ctx.parse(mmv_structs(1).header, 0, HEADER_SIZE)
    if hdr.magic != MMV_MAGIC:
        ctx.add("mmv.magic", f"magic {bytes(hdr.magic)!r} is not b'MMV\\x00'", offset=0,
                field="header.magic")
        return False
    if hdr.version not in MMV_VERSIONS:
        ctx.add("mmv.version", f"version {hdr.version} is not 1, 2 or 3", offset=4,
                field="header.version")
        return False
    if hdr.g1 != hdr.g2:
        # a writer is filling the file in: what follows is not yet meant to be read
        ctx.add("mmv.rewriting", f"generation words differ (g1 {hdr.g1:#x}, g2 {hdr.g2:#x}):"
                " the file is being rewritten; the PMDA skips it until they agree",
                offset=16, field="header.g2")
        return False
    if hdr.g1 == 0:
        ctx.add("mmv.rewriting", "generation 0: the file has not been initialised; the PMDA"
                " skips it", offset=8, field="header.g1")
        return False
    ctx.version, ctx.flags = hdr.version, hdr.flags
    ctx.structs = mmv_structs(hdr.version)
    ok = True
    if hdr.tocs < 2:
        ctx.add("mmv.tocs", f"{hdr.tocs} TOC entries, fewer than 2", offset=24, field="header.tocs")
        ok = False
    elif HEADER_SIZE + TOC_SIZE * hdr.tocs > ctx.size:
        ctx.add("mmv.tocs", f"{hdr.tocs} TOC entries run past the end of the file ({ctx.size}"
                " bytes)", offset=24, field="header.tocs")
        ok = False
    if not 0 <= hdr.cluster <= 4095:
        ctx.add("mmv.cluster", f"cluster {hdr.cluster} is outside 0..4095", offset=36,
                field="header.cluster")
        ok = False
    if hdr.flags & ~_KNOWN_FLAGS:
        ctx.add("mmv.flags", f"unknown flag bits {hdr.flags & ~_KNOWN_FLAGS:#x}", offset=28,
                field="header.flags")
    if hdr.flags & FLAG_PROCESS and hdr.process <= 0:
        ctx.add("mmv.process", f"the PROCESS flag with PID {hdr.process}: the PMDA never checks"
                " it", offset=32, field="header.process")
    if ok:
        ctx.toc_end = HEADER_SIZE + TOC_SIZE * hdr.tocs
    return ok


def check_toc(ctx: MmvContext, tocs: int) -> None:
    """Check every TOC entry and the sections they describe; keep the first of each type."""
    assert ctx.structs is not None
    s = ctx.structs
    spans: list[tuple[int, int, int]] = []       # (start, end, toc index)
    for t in range(tocs):
        where = HEADER_SIZE + TOC_SIZE * t
        e = ctx.parse(s.toc, where, TOC_SIZE)
        f = f"toc[{t}]"
        if e.type not in TOC_NAMES:
            ctx.add("mmv.toc-type", f"section type {e.type} is not known (mmvdump fails; the PMDA"
                    " ignores it)", record=t, offset=where, field=f + ".type")
            continue
        name = TOC_NAMES[e.type]
        if e.type == TOC_LABELS and ctx.version < 3:
            ctx.add("mmv.toc-version", f"a labels section in a version {ctx.version} file (labels"
                    " are version 3; the PMDA serves them anyway)", record=t, offset=where,
                    field=f + ".type")
        if e.type in ctx.sections:
            first = ctx.sections[e.type].toc
            if e.type in IGNORED_BY_PMDA:
                ctx.add("mmv.toc-crosscheck", f"a second {name} section (the first is toc[{first}];"
                        " the PMDA reads neither, mmvdump both)", record=t, offset=where,
                        field=f + ".type")
                extra = Section(t, e.type, max(e.count, 0), e.offset, s.sizes[e.type])
                if extra.end > ctx.size:
                    ctx.add("mmv.toc-bounds", f"{name} section ({extra.count} x {extra.entry_size}"
                            f" bytes at {e.offset}) runs past the end of the file ({ctx.size}"
                            " bytes)", record=t, offset=where + 8, field=f + ".offset")
                ctx.extra_sections.append(extra)
            else:
                ctx.add("mmv.toc-duplicate", f"a second {name} section (the first is toc[{first}];"
                        " the PMDA keeps the last)", record=t, offset=where, field=f + ".type")
            continue
        count = e.count
        if count < 0 and e.type in IGNORED_BY_PMDA:
            ctx.add("mmv.toc-crosscheck", f"{name} count {count} is negative (the PMDA ignores"
                    " the section)", record=t, offset=where + 4, field=f + ".count")
            count = 0
        elif count < 0:
            ctx.add("mmv.toc-count", f"{name} count {count} is negative (the PMDA reads"
                    f" {count & 0xFFFFFFFF} and skips the section)", record=t, offset=where + 4,
                    field=f + ".count")
            count = 0
        elif count == 0:
            ctx.add("mmv.toc-empty", f"the {name} section has no entries", record=t,
                    offset=where + 4, field=f + ".count")
        limit = PMDA_LIMITS.get(e.type)
        if limit is not None and count > limit:
            ctx.add("mmv.toc-limit", f"{count} {name}, more than the PMDA's {limit}: it skips"
                    " the whole section", record=t, offset=where + 4, field=f + ".count")
        sect = Section(t, e.type, count, e.offset, s.sizes[e.type])
        if sect.end > ctx.size:
            ctx.add("mmv.toc-bounds", f"{name} section ({count} x {sect.entry_size} bytes at"
                    f" {e.offset}) runs past the end of the file ({ctx.size} bytes)", record=t,
                    offset=where + 8, field=f + ".offset")
        if count and e.offset < ctx.toc_end:
            ctx.misplaced.add(t)
            ctx.add("mmv.toc-overlap", f"{name} section at {e.offset} starts inside the header"
                    f" or TOC (which end at {ctx.toc_end})", record=t, offset=where + 8,
                    field=f + ".offset")
        elif count:
            spans.append((e.offset, min(sect.end, max(ctx.size, e.offset)), t))
        ctx.sections[e.type] = sect
    _overlaps(ctx, spans)
    for needed in (TOC_METRICS, TOC_VALUES):
        if needed not in ctx.sections:
            ctx.add("mmv.toc-missing", f"no {TOC_NAMES[needed]} section", offset=HEADER_SIZE,
                    field="toc")


def _overlaps(ctx: MmvContext, spans: list[tuple[int, int, int]]) -> None:
    spans.sort()
    reach, owner = -1, -1
    for start, end, t in spans:
        if start < reach:
            ctx.misplaced |= {t, owner}
            ctx.add("mmv.toc-overlap", f"the section of toc[{t}] at {start} overlaps the section"
                    f" of toc[{owner}] (which ends at {reach})", record=t,
                    offset=HEADER_SIZE + TOC_SIZE * t + 8, field=f"toc[{t}].offset")
        if end > reach:
            reach, owner = end, t
