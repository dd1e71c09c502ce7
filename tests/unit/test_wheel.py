"""The package works installed from a wheel, not only from the editable checkout.

The wheel is built (offline, without build isolation) from a copy of the checkout, so the
build leaves nothing in the working tree, and installed with ``--no-deps`` into a fresh
venv. That venv cannot download the third-party dependencies (tests run offline), so a
``.pth`` file adds the test interpreter's site-packages, where they are installed, *after*
the venv's own: a ``.pth`` path line does not run that directory's own ``.pth`` files, so
the editable install of the checkout stays out, and ``pcpconform`` itself comes from the
wheel (asserted below). Every command runs from a directory outside the checkout.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest

import pcpconform

ROOT = Path(__file__).resolve().parents[2]
#: what the wheel is built from (pyproject.toml names README.md as the long description;
#: setup.py installs corpus/ as pcpconform/corpus)
_SOURCES = ("pyproject.toml", "setup.py", "README.md", "pcpconform", "corpus")


def _run(args: list[str | Path], cwd: Path, *, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    proc = subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout, check=False)
    assert proc.returncode == 0, f"{args} exited {proc.returncode}:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
    return proc


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    src = tmp_path_factory.mktemp("src")
    for name in _SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, src / name,
                            ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", "*.so"))   # compiled afresh
        else:
            shutil.copy2(ROOT / name, src / name)
    out = tmp_path_factory.mktemp("dist")
    # setuptools>=77 (tools/setup.sh installs it) builds without isolation, so offline
    _run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", out, src], src)
    (built,) = out.glob("pcpconform-*.whl")
    return built


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bin directory of a fresh venv with the wheel installed."""
    env = tmp_path_factory.mktemp("venv")
    venv.EnvBuilder(with_pip=False).create(env)
    python = env / "bin" / "python"
    _run([sys.executable, "-m", "pip", "--python", python, "install", "--quiet", "--no-deps",
          "--no-index", wheel], env)
    purelib = Path(_run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                        env).stdout.strip())
    (purelib / "zz_pcpconform_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return env / "bin"


@pytest.fixture()
def outside(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    assert ROOT not in work.resolve().parents
    return work


def test_wheel_contents(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    assert "pcpconform/py.typed" in names
    bundled = {n for n in names if n.startswith("pcpconform/fixtures/bundled/")}
    assert bundled >= {f"pcpconform/fixtures/bundled/{n}.yaml" for n in ("example", "events", "interp-seed")}
    assert all(n.endswith(".yaml") for n in bundled)
    assert not [n for n in names if n.startswith("tests/") or "/tests/" in n or "conftest" in n]
    assert "pcpconform/corpusgen/invalid/__main__.py" in names
    # the conformance corpus, every case of it
    cases = {n.split("/")[4] for n in names if n.startswith("pcpconform/corpus/cases/") and n.endswith("/case.json")}
    committed = {p.parent.name for p in (ROOT / "corpus" / "cases").glob("*/*/case.json")}
    assert cases == committed and "pcpconform/corpus/schema/case.schema.json" in names
    assert wheel.name.startswith(f"pcpconform-{pcpconform.__version__}-")
    # the compiled kernels (MMV dump, result columns, MMV values), built by the wheel's build
    for kernel in ("pcpconform/dump/_mmvrows.", "pcpconform/io/_resultcols.", "pcpconform/mmv/_mmvcols."):
        assert [n for n in names if n.startswith(kernel) and n.endswith(".so")], kernel


def test_installed_package_comes_from_the_wheel(installed: Path, outside: Path) -> None:
    proc = _run([installed / "python", "-c",
                 "import pcpconform, importlib.metadata as m; "
                 "print(pcpconform.__file__); print(m.version('pcpconform'))"], outside)
    where, version = proc.stdout.split()
    assert Path(where).resolve().is_relative_to(installed.parent.resolve())
    assert version == pcpconform.__version__
    kernel = _run([installed / "python", "-c", "from pcpconform.dump import mmv_kernel as k; "
                   "print(k._kernel.__file__ if k._kernel else k.KERNEL_ERROR)"], outside).stdout.strip()
    assert Path(kernel).resolve().is_relative_to(installed.parent.resolve()), kernel
    assert _run([installed / "pcpconform", "--version"], outside).stdout.strip() == \
        f"pcpconform {pcpconform.__version__}"


def test_commands_from_the_wheel(installed: Path, outside: Path) -> None:
    """generate, check and dump of the bundled example (the demo's steps), then the corpus."""
    example = Path(_run([installed / "python", "-c",
                         "from pcpconform.fixtures import bundled_fixture; print(bundled_fixture('example'))"],
                        outside).stdout.strip())
    assert example.resolve().is_relative_to(installed.parent.resolve()) and example.is_file()
    _run([installed / "pcpconform", "generate", example, "-o", "example"], outside)
    assert sorted(p.name for p in outside.iterdir()) == ["example.0", "example.index", "example.meta"]
    assert "clean" in _run([installed / "pcpconform", "check", "example"], outside).stdout
    dump = _run([installed / "pcpconform", "dump", "example"], outside).stdout
    assert "Log Label (Log Format Version 3)" in dump and "Descriptions for Metrics" in dump

    _run([installed / "python", "-m", "pcpconform.corpusgen.invalid", "corpus"], outside)
    assert (outside / "corpus" / "manifest.json").is_file()
    assert len([p for p in (outside / "corpus").iterdir() if p.is_dir()]) > 10


def test_conform_outside_a_checkout(installed: Path, outside: Path) -> None:
    """The corpus comes with the package: conform runs the kit's own adapter on every case
    from a directory with no corpus, and says so in its report."""
    proc = subprocess.run([str(installed / "pcpconform"), "conform", "--impl", "builtin:pcpconform",
                           "-j", "2", "--format", "json"], cwd=outside, capture_output=True, text=True,
                          timeout=600, env={k: v for k, v in os.environ.items()
                                            if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")})
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = json.loads(proc.stdout)
    assert report["ok"] and report["total"]["pass"] > 400 and report["total"]["skip"] == 0
    corpus = Path(report["run_info"]["corpus"])
    assert corpus.resolve().is_relative_to(installed.parent.resolve()), corpus
    assert set(report["summary"]) >= {"validator", "reader", "writer", "mmv-validator", "mmv-writer"}
