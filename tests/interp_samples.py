"""Interp samples as comparable values, for the interp property tests: a value's identity
is its type and, for floats, its bits (so 0.0 and -0.0, or two NaNs of different payloads,
differ)."""

from __future__ import annotations

import struct
from typing import Any

from pcpconform.oracles.interp.model import NoValue, Sample

__all__ = ["exact", "view"]


def exact(v: Any) -> Any:
    """A value's identity for comparison: its type and, for floats, its bits."""
    if isinstance(v, float):
        return (type(v).__name__, struct.pack("<d", v), getattr(v, "bits", None))
    if isinstance(v, NoValue):
        return ("NoValue", v.reason)
    return (type(v).__name__, v)


def view(samples: list[Sample]) -> list[Any]:
    """Samples as (time, eol, [(pmid, [(inst, exact value)])]) for comparison."""
    return [(s.time, s.eol, [(p, [(i, exact(v)) for i, v in insts.items()])
                             for p, insts in s.values.items()]) for s in samples]
