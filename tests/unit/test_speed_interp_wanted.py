"""The replay's pass decodes only the wanted value sets (oracles/interp/wanted.py): what it
gives is ``decode_result`` filtered, value for value and type for type, or the same error,
on every corpus archive (the damaged ones included) and any choice of metrics; and the
benchmark's shape takes the selective path."""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

import pytest

from pcpconform.errors import FormatError, PcpConformError
from pcpconform.fastpath import PathStats
from pcpconform.format.pmtypes import PmType, Timestamp
from pcpconform.format.values import F32
from pcpconform.io.archive import Archive
from pcpconform.io.bulk import DecodedResult, DecodedValueSet, decode_result
from pcpconform.io.encode import encode_result
from pcpconform.io.reader import RawRecord
from pcpconform.oracles.interp.wanted import WantedDecoder
from tests.bench_modules import bench_module

ROOT = Path(__file__).resolve().parents[2]
CASES = sorted(p.parent / "a" for p in (ROOT / "corpus" / "cases").glob("*/*/a.meta*")
               if not p.parent.name.startswith("compress"))


def _exact(v: Any) -> Any:
    if isinstance(v, float):
        return (type(v).__name__, struct.pack("<d", v), getattr(v, "bits", None))
    return (type(v).__name__, v)


def _form(stamp: Any, mark: bool, vsets: list[Any]) -> Any:
    return (stamp, mark, [(vs.pmid, vs.numval, vs.columns[0], [_exact(v) for v in vs.columns[1]])
                          for vs in vsets])


def _both(a: Archive, wanted: set[int], selective: bool = True) -> tuple[list[Any], list[Any], WantedDecoder]:
    types = {p: d.type for p, d in a.metadata.descs.items()}
    decoder = WantedDecoder(a.version, types, wanted)
    decoder.selective = selective
    got, want = [], []
    for _, record in a.volume_records():
        try:
            got.append(_form(*decoder(record)))
        except FormatError as exc:
            got.append(("error", str(exc)))
        try:
            res = decode_result(record, a.version, types, PathStats())
            want.append(_form(res.timestamp, not res.vsets,
                              [vs for vs in res.vsets if vs.pmid in wanted and vs.numval > 0]))
        except FormatError as exc:
            want.append(("error", str(exc)))
    return got, want, decoder


@pytest.mark.parametrize("base", CASES, ids=lambda p: f"{p.parent.parent.name}/{p.parent.name}")
def test_wanted_value_sets_are_decode_result_filtered(base: Path) -> None:
    try:
        a = Archive(base)
        pmids = sorted(int(p) for p in a.metadata.descs)
        list(a.volume_records())
    except PcpConformError:
        return                              # not readable as far as the records
    for wanted in ({*pmids}, {*pmids[::2]}, {*pmids[1::3]}, set()):
        got, want, _ = _both(a, wanted)
        assert got == want


def test_the_benchmark_shape_is_decoded_selectively(tmp_path: Path) -> None:
    bench_decode = bench_module("bench_decode")
    base = tmp_path / "bench"
    info = bench_decode.generate(base, 3, 0.5, 1)
    a = Archive(base)
    got, want, decoder = _both(a, {bench_decode.PM_NETIN, bench_decode.PM_LOAD, bench_decode.PM_PRIO})
    assert got == want
    # only the records with a string value (every 5th) are decoded whole
    assert decoder.whole == (info.results + bench_decode.STRING_EVERY - 1) // bench_decode.STRING_EVERY
    assert WantedDecoder(3, {1: 1, 2: 1}, [1]).selective and not WantedDecoder(3, {1: 1, 2: 1}, [1, 2]).selective


@pytest.mark.parametrize("version", [2, 3])
def test_every_single_byte_damage_gives_what_decode_result_gives(version: int) -> None:
    """Each byte of a small record flipped (two ways): selective and whole agree."""
    types = {1: PmType.U64, 2: PmType.FLOAT, 3: PmType.I32, 4: PmType.DOUBLE}
    vsets = [DecodedValueSet(1, 2, None, None, ((0, 1), (5, 2**63))),
             DecodedValueSet(2, 3, None, None, ((1, 5, 15), (F32(1.5), F32(-2.0), F32(0.25)))),
             DecodedValueSet(3, 2, None, None, ((7, 8), (-1, 3))),
             DecodedValueSet(4, 1, None, None, ((-1,), (0.1,)))]
    data = encode_result(version, DecodedResult(Timestamp(1_700_000_000, 5000), vsets, None, True), types,
                         PathStats())
    assert data is not None
    for wanted in ({1, 2, 3, 4}, {2}, {1, 4}):
        decoder = WantedDecoder(version, types, wanted)
        assert decoder.selective or len(wanted) > 2
        decoder.selective = True
        for at in range(len(data)):
            for flip in (0x01, 0x80):
                damaged = bytearray(data)
                damaged[at] ^= flip
                record = RawRecord("x", 1, 0, bytes(damaged))
                try:
                    got: Any = _form(*decoder(record))
                except FormatError as exc:
                    got = ("error", str(exc))
                try:
                    res = decode_result(record, version, types, PathStats())
                    want: Any = _form(res.timestamp, not res.vsets,
                                      [vs for vs in res.vsets if vs.pmid in wanted and vs.numval > 0])
                except FormatError as exc:
                    want = ("error", str(exc))
                assert got == want, (at, flip)
