"""The import contract: each layer of the package imports only from the layers below it.

Layers, bottom to top (docs/architecture.md):

    errors < format < io < {dump, fixtures} < {check, oracles.interp} < {oracles.derive, salvage}
           < conform < {extra, fuzz, corpusgen} < cli

Modules of one layer may import each other; ``pcpconform/__init__.py`` (the public API,
imported lazily) stands above everything. Every import is counted, at module level or in a
function, so no layer reaches upwards at run time either.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "pcpconform"

#: package prefix -> rank; a module may import a module of the same or a lower rank
RANKS = {
    "pcpconform.errors": 0,
    "pcpconform.version": 0,
    "pcpconform.fastpath": 0,
    "pcpconform.cluster": 0,
    "pcpconform.format": 1,
    "pcpconform.io": 2,
    "pcpconform.mmv": 2,
    "pcpconform.dump": 3,
    "pcpconform.fixtures": 3,
    "pcpconform.check": 4,
    "pcpconform.oracles.interp": 4,
    "pcpconform.oracles.derive": 5,
    "pcpconform.salvage": 5,
    "pcpconform.conform": 6,
    "pcpconform.extra": 7,
    "pcpconform.corpusgen": 7,
    "pcpconform.fuzz": 7,
    "pcpconform.cli": 8,
    "pcpconform": 9,
}
#: layers of equal rank that must not depend on each other
PEERS = [("pcpconform.dump", "pcpconform.fixtures"), ("pcpconform.check", "pcpconform.oracles"),
         ("pcpconform.salvage", "pcpconform.oracles")]


def layer(module: str) -> str:
    best = max((p for p in RANKS if module == p or module.startswith(p + ".")), key=len)
    return best


def modules() -> list[tuple[str, Path]]:
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out.append((".".join(parts), path))
    return out


def imports(path: Path) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{path}:{node.lineno}: relative import"
            found.append((node.lineno, node.module or ""))
            found += [(node.lineno, f"{node.module}.{a.name}") for a in node.names]
    return [(n, m) for n, m in found if m == "pcpconform" or m.startswith("pcpconform.")]


def _is_module(name: str) -> bool:
    dotted = PACKAGE.parent / name.replace(".", "/")
    return dotted.with_suffix(".py").exists() or (dotted / "__init__.py").exists()


@pytest.mark.parametrize("module,path", modules(), ids=[m for m, _ in modules()])
def test_imports_only_from_lower_layers(module: str, path: Path) -> None:
    mine = layer(module)
    for lineno, target in imports(path):
        if not _is_module(target):
            continue            # a name imported from a module, not a module
        theirs = layer(target)
        assert RANKS[theirs] <= RANKS[mine], \
            f"{path.name}:{lineno}: {module} ({mine}) imports {target} ({theirs}), a higher layer"
        for a, b in PEERS:
            assert not ({mine, theirs} == {a, b} or (mine.startswith(a) and theirs.startswith(b))
                        or (mine.startswith(b) and theirs.startswith(a))), \
                f"{path.name}:{lineno}: {module} imports its peer layer {target}"


def test_every_module_belongs_to_a_layer() -> None:
    for module, _ in modules():
        assert layer(module) in RANKS


def test_the_contract_can_fail(tmp_path: Path) -> None:
    """A planted upward import is caught (so the contract above is not vacuous)."""
    planted = tmp_path / "bad.py"
    planted.write_text("from pcpconform.cli.check import run\n", encoding="utf-8")
    (_, target), = [i for i in imports(planted) if i[1] == "pcpconform.cli.check"]
    assert RANKS[layer(target)] > RANKS[layer("pcpconform.format.values")]


#: the most lines a module of the package may have: a module past it does more than one job
MAX_LINES = 600


def test_no_module_is_over_the_line_limit() -> None:
    over = {module: n for module, path in modules()
            if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert not over, f"modules over {MAX_LINES} lines: {over}"
