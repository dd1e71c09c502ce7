"""Renderers for ``pcpconform check``: text, JSON, JUnit XML and SARIF 2.1.0.

Each takes the reports of the archives checked (and the archives that could not be checked,
see :class:`pcpconform.check.runner.Crash`) and produces one document. The formats are
described, with examples, in ``docs/check-output.md``.
"""

from __future__ import annotations

import io
import json
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, TextIO
from urllib.parse import quote

from pcpconform.check.diagnostics import Diagnostic, Report
from pcpconform.check.rules import RULES, Severity
from pcpconform.check.runner import Crash, component_files
from pcpconform.io.files import strip_compression

__all__ = ["FORMATS", "SARIF_SCHEMA", "tool_version", "summarize", "render", "write",
           "render_text", "write_text", "TextStream", "grouped", "GROUP_SHOWN", "render_json",
           "render_junit", "render_sarif"]

FORMATS = ("text", "json", "junit", "sarif")
TOOL = "pcpconform"
SARIF_SCHEMA = ("https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/"
                "sarif-schema-2.1.0.json")
#: Where SARIF viewers send a reader who wants to know about the tool.
_FALLBACK_URI = "https://pcp.io/"
#: How many codes the text summary lists.
TOP_CODES = 10

_SARIF_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


@cache
def tool_version() -> str:
    from importlib import metadata  # ~25 ms of start-up: only SARIF and JUnit ask
    try:
        return metadata.version(TOOL)
    except metadata.PackageNotFoundError:  # pragma: no cover - running from a bare tree
        return "0+unknown"


@cache
def _information_uri() -> str:
    """The project's home page from its package metadata, if it names one."""
    from importlib import metadata
    try:
        meta = metadata.metadata(TOOL)
    except metadata.PackageNotFoundError:  # pragma: no cover
        return _FALLBACK_URI
    for entry in meta.get_all("Project-URL") or []:
        _, _, url = str(entry).partition(",")
        if url.strip().startswith(("http://", "https://")):
            return url.strip()
    home = str((meta.get_all("Home-page") or [""])[0])
    return home if home.startswith(("http://", "https://")) else _FALLBACK_URI


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


# --- summary ----------------------------------------------------------------------------


def summarize(reports: Sequence[Report], crashes: Sequence[Crash] = ()) -> dict[str, Any]:
    """Totals over all archives. ``clean``, ``with_warnings`` (warnings but no errors) and
    ``with_errors`` partition the archives checked; informational diagnostics leave an
    archive clean."""
    codes: Counter[str] = Counter(d.code for r in reports for d in r.diagnostics)
    return {
        "archives": len(reports),
        "clean": sum(1 for r in reports if not r.errors and not r.warnings),
        "with_warnings": sum(1 for r in reports if r.warnings and not r.errors),
        "with_errors": sum(1 for r in reports if r.errors),
        "not_checked": len(crashes),
        "truncated": sum(1 for r in reports if r.truncated),
        "errors": sum(r.errors for r in reports),
        "warnings": sum(r.warnings for r in reports),
        "infos": sum(r.count(Severity.INFO) for r in reports),
        "codes": [{"code": code, "severity": RULES[code].severity.value if code in RULES else None,
                   "count": n}
                  for code, n in sorted(codes.items(), key=lambda kv: (-kv[1], kv[0]))],
    }


# --- text -------------------------------------------------------------------------------


def diagnostic_line(report: Report, d: Diagnostic) -> str:
    """``ARCHIVE: FILE[record R, offset O, FIELD]: severity CODE: message (at TIME) [CLAUSE]``."""
    return f"{report.archive}: {d.location()}: {d.severity.value} {d.code}: {_message(d)} [{d.clause}]"


def _message(d: Diagnostic) -> str:
    return f"{d.message} (at {d.time})" if d.time else d.message


