"""The inverse of the JSON Lines dump: write the archive a dump describes.

This is what makes the dump's losslessness checkable: ``undump(dump(A))`` must give A's
files byte for byte (compressed components come back decompressed).
"""

from __future__ import annotations

import json
import re
import struct
from collections.abc import Iterable
from io import BufferedWriter
from pathlib import Path
from typing import Any

from construct import Container, ListContainer

from pcpconform.dump.jsonl import HEADER
from pcpconform.errors import FormatError, Location, UsageError
from pcpconform.format.pmtypes import PmID, PmInDom, PmType, PmUnits, Timestamp
from pcpconform.format.schema import structs
from pcpconform.format.values import F32
from pcpconform.io.writer import ValueSetSpec, layout_result

__all__ = ["unescape_bytes", "undump"]

_ESCAPE = re.compile(r"\\x([0-9a-fA-F]{2})")


def unescape_bytes(text: str) -> bytes:
    """Inverse of dump.escape_bytes."""
    out = bytearray()
    pos = 0
    for m in _ESCAPE.finditer(text):
        out += text[pos:m.start()].encode("latin-1")
        out.append(int(m.group(1), 16))
        pos = m.end()
    out += text[pos:].encode("latin-1")
    return bytes(out)


def _stamp(obj: dict[str, int]) -> Timestamp:
    return Timestamp(int(obj["sec"]), int(obj["nsec"]))


def _value(tagged: dict[str, Any]) -> Any:
    token = tagged["type"]
    text: Any = tagged.get("value")  # a missing value fails in the conversion below
    if token == "float":
        return F32.from_bits(int(text, 16))
    if token == "double":
        return struct.unpack(">d", int(text, 16).to_bytes(8, "big"))[0]
    if token in ("32", "u32", "64", "u64", "insitu"):
        return int(text)
    return unescape_bytes(text)


def _label(obj: dict[str, Any], version: int) -> Container:
    sizes = {"hostname": 64, "timezone": 40} if version == 2 else {
        "hostname": 256, "timezone": 256, "zoneinfo": 256}
    c = Container(magic=int(obj["magic"], 16), pid=obj["pid"], start=_stamp(obj["start"]),
                  vol=obj["vol"])
    for name, size in sizes.items():
        raw = unescape_bytes(obj[name]) + b"\0" + unescape_bytes(obj.get(f"{name}_padding", ""))
        c[f"{name}_raw"] = raw.ljust(size, b"\0")[:size]
    if version == 3:
        c.features = int(obj["features"], 16)
        c.reserved = int(obj["reserved"], 16)
    return c


def _type_of(token: str) -> int:
    return int(token[5:]) if token.startswith("type-") else int(PmType.from_token(token))


def _sem_of(token: str) -> int:
    return int(token[4:]) if token.startswith("sem-") else {"counter": 1, "instant": 3, "discrete": 4}[token]


def _meta_body(obj: dict[str, Any]) -> Container:
    kind = obj["kind"]
    tail = unescape_bytes(obj.get("tail", ""))
    if kind == "desc":
        return Container(pmid=PmID(obj["pmid"]), type=_type_of(obj["type"]),
                         indom=PmInDom(obj["indom"]), sem=_sem_of(obj["sem"]),
                         units=PmUnits(**obj["units"]),
                         names=ListContainer(unescape_bytes(n) for n in obj["names"]), tail=tail)
    if kind == "indom":
        insts = obj["instances"]
        if "strtab" in obj:
            offsets, table = obj["offsets"], unescape_bytes(obj["strtab"])
        else:
            offsets, buf = [], bytearray()
            for inst in insts:
                if inst["name"] is None:
                    offsets.append(-1)
                else:
                    offsets.append(len(buf))
                    buf += unescape_bytes(inst["name"]) + b"\0"
            table = bytes(buf)
        return Container(timestamp=_stamp(obj["timestamp"]), indom=PmInDom(obj["indom"]),
                         numinst=obj.get("numinst", len(insts)), instlist=ListContainer(i["inst"] for i in insts),
                         offsets=ListContainer(offsets), strtab=table)
    if kind == "text":
        ident = obj["ident"]
        ident_word = int(PmInDom(ident)) if obj["target"] == "indom" else int(PmID(ident))
        return Container(type=obj["text_type"], ident=ident_word, text=unescape_bytes(obj["text"]))
    if kind == "labelset":
        sets = ListContainer()
        for s in obj["sets"]:
            js = unescape_bytes(s["json"])
            sets.append(Container(inst=s["inst"], jsonlen=len(js), json=js, nlabels=s["nlabels"],
                                  labels=ListContainer(Container(**lab) for lab in s["labels"])))
        return Container(timestamp=_stamp(obj["timestamp"]), type=obj["label_type"],
                         ident=obj["ident"], nsets=obj.get("nsets", len(sets)), sets=sets, tail=tail)
    return unescape_bytes(obj["body"])


def undump(lines: Iterable[str], out_base: str | Path) -> list[Path]:
    """Write the archive a JSON Lines dump describes; returns the files written."""
    out_base = Path(out_base)
    out_base.parent.mkdir(parents=True, exist_ok=True)
    handles: dict[str, BufferedWriter] = {}
    written: list[Path] = []
    version = 0
    seen_header = False
    types: dict[int, int] = {}
    try:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
                if not seen_header:
                    # DUMP-FILE-2: check what the dump is before reading it
                    if obj.get("kind") != "dump" or obj.get("format") != HEADER["format"] \
                            or obj.get("format_version") != HEADER["format_version"]:
                        raise FormatError(
                            "not a pcpconform-jsonl dump of format version "
                            f"{HEADER['format_version']} (the first line must be its header)",
                            Location(f"dump line {number}"), "dump.header")
                    seen_header = True
                    continue
                file = obj["file"]
                if obj["kind"] == "label":
                    version = obj["version"]
                    path = out_base.with_name(f"{out_base.name}.{file}")
                    handles[file] = open(path, "wb")  # noqa: SIM115 (closed in the finally below)
                    written.append(path)
                    handles[file].write(structs(version).label_record.build(_label(obj, version)))
                    continue
                s = structs(version)
                out = handles[file]
                kind = obj["kind"]
                if kind == "trailing":
                    out.write(unescape_bytes(obj["bytes"]))
                elif kind == "index":
                    out.write(s.index_entry.build(Container(
                        timestamp=_stamp(obj["timestamp"]), vol=obj["vol"],
                        off_meta=obj["off_meta"], off_data=obj["off_data"])))
                elif kind == "result":
                    if "raw" in obj:
                        out.write(bytes.fromhex(obj["raw"]))
                        continue
                    specs = [ValueSetSpec(int(PmID(v["pmid"])), types.get(int(PmID(v["pmid"])), PmType.U32),
                                          [(x["inst"], _value(x)) for x in v.get("values", [])],
                                          v["numval"]) for v in obj["vsets"]]
                    out.write(s.result_record.build(layout_result(version, _stamp(obj["timestamp"]), specs)))
                else:
                    body = _meta_body(obj)
                    if kind == "desc":
                        types.setdefault(int(body.pmid), body.type)
                    out.write(s.meta_record.build(Container(type=obj["tag"], body=body)))
            except FormatError:
                raise
            except (KeyError, ValueError, TypeError, AttributeError) as exc:
                raise FormatError(f"not a pcpconform JSON Lines record: {type(exc).__name__}: {exc}",
                                  Location(f"dump line {number}"), "dump.line") from None
    finally:
        for fh in handles.values():
            fh.close()
    if not written:
        raise UsageError("the dump holds no label record; nothing to write")
    return written
