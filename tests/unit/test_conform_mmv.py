"""The MMV suites of the conformance runner (CONF-MMV-1, CONF-MMV-2): which units they hold,
the kit's adapter passing them, and broken MMV adapters getting the verdict and clause they
deserve (the kit's adapter with one fault planted, as in test_conform_broken.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from pcpconform.conform.manifest import load_corpus
from pcpconform.conform.protocol import capabilities_from
from pcpconform.conform.runner import Unit, run_conformance, select_units, skip_reason
from pcpconform.conform.verdicts import CaseResult, Verdict
from tests.broken_adapters import broken_adapter

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "corpus"
KIT = f"{sys.executable} -m pcpconform.conform.adapters.kit"



def _one(impl: str, suite: str, name: str) -> CaseResult:
    report = run_conformance(CORPUS, impl, suites=(suite,), globs=(name,))
    (result,) = [r for r in report.results if r.case == name]
    return result


def test_the_mmv_suites_take_the_mmv_cases_alone() -> None:
    cases = load_corpus(CORPUS)
    mmv = {c.id for c in cases if c.data.get("format") == "mmv"}
    readable = {c.id for c in cases if c.id in mmv and c.data["expected"]["verdict"] != "errors"}
    assert {u.name for u in select_units(cases, ["mmv-validator"])} == mmv
    assert {u.name for u in select_units(cases, ["mmv-reader"])} == readable
    assert {"mmv-base-v1", "mmv-base-v2", "mmv-base-v3"} <= readable < mmv
    archive_units = select_units(cases, ["validator", "reader"])
    assert not {u.name for u in archive_units} & mmv


def test_mmv_versions_and_suites_not_offered_are_skipped() -> None:
    cases = {c.id: c for c in load_corpus(CORPUS)}
    caps = capabilities_from({"name": "x", "version": "1", "suites": ["mmv-validator"], "archive_versions": [],
                              "mmv_versions": [1, 2]})
    assert skip_reason(Unit("mmv-validator", cases["mmv-base-v2"], "mmv-base-v2"), None, caps) is None
    assert "MMV version 3" in str(skip_reason(Unit("mmv-validator", cases["mmv-base-v3"], "mmv-base-v3"), None, caps))
    assert "mmv-reader" in str(skip_reason(Unit("mmv-reader", cases["mmv-base-v2"], "mmv-base-v2"), None, caps))
    assert capabilities_from({"name": "x", "version": "1", "suites": [], "archive_versions": []}).mmv_versions \
        == (1, 2, 3)


def test_the_kit_passes_the_mmv_suites_in_both_forms() -> None:
    for persistent in (True, False):
        report = run_conformance(CORPUS, KIT, suites=("mmv-validator", "mmv-reader"), jobs=4,
                                 persistent=persistent, globs=("mmv-base-*", "mmv-cluster-*", "mmv-value-*")
                                 if not persistent else ())
        assert report.ok, [r.as_json() for r in report.results if r.verdict != Verdict.PASS][:3]
        assert report.counts()["skip"] == 0 and set(report.suites) == {"mmv-validator", "mmv-reader"}


def test_a_reader_with_a_wrong_value(tmp_path: Path) -> None:
    perturb = r'''
import re
def perturb(suite, args, text):
    if suite != "mmv-reader":
        return text
    return re.sub(r'("value":\{"type":"u64","value":")(\d+)"', lambda m: m.group(1) + str(int(m.group(2)) + 1) + '"',
                  text, count=1)
'''
    result = _one(broken_adapter(tmp_path, perturb), "mmv-reader", "mmv-base-v2")
    assert result.verdict == Verdict.FAIL and result.path == "/value/value", result.as_json()
    assert int(result.got) == int(result.expected) + 1
    assert result.clauses[0] == "CONF-MMV-2" and all(c.startswith(("CONF-", "MMV-")) for c in result.clauses)
    assert not any("-CHK-" in c for c in result.clauses)


def test_a_reader_that_stops_early_and_one_that_fails(tmp_path: Path) -> None:
    short = broken_adapter(tmp_path, '''
def perturb(suite, args, text):
    return "".join(text.splitlines(keepends=True)[:-1]) if suite == "mmv-reader" else text
''')
    result = _one(short, "mmv-reader", "mmv-base-v1")
    assert result.verdict == Verdict.FAIL and "the dump ends after" in result.detail
    (tmp_path / "b").mkdir()
    failing = broken_adapter(tmp_path / "b", '''
def perturb(suite, args, text):
    return (text, 2) if suite == "mmv-reader" else text
''')
    assert _one(failing, "mmv-reader", "mmv-base-v3").verdict == Verdict.PROTOCOL_ERROR


def test_a_validator_accepting_everything_and_one_with_wrong_codes(tmp_path: Path) -> None:
    accepts = broken_adapter(tmp_path, '''
def perturb(suite, args, text):
    return (json.dumps({"valid": True}) + "\\n", 0) if suite == "mmv-validator" else text
''')
    result = _one(accepts, "mmv-validator", "mmv-cluster-v2")
    assert result.verdict == Verdict.FAIL and result.clauses == ["MMV-CHK-HDR-3"]
    assert "an invalid MMV file was accepted" in result.detail
    assert _one(accepts, "mmv-validator", "mmv-base-v2").verdict == Verdict.PASS
    (tmp_path / "b").mkdir()
    wrong = broken_adapter(tmp_path / "b", '''
def perturb(suite, args, text):
    if suite != "mmv-validator" or '"valid": true' in text:
        return text
    return json.dumps({"valid": False, "codes": ["mmv.magic"]}) + "\\n"
''')
    result = _one(wrong, "mmv-validator", "mmv-cluster-v1")
    assert result.verdict == Verdict.FAIL and "mmv.cluster" in result.detail and "mmv.magic" in result.detail
    assert "MMV-CHK-HDR-3" in result.clauses


def test_the_kit_adapter_answers_by_hand(tmp_path: Path) -> None:
    bad = subprocess.run([sys.executable, "-m", "pcpconform.conform.adapters.kit", "mmv-validator",
                          str(CORPUS / "cases/invalid/mmv-magic-v1/f.mmv")], capture_output=True, timeout=60)
    assert bad.returncode == 1 and json.loads(bad.stdout) == {"valid": False, "codes": ["mmv.magic"]}
    missing = subprocess.run([sys.executable, "-m", "pcpconform.conform.adapters.kit", "mmv-reader",
                              str(tmp_path / "none.mmv")], capture_output=True, timeout=60)
    assert missing.returncode == 2 and b"Traceback" not in missing.stderr
