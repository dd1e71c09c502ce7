"""The kit's own adapter passes the whole corpus through ``pcpconform conform`` in the
persistent form (spec/conformance.md); the templates of examples/adapters/ speak the
protocol (test_conform_persistent.py runs the Python template in both forms)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pcpconform.cli import main
from pcpconform.conform.runner import run_conformance
from pcpconform.oracles.derive.profiles import PROFILES
from pcpconform.oracles.interp.model import RULE_SETS

ROOT = Path(__file__).resolve().parents[2]
ADAPTER = ROOT / "examples" / "adapters" / "pcpconform_adapter.py"
IMPL = f"{sys.executable} {ADAPTER}"


def test_the_adapter_speaks_the_protocol_by_hand(tmp_path: Path) -> None:
    caps = subprocess.run([sys.executable, str(ADAPTER), "--capabilities"], capture_output=True, check=True)
    assert json.loads(caps.stdout)["suites"] == ["validator", "reader"]
    bad = subprocess.run([sys.executable, str(ADAPTER), "validator", str(tmp_path / "none")],
                         capture_output=True)
    assert bad.returncode == 1 and json.loads(bad.stdout)["valid"] is False


def test_the_kit_passes_the_whole_corpus_persistently_within_a_minute() -> None:
    report = run_conformance(ROOT / "corpus", f"{sys.executable} -m pcpconform.conform.adapters.kit", jobs=2)
    assert report.form == "persistent" and report.seconds < 60
    assert report.ok, [r.as_json() for r in report.results if r.verdict.value != "pass"][:3]
    assert set(report.suites) == {"validator", "reader", "writer", "interp", "derive", "mmv-validator", "mmv-reader",
                                  "mmv-writer"}
    assert report.counts()["skip"] == 0 and report.counts()["pass"] > 300


def test_the_kit_speaks_the_persistent_form_by_hand(tmp_path: Path) -> None:
    requests = [{"cmd": "start", "protocol": 1},
                {"cmd": "run", "seq": 1, "case": "x", "suite": "validator", "dir": str(tmp_path),
                 "args": [str(tmp_path / "none")], "options": {}},
                {"cmd": "run", "seq": 2, "case": "x", "suite": "nonsense", "dir": str(tmp_path), "args": []},
                {"cmd": "run", "seq": 3, "case": "x", "suite": "interp", "dir": str(tmp_path),
                 "args": [str(tmp_path / "a"), str(tmp_path / "no-request.json")]},
                {"cmd": "stop"}]
    done = subprocess.run([sys.executable, "-m", "pcpconform.conform.adapters.kit", "--persistent"],
                          input="".join(json.dumps(r) + "\n" for r in requests), capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    start, first, second, third = (json.loads(line) for line in done.stdout.splitlines())
    assert start["protocol"] == 1 and start["persistent"] is True and "derive" in start["suites"]
    assert start["rules"] == list(RULE_SETS) and start["profiles"] == list(PROFILES)
    assert first["seq"] == 1 and first["exit"] == 1 and json.loads(first["stdout"])["valid"] is False
    assert second == {"seq": 2, "exit": 2, "stdout": "", "stderr": "no such request: nonsense with 0 arguments"}
    assert third["exit"] == 2 and third["stderr"].startswith("FileNotFoundError")    # the process lives on


@pytest.mark.skipif(shutil.which("pmlogcheck") is None, reason="PCP's pmlogcheck is not installed")
def test_the_shell_template_grades_pmlogcheck(capsys: pytest.CaptureFixture[str]) -> None:
    status = main(["conform", "--impl", f"sh {ROOT / 'examples' / 'adapters' / 'validator.sh'}",
                   "--corpus", str(ROOT / "corpus"), "--format", "json", "--cases", "example-v2",
                   "--cases", "desc-conflict-v2", "--cases", "file-decompress-limit-v2"])
    report = json.loads(capsys.readouterr().out)
    assert report["implementation"]["name"] == "pmlogcheck" and report["run_info"]["form"] == "one-shot"
    got = {(r["suite"], r["case"]): r["verdict"] for r in report["results"]}
    assert got[("validator", "example-v2")] == "pass" and got[("validator", "desc-conflict-v2")] == "pass"
    assert got[("validator", "file-decompress-limit-v2")] == "skip"     # no decompress_limit option
    assert got[("reader", "example-v2")] == "skip" and status == 0
