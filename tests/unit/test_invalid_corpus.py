"""The invalid corpus (pcpconform.corpusgen.invalid) against the validator.

Every case must be reported with exactly its expected error codes (and at least its expected
warning and info codes); the untouched originals must check clean; every error code of the
rule registry must have a case or a stated reason why no archive can produce it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pcpconform.check.engine import check_archive
from pcpconform.check.rules import RULES, Severity
from pcpconform.corpusgen import invalid as corpus
from pcpconform.corpusgen.invalid.sets import SET_CASES

ROOT = Path(__file__).resolve().parents[2]
#: the corpus directory and its manifest
Built = tuple[Path, dict[str, Any]]


def _severity(code: str) -> Severity:
    return RULES[code].severity


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    out = tmp_path_factory.mktemp("invalid-corpus")
    manifest = corpus.build_corpus(out)
    return out, manifest


def _case_ids() -> list[str]:
    return [f"{c.name}-v{v}" for c in corpus.CASES for v in c.versions]


def test_manifest_is_written_and_complete(built: Built) -> None:
    out, manifest = built
    on_disk = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert on_disk == manifest
    names = [c["name"] for c in manifest["cases"]]
    assert names == _case_ids()
    assert len(set(names)) == len(names)
    for entry in manifest["cases"]:
        assert set(entry) >= {"name", "archive", "fault", "expect", "clause"}
        assert entry["expect"] and all(code in RULES for code in entry["expect"])
        assert entry["fault"].strip()
        assert any((out / entry["archive"]).parent.iterdir())
        assert entry["name"] == Path(entry["archive"]).parent.name


@pytest.mark.parametrize("name", _case_ids())
def test_case_reports_expected_codes(built: Built, name: str) -> None:
    out, manifest = built
    entry = next(c for c in manifest["cases"] if c["name"] == name)
    report = check_archive(out / entry["archive"], **entry.get("options", {}))
    got = report.codes()
    errors = {d.code for d in report.diagnostics if d.severity == Severity.ERROR}
    want_errors = {c for c in entry["expect"] if _severity(c) == Severity.ERROR}
    want_others = {c for c in entry["expect"] if _severity(c) != Severity.ERROR}
    detail = "\n".join(f"  {d.code} {d.location()}: {d.message}" for d in report.diagnostics[:40])
    assert errors == want_errors, f"{entry['fault']}\n{detail}"
    assert want_others <= got, f"{entry['fault']}\n{detail}"


def test_valid_originals_are_clean(built: Built) -> None:
    out, manifest = built
    assert len(manifest["valid"]) == 4
    for entry in manifest["valid"]:
        report = check_archive(out / entry["archive"])
        assert report.diagnostics == [], entry["name"]


def test_every_error_code_is_covered_or_explained(built: Built) -> None:
    _, manifest = built
    covered = {code for c in manifest["cases"] for code in c["expect"]}
    uncovered = {u["code"]: u["reason"] for u in manifest["uncovered"]}
    for code, reason in uncovered.items():
        assert code in RULES and reason.strip()
        assert code not in covered, f"{code} is covered and listed as uncovered"
    # MMV rules have their own corpus (pcpconform.corpusgen.mmv_faults), the rules across a
    # set's members theirs (pcpconform.corpusgen.invalid.sets): every error of those has a case
    set_errors = {code for code, r in RULES.items() if r.severity == Severity.ERROR and code.startswith("set.")}
    set_covered = {code for case in SET_CASES for code in case.errors}
    # without a set case (tests/unit/test_check_sets.py checks both): a set with no member,
    # and a name bound to two pmIDs (made by editing a member's names in place)
    set_explained = {"set.empty", "set.name-pmid"}
    assert set_errors - set_covered - set_explained == set()
    errors = {code for code, r in RULES.items() if r.severity == Severity.ERROR
              and not code.startswith(("mmv.", "set."))}
    missing = sorted(errors - covered - set(uncovered))
    assert not missing, f"error codes with no case and no reason: {missing}"


def test_readme_is_current(built: Built) -> None:
    _, manifest = built
    readme = ROOT / corpus.README
    assert readme.exists(), "run: python -m pcpconform.corpusgen.invalid --readme"
    assert readme.read_text(encoding="utf-8") == corpus.render_readme(manifest), (
        "corpus/invalid/README.md is stale: python -m pcpconform.corpusgen.invalid --readme")
