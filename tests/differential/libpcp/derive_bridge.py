"""Derived-metric parsing by the real libpcp: 6.0.3 on the host, 6.3.x in the trixie chroot.

Both run tests/differential/libpcp/pm_derive_parse.py (see its docstring for the JSON it speaks):

* ``register(exprs, version)`` -- pmRegisterDerived() on each expression, in order, in one
  process: ``[{"ok", "pos", "msg"}, ...]``.
* ``errmsg(exprs, version)`` -- pmRegisterDerivedMetric(): ``[{"rc", "errmsg"}, ...]``.
* ``load_config(cases, version)`` -- pmLoadDerivedConfig() per case in a fresh libpcp;
  a case is ``{"files": {relpath: bytes|str}, "path": "a.conf:dir", "dirs": [...]}``.

``version`` is "6.0" (host, needs ``bridge.HAVE_LIBPCP``) or "6.3" (chroot, needs
``chroot.HAVE_TRIXIE``). Nothing here imports PCP.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from . import bridge, chroot

__all__ = ["SCRIPT", "VERSIONS", "available", "register", "errmsg", "load_config", "PROFILE_OF"]

SCRIPT = Path(__file__).resolve().parent / "pm_derive_parse.py"
VERSIONS = ("6.0", "6.3")
#: the pcpconform profile that models each libpcp
PROFILE_OF = {"6.0": "pcp-6.0", "6.3": "pcp-6.3"}


def available(version: str) -> bool:
    return bridge.HAVE_LIBPCP if version == "6.0" else chroot.HAVE_TRIXIE


def _expr(e: str | bytes) -> Any:
    if isinstance(e, bytes):
        return {"hex": e.hex()}
    return e


def _run(request: dict, version: str) -> list[dict]:
    with tempfile.TemporaryDirectory(prefix="pcpconform-derive-") as d:
        req = Path(d) / "derive-request.json"
        req.write_text(json.dumps(request), encoding="utf-8")
        if version == "6.0":
            proc = subprocess.run([bridge.SYSTEM_PYTHON, "-E", "-s", str(SCRIPT), str(req)],
                                  capture_output=True, text=True, timeout=bridge.TIMEOUT)
        elif version == "6.3":
            proc = chroot.run_python(SCRIPT, req, files=[req])
        else:
            raise ValueError(f"version must be one of {VERSIONS}")
    if proc.returncode != 0:
        raise bridge.LibpcpError(f"pm_derive_parse.py ({version})", proc)
    return json.loads(proc.stdout)["results"]


def register(exprs: Iterable[str | bytes], version: str) -> list[dict]:
    """pmRegisterDerived("d.e<i>", expr) for each expression, in one process."""
    return _run({"mode": "register", "exprs": [_expr(e) for e in exprs]}, version)


def errmsg(exprs: Iterable[str | bytes], version: str) -> list[dict]:
    """pmRegisterDerivedMetric("d.e<i>", expr, &errmsg) for each expression, in one process."""
    return _run({"mode": "errmsg", "exprs": [_expr(e) for e in exprs]}, version)


def load_config(cases: Iterable[dict], version: str) -> list[dict]:
    """pmLoadDerivedConfig(case["path"]) in a fresh libpcp per case (see the module docstring)."""
    req = []
    for case in cases:
        files = {rel: (c if isinstance(c, bytes) else c.encode("utf-8")).hex()
                 for rel, c in case["files"].items()}
        req.append({"files": files, "path": case["path"], "dirs": list(case.get("dirs", ()))})
    return _run({"mode": "config", "cases": req}, version)
