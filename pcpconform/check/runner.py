"""Turning command-line arguments into archives, and checking them (in parallel if asked).

``expand_inputs`` accepts base names, any file of an archive (compressed or not), MMV files
and directories (searched recursively, by content: ``pcpconform.check.inputs``).
``run_checks`` runs the checker on every archive, in this process, in a pool of worker
processes or on a Dask cluster (``pcpconform.cluster``), and returns the reports in
input order: the same reports however they were run.

The checker never raises for bad input; an exception out of it, or a worker process that
dies, is a bug in pcpconform. No rule code describes that, so such an archive gets no
report: it is listed in :attr:`CheckResults.crashes`, and the command exits with status 2.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import stat
import threading
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING

from pcpconform.check.diagnostics import Report
from pcpconform.check.inputs import component_files, expand
from pcpconform.check.mmv.magic import is_mmv_file
from pcpconform.io.setform import is_set_source
from pcpconform.version import __version__

if TYPE_CHECKING:   # the pool's modules cost ~15 ms of start-up: imported only for -j N (and Dask's for --dask)
    from concurrent.futures import Future, ProcessPoolExecutor

    from pcpconform.cluster import Cluster

__all__ = ["Crash", "CheckResults", "CheckFunction", "component_files", "expand_inputs",
           "run_checks", "default_check", "count_option", "jobs_from_option"]

#: ``check(base, max_diagnostics)`` -> Report; must be a module-level function for jobs > 1.
CheckFunction = Callable[[Path, "int | None"], Report]
_DIED = "the worker process checking it died"

@dataclass(frozen=True)
class Crash:
    """An archive the checker could not finish: the checker raised or its worker died."""

    archive: str
    reason: str

    def to_json(self) -> dict[str, str]:
        return {"archive": self.archive, "reason": self.reason}


class CheckResults(list[Report]):
    """The reports of the archives checked, in input order, and the archives that crashed."""

    def __init__(self, reports: Sequence[Report] = (), crashes: Sequence[Crash] = ()) -> None:
        super().__init__(reports)
        self.crashes: list[Crash] = list(crashes)


def expand_inputs(args: Sequence[str]) -> tuple[list[Path], list[str]]:
    """Everything ``args`` name to check (archive base names and MMV files, sorted) and one
    message per argument that names nothing to check or file the OS will not let us read
    (``pcpconform.check.inputs.expand`` also counts the files a directory scan skipped)."""
    found = expand(args)
    return found.targets, found.problems


# --- running the checker ---------------------------------------------------------------


def default_check(base: Path, max_diagnostics: int | None,
                  mmv_directories: frozenset[Path] = frozenset()) -> Report:
    """The real checker: ``pcpconform.check.sets.check_set`` for an archive set (a
    directory or a comma-separated list), ``pcpconform.check.mmv.check_mmv_file`` for an
    MMV file (or, in one of ``mmv_directories``, ``check_mmv_member``: with the files beside
    it, as the MMV PMDA loads them), ``pcpconform.check.engine.check_archive`` for anything else."""
    if is_set_source(base):
        members: Report = import_module("pcpconform.check.sets").check_set(base, max_diagnostics)
        return members
    if is_mmv_file(base):
        if base.parent in mmv_directories:
            member: Report = import_module("pcpconform.check.mmv.directory").check_mmv_member(
                base, max_diagnostics)
            return member
        mmv: Report = import_module("pcpconform.check.mmv.engine").check_mmv_file(base, max_diagnostics)
        return mmv
    engine = import_module("pcpconform.check.engine")
    report: Report = engine.check_archive(base, max_diagnostics=max_diagnostics)
    return report


def _check_remote(check: CheckFunction, base: Path, max_diagnostics: int | None, version: str,
                  cwd: str) -> tuple[Report | None, str | None]:
    """:func:`_check_one` on a Dask worker, once it is sure to see what this process sees."""
    from pcpconform.cluster import worker_problem

    problem = worker_problem(version, cwd, [base])
    return (None, problem) if problem else _check_one(check, base, max_diagnostics)


def _describe(exc: BaseException) -> str:
    frames = traceback.extract_tb(exc.__traceback__)
    where = f" (at {Path(frames[-1].filename).name}:{frames[-1].lineno})" if frames else ""
    return f"{type(exc).__name__}: {exc}{where}"


def _check_one(check: CheckFunction, base: Path,
               max_diagnostics: int | None) -> tuple[Report | None, str | None]:
    """Run one check; never raises (so workers never send back an unpicklable exception)."""
    try:
        report = check(base, max_diagnostics)
    except Exception as exc:
        return None, f"the checker failed: {_describe(exc)}"
    if not isinstance(report, Report):
        return None, f"the checker returned {type(report).__name__}, not a Report"
    return report, None


class _Progress:
    """A rich progress bar on standard error, or nothing."""

    def __init__(self, enabled: bool, total: int) -> None:
        self._bar = None
        if enabled and total:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self._bar = Progress(TextColumn("checking"), BarColumn(), MofNCompleteColumn(),
                                 TimeElapsedColumn(), TextColumn("{task.description}"),
                                 console=Console(stderr=True), transient=True)
            self._task = self._bar.add_task("", total=total)

    def __enter__(self) -> _Progress:
        if self._bar is not None:
            self._bar.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()

    def advance(self, base: Path) -> None:
        if self._bar is not None:
            self._bar.update(self._task, advance=1, description=str(base))


def _pool(workers: int) -> ProcessPoolExecutor:
    """Worker processes: forked when this process runs no other thread (a forked worker
    starts at once, with every module imported), else spawned (forking a threaded process
    can deadlock the child; the progress bar runs a thread)."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    forkable = "fork" in multiprocessing.get_all_start_methods() and threading.active_count() == 1
    context = multiprocessing.get_context("fork" if forkable else "spawn")
    return ProcessPoolExecutor(max_workers=workers, mp_context=context)


