"""Turning command-line arguments into archives, and checking them (in parallel if asked).

``expand_inputs`` accepts base names, any file of an archive (compressed or not) and
directories (searched recursively). ``run_checks`` runs the checker on every archive, in
this process or in a pool of worker processes, and returns the reports in input order.

The checker never raises for bad input; an exception out of it, or a worker process that
dies, is a bug in pcpconform. No rule code describes that, so such an archive gets no
report: it is listed in :attr:`CheckResults.crashes`, and the command exits with status 2.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import re
import traceback
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from importlib import import_module
from pathlib import Path

from pcpconform.check.diagnostics import Report
from pcpconform.io.files import base_name_of, strip_compression

__all__ = ["Crash", "CheckResults", "CheckFunction", "component_files", "expand_inputs",
           "run_checks", "default_check", "count_option", "jobs_from_option"]

#: ``check(base, max_diagnostics)`` -> Report; must be a module-level function for jobs > 1.
CheckFunction = Callable[[Path, "int | None"], Report]

# Any component of an archive, once a compression suffix is removed. Volume numbers are any
# digits here, not only canonical ones: the checker reports a non-canonical one (file.name).
_COMPONENT = re.compile(r"^(?P<base>.+)\.(?P<part>meta|index|[0-9]+)$")


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


def _component_base(name: str) -> str | None:
    """The base name if ``name`` is a file name of an archive component, else None."""
    plain, _ = strip_compression(name)
    m = _COMPONENT.match(plain)
    return m.group("base") if m else None


def _part_key(path: Path) -> tuple[int, int, str]:
    plain, _ = strip_compression(path.name)
    part = plain.rsplit(".", 1)[-1]
    if part == "meta":
        return (0, 0, path.name)
    if part == "index":
        return (1, 0, path.name)
    return (2, int(part), path.name)


def component_files(base: str | os.PathLike[str]) -> list[Path]:
    """Every file of the archive ``base`` that exists, compressed copies and non-canonical
    volume names included: .meta first, then .index, then volumes in numeric order."""
    base = Path(base)
    directory = base.parent
    try:
        entries = os.listdir(directory)
    except OSError:
        return []
    found = [directory / e for e in entries
             if _component_base(e) == base.name and (directory / e).is_file()]
    return sorted(found, key=_part_key)


def _scan_directory(root: Path) -> list[Path]:
    bases: set[Path] = set()
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in filenames:
            b = _component_base(name)
            if b is not None and os.path.isfile(os.path.join(dirpath, name)):
                bases.add(Path(dirpath) / b)
    return sorted(bases)


def _display(path: Path) -> Path:
    return Path(os.path.normpath(path))


def expand_inputs(args: Sequence[str]) -> tuple[list[Path], list[str]]:
    """The archive base names that ``args`` name, and one message per argument that names
    nothing to check.

    An argument is a base name, any file of an archive (``B.meta``, ``B.index``, ``B.0``,
    compressed ``B.0.xz`` …) or a directory, which stands for every archive below it. The
    bases are deduplicated (two spellings of one path count once) and sorted.
    """
    chosen: dict[Path, Path] = {}  # resolved -> display path
    problems: list[str] = []

    def add(base: Path) -> None:
        shown = _display(base)
        chosen.setdefault(shown.resolve(), shown)

    for arg in args:
        path = Path(arg)
        if path.is_dir():
            found = _scan_directory(path)
            if not found:
                problems.append(f"{arg}: no archive in this directory")
            for base in found:
                add(base)
        elif path.exists():
            base = base_name_of(path)
            if base == path:
                # not a canonical component name: maybe B.01, or a base name that is a file
                b = _component_base(path.name)
                if b is not None:
                    base = path.with_name(b)
            if component_files(base):
                add(base)
            else:
                problems.append(f"{arg}: not a file of a PCP archive")
        elif component_files(path):
            add(path)
        else:
            problems.append(f"{arg}: no such file, directory or archive")
    bases = sorted(chosen.values(), key=lambda p: (str(p.parent), p.name))
    return bases, problems


# --- running the checker ---------------------------------------------------------------


def default_check(base: Path, max_diagnostics: int | None) -> Report:
    """The real checker, ``pcpconform.check.engine.check_archive``."""
    engine = import_module("pcpconform.check.engine")
    report: Report = engine.check_archive(base, max_diagnostics=max_diagnostics)
    return report


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
    # spawn, not fork: the progress bar runs a thread, and forking a threaded process can
    # deadlock the child.
    return ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"))


def _isolate(check: CheckFunction, base: Path, max_diagnostics: int | None
             ) -> tuple[Report | None, str | None]:
    """Check one archive in a pool of its own, after a pool broke: if the worker dies again
    this archive is the one that kills it."""
    with _pool(1) as pool:
        try:
            return pool.submit(_check_one, check, base, max_diagnostics).result()
        except BrokenProcessPool:
            return None, "the worker process checking it died"


def run_checks(bases: Sequence[Path], jobs: int = 1, max_diagnostics: int | None = None,
               progress: bool = False, *, check: CheckFunction | None = None) -> CheckResults:
    """Check every archive; the reports come back in the order of ``bases``.

    ``jobs`` == 1 checks in this process; more uses that many worker processes (never more
    than there are archives). ``progress`` shows a bar on standard error. ``check`` replaces
    the real checker (tests); with ``jobs`` > 1 it must be a module-level function.
    """
    check = check or default_check
    outcomes: list[tuple[Report | None, str | None]] = [(None, None)] * len(bases)
    workers = max(1, min(jobs, len(bases)))
    with _Progress(progress, len(bases)) as bar:
        if workers == 1:
            for i, base in enumerate(bases):
                outcomes[i] = _check_one(check, base, max_diagnostics)
                bar.advance(base)
        else:
            broken: list[int] = []
            with _pool(workers) as pool:
                futures: dict[Future[tuple[Report | None, str | None]], int] = {
                    pool.submit(_check_one, check, base, max_diagnostics): i
                    for i, base in enumerate(bases)}
                pending = set(futures)
                try:
                    while pending:
                        done, pending = wait(pending, return_when=FIRST_COMPLETED)
                        for fut in done:
                            i = futures[fut]
                            try:
                                outcomes[i] = fut.result()
                            except BrokenProcessPool:
                                broken.append(i)
                                continue
                            bar.advance(bases[i])
                except BaseException:
                    pool.shutdown(wait=False, cancel_futures=True)
                    raise
            for i in sorted(broken):
                outcomes[i] = _isolate(check, bases[i], max_diagnostics)
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
