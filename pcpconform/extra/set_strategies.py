"""Hypothesis strategies for archive sets: random archives split at random points into 2-5
members, the seams between them made gaps, touching or overlapping, members whose metadata
changes, and damaged members (spec/sets.md).

``archive_sets()`` draws a ``SetPlan``; ``SetPlan.write(directory)`` writes it (every member
with ``pcpconform.fixtures.sets.generate_set``) and returns the source to open: the
directory, or its members joined with commas in a drawn order. Requires hypothesis.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from pcpconform.extra import require
from pcpconform.extra.strategies import fixtures
from pcpconform.fixtures.fixture import Fixture, InDomSpec, MetricSpec, Sample
from pcpconform.fixtures.sets import DAMAGE, SetMemberSpec, first_time, generate_set, last_time, shifted, split_fixture
from pcpconform.format.pmtypes import PmID, PmInDom, PmSem, PmType, PmUnits, Timestamp
from pcpconform.io.setform import namelist

if TYPE_CHECKING:
    from hypothesis import strategies as st
else:
    st = require("hypothesis.strategies", "strategies", "pcpconform.extra.set_strategies")

__all__ = ["SEAMS", "CHANGES", "SetPlan", "archive_sets"]

#: how a member follows the one before it
SEAMS = ("split", "gap", "touch", "touch-1ms", "overlap", "same-start")
#: what can change in a member's metadata (or label) from the member before it
CHANGES = ("type", "sem", "units", "indom", "rename", "pmid", "host", "timezone", "text",
           "instances", "version")

_SEC = 1_000_000_000


@dataclass
class SetPlan:
    members: list[SetMemberSpec]
    seams: list[str] = field(default_factory=list)
    changes: list[tuple[int, str]] = field(default_factory=list)    # (member, change)
    order: list[int] | None = None      # a comma-separated list in this order, else the directory
    #: the directory's namelist order drawn (its members' positions): when ``readdir`` lists
    #: the directory otherwise, the set is given as the list in this order instead, so the
    #: namelist is the draw's, never the file system's (SET-FORM-1: the two are one namelist)
    listing: list[int] | None = None
    #: whether ``write`` gave the directory itself (else a list)
    as_directory: bool = field(default=False, init=False)

    def write(self, directory: Path) -> str:
        """Write the members into ``directory``; the set's name as a client gives it."""
        bases = generate_set(self.members, directory)
        order = self.order
        if order is None and self.listing is not None and namelist(directory) != [str(bases[i]) for i in self.listing]:
            order = self.listing
        self.as_directory = order is None
        if order is None:
            return str(directory)
        return ",".join(str(bases[i]) for i in order)

    def describe(self) -> str:
        return (f"{len(self.members)} members, seams {self.seams}, changes {self.changes}, "
                f"damage {[(m.name, m.damage) for m in self.members if m.damage]}, "
                f"{'list ' + str(self.order) if self.order is not None else 'directory'}"
                f"{' listed ' + str(self.listing) if self.listing is not None else ''}"
                f"{' (given as that list)' if self.listing is not None and not self.as_directory else ''}")


def _changed_metric(draw: st.DrawFn, f: Fixture, change: str) -> Fixture:
    """``f`` with one metric's descriptor, name or pmID changed from ``change``'s kind."""
    f = copy.copy(f)
    numeric = [m for m in f.metrics if m.type != PmType.STRING]
    pool = numeric if change in ("type", "indom") else f.metrics
    if change == "indom":
        pool = [m for m in numeric if m.indom.is_null]
    if not pool:
        return f
    old = draw(st.sampled_from(pool), label=f"{change} metric")
    new: MetricSpec
    convert = None
    if change == "type":
        new = replace(old, type=PmType.DOUBLE if old.type != PmType.DOUBLE else PmType.I64)
        convert = float if new.type == PmType.DOUBLE else (lambda v: max(min(int(v), (1 << 63) - 1), -(1 << 63))
                                                           if v == v and abs(v) != float("inf") else 0)
    elif change == "sem":
        new = replace(old, sem=int(draw(st.sampled_from([s for s in PmSem if int(s) != old.sem]))))
    elif change == "units":
        units = PmUnits(1, 0, 0, 1, 0, 0) if old.units != PmUnits(1, 0, 0, 1, 0, 0) else PmUnits(0, 1, 0, 0, 3, 0)
        new = replace(old, units=units)
    elif change == "indom":
        indom = PmInDom(f"{PmID(old.pmid).domain}.411")
        f.indoms = {**f.indoms, int(indom): InDomSpec(indom, {"only": 0})}
        new = replace(old, indom=indom)
    elif change == "rename":
        new = replace(old, name=old.name + "_renamed")
    else:                                               # "pmid": the name moves to another pmID
        used = {int(m.pmid) for m in f.metrics}
        d, c, i = PmID(old.pmid).domain, PmID(old.pmid).cluster, PmID(old.pmid).item
        candidates = [PmID.from_parts(d, c, k) for k in range(1024) if int(PmID.from_parts(d, c, k)) not in used]
        new = replace(old, pmid=candidates[(i * 7 + 1) % len(candidates)])
    f.metrics = [new if m is old else m for m in f.metrics]
    samples = []
    for s in f.samples:
        values = []
        for m, insts in s.values:
            if m is old:
                pairs = [(0 if change == "indom" else inst, convert(v) if convert else v) for inst, v in insts]
                values.append((new, pairs))
            else:
                values.append((m, insts))
        samples.append(Sample(s.kind, s.time, values, s.instances))
    f.samples = samples
    return f


