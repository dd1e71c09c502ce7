"""The verdict matrix (pcpconform/conform/matrix.py): rendering from results, counts,
explanations by deviation, the JSON round trip, and a run against broken implementations."""

from __future__ import annotations

import json
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from pcpconform.conform import matrix
from pcpconform.conform.manifest import Case
from pcpconform.conform.matrix import Column, MatrixReport, Row, explain, render_html, render_markdown, run_matrix
from pcpconform.errors import UsageError

ROOT = Path(__file__).resolve().parents[2]


def _report() -> MatrixReport:
    cols = [Column("pcpconform", "the kit", "0.2.0", ["validator", "reader"]),
            Column("libpcp-6.0.3", "host", "6.0.3", ["validator", "reader"]),
            Column("other", "", missing="not installed here")]
    rows = [Row("validator", "desc-name-v2", "FMT-DESC-8", "a bad name",
                {"pcpconform": {"verdict": "pass"},
                 "libpcp-6.0.3": {"verdict": "fail", "detail": "an invalid archive was accepted"}}),
            Row("validator", "event-structure-v3", "FMT-EVENT-2", "",
                {"pcpconform": {"verdict": "pass"}, "libpcp-6.0.3": {"verdict": "crash", "detail": "SIGSEGV"}}),
            Row("validator", "example-v2", "FMT-FILE-1", "",
                {"pcpconform": {"verdict": "pass"}, "libpcp-6.0.3": {"verdict": "fail", "detail": "<&>"}}),
            Row("reader", "example-v2", "FMT-FILE-1", "",
                {"pcpconform": {"verdict": "pass"}, "libpcp-6.0.3": {"verdict": "pass"}}),
            Row("writer", "example-v2", "FMT-FILE-1", "",
                {"pcpconform": {"verdict": "skip"}, "libpcp-6.0.3": {"verdict": "skip"}})]
    return MatrixReport(cols, rows)


def test_counts_per_implementation_and_suite() -> None:
    report = _report()
    assert report.counts("libpcp-6.0.3", "validator") == {"pass": 0, "fail": 2, "skip": 0, "crash": 1,
                                                          "timeout": 0, "protocol-error": 0}
    assert report.counts("pcpconform")["pass"] == 4
    assert report.counts("other") == dict.fromkeys(matrix.VERDICTS, 0)


def test_cells_are_explained_by_deviations_or_listed_as_unexplained() -> None:
    def clause(impl: str, suite: str, name: str, verdict: str) -> str | None:
        dev = explain(impl, suite, name, verdict)
        return None if dev is None else dev.clause

    assert clause("libpcp-7", "validator", "desc-name-v2", "fail") == "IMPL-VAL-3"
    assert clause("libpcp-7", "validator", "value-undescribed-v3", "crash") == "IMPL-CRASH-1"
    # a deviation explains only the verdict, suite, cases and implementations it names
    assert clause("libpcp-7", "validator", "desc-name-v2", "crash") is None
    assert clause("libpcp-7", "reader", "desc-name-v2", "fail") is None
    assert clause("pcpconform", "validator", "desc-name-v2", "fail") is None
    assert clause("libpcp-6.0.3", "validator", "label-features-v3", "fail") is None
    assert clause("libpcp-6.3", "validator", "label-features-v3", "fail") == "IMPL-VAL-4"
    assert [(impl, row.name) for impl, row in _report().unexplained()] == [("libpcp-6.0.3", "example-v2")]
    assert "Unexplained: libpcp-6.0.3 validator `example-v2`" in render_markdown(_report())


def test_markdown_has_columns_counts_findings_and_one_table_per_suite_run() -> None:
    text = render_markdown(_report())
    assert "| clause | unit | pcpconform | libpcp-6.0.3 | other |" in text
    assert "| libpcp-6.0.3 | validator | 0 | 2 | 0 | 1 | 0 | 0 |" in text
    assert "| FMT-DESC-8 | `desc-name-v2` | pass | **FAIL** IMPL-VAL-3 | - |" in text
    assert "**CRASH** IMPL-CRASH-2" in text
    assert "## Findings" in text and "IMPL-VAL-3" in text.split("## Findings")[1]
    assert "## reader" in text and "## writer" not in text       # every writer cell is a skip
    assert "not run: not installed here" in text


