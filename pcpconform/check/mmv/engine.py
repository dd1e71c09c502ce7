"""Check MMV files one at a time, or a directory of them as the PMDA loads it.

Every rule of ``rules.py`` applied to one file, past any defect: a damaged header stops the
check (nothing after it has a meaning), a damaged section is checked as far as it lies inside
the file. Files are mapped, not read, so a large one costs no memory.
"""

from __future__ import annotations

import mmap
import os
import stat
import time
from pathlib import Path
from typing import Any

from pcpconform.check.diagnostics import Diagnostic, DiagnosticLimit, Report
from pcpconform.check.mmv.context import MmvContext
from pcpconform.check.mmv.header import check_header, check_toc
from pcpconform.check.mmv.indoms import check_indoms, check_instance_sections
from pcpconform.check.mmv.labels import check_labels
from pcpconform.check.mmv.magic import is_mmv_file
from pcpconform.check.mmv.metrics import check_metrics
from pcpconform.check.mmv.values import check_string_section, check_values
from pcpconform.check.rules import RULES, Severity
from pcpconform.mmv.schema import HEADER_SIZE

__all__ = ["is_mmv_file", "check_mmv_file", "run_check"]


def check_mmv_file(path: str | os.PathLike[str], max_diagnostics: int | None = None, *,
                   columns: bool = True) -> Report:
    """Check one MMV file as if it were alone in its directory; never raises for bad input.
    ``columns`` False checks every entry one by one (the reference of the column pass)."""
    return run_check(path, max_diagnostics, columns=columns)[0]


def run_check(path: str | os.PathLike[str], max_diagnostics: int | None = None,
              cluster: int | None = None, *, columns: bool = True
              ) -> tuple[Report, MmvContext | None]:
    """The report, and what the checks learnt (None when the file could not be mapped).

    ``cluster`` is the one the PMDA gives the file; None: the header's, or 1 for 0 (what
    the PMDA chooses for a file alone)."""
    p = Path(path)
    report = Report(str(p), max_diagnostics=max_diagnostics)
    started = time.perf_counter()
    ctx: MmvContext | None = None
    try:
        with _mapped(p, report) as data:
            if data is not None:
                report.bytes_checked = len(data)
                ctx = MmvContext(data, str(p), p.name, report, 0)
                ctx.columns = columns
                ctx.requested_cluster = _header_cluster(data)
                ctx.cluster = cluster if cluster is not None else ctx.requested_cluster or 1
                _run(ctx)
    except DiagnosticLimit:
        pass
    except Exception as exc:  # a bug of ours must not look like a clean file
        report.diagnostics.append(Diagnostic(
            "check.internal", Severity.ERROR, str(p), None, None, None,
            f"the check stopped on an internal error: {type(exc).__name__}: {exc}",
            RULES["check.internal"].clause))
    report.seconds = time.perf_counter() - started
    return report, ctx


def _header_cluster(data: Any) -> int:
    if len(data) < HEADER_SIZE:
        return 0
    return int.from_bytes(bytes(data[36:40]), "little", signed=True)


def _run(ctx: MmvContext) -> None:
    if not check_header(ctx):
        return
    check_toc(ctx, (ctx.toc_end - HEADER_SIZE) // 16)
    check_indoms(ctx)
    check_instance_sections(ctx)
    check_metrics(ctx)
    check_values(ctx)
    check_labels(ctx)
    check_string_section(ctx)
    indoms_used = {m.indom for m in ctx.metrics}
    for d in ctx.indoms:
        if d.serial not in indoms_used:
            ctx.add("mmv.indom-unused", f"no metric uses indom {d.serial}"
                    + (" (serial 0 means singular to a metric)" if d.serial == 0 else ""),
                    record=d.index, offset=d.offset, field=f"indoms[{d.index}].serial")


class _mapped:
    """The file's bytes, mapped read-only; None (reported as mmv.read) when it cannot be."""

    def __init__(self, path: Path, report: Report) -> None:
        self.path, self.report = path, report
        self.map: mmap.mmap | None = None

    def __enter__(self) -> Any:
        try:
            st = os.stat(self.path)
            if not stat.S_ISREG(st.st_mode):
                raise OSError(f"{self.path} is not a regular file")
            if st.st_size == 0:
                return b""
            with open(self.path, "rb") as fh:
                self.map = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
            return self.map
        except (OSError, ValueError) as exc:
            self.report.add("mmv.read", str(self.path), f"cannot read the file: {exc}")
            return None

    def __exit__(self, *exc: object) -> None:
        if self.map is not None:
            self.map.close()
