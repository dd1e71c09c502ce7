"""Interesting values for a field, chosen from its type and meaning."""

from __future__ import annotations

import random
from collections.abc import Sequence

__all__ = ["boundaries", "field_values", "extreme_bytes"]

_INT_EDGES = (0, 1, 2, 3, 4, 7, 8, 0x7F, 0x80, 0xFF, 0x100, 0x7FFF, 0x8000, 0xFFFF, 0x10000,
              0x7FFFFFFF, -0x80000000, -1, -2, 0xFFFFFFFF, 0x80000000)


def boundaries(value: int) -> list[int]:
    """Boundary values of an integer field: its neighbours and the edges of 8, 16 and 32 bits."""
    return [value + 1, value - 1, value * 2, -value, *_INT_EDGES]


#: meaning-specific values by field name (PCP's own names as the schemas spell them)
_BY_NAME: dict[str, tuple[int, ...]] = {
    "type": tuple(range(-2, 12)) + (0x7FFFFFFF, 0xFFFF),   # PM_TYPE_* and beyond; meta tags 1..7
    "sem": (0, 1, 2, 3, 4, 5, -1),
    "valfmt": (0, 1, 2, 3, 0xFF, -1),
    "vtype": tuple(range(0, 12)) + (0xFF,),
    "flags": (0, 1, 2, 4, 8, 16, 0x40, 0x80, 0xFF),
    "vol": (-3, -2, -1, 0, 1, 2, 99, 0x7FFFFFFF),
    "nsec": (999_999_999, 1_000_000_000, -1, 0x7FFFFFFF),
    "usec": (999_999, 1_000_000, -1),
}


def field_values(name: str, value: int, related: Sequence[int], rng: random.Random) -> list[int]:
    """Candidate values for an integer field, most meaningful first, shuffled within kinds:
    values of the same field elsewhere in the file (a pmID, indom or instance known to the
    metadata: breaks relations without breaking framing), the field's own meanings, then
    type boundaries."""
    own = list(_BY_NAME.get(name, ()))
    others = [v for v in related if v != value]
    edges = boundaries(value)
    for group in (own, others, edges):
        rng.shuffle(group)
    return [*others[:4], *own, *edges]


#: the longest string a mutation makes (longer only costs more to write, run and judge)
_LONGEST = 1 << 20


def extreme_bytes(data: bytes, rng: random.Random) -> bytes:
    """Valid-looking but extreme content for a byte string: empty, very long (names past
    PCP's MAXPATHLEN), no terminator, bytes that are not UTF-8, JSON that is not JSON."""
    choice = rng.randrange(8)
    if choice == 0:
        return b""
    if choice == 1:
        return (data * rng.choice((2, 16, 256)))[:_LONGEST] if data else b"x" * 300
    if choice == 2:
        return b"m" * rng.choice((255, 256, 1023, 4095, 4096, 4097, 5000, 65535))
    if choice == 3:
        return data.rstrip(b"\x00") + b"\xff\xfe"
    if choice == 4:
        return data.replace(b"\x00", b"x")
    if choice == 5:
        return b"{" * rng.choice((1, 64, 4096))
    if choice == 6:
        return data[: rng.randrange(len(data) + 1)]
    return bytes(rng.randrange(256) for _ in range(rng.choice((1, 7, 31))))
