"""Reading and writing archives through a real libpcp (a ``Referee``).

The PCP Python bindings live in each PCP's own system Python, so everything that touches
libpcp runs as a subprocess of ``referee`` (tests/differential/libpcp/referees.py):

* ``pmi_write(referee, fixture, base)`` -- pmi_write.py writes archive ``base`` with that
  PCP's libpcp_import from a fixture dict (JSON-able; see pmi_write.py's docstring). For a
  chroot the archive is written inside it and its files are copied back beside ``base``.
* ``pm_read(referee, base)`` -- pm_read.py reads archive ``base`` through that PCP's PMAPI
  and returns its JSON document.
* ``pmdumplog(referee, base, *args)`` / ``pmlogcheck(referee, base, *args)`` -- the tools.

Nothing here imports PCP.
"""

from __future__ import annotations

import json
import os
import struct
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pcpconform.conform.adapters.libpcp import PMI_WRITE  # the package's one copy, run by the referee's Python
from tests.differential.libpcp.referees import LibpcpError, Referee, archive_files

__all__ = [
    "LibpcpError",
    "PmiUnsupported",
    "expected_value",
    "pm_read",
    "pmdumplog",
    "pmi_write",
    "pmlogcheck",
]

HERE = Path(__file__).resolve().parent
PM_READ = HERE / "pm_read.py"

# exit status of pmi_write.py when libpcp_import cannot write the fixture
EXIT_UNSUPPORTED = 3


class PmiUnsupported(LibpcpError):
    """libpcp_import cannot write what the fixture asks for (exit status 3)."""


def _files(base: os.PathLike[str] | str) -> list[Path]:
    files = archive_files(base)
    if not files:
        raise FileNotFoundError(f"no archive files for base {base}")
    return files


def pmi_write(referee: Referee, fixture: Mapping[str, Any], base: os.PathLike[str] | str,
              env: Mapping[str, str] | None = None) -> None:
    """Write archive ``base`` (``base.0``, ``base.meta``, ``base.index`` ...) with ``referee``'s
    libpcp_import.

    ``env`` is added to the script's environment, e.g. ``{"PCP_LOGIMPORT_MAXLOGSZ": "600"}``.
    Raises PmiUnsupported (exit 3) or LibpcpError with the script's stderr. The archive
    must not exist yet (libpcp refuses to overwrite).
    """
    base = Path(base)
    with tempfile.TemporaryDirectory(prefix="pcpconform-pmi-") as d:
        doc = Path(d) / "pmi-fixture.json"
        doc.write_text(json.dumps(fixture), encoding="utf-8")
        proc = referee.python(PMI_WRITE, doc, base, files=[doc], outputs=[base], env=env)
    what = f"pmi_write.py {base} ({referee.name})"
    if proc.returncode == EXIT_UNSUPPORTED:
        raise PmiUnsupported(what, proc)
    if proc.returncode != 0:
        raise LibpcpError(what, proc)


def pm_read(referee: Referee, base: os.PathLike[str] | str,
            env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Read archive ``base`` through ``referee``'s PMAPI; see pm_read.py for the layout."""
    base = Path(base)
    proc = referee.python(PM_READ, base, files=_files(base), env=env)
    if proc.returncode != 0:
        raise LibpcpError(f"pm_read.py {base} ({referee.name})", proc)
    doc: dict[str, Any] = json.loads(proc.stdout)
    return doc


def pmdumplog(referee: Referee, base: os.PathLike[str] | str, *args: str) -> subprocess.CompletedProcess[str]:
    """``pmdumplog ARGS BASE`` of ``referee`` (text output; exit status not checked)."""
    return referee.on_archive(["pmdumplog", *map(str, args), Path(base)], base)


def pmlogcheck(referee: Referee, base: os.PathLike[str] | str, *args: str) -> subprocess.CompletedProcess[str]:
    """``pmlogcheck ARGS BASE`` of ``referee`` (exit status not checked)."""
    return referee.on_archive(["pmlogcheck", *map(str, args), Path(base)], base)


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
