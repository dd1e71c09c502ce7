"""Chunked framing of plain data volumes (io/frames.py) = the reader's framing: the same
records, the same bytes kept as a clean end, the same error at the same place."""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from pcpconform.errors import FormatError
from pcpconform.fastpath import PathStats
from pcpconform.fixtures.fixture import load_fixture
from pcpconform.fixtures.generate import generate_archive
from pcpconform.format.schema import LABEL_SIZE
from pcpconform.io import frames
from pcpconform.io.frames import volume_records
from pcpconform.io.reader import Component, RawRecord

ROOT = Path(__file__).resolve().parents[2]
Outcome = tuple[list[tuple[int, int, bytes]], list[bytes], tuple[str, str] | None]


@pytest.fixture(scope="module", params=[2, 3])
def volume(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> bytes:
    base = tmp_path_factory.mktemp(f"frames{request.param}") / "a"
    generate_archive(load_fixture(ROOT / "corpus" / "fixtures" / "example.yaml"), base,
                     version=request.param)
    return Path(f"{base}.0").read_bytes()


def _outcome(path: Path, records: Callable[[Component], Iterator[RawRecord]]) -> Outcome:
    got: list[tuple[int, int, bytes]] = []
    error = None
    with Component(path) as comp:
        try:
            for rec in records(comp):
                got.append((rec.index, rec.offset, rec.data))
        except FormatError as exc:
            error = (exc.code, str(exc))
        return got, comp.trailing, error


def _record_starts(data: bytes, first: int) -> list[int]:
    starts, at = [], first
    while at + 4 <= len(data):
        starts.append(at)
        at += struct.unpack_from(">I", data, at)[0]
    return starts


def _damage(data: bytes, how: str) -> bytes:
    first = LABEL_SIZE[data[7]]
    starts = _record_starts(data, first)
    mid = starts[len(starts) // 2]
    raw = bytearray(data)
    if how == "clean":
        pass
    elif how == "stray-2":
        raw += b"\0\0"
    elif how == "stray-9":
        raw += b"\0" * 9
    elif how == "truncated":
        del raw[-5:]
    elif how == "trailer":
        struct.pack_into(">I", raw, starts[starts.index(mid) + 1] - 4, 12345)
    elif how == "short-length":
        struct.pack_into(">I", raw, mid, 4)
    elif how == "huge-length":
        struct.pack_into(">I", raw, mid, 0x7FFFFFF0)
    elif how == "label-only":
        del raw[first:]
    return bytes(raw)


@pytest.mark.parametrize("how", ["clean", "stray-2", "stray-9", "truncated", "trailer", "short-length",
                                 "huge-length", "label-only"])
@pytest.mark.parametrize("chunk", [1 << 20, 64])
def test_chunked_framing_is_the_readers(volume: bytes, tmp_path: Path, how: str, chunk: int,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(frames, "_CHUNK", chunk)      # 64: records straddle chunks
    path = tmp_path / "a.0"
    path.write_bytes(_damage(volume, how))
    reader = _outcome(path, lambda comp: comp.records())
    assert _outcome(path, lambda comp: volume_records(comp, PathStats())) == reader
    assert reader[0] or how == "label-only"
