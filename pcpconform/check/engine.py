"""The validator's engine: every rule of rules.py applied to one archive, past any defect.

One pass per file, one record in memory at a time: .meta first, then the data volumes in
order, then the index, then the rules that need the whole archive; each pass leaves what
later ones need in the shared state (state.py). The index's data offsets are read ahead of
the volumes, so that what the index pass asks of them is answered as they are read, and
memory does not grow with the number of results. Framing damage ends the pass over that file
(no resynchronisation is trustworthy), but the other files are still checked; a record
that frames correctly but does not decode is reported and the pass goes on to the next.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any

from pcpconform.check.columns import Fallback
from pcpconform.check.crossfile import check_crossfile
from pcpconform.check.diagnostics import Diagnostic, DiagnosticLimit, OsFailure, Report
from pcpconform.check.files import discover
from pcpconform.check.index import check_index, index_probes
from pcpconform.check.labels import check_label
from pcpconform.check.meta import check_meta
from pcpconform.check.results import check_volume
from pcpconform.check.rules import RULES, Severity
from pcpconform.check.state import Context
from pcpconform.check.times import TimeReason
from pcpconform.check.values import ValueChecks, ValueReason
from pcpconform.errors import FormatError
from pcpconform.fastpath import register
from pcpconform.format.schema import PM_LOG_VOL_META, PM_LOG_VOL_TI
from pcpconform.io.bulk import DecodeReason
from pcpconform.io.reader import Component

__all__ = ["check_archive", "DEFAULT_DECOMPRESS_LIMIT", "COLUMNS", "CANONICAL"]

#: A compressed component may expand to at most this many bytes (compression bombs).
DEFAULT_DECOMPRESS_LIMIT = 8 << 30


def check_archive(path: str | os.PathLike[str], *, max_diagnostics: int | None = None,
                  decompress_limit: int = DEFAULT_DECOMPRESS_LIMIT, columns: bool = True,
                  walk_canonical: bool = False) -> Report:
    """Check one archive (base name or any of its files); never raises for bad input.
    ``columns=False`` checks every result on the reference path, ``walk_canonical=True``
    walks every result field by field (the same findings either way)."""
    base = Path(path)
    report = Report(str(base), max_diagnostics=max_diagnostics)
    started = time.perf_counter()
    try:
        _run(Context(base, report, decompress_limit, columns, walk_canonical))
    except (DiagnosticLimit, OsFailure):
        pass
    except Exception as exc:  # a bug of ours must not look like a clean archive
        report.diagnostics.append(_internal(base, exc))
    report.seconds = time.perf_counter() - started
    return report


def _internal(base: Path, exc: BaseException) -> Diagnostic:
    return Diagnostic("check.internal", Severity.ERROR, base.name, None, None, None,
                      f"the check stopped on an internal error: {type(exc).__name__}: {exc}",
                      RULES["check.internal"].clause)


def _run(ctx: Context) -> None:
    files = discover(ctx)
    if files is None:
        return
    meta, index, volumes = files
    if meta is not None:
        _pass(ctx, meta, PM_LOG_VOL_META, lambda comp: check_meta(ctx, comp))
    values = ValueChecks(ctx)
    probes = index_probes(ctx, index) if index is not None else {}
    for vol in sorted(volumes):
        _pass(ctx, volumes[vol], vol, partial(check_volume, ctx, values, vol=vol, first=vol == min(volumes),
                                              probes=probes.get(vol, ())))
    if index is not None:
        _pass(ctx, index, PM_LOG_VOL_TI, lambda comp: check_index(ctx, comp))
    check_crossfile(ctx)


def _pass(ctx: Context, path: Path, vol: int, check: Callable[[Component], None]) -> None:
    """Open one file, check its label, then its records (unless it cannot be opened)."""
    with _component(ctx, path, vol) as comp:
        if comp is not None:
            check(comp)


@contextmanager
def _component(ctx: Context, path: Path, vol: int) -> Iterator[Component | None]:
    """An opened component with its label checked, or None (reported) if it cannot open."""
    comp = Component(path, max_bytes=ctx.decompress_limit)
    try:
        comp.__enter__()
    except FormatError as exc:
        ctx.reader_error(exc)
        comp.__exit__()
        yield None
        return
    try:
        check_label(ctx, comp, vol)
        yield comp
    finally:
        comp.__exit__()


def _report(base: Path, columns: bool, walk_canonical: bool = False) -> dict[str, Any]:
    """The whole report, its time aside."""
    report = check_archive(base, columns=columns, walk_canonical=walk_canonical).to_json()
    report.pop("seconds")
    return report


#: results checked on learned shapes (columns.py) against every result on the reference path
COLUMNS = register("check.columns", reference=lambda base: _report(base, False),
                   fast=lambda base: _report(base, True), reasons=(Fallback, ValueReason, TimeReason),
                   inputs="archive")
#: the field walk skipped for the results the bulk decoder finds canonical, against every
#: result walked
CANONICAL = register("check.canonical", reference=lambda base: _report(base, False, True),
                     fast=lambda base: _report(base, False), reasons=DecodeReason, inputs="archive")
