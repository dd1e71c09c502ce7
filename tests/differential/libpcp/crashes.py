"""Which inputs kill a libpcp process, found by bisection.

A referee's script handles many independent inputs in one process; when libpcp kills that
process (a signal: abort, segmentation fault, SIGFPE), ``isolate`` re-runs halves of the
batch until each crash is pinned to the input (or the smallest group of inputs) that
causes it, so that only those are left out of a comparison. What is left out is decided by
what libpcp did in this run, never by a label the code under test puts on the input.
"""

from __future__ import annotations

import signal
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from tests.differential.libpcp.referees import LibpcpError

__all__ = ["Crash", "isolate", "signal_name"]

T = TypeVar("T")
R = TypeVar("R")


@dataclass(frozen=True)
class Crash(Generic[T]):
    """Inputs that, run together (one input when it alone suffices), kill libpcp."""

    items: tuple[T, ...]
    returncode: int                  # -N: killed by signal N
    stderr: str

    @property
    def signal(self) -> str:
        return signal_name(self.returncode)


def signal_name(returncode: int) -> str:
    try:
        return signal.Signals(-returncode).name
    except ValueError:
        return f"signal {-returncode}"


def _try(run: Callable[[list[T]], R], items: list[T]) -> tuple[R | None, LibpcpError | None]:
    try:
        return run(items), None
    except LibpcpError as exc:
        if exc.returncode >= 0:          # a failure of the script, not a crash of libpcp
            raise
        return None, exc


def isolate(run: Callable[[list[T]], R], items: Sequence[T],
            max_rounds: int = 4) -> tuple[R, list[T], list[Crash[T]]]:
    """``run(items)`` with the inputs that kill libpcp taken out.

    Returns the answer for the surviving inputs, those inputs, and the crashes (each with
    the inputs that cause it). A crash that needs several inputs together is reported with
    all of them. Raises the last LibpcpError if crashes remain after ``max_rounds``."""
    alive = list(items)
    crashes: list[Crash[T]] = []
    for _ in range(max_rounds):
        answer, error = _try(run, alive)
        if error is None:
            assert answer is not None
            return answer, alive, crashes
        found = _bisect(run, alive, error)
        crashes += found
        dead = [x for c in found for x in c.items]
        alive = [x for x in alive if x not in dead]
    answer, error = _try(run, alive)
    if error is not None:
        raise error
    assert answer is not None
    return answer, alive, crashes


def _bisect(run: Callable[[list[T]], R], items: list[T], error: LibpcpError) -> list[Crash[T]]:
    """The crashes among ``items``, known to crash together with ``error``."""
    if len(items) == 1:
        return [Crash((items[0],), error.returncode, error.stderr)]
    half = len(items) // 2
    found: list[Crash[T]] = []
    for part in (items[:half], items[half:]):
        _, err = _try(run, part)
        if err is not None:
            found += _bisect(run, part, err)
    if not found:                         # only the inputs together crash libpcp
        return [Crash(tuple(items), error.returncode, error.stderr)]
    return found
