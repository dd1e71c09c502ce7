"""Deliberately broken implementations get the verdict and the clause they deserve, in every
suite (spec/conformance.md). Each adapter is the kit's own (``pcpconform.conform.adapters.
kit``, persistent form) with one fault planted in its answers; the kit unbroken passes every
unit (test_conform_adapter.py), so each failure is the fault's."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pcpconform.conform.manifest import load_corpus
from pcpconform.conform.runner import Unit, run_conformance, select_units
from pcpconform.conform.verdicts import CaseResult, Verdict
from tests.broken_adapters import broken_adapter

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "corpus"



def _units(suite: str) -> list[Unit]:
    return select_units(load_corpus(CORPUS), [suite])


def _one(impl: str, suite: str, name: str) -> CaseResult:
    report = run_conformance(CORPUS, impl, suites=(suite,), globs=(name,))
    assert report.form == "persistent"
    (result,) = [r for r in report.results if r.case == name]
    return result


def _interp_unit(rules: str, predicate: Any) -> Unit:
    for unit in _units("interp"):
        assert unit.entry is not None
        if unit.entry["rules"] == rules and predicate(unit):
            return unit
    pytest.skip(f"the corpus has no such interp unit under {rules}")   # pragma: no cover


def test_a_reader_flipping_a_bit_of_a_double(tmp_path: Path) -> None:
    perturb = r'''
import re
def perturb(suite, args, text):
    flip = lambda m: m.group(1) + format(int(m.group(2), 16) ^ 1, "016x") + '"'
    return re.sub(r'("type":"double","value":"0x)([0-9a-f]{16})"', flip, text, count=1) if suite == "reader" else text
'''
    result = _one(broken_adapter(tmp_path, perturb), "reader", "example-v2")
    assert result.verdict == Verdict.FAIL and result.path is not None and result.path.endswith("/value")
    assert int(result.expected, 16) ^ int(result.got, 16) == 1
    assert result.clauses and all(c.startswith("DUMP-") for c in result.clauses)


def test_interp_instances_out_of_order(tmp_path: Path) -> None:
    def several(unit: Unit) -> bool:
        doc = json.loads((unit.case.path / unit.entry["result"]).read_text())     # type: ignore[index]
        return any(len(m["instances"]) > 1 for s in doc["samples"] for m in s["metrics"])
    unit = _interp_unit("pcp-6.3", several)
    perturb = '''
def perturb(suite, args, text):
    if suite != "interp":
        return text
    doc = json.loads(text)
    for s in doc["samples"]:
        for m in s["metrics"]:
            m["instances"].reverse()
    return json.dumps(doc)
'''
    result = _one(broken_adapter(tmp_path, perturb), "interp", unit.name)
    assert result.verdict == Verdict.FAIL and "instances out of order" in result.detail
    assert result.clauses == ["INTERP-FMT-1"] and result.path is not None and result.path.endswith("/instances")
    assert result.detail.startswith("fetch 0 (")


def test_interp_the_old_rules_answered_under_the_new(tmp_path: Path) -> None:
    def samples(unit: Unit, result: str) -> object:
        return json.loads((unit.case.path / result).read_text())["samples"]

    def differs(unit: Unit) -> bool:
        assert unit.entry is not None
        entries = unit.case.data["expected"]["interp"]
        old = [e for e in entries if e["rules"] == "pcp-6.0" and e["schedule"] == unit.entry["schedule"]]
        return bool(old) and samples(unit, old[0]["result"]) != samples(unit, unit.entry["result"])
    unit = _interp_unit("pcp-6.3", differs)
    perturb = '''
def perturb(suite, args, text):
    if suite != "interp":
        return text
    request = json.load(open(args[1]))
    if request["rules"] != "pcp-6.3":
        return text
    request["rules"] = "pcp-6.0"
    json.dump(request, open(args[1] + ".old", "w"))     # its input must stay as it was
    buf = io.StringIO()
    real(suite, [args[0], args[1] + ".old"], buf, {})
    doc = json.loads(buf.getvalue())
    doc["rules"] = "pcp-6.3"
    return json.dumps(doc)
'''
    result = _one(broken_adapter(tmp_path, perturb), "interp", unit.name)
    assert result.verdict == Verdict.FAIL and "the answer of the pcp-6.0 rules" in result.detail
    assert result.clauses[0] == "INTERP-VER-1" and set(result.clauses[1:]) <= {"INTERP-VAL-4", "INTERP-VAL-5"}
    assert result.clauses[1:], result.clauses


def test_a_derived_metric_with_the_wrong_unit_scale(tmp_path: Path) -> None:
    perturb = '''
def perturb(suite, args, text):
    if suite != "derive":
        return text
    doc = json.loads(text)
    for d in (doc["result"] or {}).get("derived", []):
        if "Kbyte" in d["units"]:
            d["units"] = d["units"].replace("Kbyte", "Mbyte")
            break
    return json.dumps(doc)
'''
    units = [u for u in _units("derive") if "Kbyte" in (u.case.path / str((u.entry or {}).get("result"))).read_text()]
    if not units:
        pytest.skip("the corpus has no derive unit with a Kbyte descriptor")   # pragma: no cover
    result = _one(broken_adapter(tmp_path, perturb), "derive", units[0].name)
    assert result.verdict == Verdict.FAIL and result.clauses == ["DERIVE-BIND-9"]
    assert result.path is not None and result.path.endswith("/units") and "Mbyte" in str(result.got)


def test_a_validator_accepting_everything(tmp_path: Path) -> None:
    perturb = '''
def perturb(suite, args, text):
    return (json.dumps({"valid": True}) + "\\n", 0) if suite == "validator" else text
'''
    report = run_conformance(CORPUS, broken_adapter(tmp_path, perturb), suites=("validator",),
                             globs=("example-v2", "desc-conflict-v2"))
    got = {r.case: r for r in report.results}
    assert got["example-v2"].verdict == Verdict.PASS
    failed = got["desc-conflict-v2"]
    assert failed.verdict == Verdict.FAIL and "accepted" in failed.detail and failed.clauses == ["FMT-DESC-6"]
    assert report.exit_status == 1


def test_a_writer_writing_the_other_archive_version(tmp_path: Path) -> None:
    perturb = '''
def perturb(suite, args, text):
    if suite == "writer":
        real(suite, [args[0], args[1], "3" if args[2] == "2" else "2"], io.StringIO(), {})
    return text
'''
    bad = _one(broken_adapter(tmp_path, perturb), "writer", "example-v3")
    assert bad.verdict == Verdict.FAIL and "record label" in bad.detail and bad.clauses == ["GEN-LABEL"]


def test_a_writer_writing_nothing(tmp_path: Path) -> None:
    perturb = '''
import glob, os
def perturb(suite, args, text):
    if suite == "writer":
        for f in glob.glob(args[1] + ".*"):
            os.remove(f)
    return text
'''
    bad = _one(broken_adapter(tmp_path, perturb), "writer", "example-v2")
    assert bad.verdict == Verdict.FAIL and "no archive written" in bad.detail and bad.clauses == ["GEN-FILES"]


def test_a_writer_gets_its_fixture_alone(tmp_path: Path) -> None:
    seen = tmp_path / "seen.json"
    perturb = f'''
import os
def perturb(suite, args, text):
    if suite == "writer":
        with open({str(seen)!r}, "w") as f:
            given = os.listdir(os.path.dirname(args[0]))   # what it was given, besides what it wrote
            json.dump(sorted(n for n in given if not n.startswith(os.path.basename(args[1]) + ".")), f)
    return text
'''
    ok = _one(broken_adapter(tmp_path, perturb), "writer", "example-v2")
    fixture = next(u.case.data["fixture"] for u in _units("writer") if u.name == "example-v2")
    assert ok.verdict == Verdict.PASS and json.loads(seen.read_text()) == [fixture]
