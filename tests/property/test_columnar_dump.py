"""The JSON Lines dump's columnar result lines (``result_line``) against ``json.dumps`` of
the per-record objects: the same text on every corpus archive and on random results, and the
column path taken for every value set of the benchmark's shape."""

from __future__ import annotations

import io
import itertools
import json
import struct
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from pcpconform.dump import jsonl
from pcpconform.dump.jsonl import _loc, _result_obj, dump_lines, jsonl_records, result_line
from pcpconform.errors import PcpConformError
from pcpconform.format.pmtypes import PmType, Timestamp
from pcpconform.format.values import F32
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


_TYPES = [PmType.I32, PmType.U32, PmType.I64, PmType.U64, PmType.FLOAT, PmType.DOUBLE,
          PmType.STRING, PmType.AGGREGATE]


def _value(kind: str) -> st.SearchStrategy[Any]:
    if kind == "int":
        return st.integers(-(2**63), 2**64 - 1)
    if kind == "f32":
        return st.integers(0, 2**32 - 1).map(F32.from_bits)
    if kind == "double":
        return st.integers(0, 2**64 - 1).map(lambda b: struct.unpack(">d", b.to_bytes(8, "big"))[0])
    return st.binary(max_size=12)


@st.composite
def _vsets(draw: st.DrawFn) -> tuple[DecodedValueSet, dict[int, int]]:
    pmid = draw(st.integers(0, 2**32 - 1))
    numval = draw(st.integers(-3, 6))
    types: dict[int, int] = {pmid: int(draw(st.sampled_from(_TYPES)))} if draw(st.booleans()) else {}
    if numval <= 0:
        return DecodedValueSet(pmid, numval, None, []), types
    kinds = draw(st.lists(st.sampled_from(["int", "f32", "double", "bytes"]), min_size=1, max_size=2))
    insts = draw(st.lists(st.integers(-(2**31), 2**31 - 1), min_size=numval, max_size=numval))
    values = [draw(_value(draw(st.sampled_from(kinds)))) for _ in range(numval)]
    valfmt = draw(st.sampled_from([0, 1, 2]))
    return DecodedValueSet(pmid, numval, valfmt, None, (tuple(insts), tuple(values))), types


@settings(max_examples=300, deadline=None)
@given(st.lists(_vsets(), max_size=4), st.integers(-(2**40), 2**40), st.integers(0, 999_999_999),
       st.booleans(), st.integers(0, 10**6), st.integers(0, 10**9))
def test_columnar_lines_are_json_dumps_of_random_results(vsets: list[Any], sec: int, nsec: int,
                                                         canonical: bool, index: int, offset: int) -> None:
    types: dict[int, int] = {}
    for _, t in vsets:
        types.update(t)
    res = DecodedResult(Timestamp(sec, nsec), [vs for vs, _ in vsets], None, canonical)
    want = json.dumps({**_loc("result", "0", index, offset), **_result_obj(res, types)},
                      separators=(",", ":"), ensure_ascii=False)
    assert result_line(res, types, "0", index, offset) == want


def test_every_value_set_of_the_benchmark_shape_is_formatted_as_a_column(tmp_path: Path) -> None:
    bench_decode = bench_module("bench_decode")
    base = tmp_path / "bench"
    bench_decode.generate(base, 3, 0.1, 1)
    jsonl.COLUMN_FALLBACKS.clear()
    lines = list(dump_lines(Archive(base)))
    assert len(lines) > 20
    assert not jsonl.COLUMN_FALLBACKS
    # and a value set the columns cannot format is counted, not silently slower
    res = DecodedResult(Timestamp(1, 0), [DecodedValueSet(1, 2, 1, None, ((0, 1), (1, 2.5)))])
    result_line(res, {1: PmType.U64}, "0", 1, 0)
    assert jsonl.COLUMN_FALLBACKS == {"mixed value classes": 1}


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
