"""`pcpconform derive` (DERIVE-CLI-*): definitions from config files and --define, libpcp's
diagnostics, the interp result format plus the derived descriptors, --check."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli import run_cli

#: stderr is compared whole: the host's PCP goes by the default profile (no DERIVE-CLI-11 note)
pytestmark = pytest.mark.usefixtures("default_host_pcp")


def run(*argv: str) -> tuple[int, str, str]:
    return run_cli("derive", *argv)


def test_check_accepts_and_rejects_with_libpcps_message() -> None:
    """DERIVE-CLI-2"""
    assert run("--check", "1 ? 2 : 0 ? 3 : 4") == (0, "ok\n", "")
    status, out, err = run("--check", "sum (x)")
    assert status == 1 and out == ""
    assert err == 'Error: pmRegisterDerivedMetric("expr", ...)\nsum (x)\n     ^\nUnexpected \'(\'\n'
    status, _, err = run("--check", "delta(sum(x))", "--rules", "pcp-6.0")
    assert status == 1 and "Metric name expected to follow delta(" in err
    assert run("--check", "delta(sum(x))", "--rules", "pcp-6.3")[0] == 0


def test_json_has_the_interp_format_and_the_descriptors(cpu: Path, tmp_path: Path) -> None:
    """DERIVE-CLI-1"""
    conf = tmp_path / "d.conf"
    conf.write_text("# comment\ncpu.busy.rate = rate(cpu.busy)\ncpu.hot = cpu.temp > 41\n")
    status, out, err = run(str(cpu), "-c", str(conf), "-d", "n = count(cpu.temp)", "--interval", "10",
                           "--format", "json")
    assert status == 0 and err == ""
    doc = json.loads(out)
    assert doc["format"] == "pcpconform-interp" and doc["kind"] == "derive"
    descs = {d["name"]: d for d in doc["derived"]}
    assert descs["cpu.busy.rate"]["type"] == 5 and descs["cpu.busy.rate"]["units"] == "count / sec"
    assert descs["cpu.hot"]["type"] == 1 and descs["cpu.hot"]["sem"] == 3
    assert descs["n"]["units"] == "count"
    rates = [{i["name"]: i.get("value") for i in m["instances"]}
             for s in doc["samples"] for m in s["metrics"] if m["name"] == "cpu.busy.rate"]
    # no history on the first fetch: every instance is there, without a value (DERIVE-CLI-6)
    assert set(rates[0].values()) == {None} and len(rates[0]) == 3
    assert rates[1]["cpu0"] == {"type": "double", "value": "0x403e000000000000"}    # 30.0
    # pcp-6.3: a decreasing counter instance is omitted by rate() (DERIVE-EVAL)
    assert rates[2]["cpu1 socket0"] is None
    reasons = [{i["name"]: i.get("reason") for i in m["instances"]}
               for s in doc["samples"] for m in s["metrics"] if m["name"] == "cpu.busy.rate"]
    assert reasons[0]["cpu0"] == "none returned"
    assert reasons[2]["cpu1 socket0"] == "instance not returned"


def test_semantic_error_is_printed_and_exits_1(cpu: Path) -> None:
    """DERIVE-CLI-3: libpcp's line on stderr, the metric left out, exit 1."""
    status, out, err = run(str(cpu), "-d", "bad = cpu.busy - 300", "-d", "ok = cpu.temp * 2",
                           "--samples", "1")
    assert status == 1
    assert err == ("Semantic error: derived metric bad: cpu.busy - 300: "
                   "Illegal operator for counter and non-counter\n")
    assert "ok[cpu0]" in out and "bad" not in out


def test_unknown_operand_is_silent_in_libpcp_but_reported_here(cpu: Path) -> None:
    status, out, err = run(str(cpu), "-d", "u = no.such.metric + 1", "--samples", "1")
    assert status == 1 and out == ""
    assert err.startswith("derived metric u: Unknown operand metric") and len(err.splitlines()) == 1


@pytest.mark.parametrize("argv, message", [
    ([], "no derived metrics"),
    (["-d", "x = cpu.temp", "--metric", "y"], "--metric y: not a registered derived metric"),
    (["-d", "x = cpu.temp", "--interval", "0"], "--interval must not be 0"),
    (["-d", "x = cpu.temp", "--emulate", "bogus"], "--emulate bogus"),
])
def test_usage_errors_are_one_line(cpu: Path, argv: list[str], message: str) -> None:
    status, out, err = run(str(cpu), *argv)
    assert status == 2 and out == ""
    assert message in err and len(err.strip().splitlines()) == 1


def test_syntax_error_in_a_definition(cpu: Path) -> None:
    status, out, err = run(str(cpu), "-d", "x = cpu.temp +", "-d", "y = cpu.temp", "--samples", "1")
    assert status == 1
    assert err.splitlines() == ["[--define[1]:1] Error: pmRegisterDerived(x, ...) syntax error",
                                " cpu.temp +", "          ^",
                                "Arithmetic expression expected to follow PLUS"]
    assert "y[cpu0]" in out


def test_late_start_seeks_without_changing_values(cpu: Path) -> None:
    """INTERP-SEEK-1 through derive: a forward replay from a late --start gives what a
    replay from the archive start gives at the same times."""
    from pcpconform.format.pmtypes import Timestamp
    from pcpconform.io.archive import Archive
    from pcpconform.oracles.derive.bind import bind
    from pcpconform.oracles.derive.evaluate import Evaluator
    from pcpconform.oracles.derive.parser import parse
    from pcpconform.oracles.derive.profiles import PROFILES

    status, out, _ = run(str(cpu), "-d", "r = rate(cpu.busy)", "-d", "t = cpu.temp * 2",
                         "--start", "+15", "--interval", "5", "--format", "csv")
    assert status == 0
    a = Archive(cpu)
    prof = PROFILES["pcp-6.3"]
    bounds = [bind(parse(e, prof), n, a, prof) for n, e in (("r", "rate(cpu.busy)"), ("t", "cpu.temp * 2"))]
    t0 = a.start.total_nsec() + 15 * 10**9
    full = Evaluator(a, bounds, prof).schedule(Timestamp.from_nsec(t0), 5 * 10**9, 4)
    rows = [r for line in out.splitlines()[1:] if (r := line.split(","))[6] == ""]   # with values
    expected = [(f"{s.time.sec}.{s.time.nsec:09d}", name, str(v))
                for s in full for name in ("r", "t") for _, v in s.values[name]]
    assert [(r[0], r[1], r[5]) for r in rows] == expected
