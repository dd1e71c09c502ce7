"""The MMV column paths against the per-entry paths, on drawn files and on damaged bytes.

The reader's column path (``parse_mmv``) must return what the per-entry path
(``parse_mmv(..., columns=False)``) returns, or raise the same error (message, file,
offset, field, code), on any bytes; the validator's column pass (``check_mmv_file``) must
report what its per-entry checks (``columns=False``) report, in the same order.
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pcpconform.check.mmv import check_mmv_file
from pcpconform.errors import FormatError
from pcpconform.extra.mmv_strategies import mmv_contents, mmv_files
from pcpconform.mmv import MmvFile, build_mmv, parse_mmv
from pcpconform.mmv.schema import HEADER_SIZE, TOC_SIZE, TOC_VALUES, VALUE_SIZE

SETTINGS = settings(max_examples=200, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def read_outcome(data: bytes, *, columns: bool) -> tuple[Any, ...]:
    try:
        mmv = parse_mmv(data, "f", columns=columns)
    except FormatError as exc:
        loc = exc.location
        return ("error", str(exc), loc.file, loc.record, loc.offset, loc.field, exc.code)
    return ("ok", mmv)


def same_reading(data: bytes) -> MmvFile | None:
    """Both paths agree on data; the file read, or None for an error."""
    fast, slow = read_outcome(data, columns=True), read_outcome(data, columns=False)
    assert fast == slow
    if fast[0] == "ok":
        assert repr(fast[1]) == repr(slow[1])
        return fast[1]  # type: ignore[no-any-return]
    return None


def section(data: bytes, kind: int) -> tuple[int, int] | None:
    """(count, offset) of the first section of a kind, if the TOC says where."""
    tocs = struct.unpack_from("<i", data, 24)[0]
    for t in range(max(0, min(tocs, (len(data) - HEADER_SIZE) // TOC_SIZE))):
        k, count, offset = struct.unpack_from("<iiQ", data, HEADER_SIZE + TOC_SIZE * t)
        if k == kind:
            return count, offset
    return None


@st.composite
def damaged(draw: Any, version: int | None) -> bytes:
    """A drawn file with some of (after its TOC): bytes changed, 64-bit words replaced by offsets of other
    entries or slots of the file (back-pointers that point at the wrong thing), value entries
    reordered, repeated or given another's field, a tail cut off."""
    raw = bytearray(draw(mmv_files(version, max_instances=4, max_metrics=6)))
    words = list(range(0, len(raw) - 7, 8))
    toc_end = HEADER_SIZE + TOC_SIZE * struct.unpack_from("<i", raw, 24)[0]
    entries = [at for at in words if at >= toc_end] or words
    for _ in range(draw(st.integers(0, 3))):
        at = draw(st.sampled_from(entries))
        target = draw(st.sampled_from(words) | st.integers(0, 2**64 - 1) | st.just(0))
        raw[at:at + 8] = target.to_bytes(8, "little")
    for _ in range(draw(st.integers(0, 2))):
        raw[draw(st.integers(min(toc_end, len(raw) - 1), len(raw) - 1))] = draw(st.integers(0, 255))
    values = section(bytes(raw), TOC_VALUES)
    count, offset = values or (0, 0)
    if count > 0 and offset + VALUE_SIZE * count <= len(raw):
        rows = [raw[offset + VALUE_SIZE * k:offset + VALUE_SIZE * (k + 1)] for k in range(count)]
        if draw(st.booleans()):
            rows = [rows[k] for k in draw(st.permutations(range(count)))]
        for _ in range(draw(st.integers(0, 2))):      # a value repeated, or a field of it
            k, j = draw(st.integers(0, count - 1)), draw(st.integers(0, count - 1))
            part = draw(st.sampled_from([slice(0, 32), slice(8, 16), slice(16, 24), slice(24, 32)]))
            rows[k] = rows[k][:part.start] + rows[j][part] + rows[k][part.stop:]
        raw[offset:offset + VALUE_SIZE * count] = b"".join(rows)
    if draw(st.integers(0, 5)) == 0:
        raw = raw[:draw(st.integers(0, len(raw)))]
    return bytes(raw)


@pytest.mark.parametrize("version", [1, 2, 3, None])
def test_drawn_files_read_the_same(version: int | None) -> None:
    @SETTINGS
    @given(mmv_contents(version, max_instances=6, max_metrics=8))
    def check(content: MmvFile) -> None:
        data = build_mmv(content)
        assert same_reading(data) == content

    check()


@pytest.mark.parametrize("version", [1, 2, 3, None])
def test_damaged_files_read_the_same(version: int | None) -> None:
    @SETTINGS
    @given(damaged(version))
    def check(data: bytes) -> None:
        same_reading(data)

    check()


def same_checks(data: bytes, where: Path) -> None:
    """The validator's column pass reports what its per-entry checks report, in order."""
    path = where / "drawn"
    path.write_bytes(data)
    fast = check_mmv_file(path, columns=True)
    slow = check_mmv_file(path, columns=False)
    assert fast.diagnostics == slow.diagnostics


@pytest.mark.parametrize("version", [1, 2, 3, None])
def test_drawn_files_check_the_same(version: int | None, tmp_path: Path) -> None:
    @SETTINGS
    @given(mmv_files(version, max_instances=6, max_metrics=8) | damaged(version))
    def check(data: bytes) -> None:
        same_checks(data, tmp_path)

    check()
