"""A corrupt compressed component is a bad file (exit 1, one line naming it), never a
traceback: each decompressor's own error class is reported as a read error."""

from __future__ import annotations

import bz2
import gzip
import lzma
from pathlib import Path

import pytest
import zstandard

from pcpconform.cli import main
from pcpconform.fixtures import bundled_fixture
from pcpconform.fixtures.fixture import load_fixture
from pcpconform.fixtures.generate import generate_archive

COMPRESS = {
    ".xz": lzma.compress,
    ".bz2": bz2.compress,
    ".gz": gzip.compress,
    ".zst": lambda data: zstandard.ZstdCompressor().compress(data),
}


@pytest.mark.parametrize("suffix", list(COMPRESS))
@pytest.mark.parametrize("command", [["check", "{a}"], ["dump", "{a}"], ["dump", "--format", "jsonl", "{a}"],
                                     ["rebuild", "{a}", "{out}"], ["interp", "{a}", "kernel.all.load"]])
def test_corrupt_compressed_volume_is_a_bad_file(tmp_path: Path, suffix: str, command: list[str],
                                                capsys: pytest.CaptureFixture[str]) -> None:
    base = tmp_path / "a"
    generate_archive(load_fixture(bundled_fixture("example")), base)
    volume = tmp_path / "a.0"
    packed = bytearray(COMPRESS[suffix](volume.read_bytes()))
    volume.unlink()
    middle = len(packed) // 2
    packed[middle:middle + 8] = bytes(b ^ 0xFF for b in packed[middle:middle + 8])
    (tmp_path / f"a.0{suffix}").write_bytes(bytes(packed))
    argv = [word.format(a=base, out=tmp_path / "out") for word in command]
    status = main(argv)             # an escaping exception fails the test: that is the point
    out = capsys.readouterr()
    assert status == 1, out.err
    assert f"a.0{suffix}" in out.err + out.out
