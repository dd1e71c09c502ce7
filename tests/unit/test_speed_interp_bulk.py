"""The replay's pass decodes records in windows (oracles/interp/wanted.py ``wanted_windows``,
io/bulk.py ``result_layout`` and ``decode_run``): records of one layout decoded together
by numpy, straight into the series' arrays. What it keeps is what the pass a record at a
time keeps, value for value, type for type, bit for bit, or the same error, on every
corpus archive; the benchmark's shape really takes the windowed path; its fallbacks are
typed and counted."""

from __future__ import annotations

import importlib
import struct
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from pcpconform.errors import PcpConformError
from pcpconform.fastpath import PathStats
from pcpconform.format.pmtypes import PmType
from pcpconform.format.values import F32
from pcpconform.io import bulk
from pcpconform.io.archive import Archive
from pcpconform.io.reader import RawRecord
from pcpconform.oracles.interp import observations as observations_module
from pcpconform.oracles.interp import wanted as wanted_module
from pcpconform.oracles.interp.fast_paths import OneAtATime
from pcpconform.oracles.interp.observations import WINDOW_SPLIT
from pcpconform.oracles.interp.replay import Replay

ROOT = Path(__file__).resolve().parents[2]
CASES = sorted(p.parent / "a" for p in (ROOT / "corpus" / "cases").glob("*/*/a.meta*")
               if not p.parent.name.startswith("compress"))


def _exact(v: Any) -> Any:
    if isinstance(v, float):
        return (type(v).__name__, struct.pack("<d", v), getattr(v, "bits", None))
    return (type(v).__name__, v)


def snapshot(r: Replay) -> Any:
    return ([(key, s.times.tolist() if hasattr(s.times, "tolist") else list(s.times),
              type(s.values).__name__, [_exact(v) for v in s.values])
             for key, s in r.series.items()],
            r.marks, r.end, r.last, r.first_record, r.singular_quirks)


def _outcome(cls: type[Replay], base: Path) -> tuple[Any, Counter[str], int]:
    try:
        a = Archive(base)
        r = cls(a, [int(p) for p in a.metadata.descs], rules="pcp-6.0")
    except PcpConformError as exc:
        return ("error", type(exc).__name__, str(exc)), Counter(), 0
    return snapshot(r), r.stats.record_fallbacks, r.stats.bulk_records


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """bench_interp.py's archive shape (45 metrics, strings every sixth record), small."""
    base = tmp_path_factory.mktemp("bench") / "bench"
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        bench_interp = importlib.import_module("bench_interp")
        info: dict[str, Any] = bench_interp.generate(base, 3, 0.5, 1)
    finally:
        sys.path.pop(0)
    return base, info


def test_the_benchmark_shape_is_decoded_in_windows(bench: tuple[Path, dict[str, Any]]) -> None:
    base, info = bench
    got, reasons, together = _outcome(Replay, base)
    want, _, _ = _outcome(OneAtATime, base)
    assert got == want
    # every result, strings and all, is decoded with its window's others; marks alone
    assert (together, reasons) == (info["results"], Counter({"mark": info["marks"]} if info["marks"] else {}))


def test_the_benchmark_shape_replays_the_same_samples(bench: tuple[Path, dict[str, Any]]) -> None:
    base, _ = bench
    a = Archive(base)
    pmids = [int(d.pmid) for d in a.descs()]
    fast, slow = Replay(a, pmids, rules="pcp-6.0"), OneAtATime(a, pmids, rules="pcp-6.0")
    start, step = a.start, 7_300_000_000
    got, want = fast.schedule(start, step, 40), slow.schedule(start, step, 40)
    assert [(s.time, s.eol, {p: {i: _exact(v) for i, v in d.items()} for p, d in s.values.items()})
            for s in got] == \
           [(s.time, s.eol, {p: {i: _exact(v) for i, v in d.items()} for p, d in s.values.items()})
            for s in want]


@pytest.mark.parametrize("window", [3, 1024])
def test_every_corpus_archive_keeps_what_one_record_at_a_time_keeps(
        window: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(observations_module, "_RUN", window)
    seen: Counter[str] = Counter()
    for base in CASES:
        got, reasons, _ = _outcome(Replay, base)
        want, _, _ = _outcome(OneAtATime, base)
        assert got == want, base
        seen.update(reasons)
    # the corpus reaches the fallbacks: damaged records, changed instance lists
    assert seen["schema decoder"] and seen["mark"]
    assert seen[WINDOW_SPLIT] or window > 3


def test_a_planted_defect_in_the_window_decoder_is_seen(bench: tuple[Path, dict[str, Any]],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The comparison above can fail: values one off from the second record of a window on."""
    base, _ = bench
    real = wanted_module.decode_run

    def off_by_one(layout: Any, datas: list[bytes], pmids: Any) -> Any:
        matching, columns = real(layout, datas, pmids)
        for _, values in columns:
            if not isinstance(values, list):    # a numpy array, not blocks read one at a time
                values[:, 1:] += 1
        return matching, columns

    monkeypatch.setattr(wanted_module, "decode_run", off_by_one)
    assert _outcome(Replay, base)[0] != _outcome(OneAtATime, base)[0]


def _bench_record(base: Path) -> tuple[Archive, Any, dict[int, int]]:
    a = Archive(base)
    types = {p: d.type for p, d in a.metadata.descs.items()}
    for _, record in a.volume_records():
        if not isinstance(bulk.result_layout(record, a.version, types), str):
            return a, record, types
    raise AssertionError("no record of a layout")


def test_decode_run_gives_decode_results_values_and_refuses_another_shape(
        bench: tuple[Path, dict[str, Any]]) -> None:
    a, record, types = _bench_record(bench[0])
    layout = bulk.result_layout(record, a.version, types)
    assert not isinstance(layout, str)
    data = bytearray(record.data)
    column = next(c for c in layout.columns if c.code in ("Q", "d"))
    data[column.offset:column.offset + 8] = struct.pack(">Q", 0x7FF0000000000001)   # a value
    text = next(c for c in layout.columns if not c.code)                 # a string block
    off = text.blocks[0][0]
    data[off + 4] ^= 0x20                                                # its payload
    reshaped = bytearray(data)
    struct.pack_into(">i", reshaped, column.offset - 4, 99)          # not a value: a block header
    datas = [bytes(record.data), bytes(data), bytes(reshaped)]
    matching, columns = bulk.decode_run(layout, datas, {c.pmid for c in layout.columns})
    assert matching.tolist() == [True, True, False]
    assert len(columns) == len(layout.columns)
    for k, raw in enumerate(datas[:2]):
        want = bulk.decode_result(RawRecord(record.file, record.index, record.offset, raw),
                                  a.version, types, PathStats())
        by_pmid = {vs.pmid: vs for vs in want.vsets}
        for col, values in columns:
            vs = by_pmid[col.pmid]
            assert vs.columns[0] == col.insts
            got = list(values[k]) if isinstance(values, list) else values[:, k].tolist()
            if types[col.pmid] == PmType.FLOAT:     # kept as their bits
                got = [F32.from_bits(v) for v in got]
            assert [_exact(v) for v in got] == [_exact(v) for v in vs.columns[1]]

