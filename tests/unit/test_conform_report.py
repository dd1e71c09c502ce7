"""The report forms of ``pcpconform conform`` (CONF-REPORT-1), ``--output``, ``builtin:NAME``
and ``--matrix``, and the comparison functions behind the interp and derive verdicts."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest

from pcpconform.cli import main
from pcpconform.cli.conform import KIT_IMPL, resolve_impl
from pcpconform.conform.compare import compare_derive, compare_dump_content, compare_interp
from pcpconform.conform.protocol import Capabilities
from pcpconform.conform.report import FORMATS, write_report
from pcpconform.conform.runner import ConformReport
from pcpconform.conform.verdicts import CaseResult, Verdict
from pcpconform.errors import UsageError

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "corpus"


def _report() -> ConformReport:
    caps = Capabilities("impl<&>", "1", ("validator", "reader"), (2, 3))
    return ConformReport(caps, [
        CaseResult("example-v2", "validator", Verdict.PASS, seconds=0.1),
        CaseResult("desc-conflict-v2", "validator", Verdict.FAIL, "an invalid archive was accepted <here>",
                   ["FMT-DESC-6"], {"valid": False}, {"valid": True}),
        CaseResult("example-v3", "reader", Verdict.SKIP, "the implementation does not read archive version 3"),
        CaseResult("events-v2", "reader", Verdict.CRASH, "killed by SIGSEGV", ["FMT-FILE-1"], stderr="boom"),
    ], seconds=1.5)


def test_junit_has_a_suite_per_suite_and_the_right_elements() -> None:
    out = io.StringIO()
    write_report(_report(), out, "junit")
    root = ET.fromstring(out.getvalue().split("\n", 1)[1])
    suites = {s.get("name"): s for s in root.iter("testsuite")}
    assert set(suites) == {"validator", "reader"}
    assert suites["validator"].get("failures") == "1" and suites["reader"].get("errors") == "1"
    assert suites["reader"].get("skipped") == "1"
    failure = root.find(".//testcase[@name='desc-conflict-v2']/failure")
    assert failure is not None and "FMT-DESC-6" in str(failure.get("message"))
    error = root.find(".//testcase[@name='events-v2']/error")
    assert error is not None and error.get("type") == "crash" and error.text == "boom"


@pytest.mark.parametrize("form", sorted(FORMATS))
def test_every_form_names_the_failure_and_its_clause(form: str) -> None:
    out = io.StringIO()
    write_report(_report(), out, form)
    text = out.getvalue()
    assert "desc-conflict-v2" in text and "FMT-DESC-6" in text
    if form == "html":
        assert "impl&lt;&amp;&gt;" in text and "<here>" not in text       # escaped
    if form in ("text", "markdown", "html"):
        assert "DOES NOT CONFORM (1 passed, 2 not, 1 skipped" in text
    if form == "json":
        assert json.loads(text)["total"]["crash"] == 1


def test_output_file_and_builtin_kit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "report.xml"
    status = main(["conform", "--impl", "builtin:kit", "--corpus", str(CORPUS), "--suite", "reader",
                   "--cases", "example-v2", "--format", "junit", "-o", str(out)])
    assert status == 0 and capsys.readouterr().out == ""
    root = ET.fromstring(out.read_text(encoding="utf-8").split("\n", 1)[1])
    assert [c.get("name") for c in root.iter("testcase")] == ["example-v2"]
    assert resolve_impl("builtin:kit") == KIT_IMPL and resolve_impl("python3 x.py") == "python3 x.py"
    with pytest.raises(UsageError, match="no such built-in adapter"):
        resolve_impl("builtin:nonesuch")


def test_matrix_of_the_kit(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("pcpconform.conform.matrix")
    status = main(["conform", "--matrix", "--impl", "builtin:pcpconform", "--impl",
                   f"template={sys.executable} {ROOT / 'examples' / 'adapters' / 'pcpconform_adapter.py'}",
                   "--corpus", str(CORPUS), "--suite", "reader", "--cases", "example-v2", "--format", "json"])
    matrix = json.loads(capsys.readouterr().out)
    assert status == 0
    assert [c["name"] for c in matrix["columns"]] == ["pcpconform", "template"]
    assert all(cell["verdict"] == "pass" for row in matrix["rows"] for cell in row["cells"].values())


def _interp(values: list[str], insts: list[int] | None = None, rules: str = "pcp-6.3") -> dict[str, object]:
    insts = insts or list(range(len(values)))
    return {"kind": "interp", "format": "pcpconform-interp", "format_version": 1, "rules": rules,
            "samples": [{"time": {"sec": 10, "nsec": 5}, "eol": False, "metrics": [
                {"pmid": "1.0.1", "name": "m", "instances": [
                    {"inst": i, "name": f"i{i}", "value": {"type": "double", "value": v}}
                    for i, v in zip(insts, values)]}]}]}


def test_interp_comparison_is_bit_exact_and_names_the_place() -> None:
    want = _interp(["0x3ff0000000000000", "0x4000000000000000"])
    assert compare_interp(want, _interp(["0x3ff0000000000000", "0x4000000000000000"]), {}) is None
    diff = compare_interp(want, _interp(["0x3ff0000000000000", "0x4000000000000001"]), {"1.0.1": "instant"})
    assert diff is not None and diff.clauses == ["INTERP-VAL-4"] and diff.path.endswith("/instances/1/value/value")
    assert diff.detail.startswith("fetch 0 (10.000000005), metric m (1.0.1), instance 1 (i1)")
    swapped = compare_interp(want, _interp(["0x4000000000000000", "0x3ff0000000000000"], [1, 0]), {})
    assert swapped is not None and "instances out of order" in swapped.detail
    wrong_rules = compare_interp(want, _interp(["0x3ff0000000000000", "0x4000000000000000"], rules="pcp-6.0"), {})
    assert wrong_rules is not None and wrong_rules.clauses == ["INTERP-VER-1"]
    assert compare_interp(want, "garbage", {}) is not None


def test_derive_comparison_diagnostics_then_descriptors_then_values() -> None:
    doc = dict(_interp(["0x3ff0000000000000"]), kind="derive", derived=[
        {"name": "m", "pmid": "511.0.3", "masked": False, "type": 5, "sem": 3, "indom": "PM_INDOM_NULL",
         "units": "Kbyte"}])
    answer = {"kind": "derive", "result": json.loads(json.dumps(doc)), "diagnostics": []}
    assert compare_derive(doc, [], answer, {}) is None
    answer["result"]["derived"][0]["units"] = "Mbyte"
    diff = compare_derive(doc, [], answer, {})
    assert diff is not None and diff.clauses == ["DERIVE-BIND-9"] and diff.got == "Mbyte"
    diff = compare_derive(doc, ["[x.conf:1] Error: ..."], answer, {})
    assert diff is not None and diff.clauses[0] == "DERIVE-CLI-3"
    assert compare_derive(None, [], {"kind": "derive", "result": None, "diagnostics": []}, {}) is None


def test_dump_content_ignores_layout_not_values() -> None:
    want = [{"kind": "label", "file": "meta", "record": 0, "offset": 0, "hostname": "a"},
            {"kind": "index", "file": "index", "record": 1, "offset": 8, "off_data": 1}]
    moved = [{"kind": "label", "file": "meta", "record": 0, "offset": 4, "hostname": "a"},
             {"kind": "index", "file": "index", "record": 1, "offset": 8, "off_data": 99}]
    assert compare_dump_content(want, moved) is None
    other = [dict(moved[0], hostname="b"), moved[1]]
    diff = compare_dump_content(want, other)
    assert diff is not None and diff.clauses == ["GEN-LABEL"] and diff.path == "/hostname"
