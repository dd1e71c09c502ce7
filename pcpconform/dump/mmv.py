"""Dump an MMV file: the JSON Lines form of spec/dump-mmv-jsonl.md, or an mmvdump-style listing.

A damaged file is dumped as far as it can be read; then its first error is raised as a
FormatError (exit status 1 on the command line), after everything readable was written.
"""

from __future__ import annotations

import gc
from pathlib import Path
from typing import Any, TextIO

from pcpconform.dump.mmv_jsonl import iter_mmv_lines, write_mmv_jsonl
from pcpconform.dump.mmv_text import write_mmv_text
from pcpconform.errors import FormatError, Location, UsageError
from pcpconform.fastpath import PathStats
from pcpconform.mmv.schema import MMV_MAGIC

__all__ = ["dump_mmv", "dump_mmv_bytes", "is_mmv", "FORMATS"]

FORMATS = ("jsonl", "text")


def is_mmv(path: str | Path) -> bool:
    """True when the file at path starts with the MMV magic "MMV\\0" (False when unreadable:
    the caller's own open then reports why)."""
    try:
        with open(path, "rb") as f:
            return f.read(4) == MMV_MAGIC
    except OSError:
        return False


def dump_mmv_bytes(data: bytes, file_name: str, out: TextIO, fmt: str = "jsonl",
                   stats: PathStats | None = None) -> list[dict[str, Any]]:
    """Dump MMV bytes of a file called file_name; returns the problems found (also dumped);
    ``stats`` counts what the value kernel did."""
    if fmt not in FORMATS:
        raise UsageError(f"unknown dump format {fmt!r}: choose jsonl or text")
    records, problems = iter_mmv_lines(data, file_name, stats=stats)   # streamed: problems fill up
    # as in parse_mmv: a file at the limits makes 10^4 tuples and lists at once (entries,
    # names, columns), which the cyclic collector would scan over and over; they hold no
    # cycles, and each is freed by its count as the dump streams on
    enabled = gc.isenabled()
    gc.disable()
    try:
        if fmt == "jsonl":
            write_mmv_jsonl(records, out)
        else:
            write_mmv_text(records, out)
    finally:
        if enabled:
            gc.enable()
    return problems


def dump_mmv(path: str | Path, out: TextIO, fmt: str = "jsonl", stats: PathStats | None = None) -> None:
    """Dump the MMV file at path to out; raise FormatError for its first error, if any,
    once everything readable is written."""
    problems = dump_mmv_bytes(Path(path).read_bytes(), Path(path).name, out, fmt, stats)
    errors = [p for p in problems if p["severity"] == "error"]   # a warning is no bad file
    if errors:
        first = errors[0]
        more = f" (and {len(errors) - 1} more errors)" if len(errors) > 1 else ""
        raise FormatError(first["message"] + more,
                          Location(str(path), first["index"], first["offset"], first["field"]),
                          first["code"])
