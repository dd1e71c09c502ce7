"""The verdict matrix: the corpus run against several implementations at once, one report
with the units as rows (grouped by a clause of their suite's chapter), the implementations as
columns and a verdict in each cell, counted per implementation and per suite.

    report = run_matrix("corpus")                       # every built-in adapter available here
    report = run_matrix("corpus", impls=["pcpconform", "libpcp-7"], suites=["validator"],
                        jobs=4, timeout=60)
    render_markdown(report), render_html(report)        # the two renderings
    report.as_json(); MatrixReport.from_json(data)      # the raw results, and back

``impls`` names built-in adapters (``pcpconform.conform.adapters.BUILTIN``) or, for any other
implementation, is a ``NAME=CMD`` string (CMD as ``--impl`` takes it). A built-in adapter
that is not installed here gets a column saying so; an implementation whose capabilities
cannot be had gets one saying why.

Every cell of a reference libpcp that is not a pass or a skip is explained by a named
deviation of spec/implementations.md (:data:`DEVIATIONS`, clauses IMPL-*); the renderings
name it beside the verdict, and an unexplained one is listed under "Unexplained".

    python -m pcpconform.conform.matrix --output docs/conformance-matrix.md [-j N]
        runs the matrix and writes docs/conformance-matrix.{md,json,html}
    python -m pcpconform.conform.matrix --from-json docs/conformance-matrix.json --output ...
        renders committed results again without running anything

Exit status 0 when every libpcp failure is explained, 1 when one is not, 2 when the matrix
cannot be made. The committed pages were made from a copy of the committed corpus
(``git archive HEAD corpus``, ``--corpus`` and ``--corpus-label "corpus at COMMIT"``), so
that cases rebuilt during the run cannot change under it.
"""

from __future__ import annotations

import argparse
import fnmatch
import html
import json
import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pcpconform.conform.adapters import BUILTIN
from pcpconform.conform.manifest import Case, load_corpus
from pcpconform.conform.protocol import SUITES
from pcpconform.conform.runner import DEFAULT_TIMEOUT, run_conformance
from pcpconform.errors import PcpConformError, UsageError

__all__ = ["Deviation", "DEVIATIONS", "Column", "Row", "MatrixReport", "run_matrix", "render_markdown",
           "render_html", "explain", "group_clause", "sort_rows", "main"]

#: the verdicts in the order the counts list them
VERDICTS = ("pass", "fail", "skip", "crash", "timeout", "protocol-error")
#: the verdicts that need an explanation in a reference libpcp's column
BAD = frozenset({"fail", "crash", "timeout", "protocol-error"})


@dataclass(frozen=True)
class Deviation:
    """A named way in which reference libpcps depart from the spec (spec/implementations.md):
    the cells it explains are those of an implementation matching ``impls``, of ``suite``,
    whose unit name matches one of ``cases`` and whose verdict is in ``verdicts``."""

    clause: str
    summary: str
    suite: str
    cases: tuple[str, ...]
    impls: tuple[str, ...] = ("libpcp-*",)
    verdicts: tuple[str, ...] = ("fail",)

    def explains(self, impl: str, suite: str, name: str, verdict: str) -> bool:
        return (suite == self.suite and verdict in self.verdicts
                and any(fnmatch.fnmatchcase(impl, p) for p in self.impls)
                and any(fnmatch.fnmatchcase(name, p) for p in self.cases))


def _both(*faults: str) -> tuple[str, ...]:
    return tuple(f"{f}-v[23]" for f in faults)


def _mmv(*faults: str) -> tuple[str, ...]:
    return tuple(f"mmv-{f}-v[123]" for f in faults)