def _changed(draw: st.DrawFn, f: Fixture, change: str) -> Fixture:
    if change in ("type", "sem", "units", "indom", "rename", "pmid"):
        return _changed_metric(draw, f, change)
    f = copy.copy(f)
    if change == "host":
        f.hostname = "other." + f.hostname
    elif change == "timezone":
        f.timezone = "AEST-10" if f.timezone != "AEST-10" else "UTC"
    elif change == "text":
        f.metrics = [replace(m, text={"oneline": f"changed {m.name}"}) for m in f.metrics]
    elif change == "instances":
        f.indoms = {k: replace(d, instances={n + "x": i for n, i in d.instances.items()})
                    for k, d in f.indoms.items()}
    elif change == "version" and (f.version == 2 or all(s.time is None or s.time.nsec % 1000 == 0
                                                        for s in f.samples)):
        f.version = 5 - f.version
    return f


@st.composite
def archive_sets(draw: st.DrawFn, *, max_members: int = 5, seams: tuple[str, ...] = SEAMS,
                 changes: tuple[str, ...] = CHANGES, damage: bool = True,
                 lists: bool = True) -> SetPlan:
    """Draw a set: a random archive cut into members, seams, changes and damage."""
    base = draw(fixtures(max_samples=12), label="archive")
    values = [i for i, s in enumerate(base.samples) if s.kind == "values"]
    if len(values) < 2:
        base.samples.append(Sample("values", Timestamp.from_nsec(last_time(base).total_nsec() + 10 * _SEC),
                                    base.samples[0].values))
        values = [i for i, s in enumerate(base.samples) if s.kind == "values"]
    n = draw(st.integers(2, min(max_members, len(values))), label="members")
    cuts = sorted(draw(st.lists(st.integers(1, len(values) - 1), min_size=n - 1, max_size=n - 1,
                                unique=True), label="cuts"))
    pieces = split_fixture(base, cuts)
    plan = SetPlan([])
    shift = 0
    out: list[Fixture] = []
    for k, piece in enumerate(pieces):
        piece = shifted(piece, shift)
        if k:
            kind = draw(st.sampled_from(seams), label=f"seam {k}")
            prev_last = last_time(out[-1]).total_nsec()
            first = first_time(piece).total_nsec()
            step = 1000 if piece.version == 2 else 1
            if kind == "gap":
                move = draw(st.integers(1, 3600), label="gap s") * _SEC
            elif kind == "touch":
                move = prev_last - first
            elif kind == "touch-1ms":
                move = prev_last + 1_000_000 - first
            elif kind == "overlap":
                prev_first = first_time(out[-1]).total_nsec()
                back = draw(st.integers(1, max(1, (prev_last - prev_first) // step)), label="overlap") * step
                move = prev_last - back - first
                if first + move == prev_first:
                    move += step
            elif kind == "same-start":
                move = first_time(out[-1]).total_nsec() - first
            else:
                move = 0
            piece = shifted(piece, move)
            shift += move
            plan.seams.append(kind)
            if changes and draw(st.integers(0, 3), label=f"change {k}?") == 0:
                change = draw(st.sampled_from(changes), label=f"change {k}")
                piece = _changed(draw, piece, change)
                plan.changes.append((k, change))
        out.append(piece)
    names = draw(st.lists(st.from_regex(r"[a-z][a-z0-9]{0,5}", fullmatch=True), min_size=len(out),
                          max_size=len(out), unique=True), label="names")
    hurt = draw(st.integers(-1, len(out) - 1), label="damaged member") if damage else -1
    harm = draw(st.sampled_from(list(DAMAGE)), label="damage") if hurt >= 0 else None
    if hurt >= 0 and draw(st.integers(0, 2), label="damage?") != 0:
        hurt = -1
    plan.members = [SetMemberSpec(name, f, harm if k == hurt else None) for k, (name, f) in enumerate(zip(names, out))]
    if lists and draw(st.booleans(), label="as a list"):
        plan.order = draw(st.permutations(range(len(out))), label="list order")
    elif lists:
        plan.listing = draw(st.permutations(range(len(out))), label="directory order")
    return plan
