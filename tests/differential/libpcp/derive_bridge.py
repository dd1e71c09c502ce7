"""Derived-metric parsing by a real libpcp (a ``Referee``): pm_derive_parse.py in its Python.

Every call runs tests/differential/libpcp/pm_derive_parse.py (see its docstring for the
JSON it speaks) in one process of ``referee``:

* ``register(exprs, referee)`` -- pmRegisterDerived() on each expression, in order:
  ``[{"ok", "pos", "msg"}, ...]``.
* ``errmsg(exprs, referee)`` -- pmRegisterDerivedMetric(): ``[{"rc", "errmsg"}, ...]``.
* ``load_config(cases, referee)`` -- pmLoadDerivedConfig() per case in a fresh libpcp;
  a case is ``{"files": {relpath: bytes|str}, "path": "a.conf:dir", "dirs": [...]}``.

A process that libpcp kills raises ``LibpcpError`` (``returncode`` < 0: the signal).
Nothing here imports PCP.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from tests.differential.libpcp.referees import LibpcpError, Referee

__all__ = ["SCRIPT", "register", "errmsg", "load_config"]

SCRIPT = Path(__file__).resolve().parent / "pm_derive_parse.py"


def _expr(e: str | bytes) -> Any:
    if isinstance(e, bytes):
        return {"hex": e.hex()}
    return e


def _run(request: dict[str, Any], referee: Referee) -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory(prefix="pcpconform-derive-") as d:
        req = Path(d) / "derive-request.json"
        req.write_text(json.dumps(request), encoding="utf-8")
        proc = referee.python(SCRIPT, req, files=[req])
    if proc.returncode != 0:
        raise LibpcpError(f"pm_derive_parse.py ({referee.name})", proc)
    results: list[dict[str, Any]] = json.loads(proc.stdout)["results"]
    return results


def register(exprs: Iterable[str | bytes], referee: Referee) -> list[dict[str, Any]]:
    """pmRegisterDerived("d.e<i>", expr) for each expression, in one process."""
    return _run({"mode": "register", "exprs": [_expr(e) for e in exprs]}, referee)


def errmsg(exprs: Iterable[str | bytes], referee: Referee) -> list[dict[str, Any]]:
    """pmRegisterDerivedMetric("d.e<i>", expr, &errmsg) for each expression, in one process."""
    return _run({"mode": "errmsg", "exprs": [_expr(e) for e in exprs]}, referee)


def load_config(cases: Iterable[dict[str, Any]], referee: Referee) -> list[dict[str, Any]]:
    """pmLoadDerivedConfig(case["path"]) in a fresh libpcp per case (see the module docstring)."""
    req = []
    for case in cases:
        files = {rel: (c if isinstance(c, bytes) else c.encode("utf-8")).hex()
                 for rel, c in case["files"].items()}
        req.append({"files": files, "path": case["path"], "dirs": list(case.get("dirs", ()))})
    return _run({"mode": "config", "cases": req}, referee)
