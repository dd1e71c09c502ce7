"""Run tests/differential/libpcp/pm_derive.py under a real libpcp (a ``Referee``).

``pm_derive(referee, request, base=None)`` writes ``request`` (see pm_derive.py) to a file,
runs the script under the referee's system Python (on archive ``base`` if given, which may
be the directory of an archive set) and
returns its JSON document. A process that libpcp kills raises ``LibpcpError``
(``returncode`` < 0: the signal). Nothing here imports PCP.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tests.differential.libpcp.referees import LibpcpError, Referee, archive_files

__all__ = ["PM_DERIVE", "pm_derive"]

HERE = Path(__file__).resolve().parent
PM_DERIVE = HERE / "pm_derive.py"
PM_READ = HERE / "pm_read.py"          # pm_derive.py imports its value encoding


def pm_derive(referee: Referee, request: dict[str, Any],
              base: os.PathLike[str] | str | None = None,
              env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """pm_derive.py's answer for ``request`` (on archive ``base`` if given; ``env`` is
    added to the script's environment)."""
    with tempfile.TemporaryDirectory(prefix="pcpconform-derive-") as tmp:
        req = Path(tmp) / "derive-request.json"
        req.write_text(json.dumps(request), encoding="utf-8")
        files = [req, PM_READ]
        args: list[str | os.PathLike[str]] = [req]
        dirs: list[Path] = []
        if base is not None and Path(base).is_dir():
            dirs.append(Path(base))             # an archive set: the directory goes in whole
            args.append(Path(base))
        elif base is not None:
            files += archive_files(base)
            args.append(Path(base))
        proc = referee.python(PM_DERIVE, *args, files=files, dirs=dirs,
                              env={**(env or {}), "PCP_DERIVED_CONFIG": ""})
    if proc.returncode != 0:
        raise LibpcpError(f"pm_derive.py ({referee.name})", proc)
    answer: dict[str, Any] = json.loads(proc.stdout)
    return answer
