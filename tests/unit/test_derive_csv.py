"""The derived CSV written from the vectoriser's columns (pcpconform/oracles/derive/csv_rows.py,
pair ``derive.csv``): the bytes of the rows made from samples, on the benchmark's workload,
with instances that come and go, names that need quoting and ``--instances``; every fetch
written from rows counted by its reason."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pcpconform.fastpath import PathStats
from pcpconform.fixtures.fixture import parse_fixture
from pcpconform.fixtures.generate import generate_archive
from pcpconform.format.pmtypes import Timestamp
from pcpconform.io.archive import Archive
from pcpconform.oracles.derive.bind import Bound, bind
from pcpconform.oracles.derive.csv_rows import CSV, CsvReason, csv_columns, csv_samples
from pcpconform.oracles.derive.evaluate import Evaluator
from pcpconform.oracles.derive.parser import parse
from pcpconform.oracles.derive.profiles import PROFILES
from pcpconform.oracles.derive.vector_stats import RowReason
from tests.bench_modules import derive_workload

T0 = 1700000000
P60 = PROFILES["pcp-6.0"]

#: an instance domain whose instances come and go, one named with a comma (quoted in CSV)
CHURN: dict[str, Any] = {
    "archive": {"version": 3, "hostname": "churn.example", "interval": 1},
    "metrics": [
        {"name": "c.set", "pmid": "41.0.1", "type": "u64", "sem": "instant", "indom": "41.1"},
        {"name": "c.flt", "pmid": "41.0.2", "type": "float", "sem": "instant", "indom": "41.1"},
        {"name": "c.one", "pmid": "41.0.3", "type": "double", "sem": "instant"},
        {"name": "c.odd", "pmid": "41.0.4", "type": "32", "sem": "instant", "indom": "41.2"},
    ],
    "indoms": [{"indom": "41.1", "instances": {"a": 0, "b": 1, "c": 2}},
               {"indom": "41.2", "instances": {"x,y": 5, "z": 6}}],
    "samples": [{"time": T0 + k, "values": {
        "c.set": {"a": k, "b": 2 * k} if k < 12 else {"a": k, "b": 2 * k, "c": 3 * k},
        "c.flt": {"a": k / 3, "b": -k / 7, "c": 0.1},
        "c.one": k * 1.5,
        "c.odd": {"x,y": k, "z": -k},
    }} for k in range(24)],
}


def _write(make: Any, bounds: list[Bound], keep: Any, start: Timestamp, step: int, count: int,
           fast: bool) -> str:
    return "".join((csv_columns if fast else csv_samples)(make, bounds, keep, start, step, count))


def _churn(tmp_path: Path, texts: list[str]) -> tuple[Archive, list[Bound]]:
    base = tmp_path / "churn"
    generate_archive(parse_fixture(CHURN), base)
    archive = Archive(base)
    return archive, [bind(parse(t, P60), f"d.m{k}", archive, P60) for k, t in enumerate(texts)]


def test_the_benchmark_workload_is_written_from_columns(tmp_path: Path) -> None:
    """bench_derive.py's definitions on a small archive of its shape: the same bytes as the
    rows made from samples, nearly every fetch written from columns, the rest counted."""
    archive, start, delta, binding = derive_workload(tmp_path, 300)
    bounds = binding.bounds
    made: list[Evaluator] = []

    def make() -> Evaluator:
        made.append(Evaluator(archive, bounds, P60))
        return made[-1]
    assert _write(make, bounds, None, start, delta, 300, True) == _write(make, bounds, None, start, delta, 300, False)
    stats = made[0].vector_stats
    assert stats.csv_columns + sum(stats.csv_rows.values()) == 300
    assert stats.csv_columns >= 250, stats
    assert set(stats.csv_rows) <= {RowReason.PARTIAL}, stats


def test_instances_that_come_and_go_and_names_to_quote(tmp_path: Path) -> None:
    archive, bounds = _churn(tmp_path, ["c.set + 1", "c.flt * 2", "c.one / 2", "c.odd - 1"])
    made: list[Evaluator] = []

    def make() -> Evaluator:
        made.append(Evaluator(archive, bounds, P60))
        assert made[-1].vectoriser is not None
        made[-1].vectoriser.min_run = 1
        return made[-1]
    # from before the archive (end of log) to after it, twice a second
    start = Timestamp(T0 - 1)
    fast = _write(make, bounds, None, start, 5 * 10**8, 56, True)
    assert fast == _write(make, bounds, None, start, 5 * 10**8, 56, False)
    assert '"x,y"' in fast and "end of log" in fast
    stats = made[0].vector_stats
    assert stats.csv_rows[RowReason.FETCHED] >= 2          # end of log, before and after
    assert stats.csv_rows[RowReason.QUOTED] > 0          # c.odd's instance "x,y"
    assert stats.csv_columns == 0                        # every live fetch has c.odd


def test_partial_columns_go_by_rows(tmp_path: Path) -> None:
    archive, bounds = _churn(tmp_path, ["c.set + 1", "c.flt * 2", "c.one / 2"])
    made: list[Evaluator] = []

    def make() -> Evaluator:
        made.append(Evaluator(archive, bounds, P60))
        return made[-1]
    start, step = Timestamp(T0), 10**9
    assert _write(make, bounds, None, start, step, 24, True) == _write(make, bounds, None, start, step, 24, False)
    stats = made[0].vector_stats
    # instance c is in the domain from the start but has values from the 13th fetch on
    assert stats.csv_rows[RowReason.PARTIAL] == 12, stats
    assert stats.csv_columns == 12, stats


def test_instances_kept_are_declined_and_counted(tmp_path: Path) -> None:
    archive, bounds = _churn(tmp_path, ["c.set + 1"])
    stats = PathStats()

    def make() -> Evaluator:
        return Evaluator(archive, bounds, P60)
    keep = {int(make().pmids["d.m0"]): {0}}
    got = "".join(CSV(stats, make, bounds, keep, Timestamp(T0), 10**9, 24))
    assert got == _write(make, bounds, keep, Timestamp(T0), 10**9, 24, False)
    assert stats.declined == {("derive.csv", CsvReason.INSTANCES): 1}
    assert all(",d.m0," in line and ",0,a," in line for line in got.splitlines()[1:])
