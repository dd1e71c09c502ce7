"""rebuild's bulk path (``rebuild.result``: the bulk decoder and encoder) against the schema path: the same bytes or the
same error on every corpus archive, and taken for every result of the benchmark's shape."""

from __future__ import annotations

from pathlib import Path

import pytest

from pcpconform.errors import FormatError, PcpConformError
from pcpconform.fastpath import Declined, PathStats
from pcpconform.io.archive import Archive
from pcpconform.io.bulk import DecodedResult, decode_result
from pcpconform.io.encode import encode_result
from pcpconform.io.reader import RawRecord
from pcpconform.io.rebuild import rebuild_archive, rebuild_bulk
from tests.bench_modules import bench_module

ROOT = Path(__file__).resolve().parents[2]
CASES = sorted(p for p in (ROOT / "corpus" / "cases").glob("*/*") if (p / "case.json").exists())


def _bulk_built(record: RawRecord, version: int, types: dict[int, int]) -> bytes | None:
    try:
        return rebuild_bulk(record, version, types)
    except Declined:
        return None


def _base(case: Path) -> Path | None:
    metas = sorted(case.glob("*.meta*"))
    return metas[0] if metas else None


def _outcome(base: Path, out: Path, bulk: bool) -> object:
    try:
        counts = rebuild_archive(base, out, bulk=bulk)
    except PcpConformError as exc:
        return (type(exc).__name__, str(exc), getattr(exc, "code", None))
    return counts, {p.name: p.read_bytes() for p in sorted(out.parent.iterdir())}


def test_bulk_and_schema_rebuilds_agree_on_the_corpus(tmp_path: Path) -> None:
    assert len(CASES) > 300
    compared = 0
    for case in CASES:
        base = _base(case)
        if base is None:
            continue
        fast = _outcome(base, tmp_path / case.name / "bulk" / "a", True)
        slow = _outcome(base, tmp_path / case.name / "schema" / "a", False)
        assert fast == slow, case.name
        compared += 1
    assert compared > 250


def _bench_archive(tmp: Path, version: int) -> Path:
    bench_decode = bench_module("bench_decode")
    base = tmp / "bench"
    bench_decode.generate(base, version, 0.1, 1)
    return base


@pytest.mark.parametrize("version", [2, 3])
def test_bulk_path_taken_for_every_result_of_the_benchmark_shape(tmp_path: Path, version: int) -> None:
    base = _bench_archive(tmp_path, version)
    archive = Archive(base)
    types = {p: d.type for p, d in archive.metadata.descs.items()}
    records = [r for _, r in archive.volume_records()]
    assert len(records) > 20
    declined = [r.index for r in records if _bulk_built(r, version, types) is None]
    assert declined == []
    rebuild_archive(base, tmp_path / "out" / "a")
    assert (tmp_path / "out" / "a.0").read_bytes() == Path(f"{base}.0").read_bytes()


def test_a_wrong_value_is_not_built_back() -> None:
    """The comparison with the stored bytes is what makes the bulk path safe: a value
    changed after decoding builds other bytes, and the record goes to the schema path."""
    archive = Archive(ROOT / "corpus" / "cases" / "valid" / _first_plain_valid() / "a")
    types = {p: d.type for p, d in archive.metadata.descs.items()}
    for _, record in archive.volume_records():
        res = decode_result(record, archive.version, types, PathStats())
        if not res.canonical or not any(vs.numval > 0 for vs in res.vsets):
            continue
        assert encode_result(archive.version, res, types, PathStats()) == record.data
        vs = next(vs for vs in res.vsets if vs.numval > 0)
        insts, values = vs.columns
        vs._columns = ((insts[0] ^ 1, *insts[1:]), values)      # a planted defect
        changed = DecodedResult(res.timestamp, res.vsets, record, True)
        assert encode_result(archive.version, changed, types, PathStats()) != record.data
        assert _bulk_built(record, archive.version, types) == record.data
        return
    pytest.fail("no canonical result with values")


def _first_plain_valid() -> str:
    for case in CASES:
        if case.parent.name == "valid" and (case / "a.0").exists() and (case / "a.meta").exists():
            return case.name
    raise AssertionError("no uncompressed valid case")


def test_damaged_records_are_not_taken_by_the_bulk_path() -> None:
    record = RawRecord("x.0", 1, 132, b"\x00\x00\x00\x0c" + b"\x00" * 4 + b"\x00\x00\x00\x0c")
    try:
        assert _bulk_built(record, 3, {}) is None
    except FormatError:  # pragma: no cover - the bulk path must not raise
        pytest.fail("raised")
