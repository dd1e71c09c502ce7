"""The fault cases: what one is, the registry the cases_* modules add to, and the codes
no case can cover.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pcpconform.corpusgen.invalid.edit import ArchiveEdit

#: Error codes that no edit of an archive's bytes can produce, and why.
UNCOVERED: dict[str, str] = {
    "check.internal": "reported only when the checker itself fails; no archive is meant to cause it",
    "file.too-large": "needs a version 2 .meta or data volume holding more than 2 GiB of "
                      "well-framed records (zero padding ends the records instead); even "
                      "compressed, checking it means decoding 2 GiB, too slow for this corpus",
}

Mutation = Callable[[ArchiveEdit], None]


@dataclass
class Case:
    """One fault: applied to each listed version of the source archive."""

    name: str
    fault: str
    expect: list[str] | dict[int, list[str]]
    mutate: Mutation
    versions: tuple[int, ...] = (2, 3)
    source: str = "example"
    options: dict[str, Any] = field(default_factory=dict)

    def expected(self, version: int) -> list[str]:
        return list(self.expect[version] if isinstance(self.expect, dict) else self.expect)


CASES: list[Case] = []


def case(name: str, fault: str, expect: list[str] | dict[int, list[str]], *,
         versions: tuple[int, ...] = (2, 3), source: str = "example",
         options: dict[str, Any] | None = None) -> Callable[[Mutation], Mutation]:
    def register(fn: Mutation) -> Mutation:
        CASES.append(Case(name, fault, expect, fn, versions, source, options or {}))
        return fn
    return register
