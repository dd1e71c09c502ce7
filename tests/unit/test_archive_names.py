"""An instance domain's names decode all at once as they do one by one: a NUL ends any
UTF-8 sequence, so joining the names with NULs changes no name's decoding, whatever bytes
they hold (io/archive.py ``_add_indom``)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from pcpconform.io.archive import _text

_NAME = st.binary(max_size=12).map(lambda b: b.replace(b"\0", b""))
_EDGES = st.sampled_from([b"", b"caf\xc3\xa9", b"\xc3", b"\xa9x", b"\xff\xfe", b"\xe2\x82", b"\xac", b"%s"])


@given(st.lists(st.one_of(_NAME, _EDGES), min_size=1, max_size=8))
def test_names_decode_together_as_one_by_one(names: list[bytes]) -> None:
    assert _text(b"\0".join(names)).split("\0") == [_text(n) for n in names]
