"""The spec chapters: generated tables current, clause identifiers unique."""

from __future__ import annotations

import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from pcpconform.cli import specgen

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "spec"

# A clause is defined by a bold identifier at the start of a paragraph or list item.
_CLAUSE = re.compile(r"^(?:[-*+] |\d+\. )?\*\*([A-Z]+(?:-[A-Z0-9]+)+)\*\*", re.M)


def _chapters() -> list[Path]:
    return sorted(SPEC.glob("*.md"))


def _clauses() -> list[tuple[str, str]]:
    return [(m.group(1), p.name) for p in _chapters()
            for m in _CLAUSE.finditer(p.read_text(encoding="utf-8"))]


def test_specgen_check_passes() -> None:
    proc = subprocess.run([sys.executable, "-m", "pcpconform.cli.specgen", "--check"],
                          cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_clause_ids_are_unique() -> None:
    clauses = _clauses()
    assert len(clauses) > 100
    counts = Counter(cid for cid, _ in clauses)
    dupes = {cid: [f for c, f in clauses if c == cid] for cid, n in counts.items() if n > 1}
    assert not dupes, f"duplicate clause identifiers: {dupes}"


@pytest.mark.parametrize("prefix,chapter", [("FMT-", "archive-format.md"),
                                            ("DUMP-", "dump-jsonl.md"),
                                            ("GEN-", "fixtures.md"), ("FIX-", "fixtures.md"),
                                            ("SET-", "sets.md")])
def test_each_chapter_defines_its_clauses(prefix: str, chapter: str) -> None:
    assert any(cid.startswith(prefix) and f == chapter for cid, f in _clauses())


def test_clause_references_exist() -> None:
    defined = {cid for cid, _ in _clauses()}
    text = "\n".join(p.read_text(encoding="utf-8") for p in _chapters())
    cited = set(re.findall(r"\b((?:FMT|DUMP|FIX|GEN|SET)-[A-Z]+(?:-\d+)?)\b", text))
    # an area name alone (e.g. "DUMP-VAL") may be cited as the group of its clauses
    groups = {cid.rsplit("-", 1)[0] for cid in defined}
    assert cited - defined - groups == set()


def test_every_generated_region_exists() -> None:
    text = "\n".join(p.read_text(encoding="utf-8") for p in _chapters())
    for name in specgen.REGIONS:
        begin = f"<!-- BEGIN GENERATED: {name} -->"
        end = f"<!-- END GENERATED: {name} -->"
        assert text.count(begin) == 1 and text.count(end) == 1, name
        assert text.index(begin) < text.index(end), name


def test_check_detects_a_stale_region(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("<!-- BEGIN GENERATED: pmvalue -->\nold\n<!-- END GENERATED: pmvalue -->\n")
    report = specgen.update_spec(tmp_path, write=False)
    assert report.stale == ["page.md: pmvalue"] and not report.ok
    specgen.update_spec(tmp_path)
    assert "`inst`" in page.read_text()
    assert specgen.update_spec(tmp_path, write=False).stale == []


def test_tables_follow_the_schemas() -> None:
    rows = specgen.REGIONS["label-v3"].render()
    assert "| 8 | 12 | `start` | T3 timestamp (12) |" in rows
    assert "| 32 | 256 | `hostname_raw` | bytes[256] |" in rows
    assert "array of pmValue (numval)" in specgen.render_region("pmvalueset")


def _dump_lines(fixture: str, base: Path) -> str:
    import io

    from pcpconform.dump.jsonl import write_jsonl
    from pcpconform.fixtures.fixture import load_fixture
    from pcpconform.fixtures.generate import generate_archive
    from pcpconform.io.archive import Archive

    generate_archive(load_fixture(ROOT / "corpus" / "fixtures" / fixture), base)
    out = io.StringIO()
    write_jsonl(Archive(base), out)
    return out.getvalue()


def test_dump_chapter_examples_are_current(tmp_path: Path) -> None:
    text = (SPEC / "dump-jsonl.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```\n(.*?)```", text, re.S)
    quoted = [line for block in blocks for line in block.splitlines() if line.startswith("{")]
    example = _dump_lines("example.yaml", tmp_path / "ex").splitlines()
    events = _dump_lines("events.yaml", tmp_path / "evs")
    assert len(quoted) >= 10
    assert f"The dump has {len(example)} lines" in text
    for line in quoted:
        assert line in example or line in events, line
