"""One interface for every fast path: a faster variant of a reference computation.

A fast path computes what its reference computes, on the inputs whose shape it recognises,
and declines every other input by raising ``Declined`` with a typed reason (a member of the
path's own reason enum). The caller then runs the reference, and the decline is counted in
the ``PathStats`` it passed in: nothing falls back silently, and nothing is counted in a
module global.

Every pair is registered here (``register``), with the family of inputs it reads
(``inputs``). One property test (tests/property/test_fast_paths.py) draws inputs of each
family and holds every registered fast path to its reference: the same answer, or a
decline with one of its reasons. A new fast path is one registration.
"""

from __future__ import annotations

import enum
import importlib
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Generic, TypeVar

__all__ = ["Declined", "PathStats", "FastPath", "register", "REGISTRY", "import_kernel"]

R = TypeVar("R")


class Declined(Exception):
    """A fast path does not answer this input; ``reason`` says why (a member of its
    reason enum)."""

    def __init__(self, reason: enum.Enum) -> None:
        super().__init__(reason.value)
        self.reason = reason


class PathStats:
    """What the fast paths did: per path, how many inputs each answered, and how many it
    declined, by reason. One object is passed to everything that takes a fast path."""

    __slots__ = ("answered", "declined")

    def __init__(self) -> None:
        self.answered: Counter[str] = Counter()
        self.declined: Counter[tuple[str, enum.Enum]] = Counter()

    def answer(self, path: str, count: int = 1) -> None:
        self.answered[path] += count

    def decline(self, path: str, reason: enum.Enum, count: int = 1) -> None:
        self.declined[(path, reason)] += count

    def reasons(self, path: str) -> Counter[enum.Enum]:
        """The declines of one path, by reason."""
        return Counter({reason: n for (name, reason), n in self.declined.items() if name == path})

    def paths(self) -> Iterator[str]:
        """Every path that answered or declined anything."""
        yield from dict.fromkeys([*self.answered, *(name for name, _ in self.declined)])

    def update(self, other: PathStats) -> None:
        self.answered.update(other.answered)
        self.declined.update(other.declined)

    def clear(self) -> None:
        self.answered.clear()
        self.declined.clear()

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, PathStats) and +self.answered == +other.answered
                and +self.declined == +other.declined)

    def __repr__(self) -> str:
        return f"PathStats(answered={dict(self.answered)}, declined={dict(self.declined)})"


@dataclass(frozen=True, eq=False)
class FastPath(Generic[R]):
    """A registered pair: ``fast`` answers as ``reference`` does or raises ``Declined``
    with a member of one of ``reasons``; ``inputs`` names the family of inputs both take
    (the equality test draws from it); ``same`` compares two answers (default ``==``)."""

    name: str
    reference: Callable[..., R]
    fast: Callable[..., R]
    reasons: tuple[type[enum.Enum], ...]
    inputs: str
    same: Callable[[R, R], bool] | None = None

    def __call__(self, stats: PathStats, *args: Any) -> R:
        """The fast path's answer, or the reference's where it declines (counted)."""
        try:
            answer = self.fast(*args)
        except Declined as declined:
            stats.declined[(self.name, declined.reason)] += 1
            return self.reference(*args)
        stats.answered[self.name] += 1
        return answer


#: every registered pair by name
REGISTRY: dict[str, FastPath[Any]] = {}


def register(name: str, *, reference: Callable[..., R], fast: Callable[..., R],
             reasons: type[enum.Enum] | tuple[type[enum.Enum], ...], inputs: str,
             same: Callable[[R, R], bool] | None = None) -> FastPath[R]:
    """Register a (reference, fast) pair under ``name`` and return it; ``reasons`` is the
    fast path's reason enum (or the enums, when it declines for the paths it is made of)."""
    if name in REGISTRY:
        raise ValueError(f"fast path {name!r} is registered twice")
    path = FastPath(name, reference, fast, reasons if isinstance(reasons, tuple) else (reasons,),
                    inputs, same)
    REGISTRY[name] = path
    return path


def import_kernel(module: str) -> tuple[ModuleType | None, str | None]:
    """A compiled kernel, and why it is missing (None when it imports): a source tree
    without its build step has none, and the fast paths over it decline, counted."""
    try:
        return importlib.import_module(module), None
    except ImportError as exc:
        return None, str(exc)
