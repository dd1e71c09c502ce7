"""The text dump's value-set lines formatted as columns (``ResultLines``) and by the
compiled kernel a run of records at a time (``dump.text-run``), against the value-by-value
reference (``reference_vsets``): the same text on every corpus archive, on numbers at the
edges of their types, and with ``%`` in metric and instance names (random values:
tests/property/test_fast_paths.py)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from pcpconform.dump.text import (
    RUN,
    ResultLines,
    reference_vsets,
    run_text_kernel,
    run_text_records,
    write_text,
)
from pcpconform.errors import PcpConformError
from pcpconform.fastpath import PathStats
from pcpconform.format.pmtypes import PmID, PmInDom, PmSem, PmType, PmUnits, Timestamp
from pcpconform.format.timezone import UTC_ZONE
from pcpconform.format.values import F32
from pcpconform.io.archive import Archive
from pcpconform.io.writer import ArchiveWriter, LabelFields, ValueSetSpec, layout_result

ROOT = Path(__file__).resolve().parents[2]
CASES = sorted(p for p in (ROOT / "corpus" / "cases").glob("*/*") if list(p.glob("*.meta*")))


def test_columns_are_the_reference_on_the_corpus() -> None:
    compared = 0
    for case in CASES:
        try:
            archive = Archive(sorted(case.glob("*.meta*"))[0])
            lines = ResultLines(archive, UTC_ZONE, archive.stats)
            for res in archive.results():
                if not res.is_mark:
                    assert lines.vsets(res) == reference_vsets(archive, res), case.name
                    compared += 1
        except PcpConformError:
            continue
    assert compared > 1000


def test_instance_names_with_percent_signs_print_as_they_are() -> None:
    archive = Archive(ROOT / "corpus" / "cases" / "valid" / "example-v3" / "a")
    for history in archive.metadata.indoms.values():
        for record in history:
            for inst in record.instances:
                record.instances[inst] = f"%s %d %% {inst}"
    lines = ResultLines(archive, UTC_ZONE, archive.stats)
    shown = [lines.vsets(r) for r in archive.results() if not r.is_mark]
    assert any("%s %d %%" in text for text in shown)
    assert shown == [reference_vsets(archive, r) for r in archive.results() if not r.is_mark]


def test_write_text_shows_every_result_before_a_bad_record() -> None:
    archive = Archive(ROOT / "corpus" / "cases" / "invalid" / "frame-align-v2" / "a")
    out = io.StringIO()
    with pytest.raises(PcpConformError):
        write_text(archive, out)
    assert out.getvalue().endswith('    60.1.2 (mem.util.used): value 1100000\n\n')


def _records(archive: Archive) -> list:
    return [record for _, record in archive.volume_records()]


def test_the_kernel_run_is_the_reference_on_the_corpus() -> None:
    compared = 0
    for case in CASES:
        try:
            archive = Archive(sorted(case.glob("*.meta*"))[0])
            records = _records(archive)
            reference = run_text_records(ResultLines(archive, UTC_ZONE, PathStats()), records)
        except PcpConformError:
            continue
        stats = PathStats()
        assert RUN(stats, ResultLines(archive, UTC_ZONE, PathStats()), records) == reference, case.name
        compared += stats.answered["dump.text-run"]
    assert compared > 100


#: values at the edges of their types: NaNs of both signs, zeros of both signs,
#: infinities, whole numbers either side of where %g takes an exponent, extremes
EDGES = {
    PmType.I32: [0, -1, 2**31 - 1, -2**31],
    PmType.U32: [0, 2**32 - 1, 10**9],
    PmType.I64: [0, -1, 2**63 - 1, -2**63],
    PmType.U64: [0, 2**64 - 1, 10**19],
    PmType.FLOAT: [F32(x) for x in (0.0, -0.0, 1.5, -2.25, 12345678.0, 1e8, 123456789.0, 0.1, 3.4e38,
                                    float("inf"), float("-inf"), 1e-45, float("nan"), -float("nan"))],
    PmType.DOUBLE: [0.0, -0.0, 0.1, -1.5, 1e15, 9999999999999998.0, 1e16, 12345678901234567.0, 2.0**63,
                    -2.0**63, 1e300, 5e-324, float("inf"), float("-inf"), float("nan"), -float("nan"),
                    1 / 3],
    PmType.STRING: [b"plain\0", b'"quoted" \\ %s\0', b"\x01\xff\0", b"no nul"],
    PmType.AGGREGATE: [b"", b"\x00\x01%"],
}


def test_the_kernel_prints_numbers_at_their_edges_as_the_reference(tmp_path: Path) -> None:
    w = ArchiveWriter(tmp_path / "a", 3)
    t0 = Timestamp(1_700_000_000, 0)
    w.start(LabelFields(hostname="edges", timezone="UTC", start=t0, pid=1, zoneinfo=":UTC"))
    indom = int(PmInDom("60.1"))
    w.put_index(t0)
    w.put_indom(t0, indom, [(i, f"%s inst %d {i}") for i in range(20)])
    vsets = []
    for item, (ptype, values) in enumerate(EDGES.items()):
        pmid = int(PmID(f"60.0.{item}"))
        w.put_desc(pmid, ptype, indom, PmSem.INSTANT, PmUnits(), [f"edge.%d.{ptype.name.lower()}"])
        vsets.append(ValueSetSpec(pmid, ptype, list(enumerate(values))))
        single = int(PmID(f"60.2.{item}"))
        w.put_desc(single, ptype, 0xFFFFFFFF, PmSem.INSTANT, PmUnits(), [f"single.{ptype.name.lower()}"])
        vsets.append(ValueSetSpec(single, ptype, [(-1, values[-1])]))
    vsets.append(ValueSetSpec(int(PmID("60.3.0")), PmType.U32, [], numval=-12345))
    vsets.append(ValueSetSpec(int(PmID("60.3.1")), PmType.U32, [], numval=0))
    for k in range(3):
        w.put_result_bytes(w.encode_result(layout_result(3, Timestamp(t0.sec + k, 0), vsets)))
    w.close()
    archive = Archive(tmp_path / "a")
    records = _records(archive)
    lines = ResultLines(archive, UTC_ZONE, PathStats())
    text = run_text_kernel(lines, records)
    assert text == run_text_records(ResultLines(archive, UTC_ZONE, PathStats()), records)
    res = next(archive.results())
    assert reference_vsets(archive, res) in text
    for shown in ("value -nan", "value nan", "value -0\n", "value 1e+16", "value 9999999999999998",
                  "value 1e+08", "value 12345678\n", "value 18446744073709551615", "value -9223372036854775808",
                  "value inf", "value -inf", "error -12345", "No values returned!", "%s inst %d 3"):
        assert shown in text, shown


def test_runs_are_bounded_by_records_and_bytes() -> None:
    """A run's printed values are strings until it is written: large records make short
    runs, so memory stays flat on per-process archives."""
    from pcpconform.dump.text import RUN_BYTES, RUN_RECORDS, _runs
    from pcpconform.io.reader import RawRecord

    def records(size: int, count: int) -> list[tuple[int, RawRecord]]:
        return [(0, RawRecord("a.0", k, 132 + k * size, bytes(size))) for k in range(count)]

    small = list(_runs(iter(records(100, 3 * RUN_RECORDS + 1))))
    assert [len(r) for r in small] == [RUN_RECORDS] * 3 + [1]
    large = list(_runs(iter(records(RUN_BYTES // 4, 10))))
    assert [len(r) for r in large] == [4, 4, 2]


def test_memory_stays_flat_on_large_records(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Results of 10 000 values each (per-process metrics' size): the dump holds about one
    run's bytes of them at a time (here one result), not RUN_RECORDS results' printed
    values (here all twelve)."""
    import tracemalloc

    pmid, indom = int(PmID("60.0.1")), int(PmInDom("60.1"))
    w = ArchiveWriter(tmp_path / "a", 3)
    t0 = Timestamp(1_700_000_000, 0)
    w.start(LabelFields(hostname="large", timezone="UTC", start=t0, pid=1, zoneinfo=":UTC"))
    w.put_desc(pmid, PmType.U64, indom, PmSem.COUNTER, PmUnits(), ["large.counter"])
    w.put_index(t0)
    w.put_indom(t0, indom, [(i, f"p{i}") for i in range(10_000)])
    for k in range(12):
        w.put_result_bytes(w.encode_result(layout_result(
            3, Timestamp(t0.sec + k, 0), [ValueSetSpec(pmid, PmType.U64, [(i, k * i) for i in range(10_000)])])))
    w.close()
    monkeypatch.setattr("pcpconform.dump.text.RUN_BYTES", 64 << 10)
    archive = Archive(tmp_path / "a")
    sink = io.StringIO()
    sink.write = lambda text: len(text)  # type: ignore[method-assign]   # nothing kept
    tracemalloc.start()
    try:
        write_text(archive, sink)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 12 << 20, peak           # 31 MB where the twelve are one run
    assert archive.stats.answered["dump.text-run"] == 12
