"""benchmarks/run_all.py's table and rows, and the C reference of the interp benchmark
(benchmarks/c/interp_loop.c): it compiles with cc against the host's libpcp and replays
what the oracle replays, checked the way bench_interp.py checks it. Timings are never
asserted here."""

from __future__ import annotations

import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.bench_modules import bench_module

ROOT = Path(__file__).resolve().parents[2]


def _import(name: str) -> ModuleType:
    return bench_module(name)


run_all = _import("run_all")
bench_interp = _import("bench_interp")


def _row(label: str, wall: list[float], cpu: list[float], reference: str | None = None,
         target: str = "") -> Any:
    return run_all.Row(label, ["true"], reference, target, wall=wall, cpu=cpu)


def test_table_gives_best_times_and_reference_over_row_ratios() -> None:
    rows = [_row("tool", [2.0, 1.0, 1.5], [0.9, 0.5, 0.8]),
            _row("kit", [4.0, 3.0], [2.5, 2.0], "tool", ">= 1.0x"),
            _row("lost", [], [], "tool")]
    rows[2].failed = "exit 3: no such file"
    head, tool, kit, lost = run_all.table(rows)
    assert head.split()[:3] == ["command", "wall", "s"]
    assert tool.split() == ["tool", "1.00", "0.50", "(reference)"]
    assert kit.split() == ["kit", "3.00", "2.00", "tool", "0.33x", "0.25x", ">=", "1.0x"]
    assert lost.split() == ["lost", "FAILED:", "exit", "3:", "no", "such", "file"]


def test_table_leaves_the_ratio_out_when_the_reference_failed() -> None:
    ref, kit = _row("tool", [], []), _row("kit", [1.0], [1.0], "tool")
    ref.failed = "boom"
    assert run_all.table([ref, kit])[2].split() == ["kit", "1.00", "1.00", "tool"]


def test_rows_time_commands_and_calls_and_record_failures() -> None:
    ok = run_all.Row("ok", [sys.executable, "-c", "pass"])
    check_found_problems = run_all.Row("exit 1", [sys.executable, "-c", "raise SystemExit(1)"])
    broken = run_all.Row("broken", [sys.executable, "-c",
                                    "import sys; print('no such archive', file=sys.stderr); sys.exit(2)"])
    calls: list[int] = []
    called = run_all.Row("call", call=lambda: calls.append(1))

    def fails() -> None:
        raise ValueError("bad schedule")

    raising = run_all.Row("raising", call=fails)
    for row in (ok, check_found_problems, broken, called, raising):
        row.run()
    assert ok.wall and ok.cpu and ok.failed is None
    assert check_found_problems.wall and check_found_problems.failed is None
    assert (broken.wall, broken.failed) == ([], "no such archive")
    assert calls == [1] and called.wall and called.failed is None
    assert (raising.wall, raising.failed) == ([], "ValueError: bad schedule")


@pytest.fixture(scope="module")
def c_replay(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, list[int], Any, int]:
    """interp_loop built into a temporary directory, and a small archive of the bench shape."""
    tmp = tmp_path_factory.mktemp("bench-c")
    binary = bench_interp.build_c_loop(out=tmp / "interp_loop")   # never skipped: CI installs cc
    base = tmp / "bench"
    bench_interp.generate(base, 3, 0.3, 1)
    _archive, start, delta, _last = bench_interp.schedule(base, 40)
    return binary, base, [int(d.pmid) for d in _archive.descs()], start, delta


def _oracle(base: Path, pmids: list[int], start: Any, delta: int, count: int) -> list[Any]:
    from pcpconform.io.archive import Archive
    from pcpconform.oracles.interp.replay import Replay

    return Replay(Archive(base), pmids, rules="pcp-6.0").schedule(start, delta, count)


def test_c_loop_compiles_against_libpcp_and_agrees_with_the_oracle(c_replay: Any) -> None:
    binary, base, pmids, start, delta = c_replay
    samples = _oracle(base, pmids, start, delta, 40)
    fetched, nvalues, diffs = bench_interp.verify(binary, base, pmids, samples, start, delta, 40, 4)
    assert diffs == []
    assert fetched == 7 and nvalues > 7 * 40
    summary, picked = bench_interp.run_c_loop(
        bench_interp.c_loop_argv(binary, base, pmids, start, delta, 40))
    assert picked == [] and summary["fetches"] == 40 and summary["eol"] == 0
    assert summary["values"] == bench_interp.checksum(samples, _types(base, pmids))[1]


