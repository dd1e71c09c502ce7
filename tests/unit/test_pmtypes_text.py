"""A pmID or InDom's text (what the dumps write) reads back as the same identifier: undump
reads the dumps' text forms, PM_ID_NULL and flagged ones included."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from pcpconform.format.pmtypes import PM_ID_NULL, PM_INDOM_NULL, PmID, PmInDom

_EDGES = st.sampled_from([0, 1, PM_ID_NULL, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFE, (511 << 22) | (4095 << 10) | 1023])


@given(st.one_of(_EDGES, st.integers(0, 0xFFFFFFFF)))
def test_pmid_text_reads_back(value: int) -> None:
    assert PmID(str(PmID(value))) == value


@given(st.one_of(_EDGES, st.integers(0, 0xFFFFFFFF)))
def test_indom_text_reads_back(value: int) -> None:
    assert PmInDom(str(PmInDom(value))) == value


def test_null_texts() -> None:
    assert str(PmID(PM_ID_NULL)) == "PM_ID_NULL" and PmID("PM_ID_NULL") == PM_ID_NULL
    assert str(PmInDom(PM_INDOM_NULL)) == "PM_INDOM_NULL" and PmInDom("PM_INDOM_NULL") == PM_INDOM_NULL
