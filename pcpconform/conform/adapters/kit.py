"""The kit's own adapter: pcpconform answering the conformance protocol
(spec/conformance.md) in every suite, in the one-shot and the persistent form.

    pcpconform conform --impl "python -m pcpconform.conform.adapters.kit"

    kit --capabilities                          what it offers (CONF-CAP-1)
    kit validator ARCHIVE_BASE                  {"valid": ..., "codes": [...]} (CONF-VAL-1)
    kit reader ARCHIVE_BASE                     the canonical JSON Lines dump (CONF-READ-1)
    kit writer FIXTURE OUT_BASE VERSION         writes the fixture's archive (CONF-WRITE-1)
    kit interp ARCHIVE_BASE REQUEST.json        the INTERP-FMT-1 document (CONF-INTERP-1)
    kit derive ARCHIVE_BASE REQUEST.json        descriptors, values, diagnostics (CONF-DERIVE-1)
    kit mmv-validator MMV_FILE                  {"valid": ..., "codes": [...]} (CONF-MMV-1)
    kit mmv-reader MMV_FILE                     the MMV JSON Lines dump (CONF-MMV-2)
    kit mmv-writer FIXTURE MMV_FILE             writes the MMV fixture's file (CONF-MMVW-1)
    kit --persistent                            JSON Lines requests on stdin (CONF-PERSIST-*)

``examples/adapters/pcpconform_adapter.py`` is the same thing cut down to a readable
template. A config file's syntax errors name it by its file name, as the corpus does. Each
suite's machinery is imported when that suite is asked for, so that the one-shot form pays
only for what one case needs.
"""

from __future__ import annotations

import io
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from pcpconform.check.engine import check_archive
from pcpconform.check.rules import Severity
from pcpconform.dump.jsonl import write_jsonl
from pcpconform.errors import PcpConformError
from pcpconform.io.archive import Archive
from pcpconform.io.setform import is_set_source
from pcpconform.version import __version__

__all__ = ["CAPABILITIES", "main", "answer", "serve"]

OPTIONS_ENV = "PCPCONFORM_CHECK_OPTIONS"
PROTOCOL_VERSION = 1
CAPABILITIES: dict[str, Any] = {
    "name": "pcpconform", "version": __version__,
    "suites": ["validator", "reader", "writer", "interp", "derive", "mmv-validator", "mmv-reader", "mmv-writer"],
    "archive_versions": [2, 3], "mmv_versions": [1, 2, 3],
    "options": ["decompress_limit"], "rules": ["pcp-6.0", "pcp-6.3"], "profiles": ["pcp-6.0", "pcp-6.3", "pcp-7"],
    "persistent": True,
}


class Failed(Exception):
    """The adapter cannot answer: one line on standard error, exit status 2."""


def validator(base: str, out: TextIO, options: dict[str, Any]) -> int:
    if is_set_source(base):             # an archive set: its members, and the rules between them
        from pcpconform.check.sets import check_set_and_members
        report = check_set_and_members(base)
    else:
        report = check_archive(base, **options)
    valid = not any(d.severity == Severity.ERROR for d in report.diagnostics)
    out.write(json.dumps({"valid": valid, "codes": sorted(report.codes())}) + "\n")
    return 0 if valid else 1


def reader(base: str, out: TextIO) -> int:
    try:
        if is_set_source(base):
            from pcpconform.dump.setdump import write_set_jsonl
            from pcpconform.io.archiveset import ArchiveSet
            write_set_jsonl(ArchiveSet(base), out)
            return 0
        write_jsonl(Archive(base), out)
    except PcpConformError as exc:
        raise Failed(str(exc)) from None
    return 0


def mmv_validator(path: str, out: TextIO) -> int:
    from pcpconform.check.mmv import check_mmv_file

    report = check_mmv_file(path)
    valid = not any(d.severity == Severity.ERROR for d in report.diagnostics)
    out.write(json.dumps({"valid": valid, "codes": sorted(report.codes())}) + "\n")
    return 0 if valid else 1


def mmv_reader(path: str, out: TextIO) -> int:
    from pcpconform.dump.mmv import dump_mmv_bytes

    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise Failed(f"mmv-reader: {exc}") from None
    # what the dump cannot read is a line of its own (spec/dump-mmv-jsonl.md, damaged files)
    dump_mmv_bytes(data, Path(path).name, out)
    return 0


def mmv_writer(fixture: str, out: str) -> int:
    from pcpconform.fixtures.mmv import generate_mmv, load_mmv_fixture

    try:
        generate_mmv(load_mmv_fixture(fixture), out)
    except PcpConformError as exc:
        raise Failed(str(exc)) from None
    return 0


def writer(fixture: str, out_base: str, version: str) -> int:
    from pcpconform.fixtures.fixture import load_fixture
    from pcpconform.fixtures.generate import generate_archive

    try:
        generate_archive(load_fixture(fixture), out_base, version=int(version))
    except (PcpConformError, ValueError) as exc:
        raise Failed(str(exc)) from None
    return 0


