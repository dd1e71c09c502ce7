"""Making the corpus data: the valid cases (``golden``: the fixtures of corpus/fixtures
written by the kit, compressed variants, the archives of other writers under
corpus/sources, with the interpolation and derived-metric expectations of
corpus/plans.json), the one-fault archives of ``pcpconform.corpusgen.invalid`` and, when the
MMV checker provides them, its one-fault MMV files.

``corpus_files`` computes every file of ``cases/`` in memory (path relative to the corpus
directory -> bytes), so that ``write_corpus`` can write them and the sanity check can
compare them with what is committed. A case keeps the ``origin`` of its ``case.json`` for
as long as its files do not change: the origin says which writer made those bytes.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

from pcpconform.check.rules import RULES, Severity
from pcpconform.conform.casefile import BASE, DUMP, Files, Made, case_data, case_json, dir_files, dump_bytes, finish
from pcpconform.conform.manifest import CASE_FILE, KINDS
from pcpconform.conform.mmv_writer import mmv_writer_cases
from pcpconform.corpusgen.golden import compressed_cases, fixture_cases, mmv_cases, quirk_cases, source_cases
from pcpconform.corpusgen.invalid import CASES, build_corpus
from pcpconform.corpusgen.plans import attach_expectations
from pcpconform.corpusgen.salvage_cases import SALVAGED, attach_salvage, salvage_only_cases
from pcpconform.corpusgen.setcases import set_cases
from pcpconform.version import __version__

__all__ = ["DUMP", "BASE", "corpus_files", "write_corpus", "dump_bytes", "case_json"]


def _clauses_of(codes: list[str]) -> list[str]:
    errors = [c for c in codes if RULES[c].severity == Severity.ERROR]
    ordered = errors + [c for c in codes if c not in errors]
    return list(dict.fromkeys(RULES[c].clause for c in ordered))


def _invalid(tmp: Path) -> list[Made]:
    manifest = build_corpus(tmp / "invalid")
    stems = {f"{c.name}-v{v}": c.name for c in CASES for v in c.versions}
    out = []
    for entry in manifest["cases"]:
        codes: list[str] = entry["expect"]
        errors = [c for c in codes if RULES[c].severity == Severity.ERROR]
        others = [c for c in codes if c not in errors]
        verdict = "errors" if errors else "warnings"
        files = dir_files((tmp / "invalid" / entry["archive"]).parent)
        stem = stems[entry["name"]]
        tags = [f"area:{codes[0].split('.')[0]}", f"fault:{stem}",
                f"fixture:{Path(entry['source']).stem}"]
        if entry.get("options"):
            tags.append("options")
        origin = {"writer": "pcpconform.corpusgen.invalid", "version": __version__,
                  "source": f"pcpconform/fixtures/bundled/{entry['source']}"}
        expected = {"verdict": verdict, "error_codes": errors, "warning_codes": others, "dump": None}
        data = case_data(entry["name"], "invalid", entry["fault"], tags, _clauses_of(codes),
                         entry["version"], origin, expected, options=entry.get("options"))
        out.append(Made(data, files))
    return out


def _previous_origin(corpus: Path, kind: str, data: dict[str, Any]) -> dict[str, str] | None:
    """The committed case's origin, if its files are the ones just made."""
    try:
        old = json.loads((corpus / "cases" / kind / data["id"] / CASE_FILE).read_text("utf-8"))
    except (OSError, ValueError):
        return None
    if isinstance(old, dict) and old.get("files") == data["files"] and isinstance(old.get("origin"), dict):
        return dict(old["origin"])
    return None


def _mmv(tmp: Path) -> list[Made]:
    """The MMV checker's one-fault MMV cases."""
    from pcpconform.corpusgen.mmv_faults import build_mmv_cases
    out = []
    for path in build_mmv_cases(tmp / "mmv"):
        data = json.loads((Path(path) / CASE_FILE).read_text(encoding="utf-8"))
        files = {name: content for name, content in dir_files(Path(path)).items() if name != CASE_FILE}
        out.append(Made(data, files))
    return out


def _materialise(made: list[Made], tmp: Path) -> dict[str, Path]:
    """Each archive case's files in a directory of its own: case id -> that directory."""
    where = {}
    for case in made:
        if case.data.get("format", "archive") != "archive":
            continue
        d = tmp / "made" / case.id
        d.mkdir(parents=True)
        for name, content in case.files.items():
            (d / name).write_bytes(content)
        where[case.id] = d
    return where


def _promoted(corpus: Path) -> list[Made]:
    """Invalid cases promoted from fuzz findings (``pcpconform fuzz --promote``): committed
    once under cases/invalid/fuzz-*, carried as they are."""
    out = []
    for case in sorted((corpus / "cases" / "invalid").glob("fuzz-*/" + CASE_FILE)):
        files = {p.name: p.read_bytes() for p in sorted(case.parent.iterdir()) if p.name != CASE_FILE}
        out.append(Made(json.loads(case.read_text(encoding="utf-8")), files))
    return out


def make_cases(corpus: str | Path) -> list[Made]:
    """Every case of the corpus, as the kit builds it now."""
    root = Path(corpus)
    with tempfile.TemporaryDirectory(prefix="pcpconform-conform-") as name:
        tmp = Path(name)
        valid = (fixture_cases(root, tmp) + compressed_cases(root, tmp) + source_cases(root)
                 + quirk_cases(tmp))
        attach_expectations(root, valid, _materialise(valid, tmp))
        invalid = _invalid(tmp) + salvage_only_cases(tmp) + _mmv(tmp) + _promoted(root)
        salvaged = [m for m in invalid if m.id in SALVAGED or m.id.startswith("salvage-")]
        attach_salvage(salvaged, _materialise(salvaged, tmp))
        # a valid MMV file obeys every rule of the MMV checker its one-fault cases break
        checks = sorted({c for m in invalid for c in m.data["clauses"] if c.startswith("MMV-CHK-")})
        sets = set_cases(root)
        return (valid + mmv_cases(checks) + mmv_writer_cases(root) + [m for m in sets if m.data["kind"] == "valid"]
                + invalid + [m for m in sets if m.data["kind"] == "invalid"])


def corpus_files(corpus: str | Path) -> Files:
    """Every file of ``cases/``, path (relative to the corpus directory, with ``/``) -> bytes;
    ``corpus`` supplies the fixtures, sources and plans, and the origins of unchanged cases."""
    root = Path(corpus)
    result: Files = {}
    for case in make_cases(root):
        kind = case.data["kind"]
        finish(case)
        origin = _previous_origin(root, kind, case.data)
        if origin is not None:
            case.data["origin"] = origin
        where = f"cases/{kind}/{case.id}"
        result[f"{where}/{CASE_FILE}"] = finish(case)
        for fname, content in case.files.items():
            result[f"{where}/{fname}"] = content
    return result


def write_corpus(corpus: str | Path) -> Files:
    """(Re)write ``cases/`` of the corpus directory from the kit; returns what was written."""
    root = Path(corpus)
    files = corpus_files(root)
    for kind in KINDS:
        shutil.rmtree(root / "cases" / kind, ignore_errors=True)
    for rel, content in files.items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)
    return files
