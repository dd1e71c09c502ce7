"""interp in flat memory: compact series, the one pass buffered a run at a time, schedules
in pieces and JSON written a sample at a time, all giving what the whole-at-once forms give;
running out of memory is one clean line."""

from __future__ import annotations

import io
import json
from array import array
from pathlib import Path
from typing import Any

import pytest

from pcpconform.cli import main
from pcpconform.format.pmtypes import PmType, Timestamp
from pcpconform.format.values import F32
from pcpconform.io.archive import Archive
from pcpconform.oracles.interp import observations as observations_module
from pcpconform.oracles.interp.model import F32Column, NoValue, Series
from pcpconform.oracles.interp.replay import Replay
from pcpconform.oracles.interp.report import _Rows, samples_json, write_json

ROOT = Path(__file__).resolve().parents[2]
VALID = ROOT / "corpus" / "cases" / "valid"
ARCHIVES = sorted(p.parent / "a" for p in VALID.glob("*/a.meta*")
                  if not p.parent.name.startswith("compress"))


def _snapshot(r: Replay) -> list[tuple[tuple[int, int], list[float], list[Any]]]:
    return [(key, list(s.times), [repr(v) for v in s.values]) for key, s in r.series.items()]


def _pmids(a: Archive) -> list[int]:
    return [int(d.pmid) for d in a.descs()]


def test_numeric_series_hold_eight_bytes_an_observation() -> None:
    cases: list[tuple[int, list[Any]]] = [(PmType.U64, [1, 2**64 - 1]), (PmType.I32, [-1, 5]),
                          (PmType.DOUBLE, [0.5, float("inf")])]
    for ptype, values in cases:
        s = Series.of_type(ptype)
        s.extend([1.0, 2.0], values)
        assert isinstance(s.values, array) and s.values.itemsize <= 8
        assert isinstance(s.times, array) and s.times.typecode == "d"
        assert list(s.values) == values
    f = Series.of_type(PmType.FLOAT)
    f.extend([1.0], [F32.from_bits(0x7FC00001)])
    assert isinstance(f.values, F32Column) and f.values[0].bits == 0x7FC00001


@pytest.mark.parametrize("ptype, good, odd", [
    (PmType.DOUBLE, [1.5], [7]),                       # an int would become 7.0 in array("d")
    (PmType.DOUBLE, [1.5], [F32(0.5)]),                # an F32 would lose its bits
    (PmType.U32, [3], [2**40]),                        # out of range
    (PmType.I64, [3], [4, 2.5]),                       # half appended, then a float
    (PmType.FLOAT, [F32(1.0)], [2.0]),                 # a double in a float series
    (PmType.U64, [3], [b"bytes\0"]),
])
def test_a_value_that_does_not_fit_turns_the_series_into_a_list(ptype: int, good: list[Any],
                                                                 odd: list[Any]) -> None:
    s = Series.of_type(ptype)
    s.extend([1.0], good)
    s.extend([2.0] * len(odd), odd)
    assert isinstance(s.values, list)
    assert [repr(v) for v in s.values] == [repr(v) for v in good + odd]
    assert [type(v) for v in s.values] == [type(v) for v in good + odd]


