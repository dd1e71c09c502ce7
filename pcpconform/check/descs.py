"""Metric descriptors and their units (FMT-DESC, FMT-UNITS)."""

from __future__ import annotations

import re
from typing import Any

from pcpconform.check.describe import metric_text, type_text
from pcpconform.check.state import Context
from pcpconform.format.pmtypes import PmID
from pcpconform.io.reader import RawRecord

__all__ = ["check_desc"]

_NAME_RE = re.compile(rb"[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z][A-Za-z0-9_]*)*")
_MAXPATHLEN = 4096
#: |extraUnit| -> the largest extraScale it allows
_EXTRA_SCALES = {1: 3, 2: 3, 3: 3, 4: 4}
#: pmIDs of domain 511 with cluster bit 2048 may name an indom of another domain
_DYNAMIC_DOMAIN, _DERIVED_CLUSTER = 511, 2048


def check_desc(ctx: Context, rec: RawRecord, d: Any) -> None:
    f = rec.file
    # item access: a construct Container's attribute access is a Python-level __getattr__
    names, pmid = d["names"], PmID(d["pmid"])
    name = bytes(names[0]).decode("utf-8", "replace") if names else None
    what = metric_text(pmid, name)
    where = {"record": rec.index, "offset": rec.offset, "metric": name or str(pmid)}
    ptype, sem, indom = d["type"], d["sem"], d["indom"]
    if d["tail"]:
        ctx.add("meta.tail", f, f"{len(d['tail'])} bytes after the descriptor's names", field="desc.tail", **where)
    if not -1 <= ptype <= 10:
        ctx.add("desc.type", f, f"{what}: type {type_text(ptype)} is not a PCP type (-1 to 10)",
                field="desc.type", **where)
    if sem not in (1, 3, 4):
        ctx.add("desc.sem", f, f"{what}: semantics {sem} is not counter (1), instant (3) or "
                f"discrete (4)" + (" (a NOSUPPORT descriptor, as older pmloggers wrote)"
                                   if ptype == -1 else ""), field="desc.sem", **where)
    _names(ctx, f, where, names, int(pmid))
    _units(ctx, f, where, d["units"])
    if not indom.is_null and indom.domain != pmid.domain and not (
            pmid.domain == _DYNAMIC_DOMAIN and pmid.cluster & _DERIVED_CLUSTER):
        ctx.add("desc.indom-domain", f, f"{what}: indom {indom} is not of the pmID's domain",
                field="desc.indom", **where)
    old = ctx.st.descs.get(int(pmid))
    if old is None:
        ctx.st.descs[int(pmid)] = d
        return
    for fld in ("type", "sem", "indom", "units"):
        if old[fld] != d[fld]:
            ctx.add("desc.conflict", f, f"{what}: {fld} {d[fld]} differs from the earlier "
                    f"descriptor's {old[fld]} (libpcp: PM_ERR_LOGCHANGE{fld.upper()})",
                    field=f"desc.{fld}", **where)


def _names(ctx: Context, f: str, where: dict[str, Any], names: Any, pmid: int) -> None:
    if not names:
        ctx.add("desc.no-name", f, f"pmID {PmID(pmid)} has no name", field="desc.names", **where)
    owners = ctx.st.names
    for name in names:
        if not name or len(name) >= _MAXPATHLEN:
            ctx.add("desc.name", f, f"name of {len(name)} bytes", field="desc.names", **where)
        elif not _NAME_RE.fullmatch(name):
            ctx.add("desc.name-syntax", f, f"name {name[:60]!r} is not a PMNS path", field="desc.names", **where)
        owner = owners.setdefault(bytes(name), pmid)
        if owner != pmid:
            ctx.add("desc.name-reused", f, f"name {name.decode('latin-1')} already names "
                    f"{PmID(owner)}; {PmID(pmid)} loses it", field="desc.names", **where)


def _units(ctx: Context, f: str, where: dict[str, Any], u: Any) -> None:
    # (dimension, scale, field suffix, largest scale: PM_SPACE_EBYTE, PM_TIME_HOUR, none)
    for dim, scale, label, top in ((u.dimSpace, u.scaleSpace, "Space", 8), (u.dimTime, u.scaleTime, "Time", 5),
                                   (u.dimCount, u.scaleCount, "Count", None)):
        if not -2 <= dim <= 2:
            ctx.add("units.dim", f, f"dim{label} {dim} is outside -2..2", field=f"desc.units.dim{label}", **where)
        if dim == 0 and scale != 0:
            ctx.add("units.scale-without-dim", f, f"scale{label} {scale} with dim{label} 0",
                    field=f"desc.units.scale{label}", **where)
        elif top is not None and scale > top:
            ctx.add("units.scale", f, f"scale{label} {scale} is above {top}", field=f"desc.units.scale{label}",
                    **where)
    if (u.extraUnit, u.extraScale) != (0, 0):
        ok = _EXTRA_SCALES.get(abs(u.extraUnit))
        if ok is None or not 1 <= u.extraScale <= ok:
            ctx.add("units.extra", f, f"extraUnit {u.extraUnit} / extraScale {u.extraScale} is not a "
                    "defined unit", field="desc.units.extra", **where)
