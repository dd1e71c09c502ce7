"""Figures of an interpolation replay (pcpconform.extra.plot); no libpcp needed."""

from __future__ import annotations

import math
import struct
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("matplotlib")

from pcpconform.extra.plot import build_figure, panels, plot_replay
from pcpconform.fixtures.fixture import load_fixture, parse_fixture
from pcpconform.fixtures.generate import generate_archive
from pcpconform.format.pmtypes import Timestamp
from pcpconform.io.archive import Archive
from pcpconform.oracles.interp.model import NoValue, Sample
from pcpconform.oracles.interp.replay import Replay

ROOT = Path(__file__).resolve().parents[2]
T0 = 1700000000
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == PNG_MAGIC and data[12:16] == b"IHDR"
    assert data.rstrip(b"\0")[-8:-4] == b"IEND"
    return struct.unpack(">II", data[16:24])


def lines(ax: Any) -> dict[str, Any]:
    return {ln.get_gid(): ln for ln in ax.lines}


def same(xs: Any, ys: Any) -> bool:
    """Equal as plotted: NaN matches NaN."""
    xs, ys = [float(x) for x in xs], [float(y) for y in ys]
    return len(xs) == len(ys) and all(a == b or (math.isnan(a) and math.isnan(b))
                                      for a, b in zip(xs, ys))


def build(tmp_path: Path, doc: dict[str, Any], name: str = "a") -> Archive:
    base = tmp_path / name
    generate_archive(parse_fixture(doc), base)
    return Archive(base)


def replay_all(a: Archive, rules: str = "pcp-6.3") -> Replay:
    return Replay(a, [int(d.pmid) for d in a.descs()], rules=rules)


@pytest.fixture(scope="module")
def seed(tmp_path_factory: pytest.TempPathFactory) -> Archive:
    base = tmp_path_factory.mktemp("seed") / "s"
    generate_archive(load_fixture(ROOT / "corpus" / "fixtures" / "interp-seed.yaml"), base)
    return Archive(base)


def test_seed_figure_shows_observations_values_and_end_of_log(seed: Archive, tmp_path: Path) -> None:
    names = ("seed.counter", "seed.instant", "seed.discrete")
    pmids = [int(seed.desc(m).pmid) for m in names]
    replay = Replay(seed, pmids, rules="pcp-6.0")
    samples = replay.schedule(Timestamp(T0), 2_500_000_000, 42)   # t = 0 .. 102.5 s
    fig = build_figure(replay, samples)
    assert len(fig.axes) == 3
    times = [replay.rel(s.time) for s in samples]
    for ax, name, pmid in zip(fig.axes, names, pmids):
        assert ax.get_title().startswith(name)
        got = lines(ax)
        assert set(got) == {"observations", "interpolated", "novalue:end of log"}
        obs = got["observations"]
        assert list(obs.get_xdata()) == [10.0 * k for k in range(9)]   # the start is T0+10
        assert list(obs.get_ydata()) == [610, 720, 1020, 1020, 1020, 1050, 1100, 1200, 1210]
        val = got["interpolated"]
        assert list(val.get_xdata()) == times
        expected = [math.nan if s.eol else s.values[pmid][-1] for s in samples]
        assert same(val.get_ydata(), expected)
        assert val.get_drawstyle() == ("default" if name == "seed.counter" else "steps-post")
        eol = got["novalue:end of log"]
        assert list(eol.get_xdata()) == [t for t, s in zip(times, samples) if s.eol]
    # the worked example: counter at t = 25, 50, 75 s from T0 (15, 40, 65 s from the start)
    counter = lines(fig.axes[0])["interpolated"]
    by_time = dict(zip(counter.get_xdata(), counter.get_ydata()))
    assert [by_time[t] for t in (15.0, 40.0, 65.0)] == [870, 1020, 1150]

    out = tmp_path / "seed.png"
    plot_replay(replay, samples, out, title="seed worked example")
    width, height = png_size(out)
    assert 400 <= width <= 4000 and 400 <= height <= 6000
    assert out.stat().st_size > 10_000


MIXED = {
    "archive": {"version": 3, "hostname": "mixed.example", "timezone": "UTC", "interval": 10},
    "metrics": [
        {"name": "disk.bytes", "pmid": "60.0.4", "type": "u64", "sem": "counter", "indom": "60.1"},
        {"name": "disk.util", "pmid": "60.0.5", "type": "double", "sem": "instant", "indom": "60.1"},
        {"name": "uname", "pmid": "60.12.0", "type": "string", "sem": "discrete"},
        {"name": "blob", "pmid": "60.12.1", "type": "aggregate", "sem": "instant"},
        {"name": "never", "pmid": "60.12.2", "type": "u32", "sem": "instant"},
    ],
    "indoms": [{"indom": "60.1", "instances": {"sda": 0, "sdb": 1, "sdc": 2}}],
    "samples": [
        {"time": T0, "values": {"disk.bytes": {"sda": 2**64 - 10, "sdb": 5},
                                "disk.util": {"sda": 0.5, "sdb": "nan"},
                                "uname": "6.1.0", "blob": "00ff"}},
        {"values": {"disk.bytes": {"sda": 2**64 - 2, "sdb": 2**63},
                    "disk.util": {"sda": "inf", "sdb": 1.5},
                    "blob": "beef"}},
        {"mark": True},
        {"time": T0 + 60, "values": {"disk.bytes": {"sda": 3, "sdb": 7},
                                     "disk.util": {"sda": "-inf", "sdb": 2.5},
                                     "uname": "6.1.1\u00e9 \U0001F600"}},
        {"values": {"disk.bytes": {"sda": 9, "sdb": 11}, "disk.util": {"sda": 1e308, "sdb": -1e308},
                    "uname": ""}},
    ],
}


