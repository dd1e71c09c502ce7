"""Compressed components: the kit reads them transparently and rebuilds them decompressed;
each referee reads the suffixes its version supports (FMT-COMPRESS-2, FMT-COMPRESS-4) with
the kit's values, and refuses the others."""

from __future__ import annotations

import bz2
import gzip
import lzma
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pytest
import zstandard

from pcpconform.dump.jsonl import jsonl_records
from pcpconform.fixtures import bundled_fixture
from pcpconform.fixtures.fixture import load_fixture
from pcpconform.fixtures.generate import generate_archive
from pcpconform.io.archive import Archive
from pcpconform.io.rebuild import rebuild_archive
from tests.differential.libpcp import bridge
from tests.differential.libpcp.compare import our_view, reader_differences
from tests.differential.libpcp.referees import Referee

COMPRESSORS: dict[str, Callable[[bytes], bytes]] = {
    ".xz": lzma.compress, ".lzma": lambda data: lzma.compress(data, format=lzma.FORMAT_ALONE),
    ".bz2": bz2.compress, ".bz": bz2.compress, ".gz": gzip.compress, ".z": gzip.compress,
    ".zst": lambda data: zstandard.ZstdCompressor().compress(data),
}
# ``.Z`` (Unix compress) is left out: nothing here writes LZW streams

#: the program libpcp runs to decompress a suffix (``.xz`` it decodes itself with liblzma)
DECOMPRESSOR = {".lzma": "xz", ".bz2": "bzip2", ".bz": "bzip2", ".gz": "gzip", ".z": "gzip",
                ".zst": "zstd"}

PARTS = ("meta", "index", "0")


def make(tmp_path: Path) -> Path:
    base = tmp_path / "plain" / "ex"
    generate_archive(load_fixture(bundled_fixture("example")), base)
    return base


def compress_copy(base: Path, dest: Path, suffix: str, parts: tuple[str, ...] = PARTS) -> Path:
    dest.mkdir(parents=True)
    for part in PARTS:
        data = Path(f"{base}.{part}").read_bytes()
        if part in parts:
            (dest / f"ex.{part}{suffix}").write_bytes(COMPRESSORS[suffix](data))
        else:
            (dest / f"ex.{part}").write_bytes(data)
    return dest / "ex"


def strip_files(objs: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in o.items() if k != "file"} for o in objs]


@pytest.mark.parametrize("suffix", sorted(COMPRESSORS))
def test_compressed_archive_dumps_and_rebuilds_like_plain(tmp_path: Path, suffix: str) -> None:
    base = make(tmp_path)
    packed = compress_copy(base, tmp_path / "packed", suffix)
    assert strip_files(jsonl_records(Archive(packed))) == strip_files(jsonl_records(Archive(base)))
    # any file of the archive names it, compressed or not
    assert Archive(f"{packed}.0{suffix}").files.base == packed
    rebuild_archive(packed, tmp_path / "out" / "ex")
    for part in PARTS:
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


def supported(referee: Referee, suffix: str) -> bool:
    """FMT-COMPRESS-2: ``.zst`` only from PCP 6.3.2; every other suffix in all three."""
    if suffix != ".zst":
        return True
    return tuple(int(x) for x in referee.version.split(".")[:3]) >= (6, 3, 2)


def _has_program(referee: Referee, name: str) -> bool:
    root = referee.root or Path("/")
    return any((root / d / name).exists() for d in ("usr/bin", "bin", "usr/local/bin"))


@pytest.mark.libpcp
@pytest.mark.parametrize("parts", [("0",), PARTS], ids=["volume", "all"])
@pytest.mark.parametrize("suffix", sorted(COMPRESSORS))
def test_libpcp_reads_the_suffixes_of_its_version(referee: Referee, tmp_path: Path, suffix: str,
                                                  parts: tuple[str, ...]) -> None:
    base = make(tmp_path)
    packed = compress_copy(base, tmp_path / "packed", suffix, parts=parts)
    if not supported(referee, suffix):
        # 6.0.3 does not know the suffix: the files are not part of the archive for it
        with pytest.raises(bridge.LibpcpError, match=r"PM_ERR_LOGFILE|No such file"):
            bridge.pm_read(referee, packed)
        return
    program = DECOMPRESSOR.get(suffix)
    assert program is None or _has_program(referee, program), (
        f"{referee.name} has no {program}: libpcp would read {suffix} files as corrupt records "
        f"(install it: .ci/install-pcp-chroot.sh)")
    diffs = reader_differences(bridge.pm_read(referee, packed), our_view(base))
    assert not diffs, "\n".join(diffs)


@pytest.mark.libpcp
def test_libpcp_without_the_decompressor_reads_a_corrupt_record(referee: Referee, tmp_path: Path) -> None:
    """FMT-COMPRESS-4: a suffix libpcp decompresses with an external program fails as a
    corrupt record when that program is not on PATH (here: an empty PATH)."""
    base = make(tmp_path)
    packed = compress_copy(base, tmp_path / "packed", ".bz2", parts=("0",))
    with pytest.raises(bridge.LibpcpError, match="PM_ERR_LOGREC"):
        bridge.pm_read(referee, packed, env={"PATH": "/nonexistent"})
    # .xz is decoded in-process: no program needed
    xz = compress_copy(base, tmp_path / "xz", ".xz", parts=("0",))
    assert not reader_differences(bridge.pm_read(referee, xz, env={"PATH": "/nonexistent"}),
                                  our_view(base))
