"""The oracle on archives real loggers left behind (INTERP-SINGULAR-1, INTERP-BUILTIN-1);
the same archives against each libpcp are in tests/differential/test_interp_real_archives.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pcpconform.format.pmtypes import Timestamp
from pcpconform.io.archive import Archive
from pcpconform.oracles.interp.builtin import BUILTIN
from pcpconform.oracles.interp.model import NoValue
from pcpconform.oracles.interp.replay import Replay
from tests.cli import run_cli
from tests.interp_archives import MIXED, MULTI, T0, UNDER_ONE, singular_archive

ROOT = Path(__file__).resolve().parents[2]


def test_singular_values_under_instance_one_are_replayed(tmp_path: Path) -> None:
    """INTERP-SINGULAR-1: the validator warns, the replay has the values, as instance -1."""
    base = singular_archive(tmp_path / "s")
    status, out, _ = run_cli("check", str(base))
    assert status == 0 and "value.singular-inst" in out
    status, out, err = run_cli("interp", str(base), "s.inst", "s.ctr", "s.disc", "s.mixed",
                               "--interval", "5", "--format", "json")
    assert status == 0, err
    rows = [m["instances"] for s in json.loads(out)["samples"] for m in s["metrics"]]
    assert rows and all([i["inst"] for i in r] == [-1] and i_has_value(r) for r in rows)


def i_has_value(instances: list[dict[str, object]]) -> bool:
    return all(i["value"] is not None for i in instances)


@pytest.mark.usefixtures("default_host_pcp")
def test_several_values_of_a_singular_metric_the_last_wins(tmp_path: Path) -> None:
    """INTERP-SINGULAR-1: one value per value set counts, the last (libpcp 7.2.2)."""
    base = singular_archive(tmp_path / "m", multi=True)
    replay = Replay(Archive(base), [MULTI, *UNDER_ONE, MIXED])
    got = [s.values[MULTI][-1] for s in replay.schedule(Timestamp(T0), 10 * 10**9, 4)]
    assert got == [1, 102, 3, 104]
    assert replay.singular_quirks == {MULTI: 2, **dict.fromkeys(UNDER_ONE, 1), MIXED: 1}
    fast = replay.schedule(Timestamp(T0 - 3), 3 * 10**9, 14)
    assert replay.stats.vectorised == 2 and fast == replay.schedule_reference(Timestamp(T0 - 3), 3 * 10**9, 14)
    status, _, err = run_cli("interp", str(base), "s.multi", "s.inst", "--samples", "1")
    assert status == 0
    assert err == ("pcpconform interp: warning: s.multi has no instance domain but value sets with 2 "
                   "values: the last of each is replayed (libpcp 7); libpcp 6.0.3 and 6.3.8 abort on them\n")


def test_event_metrics_are_known_and_never_have_values(tmp_path: Path) -> None:
    """INTERP-BUILTIN-1, INTERP-CLI-5: by name or pmID, in any archive, no value, reported
    under the name asked for."""
    base = singular_archive(tmp_path / "e")
    status, out, err = run_cli("interp", str(base), "event.flags", "511.0.2", "--samples", "2")
    assert status == 0, err
    lines = [line for line in out.splitlines() if not line.startswith("#")]
    assert len(lines) == 4
    assert all("no value (event metric" in line for line in lines)
    assert {line.split("  ")[1] for line in lines} == {"event.flags", "event.missed"}
    replay = Replay(Archive(base), list(BUILTIN))
    for fast, ref in zip(replay.schedule(Timestamp(T0), 10**9, 3),
                         replay.schedule_reference(Timestamp(T0), 10**9, 3)):
        assert fast == ref
        assert all(isinstance(v, NoValue) for insts in fast.values.values() for v in insts.values())