def archive_summary_line(report: Report) -> str:
    infos = report.count(Severity.INFO)
    if not report.errors and not report.warnings:
        text = "clean" + (f" ({_plural(infos, 'info')})" if infos else "")
    else:
        text = ", ".join([_plural(report.errors, "error"), _plural(report.warnings, "warning"),
                          _plural(infos, "info")])
    if report.truncated:
        text += f"; stopped after {_plural(len(report.diagnostics), 'diagnostic')} (--max-diagnostics)"
    return f"{report.archive}: {text}"


#: of diagnostics that repeat (same code, file and metric), text output shows this many,
#: then one line with the count and the range of records and times (JSON and SARIF keep all)
GROUP_SHOWN = 3


@dataclass
class _Group:
    """The diagnostics of one (code, file, metric) beyond the first GROUP_SHOWN."""

    first: Diagnostic
    hidden: int = 0
    records: list[int] = field(default_factory=list)
    times: list[str] = field(default_factory=list)

    def line(self, report: Report) -> str:
        d = self.first
        what = f"{d.code}" + (f" for {d.metric}" if d.metric else "")
        where = ""
        if self.records:
            lo, hi = min(self.records), max(self.records)
            where = f" in records {lo}..{hi}" if lo != hi else f" in record {lo}"
        if self.times:
            where += f", {self.times[0]} to {self.times[-1]}" if len(self.times) > 1 else f", at {self.times[0]}"
        return (f"{report.archive}: {d.file}: {d.severity.value} {d.code}: "
                f"... and {self.hidden} more like the above ({what}){where} [{d.clause}]")


def grouped(report: Report) -> list[Diagnostic | _Group]:
    """The diagnostics to print, in order, with repeats past GROUP_SHOWN folded into one
    group placed after the last one shown."""
    seen: dict[tuple[str, str, str | None], int] = {}
    groups: dict[tuple[str, str, str | None], _Group] = {}
    items: list[Diagnostic | _Group] = []
    for d in report.diagnostics:
        key = (d.code, d.file, d.metric)
        n = seen[key] = seen.get(key, 0) + 1
        if n <= GROUP_SHOWN:
            items.append(d)
            continue
        g = groups.get(key)
        if g is None:
            g = groups[key] = _Group(d)
            items.append(g)
        g.hidden += 1
        if d.record is not None:
            g.records.append(d.record)
        if d.time:
            g.times.append(d.time)
    return items


def _summary_rows(summary: dict[str, Any]) -> list[tuple[str, int]]:
    rows = [("archives checked", summary["archives"]), ("clean", summary["clean"]),
            ("with warnings", summary["with_warnings"]), ("with errors", summary["with_errors"])]
    if summary["not_checked"]:
        rows.append(("not checked (internal error)", summary["not_checked"]))
    return rows


def _plain_table(summary: dict[str, Any]) -> list[str]:
    rows = _summary_rows(summary)
    width = max(len(name) for name, _ in rows)
    lines = ["", "Summary"] + [f"  {name:<{width}}  {value:>6}" for name, value in rows]
    codes = summary["codes"][:TOP_CODES]
    if codes:
        cw = max(len(c["code"]) for c in codes)
        lines += ["", "Top diagnostic codes", f"  {'code':<{cw}}  {'severity':<8}  {'count':>6}"]
        lines += [f"  {c['code']:<{cw}}  {c['severity'] or '?':<8}  {c['count']:>6}" for c in codes]
    return lines


def _wants_table(reports: Sequence[Report], crashes: Sequence[Crash]) -> bool:
    return len(reports) + len(crashes) > 1


_STYLE = {Severity.ERROR: "bold red", Severity.WARNING: "yellow", Severity.INFO: "cyan"}