def _request(path: str) -> dict[str, Any]:
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    if not isinstance(data, dict):
        raise Failed(f"{path}: not a JSON object")
    return data


def interp(base: str, request_file: str, out: TextIO) -> int:
    from pcpconform.format.pmtypes import Timestamp
    from pcpconform.io.archiveset import open_source
    from pcpconform.oracles.interp.replay import Replay
    from pcpconform.oracles.interp.report import samples_json

    request = _request(request_file)
    sched = request["schedule"]
    try:
        interval = int(sched["interval_nsec"])
        archive = open_source(base, profile=request["rules"], direction=1 if interval >= 0 else -1)
        pmids = [int(archive.desc(m).pmid) for m in sched["metrics"]]
        start = Timestamp(int(sched["start"]["sec"]), int(sched["start"]["nsec"]))
        replay = Replay(archive, pmids, rules=request["rules"], from_time=start if interval > 0 else None)
        samples = replay.schedule(start, interval, int(sched["samples"]))
    except (PcpConformError, KeyError, ValueError) as exc:
        raise Failed(f"interp: {exc}") from None
    out.write(json.dumps(samples_json(archive, samples, request["rules"])) + "\n")
    return 0


def derive(base: str, request_file: str, out: TextIO) -> int:
    # the derive pipeline is heavy to import: only the derive suite pays for it
    from pcpconform.conform.expected import Schedule, derive_document, replay_source

    request = _request(request_file)
    config = Path(str(request["config"]))
    try:
        schedule = Schedule.from_json(request["schedule"])
        archive = replay_source(base, str(request["profile"]), schedule.interval_nsec)
        doc, diagnostics = derive_document(archive, config.read_bytes(), config.name, schedule,
                                           str(request["profile"]))
    except (PcpConformError, OSError, KeyError, ValueError) as exc:
        raise Failed(f"derive: {exc}") from None
    out.write(json.dumps({"kind": "derive", "result": doc, "diagnostics": diagnostics}) + "\n")
    return 0


def answer(suite: str, args: list[str], out: TextIO, options: dict[str, Any]) -> int:
    """One request: the suite's answer written to ``out``, and the exit status."""
    runs: dict[tuple[str, int], Callable[[], int]] = {
        ("validator", 1): lambda: validator(args[0], out, options),
        ("reader", 1): lambda: reader(args[0], out),
        ("writer", 3): lambda: writer(*args[:3]),
        ("interp", 2): lambda: interp(args[0], args[1], out),
        ("derive", 2): lambda: derive(args[0], args[1], out),
        ("mmv-validator", 1): lambda: mmv_validator(args[0], out),
        ("mmv-reader", 1): lambda: mmv_reader(args[0], out),
        ("mmv-writer", 2): lambda: mmv_writer(args[0], args[1]),
    }
    run = runs.get((suite, len(args)))
    if run is None:
        raise Failed(f"no such request: {suite} with {len(args)} arguments")
    return run()


def serve(lines: TextIO, out: TextIO) -> int:
    """The persistent form: one JSON request a line, one JSON answer a line (CONF-PERSIST-*)."""
    for line in lines:
        request = json.loads(line)
        cmd = request.get("cmd")
        if cmd == "start":
            out.write(json.dumps({"protocol": PROTOCOL_VERSION, **CAPABILITIES}) + "\n")
        elif cmd == "stop":
            return 0
        elif cmd == "run":
            buffer = io.StringIO()
            try:
                status = answer(request["suite"], list(request["args"]), buffer, dict(request.get("options") or {}))
                reply = {"seq": request["seq"], "exit": status, "stdout": buffer.getvalue()}
            except Failed as exc:
                reply = {"seq": request["seq"], "exit": 2, "stdout": "", "stderr": str(exc)}
            except Exception as exc:  # a bug of ours costs this case, not the process
                reply = {"seq": request["seq"], "exit": 2, "stdout": "", "stderr": f"{type(exc).__name__}: {exc}"}
            out.write(json.dumps(reply, separators=(",", ":")) + "\n")
        out.flush()
    return 0


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args == ["--capabilities"]:
        print(json.dumps(CAPABILITIES))
        return 0
    if args == ["--persistent"]:
        return serve(sys.stdin, sys.stdout)
    if not args:
        print("usage: kit --capabilities | --persistent | SUITE ARGS...", file=sys.stderr)
        return 2
    out = io.TextIOWrapper(sys.stdout.buffer, encoding="utf-8", newline="\n")
    options = json.loads(os.environ.get(OPTIONS_ENV) or "{}")
    try:
        status = answer(args[0], args[1:], out, options)
    except Failed as exc:
        print(f"kit: {exc}", file=sys.stderr)
        return 2
    out.flush()
    return status


if __name__ == "__main__":
    sys.exit(main())
