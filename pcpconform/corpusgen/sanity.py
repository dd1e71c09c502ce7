"""The corpus checks itself: every case cites known clauses, has exactly the files its
manifest lists with the listed checksums, and still gets the expected outputs from the kit's
own oracles (the validator's verdict and codes, the JSON Lines dump, the archive its fixture
makes, the interpolation and derived-metric documents); optionally the kit still builds the
committed bytes. Also the clause coverage (``coverage``): a clause that no valid case, or
where it can be violated no invalid case, cites needs a written reason.
"""

from __future__ import annotations

import hashlib
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pcpconform.check.engine import check_archive
from pcpconform.check.rules import RULES, Severity
from pcpconform.check.sets import check_set_and_members
from pcpconform.conform.expected import (
    Outcome,
    Schedule,
    derive_outcome,
    document_bytes,
    interp_outcome,
    replay_source,
)
from pcpconform.conform.manifest import CASE_FILE, KINDS, Case, ManifestError, load_corpus
from pcpconform.corpusgen.build import corpus_files, dump_bytes
from pcpconform.corpusgen.coverage import Coverage, load_exceptions
from pcpconform.corpusgen.salvage_cases import salvage_expectation
from pcpconform.errors import PcpConformError
from pcpconform.fixtures.fixture import load_fixture
from pcpconform.fixtures.generate import generate_archive

__all__ = ["Sanity", "spec_clauses", "sanity", "check_case"]

# A clause is a bold identifier at the start of a paragraph or list item (spec/README.md).
_CLAUSE = re.compile(r"^(?:[-*+] |\d+\. )?\*\*([A-Z]+(?:-[A-Z0-9]+)+)\*\*", re.M)


def spec_clauses(spec: str | Path) -> dict[str, str]:
    """Every clause ID defined in the chapters of ``spec`` -> its chapter's file name."""
    root = Path(spec)
    chapters = sorted(root.glob("*.md"))
    if not chapters:
        raise ManifestError(f"{root}: no spec chapters (*.md) to take the clause IDs from")
    return {m.group(1): p.name for p in chapters for m in _CLAUSE.finditer(p.read_text(encoding="utf-8"))}


@dataclass
class Sanity:
    """What the check found: problems (each one line) and the clause coverage."""

    cases: list[Case]
    problems: list[str] = field(default_factory=list)
    coverage: Coverage = field(default_factory=lambda: Coverage({}))

    @property
    def clauses(self) -> dict[str, str]:
        return self.coverage.clauses

    def uncovered(self, kind: str | None = None) -> dict[str, list[str]]:
        """Chapter -> the clauses of it that no case (of ``kind``, default any) cites."""
        kinds = [kind] if kind else list(KINDS)
        everything = set().union(*(self.coverage.cited.get(k, set()) for k in kinds))
        out: dict[str, list[str]] = {}
        for cid, chapter in self.clauses.items():
            if cid not in everything:
                out.setdefault(chapter, []).append(cid)
        return out


def _verdict(errors: int, others: int) -> str:
    return "errors" if errors else "warnings" if others else "clean"


def _files_problems(case: Case) -> list[str]:
    out = []
    listed: dict[str, str] = case.data["files"]
    present = {p.name for p in case.path.iterdir() if p.name != CASE_FILE}
    for name, digest in sorted(listed.items()):
        path = case.path / name
        if not path.is_file():
            out.append(f"missing file {name}")
        elif hashlib.sha256(path.read_bytes()).hexdigest() != digest:
            out.append(f"{name}: checksum does not match")
    out += [f"{name}: not listed in files" for name in sorted(present - set(listed))]
    dump = case.expected["dump"]
    if dump is not None and dump not in listed:
        out.append(f"expected dump {dump} is not listed in files")
    return out


def _mmv_report(path: Path) -> Any:
    """The MMV checker's report on one file."""
    from pcpconform.check.mmv import check_mmv_file  # imported only for MMV cases
    return check_mmv_file(path)


