"""Clause coverage: every normative clause of spec/ is cited by at least one valid case
and, where an archive can violate it, by one invalid case; a clause that is not has a
written reason in ``corpus/coverage-exceptions.json``.

That file is ``{"valid": {PATTERN: REASON}, "invalid": {PATTERN: REASON}}``, where a
pattern is a clause ID or a prefix ending in ``*`` (``INTERP-*``). An exception that no
longer excuses anything is a problem too, so that the list only shrinks.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from pcpconform.conform.manifest import KINDS, ManifestError

__all__ = ["EXCEPTIONS", "Exceptions", "load_exceptions", "Coverage"]

EXCEPTIONS = "coverage-exceptions.json"


def _a(kind: str) -> str:
    return f"an {kind}" if kind[0] in "aeiou" else f"a {kind}"


@dataclass(frozen=True)
class Exceptions:
    """Per kind of case, pattern -> the reason no case of that kind cites the clauses."""

    reasons: dict[str, dict[str, str]]

    def reason(self, kind: str, clause: str) -> str | None:
        for pattern, why in self.reasons.get(kind, {}).items():
            if pattern == clause or (pattern.endswith("*") and clause.startswith(pattern[:-1])):
                return why
        return None


def load_exceptions(corpus: Path) -> Exceptions:
    path = corpus / EXCEPTIONS
    if not path.is_file():
        return Exceptions({k: {} for k in KINDS})
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ManifestError(f"{path}: cannot read: {exc}") from None
    ok = isinstance(data, dict) and set(data) <= set(KINDS) and all(
        isinstance(v, dict) and all(isinstance(r, str) and r.strip() for r in v.values())
        for v in data.values())
    if not ok:
        raise ManifestError(f"{path}: must be {{\"valid\"|\"invalid\": {{CLAUSE or PREFIX*: REASON}}}}")
    return Exceptions({k: dict(data.get(k, {})) for k in KINDS})


@dataclass
class Coverage:
    """Which clauses the cases of each kind cite, against every clause of spec/."""

    #: every clause ID of spec/ -> its chapter
    clauses: dict[str, str]
    #: kind -> the clause IDs its cases cite
    cited: dict[str, set[str]] = field(default_factory=dict)
    exceptions: Exceptions = field(default_factory=lambda: Exceptions({}))

    def missing(self, kind: str) -> list[str]:
        """The clauses no case of ``kind`` cites, in spec order."""
        return [c for c in self.clauses if c not in self.cited.get(kind, set())]

    def unexcused(self, kind: str) -> list[str]:
        return [c for c in self.missing(kind) if self.exceptions.reason(kind, c) is None]

    def problems(self) -> list[str]:
        """An uncovered clause without a reason, and an exception that excuses nothing."""
        out = []
        for kind in KINDS:
            out += [f"coverage: {c} ({self.clauses[c]}) is cited by no {kind} case and "
                    f"{EXCEPTIONS} gives no reason" for c in self.unexcused(kind)]
            missing = self.missing(kind)
            for pattern in self.exceptions.reasons.get(kind, {}):
                if pattern.endswith("*"):
                    if not any(c.startswith(pattern[:-1]) for c in missing):
                        out.append(f"coverage: {EXCEPTIONS}: {kind} exception {pattern} excuses "
                                   "nothing any more: remove it")
                elif pattern not in self.clauses:
                    out.append(f"coverage: {EXCEPTIONS}: {kind} exception {pattern} is not a clause of spec/")
                elif pattern not in missing:
                    out.append(f"coverage: {EXCEPTIONS}: {pattern} is cited by {_a(kind)} case now: "
                               "remove its exception")
        return out

    def summary(self) -> list[str]:
        """One line per chapter: clauses cited by valid cases, by invalid ones, excused."""
        lines = []
        for chapter in sorted(set(self.clauses.values())):
            mine = [c for c, ch in self.clauses.items() if ch == chapter]
            parts = []
            for kind in KINDS:
                cited = sum(1 for c in mine if c in self.cited.get(kind, set()))
                excused = sum(1 for c in mine if c not in self.cited.get(kind, set())
                              and self.exceptions.reason(kind, c) is not None)
                parts.append(f"{kind} {cited}/{len(mine)} (+{excused} excused)")
            lines.append(f"{chapter}: " + ", ".join(parts))
        return lines

    def listing(self) -> list[str]:
        """The clauses not cited, per kind and chapter, with the reason where there is one."""
        lines = []
        for kind in KINDS:
            for c in self.missing(kind):
                why = self.exceptions.reason(kind, c)
                lines.append(f"not cited by {_a(kind)} case: {c} ({self.clauses[c]}): "
                             + (f"excused: {why}" if why else "NO REASON"))
        return lines
