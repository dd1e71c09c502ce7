"""What users of `pcpconform derive` asked for: --instances and --plot (DERIVE-CLI-5),
valueless samples kept with their reason (DERIVE-CLI-6), the profile said and chosen
automatically (DERIVE-CLI-7), the archive's own errors first (DERIVE-CLI-8), a config file
with a bad line evaluated as pmLoadDerivedConfig does (DERIVE-CLI-3), and archives with
singular values under instance 1 (INTERP-SINGULAR-1)."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from tests.cli import run_cli
from tests.interp_archives import damage_label_start, singular_archive


def run(*argv: str) -> tuple[int, str, str]:
    return run_cli("derive", *argv)


def _body(text: str) -> list[str]:
    return [line for line in text.splitlines() if not line.startswith("#")]


def test_instances_select_derived_instances(cpu: Path) -> None:
    status, out, err = run(str(cpu), "-d", "hot = cpu.temp * 2", "--instances", "cpu0,2",
                           "--samples", "2", "--format", "json")
    assert status == 0, err
    names = [[i["name"] for i in m["instances"]] for s in json.loads(out)["samples"] for m in s["metrics"]]
    assert names == [["cpu0", "cpu2"]] * 2
    status, out, err = run(str(cpu), "-d", "n = count(cpu.temp)", "--instances", "cpu0")
    assert status == 2 and out == "" and "n has no instance domain" in err
    status, _, err = run(str(cpu), "-d", "hot = cpu.temp * 2", "--instances", "cpu9")
    assert status == 2 and "instance 'cpu9' is not in the instance domain of hot" in err


def test_valueless_samples_are_kept_with_the_reason(cpu: Path) -> None:
    status, out, _ = run(str(cpu), "-d", "r = rate(cpu.busy)", "--instances", "cpu0", "--interval", "10")
    assert status == 0
    lines = _body(out)
    assert lines[0].endswith("r[cpu0]  no value (none returned)")
    assert lines[1].endswith("r[cpu0]  30.0")
    status, out, _ = run(str(cpu), "-d", "r = rate(cpu.busy)", "--interval", "10", "--format", "csv")
    rows = [line.split(",") for line in out.splitlines()[1:]]
    assert [r[6] for r in rows[:3]] == ["none returned"] * 3
    assert any(r[6] == "instance not returned" for r in rows)       # rate() drops a decrease


def test_plot_draws_the_derived_values(cpu: Path, tmp_path: Path) -> None:
    png = tmp_path / "d.png"
    status, _, err = run(str(cpu), "-d", "hot = cpu.temp * 2", "-d", "n = count(cpu.temp)",
                         "--plot", str(png), "--interval", "5")
    assert status == 0, err
    assert png.read_bytes()[:4] == b"\x89PNG"


def test_rules_said_and_auto(cpu: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    status, out, _ = run(str(cpu), "-d", "x = cpu.temp", "--samples", "1", "--rules", "pcp-7")
    assert out.splitlines()[0] == "# rules pcp-7 (as asked)"
    conf = tmp_path / "pcp.conf"
    for version, profile in (("6.0.3", "pcp-6.0"), ("6.3.8", "pcp-6.3"), ("7.2.2", "pcp-7")):
        conf.write_text(f"PCP_VERSION={version}\n")
        monkeypatch.setenv("PCP_CONF", str(conf))
        status, out, _ = run(str(cpu), "-d", "x = cpu.temp", "--samples", "1", "--rules", "auto",
                             "--format", "json")
        assert status == 0 and json.loads(out)["rules"] == profile
    status, out, _ = run("--check", "a +", "--rules", "auto")
    assert status == 1


def test_the_archives_own_error_comes_first(tmp_path: Path) -> None:
    """DERIVE-CLI-8: a damaged data file is reported alone, before any derived metric."""
    base = singular_archive(tmp_path / "d")
    data = Path(f"{base}.0")
    raw = bytearray(data.read_bytes())
    first = 132                                  # after the version 2 label
    length = struct.unpack_from(">I", raw, first)[0]
    struct.pack_into(">I", raw, first + length - 4, 7)      # a trailer that disagrees
    data.write_bytes(bytes(raw))
    status, out, err = run(str(base), "-d", "x = s.ok +", "-d", "y = s.nosuch * 2", "-d", "z = s.ok")
    assert status == 1 and out == ""
    assert err.splitlines() == [f"pcpconform derive: d.0, record 1, offset {first + length - 4}, "
                                f"field trailer: trailer length 7 != header length {length}"]


def test_config_file_with_a_bad_line_keeps_the_rest(cpu: Path, tmp_path: Path) -> None:
    """DERIVE-CLI-3: as pmLoadDerivedConfig, the bad line is reported with FILE:LINE and the
    others are evaluated; the exit status says a definition failed."""
    conf = tmp_path / "d.conf"
    conf.write_text("a = cpu.temp + 1\nb = cpu.temp +\nc = cpu.temp * 2\n")
    status, out, err = run(str(cpu), "-c", str(conf), "--samples", "1", "--instances", "cpu0")
    assert status == 1
    assert err.startswith(f"[{conf}:2] Error: pmRegisterDerived(b, ...) syntax error")
    assert [line.split("  ")[1] for line in _body(out)] == ["a[cpu0]", "c[cpu0]"]


def test_singular_values_under_instance_one(tmp_path: Path) -> None:
    """INTERP-SINGULAR-1 through derive: the operands have values, so the sum has."""
    base = singular_archive(tmp_path / "s")
    status, out, _ = run(str(base), "-d", "x = s.inst + s.ok", "--interval", "10")
    assert status == 0
    assert [line.split("  ")[-1] for line in _body(out)] == ["2", "4", "6", "8"]


def test_schedule_outside_and_bounded_as_interp(tmp_path: Path) -> None:
    """DERIVE-CLI-9: a start past the end is end of log; an absurd default span is refused."""
    base = singular_archive(tmp_path / "b")
    status, out, _ = run(str(base), "-d", "x = s.ok", "--start", "+100", "--interval", "-30")
    assert status == 0
    assert [line.split("  ")[-1] for line in _body(out)] == ["end of log"] * 3 + ["2"]
    damage_label_start(base, 1000)
    status, out, err = run(str(base), "-d", "x = s.ok")
    assert status == 2 and out == "" and "a damaged label?" in err
