"""Labels of version 3 files (MMV-CHK-LABEL-*).

The PMDA hands each payload to libpcp's label parser (__pmAddLabels), which reads it up to
its NUL and drops a payload it cannot parse; it serves a label only for the identity its
type names. libpcp_mmv leaves the bytes after the NUL uninitialised (reference defect 4).
"""

from __future__ import annotations

import json
import re
from typing import Any

from pcpconform.check.mmv.context import MmvContext
from pcpconform.mmv.model import (
    LABEL_CLUSTER,
    LABEL_INDOM,
    LABEL_INSTANCES,
    LABEL_ITEM,
    LABEL_OPTIONAL,
)
from pcpconform.mmv.schema import LABEL_SIZE, MMV_LABELMAX, TOC_LABELS, mmv_structs

__all__ = ["check_labels"]

_TYPES = LABEL_INDOM | LABEL_CLUSTER | LABEL_ITEM | LABEL_INSTANCES
_LABEL_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*")


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def check_labels(ctx: MmvContext) -> None:
    sect = ctx.sections.get(TOC_LABELS)
    if sect is None:
        return
    assert ctx.structs is not None
    schema = ctx.structs.label or _v3_label()
    for n in range(sect.fitting(ctx.size)):
        where = sect.offset + LABEL_SIZE * n
        f = f"labels[{n}]"
        lb = ctx.parse(schema, where, LABEL_SIZE)
        _flags_and_identity(ctx, lb, n, where, f)
        payload = bytes(lb.payload)
        end = payload.find(b"\0")
        if end < 0:
            ctx.add("mmv.label-nul", f"no NUL in the {MMV_LABELMAX}-byte payload: libpcp's parser"
                    " reads on into the next label", record=n, offset=where + 12, field=f + ".payload")
            continue
        slack = sum(1 for b in payload[end + 1:] if b)
        if slack:
            ctx.add("mmv.label-slack", f"{slack} non-zero bytes after the payload's NUL"
                    " (libpcp_mmv leaves heap bytes there)", record=n,
                    offset=where + 12 + end + 1, field=f + ".payload")
        _json(ctx, payload[:end], n, where + 12, f + ".payload")


def _v3_label() -> Any:
    """The label schema, for a labels section in a version 1 or 2 file (read as the PMDA does)."""
    label = mmv_structs(3).label
    assert label is not None
    return label


def _flags_and_identity(ctx: MmvContext, lb: Any, n: int, where: int, f: str) -> None:
    types = lb.flags & _TYPES
    unknown = lb.flags & ~(_TYPES | LABEL_OPTIONAL)
    if bin(types).count("1") != 1 or unknown:
        ctx.add("mmv.label-flags", f"flags {lb.flags:#x}: not exactly one of INDOM, CLUSTER,"
                " ITEM, INSTANCES" + (f", unknown bits {unknown:#x}" if unknown else ""),
                record=n, offset=where, field=f + ".flags")
        return
    serials = {d.serial: d for d in ctx.indoms}
    problem = None
    if types == LABEL_ITEM and lb.identity not in {m.item for m in ctx.metrics}:
        problem = f"item {lb.identity} is no metric's item"
    elif types == LABEL_CLUSTER and lb.identity != ctx.cluster:
        problem = f"cluster {lb.identity} is not the file's cluster {ctx.cluster}"
    elif types in (LABEL_INDOM, LABEL_INSTANCES) and lb.identity not in serials:
        problem = f"indom {lb.identity} is not declared"
    elif types == LABEL_INSTANCES and serials[lb.identity].readable \
            and lb.internal not in serials[lb.identity].instances:
        problem = f"instance {lb.internal} is not in indom {lb.identity}"
    if problem:
        ctx.add("mmv.label-identity", problem + ": the PMDA never serves the label", record=n,
                offset=where + 4, field=f + ".identity")


def _json(ctx: MmvContext, text: bytes, n: int, where: int, fld: str) -> None:
    try:
        value = json.loads(text.decode("utf-8"), parse_constant=_reject_constant)
    except (ValueError, UnicodeDecodeError) as exc:
        ctx.add("mmv.label-json", f"the payload is not JSON ({exc}): libpcp drops the label",
                record=n, offset=where, field=fld)
        return
    if not isinstance(value, dict) or not value:
        ctx.add("mmv.label-json", "the payload is not a JSON object holding a label: libpcp drops"
                " it", record=n, offset=where, field=fld)
        return
    bad = [k for k in value if _LABEL_NAME.fullmatch(k) is None]
    if bad:
        ctx.add("mmv.label-name", f"label name {bad[0]!r} is not [A-Za-z][A-Za-z0-9_]*: libpcp"
                " drops the label", record=n, offset=where, field=fld)
