"""Quirky but readable archives: what real pmloggers write that the spec frowns on, yet every
referee libpcp reads with the values written and its pmlogcheck passes.

Each quirk is an edit of a valid generated archive, like a fault case, but the archive it
makes belongs to the *valid* corpus: ``pcpconform check`` must exit 0 on it and report at
least the warning codes the quirk names (``--strict`` then fails on it).

A result whose timestamp steps back (a clock set back) is *not* a quirk: every referee's
pmFetch and pmdumplog -a silently skip it (measured; spec/validator.md), so
``result.time-order`` stays an error.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pcpconform.corpusgen.invalid.edit import ArchiveEdit
from pcpconform.fixtures import bundled_fixture
from pcpconform.fixtures.fixture import load_fixture
from pcpconform.fixtures.generate import generate_archive
from pcpconform.format.pmtypes import PmID, Timestamp

__all__ = ["Quirk", "QUIRKS", "quirk", "build_quirk"]

Edit = Callable[[ArchiveEdit], None]


@dataclass(frozen=True)
class Quirk:
    """One quirk: applied to each listed version of the source archive."""

    name: str
    title: str
    edit: Edit
    clauses: tuple[str, ...]
    warnings: tuple[str, ...]          # codes check must report (all warnings)
    versions: tuple[int, ...] = (2, 3)
    source: str = "example"


QUIRKS: list[Quirk] = []


def quirk(name: str, title: str, clauses: tuple[str, ...], warnings: tuple[str, ...],
          **kw: object) -> Callable[[Edit], Edit]:
    def register(fn: Edit) -> Edit:
        QUIRKS.append(Quirk(name, title, fn, clauses, warnings, **kw))  # type: ignore[arg-type]
        return fn
    return register


def build_quirk(q: Quirk, version: int, base: str | Path) -> Path:
    """Write the quirk's archive for ``version`` at ``base`` (its directory is created)."""
    base = Path(base)
    base.parent.mkdir(parents=True, exist_ok=True)
    original = base.parent / f".{base.name}-original"
    generate_archive(load_fixture(bundled_fixture(q.source)), original, version=version)
    ed = ArchiveEdit(original)
    for p in original.parent.glob(original.name + ".*"):
        p.unlink()
    q.edit(ed)
    ed.save(base)
    return base


@quirk("nosupport-sem0", "a descriptor of type NOSUPPORT with semantics 0 (what older pmloggers "
       "wrote for a metric the PMDA did not support), with no values", ("FMT-DESC-3",), ("desc.sem",))
def _(ed: ArchiveEdit) -> None:
    rec = ed.meta(ed.desc("hinv.ncpu"))
    rec.body.pmid = PmID("60.0.99")
    rec.body.type = -1
    rec.body.sem = 0
    rec.body.names = [b"hinv.legacy"]
    rec.body.numnames = 1
    ed.insert("meta", len(ed.records("meta")) + 1, ed.s.meta_record.build(rec))


@quirk("index-past-end", "the last index entry's data offset lies 12 bytes past the end of the "
       "volume (the last record at a volume end)", ("FMT-INDEX-4",), ("index.offset",))
def _(ed: ArchiveEdit) -> None:
    n = len(ed.entries())
    e = ed.entry(n)
    e.off_data = len(ed.files[str(e.vol)]) + 12
    ed.put_entry(n, e)


@quirk("index-time-1us", "the last index entry is 1 microsecond earlier than the one before it",
       ("FMT-INDEX-5",), ("index.time-order",))
def _(ed: ArchiveEdit) -> None:
    n = len(ed.entries())
    e = ed.entry(n)
    before: Timestamp = ed.entry(n - 1).timestamp
    e.timestamp = Timestamp.from_nsec(before.total_nsec() - 1000)
    ed.put_entry(n, e)
