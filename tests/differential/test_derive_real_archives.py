"""Derived metrics over archives real loggers left behind, against each referee: singular
operands whose values are stored under instance 1 (INTERP-SINGULAR-1 through DERIVE-EVAL)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pcpconform.format.pmtypes import Timestamp
from pcpconform.io.archive import Archive
from pcpconform.oracles.derive.bind import bind
from pcpconform.oracles.derive.evaluate import Evaluator
from pcpconform.oracles.derive.parser import parse
from pcpconform.oracles.derive.profiles import PROFILES
from tests.differential.libpcp.compare import libpcp_encoding
from tests.differential.libpcp.derive_eval_bridge import pm_derive
from tests.differential.libpcp.referees import Referee
from tests.interp_archives import T0, singular_archive

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
