"""Building the corpus, its manifest and its README.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from pcpconform.check.rules import RULES, Severity
from pcpconform.corpusgen.invalid.edit import ArchiveEdit
from pcpconform.corpusgen.invalid.registry import CASES, UNCOVERED
from pcpconform.fixtures import bundled_fixture
from pcpconform.fixtures.fixture import load_fixture
from pcpconform.fixtures.generate import generate_archive

__all__ = ["README", "build_corpus", "render_readme", "main"]

#: the README's place, relative to the directory the builder runs in (a source checkout)
README = Path("corpus") / "invalid" / "README.md"
BASE = "a"
SOURCES = ("example", "events")

def _primary_clause(codes: list[str]) -> str:
    errors = [c for c in codes if RULES[c].severity == Severity.ERROR]
    return RULES[(errors or codes)[0]].clause


def _fixture_path(source: str, fixtures: str | Path | None) -> Path:
    """A source fixture: from ``fixtures`` if given, else the one bundled with the package."""
    return Path(fixtures) / f"{source}.yaml" if fixtures is not None else bundled_fixture(source)


def build_corpus(outdir: str | Path, *, fixtures: str | Path | None = None) -> dict[str, Any]:
    """Write every case under ``outdir`` and return (and write) the manifest.

    The sources are the bundled fixtures, or those of the directory ``fixtures``."""
    out = Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    originals: dict[tuple[str, int], Path] = {}
    valid = []
    for source in SOURCES:
        fixture = load_fixture(_fixture_path(source, fixtures))
        for version in (2, 3):
            name = f"valid-{source}-v{version}"
            target = out / name
            if target.exists():
                shutil.rmtree(target)
            generate_archive(fixture, target / BASE, version=version)
            originals[(source, version)] = target / BASE
            valid.append({"name": name, "archive": f"{name}/{BASE}", "source": f"{source}.yaml",
                          "version": version})
    cases = []
    for c in CASES:
        for version in c.versions:
            name = f"{c.name}-v{version}"
            ed = ArchiveEdit(originals[(c.source, version)])
            ed.originals = originals
            c.mutate(ed)
            target = out / name
            if target.exists():
                shutil.rmtree(target)
            target.mkdir()
            ed.save(target / BASE)
            expect = c.expected(version)
            entry: dict[str, Any] = {"name": name, "archive": f"{name}/{BASE}", "fault": c.fault,
                                     "expect": expect, "clause": _primary_clause(expect),
                                     "source": f"{c.source}.yaml", "version": version}
            if c.options:
                entry["options"] = dict(c.options)
            cases.append(entry)
    manifest = {
        "generator": "python -m pcpconform.corpusgen.invalid",
        "cases": cases,
        "valid": valid,
        "uncovered": [{"code": code, "reason": reason} for code, reason in sorted(UNCOVERED.items())],
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    return manifest


def render_readme(manifest: dict[str, Any]) -> str:
    """The corpus README: how to build it, and one table row per case."""
    lines = [
        "# The invalid corpus",
        "",
        "One-fault archives for validators: each is a valid archive generated from a bundled",
        "fixture (`corpus/fixtures/example.yaml` or `events.yaml`, in version 2 and/or 3) with",
        "one fault applied by editing bytes at offsets found by parsing it. The archives are not",
        "committed; build them with",
        "",
        "```sh",
        "python -m pcpconform.corpusgen.invalid OUTDIR",
        "```",
        "",
        "which writes `OUTDIR/<case>/a.{meta,index,0}` for every case, the untouched originals",
        "as `OUTDIR/valid-<fixture>-v<version>/a`, and `OUTDIR/manifest.json`: `cases` (name,",
        "archive base relative to OUTDIR, fault, expected codes, clause, and `options` for",
        "`check_archive` where a case needs them), `valid` and `uncovered` (error codes that no",
        "edit of an archive can produce, with the reason).",
        "",
        "A validator conforms on a case when the set of *error* codes it reports is exactly the",
        "expected error codes, and every expected warning or info code is among the codes it",
        "reports (further warnings are allowed: a fault may make a benign oddity visible).",
        "The originals must check clean. `tests/unit/test_invalid_corpus.py` runs the corpus against",
        "`pcpconform.check`.",
        "",
        "This file is generated: `python -m pcpconform.corpusgen.invalid --readme corpus/invalid/README.md`.",
        "",
        f"## Cases ({len({_stem(c['name']) for c in manifest['cases']})} faults, "
        f"{len(manifest['cases'])} archives)",
        "",
        "| case | versions | fault | expected codes | clause |",
        "|---|---|---|---|---|",
    ]
    rows: dict[str, dict[str, Any]] = {}
    for entry in manifest["cases"]:
        stem = _stem(entry["name"])
        row = rows.setdefault(stem, {"versions": [], "fault": entry["fault"], "expect": {},
                                     "clause": entry["clause"]})
        row["versions"].append(str(entry["version"]))
        row["expect"][entry["version"]] = entry["expect"]
    for stem, row in rows.items():
        expects = list(row["expect"].values())
        if all(e == expects[0] for e in expects):
            codes = _codes_cell(expects[0])
        else:
            codes = "; ".join(f"v{v}: {_codes_cell(e)}" for v, e in row["expect"].items())
        fault = row["fault"].replace("|", "\\|")
        lines.append(f"| `{stem}` | {', '.join(row['versions'])} | {fault} | {codes} | {row['clause']} |")
    lines += ["", "Codes in *italics* are warnings or info: they must be reported, but other",
              "warnings may accompany them.", "", "## Error codes not covered", ""]
    if manifest["uncovered"]:
        lines += ["| code | reason |", "|---|---|"]
        lines += [f"| `{u['code']}` | {u['reason']} |" for u in manifest["uncovered"]]
    else:
        lines.append("None: every error code of `pcpconform/check/rules.py` has a case.")
    return "\n".join(lines) + "\n"


def _stem(name: str) -> str:
    return name.rsplit("-v", 1)[0]


def _codes_cell(codes: list[str]) -> str:
    return ", ".join(f"`{c}`" if RULES[c].severity == Severity.ERROR else f"*`{c}`*" for c in codes)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pcpconform.corpusgen.invalid",
                                     description="Build the invalid corpus of one-fault archives.")
    parser.add_argument("outdir", nargs="?", help="directory to build the corpus in")
    parser.add_argument("--readme", nargs="?", const=str(README), metavar="FILE",
                        help=f"write the corpus README (default {README}); '-' for stdout")
    parser.add_argument("--fixtures", default=None,
                        help="directory holding example.yaml and events.yaml (default: the bundled ones)")
    args = parser.parse_args(argv)
    if args.outdir is None and args.readme is None:
        parser.error("give OUTDIR, --readme, or both")
    if args.outdir is not None:
        manifest = build_corpus(args.outdir, fixtures=args.fixtures)
        print(f"{len(manifest['cases'])} cases in {args.outdir}", file=sys.stderr)
    else:
        with tempfile.TemporaryDirectory(prefix="pcpconform-corpus-") as tmp:
            manifest = build_corpus(tmp, fixtures=args.fixtures)
    if args.readme is not None:
        text = render_readme(manifest)
        if args.readme == "-":
            sys.stdout.write(text)
        else:
            Path(args.readme).parent.mkdir(parents=True, exist_ok=True)
            Path(args.readme).write_text(text, encoding="utf-8")
    return 0

