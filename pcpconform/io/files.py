"""Finding the files of an archive and opening them, compressed or not.

An archive with base name B is ``B.meta``, an optional ``B.index`` and volumes ``B.N``
(N canonical decimal); any of them may carry one compression suffix that libpcp accepts.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from pcpconform.errors import UsageError

__all__ = ["COMPRESSION_SUFFIXES", "ArchiveFiles", "ByteStream", "find_archive", "open_component",
           "strip_compression", "base_name_of"]

#: Suffixes libpcp tries, in its lookup order.
COMPRESSION_SUFFIXES = (".xz", ".lzma", ".bz2", ".bz", ".gz", ".Z", ".z", ".zst")


class ByteStream(Protocol):
    """A component opened for sequential reading: a file or any of the decompressors."""

    def read(self, size: int = -1, /) -> bytes: ...

    def close(self) -> None: ...


_COMPONENT = re.compile(r"^(?P<base>.+)\.(?P<part>meta|index|0|[1-9][0-9]*)$")


def strip_compression(name: str) -> tuple[str, str]:
    """Split a file name into (name without compression suffix, suffix or '')."""
    for suffix in COMPRESSION_SUFFIXES:
        if name.endswith(suffix):
            return name[: -len(suffix)], suffix
    return name, ""


def base_name_of(path: str | os.PathLike[str]) -> Path:
    """The archive base name for a base name or for any one of the archive's files."""
    p = Path(path)
    plain, _ = strip_compression(p.name)
    m = _COMPONENT.match(plain)
    if m and p.exists():
        return p.with_name(m.group("base"))
    return p


@dataclass
class ArchiveFiles:
    """Paths of one archive's components."""

    base: Path
    meta: Path | None = None
    index: Path | None = None
    volumes: dict[int, Path] = field(default_factory=dict)

    def all_paths(self) -> list[Path]:
        paths = [p for p in (self.meta, self.index) if p is not None]
        return paths + [self.volumes[v] for v in sorted(self.volumes)]


def find_archive(path: str | os.PathLike[str]) -> ArchiveFiles:
    """Locate the components of the archive named by a base name or any of its files."""
    base = base_name_of(path)
    directory = base.parent if str(base.parent) else Path(".")
    if not directory.is_dir():
        raise UsageError(f"{path}: no such archive (directory {directory} does not exist)")
    found = ArchiveFiles(base=base)
    prefix = base.name + "."
    for entry in sorted(os.listdir(directory)):
        if not entry.startswith(prefix):
            continue
        plain, suffix = strip_compression(entry)
        part = plain[len(prefix):]
        full = directory / entry
        if part == "meta":
            # libpcp prefers nothing in particular; we prefer the uncompressed copy
            if found.meta is None or not suffix:
                found.meta = full
        elif part == "index":
            if found.index is None or not suffix:
                found.index = full
        elif re.fullmatch(r"0|[1-9][0-9]*", part):
            vol = int(part)
            if vol not in found.volumes or not suffix:
                found.volumes[vol] = full
    if found.meta is None and not found.volumes:
        raise UsageError(f"{path}: no such archive (no {base.name}.meta or {base.name}.0)")
    return found


class _DecompressorErrors:
    """A decompressing stream whose own exceptions (lzma.LZMAError, zlib.error,
    zstandard.ZstdError: none of them an OSError) are raised as OSError, so that every
    reader reports a corrupt compressed file as a read error, never a traceback."""

    def __init__(self, stream: ByteStream) -> None:
        self._stream = stream

    def read(self, size: int = -1, /) -> bytes:
        try:
            return self._stream.read(size)
        except (OSError, EOFError, ValueError):
            raise
        except Exception as exc:  # each decompressor has its own error class
            raise OSError(f"{type(exc).__name__}: {exc}") from None

    def close(self) -> None:
        self._stream.close()


def open_component(path: Path) -> ByteStream:
    """Open a component for sequential reading, decompressing transparently."""
    _, suffix = strip_compression(path.name)
    stream: ByteStream
    if suffix in (".xz", ".lzma"):
        stream = lzma.open(path, "rb")  # noqa: SIM115 (the caller owns and closes it)
    elif suffix in (".bz2", ".bz"):
        stream = bz2.open(path, "rb")  # noqa: SIM115
    elif suffix in (".gz", ".z"):
        stream = gzip.open(path, "rb")  # noqa: SIM115
    elif suffix == ".Z":
        return _read_lzw(path)
    elif suffix == ".zst":
        import zstandard

        # the reader owns the stream; closing it closes fh (closefd=True); a file of several
        # frames reads as one stream, as ``zstd -dcq`` (what libpcp runs) reads it
        fh = open(path, "rb")  # noqa: SIM115
        stream = zstandard.ZstdDecompressor().stream_reader(fh, closefd=True, read_across_frames=True)
    else:
        return open(path, "rb")
    return _DecompressorErrors(stream)


def _read_lzw(path: Path) -> ByteStream:
    """``.Z`` (compress) files: libpcp hands them to ``gzip -dc``, which reads LZW; so do we
    (Python has no LZW decoder). The output is held in memory: .Z archives are rare and old."""
    import subprocess  # only for this rare suffix: not at every command's start

    proc = subprocess.run(["gzip", "-dc", str(path)], capture_output=True, check=False)
    if proc.returncode != 0:
        raise OSError(f"cannot decompress: {proc.stderr.decode(errors='replace').strip()}")
    return io.BytesIO(proc.stdout)
