"""What users of `pcpconform interp` asked for: names as typed (INTERP-CLI-5), a start
outside the archive (INTERP-EOL-3), bounded default schedules (INTERP-CLI-6), the rule set
said and chosen automatically (INTERP-CLI-7), rates on their own plot axis (INTERP-CLI-3)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pcpconform.extra.plot import build_figure
from pcpconform.io.archive import Archive
from pcpconform.oracles.interp.installed import chosen_rules, installed_pcp, interp_rules_for
from pcpconform.oracles.interp.replay import Replay
from pcpconform.oracles.interp.schedule import rate_convert
from tests.cli import run_cli
from tests.interp_archives import T0, add_alias, damage_label_start, singular_archive


@pytest.fixture
def archive(tmp_path: Path) -> Path:
    return singular_archive(tmp_path / "a")


def _body(text: str) -> list[str]:
    return [line for line in text.splitlines() if not line.startswith("#")]


def test_metric_reported_under_the_name_asked_for(archive: Path) -> None:
    """INTERP-CLI-5: an alias as typed, a pmID under the first name, a repeat once."""
    add_alias(archive, "s.ok", "s.alias")
    status, out, _ = run_cli("interp", str(archive), "s.alias", "245.0.4", "--samples", "1")
    assert status == 0
    assert _body(out) == ["2023-11-14 22:13:30.000000000Z  s.alias  1"]
    status, out, _ = run_cli("interp", str(archive), "245.0.4", "--samples", "1", "--format", "json")
    assert json.loads(out)["samples"][0]["metrics"][0]["name"] == "s.ok"


def test_start_outside_the_archive_is_end_of_log_then_values(archive: Path) -> None:
    """INTERP-EOL-3, INTERP-CLI-4: after the end backwards, before the start forwards."""
    for argv, first in ((["--start", "+60", "--interval", "-10"], "end of log"),
                        (["--start", str(T0 - 20), "--interval", "10"], "end of log")):
        status, out, err = run_cli("interp", str(archive), "s.ok", *argv)
        assert status == 0, err
        lines = _body(out)
        assert lines[0].endswith(first) and lines[1].endswith("end of log")
        assert [line.split("  ")[-1] for line in lines if "s.ok" in line] != []
    status, out, _ = run_cli("interp", str(archive), "s.ok", "--start", "+60", "--interval", "-10")
    assert [line.split("  ")[-1] for line in _body(out)][-4:] == ["4", "3", "2", "1"]


def test_default_schedule_is_bounded_and_names_a_damaged_label(archive: Path) -> None:
    """INTERP-CLI-6: a label start years before the records: refused with the extent."""
    damage_label_start(archive, 1000)
    status, out, err = run_cli("interp", str(archive), "s.ok")
    assert status == 2 and out == ""
    assert len(err.strip().splitlines()) == 1
    assert "would make" in err and "a damaged label?" in err and "--samples" in err
    status, out, _ = run_cli("interp", str(archive), "s.ok", "--start", str(T0), "--samples", "2")
    assert status == 0 and len(_body(out)) == 2


def test_rules_are_said_and_auto_follows_the_installed_pcp(archive: Path, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """INTERP-CLI-7"""
    status, out, _ = run_cli("interp", str(archive), "s.ok", "--samples", "1", "--rules", "pcp-6.0")
    assert out.splitlines()[0] == "# rules pcp-6.0 (as asked)"
    conf = tmp_path / "pcp.conf"
    for version, rules in (("6.0.3", "pcp-6.0"), ("6.3.1", "pcp-6.0"), ("6.3.2", "pcp-6.3"),
                           ("7.2.2", "pcp-6.3")):
        conf.write_text(f"PCP_SYSCONF_DIR=/etc/pcp\nPCP_VERSION={version}\n")
        monkeypatch.setenv("PCP_CONF", str(conf))
        status, out, _ = run_cli("interp", str(archive), "s.ok", "--samples", "1", "--rules", "auto",
                                 "--format", "json")
        doc = json.loads(out)
        assert (doc["rules"], doc["rules_from"]) == (rules, f"matching the installed PCP {version} ({conf})")
    monkeypatch.setenv("PCP_CONF", str(tmp_path / "none"))
    monkeypatch.setenv("PATH", str(tmp_path))
    assert installed_pcp() is None
    status, out, err = run_cli("interp", str(archive), "s.ok", "--samples", "1", "--rules", "auto")
    assert status == 0 and "no PCP installed here" in err
    assert out.splitlines()[0].startswith("# rules pcp-6.3 (--rules auto: no PCP installed")
    assert chosen_rules("pcp-6.0", interp_rules_for, "pcp-6.3") == ("pcp-6.0", "as asked")


def test_default_rules_note_names_the_option(archive: Path, host_pcp: Any) -> None:
    """INTERP-CLI-8: with no --rules, a PCP here that replays by the other rule set is said
    once on standard error, with the option that follows it, after the request is found
    good; not when --rules is given, nor when the host's PCP goes by the default."""
    conf = host_pcp("6.0.3")
    status, out, err = run_cli("interp", str(archive), "s.ok", "--samples", "1")
    assert status == 0 and out.splitlines()[0] == "# rules pcp-6.3 (as asked)"
    assert err == (f"pcpconform interp: note: using the pcp-6.3 rules (the default); the PCP installed "
                   f"here (6.0.3, {conf}) goes by pcp-6.0: give --rules pcp-6.0 (or --rules auto) "
                   "to compare with it\n")
    assert run_cli("interp", str(archive), "s.ok", "--samples", "1", "--rules", "pcp-6.3")[2] == ""
    status, _, err = run_cli("interp", str(archive), "no.such", "--samples", "1")
    assert status == 2 and len(err.splitlines()) == 1       # a usage error stays one line
    conf = host_pcp("7.2.2")
    assert run_cli("interp", str(archive), "s.ok", "--samples", "1")[2] == ""
    status, _, err = run_cli("derive", str(archive), "--define", "d.x = s.ok * 2", "--samples", "1")
    assert status == 0 and err == (f"pcpconform derive: note: using the pcp-6.3 profile (the default); "
                                   f"the PCP installed here (7.2.2, {conf}) goes by pcp-7: "
                                   "give --rules pcp-7 (or --rules auto) to compare with it\n")


