"""Archive sets read by a real libpcp (a ``Referee``) and by the kit, in comparable forms.

A set is given as a ``SetSource``: a directory (``members`` None), or a comma-separated list
of members of one directory (``members`` their base names, in list order). Both are copied
into a chroot whole, so ``readdir`` there sees the same names (and the kit reads the same
namelist order from the copy's directory as libpcp does: ``namelist`` on ``where``).

* ``set_read(referee, source)`` -- tests/differential/libpcp/pm_set.py ``read``;
* ``set_interp(referee, source, start, delta, count, pmids)`` -- its ``interp``: a
  ``SetInterp`` with the fetches libpcp finished and whether it then died by a signal;
* ``kit_interp(source, ...)`` -- the oracle on ``ArchiveSet``, in the same form.

Nothing here imports PCP.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pcpconform.format.pmtypes import PmID, Timestamp
from pcpconform.io.archiveset import ArchiveSet
from pcpconform.oracles.interp.builtin import builtin_desc
from pcpconform.oracles.interp.model import NoValue
from pcpconform.oracles.interp.setreplay import open_set_replay
from tests.differential.libpcp.compare import libpcp_encoding
from tests.differential.libpcp.referees import LibpcpError, Referee

__all__ = ["SetSource", "SetInterp", "set_read", "set_interp", "kit_interp", "PM_SET"]

HERE = Path(__file__).resolve().parent
PM_SET = HERE / "pm_set.py"
PM_READ = HERE / "pm_read.py"


@dataclass(frozen=True)
class SetSource:
    """A directory, or members of it joined with commas (``members``)."""

    directory: Path
    members: tuple[str, ...] | None = None

    def name(self) -> str:
        """The name libpcp (and the kit) is given on this host."""
        if self.members is None:
            return str(self.directory)
        return ",".join(str(self.directory / m) for m in self.members)

    def args(self) -> list[os.PathLike[str]]:
        if self.members is None:
            return [self.directory]
        return [self.directory / m for m in self.members]


@dataclass
class SetInterp:
    """What a replay gave: per finished fetch ``{"time", "eol", "error", "values"}`` (values
    as in interp_bridge.View), and the signal that killed libpcp, if one did."""

    fetches: list[dict[str, Any]]
    signal: int | None = None
    open_error: str | None = None


def _run(referee: Referee, source: SetSource, *args: str | os.PathLike[str]) -> Any:
    return referee.python(PM_SET, *args, *source.args(), files=[PM_READ], dirs=[source.directory])


def set_read(referee: Referee, source: SetSource) -> dict[str, Any]:
    """pm_set.py read: the set as ``referee``'s libpcp reads it."""
    proc = _run(referee, source, "read")
    if proc.returncode != 0:
        raise LibpcpError(f"pm_set.py read {source.name()} ({referee.name})", proc)
    doc: dict[str, Any] = json.loads(proc.stdout)
    return doc


def set_interp(referee: Referee, source: SetSource, start: Timestamp, delta: int, count: int,
               pmids: Sequence[int]) -> SetInterp:
    proc = _run(referee, source, "interp", str(start.sec), str(start.nsec), str(delta), str(count),
                ",".join(str(PmID(p)) for p in pmids))
    lines = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    if lines and "open_error" in lines[0]:
        return SetInterp([], open_error=lines[0]["open_error"])
    if proc.returncode > 0 or (proc.returncode == 0 and len(lines) != count):
        raise LibpcpError(f"pm_set.py interp {source.name()} ({referee.name})", proc)
    fetches = []
    for s in lines:
        values: dict[str, Any] = {str(PmID(p)): [] for p in pmids} if not (s["eol"] or s["error"]) else {}
        values.update({k: (v["values"] if v["numval"] > 0 else []) for k, v in s["values"].items()})
        fetches.append({"time": s["time"], "eol": s["eol"], "error": s["error"], "values": values})
    return SetInterp(fetches, -proc.returncode if proc.returncode < 0 else None)


def kit_interp(source: SetSource, profile: str, rules: str, start: Timestamp, delta: int, count: int,
               pmids: Sequence[int], emulate: Sequence[str] = ()) -> list[dict[str, Any]]:
    """The oracle's replay of the set, in set_interp's form, by the replay the interp command
    uses (member by member forwards, see open_set_replay)."""
    s = ArchiveSet(source.name(), profile=profile, direction=1 if delta >= 0 else -1)
    replay = open_set_replay(s, list(pmids), rules=rules, emulate=emulate, forward=delta >= 0)
    out = []
    for sample in replay.schedule(start, delta, count):
        values = {}
        if not sample.eol:
            for pmid, insts in sample.values.items():
                ptype = builtin_desc(s, pmid).type
                values[str(PmID(pmid))] = sorted([inst, libpcp_encoding(v, ptype)] for inst, v in insts.items()
                                                 if not isinstance(v, NoValue))
        out.append({"time": [sample.time.sec, sample.time.nsec], "eol": sample.eol, "error": None,
                    "values": values})
    return out
