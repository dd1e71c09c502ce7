"""Start-up: the dump, rebuild, interp and check commands import only what they use (numpy, lark,
matplotlib, rich, hypothesis and yaml are loaded by the commands and paths that need them)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pcpconform.cli.dump import MMV_MAGIC
from pcpconform.mmv.schema import MMV_MAGIC as SCHEMA_MMV_MAGIC

CORPUS = Path(__file__).resolve().parents[2] / "corpus" / "cases"
HEAVY = ("numpy", "lark", "matplotlib", "rich", "hypothesis", "yaml")


def _loaded_after(statement: str) -> list[str]:
    code = (f"import json, sys\n{statement}\n"
            "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded: list[str] = json.loads(out.stdout)
    return loaded


@pytest.mark.parametrize(("module", "allowed"), [
    ("pcpconform.cli.dump", ()),
    ("pcpconform.cli.rebuild", ()),
    ("pcpconform.cli.interp", ()),
    ("pcpconform.cli.derive", ()),           # parse tables frozen: no lark
])
def test_command_modules_import_nothing_heavy(module: str, allowed: tuple[str, ...]) -> None:
    loaded = set(_loaded_after(f"import {module}"))
    assert loaded & set(HEAVY) <= set(allowed)


def _loaded_after_check(path: str) -> set[str]:
    statement = ("from pcpconform.cli import main\n"
                 "try:\n"
                 f"    main(['check', '--quiet', {path!r}])\n"
                 "except SystemExit:\n"
                 "    pass")
    return set(_loaded_after(statement))


def test_checking_an_archive_loads_nothing_heavy() -> None:
    """The MMV validator (numpy) is imported at the first MMV file, not for archives."""
    loaded = _loaded_after_check(str(CORPUS / "valid" / "example-v3" / "a"))
    assert loaded & set(HEAVY) == set()
    assert "multiprocessing" not in loaded      # the worker pool's modules: only for -j N
    assert "numpy" in _loaded_after_check(str(CORPUS / "valid" / "mmv-base-v3"))


def test_the_check_sees_a_heavy_import() -> None:
    """The test above can fail: an MMV module (which uses numpy) is seen."""
    assert "numpy" in _loaded_after("import pcpconform.dump.mmv")


def test_dumping_an_mmv_file_loads_no_archive_module() -> None:
    mmv = CORPUS / "valid" / "mmv-base-v3" / "f.mmv"
    statement = ("import contextlib, io\nfrom pcpconform.cli import main\n"
                 "with contextlib.redirect_stdout(io.StringIO()):\n"
                 f"    main(['dump', {str(mmv)!r}])")
    code = (f"import sys\n{statement}\n"
            "print(sorted(m for m in sys.modules if m.startswith('pcpconform.io')), file=sys.stderr)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stderr.strip() == "[]"


def test_dump_knows_the_mmv_magic_without_the_mmv_modules() -> None:
    assert MMV_MAGIC == SCHEMA_MMV_MAGIC


@pytest.mark.parametrize(("preset", "expected"), [(None, "1"), ("3", "3")])
def test_the_command_starts_numpy_without_openblas_threads(preset: str | None, expected: str) -> None:
    """OpenBLAS's thread pool, started by importing numpy, costs every command about 0.15 s
    of CPU and the kit does no linear algebra: the command asks for one thread before numpy
    is imported, and keeps a value the user set."""
    import os

    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    if preset is not None:
        env["OPENBLAS_NUM_THREADS"] = preset
    code = ("import os, sys\nimport pcpconform.cli\nassert 'numpy' not in sys.modules\n"
            "import numpy\nprint(os.environ['OPENBLAS_NUM_THREADS'])\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    assert out.stdout.strip() == expected
