"""The committed corpus (corpus/cases): its manifest follows the schema, the sanity check
passes on it (coverage included) and fails on each kind of planted defect, and the kit
rebuilds it byte for byte.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from pcpconform.cli import main
from pcpconform.conform.manifest import SCHEMA, ManifestError, load_corpus, schema_errors
from pcpconform.corpusgen.build import write_corpus
from pcpconform.corpusgen.sanity import sanity

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "corpus"
SPEC = ROOT / "spec"
#: what the build reads besides the kit (copied with the symlinks resolved)
INPUTS = ("schema", "fixtures", "sources", "derive", "plans.json", "coverage-exceptions.json")
#: the cases the planted-defect tests copy: every form of case, kept small for speed
SOME = ("valid/example-v3", "valid/events-v2", "valid/mmv-base-v1", "invalid/desc-sem-v2",
        "invalid/desc-sem-v3", "invalid/label-vol-v3", "invalid/mmv-cluster-v1")


def _copy_inputs(out: Path) -> None:
    for name in INPUTS:
        src = CORPUS / name
        if src.is_dir():
            shutil.copytree(src, out / name)
        elif src.is_file():
            shutil.copy(src, out / name)


@pytest.fixture()
def copy(tmp_path: Path) -> Path:
    """A copy of a few cases of the corpus, to plant defects in."""
    out = tmp_path / "corpus"
    _copy_inputs(out)
    for rel in SOME:
        shutil.copytree(CORPUS / "cases" / rel, out / "cases" / rel)
    return out


def _edit(case_dir: Path, change: Any) -> None:
    path = case_dir / "case.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")


def _rewrite(case_dir: Path, name: str, content: bytes) -> None:
    """Replace one file of a case and record its new checksum, so only its content is wrong."""
    (case_dir / name).write_bytes(content)
    _edit(case_dir, lambda d: d["files"].update({name: hashlib.sha256(content).hexdigest()}))


def _problems(corpus: Path) -> list[str]:
    return sanity(corpus, SPEC, coverage=False).problems


def test_the_committed_corpus_is_clean() -> None:
    result = sanity(CORPUS)
    assert result.problems == []
    kinds = [c.kind for c in result.cases]
    assert kinds.count("valid") >= 30 and kinds.count("invalid") >= 244
    ids = {c.id for c in result.cases}
    # every compression suffix, libpcp-independent golden forms, MMV of each version
    assert {f"compress-{s}-v{v}" for s, v in (("xz", 3), ("lzma", 3), ("bz2", 3), ("bz", 2), ("gz", 2),
                                              ("z", 3), ("lzw", 2), ("zst", 3))} <= ids
    assert {"types-v2", "types-v3", "delta-indom-v3", "multi-volume-v3", "mmv-base-v3"} <= ids
    assert "FMT-DESC-3" in result.coverage.cited["invalid"]
    assert "FMT-INDOM-6" in result.coverage.cited["valid"]
    assert result.coverage.unexcused("valid") == [] and result.coverage.unexcused("invalid") == []


def test_every_case_follows_the_schema_as_jsonschema_reads_it() -> None:
    schema = json.loads((CORPUS / SCHEMA).read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    for case in load_corpus(CORPUS):
        assert list(validator.iter_errors(case.data)) == [], case.id
        assert schema_errors(schema, case.data) == [], case.id


def test_the_small_validator_agrees_on_broken_cases() -> None:
    schema = json.loads((CORPUS / SCHEMA).read_text(encoding="utf-8"))
    cases = {c.id: c.data for c in load_corpus(CORPUS)}
    good, mmv = cases["example-v3"], cases["mmv-base-v2"]
    interp = good["expected"]["interp"][0]
    derive = good["expected"]["derive"][0]
    broken: list[dict[str, Any]] = [
        {k: v for k, v in good.items() if k != "clauses"},
        {k: v for k, v in good.items() if k != "archive"},
        {**good, "kind": "maybe"},
        {**good, "archive_versions": [4]},
        {**good, "files": {"a.0": "0" * 63}},
        {**good, "tags": ["colour:red"]},
        {**good, "extra": 1},
        {**good, "expected": {**good["expected"], "verdict": "fine"}},
        {**good, "expected": {**good["expected"], "interp": [{**interp, "rules": "pcp-7"}]}},
        {**good, "expected": {**good["expected"], "interp": [{**interp, "schedule": {
            **interp["schedule"], "start": {"sec": 1}}}]}},
        {**good, "expected": {**good["expected"], "derive": [{k: v for k, v in derive.items() if k != "config"}]}},
        {k: v for k, v in mmv.items() if k != "file"},
        {**mmv, "mmv_versions": [4]},
    ]
    assert schema_errors(schema, good) == [] and schema_errors(schema, mmv) == []
    for data in broken:
        assert schema_errors(schema, data), data
        assert list(jsonschema.Draft202012Validator(schema).iter_errors(data)), data


def test_the_build_reproduces_the_committed_bytes(tmp_path: Path) -> None:
    out = tmp_path / "corpus"
    _copy_inputs(out)
    for case in (CORPUS / "cases" / "invalid").glob("fuzz-*"):   # promoted findings are inputs too
        shutil.copytree(case, out / "cases" / "invalid" / case.name)
    built = write_corpus(out)
    committed = {p.relative_to(CORPUS).as_posix(): p.read_bytes()
                 for p in (CORPUS / "cases").rglob("*") if p.is_file()}
    fix = "the kit no longer makes the committed corpus: run `pcpconform corpus build` and commit it"
    assert built.keys() == committed.keys(), fix
    assert [rel for rel in built if built[rel] != committed[rel]] == [], fix
    on_disk = {p.relative_to(out).as_posix() for p in (out / "cases").rglob("*") if p.is_file()}
    assert on_disk == set(built)


def test_size_stays_small() -> None:
    total = sum(p.stat().st_size for p in (CORPUS / "cases").rglob("*") if p.is_file())
    assert total < 4_000_000       # archive sets, salvage and churn cases: real shapes cost bytes


def test_the_copy_is_clean(copy: Path) -> None:
    assert _problems(copy) == []


def test_unknown_clause(copy: Path) -> None:
    _edit(copy / "cases/invalid/desc-sem-v2", lambda d: d["clauses"].append("FMT-NOPE-9"))
    assert _problems(copy) == ["invalid/desc-sem-v2: unknown clause FMT-NOPE-9"]


def test_missing_file(copy: Path) -> None:
    (copy / "cases/valid/example-v3/a.index").unlink()
    problems = _problems(copy)
    assert "valid/example-v3: missing file a.index" in problems
    assert all(p.startswith("valid/example-v3: ") for p in problems)


def test_unlisted_file(copy: Path) -> None:
    (copy / "cases/valid/events-v2/notes.txt").write_text("x", encoding="utf-8")
    assert _problems(copy) == ["valid/events-v2: notes.txt: not listed in files"]


def test_bad_checksum(copy: Path) -> None:
    def flip(data: dict[str, Any]) -> None:
        data["files"]["a.meta"] = "0" * 64
    _edit(copy / "cases/invalid/label-vol-v3", flip)
    assert _problems(copy) == ["invalid/label-vol-v3: a.meta: checksum does not match"]


def test_expected_code_no_longer_reported(copy: Path) -> None:
    def swap(data: dict[str, Any]) -> None:
        data["expected"]["error_codes"] = ["desc.type"]
    _edit(copy / "cases/invalid/label-vol-v3", swap)
    assert _problems(copy) == ["invalid/label-vol-v3: error codes differ: not reported: desc.type; "
                               "reported but not expected: label.vol"]


def test_expected_warning_no_longer_reported(copy: Path) -> None:
    _edit(copy / "cases/invalid/desc-sem-v3",
          lambda d: d["expected"]["warning_codes"].append("label.reserved"))
    assert _problems(copy) == ["invalid/desc-sem-v3: expected warning codes not reported: label.reserved"]


def test_expected_dump_differs(copy: Path) -> None:
    case = copy / "cases/valid/events-v2"
    _rewrite(case, "dump.jsonl", (case / "dump.jsonl").read_bytes().replace(b'"kind":"desc"', b'"kind":"desc" ', 1))
    problems = _problems(copy)
    assert "valid/events-v2: dump.jsonl differs from the dump the kit writes" in problems
    # the fixture still writes the archive whose dump it was
    assert "valid/events-v2: the archive written from fixture.yaml does not dump as dump.jsonl" in problems


def test_fixture_that_no_longer_writes_the_archive(copy: Path) -> None:
    case = copy / "cases/valid/events-v2"
    text = (case / "fixture.yaml").read_bytes().replace(b"fetch #1", b"fetch #2")
    _rewrite(case, "fixture.yaml", text)
    assert _problems(copy) == ["valid/events-v2: the archive written from fixture.yaml does not dump as dump.jsonl"]


def test_interp_result_differs(copy: Path) -> None:
    case = copy / "cases/valid/example-v3"
    name = "interp-fwd-45s-pcp-6.0.json"
    doc = json.loads((case / name).read_text(encoding="utf-8"))
    doc["samples"][0]["metrics"][1]["instances"][0]["value"]["value"] = "0x00000000"
    _rewrite(case, name, (json.dumps(doc, separators=(",", ":")) + "\n").encode())
    assert _problems(copy) == [f"valid/example-v3: interp fwd-45s (pcp-6.0): {name} differs from what "
                               "the oracle gives"]


def test_derive_expectations_differ(copy: Path) -> None:
    case = copy / "cases/valid/example-v3"

    def change(data: dict[str, Any]) -> None:
        data["expected"]["derive"][0]["deviations"] = []
        data["expected"]["derive"][3]["diagnostics"] = data["expected"]["derive"][3]["diagnostics"][1:]
    _edit(case, change)
    problems = _problems(copy)
    assert "valid/example-v3: derive example (pcp-6.0): deviations are [], the oracle names ['minmax-empty']" \
        in problems
    assert "valid/example-v3: derive errors (pcp-6.0): diagnostics differ from the oracle's" in problems


def test_derive_config_changed(copy: Path) -> None:
    case = copy / "cases/valid/example-v3"
    text = (case / "example.conf").read_bytes().replace(b"* 100", b"* 10")
    _rewrite(case, "example.conf", text)
    problems = _problems(copy)
    assert problems and all("derive example" in p and "differs from what the oracle gives" in p for p in problems)


def test_a_valid_case_may_warn_only_as_a_quirk(copy: Path) -> None:
    _edit(copy / "cases/valid/mmv-base-v1", lambda d: d["expected"].update(verdict="warnings"))
    problems = _problems(copy)
    assert "valid/mmv-base-v1: a valid case must expect the verdict clean (or warnings, tagged quirk)" in problems
    assert "valid/mmv-base-v1: verdict is clean, expected warnings" in problems


def test_mmv_case_codes_are_checked(copy: Path) -> None:
    _edit(copy / "cases/invalid/mmv-cluster-v1", lambda d: d["expected"].update(error_codes=["mmv.toc-type"]))
    assert _problems(copy) == ["invalid/mmv-cluster-v1: error codes differ: not reported: mmv.toc-type; "
                               "reported but not expected: mmv.cluster"]


def test_coverage_needs_a_reason_and_exceptions_must_excuse_something(copy: Path) -> None:
    problems = sanity(copy, SPEC).problems       # a few cases leave most clauses uncited
    assert "coverage: FMT-RESULT-2 (archive-format.md) is cited by no valid case and " \
           "coverage-exceptions.json gives no reason" not in problems     # example-v3 has a mark
    assert any(p.startswith("coverage: FMT-VOL-1 (archive-format.md) is cited by no valid case") for p in problems)
    path = copy / "coverage-exceptions.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["valid"]["FMT-RESULT-2"] = "planted"
    data["valid"]["FMT-VOL-1"] = "planted"
    data["invalid"]["NOPE-*"] = "planted"
    path.write_text(json.dumps(data), encoding="utf-8")
    problems = sanity(copy, SPEC).problems
    assert "coverage: coverage-exceptions.json: FMT-RESULT-2 is cited by a valid case now: remove its exception" \
        in problems
    assert "coverage: coverage-exceptions.json: invalid exception NOPE-* excuses nothing any more: remove it" \
        in problems
    assert not any(p.startswith("coverage: FMT-VOL-1 (archive-format.md) is cited by no valid") for p in problems)


def test_a_broken_manifest_is_one_line_and_exit_2(copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (copy / "cases/invalid/desc-sem-v2/case.json").write_text("{", encoding="utf-8")
    with pytest.raises(ManifestError):
        load_corpus(copy)
    assert main(["corpus", "check", str(copy), "--spec", str(SPEC)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "desc-sem-v2/case.json: not JSON" in err[0]


def test_a_schema_violation_is_one_line_and_exit_2(copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _edit(copy / "cases/valid/example-v3", lambda d: d.pop("origin"))
    assert main(["corpus", "check", str(copy), "--spec", str(SPEC)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "'origin' is required" in err[0]


def test_cli_exit_status_and_coverage_listing(copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["corpus", "check", str(copy), "--spec", str(SPEC), "--coverage"]) == 1
    out, err = capsys.readouterr()
    assert "not cited by a valid case: FMT-VOL-1 (archive-format.md): NO REASON" in out
    assert "not cited by an invalid case: INTERP-VAL-1 (interp.md): excused: " in out
    assert "7 cases (3 valid, 4 invalid): " in err and "archive-format.md: valid " in err
