"""``--promote FINDING``: a finding's reproducer as an invalid corpus case
(corpus/cases/invalid/fuzz-<tool>-<kind>-<hash>-v<N>/, case.json in the corpus format)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from pcpconform.check.engine import check_archive
from pcpconform.check.rules import RULES, Severity
from pcpconform.conform.casefile import Made, case_data, finish
from pcpconform.conform.manifest import load_case, load_schema
from pcpconform.errors import UsageError
from pcpconform.fuzz.archive_edit import BASE
from pcpconform.fuzz.findings import FINDING_FILE, INPUT_DIR, Finding, load_finding
from pcpconform.version import __version__

__all__ = ["promote", "case_id"]

WRITER = "pcpconform fuzz"


def case_id(finding: Finding, tool: str, version: int) -> str:
    word = re.sub(r"[^a-z0-9]+", "-", Path(tool).name.lower()).strip("-") or "target"
    return f"fuzz-{word}-{finding.kind}-{finding.id.removeprefix('f-')}-v{version}"


def promote(path: Path, corpus: Path) -> Path:
    """Write the case; UsageError if the finding cannot be an invalid case (not an archive,
    or an archive the kit's validator finds no error in)."""
    if not (path / FINDING_FILE).is_file():
        raise UsageError(f"{path}: not a finding directory (no {FINDING_FILE})")
    if not (corpus / "schema").is_dir():
        raise UsageError(f"{corpus}: not a corpus directory (no schema/)")
    finding, target = load_finding(path)
    if finding.input_kind != "archive":
        raise UsageError(f"{finding.id}: only archive findings become corpus cases ({finding.input_kind})")
    report = check_archive(path / INPUT_DIR / BASE)
    codes = list(dict.fromkeys(d.code for d in report.diagnostics))
    errors = [c for c in codes if RULES[c].severity == Severity.ERROR]
    if not codes:
        raise UsageError(f"{finding.id}: the kit's validator finds nothing wrong with this archive; "
                         "an invalid case needs a diagnostic (this is a finding against the kit's own judgement)")
    meta = finding.files.get(f"{BASE}.meta", b"")
    version = meta[7] if len(meta) > 7 and meta[7] in (2, 3) else 2
    tool = target.argv[0] if target.argv else "target"
    cid = case_id(finding, tool, version)
    version_line = target.version()
    if version_line == "unknown":
        version_line = finding.target_version
    title = f"{finding.kind} of {Path(tool).name} ({version_line}): {finding.signature}"[:300]
    ordered = errors + [c for c in codes if c not in errors]
    clauses = list(dict.fromkeys(RULES[c].clause for c in ordered))
    tags = [f"area:{ordered[0].split('.')[0]}", f"fault:fuzz-{finding.kind}", "origin:pcpconform-fuzz"]
    source = f"{finding.command} (seed {finding.seed}, run {finding.run})"
    origin = {"writer": WRITER, "version": __version__, "source": source}
    expected = {"verdict": "errors" if errors else "warnings", "error_codes": errors,
                "warning_codes": [c for c in codes if c not in errors], "dump": None}
    made = Made(case_data(cid, "invalid", title, tags, clauses, version, origin, expected), dict(finding.files))
    where = corpus / "cases" / "invalid" / cid
    if where.exists():
        shutil.rmtree(where)
    where.mkdir(parents=True)
    for name, data in made.files.items():
        (where / name).write_bytes(data)
    (where / "case.json").write_bytes(finish(made))
    load_case(where, load_schema(corpus))       # the manifest's own schema check
    return where
