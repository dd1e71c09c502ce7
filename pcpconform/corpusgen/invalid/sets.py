"""The archive-set cases of the corpus: sets of 2-5 members the kit writes, each showing one
way a set is formed, merged, replayed or refused (spec/sets.md).

Every case starts from one bundled fixture (``interp-seed``: a counter, an instant and a
discrete metric, singular and with instances) cut into members and moved in time, then
changes one thing: a seam, a member's metadata or label, or a member's files. ``SetCase``
names what ``check --set`` must report (errors exactly, warnings and info at least) and
whether libpcp opens and replays the set (``replays``); ``build_set_case(case, directory)``
writes it and returns the source a client is given (the directory, or its members joined
with commas).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from pcpconform.fixtures import bundled_fixture
from pcpconform.fixtures.fixture import Fixture, load_fixture
from pcpconform.fixtures.sets import SetMemberSpec, first_time, generate_set, last_time, shifted, split_fixture
from pcpconform.format.pmtypes import PmType, PmUnits

__all__ = ["SetCase", "SET_CASES", "build_set_case"]

_SEC = 1_000_000_000
Members = list[SetMemberSpec]


@dataclass(frozen=True)
class SetCase:
    name: str
    title: str
    make: Callable[[], Members]
    errors: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    clauses: tuple[str, ...] = ()
    replays: bool = True            # libpcp (every referee) opens the set and replays it
    order: tuple[int, ...] | None = None     # a comma-separated list of these members, in this order
    tags: tuple[str, ...] = field(default=())


def _pieces(n: int = 3) -> list[Fixture]:
    base = load_fixture(bundled_fixture("interp-seed"))
    values = [i for i, s in enumerate(base.samples) if s.kind == "values"]
    step = len(values) // n
    return split_fixture(base, [step * k for k in range(1, n)])


def _series(gaps: list[int], n: int = 3, names: tuple[str, ...] = ("20260101.00.10", "20260102.00.10",
                                                                      "20260103.00.10", "20260104.00.10")) -> Members:
    """``n`` members, each moved so that it starts ``gaps[k-1]`` ns after the last sample of
    the one before (negative: before it)."""
    out: Members = []
    pieces = _pieces(n)
    shift = 0
    for k, piece in enumerate(pieces):
        piece = shifted(piece, shift)
        if k:
            move = last_time(out[-1].fixture).total_nsec() + gaps[k - 1] - first_time(piece).total_nsec()
            piece = shifted(piece, move)
            shift += move
        out.append(SetMemberSpec(names[k], piece))
    return out


def _change(members: Members, k: int, fn: Callable[[Fixture], None]) -> Members:
    f = copy.deepcopy(members[k].fixture)
    fn(f)
    members[k] = replace(members[k], fixture=f)
    return members


def _metric(f: Fixture, metric: str, **changes: object) -> None:
    """Change one metric of ``f`` (every sample refers to the new spec)."""
    old = next(m for m in f.metrics if m.name == metric)
    new = replace(old, **changes)   # type: ignore[arg-type]
    f.metrics = [new if m is old else m for m in f.metrics]
    for s in f.samples:
        s.values = [(new if m is old else m, v) for m, v in s.values]


def _gap() -> Members:
    return _series([600 * _SEC, 3600 * _SEC])


def _damaged(kind: str) -> Callable[[], Members]:
    def make() -> Members:
        members = _gap()
        members[1] = replace(members[1], damage=kind)
        return members
    return make


def _same_start() -> Members:
    members = _gap()[:2]
    move = first_time(members[0].fixture).total_nsec() - first_time(members[1].fixture).total_nsec()
    members[1] = replace(members[1], fixture=shifted(members[1].fixture, move))
    return members


def _versions() -> Members:
    members = _gap()
    return _change(members, 0, lambda f: setattr(f, "version", 2))


SET_CASES: tuple[SetCase, ...] = (
    SetCase("set-gaps", "three daily members with gaps between them", _gap,
            clauses=("SET-FORM-1", "SET-FORM-4", "SET-REPLAY-1", "SET-REPLAY-3", "SET-EOL-1")),
    SetCase("set-split", "three members cut from one recording, each starting at the next sample",
            lambda: _series([2 * _SEC, 2 * _SEC]), clauses=("SET-REPLAY-1", "SET-META-1")),
    SetCase("set-touch", "a member whose first record is at the previous member's last record's time",
            lambda: _series([0, 600 * _SEC]), errors=("set.hidden",), clauses=("SET-REPLAY-2", "SET-REPLAY-3")),
    SetCase("set-touch-1ms", "a member starting 1 ms after the previous member's last record (at its virtual mark)",
            lambda: _series([1_000_000, 600 * _SEC]), clauses=("SET-REPLAY-2",)),
    SetCase("set-overlap", "a member starting before the previous member ends",
            lambda: _series([-5 * _SEC, 600 * _SEC]), errors=("set.overlap", "set.hidden"),
            clauses=("SET-REPLAY-5",), replays=False),
    SetCase("set-same-start", "two members starting at the same time", lambda: _same_start(),
            errors=("set.same-start", "set.overlap", "set.hidden"), clauses=("SET-FORM-4",),
            replays=False),
    SetCase("set-host", "a member recorded on another host",
            lambda: _change(_gap(), 1, lambda f: setattr(f, "hostname", "other.example.com")),
            errors=("set.host",), clauses=("SET-FORM-5",), replays=False),
    SetCase("set-timezone", "a member in another timezone",
            lambda: _change(_gap(), 2, lambda f: setattr(f, "timezone", "AEST-10")),
            warnings=("set.timezone",), clauses=("SET-FORM-5",)),
    SetCase("set-type", "a metric whose type differs in one member",
            lambda: _change(_gap(), 1, lambda f: _metric(f, "seed.counter", type=PmType.U64)),
            errors=("set.desc",), clauses=("SET-META-2",), replays=False),
    SetCase("set-units", "a metric whose units differ in one member",
            lambda: _change(_gap(), 2, lambda f: _metric(f, "seed.instant", units=PmUnits(1, 0, 0, 1, 0, 0))),
            errors=("set.desc",), clauses=("SET-META-2",), replays=False),
    SetCase("set-rename", "a metric named differently in one member",
            lambda: _change(_gap(), 1, lambda f: _metric(f, "seed.instant", name="seed.gauge")),
            errors=("set.pmid-names",), clauses=("SET-META-4",)),
    SetCase("set-text", "help text that differs between members",
            lambda: _change(_change(_gap(), 0, lambda f: _metric(f, "seed.counter", text={"oneline": "first text"})),
                            1, lambda f: _metric(f, "seed.counter", text={"oneline": "renewed text"})),
            warnings=("set.text",), clauses=("SET-META-3",)),
    SetCase("set-versions", "a version 2 member before version 3 ones", _versions,
            warnings=("set.versions",), clauses=("SET-FORM-6",)),
    SetCase("set-damaged", "a member cut inside its last record",
            _damaged("truncated"), errors=("set.member-damaged",), clauses=("SET-MEMBER-3",), replays=False),
    SetCase("set-unreadable", "a member whose data volume holds only its label",
            _damaged("label-only"), errors=("set.member-unreadable",), clauses=("SET-MEMBER-1", "SET-MEMBER-2"),
            replays=False),
    SetCase("set-list", "a comma-separated list naming one member twice, out of time order",
            _gap, warnings=("set.duplicate",), order=(2, 0, 1, 0), clauses=("SET-FORM-1", "SET-FORM-4")),
)


def build_set_case(case: SetCase, directory: Path) -> str:
    """Write the case's members into ``directory``; the set's name as a client gives it."""
    bases = generate_set(case.make(), directory)
    if case.order is None:
        return str(directory)
    return ",".join(str(bases[i]) for i in case.order)
