"""Making the corpus data from the kit: the golden archives ``pcpconform generate`` writes
from the bundled fixtures, and the one-fault archives of ``pcpconform.check.corpus``.

``corpus_files`` computes every file of ``cases/`` in memory (path relative to the corpus
directory -> bytes), so that ``write_corpus`` can write them and the sanity check can
compare them with what is committed. A case keeps the ``origin`` of its ``case.json`` for
as long as its files do not change: the origin says which writer made those bytes.
"""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

from pcpconform.check.corpus import CASES, build_corpus
from pcpconform.check.rules import RULES, Severity
from pcpconform.conform.manifest import CASE_FILE, KINDS
from pcpconform.dump.jsonl import write_jsonl
from pcpconform.fixtures import bundled_fixture
from pcpconform.fixtures.fixture import load_fixture
from pcpconform.fixtures.generate import generate_archive
from pcpconform.io.archive import Archive
from pcpconform.version import __version__

__all__ = ["GOLDEN", "DUMP", "corpus_files", "write_corpus", "dump_bytes", "case_json"]

#: the bundled fixtures written as golden archives, each in version 2 and 3
GOLDEN = ("example", "events", "interp-seed")
DUMP = "dump.jsonl"
BASE = "a"

#: a dump line kind -> the clauses an archive holding such records exercises
_KIND_CLAUSES = {
    "label": ("FMT-LABEL-1", "DUMP-LABEL-1", "GEN-LABEL"),
    "desc": ("FMT-DESC-1", "DUMP-DESC-1", "DUMP-TAG-1", "DUMP-ID-1", "GEN-DESC"),
    "indom": ("FMT-INDOM-1", "DUMP-INDOM-1", "GEN-INDOM"),
    "text": ("FMT-TEXT-1", "DUMP-TEXT-1", "GEN-TEXT"),
    "labelset": ("FMT-LABELSET-1", "DUMP-LABELSET-1", "GEN-LABELSET"),
    "index": ("FMT-INDEX-1", "DUMP-INDEX-1", "GEN-INDEX"),
    "result": ("FMT-RESULT-1", "DUMP-RESULT-1", "DUMP-VAL-1", "DUMP-RAW-1", "GEN-RESULT"),
}
#: every golden archive and its dump exercise these
_GOLDEN_CLAUSES = ("FMT-FILE-1", "GEN-FILES", "DUMP-FILE-1", "DUMP-ORDER-1", "DUMP-LOC-1",
                   "DUMP-TIME-1", "DUMP-LOSSLESS-1")
_EVENT_CLAUSES = ("FMT-EVENT-1", "DUMP-EVENT-1")

Files = dict[str, bytes]


def dump_bytes(base: Path) -> bytes:
    """The canonical JSON Lines dump of an archive (spec/dump-jsonl.md)."""
    out = io.StringIO()
    write_jsonl(Archive(base), out)
    return out.getvalue().encode("utf-8")


def case_json(data: dict[str, Any]) -> bytes:
    return (json.dumps(data, indent=1, ensure_ascii=True) + "\n").encode("ascii")


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _dir_files(path: Path) -> Files:
    return {p.name: p.read_bytes() for p in sorted(path.iterdir()) if p.is_file()}


def _golden_clauses(dump: bytes) -> list[str]:
    clauses = list(_GOLDEN_CLAUSES)
    for line in dump.decode("utf-8").splitlines():
        obj = json.loads(line)
        clauses += _KIND_CLAUSES.get(obj.get("kind"), ())
        if obj.get("kind") == "result" and '"records":' in line:
            clauses += _EVENT_CLAUSES
    return list(dict.fromkeys(clauses))


def _case(cid: str, kind: str, title: str, tags: list[str], clauses: list[str], version: int,
          origin: dict[str, str], files: Files, expected: dict[str, Any],
          options: dict[str, Any] | None = None) -> dict[str, Any]:
    data: dict[str, Any] = {
        "id": cid, "title": title, "kind": kind, "tags": tags, "clauses": clauses,
        "archive_versions": [version], "archive": BASE, "origin": origin,
    }
    if options:
        data["check_options"] = dict(options)
    data["files"] = {name: _sha(content) for name, content in sorted(files.items())}
    data["expected"] = expected
    return data


def _golden(tmp: Path) -> list[tuple[dict[str, Any], Files]]:
    out = []
    for source in GOLDEN:
        fixture = load_fixture(bundled_fixture(source))
        for version in (2, 3):
            where = tmp / f"golden-{source}-v{version}"
            where.mkdir()
            generate_archive(fixture, where / BASE, version=version)
            files = _dir_files(where)
            dump = dump_bytes(where / BASE)
            files[DUMP] = dump
            clauses = _golden_clauses(dump)
            tags = [f"fixture:{source}"] + (["events"] if "FMT-EVENT-1" in clauses else [])
            origin = {"writer": "pcpconform generate", "version": __version__,
                      "source": f"pcpconform/fixtures/bundled/{source}.yaml"}
            expected = {"verdict": "clean", "error_codes": [], "warning_codes": [], "dump": DUMP}
            out.append((_case(f"{source}-v{version}", "valid",
                              f"the bundled fixture {source}.yaml written as a version {version} archive",
                              tags, clauses, version, origin, files, expected), files))
    return out


def _clauses_of(codes: list[str]) -> list[str]:
    errors = [c for c in codes if RULES[c].severity == Severity.ERROR]
    ordered = errors + [c for c in codes if c not in errors]
    return list(dict.fromkeys(RULES[c].clause for c in ordered))


def _invalid(tmp: Path) -> list[tuple[dict[str, Any], Files]]:
    manifest = build_corpus(tmp / "invalid")
    stems = {f"{c.name}-v{v}": c.name for c in CASES for v in c.versions}
    out = []
    for entry in manifest["cases"]:
        codes: list[str] = entry["expect"]
        errors = [c for c in codes if RULES[c].severity == Severity.ERROR]
        others = [c for c in codes if c not in errors]
        verdict = "errors" if errors else "warnings"
        files = _dir_files((tmp / "invalid" / entry["archive"]).parent)
        stem = stems[entry["name"]]
        tags = [f"area:{codes[0].split('.')[0]}", f"fault:{stem}",
                f"fixture:{Path(entry['source']).stem}"]
        if entry.get("options"):
            tags.append("options")
        origin = {"writer": "pcpconform.check.corpus", "version": __version__,
                  "source": f"pcpconform/fixtures/bundled/{entry['source']}"}
        expected = {"verdict": verdict, "error_codes": errors, "warning_codes": others, "dump": None}
        out.append((_case(entry["name"], "invalid", entry["fault"], tags, _clauses_of(codes),
                          entry["version"], origin, files, expected, entry.get("options")), files))
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


def corpus_files(corpus: str | Path) -> Files:
    """Every file of ``cases/``, path (relative to the corpus directory, with ``/``) -> bytes;
    ``corpus`` supplies the origins of unchanged cases."""
    root = Path(corpus)
    result: Files = {}
    with tempfile.TemporaryDirectory(prefix="pcpconform-conform-") as name:
        tmp = Path(name)
        made = _golden(tmp) + _invalid(tmp)
    for data, files in made:
        kind = data["kind"]
        origin = _previous_origin(root, kind, data)
        if origin is not None:
            data["origin"] = origin
        where = f"cases/{kind}/{data['id']}"
        result[f"{where}/{CASE_FILE}"] = case_json(data)
        for fname, content in files.items():
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
