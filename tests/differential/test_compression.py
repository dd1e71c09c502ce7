"""Compressed components are read transparently; rebuild writes them decompressed."""

from __future__ import annotations

import bz2
import gzip
import lzma
from pathlib import Path

import pytest
import zstandard

from pcpconform.dump.jsonl import jsonl_records
from pcpconform.fixtures.fixture import load_fixture
from pcpconform.fixtures.generate import generate_archive
from pcpconform.io.archive import Archive
from pcpconform.io.rebuild import rebuild_archive
from tests.conftest import needs_libpcp
from tests.differential.libpcp import bridge
from tests.differential.libpcp.compare import assert_reader_matches_libpcp

ROOT = Path(__file__).resolve().parents[2]
COMPRESSORS = {
    ".xz": lzma.compress, ".bz2": bz2.compress, ".gz": gzip.compress,
    ".zst": lambda data: zstandard.ZstdCompressor().compress(data),
}


def make(tmp_path: Path, fixture: str = "example.yaml") -> Path:
    base = tmp_path / "plain" / "ex"
    generate_archive(load_fixture(ROOT / "corpus" / "fixtures" / fixture), base)
    return base


def compress_copy(base: Path, dest: Path, suffix: str, parts=("meta", "index", "0")) -> Path:
    dest.mkdir(parents=True)
    for part in ("meta", "index", "0"):
        data = Path(f"{base}.{part}").read_bytes()
        if part in parts:
            (dest / f"ex.{part}{suffix}").write_bytes(COMPRESSORS[suffix](data))
        else:
            (dest / f"ex.{part}").write_bytes(data)
    return dest / "ex"


def strip_files(objs):
    return [{k: v for k, v in o.items() if k != "file"} for o in objs]


@pytest.mark.parametrize("suffix", sorted(COMPRESSORS))
def test_compressed_archive_dumps_and_rebuilds_like_plain(tmp_path: Path, suffix: str) -> None:
    base = make(tmp_path)
    packed = compress_copy(base, tmp_path / "packed", suffix)
    assert strip_files(jsonl_records(Archive(packed))) == strip_files(jsonl_records(Archive(base)))
    # any file of the archive names it, compressed or not
    assert Archive(f"{packed}.0{suffix}").files.base == packed
    rebuild_archive(packed, tmp_path / "out" / "ex")
    for part in ("meta", "index", "0"):
        assert Path(f"{tmp_path}/out/ex.{part}").read_bytes() == Path(f"{base}.{part}").read_bytes()


def test_truncated_compressed_stream_is_a_format_error(tmp_path: Path) -> None:
    from pcpconform.errors import FormatError

    base = make(tmp_path)
    packed = compress_copy(base, tmp_path / "packed", ".xz", parts=("0",))
    vol = Path(f"{packed}.0.xz")
    vol.write_bytes(vol.read_bytes()[:-30])
    with pytest.raises(FormatError) as err:
        list(Archive(packed).results())
    assert "ex.0.xz" in str(err.value)


@needs_libpcp
@pytest.mark.libpcp
@pytest.mark.parametrize("suffix", [".xz", ".bz2", ".gz"])
def test_libpcp_reads_the_same_from_compressed_volumes(tmp_path: Path, suffix: str) -> None:
    # libpcp 6.0.3 decompresses volumes (not .zst, added in 6.3.2)
    base = make(tmp_path)
    packed = compress_copy(base, tmp_path / "packed", suffix, parts=("0",))
    assert_reader_matches_libpcp(packed)


@needs_libpcp
@pytest.mark.libpcp
@pytest.mark.parametrize("version", [2, 3])
def test_event_fixture_reads_alike_in_libpcp(tmp_path: Path, version: int) -> None:
    base = tmp_path / "ev"
    generate_archive(load_fixture(ROOT / "corpus" / "fixtures" / "events.yaml"), base, version=version)
    assert_reader_matches_libpcp(base)
    dump = bridge.pmdumplog(base, "-a")
    assert '62.0.4 (ev.param.str): value "fetch #1"' in dump.stdout
    assert "3 missed event records" in dump.stdout
    assert bridge.pmlogcheck(base).returncode == 0
