"""The inverse of the MMV JSON Lines dump: the MmvFile its lines describe (DUMP-MMV-UNDUMP).

Indoms come in indom-section order with their instances (found through each instance's
``indom_offset``) in instance-section order; metrics in metric-section order, each with its
values (found through ``metric_offset``) in value-section order. ``build_mmv`` then lays
the file out again; for a file libpcp_mmv (or the kit) wrote, those are its bytes.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from pcpconform.errors import UsageError
from pcpconform.mmv.model import Indom, Instance, Label, Metric, MmvFile, Value, decode_text

__all__ = ["undump_mmv", "unescape_bytes"]


def unescape_bytes(text: str) -> bytes:
    """The bytes of an escaped string (DUMP-ESC-1): ``\\xHH`` is byte HH, any other
    character one byte."""
    out = bytearray()
    i = 0
    while i < len(text):
        if text.startswith("\\x", i):
            out.append(int(text[i + 2:i + 4], 16))
            i += 4
        else:
            out.append(ord(text[i]))
            i += 1
    return bytes(out)


def _text(value: str | None) -> str | None:
    return None if value is None else decode_text(unescape_bytes(value))


def undump_mmv(lines: Iterable[str]) -> MmvFile:
    """The content of an MMV JSON Lines dump; a dump with an error problem, or that is not
    an MMV dump, is refused with a UsageError."""
    objs: list[dict[str, Any]] = []
    for n, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            objs.append(json.loads(line))
        except ValueError as exc:
            raise UsageError(f"line {n + 1}: not JSON: {exc}") from None
    if not objs or objs[0].get("format") != "pcpconform-mmv-jsonl":
        raise UsageError("not a pcpconform MMV JSON Lines dump")
    by: dict[str, list[dict[str, Any]]] = {}
    for obj in objs[1:]:
        by.setdefault(obj["kind"], []).append(obj)
    errors = [p for p in by.get("problem", []) if p["severity"] == "error"]
    if errors:
        raise UsageError(f"the dump records {len(errors)} error problems; it describes no"
                         " whole file")
    (hdr,) = by["header"]
    insts: dict[int, list[Instance]] = {}
    for i in by.get("instance", []):
        insts.setdefault(i["indom_offset"], []).append(Instance(i["internal"], _text(i["name"]) or ""))
    indoms = tuple(Indom(d["serial"], tuple(insts.get(d["offset"], ())), _text(d["shorttext"]),
                         _text(d["helptext"])) for d in by.get("indom", []))
    values: dict[int, list[Value]] = {}
    for v in by.get("value", []):
        atom = bytes.fromhex(v["atom"])
        if v["type"] == "string":
            value = Value(v["instance"], atom, 0, _text(v["value"]["value"]))
        else:
            value = Value(v["instance"], atom, int(v["extra"]))
        values.setdefault(v["metric_offset"], []).append(value)
    metrics = tuple(Metric(_text(m["name"]) or "", m["item"], m["type"], m["semantics"],
                           int(m["dimension"], 16), m["indom"], _text(m["shorttext"]),
                           _text(m["helptext"]), tuple(values.get(m["offset"], ())))
                    for m in by.get("metric", []))
    labels = tuple(Label(lb["flags"], lb["identity"], lb["internal"], _text(lb["payload"]) or "")
                   for lb in by.get("label", []))
    return MmvFile(hdr["version"], int(hdr["g1"]), int(hdr["g2"]), hdr["flags"], hdr["process"],
                   hdr["cluster"], indoms, metrics, labels)
