"""Bridge from the project venv to Debian's libpcp (PCP 6.0.3).

The PCP python bindings live in the *system* python (/usr/bin/python3), not
in the venv, so everything that touches libpcp runs in a subprocess:

* ``pmi_write(fixture, base)`` -- tests/differential/libpcp/pmi_write.py writes an archive
  with libpcp_import (pcp.pmi) from a fixture dict (JSON-able, same layout
  as the project's YAML fixtures; see pmi_write.py's docstring).
* ``pm_read(base)`` -- tests/differential/libpcp/pm_read.py reads an archive through the
  PMAPI and returns its JSON document as a dict.
* ``pmdumplog(base, *args)`` / ``pmlogcheck(base, *args)`` -- run the tools.

Nothing here imports PCP, so the module is importable everywhere;
``HAVE_LIBPCP`` says whether the bridge can be used.
"""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = [
    "HAVE_LIBPCP",
    "SYSTEM_PYTHON",
    "LibpcpError",
    "PmiUnsupported",
    "pmi_write",
    "pm_read",
    "pmdumplog",
    "pmlogcheck",
    "expected_value",
]

HERE = Path(__file__).resolve().parent
PMI_WRITE = HERE / "pmi_write.py"
PM_READ = HERE / "pm_read.py"

#: the interpreter that carries Debian's PCP bindings
SYSTEM_PYTHON = os.environ.get("PCPCONFORM_SYSTEM_PYTHON", "/usr/bin/python3")

TIMEOUT = 120

# exit status of pmi_write.py when libpcp_import cannot write the fixture
EXIT_UNSUPPORTED = 3


class LibpcpError(RuntimeError):
    """A bridge script or PCP tool failed."""

    def __init__(self, what: str, proc: subprocess.CompletedProcess):
        self.proc = proc
        self.returncode = proc.returncode
        self.stderr = proc.stderr
        super().__init__(
            f"{what} failed with exit status {proc.returncode}\n"
            f"--- stderr ---\n{proc.stderr}"
        )


class PmiUnsupported(LibpcpError):
    """libpcp_import cannot write what the fixture asks for (exit status 3)."""


def _py_cmd(script: Path, *args: str) -> list[str]:
    # -E: ignore PYTHON* variables of the venv/pyenv; -s: no user site
    return [SYSTEM_PYTHON, "-E", "-s", str(script), *args]


def _probe() -> bool:
    if not os.path.exists(SYSTEM_PYTHON):
        return False
    if shutil.which("pmdumplog") is None:
        return False
    try:
        proc = subprocess.run(
            [SYSTEM_PYTHON, "-E", "-s", "-c",
             "from pcp import pmi, pmapi; import cpmapi, cpmi"],
            capture_output=True, timeout=60,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return proc.returncode == 0


HAVE_LIBPCP: bool = _probe()


def _env(env: Mapping[str, str] | None) -> dict[str, str]:
    out = dict(os.environ)
    if env:
        out.update({k: str(v) for k, v in env.items()})
    return out


def pmi_write(fixture: Mapping[str, Any], base: os.PathLike | str,
              env: Mapping[str, str] | None = None) -> None:
    """Write archive ``base`` (``base.0``, ``base.meta``, ``base.index``) with pmi.

    ``env`` is merged over os.environ, e.g. ``{"PCP_LOGIMPORT_MAXLOGSZ": "600"}``.
    Raises PmiUnsupported (exit 3) or LibpcpError with the script's stderr.
    The archive must not exist yet (libpcp refuses to overwrite).
    """
    base = Path(base)
    with tempfile.NamedTemporaryFile("w", suffix=".json", prefix="pmi-fixture-",
                                     encoding="utf-8", delete=False) as f:
        json.dump(fixture, f)
        path = f.name
    try:
        proc = subprocess.run(_py_cmd(PMI_WRITE, path, str(base)), capture_output=True,
                              text=True, env=_env(env), timeout=TIMEOUT)
    finally:
        os.unlink(path)
    if proc.returncode == EXIT_UNSUPPORTED:
        raise PmiUnsupported(f"pmi_write.py {base}", proc)
    if proc.returncode != 0:
        raise LibpcpError(f"pmi_write.py {base}", proc)


def pm_read(base: os.PathLike | str, env: Mapping[str, str] | None = None) -> dict:
    """Read archive ``base`` through the PMAPI; see pm_read.py for the layout."""
    proc = subprocess.run(_py_cmd(PM_READ, str(base)), capture_output=True, text=True,
                          env=_env(env), timeout=TIMEOUT)
    if proc.returncode != 0:
        raise LibpcpError(f"pm_read.py {base}", proc)
    return json.loads(proc.stdout)


def pmdumplog(base: os.PathLike | str, *args: str) -> subprocess.CompletedProcess:
    """``pmdumplog ARGS BASE`` (text output, not checked)."""
    return subprocess.run(["pmdumplog", *map(str, args), str(base)], capture_output=True,
                          text=True, timeout=TIMEOUT)


def pmlogcheck(base: os.PathLike | str, *args: str) -> subprocess.CompletedProcess:
    """``pmlogcheck ARGS BASE`` (exit status not checked)."""
    return subprocess.run(["pmlogcheck", *map(str, args), str(base)], capture_output=True,
                          text=True, timeout=TIMEOUT)


def expected_value(mtype: str, value: Any) -> Any:
    """Encode a fixture value the way pm_read.py reports it.

    Integers stay ints; float -> "f32:XXXXXXXX", double -> "f64:..." (big-endian
    IEEE bits; "f32:"/"f64:" strings pass through); string -> "str:" + hex;
    aggregate (hex string) -> "agg:" + hex.
    """
    if mtype in ("32", "u32", "64", "u64"):
        return int(value)
    if mtype in ("float", "double"):
        if isinstance(value, str) and value[:4] in ("f32:", "f64:"):
            return value.lower()
        fmt, tag = (">f", "f32:") if mtype == "float" else (">d", "f64:")
        return tag + struct.pack(fmt, float(value)).hex()
    if mtype == "string":
        return "str:" + value.encode("utf-8").hex()
    if mtype == "aggregate":
        return "agg:" + bytes.fromhex(value).hex()
    raise ValueError(f"no encoding for type {mtype!r}")


PM_INTERP = HERE / "pm_interp.py"


def pm_interp(base: os.PathLike | str, start_sec: int, start_nsec: int, delta_nsec: int,
              count: int, pmids: list[str]) -> dict:
    """Replay ``base`` with libpcp's PM_MODE_INTERP; see pm_interp.py for the layout."""
    proc = subprocess.run(_py_cmd(PM_INTERP, str(base), str(start_sec), str(start_nsec),
                                  str(delta_nsec), str(count), *pmids),
                          capture_output=True, text=True, timeout=TIMEOUT)
    if proc.returncode != 0:
        raise LibpcpError(f"pm_interp.py {base}", proc)
    return json.loads(proc.stdout)
