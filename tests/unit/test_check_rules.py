"""The validator's rules and the spec agree: every MUST has a rule, every rule a clause."""

from __future__ import annotations

import re
from pathlib import Path

from pcpconform.check.rules import RULES, UNCHECKED_CLAUSES, Severity

SPEC = Path(__file__).resolve().parents[2] / "spec"


def must_clauses() -> set[str]:
    text = (SPEC / "archive-format.md").read_text()
    found = set()
    for para in re.split(r"\n\s*\n", text):
        m = re.match(r"\s*(?:[-*]\s*)?\*\*(FMT-[A-Z]+-\d+)\*\*", para)
        if m and re.search(r"\bmust\b", para, re.I) and not m.group(1).startswith(("FMT-DIV", "FMT-CONF")):
            found.add(m.group(1))
    return found


def test_every_must_clause_has_a_rule_or_a_reason() -> None:
    cited = {r.clause for r in RULES.values()}
    missing = sorted(must_clauses() - cited - set(UNCHECKED_CLAUSES))
    assert not missing, f"MUST clauses no rule enforces: {missing}"


def test_every_rule_cites_an_existing_clause() -> None:
    text = (SPEC / "archive-format.md").read_text()
    mmv = (SPEC / "mmv.md").read_text()   # the MMV validator's clauses
    sets = (SPEC / "sets.md").read_text()   # the rules across a set's members
    for r in RULES.values():
        chapter = mmv if r.code.startswith("mmv.") else sets if r.code.startswith("set.") else text
        assert f"**{r.clause}**" in chapter, r.code


def test_codes_are_stable_shaped_and_severities_known() -> None:
    for code, r in RULES.items():
        assert re.fullmatch(r"[a-z]+\.[a-z0-9-]+", code), code
        assert r.severity in Severity
    assert len({r.code for r in RULES.values()}) == len(RULES)


def test_validator_chapter_lists_every_code() -> None:
    chapter = (SPEC / "validator.md").read_text()
    mmv = (SPEC / "mmv.md").read_text()   # the MMV validator's codes are listed there
    for code in RULES:
        assert f"`{code}`" in (mmv if code.startswith("mmv.") else chapter), code
