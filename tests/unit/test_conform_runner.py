"""``pcpconform conform`` against deliberately broken adapters: each misbehaviour gets its
verdict (spec/conformance.md, CONF-VERDICT-1), and the corpus is never touched."""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from pcpconform.cli import main
from pcpconform.conform.protocol import Outcome, ProtocolViolation, parse_capabilities, parse_validator
from pcpconform.conform.runner import run_conformance
from pcpconform.conform.verdicts import Verdict, first_difference

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "corpus"

_HEAD = '''
import json, os, sys
if sys.argv[1:] == ["--capabilities"]:
    print(json.dumps({"name": "broken", "version": "1", "suites": ["validator", "reader"],
                      "archive_versions": [2, 3]}))
    sys.exit(0)
suite, base = sys.argv[1], sys.argv[2]
'''


def _adapter(tmp_path: Path, body: str, name: str = "adapter.py") -> str:
    script = tmp_path / name
    script.write_text(_HEAD + body, encoding="utf-8")
    return f"{sys.executable} {script}"


def _run(impl: str, *args: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any]]:
    status = main(["conform", "--impl", impl, "--corpus", str(CORPUS), "--format", "json", *args])
    return status, json.loads(capsys.readouterr().out)


def _verdicts(report: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(r["suite"], r["case"]): r for r in report["results"]}


