"""Values of a decoded result against their descriptor and instance domain (FMT-VALUE).

Checks run per value set on the bulk decoder's columns. Instance checks are skipped when a
metric shows the same instances against the same instance-domain state as last time, and
descriptors and indom states are cached: these checks run once per value set of every
result, so they decide the validator's speed.
"""

from __future__ import annotations

import bisect
import operator
from collections.abc import Iterable
from typing import Any

from pcpconform.check.describe import type_text
from pcpconform.check.events import check_events
from pcpconform.check.state import Context
from pcpconform.format.pmtypes import PM_IN_NULL, PmID, PmInDom, PmType, Timestamp
from pcpconform.format.values import BLOCK_PAYLOAD_SIZE
from pcpconform.io.bulk import DecodedValueSet
from pcpconform.io.reader import RawRecord

__all__ = ["ValueChecks", "check_block", "is_counter"]

# PMAPI error codes (PM_ERR_* from -12345 down, and -errno) that numval < 0 may carry
_PLAUSIBLE_ERR = range(-12345 - 8999, 0)
_SEM_COUNTER = 1
_NUMERIC = range(PmType.I32, PmType.DOUBLE + 1)   # 32, U32, 64, U64, FLOAT, DOUBLE


def is_counter(info: tuple[int, int, int | None]) -> bool:
    """Whether a metric's (type, sem, indom) calls for the counter check."""
    return info[1] == _SEM_COUNTER and info[0] in _NUMERIC