def check_case(case: Case) -> list[str]:
    """What is wrong with one case's expected outputs, as the kit computes them now."""
    expected = case.expected
    out = []
    unknown = [c for c in expected["error_codes"] + expected["warning_codes"] if c not in RULES]
    out += [f"unknown diagnostic code {c}" for c in unknown]
    if unknown:
        return out
    out += [f"{c} is listed under error_codes but is a {RULES[c].severity.value}"
            for c in expected["error_codes"] if RULES[c].severity != Severity.ERROR]
    out += [f"{c} is listed under warning_codes but is an error"
            for c in expected["warning_codes"] if RULES[c].severity == Severity.ERROR]
    if case.format == "mmv":
        report = _mmv_report(case.base)
    elif case.format == "set":
        report = check_set_and_members(case.source)
    else:
        report = check_archive(case.base, **case.data.get("check_options", {}))
    errors = {d.code for d in report.diagnostics if d.severity == Severity.ERROR}
    others = report.codes() - errors
    got = _verdict(len(errors), len(others))
    if got != expected["verdict"]:
        out.append(f"verdict is {got}, expected {expected['verdict']}")
    want = set(expected["error_codes"])
    if errors != want:
        missing, extra = sorted(want - errors), sorted(errors - want)
        parts = ([f"not reported: {', '.join(missing)}"] if missing else []) + \
                ([f"reported but not expected: {', '.join(extra)}"] if extra else [])
        out.append("error codes differ: " + "; ".join(parts))
    missing = sorted(set(expected["warning_codes"]) - others)
    if missing:
        out.append(f"expected warning codes not reported: {', '.join(missing)}")
    dump = expected["dump"]
    if dump is not None and (case.path / dump).is_file():
        try:
            same = dump_bytes(case.base) == (case.path / dump).read_bytes()
        except PcpConformError as exc:
            out.append(f"the dump fails: {exc}")
        else:
            if not same:
                out.append(f"{dump} differs from the dump the kit writes")
    if "fixture" in case.data and dump is not None:
        out += _writer_problems(case)
    out += _replay_problems(case)
    out += _salvage_problems(case)
    return out


def _salvage_problems(case: Case) -> list[str]:
    """The case's salvage expectation is what ``pcpconform salvage`` makes of it now."""
    want = case.expected.get("salvage")
    if want is None:
        return []
    files, expected, _ = salvage_expectation(case.path)
    out = [] if expected == want else [f"salvage: expected {want}, salvage gives {expected}"]
    for name, content in sorted(files.items()):
        path = case.path / name
        if not path.is_file() or path.read_bytes() != content:
            out.append(f"salvage: {name} differs from what salvage writes")
    return out


def _writer_problems(case: Case) -> list[str]:
    """The case's fixture, written by the kit at the case's version, dumps as expected."""
    fixture = case.path / str(case.data["fixture"])
    with tempfile.TemporaryDirectory(prefix="pcpconform-writer-") as tmp:
        base = Path(tmp) / "a"
        try:
            generate_archive(load_fixture(fixture), base, version=int(case.data["archive_versions"][0]))
            same = dump_bytes(base) == (case.path / case.expected["dump"]).read_bytes()
        except (PcpConformError, OSError) as exc:
            return [f"the fixture {fixture.name} cannot be written: {exc}"]
    return [] if same else [f"the archive written from {fixture.name} does not dump as {case.expected['dump']}"]


def _outcome_problems(case: Case, entry: dict[str, Any], got: Outcome, what: str) -> list[str]:
    out = []
    for member, doc in (("result", got.result), ("libpcp_result", got.libpcp_result)):
        name = entry.get(member)
        if (name is None) != (doc is None):
            out.append(f"{what}: {member} is {name}, the oracle {'gives none' if doc is None else 'gives one'}")
        elif name is not None and doc is not None:
            path = case.path / str(name)
            if not path.is_file() or path.read_bytes() != document_bytes(doc):
                out.append(f"{what}: {name} differs from what the oracle gives")
    if sorted(entry.get("deviations", [])) != sorted(got.deviations):
        out.append(f"{what}: deviations are {entry.get('deviations')}, the oracle names {got.deviations}")
    if "diagnostics" in entry and entry["diagnostics"] != got.diagnostics:
        out.append(f"{what}: diagnostics differ from the oracle's")
    return out


