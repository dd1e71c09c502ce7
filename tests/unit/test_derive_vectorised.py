"""The vectorised evaluation of derived metrics (pcpconform/oracles/derive/vectorised.py):
C's arithmetic at its edges, bit for bit as the per-fetch evaluator gives it; instance
pairing while instances come and go; the reasons it leaves a metric to the per-fetch
evaluator; and the benchmark's workload (benchmarks/bench_derive.py), which must take it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pcpconform.fixtures.fixture import parse_fixture
from pcpconform.fixtures.generate import generate_archive
from pcpconform.format.pmtypes import PM_IN_NULL, Timestamp
from pcpconform.io.archive import Archive
from pcpconform.oracles.derive.arithmetic import pairs_key
from pcpconform.oracles.derive.bind import Bound, bind
from pcpconform.oracles.derive.evaluate import DerivedSample, Evaluator
from pcpconform.oracles.derive.parser import parse
from pcpconform.oracles.derive.profiles import PROFILES
from pcpconform.oracles.derive.vector_stats import Reason
from pcpconform.oracles.derive.vectorised import plan
from pcpconform.oracles.interp.model import Sample
from tests.bench_modules import bench_module, derive_workload

ROOT = Path(__file__).resolve().parents[2]
T0 = 1700000000
P60 = PROFILES["pcp-6.0"]

#: dimensionless DISCRETE metrics holding the edges of each type, and two instance
#: domains' worth of instances that come and go
EDGES: dict[str, Any] = {
    "archive": {"version": 3, "hostname": "edges.example", "interval": 10},
    "metrics": [
        {"name": "e.u32", "pmid": "40.0.1", "type": "u32", "sem": "discrete"},
        {"name": "e.i32", "pmid": "40.0.2", "type": "32", "sem": "discrete"},
        {"name": "e.u64", "pmid": "40.0.3", "type": "u64", "sem": "discrete"},
        {"name": "e.i64", "pmid": "40.0.4", "type": "64", "sem": "discrete"},
        {"name": "e.flt", "pmid": "40.0.5", "type": "float", "sem": "discrete"},
        {"name": "e.dbl", "pmid": "40.0.6", "type": "double", "sem": "discrete"},
        {"name": "e.big", "pmid": "40.0.7", "type": "u32", "sem": "discrete"},
        {"name": "e.kb", "pmid": "40.0.8", "type": "u64", "sem": "discrete", "units": "Kbyte"},
        {"name": "e.b", "pmid": "40.0.9", "type": "32", "sem": "discrete", "units": "byte"},
        {"name": "e.set", "pmid": "40.1.1", "type": "u32", "sem": "discrete", "indom": "40.1"},
        {"name": "e.set2", "pmid": "40.1.2", "type": "double", "sem": "discrete", "indom": "40.1"},
    ],
    "indoms": [{"indom": "40.1", "instances": {"a": 0, "b": 1, "c": 2, "d x": 9}}],
    "samples": [
        {"time": T0, "values": {
            "e.u32": 4294967295, "e.i32": -2147483648, "e.u64": 18446744073709551615,
            "e.i64": -9223372036854775808, "e.flt": 0.25, "e.dbl": 1e308, "e.big": 16777217, "e.kb": 3, "e.b": 1000,
            "e.set": {"a": 4294967295, "b": 1, "c": 2}, "e.set2": {"c": 0.5, "a": 2.0}}},
        {"time": T0 + 10, "values": {
            "e.u32": 0, "e.i32": 2147483647, "e.u64": 9007199254740993,
            "e.i64": 9223372036854775807, "e.flt": 3.0e38, "e.dbl": -0.0, "e.big": 0,
            "e.kb": 18446744073709551615, "e.b": -1,
            "e.set": {"b": 7, "d x": 3}, "e.set2": {"b": 0.0, "d x": -1.5, "a": 1.0}}},
        {"time": T0 + 20, "values": {
            "e.u32": 7, "e.i32": 0, "e.u64": 0, "e.i64": 0, "e.flt": 0.0, "e.dbl": 0.0,
            "e.big": 33554435, "e.kb": 0, "e.b": 0, "e.set": {"a": 1, "b": 2, "c": 3, "d x": 4},
            "e.set2": {"a": 0.0, "b": 0.0, "c": 0.0, "d x": 0.0}}},
    ],
}

EXPRESSIONS = [
    "e.u32 + 1", "e.i32 - 1", "-e.i32", "-e.u32", "-e.u64", "-e.i64", "e.u64 * 3",
    "e.i64 * e.i64", "e.u64 + 0.5", "e.big + e.flt", "e.flt * e.flt", "e.flt * 1000000.0",
    "e.dbl * e.dbl", "e.i32 / 0", "0 / e.i32", "e.dbl / e.dbl", "e.u64 / e.i64",
    "e.u32 > e.i32", "e.u64 > e.i64", "e.flt < e.dbl", "e.u32 && e.i32", "e.u32 || e.dbl",
    "e.i32 == -2147483648", "e.flt != e.flt", "e.big * e.big", "e.big - e.u32 * 2",
    "e.set + e.u32", "e.u32 - e.set", "e.set * e.set2", "e.set2 / e.set", "-(e.set)",
    "e.set > 1", "4294967295 + 1", "2147483648 * 2", "1.5 / 0", "e.set2 + e.flt",
    # what an operand holds matters only once a parent converts it: to a wider or
    # floating type, or by reinterpreting it (scale factors, -x, FLOAT rounding)
    "e.i32 > e.big", "-e.i32 + 0.5", "-e.u32 * 1.0", "(e.flt + e.flt) * 1.5",
    "(e.big + e.flt) * 1.0", "e.kb + e.b", "e.b - e.kb", "e.kb * e.b", "e.kb / e.b",
    "instant(e.set) - instant(e.set2)", "instant(e.flt) * 1.5",  # pcp-6.0: of a name
]


def _archive(tmp_path: Path) -> Archive:
    base = tmp_path / "edges"
    generate_archive(parse_fixture(EDGES), base)
    return Archive(base)


def _bound(texts: list[str], archive: Archive) -> list[Bound]:
    return [bind(parse(t, P60), f"d.m{k}", archive, P60) for k, t in enumerate(texts)]


def _key(ds: DerivedSample) -> Any:
    return (ds.time, ds.eol, {n: pairs_key(v) for n, v in ds.values.items()}, ds.errors,
            ds.deviations, ds.unknown)


def _run(archive: Archive, bound: list[Bound], vectorise: bool, min_run: int = 1,
         count: int = 23) -> tuple[Evaluator, list[DerivedSample]]:
    ev = Evaluator(archive, bound, P60, vectorise=vectorise)
    if ev.vectoriser is not None:
        ev.vectoriser.min_run = min_run
    # from 1 s before the archive (end of log) to 1 s after it, one fetch a second
    return ev, ev.schedule(Timestamp(T0 - 1), 10**9, count)


def test_edges_of_c_arithmetic_equal_the_per_fetch_evaluator(tmp_path: Path) -> None:
    archive = _archive(tmp_path)
    bound = _bound(EXPRESSIONS, archive)
    assert all(plan(b.root) is None for b in bound), [b.name for b in bound if plan(b.root)]
    _, ref = _run(archive, bound, False)
    ev, got = _run(archive, bound, True)
    for mine, theirs in zip(got, ref):
        assert _key(mine) == _key(theirs), mine.time
    live = sum(1 for ds in ref if not ds.eol)
    assert live >= 20
    assert ev.vector_stats.vectorised == live * len(bound)
    assert not ev.vector_stats.fallbacks
    at_t0 = got[1].values
    assert at_t0["d.m0"] == [(-1, 0)]                       # U32 wraps
    assert at_t0["d.m2"] == [(-1, -2147483648)]             # -INT_MIN is INT_MIN
    assert at_t0["d.m9"] == [(-1, 16777216.0)]              # 16777217 rounded to float32 first


def test_short_runs_and_unplanned_metrics_are_counted(tmp_path: Path) -> None:
    archive = _archive(tmp_path)
    bound = _bound(["e.set + e.set2", "delta(e.u32)", "e.u32 + 1"], archive)
    _, ref = _run(archive, bound, False)
    ev, got = _run(archive, bound, True, min_run=11)
    assert [_key(ds) for ds in got] == [_key(ds) for ds in ref]
    stats = ev.vector_stats
    live = sum(1 for ds in ref if not ds.eol)
    assert live == 21
    assert stats.fallbacks[Reason.HISTORY] == live
    # e.set + e.set2 pairs instances 0, 2 for 10 fetches (short), then 0, 9, 1, 2 for 11
    assert stats.fallbacks[Reason.SHORT_RUN] == 10
    assert [i for i, _ in got[-2].values["d.m0"]] == [0, 9, 1, 2]
    assert stats.vectorised == live + 11
    off, _ = _run(archive, bound, False)
    assert off.vector_stats.fallbacks[Reason.DISABLED] == live * 3


@pytest.mark.parametrize(("text", "reason"), [
    ("e.u32 + 1", None), ("-(e.set * 2)", None), ("e.dbl > 0.5", None),
    ("instant(e.set) * 2", None), ("delta(instant(e.u32))", Reason.HISTORY),
    ("rate(e.u32)", Reason.HISTORY), ("sum(e.set)", Reason.NODE), ("!e.u32", Reason.NODE),
    ("e.set[a] + 1", Reason.NODE), ("e.u32 > 0 ? e.u32 : 1", Reason.NODE),
    ("rescale(e.dbl, \"count\")", Reason.NODE),
])
def test_plan_names_the_reason(tmp_path: Path, text: str, reason: Reason | None) -> None:
    archive = _archive(tmp_path)
    profile = PROFILES["pcp-6.3"]
    assert plan(bind(parse(text, profile), "d.x", archive, profile).root) == reason


@pytest.mark.parametrize("value", [-1, 2**32, b"\x00", "text", object()])
def test_values_outside_their_type_go_per_fetch(tmp_path: Path, value: Any) -> None:
    """A value numpy cannot hold in the operand's dtype is no crash: the run is left to
    the per-fetch evaluator, counted."""
    archive = _archive(tmp_path)
    bound = _bound(["e.u32 + 1"], archive)
    ev = Evaluator(archive, bound, P60)
    assert ev.vectoriser is not None
    pmid = bound[0].root.left.pmid if bound[0].root.left else None
    samples = [Sample(Timestamp(T0 + k), values={pmid: {PM_IN_NULL: value}}) for k in range(5)]
    assert ev.vectoriser.piece(samples) == {"d.m0": [None] * 5}
    assert ev.vector_stats.fallbacks == {Reason.VALUES: 5}


def test_bench_derive_workload_is_vectorised(tmp_path: Path) -> None:
    """Every metric-fetch of bench_derive.py's definitions, on a small archive of the
    bench_interp shape and schedule, takes the vectorised path, with the same values."""
    bench_derive = bench_module("bench_derive")
    archive, start, delta, binding = derive_workload(tmp_path, 300)
    assert [b.name for b in binding.bounds] == bench_derive.NAMES and not binding.messages
    ev = Evaluator(archive, binding.bounds, P60)
    got = ev.schedule(start, delta, 300)
    assert ev.vector_stats.fallbacks == {}, ev.vector_stats.fallbacks
    assert ev.vector_stats.vectorised == 300 * len(bench_derive.NAMES)
    ref = Evaluator(archive, binding.bounds, P60, vectorise=False).schedule(start, delta, 300)
    assert [_key(ds) for ds in got] == [_key(ds) for ds in ref]
