"""A directory of MMV files as the PMDA loads $PCP_TMP_DIR/mmv (MMV-CHK-DIR-1).

The PMDA scans the regular files not starting with "." in alphasort order, loads those whose
header passes, gives each a cluster (the requested one, or the first free one from 1 for 0,
by its own search), and puts every file's metrics and indoms in one namespace: clusters,
InDoms (cluster << 11 | serial, 22 bits) and names can collide across files.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

from pcpconform.check.diagnostics import DiagnosticLimit, Report
from pcpconform.check.mmv.context import MmvContext
from pcpconform.check.mmv.engine import run_check
from pcpconform.check.mmv.header import header_accepted
from pcpconform.check.mmv.indoms import MAX_SERIAL, pmda_indom
from pcpconform.errors import UsageError
from pcpconform.mmv.schema import HEADER_SIZE

__all__ = ["check_mmv_directory", "scanned_files", "choose_cluster"]


def scanned_files(directory: Path) -> list[Path]:
    """The files the PMDA scans, in its order."""
    out = []
    for name in sorted(os.listdir(directory), key=os.fsencode):
        if name.startswith("."):
            continue
        path = directory / name
        try:
            if stat.S_ISREG(os.stat(path).st_mode):
                out.append(path)
        except OSError:
            continue
    return out


def choose_cluster(loaded: list[int], requested: int) -> int | None:
    """choose_cluster of pmdammv: the requested cluster, or for 0 the first one its search
    finds free among the clusters of the files loaded before (None: none left)."""
    if requested:
        return requested
    nxt, i = 1, 0
    while i < len(loaded):
        if loaded[i] == nxt:
            nxt += 1
            i = 0       # the C loop restarts at 0, then its i++ skips entry 0
        i += 1
    return nxt if nxt <= 4095 else None


def check_mmv_directory(path: str | os.PathLike[str],
                        max_diagnostics: int | None = None) -> list[Report]:
    """One report per file the PMDA scans, with the rules across files added to the later
    file of each colliding pair. Raises UsageError when the directory cannot be listed."""
    directory = Path(path)
    try:
        files = scanned_files(directory)
    except OSError as exc:
        raise UsageError(f"{directory}: cannot list the directory: {exc.strerror or exc}") from None
    clusters: list[int] = []
    checked: list[tuple[Report, MmvContext | None, int | None]] = []
    for f in files:
        cluster = _load_cluster(f, clusters)
        report, ctx = run_check(f, max_diagnostics, cluster)
        checked.append((report, ctx, cluster))
    _crossfile(checked)
    return [r for r, _, _ in checked]


def _load_cluster(path: Path, clusters: list[int]) -> int | None:
    """The cluster the PMDA gives the file (appended to clusters), or None if it skips it."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(HEADER_SIZE)
        size = os.stat(path).st_size
    except OSError:
        return None
    if not header_accepted(head, size):
        return None
    cluster = choose_cluster(clusters, int.from_bytes(head[36:40], "little", signed=True))
    if cluster is not None:
        clusters.append(cluster)
    return cluster


def _crossfile(checked: list[tuple[Report, MmvContext | None, int | None]]) -> None:
    owners: dict[int, str] = {}
    indoms: dict[int, tuple[str, int]] = {}
    names: dict[str, str] = {}
    for _report, ctx, cluster in checked:
        if ctx is None or cluster is None:
            continue
        with contextlib.suppress(DiagnosticLimit):
            _one(ctx, cluster, owners, indoms, names)


def _one(ctx: MmvContext, cluster: int, owners: dict[int, str],
         indoms: dict[int, tuple[str, int]], names: dict[str, str]) -> None:
    if cluster in owners:
        ctx.add("mmv.cluster-collision", f"cluster {cluster} is also {owners[cluster]}'s: their"
                f" PMIDs collide and {owners[cluster]} wins", offset=36, field="header.cluster")
    owners.setdefault(cluster, ctx.name)
    for d in ctx.indoms:
        if d.serial > MAX_SERIAL:
            continue
        key = pmda_indom(cluster, d.serial)
        other = indoms.get(key)
        if other is not None and other[0] != ctx.name:
            ctx.add("mmv.indom-collision", f"serial {d.serial} in cluster {cluster} becomes InDom"
                    f" 70.{key}, as serial {other[1]} of {other[0]} does: the PMDA merges their"
                    " instances and keeps the first names", record=d.index, offset=d.offset,
                    field=f"indoms[{d.index}].serial")
        indoms.setdefault(key, (ctx.name, d.serial))
    for m in ctx.metrics:
        if m.exported is None:
            continue
        if m.exported in names and names[m.exported] != ctx.name:
            ctx.add("mmv.metric-name-duplicate", f"{m.exported} is also exported from"
                    f" {names[m.exported]}: the PMDA drops this one silently", record=m.index,
                    offset=m.offset, field=f"metrics[{m.index}].name")
        names.setdefault(m.exported, ctx.name)
