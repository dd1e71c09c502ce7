"""``pcpconform check --watch FILE|DIR``: sample a running writer's MMV files as the MMV PMDA
reads them, and report what changes between samples (pcpconform.check.mmv.watch)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pcpconform.check import output
from pcpconform.check.mmv.magic import is_mmv_file
from pcpconform.cli.output import opened_output
from pcpconform.errors import UsageError

__all__ = ["add_arguments", "run"]


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--watch", action="store_true",
                   help="watch one MMV file, or the MMV files of a directory, as a writer updates them: "
                        "sample every --interval for --count samples or --time")
    p.add_argument("--interval", default="1s", metavar="I", help="with --watch: the time between samples "
                   "(default 1s; PCP's forms: 500ms, 2sec, 1min)")
    how_long = p.add_mutually_exclusive_group()
    how_long.add_argument("--count", type=int, metavar="N", help="with --watch: take N samples (default 10)")
    how_long.add_argument("--time", metavar="D", help="with --watch: sample for this long (e.g. 30s, 5min)")


def _seconds(text: str, what: str) -> float:
    from pcpconform.oracles.interp.schedule import parse_interval

    seconds = parse_interval(text, what) / 1e9
    if seconds <= 0:
        raise UsageError(f"{what} {text!r}: must be positive")
    return seconds


def run(args: argparse.Namespace) -> int:
    from pcpconform.check.mmv.watch import watch_mmv  # numpy: only when watching

    if len(args.archives) != 1:
        raise UsageError("check --watch takes one MMV file or one directory")
    path = Path(args.archives[0])
    if not path.exists():
        raise UsageError(f"{path}: no such file or directory")
    if path.is_file() and not is_mmv_file(path):
        raise UsageError(f"{path}: not an MMV file")
    interval = _seconds(args.interval, "--interval")
    duration = _seconds(args.time, "--time") if args.time else None
    count = args.count if args.count is not None or duration is not None else 10
    if count is not None and count < 2:
        raise UsageError("--count must be at least 2: a watch compares samples")

    def progress(n: int) -> None:
        if not args.quiet and sys.stderr.isatty():
            print(f"\rsample {n}", end="", file=sys.stderr, flush=True)

    reports = watch_mmv(path, interval=interval, count=count, duration=duration,
                        max_diagnostics=args.max_diagnostics, on_sample=progress)
    if not args.quiet and sys.stderr.isatty():
        print(file=sys.stderr)
    with opened_output(args.output) as out:
        output.write(args.format, reports, out, quiet=args.quiet, warnings_as_errors=args.warnings_as_errors)
    if any(r.errors for r in reports):
        return 1
    if args.warnings_as_errors and any(r.warnings for r in reports):
        return 1
    return 0
