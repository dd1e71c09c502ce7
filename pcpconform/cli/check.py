"""``pcpconform check``: validate archives and report every problem found."""

from __future__ import annotations

import argparse
import contextlib
import functools
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from pcpconform.check import output
from pcpconform.check.diagnostics import Report
from pcpconform.check.inputs import expand
from pcpconform.check.runner import (
    CheckResults,
    count_option,
    default_check,
    jobs_from_option,
    run_checks,
)
from pcpconform.cli import watch
from pcpconform.cli.cluster import dask_cluster
from pcpconform.cli.output import opened_output

if TYPE_CHECKING:
    from pcpconform.cluster import Cluster

__all__ = ["add_arguments", "run"]


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("archives", nargs="+", metavar="ARCHIVE",
                   help="archive base name, any file of an archive, an MMV file, or a directory "
                        "(searched for archives and MMV files by content; one that holds two or more "
                        "archives of one host is also checked as an archive set)")
    p.add_argument("--set", dest="sets", action="store_true",
                   help="every argument is one archive set, a directory or a comma-separated list, as "
                        "libpcp opens it: its members are checked, and the rules across them "
                        "(spec/sets.md)")
    p.add_argument("--format", choices=("text", "json", "junit", "sarif"), default="text")
    p.add_argument("-o", "--output", metavar="FILE",
                   help="write the report to this file instead of standard output")
    p.add_argument("--strict", "--warnings-as-errors", dest="warnings_as_errors", action="store_true",
                   help="every spec violation fails: exit 1 on warnings too, not only on what "
                        "libpcp rejects or misreads")
    p.add_argument("--max-diagnostics", type=count_option(1), metavar="N",
                   help="stop checking an archive after N diagnostics")
    p.add_argument("-j", "--jobs", type=count_option(0), default=1, metavar="N",
                   help="check N archives at once (0: one per CPU; default 1)")
    p.add_argument("--dask", metavar="ADDRESS",
                   help="check on the Dask cluster whose scheduler is at ADDRESS (needs the 'dask' "
                        "extra; the workers must see the same files at the same paths); the report "
                        "is the same as a local run's")
    p.add_argument("-q", "--quiet", action="store_true",
                   help="no progress bar; text output lists diagnostics only")
    watch.add_arguments(p)


def run(args: argparse.Namespace) -> int:
    if args.watch:
        return watch.run(args)
    found = expand(args.archives, sets=args.sets)
    targets, problems = found.targets, found.problems
    for problem in problems:
        print(f"pcpconform check: {problem}", file=sys.stderr)
    if found.skipped and not args.quiet:
        print(f"pcpconform check: skipped {found.skipped} "
              f"{'file' if found.skipped == 1 else 'files'} that are neither PCP archives nor MMV files",
              file=sys.stderr)
    if not targets:
        if not problems:
            print("pcpconform check: nothing to check", file=sys.stderr)
        return 2
    progress = not args.quiet and sys.stderr.isatty()
    with contextlib.ExitStack() as stack:
        # connected before any output, so an unreachable scheduler is one line and exit 2
        cluster = stack.enter_context(dask_cluster(args.dask, "check")) if args.dask is not None else None
        return _check(args, targets, problems, progress, cluster, found.mmv_dirs)


def _check(args: argparse.Namespace, targets: list[Path], problems: list[str], progress: bool,
           cluster: Cluster | None, mmv_dirs: set[Path]) -> int:
    with opened_output(args.output) as out:
        stream = None
        if args.format == "text":   # streamed: each archive as soon as it is checked
            stream = output.TextStream(out, terminal=not args.output and out.isatty(), quiet=args.quiet)

        def done(report: Report) -> None:
            if report.os_error:     # the OS's refusal, not a finding: one line, exit 2
                print(f"pcpconform check: {report.os_error}", file=sys.stderr)
            elif stream is not None:
                stream.report(report)

        # the MMV files of a directory are checked together, as the MMV PMDA loads them
        together = {"check": functools.partial(default_check, mmv_directories=frozenset(mmv_dirs))} \
            if mmv_dirs else {}
        checked = run_checks(targets, jobs_from_option(args.jobs), args.max_diagnostics, progress,
                             on_report=done, dask=cluster, **together)
        for crash in checked.crashes:
            print(f"pcpconform check: {crash.archive}: not checked: {crash.reason}", file=sys.stderr)
        results = CheckResults([r for r in checked if not r.os_error], checked.crashes)
        refused = len(checked) - len(results)
        if stream is not None:
            stream.finish(results, results.crashes)
        else:
            output.write(args.format, results, out, crashes=results.crashes, quiet=args.quiet,
                         warnings_as_errors=args.warnings_as_errors)
        out.flush()
    if problems or results.crashes or refused:
        return 2
    if any(r.errors for r in results):
        return 1
    if args.warnings_as_errors and any(r.warnings for r in results):
        return 1
    return 0
