"""The window replay (pcpconform/oracles/interp/window.py) against the whole replay's
per-fetch reference: the same Samples, value for value, type for type, bit for bit, with
windows of one record and up, pieces of one fetch and up, marks, instances that come and
go, and read-ahead limits that force a fallback part of the way through; every fallback
typed and counted."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pcpconform.extra.strategies import fixtures
from pcpconform.fixtures.fixture import parse_fixture
from pcpconform.fixtures.generate import generate_archive
from pcpconform.format.pmtypes import Timestamp
from pcpconform.io.archive import Archive
from pcpconform.oracles.interp import window
from pcpconform.oracles.interp.replay import Replay
from pcpconform.oracles.interp.window import WindowReplay, open_replay
from tests.fast_path_inputs import draw_schedule
from tests.interp_samples import view

SETTINGS = settings(max_examples=60, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


def check(data: st.DataObject, base: Path, rules: str, monkeypatch: pytest.MonkeyPatch) -> None:
    a = Archive(base)
    if not any(True for _ in a.results()):
        return
    monkeypatch.setattr(window, "_GRID", data.draw(st.sampled_from([1, 2, 3, 256]), label="grid"))
    monkeypatch.setattr(window, "READ_AHEAD", data.draw(st.sampled_from([10**9, 40, 3]),
                                                        label="read ahead"))
    start, delta, count = draw_schedule(data, a)
    pmids = [int(d.pmid) for d in a.descs()]
    want = Replay(a, pmids, rules=rules).schedule_reference(start, delta, count)
    replay = open_replay(a, pmids, rules=rules, min_bytes=0)
    chunk = data.draw(st.sampled_from([1, 2, 5, 4096]), label="chunk")
    got = list(itertools.chain.from_iterable(replay.schedule_chunks(start, delta, count, chunk)))
    assert view(got) == view(want)
    stats = replay.stats
    fallbacks = set(stats.window_fallbacks)
    assert fallbacks <= set(window.WINDOW_REASONS)
    if not isinstance(replay, WindowReplay):
        assert fallbacks <= {window.UNORDERED, window.IRREGULAR} and fallbacks
        return
    if delta < 0 and count:
        assert stats.window_fallbacks[window.BACKWARDS] == 1
    if window.READ_AHEAD == 10**9 and delta > 0:
        assert not fallbacks                 # forward, nothing too far: the window all along
        assert stats.windowed == stats.vectorised + stats.reference
        assert stats.windowed >= (1 if count else 0)


@SETTINGS
@given(data=st.data(), rules=st.sampled_from(["pcp-6.0", "pcp-6.3"]))
def test_window_equals_whole_replay(tmp_path_factory: pytest.TempPathFactory,
                                    monkeypatch: pytest.MonkeyPatch, data: st.DataObject,
                                    rules: str) -> None:
    fixture = data.draw(fixtures(max_samples=12), label="fixture")
    base = tmp_path_factory.mktemp("window") / "a"
    generate_archive(fixture, base)
    check(data, base, rules, monkeypatch)


@st.composite
def coming_and_going(draw: st.DrawFn) -> dict[str, Any]:
    """Instances that come and go (16+ of them: lifetimes), marks, counters and instants."""
    n_inst = draw(st.integers(1, 18))
    types = st.sampled_from(["u64", "double", "32", "string"])
    metrics = [{"name": f"m.x{k}", "pmid": f"245.0.{k}", "type": draw(types),
                "sem": draw(st.sampled_from(["counter", "instant", "discrete"])),
                **({"indom": "245.1"} if draw(st.booleans()) else {})} for k in range(draw(st.integers(1, 3)))]
    samples: list[dict[str, Any]] = []
    nsec = 0
    shared = False          # the next values at the time of the mark before them

    def when(ns: int) -> str:
        return f"{1_700_000_000 + ns // 10**9}.{ns % 10**9:09d}"

    for n in range(draw(st.integers(1, 25))):
        if n and draw(st.integers(0, 6)) == 0:
            shared = draw(st.booleans())
            if shared:
                nsec += draw(st.sampled_from([10**9, 1_000_000]))
            samples.append({"mark": True, **({"time": when(nsec)} if shared else {})})
            continue
        if not shared:
            nsec += draw(st.sampled_from([10**9, 3_333_333_333, 1_000_001]))
        shared = False
        present = sorted(draw(st.sets(st.integers(0, n_inst - 1), min_size=1)))
        values: dict[str, Any] = {}
        for k, m in enumerate(metrics):
            if k and draw(st.booleans()):
                continue
            pick: Any = {"u64": st.integers(0, 10**6), "double": st.floats(-1e6, 1e6),
                         "32": st.integers(-100, 100), "string": st.sampled_from(["a", "b"])}[m["type"]]
            values[m["name"]] = ({f"i{i}": draw(pick) for i in present} if "indom" in m else draw(pick))
        samples.append({"time": when(nsec), "values": values})
    return {"archive": {"version": draw(st.sampled_from([2, 3])), "hostname": "h", "timezone": "UTC"},
            "metrics": metrics,
            "indoms": [{"indom": "245.1", "instances": {f"i{i}": i for i in range(n_inst)}}],
            "samples": samples}


@SETTINGS
@given(data=st.data(), rules=st.sampled_from(["pcp-6.0", "pcp-6.3"]))
def test_window_equals_whole_replay_as_instances_come_and_go(
        tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch,
        data: st.DataObject, rules: str) -> None:
    doc = data.draw(coming_and_going(), label="fixture")
    base = tmp_path_factory.mktemp("going") / "a"
    generate_archive(parse_fixture(doc), base)
    check(data, base, rules, monkeypatch)


@pytest.mark.parametrize("rules", ["pcp-6.0", "pcp-6.3"])
def test_values_at_a_marks_own_time_bound_the_fetches_before(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              rules: str) -> None:
    """A mark and values logged at the same time: the values are the next bound (the
    window must read past the mark's time before it stops)."""
    doc = {"archive": {"version": 3, "hostname": "h", "timezone": "UTC"},
           "metrics": [{"name": "c", "pmid": "245.0.1", "type": "u64", "sem": "counter"},
                       {"name": "i", "pmid": "245.0.2", "type": "double", "sem": "instant"}],
           "samples": [{"time": "1700000000", "values": {"c": 0, "i": 1.0}},
                       {"time": "1700000010", "values": {"c": 100, "i": 2.0}},
                       {"mark": True, "time": "1700000020"},
                       {"time": "1700000020", "values": {"c": 200, "i": 3.0}},
                       {"time": "1700000030", "values": {"c": 300, "i": 4.0}}]}
    base = tmp_path / "a"
    generate_archive(parse_fixture(doc), base)
    a = Archive(base)
    pmids = [int(d.pmid) for d in a.descs()]
    monkeypatch.setattr(window, "_GRID", 1)
    start, delta = Timestamp(1_700_000_011), 1_000_000_000
    want = Replay(a, pmids, rules=rules).schedule_reference(start, delta, 20)
    replay = open_replay(a, pmids, rules=rules, min_bytes=0)
    got = list(itertools.chain.from_iterable(replay.schedule_chunks(start, delta, 20, 1)))
    assert view(got) == view(want)
    assert replay.stats.windowed == 20 and not replay.stats.window_fallbacks
    assert got[4].values[pmids[0]] == {-1: 150}          # 15 s: across to the values at 20 s
