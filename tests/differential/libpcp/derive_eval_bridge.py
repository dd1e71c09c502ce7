"""Run tests/differential/libpcp/pm_derive.py against libpcp 6.0.3 (host) or 6.3.x (trixie chroot).

``pm_derive(version, request, base=None)`` writes ``request`` (see pm_derive.py) to a file,
runs the script under the matching system python and returns its JSON document.
``version`` is ``"pcp-6.0"`` (Debian's 6.0.3 on the host) or ``"pcp-6.3"`` (the chroot).
Nothing here imports PCP.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from . import bridge, chroot

__all__ = ["PM_DERIVE", "available", "pm_derive"]

PM_DERIVE = Path(__file__).resolve().parent / "pm_derive.py"


def available(version: str) -> bool:
    """Whether the libpcp of this profile can be run here."""
    return bridge.HAVE_LIBPCP if version == "pcp-6.0" else chroot.HAVE_TRIXIE


def pm_derive(version: str, request: dict[str, Any],
              base: os.PathLike[str] | str | None = None) -> dict[str, Any]:
    """pm_derive.py's answer for ``request`` (on archive ``base`` if given)."""
    with tempfile.TemporaryDirectory(prefix="pcpconform-derive-") as tmp:
        req = Path(tmp) / "derive-request.json"
        req.write_text(json.dumps(request), encoding="utf-8")
        if version == "pcp-6.0":
            args = [str(req)] + ([str(base)] if base is not None else [])
            proc = subprocess.run([bridge.SYSTEM_PYTHON, "-E", "-s", str(PM_DERIVE), *args],
                                  capture_output=True, text=True, timeout=bridge.TIMEOUT,
                                  env={**os.environ, "PCP_DERIVED_CONFIG": ""})
        elif version == "pcp-6.3":
            files = [req, bridge.PM_READ]
            pargs: list[Any] = [req]
            if base is not None:
                files += chroot.archive_files(base)
                pargs.append(Path(base))
            proc = chroot.run_python(PM_DERIVE, *pargs, files=files,
                                     env={"PCP_DERIVED_CONFIG": ""})
        else:
            raise ValueError(f"no libpcp for profile {version!r}")
    if proc.returncode != 0:
        raise bridge.LibpcpError(f"pm_derive.py ({version})", proc)
    return json.loads(proc.stdout)
