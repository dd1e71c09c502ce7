"""The .meta records of an archive, read with struct alone (no kit import: the targets
start in milliseconds, so the tests can afford many runs)."""

import struct
import sys


def meta_records(base):
    """(type, body bytes) of each framed record after the label; stops where framing breaks."""
    try:
        with open(base + ".meta", "rb") as f:
            data = f.read()
    except OSError as exc:
        print(f"cannot read {base}.meta: {exc}", file=sys.stderr)
        sys.exit(1)
    if len(data) < 8:
        print("short label", file=sys.stderr)
        sys.exit(1)
    at = struct.unpack_from(">I", data, 0)[0]
    while at + 12 <= len(data):
        length, rtype = struct.unpack_from(">II", data, at)
        if length < 12 or at + length > len(data):
            break
        yield rtype, data[at + 8:at + length - 4]
        at += length