class TextStream:
    """Text output written archive by archive as each is checked (``report``), then the
    archives not checked and the summary (``finish``). With ``terminal`` severities are
    coloured and the summary is a rich table (rich still honours NO_COLOR); ``quiet`` keeps
    only the diagnostic lines."""

    def __init__(self, out: TextIO, *, terminal: bool = False, quiet: bool = False) -> None:
        self.out = out
        self.quiet = quiet
        self.console: Any = None
        if terminal:
            from rich.console import Console

            self.console = Console(file=out, highlight=False, soft_wrap=True)

    def _print(self, text: str, style: str | None = None) -> None:
        if self.console is None:
            self.out.write(text + "\n")
        else:
            from rich.text import Text

            self.console.print(Text(text, style=style or ""))

    def report(self, report: Report) -> None:
        for item in grouped(report):
            if isinstance(item, _Group):
                self._print(item.line(report), _STYLE[item.first.severity] if self.console else None)
            elif self.console is None:
                self._print(diagnostic_line(report, item))
            else:
                from rich.text import Text

                line = Text(f"{report.archive}: {item.location()}: ")
                line.append(item.severity.value, style=_STYLE[item.severity])
                line.append(f" {item.code}: {_message(item)} [{item.clause}]")
                self.console.print(line)
        if not self.quiet:
            style = "red" if report.errors else "yellow" if report.warnings else "green"
            self._print(archive_summary_line(report), style)
        self.out.flush()

    def finish(self, reports: Sequence[Report], crashes: Sequence[Crash] = ()) -> None:
        if self.quiet:
            return
        for c in crashes:
            self._print(f"{c.archive}: not checked: {c.reason}", "bold red")
        if not _wants_table(reports, crashes):
            return
        summary = summarize(reports, crashes)
        if self.console is None:
            for line in _plain_table(summary):
                self._print(line)
            return
        self._rich_tables(summary)

    def _rich_tables(self, summary: dict[str, Any]) -> None:
        from rich.table import Table
        from rich.text import Text

        table = Table(title="Summary", title_justify="left", show_header=False)
        table.add_column("archives")
        table.add_column("count", justify="right")
        for name, value in _summary_rows(summary):
            table.add_row(name, str(value))
        self.console.print()
        self.console.print(table)
        codes = summary["codes"][:TOP_CODES]
        if codes:
            table = Table(title="Top diagnostic codes", title_justify="left")
            table.add_column("code")
            table.add_column("severity")
            table.add_column("count", justify="right")
            for c in codes:
                style = _STYLE[Severity(c["severity"])] if c["severity"] else ""
                table.add_row(c["code"], Text(c["severity"] or "?", style=style), str(c["count"]))
            self.console.print(table)


def render_text(reports: Sequence[Report], *, crashes: Sequence[Crash] = (),
                quiet: bool = False) -> str:
    """Plain text: one line per diagnostic (repeats grouped), a summary line per archive
    and, for more than one archive, a summary table. ``quiet`` keeps only the diagnostic
    lines."""
    out = io.StringIO()
    write_text(reports, out, crashes=crashes, quiet=quiet)
    return out.getvalue()


def write_text(reports: Sequence[Report], out: TextIO, *, terminal: bool = False,
               crashes: Sequence[Crash] = (), quiet: bool = False) -> None:
    """Text to ``out`` at once (``TextStream`` writes it as the archives are checked)."""
    stream = TextStream(out, terminal=terminal, quiet=quiet)
    for report in reports:
        stream.report(report)
    stream.finish(reports, crashes)


# --- JSON -------------------------------------------------------------------------------


def render_json(reports: Sequence[Report], *, crashes: Sequence[Crash] = ()) -> str:
    """One JSON document: tool, version, each archive's report, the archives not checked,
    and the summary."""
    doc = {"tool": TOOL, "version": tool_version(),
           "archives": [r.to_json() for r in reports],
           "not_checked": [c.to_json() for c in crashes],
           "summary": summarize(reports, crashes)}
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


# --- JUnit XML --------------------------------------------------------------------------

# Characters XML 1.0 cannot carry, even escaped.
_XML_ILLEGAL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _xml_text(text: str) -> str:
    return _XML_ILLEGAL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def _file_key(name: str) -> str:
    return Path(name).name if name else ""


