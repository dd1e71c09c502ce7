"""The pytest plugin (``pcpconform.conform.plugin``): the corpus as parametrised tests with
case IDs; a failing unit shows its verdict, clauses and smallest difference; skips stay skips."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
KIT = f"{sys.executable} -m pcpconform.conform.adapters.kit"


def _pytest(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    ini = tmp_path / "pytest.ini"
    ini.write_text("[pytest]\n", encoding="utf-8")
    env = dict(os.environ, PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
    return subprocess.run([sys.executable, "-m", "pytest", "-c", str(ini), "-p", "pcpconform.conform.plugin",
                           "-p", "no:cacheprovider", "--rootdir", str(tmp_path),
                           "--pcpconform-corpus", str(ROOT / "corpus"), *args],
                          cwd=tmp_path, capture_output=True, text=True, env=env, timeout=300)


def test_the_entry_point_names_the_plugin() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["entry-points"]["pytest11"]["pcpconform"] == "pcpconform.conform.plugin"


def test_the_kit_passes_as_parametrised_tests(tmp_path: Path) -> None:
    done = _pytest(tmp_path, "--pcpconform-impl", KIT, "--pcpconform-suite", "validator",
                   "--pcpconform-suite", "reader", "--pcpconform-cases", "example-*", "-v")
    assert done.returncode == 0, done.stdout[-2000:]
    assert "conform[validator:example-v2] PASSED" in done.stdout
    assert "conform[reader:example-v3] PASSED" in done.stdout
    assert "4 passed" in done.stdout


def test_a_failure_names_verdict_clause_and_difference_and_k_selects(tmp_path: Path) -> None:
    script = tmp_path / "accepts.py"
    script.write_text('import json, sys\nif sys.argv[1:] == ["--capabilities"]:\n'
                      '    print(json.dumps({"name": "acc", "version": "1", "suites": ["validator"], '
                      '"archive_versions": [2]}))\nelse:\n    print(json.dumps({"valid": True}))\n', encoding="utf-8")
    done = _pytest(tmp_path, "--pcpconform-impl", f"{sys.executable} {script}", "--pcpconform-cases",
                   "desc-conflict-*", "--pcpconform-cases", "example-v2", "-k", "validator", "-rs")
    assert done.returncode == 1, done.stdout[-2000:]
    assert "FAIL validator desc-conflict-v2 [FMT-DESC-6]" in done.stdout
    assert "an invalid archive was accepted" in done.stdout
    assert "1 failed, 1 passed, 1 skipped" in done.stdout and "archive version 3" in done.stdout


def test_without_the_option_it_adds_nothing(tmp_path: Path) -> None:
    (tmp_path / "test_x.py").write_text("def test_x():\n    pass\n", encoding="utf-8")
    done = _pytest(tmp_path, "-q")
    assert done.returncode == 0 and "1 passed" in done.stdout
