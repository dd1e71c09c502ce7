"""The churn strategies draw what they promise: instances that leave, come back and are
renumbered (one external name on two ids, FIX-INDOM-2), in archives the kit reads back."""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings

from pcpconform.extra.churn_strategies import churn_fixtures, churn_shape
from pcpconform.fixtures.fixture import Fixture, FixtureError, parse_fixture
from pcpconform.fixtures.generate import generate_archive
from pcpconform.io.archive import Archive


class _Found(Exception):
    def __init__(self, fixture: Fixture) -> None:
        super().__init__("found")
        self.fixture = fixture


def _first(want: Callable[[Fixture], bool], tries: int = 200) -> Fixture:
    """The first of ``tries`` derandomized draws that ``want`` accepts (no shrinking)."""
    @settings(max_examples=tries, deadline=None, database=None, derandomize=True,
              phases=[Phase.generate], suppress_health_check=list(HealthCheck))
    @given(churn_fixtures(max_instances=40))
    def draw(f: Fixture) -> None:
        if want(f):
            raise _Found(f)
    try:
        draw()
    except _Found as found:
        return found.fixture
    raise AssertionError(f"no draw of {tries} satisfied {want.__name__}")


def _returned(f: Fixture) -> bool:
    """An instance listed, then not, then listed again."""
    return churn_shape(f).returned > 0


def _names_on_two_ids(f: Fixture) -> bool:
    """The archive the fixture writes gives one external name to two ids."""
    with tempfile.TemporaryDirectory() as d:
        generate_archive(f, Path(d) / "a")
        a = Archive(Path(d) / "a")
        for spec in f.indoms.values():
            ids_by_name: dict[str, set[int]] = {}
            for rec in a.indom_history(spec.indom):
                for inst, name in rec.instances.items():
                    ids_by_name.setdefault(name, set()).add(inst)
            if any(len(ids) > 1 for ids in ids_by_name.values()):
                return True
    return False


def test_renumbering_is_drawn_and_written() -> None:
    assert any(s.names for s in _first(_names_on_two_ids).indoms.values())


def test_returns_are_drawn() -> None:
    assert _returned(_first(_returned))


def test_fixture_names_give_external_names(tmp_path: Path) -> None:
    """FIX-INDOM-2 in a fixture file: the samples name instances by key, the archive by
    the external name."""
    doc = {"archive": {"hostname": "h", "timezone": "UTC"},
           "metrics": [{"name": "m", "pmid": "60.0.1", "type": "u32", "sem": "instant",
                        "indom": "60.1"}],
           "indoms": [{"indom": "60.1", "instances": {"eth0": 0, "eth0 again": 7},
                       "names": {7: "eth0"}}],
           "samples": [{"time": 1700000000, "values": {"m": {"eth0": 1}}},
                       {"time": 1700000001, "instances": {"60.1": ["eth0 again"]},
                        "values": {"m": {"eth0 again": 2}}}]}
    generate_archive(parse_fixture(doc), tmp_path / "a")
    history = Archive(tmp_path / "a").indom_history(next(iter(parse_fixture(doc).indoms.values())).indom)
    assert [r.instances for r in history] == [{0: "eth0"}, {7: "eth0"}]
    doc["indoms"][0]["names"] = {3: "x"}
    with pytest.raises(FixtureError, match="names: 3 is not an instance id"):
        parse_fixture(doc)
