"""Interpolation by a real libpcp (a ``Referee``) and by the oracle, in one comparable form.

* ``pm_interp(referee, base, start_sec, start_nsec, delta_nsec, count, pmids)`` --
  tests/differential/libpcp/pm_interp.py (PM_MODE_INTERP, one pmFetchHighRes per fetch)
  under ``referee``'s Python; see that script for the JSON it prints. pm_read.py goes beside
  it (it encodes the values). A process that libpcp kills raises ``LibpcpError`` with
  ``returncode`` < 0 (the signal).
* ``libpcp_segments_view`` / ``oracle_segments_view`` -- the same over several pmSetModes
  in one context (``Segment``: start, interval, count).
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
from pcpconform.oracles.interp.model import NoValue, Sample
from pcpconform.oracles.interp.replay import Replay, interpolate
from tests.differential.libpcp.compare import libpcp_encoding
from tests.differential.libpcp.referees import LibpcpError, Referee, archive_files

__all__ = ["PM_INTERP", "PM_READ", "pm_interp", "libpcp_view", "oracle_view", "libpcp_segments_view",
           "oracle_segments_view", "sample_view", "Segment", "View"]

HERE = Path(__file__).resolve().parent
PM_INTERP = HERE / "pm_interp.py"
PM_READ = HERE / "pm_read.py"

View = list[dict[str, Any]]
#: one pmSetMode's schedule: (start, interval in ns, fetches)
Segment = tuple[Timestamp, int, int]


def pm_interp(referee: Referee, base: os.PathLike[str] | str, start_sec: int, start_nsec: int,
              delta_nsec: int, count: int, pmids: Sequence[str]) -> dict[str, Any]:
    """Replay ``base`` with ``referee``'s PM_MODE_INTERP; pmids as "domain.cluster.item"."""
    return _pm_interp(referee, base, [str(start_sec), str(start_nsec), str(delta_nsec), str(count)], pmids)


def _pm_interp(referee: Referee, base: os.PathLike[str] | str, schedule: Sequence[str],
               pmids: Sequence[str]) -> dict[str, Any]:
    base = Path(base)
    files = archive_files(base)
    if not files:
        raise FileNotFoundError(f"no archive files for base {base}")
    proc = referee.python(PM_INTERP, base, *schedule, *pmids, files=[*files, PM_READ])
    if proc.returncode != 0:
        raise LibpcpError(f"pm_interp.py {base} ({referee.name})", proc)
    doc: dict[str, Any] = json.loads(proc.stdout)
    return doc


def libpcp_view(referee: Referee, base: Path, start: Timestamp, delta: int, count: int,
                pmids: Sequence[int]) -> View:
    """What ``referee``'s libpcp returns, in the comparable form."""
    return _view(pm_interp(referee, base, start.sec, start.nsec, delta, count, [str(PmID(p)) for p in pmids]),
                 pmids)


def libpcp_segments_view(referee: Referee, base: Path, segments: Sequence[Segment],
                         pmids: Sequence[int]) -> View:
    """``referee``'s libpcp on one context: a pmSetMode per segment (start, interval,
    count), each followed by its fetches."""
    spec = json.dumps([[start.sec, start.nsec, delta, count] for start, delta, count in segments])
    return _view(_pm_interp(referee, base, ["--segments", spec], [str(PmID(p)) for p in pmids]), pmids)


def _view(got: dict[str, Any], pmids: Sequence[int]) -> View:
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
    return sample_view(a, interpolate(a, list(pmids), start, delta, count, rules=rules, emulate=emulate))


def oracle_segments_view(base: Path, segments: Sequence[Segment], pmids: Sequence[int], rules: str,
                         emulate: Sequence[str] = (), reposition_on_set_mode: bool = False) -> View:
    """The oracle's one replay, a schedule (a pmSetMode) per segment."""
    a = Archive(base)
    replay = Replay(a, list(pmids), rules=rules, emulate=emulate, reposition_on_set_mode=reposition_on_set_mode)
    return sample_view(a, [s for start, delta, count in segments for s in replay.schedule(start, delta, count)])


def sample_view(a: Archive, samples: Sequence[Sample]) -> View:
    """Oracle samples in the comparable form."""
    out = []
    for s in samples:
        values = {}
        if not s.eol:
            for pmid, insts in s.values.items():
                ptype = builtin_desc(a, pmid).type
                values[str(PmID(pmid))] = sorted([inst, libpcp_encoding(v, ptype)] for inst, v in insts.items()
                                                 if not isinstance(v, NoValue))
        out.append({"time": [s.time.sec, s.time.nsec], "eol": s.eol, "values": values})
    return out
