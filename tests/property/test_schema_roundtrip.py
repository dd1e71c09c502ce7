"""Properties of every record schema: what is built parses back, what parses builds back."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pcpconform.extra.schemagen import from_schema
from pcpconform.format.schema import event_array, structs

SCHEMAS = {
    f"{name}-v{v}": (lambda v=v, name=name: getattr(structs(v), name))
    for v in (2, 3)
    for name in ("label_record", "meta_record", "result_record", "index_entry", "desc", "indom",
                 "labelset", "text")
}
SCHEMAS["event-array"] = lambda: event_array(False)
SCHEMAS["highres-event-array"] = lambda: event_array(True)


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_parse_of_build_is_identity(name: str) -> None:
    schema = SCHEMAS[name]()

    @settings(max_examples=60, deadline=None)
    @given(from_schema(schema))
    def check(model) -> None:
        data = schema.build(model)
        assert schema.parse(data) == model
        # and the bytes are a fixed point too
        assert schema.build(schema.parse(data)) == data

    check()


@pytest.mark.parametrize("version", [2, 3])
def test_meta_record_tags_cover_every_record_type(version: int) -> None:
    seen = set()

    @settings(max_examples=200, deadline=None)
    @given(from_schema(structs(version).meta_record))
    def check(model) -> None:
        seen.add(model.type)

    check()
    # the tag is drawn from the full int range or small ints; small ones hit the known tags
    assert {1, 2, 3, 4, 5, 6, 7} & seen


@given(st.binary(max_size=64))
def test_arbitrary_bytes_never_escape_construct_errors(data: bytes) -> None:
    from construct import ConstructError

    for v in (2, 3):
        for schema in (structs(v).meta, structs(v).result, structs(v).label):
            try:
                schema.parse(data)
            except ConstructError:
                pass
