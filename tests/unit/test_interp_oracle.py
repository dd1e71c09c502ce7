"""The interpolation oracle on the seed document's worked examples (no libpcp needed)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pcpconform.fixtures.fixture import load_fixture
from pcpconform.fixtures.generate import generate_archive
from pcpconform.format.pmtypes import Timestamp
from pcpconform.io.archive import Archive
from pcpconform.oracles.interp.model import NoValue
from pcpconform.oracles.interp.replay import interpolate
from tests.cli import run_cli as run

ROOT = Path(__file__).resolve().parents[2]
T0 = 1700000000


@pytest.fixture(scope="module")
def seed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base: Path = tmp_path_factory.mktemp("seed") / "s"
    generate_archive(load_fixture(ROOT / "corpus" / "fixtures" / "interp-seed.yaml"), base)
    return base


def values_at(base: Path, metric: str, times: list[float], rules: str) -> list[Any]:
    a = Archive(base)
    out = []
    for t in times:
        (s,) = interpolate(a, [metric], Timestamp.from_nsec(int((T0 + t) * 1e9)), 1, 1, rules=rules)
        (v,) = s.values[int(a.desc(metric).pmid)].values()
        out.append(v)
    return out


@pytest.mark.parametrize("rules", ["pcp-6.0", "pcp-6.3"])
def test_counter_worked_example(seed: Path, rules: str) -> None:
    assert values_at(seed, "seed.counter", [25, 50, 75], rules) == [870, 1020, 1150]
    # half-way points round up
    assert values_at(seed, "seed.counter", [12.5, 17.5, 87.5], rules) == [638, 693, 1208]


@pytest.mark.parametrize("metric", ["seed.instant", "seed.discrete"])
def test_instant_and_discrete_tables_per_rule_set(seed: Path, metric: str) -> None:
    times = [12.5, 15, 17.5, 27.5, 57.5, 87.5]
    assert values_at(seed, metric, times, "pcp-6.0") == [610, 610, 610, 720, 1020, 1200]
    assert values_at(seed, metric, times, "pcp-6.3") == [610, 610, 720, 1020, 1050, 1210]


def test_end_of_log_and_edges(seed: Path) -> None:
    a = Archive(seed)
    samples = interpolate(a, ["seed.counter", "seed.discrete"], Timestamp(T0 + 90), 400_000, 4)
    assert [s.eol for s in samples] == [False, False, False, True]   # 1 ms grace after the end
    c = int(a.desc("seed.counter").pmid)
    assert samples[0].values[c] == {-1: 1210}
    assert samples[1].values[c] == {-1: NoValue("no next")}
    (before,) = interpolate(a, ["seed.counter"], Timestamp(T0 + 9, 998_000_000), 1, 1)
    assert before.eol




def test_cli_json_format_and_errors(seed: Path) -> None:
    status, out, _ = run("interp", str(seed), "seed.counter", "--start", "+15", "--interval", "25",
                         "--format", "json")
    assert status == 0
    doc = json.loads(out)
    assert doc["format"] == "pcpconform-interp" and doc["rules"] == "pcp-6.3"
    values = [s["metrics"][0]["instances"][0]["value"] for s in doc["samples"]]
    assert values == [{"type": "u32", "value": v} for v in ("870", "1020", "1150")]
    assert run("interp", str(seed), "no.such.metric")[0] == 2
    # INTERP-EOL-3: a start past the end is end of log, not a usage error
    assert run("interp", str(seed), "seed.counter", "--start", "+500")[:2] == \
        (0, "# rules pcp-6.3 (as asked)\n2023-11-14 22:21:50.000000000Z  end of log\n")
    assert run("interp", str(seed), "seed.counter", "--interval", "0")[0] == 2
    assert run("interp", str(seed.parent / "missing"), "seed.counter")[0] == 2