class ValueChecks:
    """The value checks of one archive, with what they cache between results."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self._dinfo: dict[int, tuple[int, int, int | None]] = {}
        self._members_cache: dict[int, tuple[int, int, frozenset[int]]] = {}
        self._insts_ok: dict[int, tuple[tuple[int, ...], frozenset[int] | None]] = {}

    def desc_info(self, pmid: int) -> tuple[int, int, int | None] | None:
        """(type, sem, indom or None) of a pmID, cached: Container attribute access is slow."""
        info = self._dinfo.get(pmid)
        if info is None:
            desc = self.ctx.st.descs.get(pmid)
            if desc is None:
                return None
            info = self._dinfo[pmid] = (desc.type, desc.sem, None if desc.indom.is_null else int(desc.indom))
        return info

    def members(self, indom: int, ns: int) -> frozenset[int] | None:
        """Instances of an indom in force at time ns (None: no record yet)."""
        hit = self._members_cache.get(indom)
        if hit is not None and hit[0] <= ns < hit[1]:
            return hit[2]
        history = self.ctx.st.indoms.get(indom)
        if not history:
            return None
        stamps = [h[0] for h in history]
        pos = bisect.bisect_right(stamps, ns)
        if not pos:
            return None
        until = stamps[pos] if pos < len(stamps) else 1 << 127
        self._members_cache[indom] = (stamps[pos - 1], until, history[pos - 1][1])
        return history[pos - 1][1]

    def members_span(self, indom: int, ns: int) -> tuple[int, int] | None:
        """The times [from, until) over which ``members(indom, ns)`` gives the same set."""
        if self.members(indom, ns) is None:
            return None
        since, until, _ = self._members_cache[indom]
        return since, until

    def check(self, rec: RawRecord, k: int, vs: DecodedValueSet, stamp: Timestamp) -> None:
        """Check value set ``k`` of a result decoded from ``rec``."""
        ctx, f = self.ctx, rec.file
        pmid = vs.pmid
        if vs.numval <= 0:
            if vs.numval < 0 and vs.numval not in _PLAUSIBLE_ERR:
                ctx.add("value.numval-code", f, f"{ctx.metric(pmid)}: numval {vs.numval} is not a "
                        "PMAPI error code", pmid=pmid, record=rec.index, offset=rec.offset,
                        field=f"result.vset[{k}].numval")
            if vs.numval == 0 or self.desc_info(pmid) is not None:
                return
        info = self.desc_info(pmid)
        where = {"record": rec.index, "offset": rec.offset, "pmid": pmid}
        fld = f"result.vset[{k}]"
        if info is None:
            ctx.add("value.undescribed", f, f"pmID {PmID(pmid)} has no descriptor (libpcp cannot name "
                    "or type its values)", field=fld + ".pmid", **where)
            return
        ptype, sem, indom = info
        if ptype == PmType.NOSUPPORT:
            ctx.add("value.nosupport", f, f"values for NOSUPPORT metric {ctx.metric(pmid)}", field=fld, **where)
        assert vs.valfmt is not None   # numval > 0 here
        prev = ctx.st.valfmts.setdefault(pmid, vs.valfmt)
        if prev != vs.valfmt:
            ctx.add("value.valfmt-change", f, f"{ctx.metric(pmid)}: valfmt {vs.valfmt}, earlier {prev}",
                    field=fld + ".valfmt", **where)
        insts, values = vs.columns
        members = None if indom is None else self.members(indom, stamp.total_nsec())
        good = self._insts_ok.get(pmid)
        if good is None or good[1] is not members or good[0] != insts:
            self._instances(f, where, fld, pmid, indom, insts, members)
        # else: the same instances were checked against the same indom state before
        if sem == _SEM_COUNTER and ptype in _NUMERIC:
            self._counters(f, where, fld, pmid, insts, values)

    def _instances(self, f: str, where: dict[str, Any], fld: str, pmid: int, indom: int | None,
                   insts: tuple[int, ...], members: frozenset[int] | None) -> None:
        ctx = self.ctx
        inst_set = set(insts)
        ok = True
        if len(inst_set) != len(insts):
            ok = False
            ctx.add("value.duplicate-inst", f, f"{ctx.metric(pmid)}: an instance appears twice", field=fld, **where)
        if indom is None:
            if inst_set != {PM_IN_NULL}:
                ok = False
                ctx.add("value.singular-inst", f, f"{ctx.metric(pmid)} has no indom but instance {insts[0]}",
                        field=fld + ".vlist", **where)
        elif members is None:
            ok = False
            ctx.add("value.no-indom", f, f"no record of indom {PmInDom(indom)} is in force yet",
                    field=fld, **where)
        elif not inst_set <= members:
            ok = False
            ctx.add("value.unknown-inst", f, f"{ctx.metric(pmid)}: instance {min(inst_set - members)} is not "
                    f"in indom {PmInDom(indom)} at that time", field=fld + ".vlist", **where)
        if ok:
            self._insts_ok[pmid] = (insts, members)

    def _counters(self, f: str, where: dict[str, Any], fld: str, pmid: int,
                  insts: tuple[int, ...], values: tuple[Any, ...]) -> None:
        counters = self.ctx.st.counters
        last = counters.get(pmid)
        counters[pmid] = (insts, values)
        if last is None:
            return
        if last[0] == insts:   # the usual case: same instances, compare in C
            try:
                if not any(map(operator.lt, values, last[1])):
                    return
            except TypeError:   # a value stored as another type (value.vtype): pairwise below
                pass
            pairs: Iterable[tuple[int, Any, Any]] = zip(insts, last[1], values)
        else:
            old = dict(zip(*last))
            pairs = ((i, old[i], v) for i, v in zip(insts, values) if i in old)
        for inst, was, now in pairs:
            try:
                lower = now < was
            except TypeError:   # not comparable: the block's type is not the descriptor's
                continue
            if lower:
                self.ctx.add("value.counter-decrease", f, f"{self.ctx.metric(pmid)}[{inst}] counter went from {was} "
                             f"to {now}", field=fld, **where)


def check_block(ctx: Context, f: str, where: dict[str, Any], fld: str, pmid: int, dtype: int, vtype: int,
                payload: bytes) -> None:
    """A value block's type and payload against the descriptor's type."""
    where = {**where, "pmid": pmid}
    if vtype == 0:
        ctx.add("value.vtype-legacy", f, f"{ctx.metric(pmid)}: value block type 0", field=fld, **where)
        return
    if vtype != dtype:
        ctx.add("value.vtype", f, f"{ctx.metric(pmid)}: block type {type_text(vtype)}, "
                f"descriptor type {type_text(dtype)}", field=fld, **where)
        return
    size = BLOCK_PAYLOAD_SIZE.get(vtype)  # type: ignore[call-overload]
    if size is not None and len(payload) != size:
        ctx.add("value.vlen", f, f"{ctx.metric(pmid)}: {len(payload)}-byte payload for a "
                f"{PmType(vtype).token}", field=fld, **where)
    if vtype == PmType.STRING and not payload.endswith(b"\0"):
        ctx.add("value.string-nul", f, f"{ctx.metric(pmid)}: string without NUL", field=fld, **where)
    if vtype in (PmType.EVENT, PmType.HIGHRES_EVENT):
        check_events(ctx, f, where, fld, vtype == PmType.HIGHRES_EVENT, payload)
