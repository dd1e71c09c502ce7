"""benchmarks/bench_sets.py's set of daily archives, small: written as the benchmark writes
it, a set libpcp opens, and replayed by the kit as libpcp's C loop replays it (the check the
benchmark makes before it times anything). Timings are never asserted."""

from __future__ import annotations

from pathlib import Path

from pcpconform.io.archiveset import ArchiveSet
from pcpconform.oracles.interp.window import open_replay
from tests.bench_modules import bench_module

bench_interp = bench_module("bench_interp")
bench_sets = bench_module("bench_sets")


def test_a_small_week_replays_as_libpcp_replays_it(tmp_path: Path) -> None:
    binary = bench_interp.build_c_loop(out=tmp_path / "interp_loop")   # never skipped: CI installs cc
    bases = bench_sets.build_set(tmp_path / "week", 3, 0.15, 3, 1)
    s = ArchiveSet(tmp_path / "week")
    assert [Path(m.name) for m in s.members] == bases and [seam.overlap for seam in s.seams()] == [False, False]
    pmids = [int(d.pmid) for d in s.descs()]
    lo, hi = s.start.total_nsec(), s.end().total_nsec()       # type: ignore[union-attr]
    start = type(s.start).from_nsec(lo + 1_234_567_891)
    delta = (hi - 2 * 10**9 - start.total_nsec()) // 59
    samples = open_replay(s, pmids, rules="pcp-6.0", min_bytes=0).schedule(start, delta, 60)
    fetched, nvalues, diffs = bench_interp.verify(binary, tmp_path / "week", pmids, samples, start, delta, 60, 6)
    assert diffs == [] and fetched >= 6 and nvalues > 100
    assert bench_sets.build_set(tmp_path / "week", 3, 0.15, 3, 1) == bases      # cached
