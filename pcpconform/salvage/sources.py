"""The files of a damaged archive, found leniently and read as random-access bytes.

Salvage reads every file it can find under the input's base name: ``.meta``, ``.index`` and
data volumes, compressed or not, also under a volume name libpcp would not open (``B.00``)
when no canonical name holds that volume (SALVAGE-FILE-1). A compressed file is decompressed
once, in a stream, into a private temporary file: what decompresses before the stream
breaks is kept and the break is reported (SALVAGE-FILE-4), and nothing expands past a limit
(compression bombs). Reading is then by offset, through a small cache, so memory follows the
largest record, never the file.
"""

from __future__ import annotations

import bz2
import lzma
import os
import re
import shutil
import tempfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from pcpconform.errors import UsageError
from pcpconform.io.files import base_name_of, open_component, strip_compression

__all__ = ["Source", "InputFiles", "find_input", "decompress", "DEFAULT_DECOMPRESS_LIMIT"]

#: a compressed component may expand to at most this many bytes
DEFAULT_DECOMPRESS_LIMIT = 8 << 30
_CACHE = 1 << 20
_CHUNK = 1 << 16
_VOLUME = re.compile(r"[0-9]+")


class Source:
    """One input file as bytes addressed by offset (decompressed where it is compressed).

    ``broken`` says why the bytes end early when decompression failed part way (the bytes
    before the failure are all there is)."""

    def __init__(self, name: str, fh: BinaryIO, size: int, broken: str | None = None) -> None:
        self.name = name
        self._fh = fh
        self.size = size
        self.broken = broken
        self._at = 0
        self._buf = b""

    def read(self, offset: int, length: int) -> bytes:
        """Up to ``length`` bytes from ``offset`` (short at the end of the file)."""
        if offset < 0 or length <= 0 or offset >= self.size:
            return b""
        end = min(offset + length, self.size)
        if not (self._at <= offset and end <= self._at + len(self._buf)):
            self._fh.seek(offset)
            self._buf = self._fh.read(max(end - offset, _CACHE))
            self._at = offset
        return self._buf[offset - self._at:end - self._at]

    def word(self, offset: int) -> int | None:
        """The big-endian 32-bit word at ``offset``, or None past the end."""
        data = self.read(offset, 4)
        return int.from_bytes(data, "big") if len(data) == 4 else None

    def close(self) -> None:
        self._fh.close()


@dataclass
class InputFiles:
    """What the input's base name holds: each part's candidate files, best first."""

    base: Path
    meta: list[Path] = field(default_factory=list)
    index: list[Path] = field(default_factory=list)
    volumes: dict[int, list[Path]] = field(default_factory=dict)
    #: names libpcp would not open, taken because no canonical name holds that volume
    renamed: dict[int, Path] = field(default_factory=dict)

    def all_paths(self) -> list[Path]:
        paths = [*self.meta, *self.index]
        for vol in sorted(self.volumes):
            paths += self.volumes[vol]
        return paths


def _rank(path: Path) -> tuple[bool, str]:
    # as libpcp prefers: the uncompressed copy first
    return bool(strip_compression(path.name)[1]), path.name


def find_input(path: str | os.PathLike[str]) -> InputFiles:
    """The files of the archive named by a base name or any of its files (UsageError when
    nothing of it exists)."""
    base = base_name_of(path)
    directory = base.parent if str(base.parent) else Path(".")
    if not directory.is_dir():
        raise UsageError(f"{path}: no such archive (directory {directory} does not exist)")
    found = InputFiles(base)
    odd: dict[int, list[Path]] = {}
    prefix = base.name + "."
    for entry in sorted(os.listdir(directory)):
        full = directory / entry
        if not entry.startswith(prefix) or not full.is_file():
            continue
        part = strip_compression(entry[len(prefix):])[0]
        if part == "meta":
            found.meta.append(full)
        elif part == "index":
            found.index.append(full)
        elif _VOLUME.fullmatch(part):
            vol = int(part)
            (found.volumes if part == str(vol) else odd).setdefault(vol, []).append(full)
    for vol, paths in odd.items():
        if vol not in found.volumes:
            found.volumes[vol] = paths
            found.renamed[vol] = paths[0]
    for paths in (found.meta, found.index, *found.volumes.values()):
        paths.sort(key=_rank)
    if not found.meta and not found.volumes and not found.index:
        raise UsageError(f"{path}: no such archive (no {base.name}.meta, .index or .N)")
    return found


class Broken(Exception):
    """The compressed stream ends early or is corrupt."""


def _decompressor(suffix: str) -> Any:
    if suffix in (".xz", ".lzma"):
        return lzma.LZMADecompressor()
    if suffix in (".bz2", ".bz"):
        return bz2.BZ2Decompressor()
    if suffix == ".zst":
        import zstandard

        return zstandard.ZstdDecompressor().decompressobj()
    return zlib.decompressobj(16 + zlib.MAX_WBITS)      # .gz, .z: gzip


def decompress(path: Path) -> Iterator[bytes]:
    """The decompressed bytes of a file, in chunks, as far as they decompress: decompressor
    objects give every byte they can decode before a cut or a corrupt block, where a file
    reader would raise and lose its buffer. Concatenated streams are followed."""
    suffix = strip_compression(path.name)[1]
    if suffix == ".Z":      # LZW: only gzip reads it (io.files); all or nothing
        try:
            stream = open_component(path)
            yield stream.read()
        except OSError as exc:
            raise Broken(str(exc)) from None
        return
    dec = _decompressor(suffix)
    with open(path, "rb") as fh:
        while True:
            raw = fh.read(_CHUNK)
            if not raw:
                break
            while raw:
                try:
                    out = dec.decompress(raw)
                except Exception as exc:   # each decompressor has its own error class
                    raise Broken(f"{type(exc).__name__}: {exc}") from None
                if out:
                    yield out
                raw = getattr(dec, "unused_data", b"") if getattr(dec, "eof", False) else b""
                if raw:
                    dec = _decompressor(suffix)
    if not getattr(dec, "eof", True):
        raise Broken("the stream ends before its end marker")


class Opener:
    """Opens input files as Sources; decompressed copies live in one private directory,
    removed by ``close``."""

    def __init__(self, decompress_limit: int = DEFAULT_DECOMPRESS_LIMIT) -> None:
        self.limit = decompress_limit
        self._tmp: str | None = None
        self._open: list[Source] = []

    def open(self, path: Path) -> Source:
        if not strip_compression(path.name)[1]:
            fh = open(path, "rb")  # noqa: SIM115 (closed by close())
            source = Source(path.name, fh, os.fstat(fh.fileno()).st_size)
        else:
            source = self._decompressed(path)
        self._open.append(source)
        return source

    def _decompressed(self, path: Path) -> Source:
        if self._tmp is None:
            self._tmp = tempfile.mkdtemp(prefix="pcpconform-salvage-")
        copy = open(Path(self._tmp) / f"{len(self._open)}-{path.name}", "w+b")  # noqa: SIM115
        size = 0
        broken: str | None = None
        try:
            for chunk in decompress(path):
                if size + len(chunk) > self.limit:
                    copy.write(chunk[:self.limit - size])
                    size = self.limit
                    broken = f"decompresses to more than {self.limit} bytes"
                    break
                copy.write(chunk)
                size += len(chunk)
        except Broken as exc:
            broken = f"the compressed stream breaks after {size} bytes: {exc}"
        copy.flush()
        return Source(path.name, copy, size, broken)

    def close(self) -> None:
        for source in self._open:
            source.close()
        self._open.clear()
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None
