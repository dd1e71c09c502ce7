"""Round trips of the MMV schemas and of whole MMV files, per version.

Per structure: any bytes of its size parse, and build back to the same bytes; what parsed
builds and parses back equal. Per file: a drawn MmvFile builds, parses back equal, and the
parsed model builds the same bytes again; damaged files raise FormatError, nothing else.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pcpconform.errors import FormatError
from pcpconform.mmv import Indom, Instance, Label, Metric, MmvFile, Value, build_mmv, parse_mmv
from pcpconform.mmv.model import MMV_TYPES, TYPE_STRING
from pcpconform.mmv.schema import mmv_structs

SETTINGS = settings(max_examples=150, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow])

STRUCTS = ["header", "toc", "indom", "instance", "metric", "value", "string", "label"]


@pytest.mark.parametrize("version", [1, 2, 3])
@pytest.mark.parametrize("name", STRUCTS)
def test_schema_roundtrip(version: int, name: str) -> None:
    schema = getattr(mmv_structs(version), name)
    if schema is None:
        assert name == "label" and version < 3
        return
    size = schema.sizeof()

    @SETTINGS
    @given(st.binary(min_size=size, max_size=size))
    def check(raw: bytes) -> None:
        parsed = schema.parse(raw)
        assert schema.build(parsed) == raw
        assert schema.parse(schema.build(parsed)) == parsed

    check()


def text(max_bytes: int, min_size: int = 0) -> st.SearchStrategy[str]:
    chars = st.characters(blacklist_characters="\0", blacklist_categories=("Cs",))
    return st.text(chars, min_size=min_size, max_size=max_bytes // 2).filter(
        lambda t: len(t.encode()) < max_bytes)


int32 = st.integers(-(2**31), 2**31 - 1)
uint32 = st.integers(0, 2**32 - 1)
help_text = st.none() | text(256)


@st.composite
def mmv_files(draw: Any, version: int) -> MmvFile:
    name_limit = 64 if version == 1 else 256
    serials = draw(st.lists(st.integers(1, 2**31 - 1), max_size=3, unique=True))
    indoms = tuple(
        Indom(serial, tuple(Instance(draw(int32), draw(text(name_limit)))
                            for _ in range(draw(st.integers(0, 3)))),
              draw(help_text), draw(help_text))
        for serial in serials)
    metrics = []
    for _ in range(draw(st.integers(0, 4))):
        mtype = draw(st.sampled_from(MMV_TYPES))
        indom = draw(st.sampled_from([0, -1, *serials]))
        owners: list[int | None] = [None] if indom in (0, -1) else [
            i.internal for d in indoms if d.serial == indom for i in d.instances]
        values = tuple(
            Value(inst, draw(st.binary(min_size=8, max_size=8)), 0, draw(text(255)))
            if mtype == TYPE_STRING else
            Value(inst, draw(st.binary(min_size=8, max_size=8)), draw(st.integers(-(2**63), 2**63 - 1)))
            for inst in owners)
        metrics.append(Metric(draw(text(name_limit, 1)), draw(uint32), mtype, draw(int32),
                              draw(uint32), indom, draw(help_text), draw(help_text), values))
    labels = tuple(Label(draw(uint32), draw(uint32), draw(int32), draw(text(244)))
                   for _ in range(draw(st.integers(0, 3) if version == 3 else st.just(0))))
    gen = draw(st.integers(1, 2**64 - 1))
    return MmvFile(version, gen, gen, draw(uint32), draw(int32), draw(st.integers(0, 4095)),
                   indoms, tuple(metrics), labels)


@pytest.mark.parametrize("version", [1, 2, 3])
def test_file_roundtrip(version: int) -> None:
    @SETTINGS
    @given(mmv_files(version))
    def check(model: MmvFile) -> None:
        data = build_mmv(model)
        parsed = parse_mmv(data, "drawn")
        assert parsed == model
        assert build_mmv(parsed) == data

    check()


@pytest.mark.parametrize("version", [1, 2, 3])
def test_damaged_files_raise_format_error(version: int) -> None:
    @SETTINGS
    @given(mmv_files(version), st.data())
    def check(model: MmvFile, data: st.DataObject) -> None:
        raw = bytearray(build_mmv(model))
        if data.draw(st.booleans()):
            raw = raw[:data.draw(st.integers(0, len(raw)))]
        else:
            for _ in range(data.draw(st.integers(1, 4))):
                at = data.draw(st.integers(0, len(raw) - 1))
                raw[at] = data.draw(st.integers(0, 255))
        try:
            parse_mmv(bytes(raw), "damaged")
        except FormatError as exc:
            assert exc.location.file == "damaged" and exc.location.offset is not None
            assert exc.location.field

    check()


def test_rewriting_file_is_reported() -> None:
    data = bytearray(build_mmv(MmvFile(1, 5, 5)))
    data[16:24] = bytes(8)
    with pytest.raises(FormatError, match="being rewritten") as info:
        parse_mmv(bytes(data), "f")
    assert info.value.code == "mmv.rewriting" and info.value.location.field == "header.g2"
