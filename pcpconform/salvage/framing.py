"""Framing with resynchronisation: the records of a damaged .meta file or data volume.

A record is taken where it frames (a leading length of at least the smallest record, the
same length in its trailing word, inside the file) and either decodes as its kind of record
or is followed by a record that frames, or by the end of the file (SALVAGE-FRAME-1). Where
framing breaks, the bytes from the break are skipped up to the next offset where a record
is *proven by its own framing*: both length words agree, its content decodes cleanly and
plausibly (``proven``), and either its content is rich enough to rule out an accident
(``strong``) or the next record frames and decodes too, or the file ends there
(SALVAGE-FRAME-2). Nothing is guessed: if no such record follows, the rest of the file is
reported lost. Candidates are found by scanning every byte offset (records after inserted
bytes are no longer aligned) a window at a time with numpy, so a long run of garbage or of
zeros costs little.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from pcpconform.salvage.sources import Source

__all__ = ["Frame", "Gap", "frames"]

_WINDOW = 1 << 20


@dataclass(frozen=True)
class Frame:
    """A framed record: ``data`` holds its length words and payload."""

    offset: int
    data: bytes
    decoded: Any = None     # what ``decode`` made of it (None: it does not decode)
    #: (check code, detail) when the record's own framing was repaired (SALVAGE-FRAME-5)
    repaired: tuple[str, str] | None = None


@dataclass(frozen=True)
class Gap:
    """Bytes ``[start, end)`` that hold no record salvage can prove; ``code`` is the
    validator's rule for the defect found at ``start``."""

    start: int
    end: int
    code: str
    detail: str


class _Framer:
    def __init__(self, source: Source, *, min_len: int, aligned: bool, stray_below: int,
                 decode: Callable[[bytes], Any], proven: Callable[[Any], bool],
                 strong: Callable[[Any], bool]) -> None:
        self.src = source
        self.strong = strong
        self.min_len = min_len
        self.aligned = aligned
        self.stray_below = stray_below
        self.decode = decode
        self.proven = proven

    def proven_at(self, pos: int, length: int, alone: bool = False) -> bool:
        """A record at ``pos`` decodes cleanly (and, with ``alone``, strongly enough to stand
        without the record after it)."""
        decoded = self.decode(self.src.read(pos, length))
        return decoded is not None and self.proven(decoded) and (not alone or self.strong(decoded))

    def framed(self, pos: int) -> tuple[str, str] | None:
        """None where a record frames at ``pos``, else the defect (code, detail)."""
        size = self.src.size
        length = self.src.word(pos)
        if length is None:
            return "frame.truncated", f"{size - pos} stray bytes (a cut length word)"
        if length < self.min_len:
            return "frame.length", f"record length {length} is less than {self.min_len}"
        if pos + length > size:
            return "frame.truncated", f"record length {length}, but the file has {size - pos} bytes left"
        trailer = self.src.word(pos + length - 4)
        if trailer != length:
            return "frame.trailer", f"trailing length {trailer} differs from the leading {length}"
        return None

    def trailer_only(self, pos: int) -> tuple[bytes, Any] | None:
        """A record whose trailing length alone is damaged: its leading length leads to a
        proven record (or the end of the file) and its content decodes cleanly. Its bytes
        with the trailing length repaired, and what they decode to; else None."""
        length = self.src.word(pos)
        assert length is not None
        if self.aligned and length % 4:
            return None
        data = self.src.read(pos, length - 4) + length.to_bytes(4, "big")
        decoded = self.decode(data)
        if decoded is None or not self.proven(decoded) or not self._ends_well(pos + length, depth=0):
            return None
        return data, decoded

    def _ends_well(self, pos: int, depth: int = 1) -> bool:
        """The file ends at ``pos`` (or only stray bytes follow), or a record is proven there."""
        left = self.src.size - pos
        if left < self.stray_below or left == 0:
            return True
        if self.framed(pos) is not None:
            return False
        length = self.src.word(pos)
        assert length is not None
        return self.proven_at(pos, length) and (depth <= 0 or self._ends_well(pos + length, depth - 1))

    def candidate(self, pos: int) -> bool:
        """A record at ``pos`` proven by its own framing and content, and by what follows."""
        if self.framed(pos) is not None:
            return False
        length = self.src.word(pos)
        assert length is not None
        if self.aligned and length % 4:
            return False
        return self.proven_at(pos, length, alone=True) or (
            self.proven_at(pos, length) and self._ends_well(pos + length, depth=0))

    def resync(self, start: int) -> int | None:
        """The first offset from ``start`` where a proven record begins."""
        size = self.src.size
        at = start
        while at + self.min_len <= size:
            buf = self.src.read(at, _WINDOW + 3)
            if len(buf) < 4:
                return None
            raw = np.frombuffer(buf, dtype=np.uint8).astype(np.int64)
            words = raw[:-3] << 24 | raw[1:-2] << 16 | raw[2:-1] << 8 | raw[3:]
            room = size - (at + np.arange(len(words), dtype=np.int64))
            mask = (words >= self.min_len) & (words <= room)
            if self.aligned:
                mask &= (words & 3) == 0
            for k in np.flatnonzero(mask):
                pos = at + int(k)
                if self.candidate(pos):
                    return pos
            at += len(words)
        return None


def frames(source: Source, start: int, *, min_len: int, aligned: bool, stray_below: int,
           decode: Callable[[bytes], Any], proven: Callable[[Any], bool],
           undecodable: str, strong: Callable[[Any], bool] = lambda decoded: False) -> Iterator[Frame | Gap]:
    """The records of ``source`` from ``start``, and the gaps between them.

    ``decode(data)``: the record decoded as its kind (it may still hold bad values), or
    None; ``proven(decoded)``: it decodes cleanly and plausibly, enough to resynchronise on;
    ``undecodable``: the rule code of a record that frames but is not taken; ``strong(decoded)``:
    a proven record whose content alone rules out an accident (a result with values: every
    one described, stored as its type, its blocks tiling it), which needs no record after it
    to be taken (a mark or a help text does)."""
    framer = _Framer(source, min_len=min_len, aligned=aligned, stray_below=stray_below,
                     decode=decode, proven=proven, strong=strong)
    size = source.size
    pos = start
    while pos < size:
        if size - pos < stray_below:
            yield Gap(pos, size, "frame.stray-bytes", f"{size - pos} bytes after the last whole record")
            return
        defect = framer.framed(pos)
        if defect is None:
            length = source.word(pos)
            assert length is not None
            data = source.read(pos, length)
            decoded = decode(data)
            if decoded is not None or framer._ends_well(pos + length, depth=0):
                yield Frame(pos, data, decoded)
                pos += length
                continue
            defect = (undecodable, f"a record of {length} bytes frames, but neither it nor what follows "
                                   "it decodes")
        elif defect[0] == "frame.trailer":
            fixed = framer.trailer_only(pos)
            if fixed is not None:
                yield Frame(pos, fixed[0], fixed[1], (defect[0], f"{defect[1]}: the record decodes cleanly and "
                                                                 "the next one is proven where its leading length "
                                                                 "says; its trailing length is repaired"))
                pos += len(fixed[0])
                continue
        found = framer.resync(pos + 1)
        yield Gap(pos, size if found is None else found, *defect)
        if found is None:
            return
        pos = found
