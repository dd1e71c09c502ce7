"""The public API: pcpconform.__all__, the version, the error hierarchy, a cheap import."""

from __future__ import annotations

import importlib.metadata
import inspect
import json
import subprocess
import sys
from pathlib import Path

import pytest

import pcpconform
import pcpconform.errors
from pcpconform.cli import main

#: third-party packages that ``import pcpconform`` must not pull in (start-up stays cheap)
_HEAVY = ("construct", "numpy", "lark", "yaml", "rich", "zstandard", "hypothesis", "matplotlib")


def _python(code: str) -> str:
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return proc.stdout


def test_every_public_name_resolves() -> None:
    for name in pcpconform.__all__:
        assert getattr(pcpconform, name) is not None, name
    assert sorted(pcpconform.__all__) == dir(pcpconform)
    assert len(set(pcpconform.__all__)) == len(pcpconform.__all__)


def test_lazy_names_resolve_in_a_fresh_interpreter() -> None:
    """Each lazy name resolves through ``__getattr__`` to the object its module defines."""
    code = (
        "import importlib, json, pcpconform\n"
        "out = {}\n"
        "for name, module in pcpconform._LAZY.items():\n"
        "    value = getattr(pcpconform, name)\n"
        "    out[name] = value is getattr(importlib.import_module(module), name)\n"
        "print(json.dumps(out))\n")
    resolved = json.loads(_python(code))
    assert resolved and all(resolved.values()), resolved
    assert set(resolved) <= set(pcpconform.__all__)


def test_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        pcpconform.no_such_name  # noqa: B018


def test_version_agrees_everywhere(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["--version"])
    assert stop.value.code == 0
    assert capsys.readouterr().out.strip() == f"pcpconform {pcpconform.__version__}"
    assert importlib.metadata.version("pcpconform") == pcpconform.__version__
    script = Path(sys.executable).parent / "pcpconform"     # the installed console script
    proc = subprocess.run([script, "--version"], capture_output=True, text=True, check=True)
    assert proc.stdout.strip() == f"pcpconform {pcpconform.__version__}"


def test_public_exceptions_derive_from_the_root() -> None:
    classes = [obj for name in pcpconform.errors.__all__
               if inspect.isclass(obj := getattr(pcpconform.errors, name))
               and issubclass(obj, BaseException)]
    assert len(classes) >= 8
    for cls in classes:
        assert issubclass(cls, pcpconform.errors.PcpConformError), cls
        assert getattr(pcpconform, cls.__name__) is cls     # exported at the top level too
    # and nothing public in the module raises outside the hierarchy
    for name, obj in vars(pcpconform.errors).items():
        if inspect.isclass(obj) and issubclass(obj, Exception) and obj.__module__ == "pcpconform.errors" \
                and not name.startswith("_"):
            assert obj in classes, f"{name} is not in pcpconform.errors.__all__"


def test_import_is_cheap() -> None:
    loaded = json.loads(_python(
        "import json, sys, pcpconform\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in "
        f"{_HEAVY!r})))\n"))
    assert loaded == []


def test_import_cost_check_can_fail() -> None:
    """The check above sees a heavy import when one happens (using a public name does)."""
    loaded = json.loads(_python(
        "import json, sys, pcpconform\n"
        "pcpconform.Archive\n"
        "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))\n"))
    assert "construct" in loaded


@pytest.mark.parametrize(("module", "package", "extra"), [
    ("pcpconform.extra.strategies", "hypothesis", "strategies"),
    ("pcpconform.extra.schemagen", "hypothesis", "strategies"),
    ("pcpconform.extra.plot", "matplotlib", "plot"),
])
def test_missing_extra_says_what_to_install(module: str, package: str, extra: str) -> None:
    out = _python(
        f"import sys\nsys.modules[{package!r}] = None   # as if not installed\n"
        "from pcpconform.extra import MissingExtra\n"
        f"try:\n    import {module}\nexcept MissingExtra as exc:\n    print(exc)\n")
    assert f"pcpconform[{extra}]" in out and package in out
