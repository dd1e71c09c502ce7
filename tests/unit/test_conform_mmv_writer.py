"""The mmv-writer suite (CONF-MMVW-*): its units, the kit passing it, writers that use the
freedoms the format leaves them passing it, and broken writers getting the verdict and
clause they deserve (the kit's adapter with the file it wrote spoilt afterwards)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from pcpconform.conform.manifest import load_corpus
from pcpconform.conform.mmv_writer import clause_of, export_document
from pcpconform.conform.protocol import capabilities_from
from pcpconform.conform.runner import Unit, run_conformance, select_units, skip_reason
from pcpconform.conform.verdicts import CaseResult, Verdict
from tests.broken_adapters import broken_adapter

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "corpus"
KIT = f"{sys.executable} -m pcpconform.conform.adapters.kit"
#: the perturbations below rewrite the file the kit wrote: read, edit, build again
_EDIT = '''
import dataclasses
from pcpconform.mmv import read_mmv, build_mmv
from pcpconform.mmv import model as mm
def perturb(suite, args, text):
    if suite == "mmv-writer":
        path = args[1]
        edit(path)
    return text
def rebuild(path, mmv):
    open(path, "wb").write(build_mmv(mmv))
'''


def _one(impl: str, name: str) -> CaseResult:
    report = run_conformance(CORPUS, impl, suites=("mmv-writer",), globs=(name,))
    (result,) = report.results
    return result


def _broken(tmp_path: Path, edit: str) -> str:
    return broken_adapter(tmp_path, _EDIT + edit)


def test_the_units_are_the_cases_with_an_mmv_fixture() -> None:
    cases = load_corpus(CORPUS)
    units = {u.name for u in select_units(cases, ["mmv-writer"])}
    assert units == {"mmv-shop", "mmv-types", "mmv-long-names", "mmv-sentinel", "mmv-noprefix"}
    for case in cases:
        if case.id in units:
            export = json.loads((case.path / "export.json").read_text())
            assert export == export_document(case.path / str(case.data["file"]))


def test_versions_a_writer_cannot_write_are_skipped() -> None:
    cases = {c.id: c for c in load_corpus(CORPUS)}
    v2_only = capabilities_from({"name": "x", "version": "1", "suites": ["mmv-writer"],
                                 "archive_versions": [], "mmv_versions": [2]})
    assert skip_reason(Unit("mmv-writer", cases["mmv-types"], "mmv-types"), None, v2_only) is None  # v1 content
    assert "MMV version 3" in str(skip_reason(Unit("mmv-writer", cases["mmv-shop"], "mmv-shop"), None, v2_only))


def test_the_kit_passes_in_both_forms() -> None:
    for persistent in (True, False):
        report = run_conformance(CORPUS, KIT, suites=("mmv-writer",), persistent=persistent)
        assert report.ok and report.counts()["pass"] == 5, [r.as_json() for r in report.results]


def test_the_freedoms_of_a_writer_pass(tmp_path: Path) -> None:
    """Another version, another order of entries, another generation and process id."""
    impl = _broken(tmp_path, '''
def edit(path):
    m = read_mmv(path)
    m = dataclasses.replace(m, version=3, g1=12345, g2=12345, process=1,
                            metrics=tuple(reversed(m.metrics)), indoms=tuple(reversed(m.indoms)))
    rebuild(path, m)
''')
    report = run_conformance(CORPUS, impl, suites=("mmv-writer",), globs=("mmv-types", "mmv-shop"))
    assert report.ok, [r.as_json() for r in report.results]


def test_a_wrong_value(tmp_path: Path) -> None:
    impl = _broken(tmp_path, '''
def edit(path):
    m = read_mmv(path)
    first = m.metrics[0]
    v = first.values[0]
    value = mm.Value(v.instance, bytes([v.atom[0] ^ 1]) + v.atom[1:], v.extra, v.string)
    rebuild(path, dataclasses.replace(m, metrics=(dataclasses.replace(first, values=(value, *first.values[1:])),
                                                  *m.metrics[1:])))
''')
    result = _one(impl, "mmv-types")
    assert result.verdict == Verdict.FAIL and result.clauses == ["CONF-MMVW-2", "MMV-IMPL-3"], result.as_json()
    assert "/values/" in str(result.path) and "(metric mmv.types." in result.detail


def test_wrong_units(tmp_path: Path) -> None:
    impl = _broken(tmp_path, '''
def edit(path):
    m = read_mmv(path)
    metrics = tuple(dataclasses.replace(x, dimension=0x10000000) if x.name == "disk.read" else x for x in m.metrics)
    rebuild(path, dataclasses.replace(m, metrics=metrics))
''')
    result = _one(impl, "mmv-types")
    assert result.verdict == Verdict.FAIL and result.clauses == ["CONF-MMVW-2", "MMV-IMPL-2"]
    assert str(result.path).endswith("/units") and result.got == "0x10000000"


def test_a_missing_instance(tmp_path: Path) -> None:
    impl = _broken(tmp_path, '''
def edit(path):
    m = read_mmv(path)
    d = m.indoms[0]
    gone = d.instances[-1].internal
    metrics = tuple(dataclasses.replace(x, values=tuple(v for v in x.values if v.instance != gone))
                    for x in m.metrics)
    rebuild(path, dataclasses.replace(m, indoms=(dataclasses.replace(d, instances=d.instances[:-1]),),
                                      metrics=metrics))
''')
    result = _one(impl, "mmv-types")
    assert result.verdict == Verdict.FAIL and result.clauses == ["CONF-MMVW-2", "MMV-IMPL-1"]
    assert str(result.path).startswith("/indoms/0/instances")


def test_colliding_items(tmp_path: Path) -> None:
    impl = _broken(tmp_path, '''
def edit(path):
    m = read_mmv(path)
    metrics = (m.metrics[0], dataclasses.replace(m.metrics[1], item=m.metrics[0].item), *m.metrics[2:])
    rebuild(path, dataclasses.replace(m, metrics=metrics))
''')
    result = _one(impl, "mmv-types")
    assert result.verdict == Verdict.FAIL and result.clauses == ["MMV-CHK-METRIC-2"]
    assert result.got == {"error_codes": ["mmv.metric-item-duplicate"]}


def test_a_half_written_file(tmp_path: Path) -> None:
    impl = _broken(tmp_path, '''
def edit(path):
    data = bytearray(open(path, "rb").read())
    data[16:24] = bytes(8)            # g2 0: the writer has not finished
    open(path, "wb").write(bytes(data))
''')
    result = _one(impl, "mmv-shop")
    assert result.verdict == Verdict.FAIL and result.clauses == ["MMV-CHK-HDR-2"]
    assert "mmv.rewriting" in result.detail


def test_no_file_and_a_failing_writer(tmp_path: Path) -> None:
    impl = _broken(tmp_path, '''
import os
def edit(path):
    os.unlink(path)
''')
    result = _one(impl, "mmv-noprefix")
    assert result.verdict == Verdict.FAIL and result.clauses == ["CONF-MMVW-1", "GEN-MMV-WRITE"]
    (tmp_path / "b").mkdir()
    failing = broken_adapter(tmp_path / "b", '''
def perturb(suite, args, text):
    return (text, 2) if suite == "mmv-writer" else text
''')
    assert _one(failing, "mmv-noprefix").verdict == Verdict.PROTOCOL_ERROR


def test_clauses_by_path() -> None:
    assert clause_of("/cluster") == "MMV-ID-1" and clause_of("/flags/0") == "MMV-HDR-1"
    assert clause_of("/metrics/3/help") == "MMV-IMPL-HELP" and clause_of("/metrics/0/pmid") == "MMV-ID-1"
    assert clause_of("/metrics/1/sem") == "MMV-IMPL-2" and clause_of("/labels/2") == "GEN-MMV-LABEL"


def test_the_ci_recipes(tmp_path: Path) -> None:
    """examples/ci: the shell recipe runs the suite (here with the checkout's pcpconform, as
    PCPCONFORM lets a CI image with pcpconform installed do) and leaves a JUnit report; the
    composite action runs the same command."""
    import shutil
    import subprocess
    import xml.etree.ElementTree as ET

    import yaml

    script = ROOT / "examples" / "ci" / "mmv-writer.sh"
    pcpconform = shutil.which("pcpconform", path=str(Path(sys.executable).parent))
    assert pcpconform is not None
    env = {"PATH": "/usr/bin:/bin", "PCPCONFORM": pcpconform}
    ok = subprocess.run(["sh", str(script), KIT, "out.xml"], cwd=tmp_path, env=env, capture_output=True,
                        text=True, timeout=300)
    assert ok.returncode == 0, ok.stderr
    suite = ET.parse(tmp_path / "out.xml").getroot()
    assert "mmv-writer" in ET.tostring(suite, encoding="unicode") and "CONFORMS" in ok.stdout
    broken = _broken(tmp_path, '''
def edit(path):
    open(path, "wb").write(b"MMV")
''')
    bad = subprocess.run(["sh", str(script), broken], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=300)
    assert bad.returncode == 1 and (tmp_path / "pcpconform-mmv-writer.xml").is_file()
    action = yaml.safe_load((ROOT / "examples" / "ci" / "pcpconform-mmv-writer" / "action.yml").read_text())
    assert action["runs"]["using"] == "composite" and "adapter" in action["inputs"]
    run = "\n".join(step.get("run", "") for step in action["runs"]["steps"])
    assert 'pcpconform conform --impl "$ADAPTER" --suite mmv-writer --format junit -o "$JUNIT"' in run
