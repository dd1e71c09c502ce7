"""A conformance run's report in the forms of ``pcpconform conform --format`` (CONF-REPORT-1):
``text`` (failures, then a summary table), ``json`` (one object), ``junit`` (JUnit XML, a
test suite per conformance suite), ``markdown`` and ``html`` (a summary table and every
unit that did not pass, with its smallest difference and clauses)."""

from __future__ import annotations

import html
import json
from collections.abc import Callable
from typing import TextIO
from xml.etree import ElementTree as ET

from pcpconform.conform.runner import ConformReport
from pcpconform.conform.verdicts import CaseResult, Verdict

__all__ = ["FORMATS", "write_report", "write_text", "write_json", "write_junit", "write_markdown", "write_html"]

_ORDER = [v.value for v in Verdict]


def _clauses(clauses: list[str]) -> str:
    if not clauses:
        return ""
    shown = clauses[:4] + (["..."] if len(clauses) > 4 else [])
    return f" [{' '.join(shown)}]"


def _header(report: ConformReport) -> str:
    caps = report.capabilities
    return (f"{caps.name} {caps.version} ({report.form} form; suites: {', '.join(caps.suites) or 'none'}; "
            f"archive versions: {', '.join(map(str, caps.archive_versions)) or 'none'})")


def _table(report: ConformReport) -> list[list[str]]:
    """Rows of the summary: suite, then the count of each verdict, then the total."""
    rows = [[s, *(str(report.counts(s)[v]) for v in _ORDER), str(sum(report.counts(s).values()))]
            for s in report.suites]
    total = report.counts()
    rows.append(["total", *(str(total[v]) for v in _ORDER), str(sum(total.values()))])
    return rows


def verdict_line(report: ConformReport) -> str:
    """One line: the verdict of the whole run."""
    total = report.counts()
    bad = sum(total[v.value] for v in Verdict if v not in (Verdict.PASS, Verdict.SKIP))
    word = "CONFORMS" if report.ok else "DOES NOT CONFORM"
    return (f"{report.capabilities.name} {report.capabilities.version}: {word} "
            f"({total['pass']} passed, {bad} not, {total['skip']} skipped, {report.seconds:.1f} s)")


def _problems(report: ConformReport, verbose: bool) -> list[CaseResult]:
    return [r for r in report.results if verbose or r.verdict not in (Verdict.PASS, Verdict.SKIP)]