@pytest.mark.parametrize("base", ARCHIVES, ids=lambda p: p.parent.name)
def test_runs_of_any_length_give_the_same_series(base: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    a = Archive(base)
    whole = _snapshot(Replay(a, _pmids(a)))
    monkeypatch.setattr(observations_module, "_RUN", 2)
    assert _snapshot(Replay(a, _pmids(a))) == whole


def _record_by_record(r: Replay, a: Archive) -> list[tuple[tuple[int, int], list[float], list[Any]]]:
    """The series a plain pass makes: each value appended as its record is read."""
    out: dict[tuple[int, int], tuple[list[float], list[str]]] = {}
    for res in a.results():
        for vs in res.vsets:
            if vs.numval <= 0 or vs.pmid not in r.descs:
                continue
            pairs = list(zip(*vs.columns))
            if r.descs[vs.pmid].indom.is_null and [i for i, _ in pairs] != [-1]:
                pairs = [(-1, pairs[-1][1])]          # INTERP-SINGULAR-1
            for inst, value in pairs:
                times, values = out.setdefault((vs.pmid, inst), ([], []))
                times.append(r.rel(res.timestamp))
                values.append(repr(value))
    return [(key, times, values) for key, (times, values) in out.items()]


@pytest.mark.parametrize("base", ARCHIVES, ids=lambda p: p.parent.name)
def test_series_are_what_a_record_by_record_pass_makes(base: Path) -> None:
    a = Archive(base)
    r = Replay(a, _pmids(a))
    assert _snapshot(r) == _record_by_record(r, a)


def test_the_pass_keeps_nothing_of_metrics_not_asked_for() -> None:
    a = Archive(VALID / "types-v3" / "a")
    one = _pmids(a)[0]
    r = Replay(a, [one])
    assert {pmid for pmid, _ in r.series} <= {one}


@pytest.mark.parametrize("base", ARCHIVES[:12], ids=lambda p: p.parent.name)
@pytest.mark.parametrize("emulate", [(), ("mark-first-fetch", "nonnumeric-exact-hit")])
def test_a_schedule_in_pieces_is_the_schedule(base: Path, emulate: tuple[str, ...]) -> None:
    a = Archive(base)
    end = max((r.timestamp.total_nsec() for r in a.results()), default=a.start.total_nsec())
    step = max((end - a.start.total_nsec()) // 17, 1)
    whole = Replay(a, _pmids(a), emulate=emulate).schedule(a.start, step, 23)
    pieces = Replay(a, _pmids(a), emulate=emulate).schedule_chunks(a.start, step, 23, chunk=4)
    assert [repr(s) for piece in pieces for s in piece] == [repr(s) for s in whole]


@pytest.mark.parametrize("count", [0, 1, 7])
@pytest.mark.parametrize("opts", [{}, {"rate": True, "emulate": ("b", "a"), "rules_from": "x"}])
def test_streamed_json_is_json_dump_of_the_document(count: int, opts: dict[str, Any]) -> None:
    a = Archive(VALID / "types-v3" / "a")
    samples = Replay(a, _pmids(a)).schedule(a.start, 10**9, count)
    streamed = io.StringIO()
    write_json(a, iter(samples), "pcp-6.3", streamed, **opts)
    assert streamed.getvalue() == json.dumps(samples_json(a, samples, "pcp-6.3", **opts), indent=1) + "\n"


def test_running_out_of_memory_is_one_clean_line(monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    def exhausted(self: Replay, *args: Any) -> None:
        raise MemoryError

    monkeypatch.setattr(Replay, "_collect", exhausted)
    a = Archive(VALID / "types-v3" / "a")
    name = a.descs()[0].names[0]
    assert main(["interp", str(VALID / "types-v3" / "a"), name]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "out of memory" in err and "Traceback" not in err


def test_no_value_reasons_survive_the_pieces() -> None:
    a = Archive(VALID / "types-v3" / "a")
    later = Timestamp(a.start.sec - 100, 0)
    pieces = list(Replay(a, _pmids(a)).schedule_chunks(later, 10**9, 5, chunk=2))
    assert [len(p) for p in pieces] == [2, 2, 1]
    assert all(s.eol or all(isinstance(v, NoValue) for vals in s.values.values() for v in vals.values())
               for p in pieces for s in p)


@pytest.mark.parametrize("base", ARCHIVES, ids=lambda p: p.parent.name)
def test_report_rows_name_instances_as_archive_instances_does(base: Path) -> None:
    """The report looks each instance domain's history up once; the names it gives are
    ``Archive.instances`` at the sample's time, else every name the domain ever had."""
    a = Archive(base)
    r = Replay(a, _pmids(a))
    end = max((x.timestamp.total_nsec() for x in a.results()), default=a.start.total_nsec())
    rows_of = _Rows(a, False)
    for s in r.schedule(a.start, max((end - a.start.total_nsec()) // 29, 1), 31):
        for pmid in s.values:
            desc = a.desc(pmid)
            want: dict[int, str] = {}
            if not desc.indom.is_null:
                want = a.instances(desc.indom, s.time) or {
                    i: n for rec in a.indom_history(desc.indom) for i, n in rec.instances.items()}
            assert rows_of.names(desc, s) == want
