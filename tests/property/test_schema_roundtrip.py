"""Properties of every record schema: what is built parses back, what parses builds back.

"Every record type" is checked, not assumed: each round trip collects the kinds of record it
really exercised (every .meta tag of each version and an unknown one, the label, results
with and without values and marks, index entries, event and high-resolution event arrays
with parameters, without and with a MISSED record) and fails if one of its required kinds
never came up. The draws are derandomized, so which kinds come up does not vary between runs;
``test_the_coverage_check_fails_when_a_kind_is_missing`` shows the check can fail.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable
from typing import Any

import pytest
from construct import Construct, Container
from hypothesis import HealthCheck, find, given, settings
from hypothesis import strategies as st
from hypothesis.errors import NoSuchExample

from pcpconform.extra.schemagen import from_schema
from pcpconform.format.schema import event_array, structs
from pcpconform.format.schema.meta import META_TYPE_NAMES, META_TYPES, _body_cases

PM_EVENT_FLAG_MISSED = 0x80000000
UNKNOWN_TAG = "unknown tag"


def roundtrip(schema: Construct, strategy: st.SearchStrategy[Any], kinds: Callable[[Any], Iterable[Any]],
              required: set[Any], max_examples: int = 100) -> set[Any]:
    """Build and parse back every drawn model (and its bytes); return the kinds seen and fail
    unless every required kind was among them."""
    seen: set[Any] = set()

    @settings(max_examples=max_examples, deadline=None, derandomize=True, database=None,
              suppress_health_check=[HealthCheck.too_slow])
    @given(strategy)
    def check(model: Any) -> None:
        data = schema.build(model)
        assert schema.parse(data) == model
        # and the bytes are a fixed point too
        assert schema.build(schema.parse(data)) == data
        seen.update(kinds(model))

    check()
    # a kind the run happened not to draw is searched for on purpose, then round-tripped
    # too: coverage must not depend on the luck of one run's draws
    for kind in sorted(required - seen, key=str):
        try:
            model = find(strategy, lambda m, kind=kind: kind in set(kinds(m)),
                         settings=settings(max_examples=300, database=None, derandomize=True,
                                           suppress_health_check=list(HealthCheck)))
        except NoSuchExample:
            continue
        check.hypothesis.inner_test(model)
    missing = required - seen
    assert not missing, f"never exercised: {sorted(map(str, missing))} (seen {sorted(map(str, seen))})"
    return seen


# -- .meta records: one strategy per tag, so every tag is drawn ---------------------------------

def _tagged(tag: int) -> Callable[[Any], Container]:
    return lambda body: Container(type=tag, body=body)


def meta_models(version: int) -> st.SearchStrategy[Any]:
    """A .meta record payload of any tag the schema dispatches on, or of an unknown tag."""
    cases = _body_cases(version)
    per_tag = [from_schema(body).map(_tagged(tag)) for tag, body in sorted(cases.items())]
    unknown = st.tuples(st.integers(8, 1 << 20), st.binary(max_size=8)).map(
        lambda tb: Container(type=tb[0], body=tb[1]))
    return st.one_of(*per_tag, unknown)


def meta_kinds(model: Any) -> list[Any]:
    return [model.type if model.type in META_TYPE_NAMES else UNKNOWN_TAG]


@pytest.mark.parametrize("version", [2, 3])
def test_meta_records_of_every_tag_round_trip(version: int) -> None:
    # every tag is parsed in every version, as libpcp does: the tags a version writes
    # (META_TYPES) and the others alike
    required = set(META_TYPE_NAMES) | {UNKNOWN_TAG}
    assert set(META_TYPES[version]) <= required
    assert set(_body_cases(version)) == set(META_TYPE_NAMES), "a tag the test does not know"
    roundtrip(structs(version).meta_record, meta_models(version), meta_kinds, required, max_examples=150)


# -- the other records -----------------------------------------------------------------------

def result_kinds(model: Any) -> list[str]:
    out = ["mark" if model.numpmid == 0 else "result"]
    for vs in model.vset:
        out.append("value set with values" if vs.numval > 0 else
                   "value set without values" if vs.numval == 0 else "value set with an error code")
    if model.blocks:
        out.append("value blocks")
    return out


def event_kinds(model: Any) -> list[str]:
    out = ["no records" if model.nrecords <= 0 else "records"]
    for r in model.records:
        out.append("missed record" if r.flags & PM_EVENT_FLAG_MISSED else
                   "record with parameters" if r.params else "record without parameters")
    return out


def one(name: str) -> Callable[[Any], list[str]]:
    return lambda model: [name]


RESULT_KINDS = {"mark", "result", "value set with values", "value set without values",
                "value set with an error code", "value blocks"}
EVENT_KINDS = {"no records", "records", "record with parameters", "record without parameters",
               "missed record"}

#: name -> (how to tell the kinds of a model, the kinds that must come up)
CASES: dict[str, tuple[Callable[[Any], Iterable[Any]], set[str]]] = {}
for _v in (2, 3):
    CASES[f"label-v{_v}"] = (one("label"), {"label"})
    CASES[f"result-v{_v}"] = (result_kinds, RESULT_KINDS)
    CASES[f"index-entry-v{_v}"] = (one("index entry"), {"index entry"})
    for _name in ("desc", "indom", "labelset", "text"):
        CASES[f"{_name}-v{_v}"] = (one(_name), {_name})
CASES["event-array"] = (event_kinds, EVENT_KINDS)
CASES["highres-event-array"] = (event_kinds, EVENT_KINDS)


def schema_of(name: str) -> Construct:
    if name.endswith("event-array"):
        return event_array(name.startswith("highres"))
    kind, version = name.rsplit("-v", 1)
    attr = {"label": "label_record", "result": "result_record", "index-entry": "index_entry"}.get(kind, kind)
    schema: Construct = getattr(structs(int(version)), attr)
    return schema


def _all_missed(model: Any) -> Any:
    """The same event array with every record turned into a MISSED record (no parameters)."""
    for r in model.records:
        r.flags |= PM_EVENT_FLAG_MISSED
        r.params = None
    return model


def models(name: str, schema: Construct) -> st.SearchStrategy[Any]:
    base = from_schema(schema)
    if name.endswith("event-array"):
        # a MISSED flag is one bit of a random word: draw such arrays on purpose too
        return st.one_of(base, base.map(_all_missed))
    return base


@pytest.mark.parametrize("name", sorted(CASES))
def test_parse_of_build_is_identity(name: str) -> None:
    kinds, required = CASES[name]
    schema = schema_of(name)
    roundtrip(schema, models(name, schema), kinds, required)


def test_every_record_type_has_a_round_trip() -> None:
    """The record types of the format: each version's label, .meta record, result and index
    entry, and both event arrays."""
    wanted = {f"{kind}-v{v}" for v in (2, 3) for kind in ("label", "result", "index-entry")}
    wanted |= {"event-array", "highres-event-array"}
    assert wanted <= set(CASES)


def test_the_coverage_check_fails_when_a_kind_is_missing() -> None:
    schema = structs(3).meta_record
    without_delta = meta_models(3).filter(lambda m: m.type != 6)
    with pytest.raises(AssertionError, match="never exercised: \\['6'\\]"):
        roundtrip(schema, without_delta, meta_kinds, set(META_TYPE_NAMES) | {UNKNOWN_TAG}, max_examples=150)
    marks_only = from_schema(structs(2).result_record).filter(lambda m: m.numpmid == 0)
    with pytest.raises(AssertionError, match="never exercised"):
        roundtrip(structs(2).result_record, marks_only, result_kinds, {"mark", "result"}, max_examples=20)


@given(st.binary(max_size=64))
def test_arbitrary_bytes_never_escape_construct_errors(data: bytes) -> None:
    from construct import ConstructError

    for v in (2, 3):
        for schema in (structs(v).meta, structs(v).result, structs(v).label):
            with contextlib.suppress(ConstructError):
                schema.parse(data)
