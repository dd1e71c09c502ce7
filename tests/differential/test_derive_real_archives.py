"""Derived metrics over archives real loggers left behind, against each referee: singular
operands whose values are stored under instance 1 (INTERP-SINGULAR-1 through DERIVE-EVAL)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pcpconform.fixtures.fixture import load_fixture
from pcpconform.fixtures.generate import generate_archive
from pcpconform.format.pmtypes import Timestamp
from pcpconform.io.archive import Archive
from pcpconform.oracles.derive.bind import bind
from pcpconform.oracles.derive.evaluate import Evaluator
from pcpconform.oracles.derive.parser import parse
from pcpconform.oracles.derive.profiles import PROFILES
from tests.cli import run_cli
from tests.differential.libpcp.compare import libpcp_encoding
from tests.differential.libpcp.derive_eval_bridge import pm_derive
from tests.differential.libpcp.referees import Referee
from tests.interp_archives import T0, singular_archive

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.libpcp]
DEFINED = [("d.sum", "s.inst + s.ok"), ("d.rate", "rate(s.ctr)"), ("d.disc", "s.disc * 10"),
           ("d.mixed", "s.mixed - 1"), ("d.count", "count(s.inst)")]


def test_singular_operands_under_instance_one(tmp_path: Path, referee: Referee) -> None:
    base = singular_archive(tmp_path / "s")
    start, delta, count = Timestamp(T0 - 5), 5 * 10**9, 10
    answer = pm_derive(referee, {"derived": [list(d) for d in DEFINED],
                                 "schedule": {"start": [start.sec, start.nsec], "delta": delta,
                                              "count": count}}, base)
    prof = PROFILES[referee.derive_profile]
    a = Archive(base)
    bounds = [bind(parse(expr, prof), name, a, prof) for name, expr in DEFINED]
    ours = Evaluator(a, bounds, prof).schedule(start, delta, count)
    types = {b.name: b.desc.type for b in bounds}

    def mine(s: Any) -> dict[str, list[Any]]:
        return {n: sorted([i, libpcp_encoding(v, types[n])] for i, v in s.values[n]) for n in types}

    theirs = [{n: sorted(v["values"]) for n, v in s["values"].items()} for s in answer["samples"]]
    assert [mine(s) if not s.eol else {} for s in ours] == \
        [t if not s["eol"] else {} for t, s in zip(theirs, answer["samples"])]
    # the planted defect (values under instance 1 ignored) leaves d.sum empty
    assert sum(1 for s in ours if s.values.get("d.sum")) == 7


EVENTS = [("d.flags", "event.flags"), ("d.missed", "event.missed + 1"),
          ("d.count", "count(event.flags)"), ("d.mix", "ev.param.u32 + event.flags")]


def test_event_metrics_as_operands(tmp_path: Path, referee: Referee) -> None:
    """DERIVE-CLI-10: libpcp's anonymous event.flags and event.missed bind as derived
    operands (6.0.3) or only as a whole expression (6.3.8, 7.2.2: otherwise an illegal nested
    derived metric), and never have values; count() of one is 0."""
    base = tmp_path / "events"
    generate_archive(load_fixture(ROOT / "corpus" / "fixtures" / "interp-events.yaml"), base)
    start, delta, count = Timestamp(1700000000), 500_000_000, 6
    answer = pm_derive(referee, {"derived": [list(d) for d in EVENTS],
                                 "schedule": {"start": [start.sec, start.nsec], "delta": delta,
                                              "count": count}}, base)
    argv = [str(base), "--start", str(start.sec), "--interval", "0.5", "--samples", str(count),
            "--format", "json", "--rules", referee.derive_profile]
    for name, expr in EVENTS:
        argv += ["-d", f"{name} = {expr}"]
    status, out, err = run_cli("derive", *argv)
    doc = json.loads(out)
    ours = {d["name"]: (d["type"], d["sem"], d["units"]) for d in doc["derived"]}
    theirs = {n: (d["type"], d["sem"], d["units_str"]) for n, d in answer["descs"].items() if "type" in d}
    assert ours == theirs
    rejected = "".join(d["stderr"] for d in answer["descs"].values() if "error" in d)
    assert err == rejected and status == (1 if rejected else 0)
    mine = [{m["name"]: [[i["inst"], int(i["value"]["value"])] for i in m["instances"] if i["value"]]
             for m in s["metrics"]} for s in doc["samples"]]
    assert mine == [{n: v["values"] for n, v in s["values"].items()} for s in answer["samples"]]
    assert referee.derive_profile != "pcp-6.0" or mine[0]["d.count"] == [[-1, 0]]
