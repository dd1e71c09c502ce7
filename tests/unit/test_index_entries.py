"""Index entries read a chunk at a time (io/index.py) = the reader's entries: the same
entries, the same partial last entry kept, the same error after the same entries; on
PCP's QA archives and on generated indexes cut, damaged and compressed."""

from __future__ import annotations

import gzip
import lzma
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from pcpconform.errors import FormatError
from pcpconform.fastpath import PathStats
from pcpconform.format.pmtypes import Timestamp
from pcpconform.format.schema import INDEX_ENTRY_SIZE, LABEL_SIZE
from pcpconform.io import index
from pcpconform.io.index import IndexReason, index_entries
from pcpconform.io.reader import Component
from pcpconform.io.writer import ArchiveWriter, LabelFields

QA = Path(os.environ.get("PCPCONFORM_QA_ARCHIVES", "/var/lib/pcp/testsuite/archives"))
Outcome = tuple[list[tuple[int, int, Any]], list[bytes], tuple[str, str] | None]
_COMPRESS: dict[str, Callable[[bytes], bytes]] = {"": bytes, ".xz": lzma.compress, ".gz": gzip.compress}


def _outcome(path: Path, entries: Callable[[Component], Iterator[tuple[int, int, Any]]],
             max_bytes: int | None = None) -> Outcome:
    got: list[tuple[int, int, Any]] = []
    error = None
    try:
        with Component(path, max_bytes=max_bytes) as comp:
            try:
                got.extend(entries(comp))
            except FormatError as exc:
                error = (exc.code, str(exc))
            return got, comp.trailing, error
    except FormatError as exc:
        return got, [], (exc.code, str(exc))


