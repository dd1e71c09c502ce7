"""Label set records: type, identifier, JSON and the label spans into it (FMT-LABELSET)."""

from __future__ import annotations

import json
import re
from typing import Any

from pcpconform.check.state import Context
from pcpconform.io.reader import RawRecord

__all__ = ["check_labelset"]

_LABEL_NAME_RE = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,253}")
_FLAGS = 0xC0                              # PM_LABEL_OPTIONAL, PM_LABEL_COMPOUND
_TYPES = (1, 2, 4, 8, 16, 32)              # CONTEXT, DOMAIN, INDOM, CLUSTER, ITEM, INSTANCES
_CONTEXT, _INSTANCES = 1, 32
_PM_IN_NULL = 0xFFFFFFFF
_MAX_JSONLEN, _MAX_NLABELS = 65535, 255


def check_labelset(ctx: Context, rec: RawRecord, b: Any) -> None:
    f, where = rec.file, {"record": rec.index, "offset": rec.offset}
    ltype = b.type & ~_FLAGS
    if ltype not in _TYPES:
        ctx.add("labelset.type", f, f"label type {b.type}", field="labelset.type", **where)
    if ltype == _CONTEXT and b.ident != _PM_IN_NULL:
        ctx.add("labelset.ident", f, f"context labels name ident 0x{b.ident:08x}, not PM_IN_NULL",
                field="labelset.ident", **where)
    if b.tail:
        ctx.add("labelset.length", f, f"{len(b.tail)} bytes after the label sets", field="labelset.tail", **where)
    if b.nsets < 0 or (ltype != _INSTANCES and b.nsets != 1):
        ctx.add("labelset.nsets", f, f"{b.nsets} label sets for label type {b.type}", field="labelset.nsets",
                **where)
    for k, s in enumerate(b.sets):
        _labelset(ctx, f, where, f"labelset.sets[{k}]", s)


def _labelset(ctx: Context, f: str, where: dict[str, Any], fld: str, s: Any) -> None:
    # item access: a construct Container's attributes are Python calls, and a .meta holds
    # thousands of label sets
    jsonlen, text, nlabels, labels = s["jsonlen"], s["json"], s["nlabels"], s["labels"]
    if not 0 <= jsonlen <= _MAX_JSONLEN:
        ctx.add("labelset.json", f, f"jsonlen {jsonlen}", field=fld + ".jsonlen", **where)
        return
    obj: dict[str, Any] | None
    try:
        obj = json.loads(text) if text else {}
        if not isinstance(obj, dict):
            raise ValueError
    except ValueError:
        ctx.add("labelset.json", f, f"JSON {text[:40]!r} is not an object", field=fld + ".json", **where)
        obj = None
    if nlabels > _MAX_NLABELS:
        ctx.add("labelset.nlabels", f, f"{nlabels} labels (at most 255)", field=fld + ".nlabels", **where)
    names = []
    size = len(text)
    for lab in labels:
        at, length = lab["name"], lab["namelen"]
        if at + length > size or lab["value"] + lab["valuelen"] > size:
            ctx.add("labelset.span", f, "a label span lies outside the JSON", field=fld + ".labels", **where)
            break
        name = text[at:at + length].decode("utf-8", "replace")
        names.append(name)
        if obj is not None and name not in obj:
            ctx.add("labelset.span", f, f"label name {name!r} is not a member of the JSON",
                    field=fld + ".labels", **where)
            break
    if obj is not None and nlabels >= 0 and len(names) == len(labels) and len(obj) != nlabels:
        ctx.add("labelset.nlabels", f, f"{nlabels} labels for a JSON object of {len(obj)} members",
                field=fld + ".nlabels", **where)
    if names and (names != sorted(names) or len(set(names)) != len(names)
                  or not all(_LABEL_NAME_RE.fullmatch(n) or "." in n for n in names)):
        ctx.add("labelset.name", f, "label names are not legal, unique and sorted", field=fld + ".labels", **where)