def test_a_validator_accepting_everything_fails_the_invalid_cases(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    impl = _adapter(tmp_path, 'print(json.dumps({"valid": True}))\n')
    status, report = _run(impl, "--suite", "validator", "--cases", "example-v2", "--cases", "desc-conflict-v*",
                          capsys=capsys)
    assert status == 1
    got = _verdicts(report)
    assert got[("validator", "example-v2")]["verdict"] == "pass"
    failed = got[("validator", "desc-conflict-v2")]
    assert failed["verdict"] == "fail" and failed["clauses"] == ["FMT-DESC-6"]
    assert "accepted" in failed["detail"] and "desc.conflict" in failed["detail"]
    assert failed["expected"]["valid"] is False and failed["got"] == {"valid": True}
    assert report["summary"]["validator"] == {"pass": 1, "fail": 2, "skip": 0, "crash": 0, "timeout": 0,
                                              "protocol-error": 0}


def test_wrong_codes_fail_and_the_text_report_names_the_clause(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    impl = _adapter(tmp_path, 'print(json.dumps({"valid": False, "codes": ["desc.sem"]})); sys.exit(1)\n')
    status = main(["conform", "--impl", impl, "--corpus", str(CORPUS), "--suite", "validator",
                   "--cases", "desc-conflict-v2"])
    out = capsys.readouterr().out
    assert status == 1
    assert "FAIL validator desc-conflict-v2 [" in out and "FMT-DESC-6" in out
    assert "error codes not reported: desc.conflict" in out
    assert any(line.split() == ["validator", "0", "1", "0", "0", "0", "0", "1"] for line in out.splitlines())
    assert out.splitlines()[-1].startswith("broken 1: DOES NOT CONFORM (0 passed, 1 not, 0 skipped")


def test_a_reader_flipping_a_bit_of_a_double_names_line_and_field(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    body = '''
import re, io
from pcpconform.dump.jsonl import write_jsonl
from pcpconform.io.archive import Archive
buf = io.StringIO()
write_jsonl(Archive(base), buf)
def flip(m):
    return m.group(1) + format(int(m.group(2), 16) ^ 1, "016x") + '"'
sys.stdout.write(re.sub(r'("type":"double","value":"0x)([0-9a-f]{16})"', flip, buf.getvalue(), count=1))
'''
    status, report = _run(_adapter(tmp_path, body), "--suite", "reader", "--cases", "example-v2", capsys=capsys)
    assert status == 1
    failed = _verdicts(report)[("reader", "example-v2")]
    lines = (CORPUS / "cases" / "valid" / "example-v2" / "dump.jsonl").read_text().splitlines()
    want = next(i for i, line in enumerate(lines, 1) if '"type":"double","value"' in line)
    assert failed["verdict"] == "fail" and failed["line"] == want
    assert failed["path"].startswith("/vsets/") and failed["path"].endswith("/value")
    assert int(failed["expected"], 16) ^ int(failed["got"], 16) == 1
    assert f"line {want} (result)" in failed["detail"]
    assert failed["clauses"] and all(c.split("-")[1] in ("RESULT", "VAL", "EVENT", "RAW")
                                     for c in failed["clauses"])


def test_a_crashing_adapter_is_a_crash(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    impl = _adapter(tmp_path, 'import signal\nprint("dying", file=sys.stderr)\nos.kill(os.getpid(), signal.SIGSEGV)\n')
    status, report = _run(impl, "--cases", "example-v3", "--suite", "validator", "--suite", "reader", capsys=capsys)
    assert status == 1
    for r in report["results"]:
        assert r["verdict"] == "crash" and "SIGSEGV" in r["detail"] and r["stderr"] == "dying"


def test_a_hanging_adapter_times_out(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    impl = _adapter(tmp_path, 'import time\ntime.sleep(60)\n')
    status, report = _run(impl, "--cases", "example-v2", "--suite", "validator", "--suite", "reader",
                          "--timeout", "1", "-j", "2", capsys=capsys)
    assert status == 1
    assert [r["verdict"] for r in report["results"]] == ["timeout", "timeout"]
    assert all(r["seconds"] < 10 for r in report["results"])


@pytest.mark.parametrize("body,why", [
    ('print("hello, world")\n', "not one JSON object"),
    ('print(json.dumps({"valid": "yes"}))\n', "'valid' must be true or false"),
    ('print(json.dumps({"valid": True}))\nsys.exit(3)\n', "exit status 3"),
    ('print(json.dumps({"valid": True}))\nsys.exit(1)\n', "exit status 1 with"),
    ('sys.stdout.buffer.write(b"\\xff\\xfe")\n', "not UTF-8"),
])
def test_garbage_is_a_protocol_error(tmp_path: Path, capsys: pytest.CaptureFixture[str], body: str,
                                     why: str) -> None:
    status, report = _run(_adapter(tmp_path, body), "--suite", "validator", "--cases", "example-v2",
                          capsys=capsys)
    assert status == 1
    (result,) = report["results"]
    assert result["verdict"] == "protocol-error" and why in result["detail"], result


def test_a_reader_printing_garbage_is_a_protocol_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, report = _run(_adapter(tmp_path, 'print("not json at all")\n'), "--suite", "reader",
                          "--cases", "events-v2", capsys=capsys)
    assert status == 1
    (result,) = report["results"]
    assert result["verdict"] == "protocol-error" and "line 1 is not JSON" in result["detail"]


def _digests(ids: list[str]) -> dict[str, str]:
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest()
            for i in ids for p in sorted(CORPUS.glob(f"cases/*/{i}/*"))}


def test_an_adapter_writing_around_leaves_the_corpus_untouched(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    seen = tmp_path / "seen.txt"
    body = f'''
from pathlib import Path
here = Path(base).parent
with open({str(seen)!r}, "a") as f:
    f.write(os.getcwd() + "\\n")
for p in list(here.iterdir()):
    p.write_bytes(b"clobbered")
(here / "new-file").write_text("x")
(here.parent / "escaped").write_text("x")
print(json.dumps({{"valid": True}}))
'''
    ids = ["example-v2", "desc-conflict-v2"]
    before = _digests(ids)
    status, _ = _run(_adapter(tmp_path, body), "--suite", "validator", "--cases", ids[0], "--cases", ids[1],
                     capsys=capsys)
    assert status == 1      # it accepts the invalid case
    assert _digests(ids) == before
    assert not any((CORPUS / "cases" / k / i / "new-file").exists() for k in ("valid", "invalid") for i in ids)
    dirs = seen.read_text().split()
    assert len(dirs) == 2 and all(not Path(d).exists() for d in dirs)       # private copies, removed
    assert all(not Path(d).is_relative_to(CORPUS) for d in dirs)


def test_unsupported_cases_are_skipped_never_passed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = tmp_path / "v2only.py"
    script.write_text(_HEAD.replace('["validator", "reader"]', '["validator"]').replace("[2, 3]", "[2]")
                      + 'print(json.dumps({"valid": True}))\n', encoding="utf-8")
    status, report = _run(f"{sys.executable} {script}", "--cases", "example-*", "--cases", "file-decompress-limit-v2",
                          capsys=capsys)
    got = _verdicts(report)
    assert got[("validator", "example-v2")]["verdict"] == "pass"
    assert got[("validator", "example-v3")]["verdict"] == "skip"
    assert "archive version 3" in got[("validator", "example-v3")]["detail"]
    assert got[("validator", "file-decompress-limit-v2")]["verdict"] == "skip"     # needs decompress_limit
    assert all(r["verdict"] == "skip" for (suite, _), r in got.items() if suite == "reader")
    assert status == 0 and report["total"]["pass"] == 1


@pytest.mark.parametrize("impl,message", [
    ("/no/such/command", "cannot run /no/such/command"),
    ("'unbalanced", "--impl"),
    ("", "empty command"),
])
def test_a_command_that_cannot_run_is_exit_2(impl: str, message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["conform", "--impl", impl, "--corpus", str(CORPUS), "--cases", "example-v2"]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_bad_capabilities_and_no_matching_case_are_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = tmp_path / "nocaps.py"
    script.write_text("print('what?')\n", encoding="utf-8")
    assert main(["conform", "--impl", f"{sys.executable} {script}", "--corpus", str(CORPUS)]) == 2
    assert "--capabilities" in capsys.readouterr().err
    impl = _adapter(tmp_path, 'print(json.dumps({"valid": True}))\n')
    assert main(["conform", "--impl", impl, "--corpus", str(CORPUS), "--cases", "no-such-*"]) == 2
    assert "no case" in capsys.readouterr().err
    assert main(["conform", "--impl", impl, "--corpus", str(tmp_path)]) == 2


def test_protocol_parsers_and_the_json_difference() -> None:
    assert parse_validator(b'{"valid": false, "codes": ["a"], "extra": 1}\n') == (False, ["a"])
    with pytest.raises(ProtocolViolation):
        parse_validator(b"[]")
    with pytest.raises(ProtocolViolation):
        parse_capabilities(b'{"name": "x", "version": "1", "suites": ["validator"], "archive_versions": ["2"]}')
    assert first_difference({"a": [1, {"b": 2}]}, {"a": [1, {"b": 3}]}) == ("/a/1/b", 2, 3)
    assert first_difference({"a": 1, "b": 2}, {"b": 2, "a": 1}) is not None     # member order matters
    assert first_difference([1], [1, 2]) == ("/", "1 items", "2 items")
    assert Outcome(None, b"", b"", 1.0).timed_out


def test_the_runner_api(tmp_path: Path) -> None:
    impl = _adapter(tmp_path, 'print(json.dumps({"valid": suite == "validator"}))\n')
    report = run_conformance(CORPUS, impl, suites=("validator",), globs=("example-v2",))
    assert [r.verdict for r in report.results] == [Verdict.PASS] and report.exit_status == 0
