"""What an implementation under test must leave alone (CONF-ISO-1): its input files, the
directory around its work directory, and the corpus case it was given."""

from __future__ import annotations

import contextlib
import hashlib
import os
from pathlib import Path

__all__ = ["WORK_DIR", "digest", "input_digests", "stat_tree", "isolation_problem"]

#: the name of a unit's private directory, inside a directory of its own (CONF-RUN-1)
WORK_DIR = "work"


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def input_digests(work: Path) -> dict[str, str]:
    return {p.relative_to(work).as_posix(): digest(p) for p in sorted(work.rglob("*")) if p.is_file()}


def stat_tree(root: Path) -> dict[str, tuple[int, int]]:
    out = {}
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            with contextlib.suppress(OSError):
                st = os.stat(os.path.join(dirpath, name))
                out[os.path.join(dirpath, name)] = (st.st_size, st.st_mtime_ns)
    return out


def isolation_problem(case_path: Path, home: Path, work: Path, before: dict[str, str],
               case_stat: dict[str, tuple[int, int]]) -> str | None:
    """What the implementation changed that it must not have (CONF-ISO-1), or None."""
    changed = [n for n, d in before.items() if not (work / n).is_file() or digest(work / n) != d]
    if changed:
        return f"it changed or removed its input file {', '.join(changed)}"
    beside = sorted(p.name for p in home.iterdir() if p.name != WORK_DIR)
    if beside:
        return f"it wrote outside its directory: {', '.join(beside)}"
    now = stat_tree(case_path)
    if now != case_stat:
        touched = sorted(set(now.items()) ^ set(case_stat.items()))
        return f"it changed the corpus: {touched[0][0]}"
    return None
