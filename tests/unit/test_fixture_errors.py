"""Fixture files: every defect is a one-line FixtureError (exit 2), never a traceback."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pcpconform.fixtures.fixture import FixtureError, parse_fixture
from pcpconform.fixtures.generate import generate_archive

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = yaml.safe_load((ROOT / "corpus" / "fixtures" / "example.yaml").read_text())


def paths(node, prefix=()):
    yield prefix
    if isinstance(node, dict):
        for k, v in node.items():
            yield from paths(v, prefix + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from paths(v, prefix + (i,))


ALL_PATHS = [p for p in paths(EXAMPLE) if p]
JUNK = st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(),
                 st.text(max_size=12), st.lists(st.integers(), max_size=3),
                 st.dictionaries(st.text(max_size=5), st.integers(), max_size=3))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(where=st.sampled_from(ALL_PATHS), junk=JUNK)
def test_any_damaged_fixture_fails_cleanly_or_generates(tmp_path_factory, where, junk) -> None:
    doc = copy.deepcopy(EXAMPLE)
    node = doc
    for key in where[:-1]:
        node = node[key]
    node[where[-1]] = junk
    try:
        fixture = parse_fixture(doc, source="damaged")
        generate_archive(fixture, tmp_path_factory.mktemp("fx") / "a")
    except FixtureError as exc:
        message = str(exc)
        assert "\n" not in message
        assert message.startswith("damaged") or "nothing to write" in message \
            or message.startswith("a value cannot be encoded")


def test_generate_leaves_other_files_of_the_same_name_alone(tmp_path: Path) -> None:
    fixture_file = tmp_path / "example.yaml"
    fixture_file.write_text(yaml.safe_dump(EXAMPLE))
    (tmp_path / "example.notes").write_text("keep me")
    (tmp_path / "example.7").write_bytes(b"stale volume")
    generate_archive(parse_fixture(EXAMPLE), tmp_path / "example")
    assert fixture_file.exists() and (tmp_path / "example.notes").exists()
    assert not (tmp_path / "example.7").exists()


@pytest.mark.parametrize("ident, pmid_bits", [("60.2", (60 << 22) | (2 << 10)),
                                                ("disk.dev.read_bytes", (60 << 22) | (0 << 10))])
def test_cluster_label_ident_has_item_zero(ident: str, pmid_bits: int) -> None:
    doc = copy.deepcopy(EXAMPLE)
    doc["labels"] = [{"type": "cluster", "ident": ident, "labels": {"a": "b"}}]
    assert parse_fixture(doc).labels[0].ident == pmid_bits


@pytest.mark.parametrize("where, key, hint", [
    ((), "metric", "did you mean 'metrics'?"),
    (("archive",), "timezon", "did you mean 'timezone'?"),
    (("metrics", 0), "semantics", "allowed: name, pmid"),
    (("metrics", 0), "typ", "did you mean 'type'?"),
    (("indoms", 0), "instance", "did you mean 'instances'?"),
    (("labels", 0), "label", "did you mean 'labels'?"),
    (("samples", 0), "value", "did you mean 'values'?"),
])
def test_unknown_key_is_an_error_naming_the_nearest(where, key, hint) -> None:
    """FIX-KEYS-1: a misspelt key is refused, never silently defaulted."""
    doc = copy.deepcopy(EXAMPLE)
    node = doc
    for step in where:
        node = node[step]
    node[key] = node.get(key.rstrip("s"), 1) if isinstance(node, dict) else 1
    with pytest.raises(FixtureError) as info:
        parse_fixture(doc, source="ex.yaml")
    message = str(info.value)
    assert f"unknown key '{key}'" in message and hint in message
    assert message.startswith("ex.yaml")


def test_unknown_key_in_text_and_event_records() -> None:
    doc = copy.deepcopy(EXAMPLE)
    doc["metrics"][0]["text"] = {"oneline": "x", "helptext": "y"}
    with pytest.raises(FixtureError, match="unknown key 'helptext'"):
        parse_fixture(doc, source="ex.yaml")
