"""An mmvdump-style listing of an MMV file, for people, made from the JSON Lines records.

The layout follows PCP's mmvdump: the header lines, then one block per TOC entry in TOC
order, each entry as ``[id/offset]``. Where mmvdump is wrong or not repeatable this listing
differs (DUMP-MMV-TEXT): version 2 and 3 instance offsets use the 24-byte stride, an
ELAPSED value is shown as stored (mmvdump adds the current time to an open interval), and
bytes outside printable ASCII are escaped. A defect is a ``Bad ...`` line where it is met.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Iterable
from typing import Any, TextIO

from pcpconform.dump.mmv_blocks import Block
from pcpconform.dump.mmv_fields import TYPE_DESCRIPTIONS, units_text

__all__ = ["write_mmv_text", "TYPE_DESCRIPTIONS"]

_SECTION_TITLES = {"indoms": "indoms offset", "instances": "instances offset",
                   "metrics": "metrics offset", "values": "values offset",
                   "strings": "string offset", "labels": "labels offset"}


def _c_float(real: float) -> str:
    """printf's %f: as Python's, but a NaN keeps its sign ("-nan")."""
    if math.isnan(real):
        return "-nan" if math.copysign(1.0, real) < 0 else "nan"
    return f"{real:f}"


def _value_text(obj: dict[str, Any]) -> str:
    value = obj["value"]
    if obj.get("sentinel"):
        return " = (no value: sentinel)"
    if value is None:
        return f" Unknown type {obj['type']}" if obj["type"] not in (None, "string") else " = ?"
    kind, text = value["type"], value["value"]
    if kind == "string":
        return f' = "{text}"'
    if kind in ("float", "double"):
        real = struct.unpack(">f" if kind == "float" else ">d", bytes.fromhex(text[2:]))[0]
        return f" = {_c_float(real)}"
    if kind == "elapsed":
        return f" = {text} (value={text}/extra={obj['extra']})"
    return f" = {text}"


def _help(obj: dict[str, Any], out: TextIO) -> None:
    for key in ("shorttext", "helptext"):
        if obj[f"{key}_offset"] == 0:
            out.write(f"       (no {key})\n")
        else:
            out.write(f"       {key}={'?' if obj[key] is None else obj[key]}\n")


def _header(h: dict[str, Any], out: TextIO) -> None:
    out.write(f"MMV file   = {h['file']}\n")
    out.write(f"Version    = {h['version']}\n")
    out.write(f"Generated  = {h['g1']}\n")
    if h["g1"] != h["g2"]:
        out.write(f"Generated2 = {h['g2']}\n")
        out.write(f"Mismatched generation numbers ({h['g1']}/{h['g2']})\n")
    out.write(f"TOC count  = {h['tocs']}\n")
    out.write(f"Cluster    = {h['cluster']}\n")
    out.write(f"Process    = {h['process']}\n")
    out.write(f"Flags      = 0x{h['flags']:x} ({', '.join(h['flag_names']) or 'none'})\n")


def _entry(obj: dict[str, Any], out: TextIO) -> None:
    kind = obj["kind"]
    at = obj["offset"]
    if kind == "indom":
        out.write(f"  [{obj['serial']}/{at}] {obj['count']} instances, starting at offset"
                  f" {obj['instances_offset']}\n")
        _help(obj, out)
    elif kind == "instance":
        serial = "?" if obj["serial"] is None else obj["serial"]
        name = "?" if obj["name"] is None else obj["name"]
        out.write(f'  [{serial}/{at}] instance = [{obj["internal"]} or "{name}"]\n')
    elif kind == "metric":
        out.write(f"  [{obj['item']}/{at}] {'?' if obj['name'] is None else obj['name']}\n")
        sem = {1: "counter", 3: "instant", 4: "discrete"}.get(obj["semantics"], "?")
        out.write(f"       type={TYPE_DESCRIPTIONS.get(obj['type'], '?')}"
                  f" (0x{obj['type'] & 0xFFFFFFFF:x}), sem={sem}"
                  f" (0x{obj['semantics'] & 0xFFFFFFFF:x}), pad=0x{obj['padding']:x}\n")
        out.write(f"       units={units_text(obj['dimension'])}\n")
        indom = obj["indom"]
        out.write("       (no indom)\n" if indom in (0, -1) else f"       indom={indom}\n")
        _help(obj, out)
    elif kind == "value":
        item = "?" if obj["item"] is None else obj["item"]
        name = "?" if obj["name"] is None else obj["name"]
        inst = ""
        if obj["instance"] is not None:
            inst = f'[{obj["instance"]} or "{obj["instance_name"] or "?"}"]'
        out.write(f"  [{item}/{at}] {name}{inst}{_value_text(obj)}\n")
    elif kind == "string":
        out.write(f"  [{obj['index'] + 1}/{at}] {obj['text']}\n")
    elif kind == "label":
        out.write(f"  [{obj['index'] + 1}/{at}] {obj['payload']}\n")
        out.write(f"        flags=0x{obj['flags']:x}, identity=0x{obj['identity']:x}\n")
        out.write(f"        internal=0x{obj['internal'] & 0xFFFFFFFF:x}\n")


def _heading(toc: dict[str, Any], out: TextIO) -> None:
    title = _SECTION_TITLES[toc["section"]]
    where = "toc offset" if toc["section"] == "metrics" else "offset"  # as mmvdump words it
    out.write(f"\nTOC[{toc['index']}]: {where} {toc['offset']}, {title}"
              f" {toc['section_offset']} ({toc['count']} entries)\n")


def _section_of(obj: dict[str, Any]) -> str | None:
    """The section a line belongs to: by its kind, or a problem's by its field path."""
    if obj["kind"] == "problem":
        head: str = obj["field"].split("[", 1)[0].split(".", 1)[0]
        return head if head in _SECTION_TITLES else None
    return f"{obj['kind']}s"