#: the deviations of spec/implementations.md, measured on the corpus (docs/conformance-matrix.json)
DEVIATIONS: tuple[Deviation, ...] = (
    Deviation("IMPL-VAL-1", "pmlogcheck reports the fault but exits with status 0", "validator",
              (*_both("desc-type", "index-vol", "result-time-order", "time-fraction", "value-vtype"),
               "salvage-label-starts-v2")),
    Deviation("IMPL-VAL-2", "pmlogcheck 6.0.3 reports a corrupted result record (pmFetch) but exits with "
              "status 0; 6.3 and 7 exit with status 1", "validator",
              _both("frame-align", "result-decode", "result-mark-size", "result-valfmt", "result-dptr",
                    "result-dptr-mid", "result-blocks", "result-blocks-tail", "result-vlen", "value-vlen",
                    "index-boundary-first"),
              impls=("libpcp-6.0.3",)),
    Deviation("IMPL-VAL-3", "pmlogcheck does not check the fault at all: it says nothing and exits with status 0",
              "validator", _both("desc-name", "desc-name-long", "event-param-len", "file-name", "indom-delta-no-full",
                                 "labelset-length", "labelset-json", "labelset-span", "text-type", "text-nul",
                                 "time-fraction-meta", "time-fraction-result", "index-boundary",
                                 "index-boundary-meta", "indom-delta-change")),
    Deviation("IMPL-VAL-4", "libpcp 6.1.1 and later accept unknown v3 feature bits (FMT-DIV-11)", "validator",
              ("label-features-v3",), impls=("libpcp-6.3", "libpcp-7")),
    Deviation("IMPL-DERIVE-2", "libpcp before 7.1 binds an unknown operand silently: pmLookupDesc says "
              "PM_ERR_BADDERIVE, not why", "derive", ("example-v3/errors@pcp-6.*",),
              impls=("libpcp-6.0.3", "libpcp-6.3")),
    Deviation("IMPL-LABEL-1", "pmGetInstancesLabels answers with the first of two instances label-set records "
              "of one indom at one time", "reader", _both("types")),
    Deviation("IMPL-WRITE-2", "libpcp_import writes its own process id in the labels; it has no call to set one",
              "writer", _both("example")),
    Deviation("IMPL-WRITE-3", "libpcp_import has no call to remove an instance: a domain only grows", "writer",
              _both("lifetimes")),
    Deviation("IMPL-COMPRESS-1", "libpcp 6.0.3 cannot open .zst components (read since 6.3.2, FMT-COMPRESS-2)",
              "validator", ("compress-zst-v3",), impls=("libpcp-6.0.3",)),
    Deviation("IMPL-COMPRESS-1", "libpcp 6.0.3 cannot open .zst components (read since 6.3.2, FMT-COMPRESS-2)",
              "reader", ("compress-zst-v3",), impls=("libpcp-6.0.3",), verdicts=("protocol-error",)),
    Deviation("IMPL-CRASH-1", "pmlogcheck dies of SIGSEGV on a value of a metric without a descriptor",
              "validator", (*_both("value-undescribed"), "fuzz-pmlogcheck-crash-316526bc3d-v2"), verdicts=("crash",)),
    Deviation("IMPL-CRASH-2", "pmlogcheck 6.0.3 dies of SIGSEGV on an event array whose records overrun it",
              "validator", _both("event-structure"), impls=("libpcp-6.0.3",), verdicts=("crash",)),
    Deviation("IMPL-CRASH-3", "pmlogcheck 7 aborts (SIGABRT) on a v2 indom record whose length disagrees with "
              "its instance count", "validator", ("indom-length-v2",), impls=("libpcp-7",), verdicts=("crash",)),
    Deviation("IMPL-CRASH-4", "pmlogcheck dies of SIGSEGV on the fuzzer's value block whose type disagrees with "
              "its descriptor's", "validator", ("fuzz-pmdumplog-crash-b89dbf09bc-v2",), verdicts=("crash",)),
    Deviation("IMPL-MMV-1", "mmvdump dumps what it can and exits with status 0: it checks the header, the TOC's "
              "section types and sizes against the file and little else", "mmv-validator",
              _mmv("generation-zero", "indom-bounds", "indom-collision", "indom-duplicate", "indom-serial",
                   "label-nul", "metric-indom", "metric-item-duplicate", "metric-item", "metric-name",
                   "metric-name-duplicate", "metric-name-prefix", "metric-type", "name-nul",
                   "string-value-nul", "string-value-offset", "toc-bounds", "toc-count", "toc-duplicate",
                   "toc-limit", "value-instance")),
)


