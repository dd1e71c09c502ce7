"""Archives with the quirks of old real ones, for the interp and derive tests (unit and
differential). The fixture format cannot put a singular metric's value under an instance
other than PM_IN_NULL, so these are generated from a fixture and then edited record by
record with the invalid-corpus editor."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pcpconform.corpusgen.invalid.edit import ArchiveEdit
from pcpconform.fixtures.fixture import parse_fixture
from pcpconform.fixtures.generate import generate_archive
from pcpconform.format.pmtypes import PmID

__all__ = ["T0", "SINGULAR", "singular_archive", "add_alias", "damage_label_start"]

T0 = 1700000010
_NAMES = ("s.inst", "s.ctr", "s.disc", "s.ok", "s.mixed", "s.multi")
SINGULAR: dict[str, Any] = {
    "archive": {"version": 2, "hostname": "h", "timezone": "UTC", "interval": 10},
    "metrics": [
        {"name": "s.inst", "pmid": "245.0.1", "type": "u32", "sem": "instant"},
        {"name": "s.ctr", "pmid": "245.0.2", "type": "u32", "sem": "counter"},
        {"name": "s.disc", "pmid": "245.0.3", "type": "u32", "sem": "discrete"},
        {"name": "s.ok", "pmid": "245.0.4", "type": "u32", "sem": "instant"},
        {"name": "s.mixed", "pmid": "245.0.5", "type": "u32", "sem": "instant"},
        {"name": "s.multi", "pmid": "245.0.6", "type": "u32", "sem": "instant"},
    ],
    "samples": [{"time": T0, "values": dict.fromkeys(_NAMES, 1)}]
    + [{"values": dict.fromkeys(_NAMES, k)} for k in (2, 3, 4)],
}
UNDER_ONE = {int(PmID(p)) for p in ("245.0.1", "245.0.2", "245.0.3")}
MIXED = int(PmID("245.0.5"))        # under PM_IN_NULL in records 1-2, under 1 in 3-4
MULTI = int(PmID("245.0.6"))        # two values (instances 1 and 2) in every value set


def singular_archive(base: Path, *, multi: bool = False) -> Path:
    """The SINGULAR archive with singular metrics' values stored under instance 1 (and,
    with ``multi``, s.multi holding v under 1 and v + 100 under 2, their order alternating
    from record to record; without it s.multi keeps PM_IN_NULL)."""
    generate_archive(parse_fixture(SINGULAR), base)
    ed = ArchiveEdit(base)
    for i in range(1, 5):
        res = ed.result(i)
        for vs in res.vsets:
            value = vs.values[0][1]
            if vs.pmid in UNDER_ONE or (vs.pmid == MIXED and i > 2):
                vs.values = [(1, value)]
            elif vs.pmid == MULTI and multi:
                pair = [(1, value), (2, value + 100)]
                vs.values = pair[::-1] if i % 2 else pair
                vs.numval = 2
        ed.put_result(i, res)
    ed.save(base)
    return base


def add_alias(base: Path, metric: str, alias: str) -> Path:
    """Give ``metric`` a second name in its descriptor, as pmlogger does for aliases."""
    ed = ArchiveEdit(base)
    i = ed.desc(metric)
    rec = ed.meta(i)
    rec.body.names = [*rec.body.names, alias.encode()]
    ed.put_meta(i, rec)
    ed.save(base)
    return base


def damage_label_start(base: Path, sec: int) -> Path:
    """Set the label's start time (every file's label) to ``sec``, as a damaged label might."""
    ed = ArchiveEdit(base)
    for part in ed.files:
        ed.poke(part, ed.label_field("start"), "I", sec)
    ed.save(base)
    return base
