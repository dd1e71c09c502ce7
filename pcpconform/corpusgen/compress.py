"""Compressing archive components for the corpus, one function per suffix of FMT-COMPRESS-1,
each deterministic (no time stamps or names in the output) so that the corpus rebuilds
byte for byte.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
from collections.abc import Callable

import zstandard

__all__ = ["COMPRESSORS", "lzw_compress"]

#: the largest input ``lzw_compress`` takes: every code stays 9 bits wide
_LZW_CODES = 255


def lzw_compress(data: bytes) -> bytes:
    """``data`` as a Unix ``compress`` (.Z) stream: magic 1f 9d, 16-bit maximum, block mode.

    Only streams of at most 255 codes are written, so that the dictionary never outgrows
    9-bit codes: a decoder then never widens its codes, and the padding rules that come
    with a wider code (which differ between implementations) never apply."""
    table = {bytes([i]): i for i in range(256)}
    next_code = 257                      # 256 is CLEAR in block mode
    codes: list[int] = []
    word = b""
    for byte in data:
        longer = word + bytes([byte])
        if longer in table:
            word = longer
            continue
        codes.append(table[word])
        table[longer] = next_code
        next_code += 1
        word = bytes([byte])
    if word:
        codes.append(table[word])
    if len(codes) > _LZW_CODES:
        raise ValueError(f"lzw_compress: {len(data)} bytes need {len(codes)} codes (at most {_LZW_CODES})")
    bits = 0
    for k, code in enumerate(codes):
        bits |= code << (9 * k)
    return b"\x1f\x9d\x90" + bits.to_bytes((9 * len(codes) + 7) // 8, "little")


def _gzip(data: bytes) -> bytes:
    return gzip.compress(data, compresslevel=9, mtime=0)


COMPRESSORS: dict[str, Callable[[bytes], bytes]] = {
    ".xz": lambda data: lzma.compress(data, format=lzma.FORMAT_XZ, check=lzma.CHECK_CRC64),
    ".lzma": lambda data: lzma.compress(data, format=lzma.FORMAT_ALONE),
    ".bz2": bz2.compress, ".bz": bz2.compress,
    ".gz": _gzip, ".z": _gzip,
    ".Z": lzw_compress,
    ".zst": lambda data: zstandard.ZstdCompressor(level=3).compress(data),
}