def explain(impl: str, suite: str, name: str, verdict: str) -> Deviation | None:
    """The deviation explaining a cell, or None."""
    return next((d for d in DEVIATIONS if d.explains(impl, suite, name, verdict)), None)


@dataclass
class Column:
    """One implementation: its name, what its capabilities say, or why it has no results."""

    name: str
    description: str = ""
    version: str = ""
    suites: list[str] = field(default_factory=list)
    missing: str = ""            # not empty: not run here, and why

    def as_json(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "version": self.version,
                "suites": self.suites, "missing": self.missing}


@dataclass
class Row:
    """One unit of one suite: a case (or one expectation of it) and the clause it is grouped by."""

    suite: str
    name: str
    clause: str
    title: str = ""
    cells: dict[str, dict[str, Any]] = field(default_factory=dict)   # impl -> {verdict, detail, ...}

    def as_json(self) -> dict[str, Any]:
        return {"suite": self.suite, "name": self.name, "clause": self.clause, "title": self.title,
                "cells": self.cells}


@dataclass
class MatrixReport:
    """The matrix: the columns in order, and one row per unit in suite, clause, name order."""

    columns: list[Column]
    rows: list[Row]
    corpus: str = "corpus"

    @property
    def suites(self) -> list[str]:
        return list(dict.fromkeys(r.suite for r in self.rows))

    def counts(self, impl: str, suite: str | None = None) -> dict[str, int]:
        got = Counter(r.cells[impl]["verdict"] for r in self.rows
                      if impl in r.cells and (suite is None or r.suite == suite))
        return {v: got.get(v, 0) for v in VERDICTS}

    def unexplained(self) -> list[tuple[str, Row]]:
        """(impl, row) of each reference libpcp cell that is bad and that no deviation explains."""
        return [(c.name, r) for r in self.rows for c in self.columns
                if c.name.startswith("libpcp-") and c.name in r.cells
                and r.cells[c.name]["verdict"] in BAD
                and explain(c.name, r.suite, r.name, r.cells[c.name]["verdict"]) is None]

    def as_json(self) -> dict[str, Any]:
        return {"matrix_format": 1, "corpus": self.corpus, "columns": [c.as_json() for c in self.columns],
                "rows": [r.as_json() for r in self.rows]}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> MatrixReport:
        return cls([Column(**c) for c in data["columns"]], [Row(**r) for r in data["rows"]],
                   data.get("corpus", "corpus"))


def _cell(result: Any) -> dict[str, Any]:
    cell: dict[str, Any] = {"verdict": result.verdict.value}
    if result.detail and result.verdict.value != "pass":
        cell["detail"] = result.detail[:300]
    said = result.stderr.strip().splitlines()
    if said and result.verdict.value != "skip":
        cell["stderr"] = said[-1][-200:]        # what the implementation said last, e.g. pmlogcheck
    return cell


#: the chapter whose clauses group the rows of a suite (else the case's first clause)
_GROUPS = {"reader": ("DUMP-",), "mmv-reader": ("MMV-SEC-", "MMV-HDR-"),
           "writer": ("GEN-", "FIX-"), "interp": ("INTERP-",), "derive": ("DERIVE-",)}


def group_clause(case: Case | None, suite: str) -> str:
    """The clause a unit's row is grouped by: the case's first clause of the suite's chapter,
    else its first clause (for an invalid case, its first error's)."""
    clauses = [str(c) for c in case.data["clauses"]] if case is not None else []
    ours = [c for c in clauses if c.startswith(_GROUPS.get(suite, ("",)))]
    return (ours or clauses or [""])[0]


def _implementations(impls: Sequence[str] | None) -> list[tuple[str, str, str, str]]:
    """(name, description, command, why missing) for each implementation asked for."""
    out = []
    for spec in impls if impls is not None else list(BUILTIN):
        if spec in BUILTIN:
            adapter = BUILTIN[spec]
            missing = "" if adapter.available() else "not installed here"
            out.append((spec, adapter.description, adapter.command, missing))
        elif "=" in spec:
            name, _, command = spec.partition("=")
            out.append((name, command, command, ""))
        else:
            raise UsageError(f"unknown implementation {spec!r} (built-in: {', '.join(BUILTIN)}; "
                             "or NAME=CMD)")
    return out


