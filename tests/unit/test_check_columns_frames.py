"""Chunked framing of plain data volumes (io/frames.py) = the reader's framing: the same
records, the same bytes kept as a clean end, the same error at the same place."""

from __future__ import annotations

import gzip
import lzma
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
from pcpconform.io.frames import framed_records
from pcpconform.io.reader import Component, RawRecord

ROOT = Path(__file__).resolve().parents[2]
Outcome = tuple[list[tuple[int, int, bytes]], list[bytes], tuple[str, str] | None]


@pytest.fixture(scope="module", params=[(2, "0"), (3, "0"), (2, "meta"), (3, "meta")], ids=str)
def component(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, bytes]:
    version, part = request.param
    base = tmp_path_factory.mktemp(f"frames{version}") / "a"
    generate_archive(load_fixture(ROOT / "corpus" / "fixtures" / "example.yaml"), base, version=version)
    return part, Path(f"{base}.{part}").read_bytes()


def _outcome(path: Path, records: Callable[[Component], Iterator[RawRecord]],
             max_bytes: int | None = None) -> Outcome:
    got: list[tuple[int, int, bytes]] = []
    error = None
    try:
        with Component(path, max_bytes=max_bytes) as comp:
            try:
                for rec in records(comp):
                    got.append((rec.index, rec.offset, rec.data))
            except FormatError as exc:
                error = (exc.code, str(exc))
            return got, comp.trailing, error
    except FormatError as exc:           # the label itself
        return got, [], (exc.code, str(exc))


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


_COMPRESS: dict[str, Callable[[bytes], bytes]] = {"": bytes, ".xz": lzma.compress, ".gz": gzip.compress}


@pytest.mark.parametrize("how", ["clean", "stray-2", "stray-9", "truncated", "trailer", "short-length",
                                 "huge-length", "label-only"])
@pytest.mark.parametrize("chunk", [1 << 20, 64])
@pytest.mark.parametrize("suffix", list(_COMPRESS))
def test_chunked_framing_is_the_readers(component: tuple[str, bytes], tmp_path: Path, how: str, chunk: int,
                                        suffix: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Data volumes and .meta, plain and compressed, whole and damaged: the same records,
    trailing bytes and error; a hand-over to the reader counted where the chunks stop short."""
    monkeypatch.setattr(frames, "_CHUNK", chunk)      # 64: records straddle chunks
    part, raw = component
    kind = "meta" if part == "meta" else "volume"
    path = tmp_path / f"a.{part}{suffix}"
    path.write_bytes(_COMPRESS[suffix](_damage(raw, how)))
    reader = _outcome(path, lambda comp: comp.records(kind))
    stats = PathStats()
    assert _outcome(path, lambda comp: framed_records(comp, stats, kind)) == reader
    assert reader[0] or how == "label-only"
    assert stats.answered[frames.PATH] == 1
    handed = stats.reasons(frames.PATH)[frames.FrameReason.HANDED_OVER]
    assert handed == (0 if how in ("clean", "label-only") else 1)


def _packed_damage(packed: bytes, how: str) -> bytes:
    if how == "cut":
        return packed[: len(packed) * 2 // 3]
    raw = bytearray(packed)
    for at in range(len(raw) // 2, len(raw) // 2 + 8):
        raw[at] ^= 0x5A
    return bytes(raw)


@pytest.mark.parametrize("how", ["cut", "flipped"])
@pytest.mark.parametrize("chunk", [1 << 20, 64])
@pytest.mark.parametrize("suffix", [".xz", ".gz"])
def test_a_failed_read_is_the_readers(component: tuple[str, bytes], tmp_path: Path, how: str, chunk: int,
                                      suffix: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A compressed stream cut or damaged: the records before the failure and the error are
    the reader's (it reads less far ahead than the chunks)."""
    monkeypatch.setattr(frames, "_CHUNK", chunk)
    part, raw = component
    kind = "meta" if part == "meta" else "volume"
    path = tmp_path / f"a.{part}{suffix}"
    big = raw[:LABEL_SIZE[raw[7]]] + raw[LABEL_SIZE[raw[7]]:] * 40      # past the margin
    path.write_bytes(_packed_damage(_COMPRESS[suffix](big), how))
    reader = _outcome(path, lambda comp: comp.records(kind))
    stats = PathStats()
    assert _outcome(path, lambda comp: framed_records(comp, stats, kind)) == reader
    assert reader[2] is not None        # file.read, or (deflate finds damage only at its end) a framing rule
    assert reader[2][0] == "file.read" or suffix == ".gz"


@pytest.mark.parametrize("share", [0.01, 0.3, 0.9, 2.0])
def test_the_decompression_limit_is_the_readers(component: tuple[str, bytes], tmp_path: Path, share: float) -> None:
    part, raw = component
    kind = "meta" if part == "meta" else "volume"
    path = tmp_path / f"a.{part}.xz"
    big = raw[:LABEL_SIZE[raw[7]]] + raw[LABEL_SIZE[raw[7]]:] * 40
    path.write_bytes(lzma.compress(big))
    limit = int(len(big) * share)
    reader = _outcome(path, lambda comp: comp.records(kind), limit)
    assert _outcome(path, lambda comp: framed_records(comp, PathStats(), kind), limit) == reader
    assert (reader[2] is None) == (share > 1)
