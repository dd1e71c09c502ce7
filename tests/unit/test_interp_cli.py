"""`pcpconform interp`'s schedule, instance and output options (INTERP-CLI-*, INTERP-RATE-1);
rate conversion against each referee's pmval is in tests/differential/test_interp_vs_libpcp.py."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest

from pcpconform.errors import UsageError
from pcpconform.oracles.interp.schedule import parse_interval
from tests.cli import run_cli

ROOT = Path(__file__).resolve().parents[2]
T0 = 1700000000


def run(*argv: str) -> tuple[int, str, str]:
    return run_cli("interp", *argv)


def test_interval_words_follow_pmparseinterval() -> None:
    """INTERP-CLI-1"""
    assert parse_interval("10", "x") == 10 * 10**9
    assert parse_interval("2.5sec", "x") == 2_500_000_000
    assert parse_interval("1min 30s", "x") == 90 * 10**9
    assert parse_interval("250ms", "x") == 250_000_000
    assert parse_interval("-1h", "x") == -3600 * 10**9
    with pytest.raises(UsageError):
        parse_interval("ten", "x")


def test_start_end_offsets_and_csv(cpu: Path) -> None:
    """INTERP-CLI-1, INTERP-CLI-3: +/- offsets from the archive's ends; CSV rows."""
    status, out, _ = run(str(cpu), "cpu.temp", "--start", "+5", "--end=-5sec", "--interval", "10",
                         "--format", "csv")
    assert status == 0
    rows = list(csv.DictReader(io.StringIO(out)))
    assert sorted({r["time"] for r in rows}) == [f"{T0 + t}.000000000" for t in (5, 15, 25)]
    assert {r["instance"] for r in rows} == {"cpu0", "cpu1 socket0", "cpu2"}
    # pcp-6.3 INSTANT: ties at the midpoint go to the prior value
    assert [r["value"] for r in rows if r["instance"] == "cpu0"] == ["40.5", "42.0", "44.0"]


def test_pmreps_short_options_mean_the_long_ones(cpu: Path) -> None:
    """INTERP-CLI-1: -S -T -t -s -i as pmrep spells them, for interp and derive alike."""
    long = run(str(cpu), "cpu.temp", "--start", "+5", "--end=-5sec", "--interval", "10",
               "--instances", "cpu0", "--samples", "2", "--format", "csv")
    short = run(str(cpu), "cpu.temp", "-S", "+5", "-T=-5sec", "-t", "10", "-i", "cpu0", "-s", "2",
                "--format", "csv")
    assert short == long and long[0] == 0 and len(long[1].splitlines()) == 3
    derived = [run_cli("derive", str(cpu), "-d", "t2 = cpu.temp * 2", *opts, "--format", "csv")
               for opts in (["--start", "+5", "--interval", "10", "--samples", "2"],
                            ["-S", "+5", "-t", "10", "-s", "2"])]
    assert derived[0] == derived[1] and derived[0][0] == 0


def test_instances_select_by_name_first_word_or_id(cpu: Path) -> None:
    """INTERP-CLI-2"""
    status, out, _ = run(str(cpu), "cpu.temp", "--instances", "cpu1,2", "--samples", "1",
                         "--format", "json")
    assert status == 0
    doc = json.loads(out)
    assert [i["name"] for i in doc["samples"][0]["metrics"][0]["instances"]] == ["cpu1 socket0", "cpu2"]


@pytest.mark.parametrize("argv, message", [
    (["cpu.temp", "--instances", "cpu9"], "instance 'cpu9' is not in the instance domain of cpu.temp"),
    (["no.such"], "unknown metric 'no.such'"),
    (["cpu.temp", "--start", "0", "--interval", "1ms"], "the default schedule would make"),
    (["cpu.temp", "--interval", "0"], "--interval must not be 0"),
    (["cpu.temp", "--start", "yesterday"], "not a time"),
    (["cpu.temp", "--samples", "0"], "--samples must be at least 1"),
])
def test_bad_requests_are_one_line_errors(cpu: Path, argv: list[str], message: str) -> None:
    """INTERP-CLI-4"""
    status, out, err = run(str(cpu), *argv)
    assert status == 2 and out == ""
    assert message in err and len(err.strip().splitlines()) == 1


def test_rate_conversion(cpu: Path) -> None:
    """INTERP-RATE-1: per-second rates, a silent base, decreases have no value."""
    status, out, _ = run(str(cpu), "cpu.busy", "--rate", "--format", "json", "--interval", "10")
    assert status == 0
    doc = json.loads(out)
    assert doc["rate"] is True
    by_time = [{i["name"]: i for i in s["metrics"][0]["instances"]} for s in doc["samples"]]
    assert by_time[0]["cpu0"]["reason"] == "rate base"
    assert by_time[2]["cpu1 socket0"]["reason"] == "counter decreased"
    status, text, _ = run(str(cpu), "cpu.busy", "--rate", "--interval", "10", "--instances", "cpu0")
    assert text.splitlines()[0] == "# rules pcp-6.3 (as asked)"
    assert [line.split("  ")[-1] for line in text.splitlines()[1:]] == \
        ["no value (rate base)", "30.0", "60.0", "30.0"]


def test_plot_option_writes_a_png(cpu: Path, tmp_path: Path) -> None:
    status, _, _ = run(str(cpu), "cpu.busy", "cpu.temp", "--plot", str(tmp_path / "p.png"),
                       "--format", "csv")
    assert status == 0
    assert (tmp_path / "p.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_emulate_choices_are_the_named_deviations() -> None:
    """INTERP-DEV-*: every named deviation can be asked for, and only those."""
    from pcpconform.cli import build_parser
    from pcpconform.oracles.interp.model import DEVIATIONS

    parser = build_parser()
    sub: Any = next(a for a in parser._actions
                    if a.dest == "command" or (hasattr(a, "choices") and "interp" in (a.choices or {})))
    interp = sub.choices["interp"]
    emulate = next(a for a in interp._actions if a.dest == "emulate")
    assert set(emulate.choices) == {"all", *DEVIATIONS}
