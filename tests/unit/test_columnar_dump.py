"""The JSON Lines dump's columnar result lines (``result_line``) against ``json.dumps`` of
the per-record objects on every corpus archive (random results: tests/property/
test_fast_paths.py), and the column path taken for every value set of the benchmark's shape."""

from __future__ import annotations

import io
import itertools
import json
from pathlib import Path
from typing import Any

from pcpconform.dump import jsonl
from pcpconform.dump.jsonl import dump_lines, jsonl_records, result_line
from pcpconform.errors import PcpConformError
from pcpconform.fastpath import PathStats
from pcpconform.format.pmtypes import PmType, Timestamp
from pcpconform.io.archive import Archive
from pcpconform.io.bulk import DecodedResult, DecodedValueSet
from tests.bench_modules import bench_module

ROOT = Path(__file__).resolve().parents[2]
CASES = sorted(p for p in (ROOT / "corpus" / "cases").glob("*/*") if list(p.glob("*.meta*")))


def _lines(make: Any) -> tuple[list[str], str | None]:
    out: list[str] = []
    try:
        for line in make():
            out.append(line)
    except PcpConformError as exc:
        return out, f"{type(exc).__name__}: {exc}"
    return out, None


def test_columnar_lines_are_the_per_record_lines_on_the_corpus() -> None:
    compared = 0
    for case in CASES:
        base = sorted(case.glob("*.meta*"))[0]
        try:
            archive = Archive(base)
        except PcpConformError:
            continue
        fast = _lines(lambda a=archive: dump_lines(a))
        slow = _lines(lambda a=archive: itertools.chain(
            [json.dumps(jsonl.HEADER, separators=(",", ":"))],
            (json.dumps(o, separators=(",", ":"), ensure_ascii=False) for o in jsonl_records(a))))
        assert fast == slow, case.name
        compared += 1
    assert compared > 250


def test_every_value_set_of_the_benchmark_shape_is_formatted_as_a_column(tmp_path: Path) -> None:
    bench_decode = bench_module("bench_decode")
    base = tmp_path / "bench"
    bench_decode.generate(base, 3, 0.1, 1)
    archive = Archive(base)
    lines = list(dump_lines(archive))
    assert len(lines) > 20
    assert not archive.stats.reasons("dump.jsonl-values")
    assert archive.stats.answered["dump.jsonl-values"] > 20
    # and a value set the columns cannot format is counted, not silently slower
    stats = PathStats()
    res = DecodedResult(Timestamp(1, 0), [DecodedValueSet(1, 2, 1, None, ((0, 1), (1, 2.5)))])
    result_line(res, {1: PmType.U64}, "0", 1, 0, stats)
    assert stats.reasons("dump.jsonl-values") == {jsonl.ColumnReason.MIXED: 1}


def test_write_jsonl_writes_every_line_before_a_bad_record() -> None:
    """Lines are written in batches: an error still leaves every line before it written."""
    damaged = 0
    for case in CASES:
        try:
            archive = Archive(sorted(case.glob("*.meta*"))[0])
        except PcpConformError:
            continue
        lines, error = _lines(lambda a=archive: dump_lines(a))
        out = io.StringIO()
        try:
            jsonl.write_jsonl(archive, out)
        except PcpConformError:
            damaged += 1
        assert out.getvalue() == "".join(line + "\n" for line in lines), case.name
        assert error is None or damaged
    assert damaged > 5
