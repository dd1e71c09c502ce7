"""Bytes as the dumps' ASCII text (DUMP-ESC-1): a module of its own, so that the MMV dump does
not import the archive readers to escape a name."""

from __future__ import annotations

__all__ = ["escape_bytes", "PLAIN"]

#: the bytes escape_bytes keeps as they are
PLAIN = bytes(b for b in range(0x20, 0x7F) if b != 0x5C)


def escape_bytes(data: bytes) -> str:
    """Bytes as text: 0x20-0x7E (but backslash) as themselves, all else as ``\\xHH``."""
    if not data.translate(None, PLAIN):        # nothing to escape: the common case, in C
        return data.decode("ascii")
    return "".join(chr(b) if 0x20 <= b < 0x7F and b != 0x5C else f"\\x{b:02x}" for b in data)
