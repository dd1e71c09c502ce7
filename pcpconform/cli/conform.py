"""``pcpconform conform``: run the corpus against an implementation under test
(spec/conformance.md). Exit 0 every case run passed, 1 a case failed, crashed, timed out or
broke the protocol, 2 nothing could be run."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TextIO

from pcpconform.conform.protocol import SUITES
from pcpconform.conform.runner import DEFAULT_TIMEOUT, ConformReport, run_conformance
from pcpconform.conform.verdicts import Verdict

__all__ = ["add_arguments", "run", "write_text"]


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--impl", required=True, metavar="CMD",
                   help="the implementation's command, split by shell rules and run without a shell")
    p.add_argument("--corpus", default="corpus", metavar="DIR", help="the corpus directory (default: corpus)")
    p.add_argument("--suite", action="append", choices=SUITES, metavar="SUITE",
                   help=f"a suite to run ({', '.join(SUITES)}); repeatable; default: both")
    p.add_argument("--cases", action="append", default=[], metavar="GLOB",
                   help="run only the cases whose id matches GLOB; repeatable")
    p.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, metavar="SEC",
                   help=f"seconds one case may take (default: {DEFAULT_TIMEOUT:g})")
    p.add_argument("--format", choices=("text", "json"), default="text", help="the report's form")
    p.add_argument("-j", "--jobs", type=int, default=1, metavar="N", help="cases run at once (default: 1)")
    p.add_argument("-v", "--verbose", action="store_true", help="list passed and skipped cases too")


def _clauses(clauses: list[str]) -> str:
    if not clauses:
        return ""
    shown = clauses[:4] + (["..."] if len(clauses) > 4 else [])
    return f" [{' '.join(shown)}]"


def write_text(report: ConformReport, out: TextIO, *, verbose: bool = False) -> None:
    caps = report.capabilities
    out.write(f"implementation: {caps.name} {caps.version} (suites: {', '.join(caps.suites) or 'none'}; "
              f"archive versions: {', '.join(map(str, caps.archive_versions)) or 'none'})\n")
    skips: dict[tuple[str, str], int] = {}
    for r in report.results:
        if r.verdict == Verdict.SKIP and not verbose:
            skips[(r.suite, r.detail)] = skips.get((r.suite, r.detail), 0) + 1
            continue
        if r.verdict == Verdict.PASS and not verbose:
            continue
        out.write(f"{r.verdict.value.upper()} {r.suite} {r.case}{_clauses(r.clauses)}"
                  + (f": {r.detail}" if r.detail else "") + "\n")
        if r.stderr and r.verdict in (Verdict.CRASH, Verdict.PROTOCOL_ERROR):
            out.write(f"  stderr: {r.stderr.splitlines()[-1][:200]}\n")
    for (suite, why), n in skips.items():
        out.write(f"skipped {n} {suite} case{'s' if n != 1 else ''}: {why}\n")
    for suite in dict.fromkeys(r.suite for r in report.results):
        counts = report.counts(suite)
        out.write(f"{suite}: " + ", ".join(f"{n} {v}" for v, n in counts.items() if n) + "\n")


def run(args: argparse.Namespace) -> int:
    report = run_conformance(args.corpus, args.impl, suites=args.suite or SUITES, globs=args.cases,
                             timeout=args.timeout, jobs=args.jobs)
    if args.format == "json":
        json.dump(report.as_json(), sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        write_text(report, sys.stdout, verbose=args.verbose)
    return report.exit_status
