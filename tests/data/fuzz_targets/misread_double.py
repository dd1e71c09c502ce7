"""A conformance reader adapter (spec/conformance.md, CONF-READ-1) that prints the kit's dump
but silently rounds every double to a float's precision."""

import json
import struct
import sys


def main() -> int:
    if sys.argv[1:2] == ["--capabilities"]:
        print(json.dumps({"name": "misread-double", "version": "1", "suites": ["reader"],
                          "archive_versions": [2, 3]}))
        return 0
    from pcpconform.dump.jsonl import dump_lines
    from pcpconform.io.archive import Archive

    try:
        lines = list(dump_lines(Archive(sys.argv[2])))
    except Exception as exc:
        print(f"cannot read: {exc}", file=sys.stderr)
        return 1
    for line in lines:
        print(_misread(line.rstrip("\n")))
    return 0


def _misread(line: str) -> str:
    if '"double"' not in line:
        return line
    obj = json.loads(line)
    return json.dumps(obj, separators=(",", ":")) if _walk(obj) else line


def _walk(node: object) -> bool:
    """Round every double value through a float (the planted misread); True if one changed."""
    changed = False
    if isinstance(node, dict):
        if node.get("type") == "double" and isinstance(node.get("value"), str) and node["value"].startswith("0x"):
            value = struct.unpack(">d", int(node["value"], 16).to_bytes(8, "big"))[0]
            if abs(value) < 3e38:
                rounded = struct.unpack(">f", struct.pack(">f", value))[0]
                bits = "0x" + struct.pack(">d", rounded).hex()
                changed = bits != node["value"]
                node["value"] = bits
        for v in node.values():
            changed = _walk(v) or changed
    elif isinstance(node, list):
        for v in node:
            changed = _walk(v) or changed
    return changed


sys.exit(main())