def run_matrix(corpus: str | Path = "corpus", impls: Sequence[str] | None = None,
               suites: Sequence[str] = SUITES, jobs: int = 1, timeout: float = DEFAULT_TIMEOUT,
               globs: Sequence[str] = ()) -> MatrixReport:
    """Run the chosen units of ``corpus`` against each implementation in turn (each with
    ``jobs`` units at once and the per-unit ``timeout``) and gather the verdicts.

    ``impls``: names of built-in adapters or ``NAME=CMD`` strings; None: every built-in
    adapter. UsageError (exit 2) for an unknown name, an unreadable corpus or no unit
    matching ``globs``; an implementation that cannot be run gets a column saying why."""
    cases: dict[str, Case] = {c.id: c for c in load_corpus(corpus)}
    columns: list[Column] = []
    rows: dict[tuple[str, str], Row] = {}
    for name, description, command, missing in _implementations(impls):
        column = Column(name, description, missing=missing)
        columns.append(column)
        if missing:
            continue
        try:
            report = run_conformance(corpus, command, suites=suites, globs=globs, timeout=timeout, jobs=jobs)
        except UsageError as exc:
            if "no case" in str(exc) or "unknown suite" in str(exc):
                raise
            column.missing = str(exc)
            continue
        column.version, column.suites = report.capabilities.version, list(report.capabilities.suites)
        for result in report.results:
            case = cases.get(result.case.split("/")[0])
            row = rows.setdefault((result.suite, result.case), Row(
                result.suite, result.case, group_clause(case, result.suite),
                str(case.data.get("title", "")) if case is not None else ""))
            row.cells[name] = _cell(result)
    return MatrixReport(columns, sort_rows(rows.values()), str(corpus))


def sort_rows(rows: Iterable[Row]) -> list[Row]:
    """Suite order of the protocol, then clause, then unit name."""
    order = {s: i for i, s in enumerate(SUITES)}
    return sorted(rows, key=lambda r: (order.get(r.suite, len(order)), r.clause, r.name))


# -- rendering ------------------------------------------------------------------------------
_MARK = {"pass": "pass", "fail": "**FAIL**", "skip": "skip", "crash": "**CRASH**", "timeout": "**TIMEOUT**",
         "protocol-error": "**PROTOCOL**"}


def _label(impl: str, row: Row) -> tuple[str, str, Deviation | None]:
    """(verdict, detail, deviation) of one cell; verdict "" when the implementation has none."""
    cell = row.cells.get(impl)
    if cell is None:
        return "", "", None
    verdict = str(cell["verdict"])
    return verdict, str(cell.get("detail", "")), explain(impl, row.suite, row.name, verdict)


def _ran(report: MatrixReport, suite: str) -> bool:
    """Whether any implementation ran (did not skip) a unit of the suite."""
    return any(c["verdict"] != "skip" for r in report.rows if r.suite == suite for c in r.cells.values())


def _findings(report: MatrixReport) -> list[str]:
    """Generated findings: per deviation how many cells it explains, where the reference
    libpcps disagree with each other, and what no deviation explains."""
    libpcps = [c.name for c in report.columns if c.name.startswith("libpcp-") and not c.missing]
    lines = []
    for suite in report.suites:
        clean = [i for i in libpcps if (n := report.counts(i, suite))["pass"]
                 and not any(n[v] for v in BAD)]
        if clean:
            lines.append(f"- Every {suite} unit run passes on {', '.join(clean)} "
                         f"({', '.join(str(report.counts(i, suite)['pass']) for i in clean)} units).")
    for dev in DEVIATIONS:
        hits = Counter(impl for r in report.rows for impl in libpcps
                       if dev is _label(impl, r)[2])
        if hits:
            where = ", ".join(f"{impl} {n}" for impl, n in hits.items())
            lines.append(f"- **{dev.clause}** ({dev.suite}): {dev.summary}. Cells: {where}.")
    # a skip is what the implementation offers (a rule set, a suite), not a disagreement
    split = [r for r in report.rows
             if len({r.cells[i]["verdict"] for i in libpcps if i in r.cells} - {"skip"}) > 1]
    if split:
        lines.append(f"- The reference libpcps disagree on {len(split)} units:")
        lines += [f"  - {r.suite} `{r.name}`: " + ", ".join(f"{i} {r.cells[i]['verdict']}" for i in libpcps
                                                           if i in r.cells) for r in split]
    elif len(libpcps) > 1:
        lines.append(f"- The reference libpcps ({', '.join(libpcps)}) give the same verdict on every unit.")
    for impl, row in report.unexplained():
        lines.append(f"- Unexplained: {impl} {row.suite} `{row.name}`: {row.cells[impl]['verdict']} "
                     f"{row.cells[impl].get('detail', '')}")
    return lines


