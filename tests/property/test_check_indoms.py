"""An instance domain that ``_clean`` passes is added as the per-instance walk adds it, and
with the same (no) findings: drawn ids, name offsets and string tables, clean and not."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from construct import Container
from hypothesis import given, settings
from hypothesis import strategies as st

from pcpconform.check import indoms
from pcpconform.check.diagnostics import Report
from pcpconform.check.state import Context
from pcpconform.format.pmtypes import PmInDom, Timestamp
from pcpconform.format.schema import TYPE_INDOM, TYPE_INDOM_DELTA, TYPE_INDOM_V2
from pcpconform.format.schema.meta import string_table_names


@st.composite
def _indoms(draw: st.DrawFn) -> tuple[int, Any]:
    names = draw(st.lists(st.binary(max_size=3).filter(lambda b: b"\0" not in b), min_size=1, max_size=6))
    strtab = b"".join(n + b"\0" for n in names)
    offsets, at = [], 0
    for n in names:
        offsets.append(at)
        at += len(n) + 1
    insts = draw(st.lists(st.integers(-2, 6), min_size=len(names), max_size=len(names)))
    if draw(st.booleans()):
        offsets = draw(st.lists(st.sampled_from([-1, -2, 0, 1, 2, len(strtab) - 1, len(strtab)]),
                                min_size=len(names), max_size=len(names)))
    if draw(st.booleans()):
        strtab = strtab[:-1] if draw(st.booleans()) else strtab + b"x"
    tag = draw(st.sampled_from([TYPE_INDOM_V2, TYPE_INDOM, TYPE_INDOM_DELTA]))
    body = Container(timestamp=Timestamp(1, 0), indom=PmInDom(7), numinst=len(insts), instlist=insts,
                     offsets=offsets, strtab=strtab, names=string_table_names(offsets, strtab))
    return tag, body


def _record() -> Any:
    class _Rec:
        file, index, offset = "a.meta", 3, 40
    return _Rec()


@settings(max_examples=300, deadline=None)
@given(_indoms())
def test_the_clean_shortcut_adds_what_the_walk_adds(drawn: tuple[int, Any]) -> None:
    tag, body = drawn
    clean = indoms._clean
    try:
        indoms._clean = lambda *args: False
        walked = _run(tag, body)
    finally:
        indoms._clean = clean
    assert _run(tag, body) == walked


def test_a_writer_laid_indom_takes_the_shortcut() -> None:
    names = [b"1 init", b"22 kthreadd", b"333 bash"]
    strtab = b"".join(n + b"\0" for n in names)
    assert indoms._clean([1, 22, 333], [0, 7, 19], string_table_names([0, 7, 19], strtab), strtab)


def _run(tag: int, body: Any) -> tuple[Any, list[Any]]:
    ctx = Context(Path("a"), Report("a"), 1 << 20)
    indoms.check_indom(ctx, _record(), tag, body)
    return ctx.st.indoms, [(d.code, d.field, d.message) for d in ctx.report.diagnostics]