def _replay_problems(case: Case) -> list[str]:
    """Each interp and derive expectation is what the oracles compute now."""
    entries = case.expected.get("interp", []), case.expected.get("derive", [])
    if not any(entries):
        return []
    out = []
    try:
        for entry in entries[0]:
            schedule = Schedule.from_json(entry["schedule"])
            archive = replay_source(case.base, entry["rules"], schedule.interval_nsec)
            got = interp_outcome(archive, schedule, entry["rules"])
            out += _outcome_problems(case, entry, got, f"interp {entry['id']} ({entry['rules']})")
        for entry in entries[1]:
            config = (case.path / entry["config"]).read_bytes()
            schedule = Schedule.from_json(entry["schedule"])
            archive = replay_source(case.base, entry["profile"], schedule.interval_nsec)
            got = derive_outcome(archive, config, entry["config"], schedule, entry["profile"])
            out += _outcome_problems(case, entry, got, f"derive {entry['id']} ({entry['profile']})")
    except (PcpConformError, OSError, KeyError) as exc:
        out.append(f"the replays cannot be computed: {exc}")
    return out


def _reproduce(corpus: Path) -> list[str]:
    built = corpus_files(corpus)
    out = []
    committed = {p.relative_to(corpus).as_posix() for p in (corpus / "cases").rglob("*") if p.is_file()}
    for rel in sorted(built):
        path = corpus / rel
        if rel not in committed:
            out.append(f"{rel}: the build makes it, the corpus lacks it")
        elif path.read_bytes() != built[rel]:
            out.append(f"{rel}: the build makes different bytes")
    out += [f"{rel}: the build no longer makes it" for rel in sorted(committed - set(built))]
    return out


def _valid_verdict(case: Case) -> list[str]:
    verdict = case.expected["verdict"]
    if case.format == "archive" and case.expected["dump"] is None:
        return ["a valid archive case must expect a dump"]
    if verdict == "errors" or (verdict == "warnings" and "quirk" not in case.data["tags"]):
        return ["a valid case must expect the verdict clean (or warnings, tagged quirk)"]
    return []


def sanity(corpus: str | Path, spec: str | Path | None = None, *, reproduce: bool = False,
           coverage: bool = True) -> Sanity:
    """Check the corpus in directory ``corpus`` against the clauses of ``spec`` (default
    the ``spec`` directory beside it); ``coverage=False`` leaves out the coverage problems
    (for a part of a corpus). ManifestError if it cannot be read at all."""
    root = Path(corpus)
    cases = load_corpus(root)
    clauses = spec_clauses(spec if spec is not None else root.parent / "spec")
    result = Sanity(cases, coverage=Coverage(clauses, {k: set() for k in KINDS}, load_exceptions(root)))
    seen: dict[str, str] = {}
    for case in cases:
        where = f"{case.kind}/{case.path.name}"
        lines = []
        if case.id != case.path.name:
            lines.append(f"id {case.id} is not its directory's name")
        if case.kind != case.path.parent.name:
            lines.append(f"kind {case.kind} but it lies in cases/{case.path.parent.name}")
        if case.id in seen:
            lines.append(f"id also used by {seen[case.id]}")
        seen[case.id] = where
        cited = case.data["clauses"]
        lines += [f"unknown clause {c}" for c in cited if c not in clauses]
        result.coverage.cited[case.kind] |= set(cited)
        if case.kind == "valid":
            lines += _valid_verdict(case)
        if case.kind == "invalid" and case.expected["verdict"] == "clean":
            lines.append("an invalid case cannot expect the verdict clean")
        lines += _files_problems(case)
        lines += check_case(case)
        result.problems += [f"{where}: {line}" for line in lines]
    if coverage:
        result.problems += result.coverage.problems()
    if reproduce:
        result.problems += _reproduce(root)
    return result