def write_mmv_text(records: Iterable[dict[str, Any] | Block], out: TextIO) -> None:
    """The listing of the records ``iter_mmv_lines`` made: each section under its TOC heading."""
    pending: list[dict[str, Any]] = []     # TOC entries whose sections are still to come
    current: dict[str, Any] | None = None
    seen = 0
    for obj in records:
        if isinstance(obj, Block):         # consecutive entries of one section, made by columns
            while pending and (current is None or current["section"] != f"{obj.kind}s"
                               or seen >= current["count"]):
                current, seen = pending.pop(0), 0
                _heading(current, out)
            for chunk in obj.text():       # not chunk + "\n": that copies every chunk once more
                out.write(chunk)
                out.write("\n")
            seen += obj.count
            continue
        kind = obj["kind"]
        section = _section_of(obj)
        if kind == "header":
            _header(obj, out)
        elif kind == "toc":    # every TOC line comes before the first entry line
            if obj["section"] in _SECTION_TITLES and obj["count"] >= 0:
                pending.append(obj)
            elif obj["section"] is None:
                out.write(f"\nUnrecognised TOC[{obj['index']}] type: 0x{obj['type'] & 0xFFFFFFFF:x}\n")
        elif section is None:
            out.write(f"Bad {obj['field']} at offset {obj['offset']}: {obj['message']}\n")
        else:
            # entries come section by section in TOC order: open the next heading when this
            # line belongs to another section or the current one is full
            while pending and (current is None or current["section"] != section
                               or (kind != "problem" and seen >= current["count"])):
                current, seen = pending.pop(0), 0
                _heading(current, out)
            if kind == "problem":
                out.write(f"Bad {obj['field']} at offset {obj['offset']}: {obj['message']}\n")
            else:
                _entry(obj, out)
                seen += 1
    for toc in pending:
        _heading(toc, out)
