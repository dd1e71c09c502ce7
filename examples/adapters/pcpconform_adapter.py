#!/usr/bin/env python3
"""A template adapter for ``pcpconform conform`` (spec/conformance.md): the validator and
reader suites, in the one-shot and the persistent form, answered by pcpconform itself.
Put your implementation's calls in ``validate`` and ``dump``, and you have an adapter.

    pcpconform conform --impl "python3 examples/adapters/pcpconform_adapter.py"

    pcpconform_adapter.py --capabilities          what it offers (CONF-CAP-1)
    pcpconform_adapter.py validator ARCHIVE_BASE  {"valid": ..., "codes": [...]} (CONF-VAL-1)
    pcpconform_adapter.py reader ARCHIVE_BASE     the canonical JSON Lines dump (CONF-READ-1)
    pcpconform_adapter.py --persistent            one JSON request a line on stdin, one answer
                                                  a line on stdout (CONF-PERSIST-1..5)

The kit's full adapter, with the writer, interp and derive suites too, is the module
``pcpconform.conform.adapters.kit``.
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

CAPABILITIES = {"name": "pcpconform", "version": __version__, "suites": ["validator", "reader"],
                "archive_versions": [2, 3], "options": ["decompress_limit"], "persistent": True,
                # archive sets (a directory of archives as one source) are cases of their own
                "unsupported": ["set"]}


# -- your implementation goes here --------------------------------------------------------

def validate(base: str, options: dict) -> tuple[bool, list[str]]:
    """Whether the archive is valid, and the diagnostic codes (spec/validator.md) found."""
    report = check_archive(base, **options)
    return not any(d.severity == Severity.ERROR for d in report.diagnostics), sorted(report.codes())


def dump(base: str, out: io.TextIOBase) -> None:
    """The archive's canonical JSON Lines dump (spec/dump-jsonl.md); raises when unreadable."""
    write_jsonl(Archive(base), out)


# -- the protocol -------------------------------------------------------------------------

def answer(suite: str, base: str, options: dict) -> tuple[int, str, str]:
    """(exit status, standard output, standard error) of one case, in either form."""
    out = io.StringIO()
    if suite == "validator":
        valid, codes = validate(base, options)
        return (0 if valid else 1), json.dumps({"valid": valid, "codes": codes}) + "\n", ""
    try:
        dump(base, out)
    except PcpConformError as exc:
        return 1, "", str(exc)
    return 0, out.getvalue(), ""


def persistent() -> int:
    for line in sys.stdin:
        request = json.loads(line)
        if request["cmd"] == "start":
            reply = {"protocol": 1, **CAPABILITIES}
        elif request["cmd"] == "stop":
            return 0
        elif request["suite"] in CAPABILITIES["suites"]:
            status, stdout, stderr = answer(request["suite"], request["args"][0], request.get("options", {}))
            reply = {"seq": request["seq"], "exit": status, "stdout": stdout, "stderr": stderr}
        else:
            reply = {"seq": request["seq"], "skipped": f"no {request['suite']} suite here"}
        print(json.dumps(reply), flush=True)
    return 0


def main(argv: list[str]) -> int:
    if argv == ["--capabilities"]:
        print(json.dumps(CAPABILITIES))
        return 0
    if argv == ["--persistent"]:
        return persistent()
    if len(argv) == 2 and argv[0] in CAPABILITIES["suites"]:
        options = json.loads(os.environ.get("PCPCONFORM_CHECK_OPTIONS") or "{}")
        status, stdout, stderr = answer(argv[0], argv[1], options)
        sys.stdout.buffer.write(stdout.encode("utf-8"))
        if stderr:
            print(f"pcpconform_adapter: {stderr}", file=sys.stderr)
        return status
    print("usage: pcpconform_adapter.py --capabilities | --persistent | validator|reader ARCHIVE_BASE",
          file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
