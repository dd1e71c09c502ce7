"""What CI refuses: a missing or wrong referee, and a differential test that skips.

Kept apart from the conftest hooks that apply them, so tests/unit/test_ci_guards.py can show
each guard fires.
"""

from __future__ import annotations

from collections.abc import Iterable

from tests.differential.libpcp.referees import Referee

__all__ = ["referee_problems", "skip_is_failure"]


def referee_problems(referees: Iterable[Referee]) -> list[str]:
    """Why the differential suite cannot run as CI requires: one line per referee that is
    missing or is not the PCP version it stands for."""
    problems = []
    for ref in referees:
        if not ref.available():
            problems.append(f"{ref.name}: {ref.why_missing()}")
        elif not ref.version.startswith(ref.version_prefix):
            problems.append(f"{ref.name}: found PCP {ref.version}, expected {ref.version_prefix}x")
    return problems


def skip_is_failure(path: str, *, ci: bool) -> bool:
    """Whether a skipped test at ``path`` must count as failed: in CI, every differential one."""
    return ci and "tests/differential/" in path.replace("\\", "/")
