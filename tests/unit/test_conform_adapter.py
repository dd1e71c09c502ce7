"""The kit's own adapter passes the corpus through ``pcpconform conform`` (spec/conformance.md).

Every reader case runs; the validator suite runs on a subset (the valid cases and the
``desc-*`` and ``file-*`` faults, the ones needing validator options among them) to keep
the test to a few seconds: the whole corpus takes about 15 s on two cores.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from pcpconform.cli import main

ROOT = Path(__file__).resolve().parents[2]
ADAPTER = ROOT / "examples" / "adapters" / "pcpconform_adapter.py"
IMPL = f"{sys.executable} {ADAPTER}"
SUBSET = ["--cases", "example-*", "--cases", "events-*", "--cases", "interp-seed-*",
          "--cases", "desc-*", "--cases", "file-*"]


def test_the_kit_adapter_passes_every_reader_and_a_validator_subset(capsys: pytest.CaptureFixture[str]) -> None:
    status = main(["conform", "--impl", IMPL, "--corpus", str(ROOT / "corpus"), "--format", "json",
                   "-j", "4", *SUBSET])
    report = json.loads(capsys.readouterr().out)
    assert status == 0, [r for r in report["results"] if r["verdict"] != "pass"]
    assert report["ok"] and report["implementation"]["name"] == "pcpconform"
    reader, validator = report["summary"]["reader"], report["summary"]["validator"]
    assert reader["pass"] == 6 and sum(reader.values()) == 6
    assert validator["pass"] == sum(validator.values()) > 20
    ids = {r["case"] for r in report["results"]}
    assert {"file-decompress-limit-v2", "file-decompress-limit-v3"} <= ids   # options honoured


def test_the_adapter_speaks_the_protocol_by_hand(tmp_path: Path) -> None:
    import subprocess
    caps = subprocess.run([sys.executable, str(ADAPTER), "--capabilities"], capture_output=True, check=True)
    assert json.loads(caps.stdout)["suites"] == ["validator", "reader"]
    bad = subprocess.run([sys.executable, str(ADAPTER), "validator", str(tmp_path / "none")],
                         capture_output=True)
    assert bad.returncode == 1 and json.loads(bad.stdout)["valid"] is False
