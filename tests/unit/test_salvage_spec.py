"""spec/salvage.md against the code: every error the validator knows is answered by a
clause, and every clause the salvage code cites is defined."""

from __future__ import annotations

import re
from pathlib import Path

from pcpconform.check.rules import RULES, Severity

ROOT = Path(__file__).resolve().parents[2]
CHAPTER = (ROOT / "spec" / "salvage.md").read_text(encoding="utf-8")
#: error rules no clause answers: the chapter's last section names them and says why
UNANSWERED = ("check.internal", "file.no-archive", "file.too-large")


def test_every_archive_error_is_answered_by_a_clause() -> None:
    # MMV files and the rules across an archive set's members are not what salvage rewrites
    errors = {c for c, r in RULES.items()
              if r.severity == Severity.ERROR and not c.startswith(("mmv.", "set."))}
    clauses, last = CHAPTER.split("## Codes answered")
    named = set(re.findall(r"`([a-z]+\.[a-z0-9-]+)`", clauses))
    assert errors - named == set(UNANSWERED)
    assert all(f"`{code}`" in last for code in UNANSWERED)
    assert named <= set(RULES), named - set(RULES)


def test_every_clause_the_code_cites_is_defined() -> None:
    defined = set(re.findall(r"^\*\*(SALVAGE-[A-Z]+-\d+)\*\*", CHAPTER, re.M))
    cited = set()
    for path in (ROOT / "pcpconform" / "salvage").glob("*.py"):
        cited |= set(re.findall(r"SALVAGE-[A-Z]+-\d+", path.read_text(encoding="utf-8")))
    assert cited and cited <= defined, cited - defined
