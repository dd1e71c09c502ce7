"""The corpus checks itself: every case cites known clauses, has exactly the files its
manifest lists with the listed checksums, and still gets the expected outputs from the kit's
own oracles (the validator's verdict and codes, the JSON Lines dump); optionally the kit
still builds the committed bytes. Also the clause coverage: which clauses of spec/ no valid
and no invalid case cites.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path

from pcpconform.check.engine import check_archive
from pcpconform.check.rules import RULES, Severity
from pcpconform.conform.build import corpus_files, dump_bytes
from pcpconform.conform.manifest import CASE_FILE, Case, ManifestError, load_corpus
from pcpconform.errors import PcpConformError

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
    #: every clause ID of spec/ -> its chapter
    clauses: dict[str, str] = field(default_factory=dict)
    #: "valid" / "invalid" -> the clause IDs the cases of that kind cite
    cited: dict[str, set[str]] = field(default_factory=dict)

    def uncovered(self) -> dict[str, list[str]]:
        """Chapter -> the clauses of it that no case cites."""
        everything = self.cited.get("valid", set()) | self.cited.get("invalid", set())
        out: dict[str, list[str]] = {}
        for cid, chapter in self.clauses.items():
            if cid not in everything:
                out.setdefault(chapter, []).append(cid)
        return out

    def coverage(self) -> list[str]:
        """One line per chapter: clauses cited by a valid case, an invalid case, any."""
        lines = []
        for chapter in sorted(set(self.clauses.values())):
            mine = {c for c, ch in self.clauses.items() if ch == chapter}
            valid = mine & self.cited.get("valid", set())
            invalid = mine & self.cited.get("invalid", set())
            lines.append(f"{chapter}: {len(valid | invalid)}/{len(mine)} clauses cited "
                         f"({len(valid)} by valid cases, {len(invalid)} by invalid cases)")
        return lines


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


def sanity(corpus: str | Path, spec: str | Path | None = None, *, reproduce: bool = False) -> Sanity:
    """Check the corpus in directory ``corpus`` against the clauses of ``spec`` (default
    the ``spec`` directory beside it). ManifestError if it cannot be read at all."""
    root = Path(corpus)
    cases = load_corpus(root)
    result = Sanity(cases, clauses=spec_clauses(spec if spec is not None else root.parent / "spec"))
    result.cited = {"valid": set(), "invalid": set()}
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
        clauses = case.data["clauses"]
        lines += [f"unknown clause {c}" for c in clauses if c not in result.clauses]
        result.cited[case.kind] |= set(clauses)
        if case.kind == "valid" and (case.expected["verdict"] != "clean" or case.expected["dump"] is None):
            lines.append("a valid case must expect the verdict clean and a dump")
        if case.kind == "invalid" and case.expected["verdict"] == "clean":
            lines.append("an invalid case cannot expect the verdict clean")
        lines += _files_problems(case)
        lines += check_case(case)
        result.problems += [f"{where}: {line}" for line in lines]
    if reproduce:
        result.problems += _reproduce(root)
    return result
