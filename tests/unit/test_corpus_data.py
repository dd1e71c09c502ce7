"""The committed corpus (corpus/cases): its manifest follows the schema, the sanity check
passes on it and fails on each kind of planted defect, and the kit rebuilds it byte for byte.
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
from pcpconform.conform.build import corpus_files
from pcpconform.conform.manifest import SCHEMA, ManifestError, load_corpus, schema_errors
from pcpconform.conform.sanity import sanity

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "corpus"
SPEC = ROOT / "spec"


@pytest.fixture()
def copy(tmp_path: Path) -> Path:
    """A copy of the corpus (schema and cases) to plant defects in."""
    out = tmp_path / "corpus"
    shutil.copytree(CORPUS / "schema", out / "schema")
    shutil.copytree(CORPUS / "cases", out / "cases")
    return out


def _edit(case_dir: Path, change: Any) -> None:
    path = case_dir / "case.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")


def _problems(corpus: Path) -> list[str]:
    return sanity(corpus, SPEC).problems


def test_the_committed_corpus_is_clean() -> None:
    result = sanity(CORPUS)
    assert result.problems == []
    kinds = [c.kind for c in result.cases]
    assert kinds.count("valid") == 6 and kinds.count("invalid") == 244
    assert any(line.startswith("archive-format.md: ") for line in result.coverage())
    assert "FMT-DESC-3" not in result.uncovered().get("archive-format.md", [])


def test_every_case_follows_the_schema_as_jsonschema_reads_it() -> None:
    schema = json.loads((CORPUS / SCHEMA).read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    for case in load_corpus(CORPUS):
        assert list(validator.iter_errors(case.data)) == [], case.id
        assert schema_errors(schema, case.data) == [], case.id


def test_the_small_validator_agrees_on_broken_cases() -> None:
    schema = json.loads((CORPUS / SCHEMA).read_text(encoding="utf-8"))
    good = load_corpus(CORPUS)[0].data
    broken: list[dict[str, Any]] = [
        {k: v for k, v in good.items() if k != "clauses"},
        {**good, "kind": "maybe"},
        {**good, "archive_versions": [4]},
        {**good, "files": {"a.0": "0" * 63}},
        {**good, "tags": ["colour:red"]},
        {**good, "extra": 1},
        {**good, "expected": {**good["expected"], "verdict": "fine"}},
    ]
    for data in broken:
        assert schema_errors(schema, data), data
        assert list(jsonschema.Draft202012Validator(schema).iter_errors(data)), data


def test_the_build_reproduces_the_committed_bytes() -> None:
    built = corpus_files(CORPUS)
    committed = {p.relative_to(CORPUS).as_posix(): p.read_bytes()
                 for p in (CORPUS / "cases").rglob("*") if p.is_file()}
    fix = "the kit no longer makes the committed corpus: run `pcpconform corpus build` and commit it"
    assert built.keys() == committed.keys(), fix
    assert [rel for rel in built if built[rel] != committed[rel]] == [], fix


def test_size_stays_small() -> None:
    total = sum(p.stat().st_size for p in (CORPUS / "cases").rglob("*") if p.is_file())
    assert total < 3_000_000


def test_unknown_clause(copy: Path) -> None:
    _edit(copy / "cases/invalid/desc-sem-v2", lambda d: d["clauses"].append("FMT-NOPE-9"))
    assert _problems(copy) == ["invalid/desc-sem-v2: unknown clause FMT-NOPE-9"]


def test_missing_file(copy: Path) -> None:
    (copy / "cases/valid/example-v3/a.index").unlink()
    problems = _problems(copy)
    assert "valid/example-v3: missing file a.index" in problems
    assert all(p.startswith("valid/example-v3: ") for p in problems)


def test_unlisted_file(copy: Path) -> None:
    (copy / "cases/valid/example-v2/notes.txt").write_text("x", encoding="utf-8")
    assert _problems(copy) == ["valid/example-v2: notes.txt: not listed in files"]


def test_bad_checksum(copy: Path) -> None:
    def flip(data: dict[str, Any]) -> None:
        data["files"]["a.meta"] = "0" * 64
    _edit(copy / "cases/invalid/label-vol-v3", flip)
    assert _problems(copy) == ["invalid/label-vol-v3: a.meta: checksum does not match"]


def test_expected_code_no_longer_reported(copy: Path) -> None:
    def swap(data: dict[str, Any]) -> None:
        data["expected"]["error_codes"] = ["desc.type"]
    _edit(copy / "cases/invalid/desc-sem-v2", swap)
    assert _problems(copy) == ["invalid/desc-sem-v2: error codes differ: not reported: desc.type; "
                               "reported but not expected: desc.sem"]


def test_expected_warning_no_longer_reported(copy: Path) -> None:
    _edit(copy / "cases/invalid/desc-sem-v3",
          lambda d: d["expected"]["warning_codes"].append("label.reserved"))
    assert _problems(copy) == ["invalid/desc-sem-v3: expected warning codes not reported: label.reserved"]


def test_expected_dump_differs(copy: Path) -> None:
    dump = copy / "cases/valid/events-v2/dump.jsonl"
    text = dump.read_bytes().replace(b'"kind":"desc"', b'"kind":"desc" ', 1)
    dump.write_bytes(text)
    _edit(copy / "cases/valid/events-v2",
          lambda d: d["files"].update({"dump.jsonl": hashlib.sha256(text).hexdigest()}))
    assert _problems(copy) == ["valid/events-v2: dump.jsonl differs from the dump the kit writes"]


def test_reproduce_finds_changed_bytes(copy: Path) -> None:
    path = copy / "cases/valid/example-v2/case.json"
    path.write_text(path.read_text(encoding="utf-8").replace('"title": "the', '"title": "The'),
                    encoding="utf-8")
    assert sanity(copy, SPEC).problems == []
    assert sanity(copy, SPEC, reproduce=True).problems == \
        ["cases/valid/example-v2/case.json: the build makes different bytes"]


def test_a_broken_manifest_is_one_line_and_exit_2(copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (copy / "cases/invalid/desc-sem-v2/case.json").write_text("{", encoding="utf-8")
    with pytest.raises(ManifestError):
        load_corpus(copy)
    assert main(["corpus", "check", str(copy), "--spec", str(SPEC)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "desc-sem-v2/case.json: not JSON" in err[0]


def test_a_schema_violation_is_one_line_and_exit_2(copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _edit(copy / "cases/valid/example-v2", lambda d: d.pop("origin"))
    assert main(["corpus", "check", str(copy), "--spec", str(SPEC)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "'origin' is required" in err[0]


def test_cli_exit_status(copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["corpus", "check", str(copy), "--spec", str(SPEC), "--coverage"]) == 0
    out, err = capsys.readouterr()
    assert "not cited, archive-format.md:" in out and "250 cases (6 valid, 244 invalid): clean" in err
    _edit(copy / "cases/invalid/desc-sem-v2", lambda d: d["clauses"].append("FMT-NOPE-9"))
    assert main(["corpus", "check", str(copy), "--spec", str(SPEC)]) == 1
    assert capsys.readouterr().out == "invalid/desc-sem-v2: unknown clause FMT-NOPE-9\n"


def test_build_writes_what_check_accepts(tmp_path: Path) -> None:
    out = tmp_path / "corpus"
    shutil.copytree(CORPUS / "schema", out / "schema")
    assert main(["corpus", "build", str(out)]) == 0
    assert sanity(out, SPEC, reproduce=True).problems == []
