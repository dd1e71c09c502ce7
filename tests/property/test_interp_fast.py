"""The vectorised Replay.schedule (oracle/fastinterp.py) against the per-fetch reference path:
the same Samples, value for value, type for type, bit for bit."""

from __future__ import annotations

import math
import struct
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
from pcpconform.oracles.interp import vectorised as fastinterp
from pcpconform.oracles.interp.replay import DEVIATIONS, NoValue, Replay, _sub_parts, _sub_parts_exact

SETTINGS = settings(max_examples=60, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


def exact(v: Any) -> Any:
    """A value's identity for comparison: its type and, for floats, its bits."""
    if isinstance(v, float):
        return (type(v).__name__, struct.pack("<d", v), getattr(v, "bits", None))
    if isinstance(v, NoValue):
        return ("NoValue", v.reason)
    return (type(v).__name__, v)


def view(samples: list) -> list:
    return [(s.time, s.eol, [(p, [(i, exact(v)) for i, v in insts.items()])
                             for p, insts in s.values.items()]) for s in samples]


def state(r: Replay) -> tuple:
    return (r._prev_time, r._before, r._positioned, r.direction,
            {p: bool(h) for p, h in r._prev_had.items()})


def check(base: Path, start: Timestamp, delta: int, count: int, rules: str,
          emulate: tuple[str, ...], again: tuple[Timestamp, int, int] | None = None) -> None:
    a = Archive(base)
    pmids = [int(d.pmid) for d in a.descs()]
    fast, ref = (Replay(a, pmids, rules=rules, emulate=emulate) for _ in range(2))
    for sched in [(start, delta, count)] + ([again] if again else []):
        try:
            want = ref.schedule_reference(*sched)
        except Exception as exc:            # e.g. a FLOAT counter beyond float32 range
            try:
                fast.schedule(*sched)
            except type(exc):
                return
            raise AssertionError(f"the reference raised {exc!r}, the fast path did not") from None
        got = fast.schedule(*sched)
        assert view(got) == view(want)
        assert state(fast) == state(ref)


def draw_schedule(data: st.DataObject, a: Archive) -> tuple[Timestamp, int, int]:
    stamps = [r.timestamp.total_nsec() for r in a.results()]
    lo, hi = min(stamps), max(stamps)
    span = max(hi - lo, 1)
    ordered = sorted(set(stamps))
    gaps = [b - a for a, b in zip(ordered, ordered[1:])]
    how = data.draw(st.sampled_from(["record", "midpoint", "anywhere"]), label="start")
    if how == "record":
        at = data.draw(st.sampled_from(stamps), label="record")
    elif how == "midpoint" and gaps:       # midpoint ties (INTERP-VAL-4/5)
        k = data.draw(st.integers(0, len(gaps) - 1), label="gap")
        at = ordered[k] + gaps[k] // 2
    else:
        at = lo + data.draw(st.integers(-2 * 10**9, span + 2 * 10**9), label="start offset ns")
    delta = data.draw(st.integers(1, max(span // 3, 1))
                      | st.sampled_from([1, 10**6, 10**9, 250_000_000, max(span // 7, 1)]
                                        + [max(g // 2, 1) for g in gaps[:4]]),
                      label="delta ns")
    if data.draw(st.booleans(), label="backwards"):
        delta = -delta
    return Timestamp.from_nsec(at), delta, data.draw(st.integers(0, 30), label="count")


@SETTINGS
@given(data=st.data(), rules=st.sampled_from(["pcp-6.0", "pcp-6.3"]),
       emulate=st.sampled_from([(), tuple(DEVIATIONS)]))
def test_fast_schedule_equals_reference(tmp_path_factory, data, rules, emulate) -> None:
    fixture = data.draw(fixtures(max_samples=10), label="fixture")
    base = tmp_path_factory.mktemp("fast") / "a"
    generate_archive(fixture, base)
    a = Archive(base)
    first = draw_schedule(data, a)
    again = draw_schedule(data, a) if data.draw(st.booleans(), label="second schedule") else None
    check(base, *first, rules, emulate, again)


# ---- lifetimes (16+ instances), counters of every type, wide values ---------------------

TYPES = ["32", "u32", "64", "u64", "float", "double", "string"]
WIDE = {"32": [-(1 << 31), (1 << 31) - 1, 0, 7], "u32": [0, (1 << 32) - 1, 5],
        "64": [-(1 << 63), (1 << 63) - 1, -(1 << 52), 1 << 52, (1 << 53) + 1, 3],
        "u64": [0, (1 << 64) - 1, 1 << 52, (1 << 53) + 1, 18437736867309326970],
        "float": [0.0, 1.5, -2.25, 3.0e38, -3.0e38, 1e-45], "double": [0.0, 1e308, -1e308, 0.1, 5e-324],
        "string": ["a", "bb", ""]}


@st.composite
def wide_fixture(draw: st.DrawFn) -> dict:
    n_inst = draw(st.integers(1, 20))
    metrics = []
    for k in range(draw(st.integers(1, 4))):
        ptype = draw(st.sampled_from(TYPES))
        sem = draw(st.sampled_from(["counter", "instant", "discrete"]))
        metrics.append({"name": f"m.x{k}", "pmid": f"245.0.{k}", "type": ptype, "sem": sem,
                        **({"indom": "245.1"} if draw(st.booleans()) else {})})
    samples = []
    sec, nsec = 1_700_000_000, 0
    for n in range(draw(st.integers(1, 9))):
        if n and draw(st.integers(0, 5)) == 0:
            samples.append({"mark": True})
            continue
        step = draw(st.sampled_from([2_000_000, 10**9, 3_333_333_333, 1_000_001]))
        nsec += step
        values: dict[str, Any] = {}
        present = sorted(draw(st.sets(st.integers(0, n_inst - 1), min_size=1)))
        for k, m in enumerate(metrics):
            if k and draw(st.booleans()):
                continue
            pick = st.sampled_from(WIDE[m["type"]])
            if m["type"] in ("32", "u32", "64", "u64"):
                pick = pick | st.integers(0, 10**6)
            if "indom" in m:
                values[m["name"]] = {f"i{i}": draw(pick) for i in present}
            else:
                values[m["name"]] = draw(pick)
        samples.append({"time": f"{sec + nsec // 10**9}.{nsec % 10**9:09d}", "values": values})
    return {"archive": {"version": draw(st.sampled_from([2, 3])), "hostname": "h", "timezone": "UTC"},
            "metrics": metrics,
            "indoms": [{"indom": "245.1", "instances": {f"i{i}": i for i in range(n_inst)}}],
            "samples": samples}


@SETTINGS
@given(data=st.data(), rules=st.sampled_from(["pcp-6.0", "pcp-6.3"]))
def test_fast_schedule_equals_reference_wide(tmp_path_factory, data, rules) -> None:
    doc = data.draw(wide_fixture(), label="fixture")
    base = tmp_path_factory.mktemp("wide") / "a"
    generate_archive(parse_fixture(doc), base)
    a = Archive(base)
    if not any(True for _ in a.results()):
        return
    check(base, *draw_schedule(data, a), rules, ())


def test_the_fast_path_is_taken(tmp_path: Path, monkeypatch) -> None:
    """schedule() really uses fastinterp without emulation, and the reference with it."""
    doc = {"archive": {"version": 3, "hostname": "h", "timezone": "UTC"},
           "metrics": [{"name": "m.c", "pmid": "245.0.1", "type": "u64", "sem": "counter"}],
           "samples": [{"time": 1700000000, "values": {"m.c": 0}},
                       {"time": 1700000010, "values": {"m.c": 100}}]}
    base = tmp_path / "a"
    generate_archive(parse_fixture(doc), base)
    calls = []
    real = fastinterp.schedule
    monkeypatch.setattr(fastinterp, "schedule", lambda *a: calls.append(1) or real(*a))
    a = Archive(base)
    samples = Replay(a, [int(a.desc("m.c").pmid)]).schedule(Timestamp(1700000001), 10**9, 5)
    assert calls == [1]
    assert [s.values[int(a.desc("m.c").pmid)][-1] for s in samples] == [10, 20, 30, 40, 50]
    Replay(a, [int(a.desc("m.c").pmid)], emulate=DEVIATIONS).schedule(Timestamp(1700000001), 10**9, 5)
    assert calls == [1]


@settings(max_examples=3000, deadline=None)
@given(dsec=st.integers(-(1 << 62), 1 << 62) | st.integers(-100, 100),
       dnsec=st.integers(-999_999_999, 999_999_999) | st.integers(-1000, 1000))
def test_time_difference_integer_form_equals_fractions(dsec: int, dnsec: int) -> None:
    got, want = _sub_parts.__wrapped__(dsec, dnsec), _sub_parts_exact(dsec, dnsec)
    assert struct.pack("<d", got) == struct.pack("<d", want) and not math.isnan(got)


TIES = {
    "archive": {"version": 3, "hostname": "h", "timezone": "UTC", "interval": 10},
    "metrics": [{"name": f"t.{sem}.{ty}", "pmid": f"245.0.{k}", "type": ty, "sem": sem}
                for k, (sem, ty) in enumerate((s, t) for s in ("counter", "instant", "discrete")
                                              for t in ("32", "u32", "64", "u64", "float", "double"))],
    "samples": [{"time": 1700000000 if i == 0 else None,
                 "values": {f"t.{sem}.{ty}": v for sem in ("counter", "instant", "discrete")
                            for ty in ("32", "u32", "64", "u64", "float", "double")}}
                for i, v in enumerate([7, 10, 3, 1000003, 1000000, 2147483647, 5, 7])],
}
for sample in TIES["samples"]:
    if sample["time"] is None:
        del sample["time"]


@pytest.mark.parametrize("rules", ["pcp-6.0", "pcp-6.3"])
@pytest.mark.parametrize("delta", [5 * 10**9, 2_500_000_000, 3_333_333_333, 10**9 // 3, -5 * 10**9])
def test_midpoints_and_rounding_equal_reference(tmp_path: Path, rules: str, delta: int) -> None:
    """Fetches on exact midpoints (INTERP-VAL-4/5 ties) and counter quotients with
    non-trivial rounding, for every numeric type and semantics."""
    from pcpconform.fixtures.fixture import parse_fixture
    from pcpconform.fixtures.generate import generate_archive

    base = tmp_path / "ties"
    generate_archive(parse_fixture(TIES), base)
    start = Timestamp(1700000000) if delta > 0 else Timestamp(1700000070)
    check(base, start, delta, 60, rules, ())


def test_float_counter_beyond_float32_is_infinite(tmp_path: Path) -> None:
    """INTERP-VAL-7: (float) of a value beyond FLT_MAX is infinity, as in C; no exception."""
    from pcpconform.fixtures.fixture import parse_fixture
    from pcpconform.fixtures.generate import generate_archive
    from pcpconform.oracles.interp.replay import NoValue

    doc = {"archive": {"version": 3, "hostname": "h", "timezone": "UTC", "interval": 10},
           "metrics": [{"name": "f.c", "pmid": "245.0.1", "type": "float", "sem": "counter"}],
           "samples": [{"time": 1700000000, "values": {"f.c": -3.0e38}},
                       {"values": {"f.c": 3.0e38}}]}
    base = tmp_path / "f"
    generate_archive(parse_fixture(doc), base)
    a = Archive(base)
    (s,) = Replay(a, [int(a.desc("f.c").pmid)]).schedule(Timestamp(1700000002), 1, 1)
    (v,) = s.values[int(a.desc("f.c").pmid)].values()
    assert not isinstance(v, NoValue)
    check(base, Timestamp(1700000001), 10**9, 9, "pcp-6.3", ())


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data(), rules=st.sampled_from(["pcp-6.0", "pcp-6.3"]),
       emulate=st.sampled_from([(), tuple(DEVIATIONS)]))
def test_seeking_to_a_late_start_changes_nothing(tmp_path_factory, data, rules, emulate) -> None:
    """INTERP-SEEK-1: a pass that starts at an index entry gives the same forward replay."""
    fixture = data.draw(fixtures(), label="fixture")
    base = tmp_path_factory.mktemp("seek") / "a"
    generate_archive(fixture, base)
    a = Archive(base)
    times = [r.timestamp.total_nsec() for r in a.results()]
    start = Timestamp.from_nsec(data.draw(st.integers(times[0], times[-1]), label="start"))
    delta = data.draw(st.integers(1, max((times[-1] - times[0]) // 3, 1)), label="delta")
    count = data.draw(st.integers(1, 8), label="count")
    pmids = [int(d.pmid) for d in a.descs()]
    full = Replay(a, pmids, rules=rules, emulate=emulate).schedule(start, delta, count)
    seeked = Replay(a, pmids, rules=rules, emulate=emulate, from_time=start)
    assert view(seeked.schedule(start, delta, count)) == view(full)


def test_seeking_skips_the_early_records(tmp_path: Path) -> None:
    """INTERP-SEEK-1: with a regularly logged metric the pass starts near the fetch time."""
    doc = {"archive": {"version": 3, "hostname": "h", "timezone": "UTC", "interval": 1},
           "metrics": [{"name": "c", "pmid": "245.0.1", "type": "u64", "sem": "counter"}],
           "samples": [{"time": 1700000000, "values": {"c": 0}}] +
                      [{"values": {"c": 10 * i}} for i in range(1, 4000)]}
    base = tmp_path / "long"
    generate_archive(parse_fixture(doc), base)
    a = Archive(base)
    start = Timestamp(1700003900)
    r = Replay(a, [int(a.desc("c").pmid)], from_time=start)
    assert r.seeked_from is not None and r.seeked_from.timestamp.total_nsec() > 1700003000 * 10**9
    assert len(r.series[(int(a.desc("c").pmid), -1)].times) < 1000
    (s,) = r.schedule(Timestamp(1700003900, 500_000_000), 1, 1)
    assert s.values[int(a.desc("c").pmid)] == {-1: 39005}
