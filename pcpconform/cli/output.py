"""Where a command writes: a file named by ``-o`` or standard output."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import TextIO

__all__ = ["opened_output", "write_texts"]

#: characters gathered before one write: few calls into the text layer, a bounded buffer
BATCH = 1 << 16


@contextmanager
def opened_output(path: str | None) -> Iterator[TextIO]:
    """The file ``path`` opened for writing text, or standard output when ``path`` is None."""
    if not path:
        yield sys.stdout
        return
    with open(path, "w", encoding="utf-8") as out:
        yield out


def write_texts(out: TextIO, texts: Iterable[str]) -> None:
    """Write ``texts`` in order, gathered into writes of about ``BATCH`` characters."""
    parts: list[str] = []
    size = 0
    for text in texts:
        parts.append(text)
        size += len(text)
        if size >= BATCH:
            out.write("".join(parts))
            parts.clear()
            size = 0
    if parts:
        out.write("".join(parts))