def test_html_is_self_contained_and_well_formed() -> None:
    page = render_html(_report())

    class Tags(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.stack: list[str] = []
            self.refs: list[str] = []

        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            self.refs += [v or "" for k, v in attrs if k in ("src", "href")]
            if tag not in ("meta", "br"):
                self.stack.append(tag)

        def handle_endtag(self, tag: str) -> None:
            assert self.stack.pop() == tag

    tags = Tags()
    tags.feed(page)
    assert tags.stack == [] and tags.refs == []          # balanced, no external asset
    assert "&lt;&amp;&gt;" in page and "<&>" not in page  # details are escaped
    assert 'class="crash explained"' in page


def test_json_round_trip_renders_the_same() -> None:
    report = _report()
    again = MatrixReport.from_json(json.loads(json.dumps(report.as_json())))
    assert again.as_json() == report.as_json()
    assert render_markdown(again) == render_markdown(report)


def test_run_matrix_grades_a_broken_implementation(tmp_path: Path) -> None:
    """A command that calls every archive valid fails every invalid case; one that does not
    start gets a column saying why; an unknown name is a usage error."""
    always = tmp_path / "always.py"
    always.write_text('import json, sys\nif sys.argv[1:] == ["--capabilities"]:\n'
                      '    print(json.dumps({"name": "always", "version": "1", "suites": ["validator"],'
                      ' "archive_versions": [2, 3]}))\nelse:\n    print(json.dumps({"valid": True}))\n')
    report = run_matrix(ROOT / "corpus", [f"always={sys.executable} {always}", "gone=/nonexistent/cmd"],
                        suites=["validator"], globs=["example-v2", "desc-type-v2"], timeout=30)
    assert [c.name for c in report.columns] == ["always", "gone"]
    assert report.columns[1].missing
    cells = {r.name: r.cells["always"]["verdict"] for r in report.rows}
    assert cells == {"example-v2": "pass", "desc-type-v2": "fail"}
    with pytest.raises(UsageError):
        run_matrix(ROOT / "corpus", ["no-such-adapter"])


# -- the committed matrix -------------------------------------------------------------------
DOCS = ROOT / "docs"


def _committed() -> MatrixReport:
    return MatrixReport.from_json(json.loads((DOCS / "conformance-matrix.json").read_text(encoding="utf-8")))


def test_committed_matrix_renders_to_the_committed_pages() -> None:
    report = _committed()
    assert (DOCS / "conformance-matrix.md").read_text(encoding="utf-8") == render_markdown(report), \
        "stale: python -m pcpconform.conform.matrix --from-json docs/conformance-matrix.json " \
        "--output docs/conformance-matrix.md"
    assert (DOCS / "conformance-matrix.html").read_text(encoding="utf-8") == render_html(report)


def test_committed_matrix_has_the_kit_and_the_three_libpcps() -> None:
    report = _committed()
    columns = {c.name: c for c in report.columns}
    assert set(columns) == {"pcpconform", "libpcp-6.0.3", "libpcp-6.3", "libpcp-7"}
    assert all(not c.missing for c in columns.values())
    assert [columns[n].version[:3] for n in ("libpcp-6.0.3", "libpcp-6.3", "libpcp-7")] == ["6.0", "6.3", "7.2"]
    assert {"validator", "reader"} <= set(report.suites)


def test_every_libpcp_failure_is_explained_and_every_deviation_is_used() -> None:
    """IMPL-MATRIX-1: each bad libpcp cell cites a clause of spec/implementations.md, and no
    deviation is stale."""
    report = _committed()
    assert report.unexplained() == []
    spec = (ROOT / "spec/implementations.md").read_text(encoding="utf-8")
    libpcps = [c.name for c in report.columns if c.name.startswith("libpcp-")]
    for dev in matrix.DEVIATIONS:
        assert f"**{dev.clause}**" in spec, dev.clause
        assert any(dev is explain(i, r.suite, r.name, r.cells[i]["verdict"])
                   for r in report.rows for i in libpcps if i in r.cells), f"{dev.clause} explains no cell"


def test_from_json_renders_without_running(tmp_path: Path) -> None:
    out = tmp_path / "m.md"
    assert matrix.main(["--from-json", str(DOCS / "conformance-matrix.json"), "--output", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == (DOCS / "conformance-matrix.md").read_text(encoding="utf-8")
    assert (tmp_path / "m.html").is_file() and (tmp_path / "m.json").is_file()


def test_rows_are_grouped_by_a_clause_of_the_suites_chapter() -> None:
    case = Case(Path("x"), {"clauses": ["FMT-FILE-1", "DUMP-FILE-1", "INTERP-VER-1"]})
    assert [matrix.group_clause(case, s) for s in ("validator", "reader", "interp", "derive")] == \
        ["FMT-FILE-1", "DUMP-FILE-1", "INTERP-VER-1", "FMT-FILE-1"]
    assert matrix.group_clause(None, "reader") == ""
    rows = matrix.sort_rows([Row("reader", "b", "DUMP-X"), Row("validator", "z", "FMT-B"),
                             Row("validator", "a", "FMT-B"), Row("validator", "c", "FMT-A")])
    assert [(r.suite, r.name) for r in rows] == [("validator", "c"), ("validator", "a"), ("validator", "z"),
                                                 ("reader", "b")]
