"""interp in flat memory on large archives: the window replay is taken on the benchmark's
shape (and gives the whole replay's samples), small archives and whole-schedule uses keep
the whole replay, running out of memory stays one clean line; and the benchmark archive
generator's fast encoder writes what the construct schemas write."""

from __future__ import annotations

import itertools
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from pcpconform.cli import main
from pcpconform.format.pmtypes import Timestamp
from pcpconform.io.archive import Archive
from pcpconform.oracles.interp import window
from pcpconform.oracles.interp.replay import Replay
from pcpconform.oracles.interp.window import WindowReplay, open_replay
from tests.bench_modules import bench_module
from tests.interp_archives import singular_archive

ROOT = Path(__file__).resolve().parents[2]
VALID = ROOT / "corpus" / "cases" / "valid"


def _bench_decode() -> ModuleType:
    return bench_module("bench_decode")


@pytest.fixture(scope="module")
def bench_shape(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("bench") / "bench"
    _bench_decode().generate(base, 3, 4.5, 1)       # ~1130 results and a mark
    return base


@pytest.mark.parametrize("version", [2, 3])
def test_generator_fast_encoder_writes_what_the_schemas_write(version: int) -> None:
    bench_decode = _bench_decode()
    assert bench_decode.build_chunk(version, 995, 1010) == \
        bench_decode.build_chunk_reference(version, 995, 1010)


@pytest.mark.parametrize("metrics", [["network.interface.in.bytes"], []])
@pytest.mark.parametrize("interval", [600, 7])
def test_the_window_is_taken_on_the_benchmark_shape(bench_shape: Path, metrics: list[str],
                                                    interval: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(window, "_GRID", 16)          # many pieces on a small archive
    a = Archive(bench_shape)
    pmids = [int(a.desc(m).pmid) for m in metrics] or [int(d.pmid) for d in a.descs()]
    replay = open_replay(a, pmids, rules="pcp-6.3", min_bytes=0)
    assert isinstance(replay, WindowReplay)
    count = int((replay.end + 60) // interval)
    start, step = a.start, interval * 10**9
    got = [repr(s) for piece in replay.schedule_chunks(start, step, count) for s in piece]
    stats = replay.stats
    assert not stats.window_fallbacks and not stats.fallbacks and not stats.series_fallbacks
    assert stats.windowed > 5 and stats.windowed == stats.vectorised and stats.reference == 0
    assert got == [repr(s) for s in Replay(a, pmids, rules="pcp-6.3").schedule(start, step, count)]


def test_small_archives_emulations_and_whole_schedules_keep_the_whole_replay(bench_shape: Path) -> None:
    a = Archive(bench_shape)
    pmids = [int(a.descs()[0].pmid)]
    assert type(open_replay(a, pmids, rules="pcp-6.3")) is Replay          # 4.5 MB < 64 MB
    for kw in ({"emulate": ("mark-first-fetch",)}, {"whole_schedule": True}):
        assert type(open_replay(a, pmids, rules="pcp-6.3", min_bytes=0, **kw)) is Replay


def test_a_backward_schedule_falls_back_counted(bench_shape: Path) -> None:
    a = Archive(bench_shape)
    pmids = [int(a.descs()[0].pmid)]
    replay = open_replay(a, pmids, rules="pcp-6.0", min_bytes=0)
    end = Timestamp.from_nsec(a.start.total_nsec() + int(replay.end * 1e9))
    got = list(itertools.chain.from_iterable(replay.schedule_chunks(end, -60 * 10**9, 30)))
    assert replay.stats.window_fallbacks == {window.BACKWARDS: 1}
    assert [repr(s) for s in got] == \
        [repr(s) for s in Replay(a, pmids, rules="pcp-6.0").schedule(end, -60 * 10**9, 30)]


def test_the_command_uses_the_window_and_writes_the_same_csv(bench_shape: Path, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    args = ["interp", str(bench_shape), "kernel.all.load", "proc.psinfo.priority", "--interval", "95",
            "--format", "csv"]
    assert main([*args, "-o", str(tmp_path / "whole.csv")]) == 0
    opened: list[Any] = []

    def spy(*a: Any, **kw: Any) -> Any:
        opened.append(window.open_replay(*a, **{**kw, "min_bytes": 0}))
        return opened[-1]

    monkeypatch.setattr("pcpconform.cli.interp.open_replay", spy)
    assert main([*args, "-o", str(tmp_path / "window.csv")]) == 0
    assert isinstance(opened[0], WindowReplay) and opened[0].stats.windowed
    assert (tmp_path / "window.csv").read_bytes() == (tmp_path / "whole.csv").read_bytes()


@pytest.mark.usefixtures("default_host_pcp")
def test_running_out_of_memory_in_the_window_is_one_clean_line(
        bench_shape: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    def exhausted(self: WindowReplay, *args: Any) -> None:
        raise MemoryError

    monkeypatch.setattr(window, "WINDOW_MIN_BYTES", 0)
    monkeypatch.setattr(WindowReplay, "_fill", exhausted)
    assert main(["interp", str(bench_shape), "kernel.all.load", "--format", "csv", "-o", "/dev/null"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "out of memory" in err and "Traceback" not in err


def test_singular_quirks_found_by_the_window_are_still_reported(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """INTERP-SINGULAR-1: the window meets them as it reads; the same values, and the same
    warnings (after the output instead of before it)."""
    base = singular_archive(tmp_path / "s", multi=True)
    args = ["interp", str(base), "s.multi", "s.mixed", "s.inst", "--interval", "0.5", "--format", "csv"]
    assert main(args) == 0
    whole = capsys.readouterr()
    monkeypatch.setattr(window, "WINDOW_MIN_BYTES", 0)
    assert main(args) == 0
    windowed = capsys.readouterr()
    assert windowed.out == whole.out
    assert sorted(windowed.err.splitlines()) == sorted(whole.err.splitlines())
    assert "s.multi has no instance domain" in windowed.err
