#!/usr/bin/env python3
"""The kit's own adapter for ``pcpconform conform`` (spec/conformance.md, one-shot form).

    pcpconform conform --impl "python3 examples/adapters/pcpconform_adapter.py"

    pcpconform_adapter.py --capabilities         what it offers (CONF-CAP-1)
    pcpconform_adapter.py validator ARCHIVE_BASE {"valid": ..., "codes": [...]} (CONF-VAL-1)
    pcpconform_adapter.py reader ARCHIVE_BASE    the canonical JSON Lines dump (CONF-READ-1)

It answers with pcpconform itself, so the kit passes its own corpus; an adapter for another
implementation has the same shape with that implementation's calls in place of these.
"""

from __future__ import annotations

import io
import json
import os
import sys

from pcpconform.check.engine import check_archive
from pcpconform.check.rules import Severity
from pcpconform.dump.jsonl import write_jsonl
from pcpconform.errors import PcpConformError
from pcpconform.io.archive import Archive
from pcpconform.version import __version__

OPTIONS_ENV = "PCPCONFORM_CHECK_OPTIONS"


def capabilities() -> int:
    print(json.dumps({"name": "pcpconform", "version": __version__, "suites": ["validator", "reader"],
                      "archive_versions": [2, 3], "options": ["decompress_limit"]}))
    return 0


def validator(base: str) -> int:
    options = json.loads(os.environ.get(OPTIONS_ENV) or "{}")
    report = check_archive(base, **options)
    codes = sorted(report.codes())
    valid = not any(d.severity == Severity.ERROR for d in report.diagnostics)
    print(json.dumps({"valid": valid, "codes": codes}))
    return 0 if valid else 1


def reader(base: str) -> int:
    out = io.TextIOWrapper(sys.stdout.buffer, encoding="utf-8", newline="\n")
    try:
        write_jsonl(Archive(base), out)
    except PcpConformError as exc:
        print(f"pcpconform_adapter: {exc}", file=sys.stderr)
        return 1
    out.flush()
    return 0


def main(argv: list[str]) -> int:
    if argv == ["--capabilities"]:
        return capabilities()
    if len(argv) == 2 and argv[0] in ("validator", "reader"):
        return validator(argv[1]) if argv[0] == "validator" else reader(argv[1])
    print("usage: pcpconform_adapter.py --capabilities | validator|reader ARCHIVE_BASE", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
