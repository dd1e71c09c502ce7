"""The vectorised Replay.schedule (pcpconform/oracles/interp/vectorised.py) against the
per-fetch reference path: the same Samples, value for value, type for type, bit for bit; the
vectorised path really taken, its fallbacks typed and counted, and any other error raised."""

from __future__ import annotations

import itertools
import math
import struct
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pcpconform.extra.strategies import fixtures
from pcpconform.fixtures.fixture import parse_fixture
from pcpconform.fixtures.generate import generate_archive
from pcpconform.format.pmtypes import PmSem, PmType, Timestamp
from pcpconform.io.archive import Archive
from pcpconform.oracles.interp import vectorised as fastinterp
from pcpconform.oracles.interp.model import (
    DEVIATIONS,
    NoValue,
    VectorisedFallback,
    sub_parts,
    sub_parts_exact,
)
from pcpconform.oracles.interp.replay import Replay
from tests.interp_samples import view

SETTINGS = settings(max_examples=60, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


def state(r: Replay) -> tuple[Any, ...]:
    st = r.fetch_state()
    return (st.prev_time, st.before, st.positioned, r.direction,
            {p: bool(h) for p, h in st.prev_had.items()})


_EXACT_COUNTER: dict[int, int] = {PmType.I32: 1 << 31, PmType.U32: 1 << 32, PmType.I64: 1 << 52, PmType.U64: 1 << 52}


def ordinary(a: Archive) -> bool:
    """Records in time order, every counter value one whose interpolation doubles represent
    exactly (integers within 2^52, floats well inside float32's range): the vectorised path
    computes every series of such an archive itself."""
    stamps = [r.timestamp.total_nsec() for r in a.results()]
    if stamps != sorted(stamps):
        return False
    for res in a.results():
        for vs in res.vsets:
            desc = a.desc(vs.pmid)
            if desc.sem != PmSem.COUNTER or vs.numval <= 0:
                continue
            for v in vs.columns[1]:
                if desc.type in _EXACT_COUNTER and not abs(v) <= _EXACT_COUNTER[desc.type]:
                    return False
                if desc.type in (PmType.FLOAT, PmType.DOUBLE) and not abs(float(v)) < 1e30:
                    return False
    return True


def check(base: Path, start: Timestamp, delta: int, count: int, rules: str,
          emulate: tuple[str, ...], again: tuple[Timestamp, int, int] | None = None) -> None:
    a = Archive(base)
    pmids = [int(d.pmid) for d in a.descs()]
    fast, ref = (Replay(a, pmids, rules=rules, emulate=emulate) for _ in range(2))
    schedules = [(start, delta, count)] + ([again] if again else [])
    for sched in schedules:
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
    # which path computed it: the vectorised one for every schedule without emulation
    stats = fast.stats
    if emulate:
        assert (stats.vectorised, stats.reference) == (0, len(schedules))
        assert not stats.fallbacks and not stats.series_fallbacks
        return
    assert (stats.vectorised, stats.reference) == (len(schedules), 0)
    assert stats.fallbacks == Counter()      # these archives have their marks in order
    if ordinary(a):
        assert stats.series_fallbacks == Counter()
    else:
        assert set(stats.series_fallbacks) <= {fastinterp.VALUES_INEXACT, fastinterp.RESULT_INEXACT}


def draw_schedule(data: st.DataObject, a: Archive) -> tuple[Timestamp, int, int]:
    stamps = [r.timestamp.total_nsec() for r in a.results()]
    lo, hi = min(stamps), max(stamps)
    span = max(hi - lo, 1)
    ordered = sorted(set(stamps))
    gaps = [b - a for a, b in itertools.pairwise(ordered)]
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
def test_fast_schedule_equals_reference(tmp_path_factory: pytest.TempPathFactory, data: st.DataObject,
                                        rules: str, emulate: tuple[str, ...]) -> None:
    fixture = data.draw(fixtures(max_samples=10), label="fixture")
    base = tmp_path_factory.mktemp("fast") / "a"
    generate_archive(fixture, base)
    a = Archive(base)
    first = draw_schedule(data, a)
    again = draw_schedule(data, a) if data.draw(st.booleans(), label="second schedule") else None
    check(base, *first, rules, emulate, again)


# ---- lifetimes (16+ instances), counters of every type, wide values ---------------------

TYPES = ["32", "u32", "64", "u64", "float", "double", "string"]
WIDE: dict[str, list[Any]] = {"32": [-(1 << 31), (1 << 31) - 1, 0, 7], "u32": [0, (1 << 32) - 1, 5],
        "64": [-(1 << 63), (1 << 63) - 1, -(1 << 52), 1 << 52, (1 << 53) + 1, 3],
        "u64": [0, (1 << 64) - 1, 1 << 52, (1 << 53) + 1, 18437736867309326970],
        "float": [0.0, 1.5, -2.25, 3.0e38, -3.0e38, 1e-45], "double": [0.0, 1e308, -1e308, 0.1, 5e-324],
        "string": ["a", "bb", ""]}


@st.composite
def wide_fixture(draw: st.DrawFn) -> dict[str, Any]:
    n_inst = draw(st.integers(1, 20))
    metrics: list[dict[str, Any]] = []
    for k in range(draw(st.integers(1, 4))):
        ptype = draw(st.sampled_from(TYPES))
        sem = draw(st.sampled_from(["counter", "instant", "discrete"]))
        metrics.append({"name": f"m.x{k}", "pmid": f"245.0.{k}", "type": ptype, "sem": sem,
                        **({"indom": "245.1"} if draw(st.booleans()) else {})})
    samples: list[dict[str, Any]] = []
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
def test_fast_schedule_equals_reference_wide(tmp_path_factory: pytest.TempPathFactory, data: st.DataObject,
                                             rules: str) -> None:
    doc = data.draw(wide_fixture(), label="fixture")
    base = tmp_path_factory.mktemp("wide") / "a"
    generate_archive(parse_fixture(doc), base)
    a = Archive(base)
    if not any(True for _ in a.results()):
        return
    check(base, *draw_schedule(data, a), rules, ())


def _counter_archive(tmp_path: Path, samples: list[dict[str, Any]], ptype: str = "u64") -> tuple[Archive, int]:
    doc = {"archive": {"version": 3, "hostname": "h", "timezone": "UTC"},
           "metrics": [{"name": "m.c", "pmid": "245.0.1", "type": ptype, "sem": "counter"},
                       {"name": "m.i", "pmid": "245.0.2", "type": "32", "sem": "instant"}],
           "samples": samples}
    base = tmp_path / "a"
    generate_archive(parse_fixture(doc), base)
    a = Archive(base)
    return a, int(a.desc("m.c").pmid)


def test_the_fast_path_is_taken(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """schedule() really uses the vectorised path without emulation (and counts it), the
    reference with it."""
    a, pmid = _counter_archive(tmp_path, [{"time": 1700000000, "values": {"m.c": 0}},
                                          {"time": 1700000010, "values": {"m.c": 100}}])
    calls: list[int] = []
    real = fastinterp.schedule

    def counted(*args: Any) -> Any:
        calls.append(1)
        return real(*args)

    monkeypatch.setattr(fastinterp, "schedule", counted)
    replay = Replay(a, [pmid])
    samples = replay.schedule(Timestamp(1700000001), 10**9, 5)
    assert calls == [1]
    assert (replay.stats.vectorised, replay.stats.reference) == (1, 0)
    assert not replay.stats.fallbacks and not replay.stats.series_fallbacks
    assert [s.values[pmid][-1] for s in samples] == [10, 20, 30, 40, 50]
    emulating = Replay(a, [pmid], emulate=DEVIATIONS)
    emulating.schedule(Timestamp(1700000001), 10**9, 5)
    assert calls == [1]
    assert (emulating.stats.vectorised, emulating.stats.reference) == (0, 1)


@pytest.mark.parametrize("where", ["_schedule", "_series_values", "_counter", "_Bounds"])
def test_an_error_in_the_vectorised_path_propagates(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    where: str) -> None:
    """No silent fallback: only VectorisedFallback sends a schedule to the reference path;
    a crash anywhere in the vectorised path reaches the caller."""
    a, pmid = _counter_archive(tmp_path, [{"time": 1700000000, "values": {"m.c": 0, "m.i": 1}},
                                          {"time": 1700000010, "values": {"m.c": 100, "m.i": 2}}])

    def planted(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("planted")

    monkeypatch.setattr(fastinterp, where, planted)
    replay = Replay(a, [pmid, int(a.desc("m.i").pmid)])
    with pytest.raises(RuntimeError, match="planted"):
        replay.schedule(Timestamp(1700000001), 10**9, 5)
    assert replay.stats.reference == 0 and not replay.stats.fallbacks
    assert replay.fetch_state().prev_time is None      # nothing half-applied


def test_marks_out_of_order_fall_back_whole_and_counted(tmp_path: Path) -> None:
    """Records out of time order put the marks out of order: the vectorised path declines
    the schedule (VectorisedFallback), the reference computes it, the reason is counted."""
    a, pmid = _counter_archive(tmp_path, [{"time": 1700000000, "values": {"m.c": 0}},
                                          {"time": 1700000020, "values": {"m.c": 200}},
                                          {"mark": True},
                                          {"time": 1700000010, "values": {"m.c": 100}},
                                          {"mark": True},
                                          {"time": 1700000030, "values": {"m.c": 300}}])
    replay = Replay(a, [pmid])
    with pytest.raises(VectorisedFallback) as info:
        fastinterp.schedule(replay, replay.fetch_state(), Timestamp(1700000001), 3 * 10**9, 10)
    assert info.value.reason == fastinterp.MARKS_OUT_OF_ORDER
    replay.schedule(Timestamp(1700000001), 3 * 10**9, 10)
    replay.schedule(Timestamp(1700000030), -10**9, 4)
    assert replay.stats.fallbacks == Counter({fastinterp.MARKS_OUT_OF_ORDER: 2})
    assert (replay.stats.vectorised, replay.stats.reference) == (0, 2)


@pytest.mark.parametrize(("samples", "ptype", "reason"), [
    # records out of time order (no marks): both series by value_at
    ([{"time": 1700000000, "values": {"m.c": 0}}, {"time": 1700000020, "values": {"m.c": 200}},
      {"time": 1700000010, "values": {"m.c": 100}}, {"time": 1700000030, "values": {"m.c": 300}}],
     "u64", fastinterp.TIMES_OUT_OF_ORDER),
    # U64 counter values beyond 2^52: the conversions to double are not exact
    ([{"time": 1700000000, "values": {"m.c": 1 << 60}}, {"time": 1700000010, "values": {"m.c": (1 << 60) + 7}}],
     "u64", fastinterp.VALUES_INEXACT),
    # a FLOAT counter whose difference overflows float32
    ([{"time": 1700000000, "values": {"m.c": -3.0e38}}, {"time": 1700000010, "values": {"m.c": 3.0e38}}],
     "float", fastinterp.RESULT_INEXACT),
])
def test_irregular_series_fall_back_alone_and_counted(tmp_path: Path, samples: list[dict[str, Any]], ptype: str,
                                                      reason: str) -> None:
    """A series the vectorised path cannot prove exact is computed by value_at, alone (the
    schedule stays vectorised), counted by reason, with the reference's values."""
    for sample in samples:
        sample["values"]["m.i"] = 1
    a, pmid = _counter_archive(tmp_path, samples, ptype)
    pmids = [pmid, int(a.desc("m.i").pmid)]
    fast, ref = Replay(a, pmids), Replay(a, pmids)
    sched = (Timestamp(1700000001), 2 * 10**9, 16)
    assert view(fast.schedule(*sched)) == view(ref.schedule_reference(*sched))
    assert (fast.stats.vectorised, fast.stats.reference) == (1, 0)
    assert fast.stats.fallbacks == Counter()
    # the instant metric is logged in the same records: only out-of-order times touch it
    n = 2 if reason == fastinterp.TIMES_OUT_OF_ORDER else 1
    assert fast.stats.series_fallbacks == Counter({reason: n})


def _benchmark_like() -> dict[str, Any]:
    """benchmarks/bench_interp.py's archive in small: counters, instants and discretes of
    every numeric type and strings, over two 10-instance domains and a 3-instance one,
    every 10 s, discretes every 6th result, a mark and a 30-minute gap every 40 results."""
    types = ["32", "u32", "64", "u64", "float", "double"]
    metrics, k = [], 0
    for sem in ("counter", "instant", "discrete"):
        for ty in types:
            for indom in (None, "245.1", "245.2", "245.3"):
                metrics.append({"name": f"b.{sem}.{ty}.{k}", "pmid": f"245.0.{k}", "type": ty,
                                "sem": sem, **({"indom": indom} if indom else {})})
                k += 1
    metrics.append({"name": "b.string", "pmid": f"245.0.{k}", "type": "string", "sem": "instant"})
    sizes = {"245.1": 10, "245.2": 10, "245.3": 3}
    samples: list[dict[str, Any]] = []
    sec = 1_700_000_000
    for n in range(120):
        if n and n % 40 == 0:
            samples.append({"mark": True})
            sec += 1800
        sec += 10
        values: dict[str, Any] = {}
        for m in metrics:
            if ".discrete." in m["name"] and n % 6 and n % 40:
                continue
            if m["type"] == "string":
                if n % 6 == 0:
                    values[m["name"]] = f"s{n}"
                continue
            v: float = 1000 * n + 7 * (n % 13) if ".counter." in m["name"] else (n * 37) % 101
            if m["type"] in ("float", "double"):
                v = v / 4
            values[m["name"]] = {f"i{i}": v + i for i in range(sizes[m["indom"]])} if "indom" in m else v
        samples.append({"time": sec, "values": values})
    return {"archive": {"version": 3, "hostname": "h", "timezone": "UTC"}, "metrics": metrics,
            "indoms": [{"indom": d, "instances": {f"i{i}": i for i in range(n)}} for d, n in sizes.items()],
            "samples": samples}


@pytest.fixture(scope="module")
def bench_like(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("bench") / "b"
    generate_archive(parse_fixture(_benchmark_like()), base)
    return base


@pytest.mark.parametrize("rules", ["pcp-6.0", "pcp-6.3"])
@pytest.mark.parametrize("direction", [1, -1])
def test_benchmark_like_archive_is_all_vectorised(bench_like: Path, rules: str, direction: int) -> None:
    """An archive shaped like the benchmark's: every schedule and every series vectorised,
    no fallback at all, the reference's values."""
    base = bench_like
    a = Archive(base)
    stamps = [r.timestamp.total_nsec() for r in a.results()]
    delta = direction * 7_777_777_777
    start = Timestamp.from_nsec(stamps[0] + 1 if direction > 0 else stamps[-1] - 1)
    count = (stamps[-1] - stamps[0]) // abs(delta)
    check(base, start, delta, count, rules, ())
    replay = Replay(a, [int(d.pmid) for d in a.descs()], rules=rules)
    replay.schedule(start, delta, count)
    assert replay.stats.vectorised == 1 and replay.stats.reference == 0
    assert replay.stats.fallbacks == Counter() and replay.stats.series_fallbacks == Counter()
    assert ordinary(a)


@settings(max_examples=3000, deadline=None)
@given(dsec=st.integers(-(1 << 62), 1 << 62) | st.integers(-100, 100),
       dnsec=st.integers(-999_999_999, 999_999_999) | st.integers(-1000, 1000))
def test_time_difference_integer_form_equals_fractions(dsec: int, dnsec: int) -> None:
    got, want = sub_parts.__wrapped__(dsec, dnsec), sub_parts_exact(dsec, dnsec)
    assert struct.pack("<d", got) == struct.pack("<d", want) and not math.isnan(got)


TIES: dict[str, Any] = {
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
    base = tmp_path / "ties"
    generate_archive(parse_fixture(TIES), base)
    start = Timestamp(1700000000) if delta > 0 else Timestamp(1700000070)
    check(base, start, delta, 60, rules, ())


def test_float_counter_beyond_float32_is_infinite(tmp_path: Path) -> None:
    """INTERP-VAL-7: (float) of a value beyond FLT_MAX is infinity, as in C; no exception."""
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
def test_seeking_to_a_late_start_changes_nothing(tmp_path_factory: pytest.TempPathFactory, data: st.DataObject,
                                                 rules: str, emulate: tuple[str, ...]) -> None:
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
