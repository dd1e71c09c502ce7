"""Label records: each file's own label and its agreement with the first (FMT-LABEL)."""

from __future__ import annotations

from pcpconform.check.state import Context
from pcpconform.io.reader import Component

__all__ = ["check_label"]

_V3_FEATURES = 0x80000000   # the only feature bit defined


def check_label(ctx: Context, comp: Component, expected_vol: int) -> None:
    """Check the label of an opened component that should be volume ``expected_vol``."""
    lab, name = comp.label, comp.name
    ctx.labels[name] = (comp.version, lab)
    if ctx.st.version == 0:
        ctx.st.version = comp.version
        ctx.st.start = lab.start
    if lab.vol != expected_vol:
        ctx.add("label.vol", name, f"label says volume {lab.vol}, the file is {expected_vol}",
                record=0, offset=20 if comp.version == 2 else 24, field="label.vol")
    ctx.time(lab.start, name, 0, 12, "label.start", comp.version)
    if comp.version == 3:
        if lab.features & ~_V3_FEATURES:
            ctx.add("label.features", name, f"unknown feature bits 0x{lab.features & ~_V3_FEATURES:08x}",
                    record=0, offset=28, field="label.features")
        if lab.reserved:
            ctx.add("label.reserved", name, f"reserved word is 0x{lab.reserved:08x}, not 0",
                    record=0, offset=32, field="label.reserved")
    for fld in ("hostname", "timezone") + (("zoneinfo",) if comp.version == 3 else ()):
        if b"\0" not in lab[f"{fld}_raw"]:
            ctx.add("label.unterminated", name, f"{fld} fills its field with no NUL",
                    record=0, field=f"label.{fld}")
    fv, fl = next(iter(ctx.labels.values()))
    if (comp.version, lab.pid, lab.hostname) != (fv, fl.pid, fl.hostname):
        ctx.add("label.mismatch", name, f"version/pid/hostname {comp.version}/{lab.pid}/{lab.hostname!r} "
                f"differ from {fv}/{fl.pid}/{fl.hostname!r} of the first file", record=0, field="label")
    else:
        if lab.start != fl.start:
            ctx.add("label.start-mismatch", name, f"start {lab.start} differs from {fl.start}",
                    record=0, field="label.start")
        if lab.timezone != fl.timezone or getattr(lab, "zoneinfo", "") != getattr(fl, "zoneinfo", ""):
            ctx.add("label.timezone-mismatch", name, "timezone/zoneinfo differ from the first file",
                    record=0, field="label.timezone")