@pytest.fixture(scope="module", params=[2, 3])
def written(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """A .index of 10 000 entries (three chunks) of the given version."""
    version = request.param
    base = tmp_path_factory.mktemp(f"index{version}") / "a"
    w = ArchiveWriter(base, version)
    t0 = Timestamp(1_700_000_000, 123_456_000)
    w.start(LabelFields(hostname="index", timezone="UTC", start=t0, pid=1, zoneinfo=":UTC"))
    for k in range(10_000):
        w.put_index(Timestamp(t0.sec + k, t0.nsec))
    w.close()
    return Path(f"{base}.index").read_bytes()


def test_qa_indexes_are_the_readers() -> None:
    paths = sorted(QA.glob("*.index"))
    if not paths:
        if os.environ.get("CI") == "true":
            pytest.fail(f"no .index under {QA} (CI installs PCP's QA archives)")
        pytest.skip(f"{QA} is not installed")
    for path in paths:
        stats = PathStats()
        fast = _outcome(path, lambda comp, stats=stats: index_entries(comp, stats))
        assert fast == _outcome(path, Component.index_entries)
        assert stats.answered[index.PATH] == 1, path


@pytest.mark.parametrize("cut", [0, 1, 7, "entry"])
@pytest.mark.parametrize("suffix", list(_COMPRESS))
def test_entries_and_a_partial_last_entry(written: bytes, tmp_path: Path, cut: int | str, suffix: str) -> None:
    version = written[7]
    raw = written[:-INDEX_ENTRY_SIZE[version]] if cut == "entry" else written + b"\x01" * int(cut)
    path = tmp_path / f"a.index{suffix}"
    path.write_bytes(_COMPRESS[suffix](raw))
    stats = PathStats()
    fast = _outcome(path, lambda comp: index_entries(comp, stats))
    assert fast == _outcome(path, Component.index_entries)
    assert len(fast[0]) == (len(raw) - LABEL_SIZE[version]) // INDEX_ENTRY_SIZE[version]
    assert fast[1] == ([b"\x01" * int(cut)] if cut not in (0, "entry") else [])
    assert stats.answered[index.PATH] == 1 and not stats.declined


@pytest.mark.parametrize("how", ["cut", "flipped"])
@pytest.mark.parametrize("suffix", [".xz", ".gz"])
def test_a_failed_read_is_the_readers(written: bytes, tmp_path: Path, how: str, suffix: str) -> None:
    """A compressed index cut or damaged: the entries before the failure and the error are
    the reader's, the chunk that failed read again entry by entry (counted)."""
    packed = _COMPRESS[suffix](written)
    if how == "cut":
        packed = packed[: len(packed) * 2 // 3]
    else:
        raw = bytearray(packed)
        for at in range(len(raw) // 2, len(raw) // 2 + 8):
            raw[at] ^= 0x5A
        packed = bytes(raw)
    path = tmp_path / f"a.index{suffix}"
    path.write_bytes(packed)
    stats = PathStats()
    reader = _outcome(path, Component.index_entries)
    assert _outcome(path, lambda comp: index_entries(comp, stats)) == reader
    assert reader[2] is not None and reader[2][0] == "file.read"
    assert stats.reasons(index.PATH)[IndexReason.READ_FAILED] == 1


@pytest.mark.parametrize("share", [0.01, 0.5, 2.0])
def test_the_decompression_limit_is_the_readers(written: bytes, tmp_path: Path, share: float) -> None:
    path = tmp_path / "a.index.xz"
    path.write_bytes(lzma.compress(written))
    limit = int(len(written) * share)
    reader = _outcome(path, Component.index_entries, limit)
    assert _outcome(path, lambda comp: index_entries(comp, PathStats()), limit) == reader
    assert (reader[2] is None) == (share > 1)


def test_a_file_that_is_not_regular_is_left_to_the_reader(written: bytes, tmp_path: Path) -> None:
    path = tmp_path / "a.index"
    path.write_bytes(written)
    fifo = tmp_path / "b.index"
    os.mkfifo(fifo)
    pid = os.fork()
    if pid == 0:                    # the writer end: the file's bytes, then close
        try:
            with open(fifo, "wb") as out:
                out.write(written)
        finally:
            os._exit(0)
    stats = PathStats()
    try:
        got = _outcome(fifo, lambda comp: index_entries(comp, stats))
    finally:
        os.waitpid(pid, 0)
    assert got == _outcome(path, Component.index_entries)
    assert stats.reasons(index.PATH)[IndexReason.NOT_REGULAR] == 1


@pytest.mark.parametrize("split", [0, 1, 132 + 32 * 3000, 132 + 32 * 3000 + 4, 132 + 32 * 3000 + 17])
def test_a_zstd_file_of_two_frames_reads_as_one_stream(written: bytes, tmp_path: Path, split: int) -> None:
    """``zstd -dcq`` (what libpcp runs for ``.zst``) reads on across frames, wherever the
    split falls: so do both readers, entry by entry and a chunk at a time."""
    import zstandard

    path = tmp_path / "a.index.zst"
    path.write_bytes(zstandard.ZstdCompressor().compress(written[:split])
                     + zstandard.ZstdCompressor().compress(written[split:]))
    plain = tmp_path / "a.index"
    plain.write_bytes(written)
    stats = PathStats()
    assert _outcome(path, lambda comp: index_entries(comp, stats)) == _outcome(path, Component.index_entries) \
        == _outcome(plain, Component.index_entries)
    assert stats.answered[index.PATH] == 1


class _Pausing:
    """A stream that gives at most ``most`` bytes a read (as a decompressor may at its
    frames' ends): short reads that are not the end."""

    def __init__(self, data: bytes, most: int) -> None:
        self._data, self._most = data, most

    def read(self, size: int = -1) -> bytes:
        size = self._most if size < 0 else min(size, self._most)
        out, self._data = self._data[:size], self._data[size:]
        return out

    def close(self) -> None:
        pass


@pytest.mark.parametrize("short", [5000, 3])
def test_a_short_read_that_is_not_the_end_is_the_readers(written: bytes, tmp_path: Path, short: int,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """A stream that pauses mid-file (at 5000 bytes, or 3 bytes short of a chunk): the
    reader's answer (here, read entry by entry, it reads to the end), the chunk that came
    back short read again by it (counted)."""
    import pcpconform.io.reader as reader

    most = short if short > 100 else INDEX_ENTRY_SIZE[written[7]] * 4096 - short
    path = tmp_path / "a.index"
    path.write_bytes(written)
    monkeypatch.setattr(reader, "open_component", lambda p: _Pausing(p.read_bytes(), most))
    stats = PathStats()
    fast = _outcome(path, lambda comp: index_entries(comp, stats))
    assert fast == _outcome(path, Component.index_entries)
    assert len(fast[0]) == 10_000
    assert stats.reasons(index.PATH)[IndexReason.SHORT_READ] == 1