def _testcases(report: Report) -> list[tuple[str, list[Diagnostic]]]:
    """(file name, its diagnostics) for every file of the archive, then for any other file
    the diagnostics name (a missing component, the base name itself)."""
    files = component_files(report.archive)
    cases: dict[str, list[Diagnostic]] = {p.name: [] for p in files}
    # a diagnostic may name B.0 for B.0.xz: match without compression suffixes too (the
    # uncompressed copy first, as files.find_archive prefers it)
    plain: dict[str, str] = {}
    for p in sorted(files, key=lambda p: strip_compression(p.name)[1] != ""):
        plain.setdefault(strip_compression(p.name)[0], p.name)
    for d in report.diagnostics:
        key = _file_key(d.file)
        if key not in cases:
            key = plain.get(strip_compression(key)[0], key)
        cases.setdefault(key, []).append(d)
    if not cases:
        cases[Path(report.archive).name] = []
    return list(cases.items())


def render_junit(reports: Sequence[Report], *, crashes: Sequence[Crash] = (),
                 warnings_as_errors: bool = False) -> str:
    """JUnit XML: a ``<testsuite>`` per archive, a ``<testcase>`` per file of the archive.
    A file with errors (or warnings, with ``warnings_as_errors``) has one ``<failure>``
    listing them; the other diagnostics go to ``<system-out>``. An archive that could not be
    checked is a suite with one ``<error>``."""
    import xml.etree.ElementTree as ET  # only for this format, not at every check's start

    root = ET.Element("testsuites", name="pcpconform check")
    totals = Counter[str]()
    failing = {Severity.ERROR, Severity.WARNING} if warnings_as_errors else {Severity.ERROR}
    for report in reports:
        suite = ET.SubElement(root, "testsuite", name=report.archive)
        cases = _testcases(report)
        failures = 0
        for name, diags in cases:
            case = ET.SubElement(suite, "testcase", classname=report.archive,
                                 name=name or "(archive)", time="0")
            bad = [d for d in diags if d.severity in failing]
            other = [d for d in diags if d.severity not in failing]
            if bad:
                failures += 1
                first = bad[0]
                errors = sum(1 for d in bad if d.severity is Severity.ERROR)
                warnings = len(bad) - errors
                counts = ", ".join(x for x in (_plural(errors, "error") if errors else "",
                                               _plural(warnings, "warning") if warnings else "") if x)
                fail = ET.SubElement(case, "failure", message=_xml_text(f"{counts}: {first.message}"),
                                     type=first.code)
                fail.text = _xml_text("".join(diagnostic_line(report, d) + "\n" for d in bad))
            if other:
                out = ET.SubElement(case, "system-out")
                out.text = _xml_text("".join(diagnostic_line(report, d) + "\n" for d in other))
        if report.truncated:
            err = ET.SubElement(suite, "system-err")
            err.text = f"stopped after {_plural(len(report.diagnostics), 'diagnostic')} (--max-diagnostics)\n"
        suite.set("tests", str(len(cases)))
        suite.set("failures", str(failures))
        suite.set("errors", "0")
        suite.set("skipped", "0")
        suite.set("time", f"{report.seconds:.3f}")
        totals.update(tests=len(cases), failures=failures)
        totals["time_ms"] += round(report.seconds * 1000)
    for crash in crashes:
        suite = ET.SubElement(root, "testsuite", name=crash.archive, tests="1", failures="0",
                              errors="1", skipped="0", time="0")
        case = ET.SubElement(suite, "testcase", classname=crash.archive, name="check", time="0")
        err = ET.SubElement(case, "error", message=_xml_text(crash.reason), type="internal-error")
        err.text = _xml_text(crash.reason + "\n")
        totals.update(tests=1, errors=1)
    for key in ("tests", "failures", "errors"):
        root.set(key, str(totals[key]))
    root.set("skipped", "0")
    root.set("time", f"{totals['time_ms'] / 1000:.3f}")
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


# --- SARIF 2.1.0 ------------------------------------------------------------------------


def _uri(path: str) -> str:
    p = Path(path)
    if p.is_absolute():
        return p.as_uri()
    return quote(p.as_posix(), safe="/")