def render_markdown(report: MatrixReport) -> str:
    """The matrix as Markdown: implementations, counts per implementation and suite, findings,
    then one table per suite that any implementation ran."""
    names = [c.name for c in report.columns]
    out = ["# Conformance matrix", "",
           f"The corpus (`{report.corpus}`) run by `pcpconform conform` against each implementation "
           "(spec/conformance.md). Rows are units grouped by the first clause their case exercises; a "
           "reference libpcp's failure names the deviation of spec/implementations.md that explains it. "
           "Generated by `python -m pcpconform.conform.matrix` from `conformance-matrix.json`.", "",
           "## Implementations", "", "| implementation | version | suites | description |", "|---|---|---|---|"]
    for c in report.columns:
        suites = ", ".join(c.suites) if not c.missing else f"not run: {c.missing}"
        out.append(f"| {c.name} | {c.version or '-'} | {suites} | {c.description} |")
    out += ["", "## Counts", "", "| implementation | suite | " + " | ".join(VERDICTS) + " |",
            "|---|---|" + "---:|" * len(VERDICTS)]
    for c in report.columns:
        for suite in report.suites:
            counts = report.counts(c.name, suite)
            if any(counts.values()):
                out.append(f"| {c.name} | {suite} | " + " | ".join(str(counts[v]) for v in VERDICTS) + " |")
    out += ["", "## Findings", ""] + (_findings(report) or ["- Nothing to report."])
    for suite in report.suites:
        if not _ran(report, suite):
            continue
        out += ["", f"## {suite}", "", "| clause | unit | " + " | ".join(names) + " |",
                "|---|---|" + "---|" * len(names)]
        for row in (r for r in report.rows if r.suite == suite):
            cells = []
            for impl in names:
                verdict, _, dev = _label(impl, row)
                cells.append((_MARK.get(verdict, verdict) or "-") + (f" {dev.clause}" if dev else ""))
            out.append(f"| {row.clause} | `{row.name}` | " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"


_STYLE = """body{font-family:sans-serif;margin:1.5em}table{border-collapse:collapse;margin:1em 0}
td,th{border:1px solid #bbb;padding:2px 6px;font-size:90%;text-align:left}th{background:#eee}
.pass{background:#d9f2d9}.fail{background:#f7c6c6}.crash,.timeout,.protocol-error{background:#e8a0a0;font-weight:bold}
.skip{background:#f0f0f0;color:#777}.explained{outline:2px dashed #c90}code{font-size:95%}"""


def render_html(report: MatrixReport) -> str:
    """The matrix as one self-contained HTML page (no external assets): each cell coloured by
    its verdict, the detail in its tooltip."""
    esc = html.escape
    names = [c.name for c in report.columns]
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8"><title>Conformance matrix</title>',
             f"<style>{_STYLE}</style></head><body>", "<h1>Conformance matrix</h1>",
             f"<p>The corpus (<code>{esc(report.corpus)}</code>) against each implementation; a reference "
             "libpcp's failure names the deviation of spec/implementations.md that explains it.</p>",
             "<h2>Implementations</h2><table><tr><th>implementation</th><th>version</th><th>suites</th>"
             "<th>description</th></tr>"]
    for c in report.columns:
        suites = ", ".join(c.suites) if not c.missing else f"not run: {c.missing}"
        parts.append(f"<tr><td>{esc(c.name)}</td><td>{esc(c.version or '-')}</td><td>{esc(suites)}</td>"
                     f"<td>{esc(c.description)}</td></tr>")
    parts.append("</table><h2>Counts</h2><table><tr><th>implementation</th><th>suite</th>"
                 + "".join(f"<th>{v}</th>" for v in VERDICTS) + "</tr>")
    for c in report.columns:
        for suite in report.suites:
            counts = report.counts(c.name, suite)
            if any(counts.values()):
                parts.append(f"<tr><td>{esc(c.name)}</td><td>{esc(suite)}</td>"
                             + "".join(f"<td>{counts[v]}</td>" for v in VERDICTS) + "</tr>")
    parts.append("</table><h2>Findings</h2><ul>")
    for line in _findings(report) or ["- Nothing to report."]:
        text = esc(line.lstrip()[2:]).replace("**", "")
        parts.append(f"<li>{text}</li>" if not line.startswith(" ") else f"<li>&nbsp;&nbsp;{text}</li>")
    parts.append("</ul>")
    for suite in report.suites:
        if not _ran(report, suite):
            continue
        parts.append(f"<h2>{esc(suite)}</h2><table><tr><th>clause</th><th>unit</th>"
                     + "".join(f"<th>{esc(n)}</th>" for n in names) + "</tr>")
        for row in (r for r in report.rows if r.suite == suite):
            cells = []
            for impl in names:
                verdict, detail, dev = _label(impl, row)
                tip = (f"{dev.clause}: {dev.summary}. " if dev else "") + detail
                klass = verdict + (" explained" if dev else "")
                text = (verdict or "-") + (f" {dev.clause}" if dev else "")
                cells.append(f'<td class="{esc(klass)}" title="{esc(tip)}">{esc(text)}</td>')
            parts.append(f'<tr><td>{esc(row.clause)}</td><td title="{esc(row.title)}"><code>{esc(row.name)}'
                         "</code></td>" + "".join(cells) + "</tr>")
        parts.append("</table>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def write_outputs(report: MatrixReport, output: Path) -> list[Path]:
    """OUTPUT (.md) and, beside it, the .json results and the .html page."""
    md, js, page = output.with_suffix(".md"), output.with_suffix(".json"), output.with_suffix(".html")
    js.write_text(json.dumps(report.as_json(), indent=1, sort_keys=True) + "\n", encoding="utf-8")
    md.write_text(render_markdown(report), encoding="utf-8")
    page.write_text(render_html(report), encoding="utf-8")
    return [md, js, page]


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m pcpconform.conform.matrix",
                                description="run the corpus against several implementations; "
                                            "write the matrix as .md, .json and .html")
    p.add_argument("--output", "-o", type=Path, required=True, metavar="FILE.md")
    p.add_argument("--from-json", type=Path, metavar="FILE.json", help="render these results; run nothing")
    p.add_argument("--corpus", default="corpus", metavar="DIR")
    p.add_argument("--corpus-label", metavar="TEXT", help="how the pages name the corpus (default: DIR)")
    p.add_argument("--impl", action="append", metavar="NAME|NAME=CMD",
                   help=f"an implementation (built-in: {', '.join(BUILTIN)}); repeatable; default: all built-in")
    p.add_argument("--suite", action="append", choices=SUITES)
    p.add_argument("--cases", action="append", default=[], metavar="GLOB")
    p.add_argument("-j", "--jobs", type=int, default=1)
    p.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT)
    args = p.parse_args(argv)
    try:
        if args.from_json is not None:
            report = MatrixReport.from_json(json.loads(args.from_json.read_text(encoding="utf-8")))
        else:
            report = run_matrix(args.corpus, args.impl, args.suite or SUITES, args.jobs, args.timeout, args.cases)
            report.corpus = args.corpus_label or report.corpus
        for path in write_outputs(report, args.output):
            print(path)
    except (PcpConformError, OSError, ValueError, KeyError) as exc:
        print(f"matrix: {exc}", file=sys.stderr)
        return 2
    return 1 if report.unexplained() else 0


if __name__ == "__main__":
    sys.exit(main())