def test_rate_plot_has_the_rates_on_their_own_axis(archive: Path, tmp_path: Path) -> None:
    """INTERP-CLI-3, INTERP-RATE-1: the counter's panel keeps its values and adds rates."""
    a = Archive(archive)
    replay = Replay(a, [int(a.desc("s.ctr").pmid)])
    samples = replay.schedule(a.start, 5 * 10**9, 7)
    fig = build_figure(replay, samples, rates=rate_convert(samples, replay.descs))
    gids = {line.get_gid() for ax in fig.axes for line in ax.get_lines()}
    assert {"interpolated", "observations", "rates"} <= gids
    rates = next(line for ax in fig.axes for line in ax.get_lines() if line.get_gid() == "rates")
    assert [y for y in rates.get_ydata() if y == y] == [0.2, 0.0] * 3   # 1, 2, 2, 3, 3, 4, 4
    status, _, _ = run_cli("interp", str(archive), "s.ctr", "--rate", "--plot", str(tmp_path / "r.png"))
    assert status == 0 and (tmp_path / "r.png").read_bytes()[:4] == b"\x89PNG"


@pytest.mark.usefixtures("default_host_pcp")
def test_label_after_the_records_is_warned_about(archive: Path) -> None:
    """INTERP-EOL-4: the records before the label's start are never replayed; said once."""
    damage_label_start(archive, T0 + 1000)
    status, out, err = run_cli("interp", str(archive), "s.ok", "--start", str(T0), "--interval", "10",
                               "--samples", "4")
    assert status == 0
    assert [line.split("  ")[-1] for line in _body(out)] == ["end of log"] * 4
    assert err == (f"pcpconform interp: warning: the label starts at {T0 + 1000}.000000000, after the "
                   f"first record ({T0}.000000000): no record before the label's start is replayed "
                   "(a damaged label?)\n")
    status, _, err = run_cli("derive", str(archive), "-d", "x = s.ok", "--samples", "1")
    assert status == 0 and "no record before the label's start is replayed" in err