def _artifact(report: Report, d: Diagnostic) -> str:
    """The path of the file a diagnostic is about: the checker may name it bare or with its
    directory; a bare name lives beside the archive."""
    if not d.file:
        return report.archive
    f = Path(d.file)
    if str(f.parent) == "." and str(Path(report.archive).parent) != ".":
        return str(Path(report.archive).parent / f)
    return d.file


def _sarif_rules() -> tuple[list[dict[str, Any]], dict[str, int]]:
    rules, index = [], {}
    for i, r in enumerate(RULES.values()):
        index[r.code] = i
        rules.append({
            "id": r.code,
            "shortDescription": {"text": r.summary},
            "defaultConfiguration": {"level": _SARIF_LEVEL[r.severity]},
            "properties": {"clause": r.clause, "tags": ["pcp-archive", r.code.split(".")[0]]},
        })
    return rules, index


def sarif_log(reports: Sequence[Report], *, crashes: Sequence[Crash] = ()) -> dict[str, Any]:
    """The SARIF log as a dict: one run, every rule in ``tool.driver.rules``."""
    rules, index = _sarif_rules()
    results = []
    for report in reports:
        for d in report.diagnostics:
            location: dict[str, Any] = {"artifactLocation": {"uri": _uri(_artifact(report, d))}}
            if d.offset is not None and d.offset >= 0:
                location["region"] = {"byteOffset": d.offset}
            props: dict[str, Any] = {"archive": report.archive, "clause": d.clause}
            if d.record is not None:
                props["record"] = d.record
            if d.field:
                props["field"] = d.field
            if d.metric:
                props["metric"] = d.metric
            if d.time:
                props["time"] = d.time
            result: dict[str, Any] = {"ruleId": d.code}
            if d.code in index:
                result["ruleIndex"] = index[d.code]
            result.update({"level": _SARIF_LEVEL[d.severity], "message": {"text": d.message},
                           "locations": [{"physicalLocation": location}], "properties": props})
            results.append(result)
    notes = [{"level": "error", "message": {"text": f"{c.archive}: not checked: {c.reason}"}}
             for c in crashes]
    notes += [{"level": "note",
               "message": {"text": f"{r.archive}: stopped after "
                                   f"{_plural(len(r.diagnostics), 'diagnostic')} (--max-diagnostics)"}}
              for r in reports if r.truncated]
    invocation: dict[str, Any] = {"executionSuccessful": not crashes}
    if notes:
        invocation["toolExecutionNotifications"] = notes
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": TOOL, "informationUri": _information_uri(),
                                "version": tool_version(), "rules": rules}},
            "invocations": [invocation],
            "results": results,
        }],
    }


def render_sarif(reports: Sequence[Report], *, crashes: Sequence[Crash] = ()) -> str:
    return json.dumps(sarif_log(reports, crashes=crashes), indent=2, ensure_ascii=False) + "\n"


# --- dispatch ---------------------------------------------------------------------------


def render(fmt: str, reports: Sequence[Report], *, crashes: Sequence[Crash] = (),
           quiet: bool = False, warnings_as_errors: bool = False) -> str:
    """The document in format ``fmt`` (plain text for ``text``)."""
    if fmt == "text":
        return render_text(reports, crashes=crashes, quiet=quiet)
    if fmt == "json":
        return render_json(reports, crashes=crashes)
    if fmt == "junit":
        return render_junit(reports, crashes=crashes, warnings_as_errors=warnings_as_errors)
    if fmt == "sarif":
        return render_sarif(reports, crashes=crashes)
    raise ValueError(f"unknown format {fmt!r}")


def write(fmt: str, reports: Sequence[Report], out: TextIO, *, terminal: bool = False,
          crashes: Sequence[Crash] = (), quiet: bool = False,
          warnings_as_errors: bool = False) -> None:
    """Write the document to ``out``; ``terminal`` (text only) uses colour and rich tables."""
    if fmt == "text":
        write_text(reports, out, terminal=terminal, crashes=crashes, quiet=quiet)
    else:
        out.write(render(fmt, reports, crashes=crashes, warnings_as_errors=warnings_as_errors))