#: a worker's task: consecutive archives of about this many bytes. Every task is a round
#: trip through this process (which feeds the workers and reads their reports), so small
#: archives go in batches, or on a busy machine the workers wait for it between archives.
_CHUNK_BYTES = 4_000_000
#: tasks per worker at least, so that the last ones end close together
_CHUNKS_PER_WORKER = 4


def _size(base: Path) -> int:
    """Roughly how much checking ``base`` is: its bytes (a compressed archive counts as a
    whole chunk)."""
    sizes = []
    for name in (str(base), f"{base}.meta", f"{base}.0", f"{base}.index"):
        with contextlib.suppress(OSError):
            st = os.stat(name)
            if stat.S_ISREG(st.st_mode):
                sizes.append(st.st_size)
    return sum(sizes) if sizes else _CHUNK_BYTES


def _chunks(bases: Sequence[Path], workers: int) -> list[range]:
    """``bases`` cut into runs of consecutive archives of about :data:`_CHUNK_BYTES` each."""
    most = max(1, len(bases) // (workers * _CHUNKS_PER_WORKER))
    out: list[range] = []
    start = size = 0
    for i, base in enumerate(bases):
        size += _size(base)
        if size >= _CHUNK_BYTES or i + 1 - start >= most:
            out.append(range(start, i + 1))
            start, size = i + 1, 0
    if start < len(bases):
        out.append(range(start, len(bases)))
    return out


def _check_run(check: CheckFunction, bases: Sequence[Path], max_diagnostics: int | None
               ) -> list[tuple[Report | None, str | None]]:
    return [_check_one(check, base, max_diagnostics) for base in bases]


def _isolate(check: CheckFunction, base: Path, max_diagnostics: int | None
             ) -> tuple[Report | None, str | None]:
    """Check one archive in a pool of its own, after a pool broke: if the worker dies again
    this archive is the one that kills it."""
    from concurrent.futures.process import BrokenProcessPool

    with _pool(1) as pool:
        try:
            return pool.submit(_check_one, check, base, max_diagnostics).result()
        except BrokenProcessPool:
            return None, _DIED


def run_checks(bases: Sequence[Path], jobs: int = 1, max_diagnostics: int | None = None,
               progress: bool = False, *, check: CheckFunction | None = None,
               on_report: Callable[[Report], None] | None = None,
               dask: str | Cluster | None = None) -> CheckResults:
    """Check every archive; the reports come back in the order of ``bases``.

    ``jobs`` == 1 checks in this process; more uses that many worker processes (never more
    than there are archives). ``progress`` shows a bar on standard error. ``check`` replaces
    the real checker (tests); with ``jobs`` > 1 it must be a module-level function.
    ``on_report`` receives each report as soon as it and every one before it are done (so
    output streams in input order, also with several jobs). ``dask`` is the address of a Dask
    scheduler (or a connected :class:`~pcpconform.cluster.Cluster`) to run the
    checks on instead (``jobs`` is then the cluster's business); UsageError when it cannot
    be reached.
    """
    check = check or default_check
    outcomes: list[tuple[Report | None, str | None]] = [(None, None)] * len(bases)
    completed = [False] * len(bases)
    shown = 0

    def finished(i: int, outcome: tuple[Report | None, str | None]) -> None:
        nonlocal shown
        outcomes[i], completed[i] = outcome, True
        while shown < len(bases) and completed[shown]:
            report = outcomes[shown][0]
            if on_report is not None and report is not None:
                on_report(report)
            shown += 1
    workers = max(1, min(jobs, len(bases)))
    with contextlib.ExitStack() as stack:
        pool: ProcessPoolExecutor | None = None
        futures: dict[Future[list[tuple[Report | None, str | None]]], range] = {}
        if dask is None and workers > 1:
            # before the progress bar starts its thread, so that the workers can be forked
            # (the pool starts them all at the first submit), with the checker imported once
            if check is default_check:
                import_module("pcpconform.check.engine")
            pool = stack.enter_context(_pool(workers))
            futures = {pool.submit(_check_run, check, [bases[i] for i in run], max_diagnostics): run
                       for run in _chunks(bases, workers)}
        bar = stack.enter_context(_Progress(progress, len(bases)))
        if dask is not None:
            # the Dask helper (concurrent.futures, socket, logging) only for --dask
            from pcpconform.cluster import Cluster, WorkerDied

            calls = [(check, base, max_diagnostics, __version__, os.getcwd()) for base in bases]
            cluster = dask if isinstance(dask, Cluster) else stack.enter_context(Cluster(dask))
            for i, outcome in cluster.completed(_check_remote, calls):
                finished(i, (None, _DIED) if isinstance(outcome, WorkerDied) else outcome)
                bar.advance(bases[i])
        elif pool is None:
            for i, base in enumerate(bases):
                finished(i, _check_one(check, base, max_diagnostics))
                bar.advance(base)
        else:
            from concurrent.futures import FIRST_COMPLETED, wait
            from concurrent.futures.process import BrokenProcessPool

            broken: list[int] = []
            pending = set(futures)
            try:
                while pending:
                    done, pending = wait(pending, return_when=FIRST_COMPLETED)
                    for fut in done:
                        run = futures[fut]
                        try:
                            outcomes_of_run = fut.result()
                        except BrokenProcessPool:
                            broken.extend(run)
                            continue
                        for i, outcome in zip(run, outcomes_of_run):
                            finished(i, outcome)
                            bar.advance(bases[i])
            except BaseException:
                pool.shutdown(wait=False, cancel_futures=True)
                raise
            pool.shutdown()
            for i in sorted(broken):
                finished(i, _isolate(check, bases[i], max_diagnostics))
                bar.advance(bases[i])
    results = CheckResults()
    for base, (report, reason) in zip(bases, outcomes):
        if report is not None:
            results.append(report)
        else:
            results.crashes.append(Crash(str(base), reason or "no report"))
    return results


def count_option(minimum: int) -> Callable[[str], int]:
    """An argparse ``type`` for a whole number of at least ``minimum``."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"{text!r} is less than {minimum}")
        return value
    return parse


def jobs_from_option(value: int) -> int:
    """``-j`` as given: 0 means one job per CPU."""
    return (os.cpu_count() or 1) if value == 0 else value