def write_text(report: ConformReport, out: TextIO, *, verbose: bool = False) -> None:
    out.write(f"implementation: {_header(report)}\n")
    skips: dict[tuple[str, str], int] = {}
    for r in report.results:
        if r.verdict == Verdict.SKIP and not verbose:
            skips[(r.suite, r.detail)] = skips.get((r.suite, r.detail), 0) + 1
    for r in _problems(report, verbose):
        out.write(f"{r.verdict.value.upper()} {r.suite} {r.case}{_clauses(r.clauses)}"
                  + (f": {r.detail}" if r.detail else "") + "\n")
        if r.stderr and r.verdict in (Verdict.CRASH, Verdict.PROTOCOL_ERROR, Verdict.TIMEOUT):
            out.write(f"  stderr: {r.stderr.splitlines()[-1][:200]}\n")
    for (suite, why), n in skips.items():
        out.write(f"skipped {n} {suite} case{'s' if n != 1 else ''}: {why}\n")
    rows = [["suite", *_ORDER, "total"], *_table(report)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        out.write("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths)))
                  .rstrip() + "\n")
    out.write(verdict_line(report) + "\n")


def write_json(report: ConformReport, out: TextIO, *, verbose: bool = False) -> None:
    json.dump(report.as_json(), out, indent=1)
    out.write("\n")


def write_junit(report: ConformReport, out: TextIO, *, verbose: bool = False) -> None:
    root = ET.Element("testsuites", name=f"pcpconform conform: {report.capabilities.name}",
                      tests=str(len(report.results)), time=f"{report.seconds:.3f}")
    for suite in report.suites:
        counts = report.counts(suite)
        node = ET.SubElement(root, "testsuite", name=suite, tests=str(sum(counts.values())),
                             failures=str(counts["fail"]), skipped=str(counts["skip"]),
                             errors=str(counts["crash"] + counts["timeout"] + counts["protocol-error"]))
        for r in (r for r in report.results if r.suite == suite):
            case = ET.SubElement(node, "testcase", classname=f"conform.{suite}", name=r.case,
                                 time=f"{r.seconds:.3f}")
            message = r.detail + _clauses(r.clauses)
            if r.verdict == Verdict.SKIP:
                ET.SubElement(case, "skipped", message=r.detail)
            elif r.verdict == Verdict.FAIL:
                ET.SubElement(case, "failure", message=message, type="fail").text = json.dumps(
                    {"expected": r.expected, "got": r.got, "path": r.path, "line": r.line}, default=str)
            elif r.verdict != Verdict.PASS:
                ET.SubElement(case, "error", message=message, type=r.verdict.value).text = r.stderr or None
    ET.indent(root)
    out.write('<?xml version="1.0" encoding="utf-8"?>\n')
    out.write(ET.tostring(root, encoding="unicode") + "\n")


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def write_markdown(report: ConformReport, out: TextIO, *, verbose: bool = False) -> None:
    out.write(f"# Conformance: {report.capabilities.name} {report.capabilities.version}\n\n")
    out.write(f"{_header(report)}\n\n**{verdict_line(report)}**\n\n")
    out.write("| suite | " + " | ".join(_ORDER) + " | total |\n")
    out.write("|---|" + "---:|" * (len(_ORDER) + 1) + "\n")
    for row in _table(report):
        out.write("| " + " | ".join(row) + " |\n")
    problems = _problems(report, verbose)
    if problems:
        out.write("\n| verdict | suite | case | clauses | detail |\n|---|---|---|---|---|\n")
        for r in problems:
            out.write(f"| {r.verdict.value} | {r.suite} | `{r.case}` | {' '.join(r.clauses)} | {_md(r.detail)} |\n")


def write_html(report: ConformReport, out: TextIO, *, verbose: bool = False) -> None:
    e = html.escape
    title = f"Conformance: {report.capabilities.name} {report.capabilities.version}"
    out.write(f"<!DOCTYPE html>\n<html lang=\"en\">\n<head><meta charset=\"utf-8\"><title>{e(title)}</title>\n"
              "<style>body{font-family:sans-serif}table{border-collapse:collapse}"
              "td,th{border:1px solid #ccc;padding:2px 6px}td.n{text-align:right}"
              ".pass{color:#060}.fail,.crash,.timeout,.protocol-error{color:#a00}.skip{color:#666}</style>\n"
              f"</head>\n<body>\n<h1>{e(title)}</h1>\n<p>{e(_header(report))}</p>\n"
              f"<p><strong>{e(verdict_line(report))}</strong></p>\n<table>\n<tr><th>suite</th>"
              + "".join(f"<th>{e(v)}</th>" for v in _ORDER) + "<th>total</th></tr>\n")
    for row in _table(report):
        out.write(f"<tr><td>{e(row[0])}</td>" + "".join(f"<td class=\"n\">{c}</td>" for c in row[1:]) + "</tr>\n")
    out.write("</table>\n")
    problems = _problems(report, verbose)
    if problems:
        out.write("<table>\n<tr><th>verdict</th><th>suite</th><th>case</th><th>clauses</th><th>detail</th></tr>\n")
        for r in problems:
            out.write(f"<tr><td class=\"{e(r.verdict.value)}\">{e(r.verdict.value)}</td><td>{e(r.suite)}</td>"
                      f"<td><code>{e(r.case)}</code></td><td>{e(' '.join(r.clauses))}</td>"
                      f"<td>{e(r.detail)}</td></tr>\n")
        out.write("</table>\n")
    out.write("</body>\n</html>\n")


FORMATS: dict[str, Callable[..., None]] = {
    "text": write_text, "json": write_json, "junit": write_junit, "markdown": write_markdown, "html": write_html,
}


def write_report(report: ConformReport, out: TextIO, form: str = "text", *, verbose: bool = False) -> None:
    FORMATS[form](report, out, verbose=verbose)
