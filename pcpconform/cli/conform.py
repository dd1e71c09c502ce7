"""``pcpconform conform``: run the corpus against an implementation under test
(spec/conformance.md). Exit 0 every unit run passed, 1 a unit failed, crashed, timed out or
broke the protocol, 2 nothing could be run."""

from __future__ import annotations

import argparse
import contextlib
import json
import shlex
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from pcpconform.cli.cluster import dask_cluster
from pcpconform.cli.output import opened_output
from pcpconform.conform.manifest import default_corpus
from pcpconform.conform.protocol import SUITES
from pcpconform.conform.report import FORMATS, write_report
from pcpconform.conform.runner import DEFAULT_TIMEOUT, run_conformance
from pcpconform.conform.verdicts import CaseResult
from pcpconform.errors import UsageError

__all__ = ["add_arguments", "run", "resolve_impl", "KIT_IMPL"]

#: the kit's own adapter as a command
KIT_IMPL = f"{shlex.quote(sys.executable)} -m pcpconform.conform.adapters.kit"
_BUILTIN = "builtin:"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--impl", action="append", metavar="CMD",
                   help="the implementation's command, split by shell rules and run without a shell; "
                        "builtin:NAME for an adapter bundled with the kit (builtin:pcpconform is the kit "
                        "itself); repeatable with --matrix")
    p.add_argument("--corpus", type=Path, default=None, metavar="DIR",
                   help="the corpus directory (default: ./corpus when it is one, else the corpus installed "
                        "with pcpconform)")
    p.add_argument("--suite", action="append", choices=SUITES, metavar="SUITE",
                   help=f"a suite to run ({', '.join(SUITES)}); repeatable; default: all")
    p.add_argument("--cases", action="append", default=[], metavar="GLOB",
                   help="run only the cases (or CASE/ENTRY units) whose id matches GLOB; repeatable")
    p.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, metavar="SEC",
                   help=f"seconds one case may take (default: {DEFAULT_TIMEOUT:g})")
    form = p.add_mutually_exclusive_group()
    form.add_argument("--persistent", dest="persistent", action="store_const", const=True, default=None,
                      help="talk to one process per worker in JSON Lines (default: when its capabilities "
                           "say it can)")
    form.add_argument("--one-shot", dest="persistent", action="store_const", const=False,
                      help="run the command once per case")
    p.add_argument("--format", choices=tuple(FORMATS), default="text", help="the report's form")
    p.add_argument("-o", "--output", metavar="FILE", help="write the report to FILE (default: standard output)")
    p.add_argument("-j", "--jobs", type=int, default=1, metavar="N", help="cases run at once (default: 1)")
    p.add_argument("--dask", metavar="ADDRESS",
                   help="run the units on the Dask cluster whose scheduler is at ADDRESS instead of -j "
                        "threads (needs the 'dask' extra; the workers need the corpus and the "
                        "implementation at the same paths); the report is the same as a local run's")
    p.add_argument("-v", "--verbose", action="store_true", help="list passed and skipped cases too")
    p.add_argument("--matrix", action="store_true",
                   help="run every built-in adapter (or each --impl) and print the implementation x "
                        "case matrix (--format markdown, html or json)")


def resolve_impl(impl: str) -> str:
    """``builtin:NAME`` as the command of that built-in adapter; any other string as it is."""
    if not impl.startswith(_BUILTIN):
        return impl
    name = impl[len(_BUILTIN):]
    if name == "kit":
        return KIT_IMPL
    from pcpconform.conform.adapters import BUILTIN

    if name not in BUILTIN:
        known = ", ".join(["kit", *sorted(BUILTIN)])
        raise UsageError(f"--impl {impl}: no such built-in adapter (known: {known})")
    adapter = BUILTIN[name]
    if not adapter.available():
        raise UsageError(f"--impl {impl}: not installed here")
    return adapter.command


def _matrix_impl(impl: str) -> str:
    """An --impl as run_matrix takes it: a built-in adapter's name, or NAME=CMD."""
    if impl.startswith(_BUILTIN):
        name = impl[len(_BUILTIN):]
        return "pcpconform" if name == "kit" else name
    words = impl.split()
    if words and "=" in words[0]:       # NAME=CMD already
        return impl
    return f"{words[-1].rsplit('/', 1)[-1] if words else 'impl'}={impl}"


@contextmanager
def _progress(enabled: bool) -> Iterator[tuple[Callable[[int], None] | None, Callable[[CaseResult], None] | None]]:
    """A progress bar on standard error, only when it is a terminal (rich)."""
    if not enabled:
        yield None, None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(TextColumn("conform"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  TextColumn("{task.description}"), transient=True,
                  console=Console(stderr=True)) as bar:
        task = bar.add_task("", total=None)

        def start(total: int) -> None:
            bar.update(task, total=total)

        def advance(result: CaseResult) -> None:
            bar.update(task, advance=1, description=f"{result.suite} {result.case}")

        yield start, advance


def _matrix(args: argparse.Namespace) -> int:
    """``--matrix``: conform.matrix's run and renderings (markdown for text)."""
    from pcpconform.conform import matrix

    impls = [_matrix_impl(i) for i in args.impl] if args.impl else None
    report = matrix.run_matrix(args.corpus or default_corpus(), impls, args.suite or SUITES, args.jobs,
                               args.timeout, args.cases)
    with opened_output(args.output) as out:
        if args.format == "json":
            out.write(json.dumps(report.as_json(), indent=1, sort_keys=True) + "\n")
        elif args.format == "html":
            out.write(matrix.render_html(report))
        else:
            out.write(matrix.render_markdown(report))
    return 1 if report.unexplained() else 0


def run(args: argparse.Namespace) -> int:
    if args.matrix:
        if args.dask is not None:
            raise UsageError("--dask runs one --impl, not --matrix")
        return _matrix(args)
    if not args.impl:
        raise UsageError("--impl CMD is needed (or --matrix)")
    if len(args.impl) > 1:
        raise UsageError("one --impl at a time (several only with --matrix)")
    impl = resolve_impl(args.impl[0])
    with contextlib.ExitStack() as stack:
        cluster = stack.enter_context(dask_cluster(args.dask, "conform")) if args.dask is not None else None
        with _progress(sys.stderr.isatty()) as (on_start, on_result):
            report = run_conformance(args.corpus or default_corpus(), impl, suites=args.suite or SUITES,
                                     globs=args.cases, timeout=args.timeout, jobs=args.jobs,
                                     persistent=args.persistent, progress=on_result, on_start=on_start,
                                     dask=cluster)
    with opened_output(args.output) as out:
        write_report(report, out, args.format, verbose=args.verbose)
    return report.exit_status
