"""Interpolation by a real libpcp (a ``Referee``) and by the oracle, in one comparable form.

* ``pm_interp(referee, base, start_sec, start_nsec, delta_nsec, count, pmids)`` --
  tests/differential/libpcp/pm_interp.py (PM_MODE_INTERP, one pmFetchHighRes per fetch)
  under ``referee``'s Python; see that script for the JSON it prints. pm_read.py goes beside
  it (it encodes the values). A process that libpcp kills raises ``LibpcpError`` with
  ``returncode`` < 0 (the signal).
* ``libpcp_view(referee, ...)`` / ``oracle_view(base, ...)`` -- per fetch
  ``{"time": [sec, nsec], "eol": bool, "values": {"d.c.i": [[inst, VALUE], ...]}}`` with
  VALUE encoded as pm_read.py encodes it, instances sorted, valueless instances left out.

Nothing here imports PCP.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pcpconform.format.pmtypes import PmID, Timestamp
from pcpconform.io.archive import Archive
from pcpconform.oracles.interp.builtin import builtin_desc
from pcpconform.oracles.interp.model import NoValue
from pcpconform.oracles.interp.replay import interpolate
from tests.differential.libpcp.compare import libpcp_encoding
from tests.differential.libpcp.referees import LibpcpError, Referee, archive_files

__all__ = ["PM_INTERP", "PM_READ", "pm_interp", "libpcp_view", "oracle_view"]

HERE = Path(__file__).resolve().parent
PM_INTERP = HERE / "pm_interp.py"
PM_READ = HERE / "pm_read.py"

View = list[dict[str, Any]]


def pm_interp(referee: Referee, base: os.PathLike[str] | str, start_sec: int, start_nsec: int,
              delta_nsec: int, count: int, pmids: Sequence[str]) -> dict[str, Any]:
    """Replay ``base`` with ``referee``'s PM_MODE_INTERP; pmids as "domain.cluster.item"."""
    base = Path(base)
    files = archive_files(base)
    if not files:
        raise FileNotFoundError(f"no archive files for base {base}")
    proc = referee.python(PM_INTERP, base, str(start_sec), str(start_nsec), str(delta_nsec),
                          str(count), *pmids, files=[*files, PM_READ])
    if proc.returncode != 0:
        raise LibpcpError(f"pm_interp.py {base} ({referee.name})", proc)
    doc: dict[str, Any] = json.loads(proc.stdout)
    return doc


def libpcp_view(referee: Referee, base: Path, start: Timestamp, delta: int, count: int,
                pmids: Sequence[int]) -> View:
    """What ``referee``'s libpcp returns, in the comparable form."""
    got = pm_interp(referee, base, start.sec, start.nsec, delta, count, [str(PmID(p)) for p in pmids])
    out = []
    for s in got["samples"]:
        # a metric with no value may come back as an empty value set or not at all
        values: dict[str, Any] = {str(PmID(p)): [] for p in pmids} if not s["eol"] else {}
        values.update({k: (v["values"] if v["numval"] > 0 else []) for k, v in s["values"].items()})
        out.append({"time": s["time"], "eol": s["eol"], "values": values})
    return out


def oracle_view(base: Path, start: Timestamp, delta: int, count: int, pmids: Sequence[int],
                rules: str, emulate: Sequence[str] = ()) -> View:
    """What the oracle replays with ``rules`` (and the ``emulate``d deviations)."""
    a = Archive(base)
    out = []
    for s in interpolate(a, list(pmids), start, delta, count, rules=rules, emulate=emulate):
        values = {}
        if not s.eol:
            for pmid, insts in s.values.items():
                ptype = builtin_desc(a, pmid).type
                values[str(PmID(pmid))] = sorted([inst, libpcp_encoding(v, ptype)] for inst, v in insts.items()
                                                 if not isinstance(v, NoValue))
        out.append({"time": [s.time.sec, s.time.nsec], "eol": s.eol, "values": values})
    return out
