"""Where a command writes: a file named by ``-o`` or standard output."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

__all__ = ["opened_output"]


@contextmanager
def opened_output(path: str | None) -> Iterator[TextIO]:
    """The file ``path`` opened for writing text, or standard output when ``path`` is None."""
    if not path:
        yield sys.stdout
        return
    with open(path, "w", encoding="utf-8") as out:
        yield out