def _types(base: Path, pmids: list[int]) -> dict[int, int]:
    from pcpconform.io.archive import Archive

    a = Archive(base)
    return {p: a.desc(p).type for p in pmids}


def test_verification_catches_a_value_changed_between_the_picked_fetches(c_replay: Any) -> None:
    binary, base, pmids, start, delta = c_replay
    samples = _oracle(base, pmids, start, delta, 40)
    unpicked = 20            # 4 picks: 0-3, and 13, 26, 39 spread over the schedule
    values = samples[unpicked].values[pmids[0]]
    inst = next(iter(values))
    values[inst] += 1
    _fetched, _nvalues, diffs = bench_interp.verify(binary, base, pmids, samples, start, delta, 40, 4)
    assert len(diffs) == 1 and diffs[0].startswith("all 40 fetches (eol, values, checksum)")


def test_verification_reports_a_picked_fetch_value_by_value(c_replay: Any) -> None:
    binary, base, pmids, start, delta = c_replay
    samples = _oracle(base, pmids, start, delta, 40)
    del samples[2].values[pmids[-1]]
    _fetched, _nvalues, diffs = bench_interp.verify(binary, base, pmids, samples, start, delta, 40, 4)
    assert any(d.startswith("fetch 2 ") for d in diffs)


def test_a_missing_compiler_is_a_build_error_not_a_fallback(tmp_path: Path) -> None:
    with pytest.raises(bench_interp.CBuildError, match="no C compiler"):
        bench_interp.build_c_loop(cc="no-such-cc-here", out=tmp_path / "x")


def _printing(text: str) -> list[str]:
    return [sys.executable, "-c", f"import sys; sys.stdout.write({text!r})"]


PMREP_CSV = 'Time,"m.a-sda","m.a-sdb","m.b"\n2023-11-14 22:13:21,1,2,0.5\n2023-11-14 22:13:49,,4,0.6\n'
DERIVE_CSV = ("time,metric,pmid,inst,instance,value,reason\n"
              "1.0,m.a,511.0.1,0,sda,1,\n1.0,m.a,511.0.1,1,sdb,2,\n1.0,m.b,511.0.2,-1,,0.5,\n"
              "2.0,m.a,511.0.1,0,sda,,counter across mark\n2.0,m.a,511.0.1,1,sdb,4,\n"
              "2.0,m.b,511.0.2,-1,,0.6,\n")


def test_derive_columns_count_values_per_metric_instance_in_both_csvs() -> None:
    theirs, ours = run_all.derive_columns(run_all.Row("pmrep", _printing(PMREP_CSV)),
                                          run_all.Row("derive", _printing(DERIVE_CSV)))
    assert theirs == ours == {"m.a-sda": 1, "m.a-sdb": 2, "m.b": 2}
    one_less = DERIVE_CSV.replace("2.0,m.b,511.0.2,-1,,0.6,", "2.0,m.b,511.0.2,-1,,,no prior")
    theirs, ours = run_all.derive_columns(run_all.Row("pmrep", _printing(PMREP_CSV)),
                                          run_all.Row("derive", _printing(one_less)))
    assert theirs != ours


@pytest.mark.parametrize("script", ["run_all", "bench_interp"])
def test_without_a_compiler_the_benchmark_says_so_and_exits_2(
        script: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("CC", "no-such-cc-here")
    assert {"run_all": run_all, "bench_interp": bench_interp}[script].main([]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot build the C reference: no C compiler" in err


def test_no_check_many_rows_for_zero_archives() -> None:
    assert run_all.check_many_rows("pcpconform", 0) == []


def test_c_loop_counts_end_of_log_fetches_as_the_oracle_does(c_replay: Any) -> None:
    binary, base, pmids, start, delta = c_replay
    samples = _oracle(base, pmids, start, 2 * delta, 40)     # the second half past the end
    assert 10 < sum(s.eol for s in samples) < 30
    assert bench_interp.verify(binary, base, pmids, samples, start, 2 * delta, 40, 4)[2] == []
