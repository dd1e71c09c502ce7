"""The persistent form of the runner protocol (spec/conformance.md, CONF-PERSIST-*): one
process answers many cases; a crash, a hang or garbage costs one case its verdict and the
process is started again for the next; the isolation checks hold as in the one-shot form."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from pcpconform.cli import main
from pcpconform.conform.runner import run_conformance
from pcpconform.conform.verdicts import Verdict
from pcpconform.errors import UsageError

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "corpus"
KIT = f"{sys.executable} -m pcpconform.conform.adapters.kit"
TEMPLATE = f"{sys.executable} {ROOT / 'examples' / 'adapters' / 'pcpconform_adapter.py'}"

_HEAD = '''
import json, os, sys, time
CAPS = {"name": "p", "version": "1", "suites": ["validator"], "archive_versions": [2, 3], "persistent": True}
if sys.argv[1:] == ["--capabilities"]:
    print(json.dumps(CAPS))
    sys.exit(0)
assert sys.argv[1:] == ["--persistent"], sys.argv
with open(STARTS, "a") as f:
    f.write("start\\n")
for line in sys.stdin:
    req = json.loads(line)
    if req["cmd"] == "start":
        print(json.dumps({"protocol": 1, **CAPS}), flush=True)
        continue
    if req["cmd"] == "stop":
        break
    case, base = req["case"], req["args"][0]
    reply = {"seq": req["seq"], "exit": 0, "stdout": json.dumps({"valid": True})}
'''
_TAIL = '''
    print(json.dumps(reply), flush=True)
'''
CASES = ("example-v2", "example-v3")


def _adapter(tmp_path: Path, body: str) -> tuple[str, Path]:
    starts = tmp_path / "starts.txt"
    script = tmp_path / "persistent.py"
    indented = "".join(f"    {line}\n" for line in body.strip("\n").splitlines())
    script.write_text(_HEAD.replace("STARTS", repr(str(starts))) + indented + _TAIL, encoding="utf-8")
    return f"{sys.executable} {script}", starts


def _run(impl: str, **kw: object) -> dict[str, Verdict]:
    report = run_conformance(CORPUS, impl, suites=("validator",), globs=CASES, **kw)  # type: ignore[arg-type]
    assert report.form == "persistent"
    return {r.case: r for r in report.results}   # type: ignore[misc]


def test_a_well_behaved_process_answers_every_case_in_one_start(tmp_path: Path) -> None:
    impl, starts = _adapter(tmp_path, "")
    got = _run(impl)
    assert [r.verdict for r in got.values()] == [Verdict.PASS, Verdict.PASS]   # type: ignore[attr-defined]
    assert starts.read_text().count("start") == 1


@pytest.mark.parametrize("body,verdict,why", [
    ('if case == "example-v2":\n    print("dying", file=sys.stderr, flush=True)\n    os.kill(os.getpid(), 11)',
     Verdict.CRASH, "killed by SIGSEGV"),
    ('if case == "example-v2":\n    sys.exit(0)', Verdict.CRASH, "exited with status 0 without answering"),
    ('if case == "example-v2":\n    time.sleep(60)', Verdict.TIMEOUT, "timeout"),
    ('if case == "example-v2":\n    print("garbage", flush=True)\n    continue', Verdict.PROTOCOL_ERROR,
     "not a JSON line"),
    ('if case == "example-v2":\n    reply["seq"] += 100', Verdict.PROTOCOL_ERROR, "\"seq\""),
    ('if case == "example-v2":\n    reply = {"seq": req["seq"], "exit": "0"}', Verdict.PROTOCOL_ERROR,
     "needs \"exit\""),
])
def test_a_misbehaving_process_costs_one_case_and_is_started_again(tmp_path: Path, body: str, verdict: Verdict,
                                                                  why: str) -> None:
    impl, starts = _adapter(tmp_path, body)
    got = _run(impl, timeout=2)
    bad, good = got["example-v2"], got["example-v3"]
    assert bad.verdict == verdict and why in bad.detail, bad          # type: ignore[attr-defined]
    assert good.verdict == Verdict.PASS                               # type: ignore[attr-defined]
    assert starts.read_text().count("start") == 2
    if verdict == Verdict.CRASH and "SIGSEGV" in why:
        assert bad.stderr == "dying"                                  # type: ignore[attr-defined]


def test_a_skip_from_the_implementation_is_a_skip(tmp_path: Path) -> None:
    impl, _ = _adapter(tmp_path, 'reply = {"seq": req["seq"], "skipped": "not today"}')
    got = _run(impl)
    assert all(r.verdict == Verdict.SKIP and "not today" in r.detail for r in got.values())  # type: ignore[attr-defined]


@pytest.mark.parametrize("body,why", [
    ('open(os.path.join(req["dir"], "..", "escaped"), "w").write("x")', "wrote outside its directory: escaped"),
    ('open(base + ".meta", "ab").write(b"x")', "changed or removed its input file a.meta"),
    ('os.remove(base + ".index")', "changed or removed its input file a.index"),
])
def test_writing_outside_its_directory_or_on_its_input_fails(tmp_path: Path, body: str, why: str) -> None:
    impl, _ = _adapter(tmp_path, body)
    got = _run(impl)
    for result in got.values():
        assert result.verdict == Verdict.FAIL and result.clauses == ["CONF-ISO-1"]   # type: ignore[attr-defined]
        assert why in result.detail                                                 # type: ignore[attr-defined]


def test_a_broken_handshake_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = tmp_path / "nohands.py"
    script.write_text("import sys\nif sys.argv[1:] == ['--capabilities']:\n    print('{}')\nelse:\n"
                      "    sys.stdin.readline(); print('hello', flush=True)\n", encoding="utf-8")
    with pytest.raises(UsageError, match="--persistent: start: the answer is not JSON"):
        run_conformance(CORPUS, f"{sys.executable} {script}", suites=("validator",), globs=CASES, persistent=True)
    assert main(["conform", "--impl", f"{sys.executable} {script}", "--corpus", str(CORPUS), "--persistent",
                 "--cases", "example-v2"]) == 2
    err = capsys.readouterr().err
    assert "start" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_the_two_forms_give_the_same_verdicts_on_the_kit() -> None:
    globs = ("example-v3", "desc-conflict-v2", "file-decompress-limit-v2")
    forms = [run_conformance(CORPUS, KIT, suites=("validator", "reader"), globs=globs, persistent=p, jobs=2)
             for p in (False, True)]
    assert [f.form for f in forms] == ["one-shot", "persistent"]
    one_shot, persistent = ([(r.suite, r.case, r.verdict, r.detail) for r in f.results] for f in forms)
    assert one_shot == persistent
    assert all(v == Verdict.PASS for _, _, v, _ in persistent)


def test_the_template_adapter_speaks_both_forms(capsys: pytest.CaptureFixture[str]) -> None:
    for form in ("--one-shot", "--persistent"):
        status = main(["conform", "--impl", TEMPLATE, "--corpus", str(CORPUS), form, "--format", "json",
                       "--cases", "example-v2", "--cases", "desc-conflict-v2"])
        report = json.loads(capsys.readouterr().out)
        assert status == 0 and report["run_info"]["form"] == form.lstrip("-")
        assert report["summary"]["validator"]["pass"] == 2 and report["summary"]["reader"]["pass"] == 1
        assert report["summary"]["writer"]["skip"] == 1      # the template offers no writer suite


def test_unsupported_tags_and_versions_from_the_handshake_are_skipped(tmp_path: Path) -> None:
    impl, _ = _adapter(tmp_path, "")
    script = Path(impl.split()[-1])
    script.write_text(script.read_text().replace('"archive_versions": [2, 3],',
                                                 '"archive_versions": [2], "unsupported": ["fixture:example"],'))
    got = _run(impl)
    for result in got.values():
        assert result.verdict == Verdict.SKIP                                           # type: ignore[attr-defined]
    assert "does not read archive version 3" in got["example-v3"].detail              # type: ignore[attr-defined]
    assert "does not handle fixture:example" in got["example-v2"].detail              # type: ignore[attr-defined]
