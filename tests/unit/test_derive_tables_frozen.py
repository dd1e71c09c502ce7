"""The derived-metric parse tables shipped in oracles/derive/tables.json are the ones the
grammar builds, and a derive command uses them (no lark at start-up).

If this fails after a grammar or table-construction change, write them again:
    .venv/bin/python -c 'from pcpconform.oracles.derive.grammar import write_frozen_tables as w; w()'
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pcpconform.oracles.derive import grammar
from pcpconform.oracles.derive.profiles import PROFILES


@pytest.mark.parametrize("name", sorted({p.syntax for p in PROFILES.values()}))
def test_frozen_tables_equal_the_built_ones(name: str) -> None:
    prof = next(p for p in PROFILES.values() if p.syntax == name)
    text = grammar.grammar_text(prof)
    frozen = grammar._frozen()[name]
    assert frozen["grammar_sha256"] == grammar.grammar_digest(text), "tables.json is stale"
    assert grammar._tables_from_json(frozen["tables"]) == grammar.build_tables(text)


def test_tables_round_trip_through_json() -> None:
    built = grammar.build_tables(grammar.grammar_text(PROFILES["pcp-6.3"]))
    doc = json.loads(json.dumps(grammar.tables_to_json(built)))
    assert grammar._tables_from_json(doc) == built


def test_a_parse_uses_the_frozen_tables_without_lark() -> None:
    code = ("import sys\n"
            "from pcpconform.oracles.derive.parser import parse\n"
            "from pcpconform.oracles.derive.grammar import TABLE_SOURCES\n"
            "from pcpconform.oracles.derive.profiles import PROFILES\n"
            "for p in PROFILES.values():\n"
            "    parse('b + 1', p)\n"
            "print(sorted(set(TABLE_SOURCES.values())), 'lark' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["['frozen']", "False"]


def test_a_changed_grammar_is_built_not_read(monkeypatch: pytest.MonkeyPatch) -> None:
    """The digest guards the frozen tables: a different grammar text is built afresh."""
    prof = PROFILES["pcp-6.0"]
    changed = grammar.GRAMMAR.replace("//%left", "//%left L_NEVER", 1)
    monkeypatch.setattr(grammar, "GRAMMAR", changed)
    grammar.tables.cache_clear()
    try:
        grammar.tables(prof)
        assert grammar.TABLE_SOURCES[prof.syntax] == "built"
    finally:
        monkeypatch.undo()
        grammar.tables.cache_clear()
    grammar.tables(prof)
    assert grammar.TABLE_SOURCES[prof.syntax] == "frozen"


def test_the_wheel_carries_the_tables() -> None:
    pyproject = (Path(__file__).resolve().parents[2] / "pyproject.toml").read_text()
    assert "oracles/derive/tables.json" in pyproject