def test_strings_marks_instances_nan_and_huge_values(tmp_path: Path) -> None:
    a = build(tmp_path, MIXED)
    replay = replay_all(a)
    samples = replay.schedule(Timestamp(T0 - 3), 2_000_000_000, 45)
    shown = panels(replay, samples)
    # sdc is in the instance domain but never observed: no panel; "never" has no values
    assert [(a.metric_name(p.pmid), p.inst) for p in shown] == [
        ("disk.bytes", 0), ("disk.bytes", 1), ("disk.util", 0), ("disk.util", 1),
        ("uname", -1), ("blob", -1)]
    fig = build_figure(replay, samples)
    assert len(fig.axes) == 6
    assert fig.axes[0].get_title() == "disk.bytes (u64 counter) [sda]"
    assert fig.axes[4].get_title() == "uname (string discrete)"
    mark = replay.marks[0]
    for ax, panel in zip(fig.axes, shown):
        got = lines(ax)
        assert list(got["marks"].get_xdata())[:2] == [mark, mark]
        obs_t = replay.series[(panel.pmid, panel.inst)].times
        assert list(got["observations"].get_xdata()) == list(obs_t)
        assert any(g.startswith("novalue:") for g in got)
    # huge U64 observations are plotted as their float values
    assert list(lines(fig.axes[0])["observations"].get_ydata()) == [
        float(2**64 - 10), float(2**64 - 2), 3.0, 9.0]
    # NaN / inf never reach the value axis: NaN in the line, a marker along the top
    util = lines(fig.axes[2])
    assert same(util["observations"].get_ydata(), [0.5, math.nan, math.nan, 1e308])
    assert len(util["nonfinite"].get_xdata()) >= 2
    # a string metric is a timeline: archive row at 1, fetched values at 0
    uname = lines(fig.axes[4])
    assert set(uname["observations"].get_ydata()) == {1.0}
    valued = [replay.rel(s.time) for s in samples
              if not s.eol and not isinstance(s.values[int(a.desc("uname").pmid)][-1], NoValue)]
    assert list(uname["interpolated"].get_xdata()) == valued and valued
    assert [t.get_text() for t in fig.axes[4].get_yticklabels()] == ["replay", "archive"]

    out = tmp_path / "mixed.png"
    plot_replay(replay, samples, out)
    assert png_size(out)[0] > 600


def test_panel_cap_is_stated(tmp_path: Path) -> None:
    insts = {f"i{k:02d}": k for k in range(30)}
    doc = {
        "archive": {"version": 3, "hostname": "many", "timezone": "UTC", "interval": 1},
        "metrics": [{"name": "m", "pmid": "1.0.1", "type": "32", "sem": "instant", "indom": "1.1"}],
        "indoms": [{"indom": "1.1", "instances": insts}],
        "samples": [{"time": T0, "values": {"m": {n: k for n, k in insts.items()}}},
                    {"values": {"m": {n: -k for n, k in insts.items()}}}],
    }
    a = build(tmp_path, doc)
    replay = replay_all(a)
    samples = replay.schedule(Timestamp(T0), 250_000_000, 5)
    fig = build_figure(replay, samples)
    assert len(fig.axes) == 24
    assert "showing 24 of 30" in fig._suptitle.get_text()  # type: ignore[attr-defined]
    assert len(build_figure(replay, samples, max_panels=5).axes) == 5
    out = tmp_path / "many.png"
    plot_replay(replay, samples, out)
    png_size(out)


def test_nothing_to_plot_still_writes_a_figure(seed: Archive, tmp_path: Path) -> None:
    no_samples: list[Sample] = []
    for replay, samples in ((Replay(seed, []), no_samples),
                            (Replay(seed, [int(seed.desc("seed.counter").pmid)]), no_samples)):
        fig = build_figure(replay, samples)
        assert len(fig.axes) == (0 if not replay.descs else 1)
        out = tmp_path / f"empty{len(replay.descs)}.png"
        plot_replay(replay, samples, out)
        png_size(out)
    # a one-record archive and only end-of-log samples
    doc = {"archive": {"version": 2, "hostname": "h", "timezone": "UTC"},
           "metrics": [{"name": "a", "pmid": "1.0.1", "type": "float", "sem": "counter"}],
           "samples": [{"time": T0, "values": {"a": "nan"}}]}
    a = build(tmp_path, doc, "one")
    replay = replay_all(a)
    samples = replay.schedule(Timestamp(T0 + 100), 10**9, 3)
    assert all(s.eol for s in samples)
    (ax,) = build_figure(replay, samples).axes
    assert same(lines(ax)["interpolated"].get_ydata(), [math.nan] * 3)
    assert list(lines(ax)["novalue:end of log"].get_xdata()) == [100.0, 101.0, 102.0]
    plot_replay(replay, samples, tmp_path / "eol.png")
    png_size(tmp_path / "eol.png")
