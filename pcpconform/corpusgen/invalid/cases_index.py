"""Faults of the temporal index (FMT-INDEX).
"""

from __future__ import annotations

from collections.abc import Callable

from construct import Container

from pcpconform.corpusgen.invalid.edit import ArchiveEdit, shifted
from pcpconform.corpusgen.invalid.registry import Mutation, case

# -- index -----------------------------------------------------------------------------------

def _edit_entry(n: int, fn: Callable[[ArchiveEdit, Container], None]) -> Mutation:
    def mutate(ed: ArchiveEdit) -> None:
        e = ed.entry(n if n > 0 else len(ed.entries()) + 1 + n)
        fn(ed, e)
        ed.put_entry(n if n > 0 else len(ed.entries()) + 1 + n, e)
    return mutate


@case("index-partial", "5 bytes of a partial entry are appended to `.index`", ["index.partial"])
def _(ed: ArchiveEdit) -> None:
    ed.files["index"] += b"\0" * 5


@case("index-empty", "`.index` is cut back to its label", ["index.empty"])
def _(ed: ArchiveEdit) -> None:
    del ed.files["index"][ed.lsize:]


case("index-vol", "the first index entry names volume -1", ["index.vol"])(
    _edit_entry(1, lambda ed, e: e.__setitem__("vol", -1)))
case("index-vol-missing", "the last index entry names volume 5, which does not exist",
     ["index.vol-missing"])(_edit_entry(-1, lambda ed, e: e.__setitem__("vol", 5)))
case("index-offset", "the last index entry's off_data is 100 bytes past the end of `a.0`",
     ["index.offset"])(_edit_entry(-1, lambda ed, e: e.__setitem__("off_data", e.off_data + 100)))
case("index-offset-meta", "the first index entry's off_meta is 8 (inside the label)",
     ["index.offset"])(_edit_entry(1, lambda ed, e: e.__setitem__("off_meta", 8)))
case("index-time-order", "the second index entry is 1 s before the first",
     ["index.time-order", "index.before-start", "index.invariant"])(
    _edit_entry(2, lambda ed, e: e.__setitem__("timestamp", shifted(ed.entry(1).timestamp, -1))))
case("index-offset-order", "the last index entry's off_meta points back at the end of the label",
     ["index.offset-order"])(_edit_entry(-1, lambda ed, e: e.__setitem__("off_meta", ed.lsize)))
case("index-before-start", "the first index entry is 1 s before the archive start",
     ["index.before-start"])(
    _edit_entry(1, lambda ed, e: e.__setitem__("timestamp", shifted(e.timestamp, -1))))
case("index-boundary", "the second index entry's off_data is 4 bytes into a result",
     ["index.boundary"])(_edit_entry(2, lambda ed, e: e.__setitem__("off_data", e.off_data + 4)))

case("index-boundary-first", "the first index entry's off_data is 4 bytes into the first result "
     "(where libpcp starts reading)", ["index.boundary"])(
    _edit_entry(1, lambda ed, e: e.__setitem__("off_data", e.off_data + 4)))
case("index-boundary-meta", "the second index entry's off_meta is 1 byte into a .meta record",
     ["index.boundary"])(_edit_entry(2, lambda ed, e: e.__setitem__("off_meta", e.off_meta + 1)))


@case("index-vol-order", "the second index entry names volume 1 (absent), the third volume 0",
      ["index.vol-order", "index.vol-missing"])
def _(ed: ArchiveEdit) -> None:
    e = ed.entry(2)
    e.vol = 1
    ed.put_entry(2, e)


@case("index-invariant", "the second index entry points at the mark, past a result later than it",
      ["index.invariant"])
def _(ed: ArchiveEdit) -> None:
    e = ed.entry(2)
    e.off_data = next(off for off, length in ed.records("0") if length == ed.s.mark_size)
    ed.put_entry(2, e)
