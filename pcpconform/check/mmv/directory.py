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
from pcpconform.check.mmv.metrics import report_placement
from pcpconform.errors import UsageError
from pcpconform.mmv.model import TYPE_STRING
from pcpconform.mmv.pmda import choose_cluster
from pcpconform.mmv.pmns import PmdaNamespace
from pcpconform.mmv.schema import HEADER_SIZE

__all__ = ["check_mmv_directory", "check_mmv_member", "scanned_files", "choose_cluster"]

MAX_ITEM = (1 << 10) - 1


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


#: the reports of the last directory check_mmv_member checked, by the state of its files
_MEMBERS: dict[tuple[Path, int | None, tuple[tuple[str, int, int], ...]], dict[str, Report]] = {}


def check_mmv_member(path: str | os.PathLike[str], max_diagnostics: int | None = None) -> Report:
    """The report of one MMV file checked with the files beside it, as the PMDA loads their
    directory (``check DIR`` checks each directory's MMV files so). The directory is checked
    once for all its files while they stay as they are; a file the PMDA does not scan (a
    name starting with ".") is checked alone."""
    p = Path(path)
    directory = p.parent
    try:
        key = (directory.resolve(), max_diagnostics, tuple(
            (f.name, st.st_size, st.st_mtime_ns) for f in scanned_files(directory)
            for st in [os.stat(f)]))
    except OSError:
        return run_check(p, max_diagnostics)[0]
    reports = _MEMBERS.get(key)
    if reports is None:
        _MEMBERS.clear()
        reports = _MEMBERS[key] = {Path(r.archive).name: r
                                   for r in check_mmv_directory(directory, max_diagnostics)}
    return reports.get(p.name) or run_check(p, max_diagnostics)[0]


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
    """The rules across files, in load order; each finding on the later file."""
    across = _Across()
    for _report, ctx, cluster in checked:
        if ctx is None or cluster is None:
            continue
        with contextlib.suppress(DiagnosticLimit):
            across.load(ctx, cluster)


class _Across:
    """What the files loaded so far put into the PMDA's one namespace of PMIDs, InDoms
    and names."""

    def __init__(self) -> None:
        self.clusters: dict[int, list[tuple[str, dict[int, int]]]] = {}  # -> (file, item: type)
        self.indoms: dict[int, tuple[str, int]] = {}
        self.names = PmdaNamespace()
        self.owners: dict[str, tuple[str, int]] = {}      # exported name -> file, metric

    def load(self, ctx: MmvContext, cluster: int) -> None:
        self._cluster(ctx, cluster)
        self._indoms(ctx, cluster)
        self._names(ctx)

    def _cluster(self, ctx: MmvContext, cluster: int) -> None:
        items = {m.item: m.type for m in ctx.metrics if m.item <= MAX_ITEM}
        earlier = self.clusters.setdefault(cluster, [])
        how = "its header's" if ctx.requested_cluster else "the one the PMDA chooses for 0"
        for other, theirs in earlier:
            both = sorted(items.keys() & theirs.keys())
            if both:
                pmids = ", ".join(f"70.{cluster}.{i}" for i in both[:5]) + (" ..." if len(both) > 5 else "")
                items_are = f"{len(both)} items are" if len(both) > 1 else "1 item is"
                mixed = [i for i in both if (items[i] == TYPE_STRING) != (theirs[i] == TYPE_STRING)]
                crash = (f"; a STRING and a number share PMID 70.{cluster}.{mixed[0]}: a fetch of it"
                         " crashes the PMDA" if mixed else "")
                ctx.add("mmv.cluster-collision", f"cluster {cluster} ({how}) is also {other}'s, and"
                        f" {items_are} in both files: under PMIDs {pmids} the PMDA serves"
                        f" {other}'s values and help text with the descriptor of the last file"
                        f" loaded, under both files' names{crash}", offset=36, field="header.cluster")
                break
        else:
            if earlier:
                ctx.add("mmv.cluster-shared", f"cluster {cluster} ({how}) is also"
                        f" {earlier[0][0]}'s: no item is in both files yet, but one added to"
                        " either collides", offset=36, field="header.cluster")
        earlier.append((ctx.name, items))

    def _indoms(self, ctx: MmvContext, cluster: int) -> None:
        for d in ctx.indoms:
            if d.serial > MAX_SERIAL:
                continue
            key = pmda_indom(cluster, d.serial)
            other = self.indoms.get(key)
            if other is not None and other[0] != ctx.name:
                ctx.add("mmv.indom-collision", f"serial {d.serial} in cluster {cluster} becomes"
                        f" InDom 70.{key}, as serial {other[1]} of {other[0]} does: the PMDA"
                        " merges their instances and keeps the first names", record=d.index,
                        offset=d.offset, field=f"indoms[{d.index}].serial")
            self.indoms.setdefault(key, (ctx.name, d.serial))

    def _names(self, ctx: MmvContext) -> None:
        for m in ctx.metrics:
            if m.candidate is None:
                continue
            placed = self.names.add(m.candidate)
            if placed.exported:
                self.owners[m.candidate] = (ctx.name, m.index)
            elif m.exported is not None:     # exported alone, not beside the earlier files
                file, index = self.owners.get(placed.other or "", ("", -1))
                report_placement(ctx, placed, m.candidate, m.index, m.offset,
                                 f"metrics[{index}] of {file}" if file else "the PMDA's own metric")
