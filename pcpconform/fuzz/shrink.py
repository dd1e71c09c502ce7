"""Delta debugging of a finding to a minimal reproducer that keeps its signature: whole
files first, then records (ddmin over each file's records), then value sets inside results,
then bytes (ddmin over chunks, and cutting each file's tail)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from pcpconform.fuzz.archive_edit import editor

__all__ = ["shrink_files", "ddmin"]

Files = dict[str, bytes]
Still = Callable[[Files], bool]
T = TypeVar("T")


class _Budget:
    def __init__(self, runs: int) -> None:
        self.left = runs

    def spend(self) -> bool:
        self.left -= 1
        return self.left >= 0


def ddmin(items: Sequence[T], keeps: Callable[[list[T]], bool], budget: _Budget) -> list[T]:
    """Zeller's ddmin: a 1-minimal sublist of ``items`` for which ``keeps`` holds."""
    current = list(items)
    n = 2
    while len(current) >= 2 and budget.left > 0:
        size = max(1, len(current) // n)
        chunks = [current[i:i + size] for i in range(0, len(current), size)]
        reduced = False
        for k in range(len(chunks)):
            rest = [x for j, c in enumerate(chunks) if j != k for x in c]
            if not budget.spend():
                return current
            if keeps(rest):
                current, n, reduced = rest, max(n - 1, 2), True
                break
        if not reduced:
            if n >= len(current):
                break
            n = min(len(current), n * 2)
    return current


def shrink_files(files: Files, still: Still, kind: str = "archive", runs: int = 400) -> Files:
    """The smallest variant of ``files`` found for which ``still`` (same signature) holds,
    within ``runs`` runs of the target."""
    budget = _Budget(runs)
    current = dict(files)
    if kind == "archive":
        current = _drop_files(current, still, budget)
        for part in sorted(current, key=lambda p: (p != "meta", p)):
            current = _shrink_records(current, part, still, budget)
        current = _shrink_vsets(current, still, budget)
    for name in sorted(current):
        current = _shrink_bytes(current, name, still, budget, whole=kind != "archive")
    return current


def _drop_files(files: Files, still: Still, budget: _Budget) -> Files:
    for name in sorted(files, key=lambda p: (p in ("meta", "0"), p)):
        if len(files) < 2 or not budget.spend():
            break
        trial = {k: v for k, v in files.items() if k != name}
        if still(trial):
            files = trial
    return files


def _shrink_records(files: Files, part: str, still: Still, budget: _Budget) -> Files:
    if part not in files or not (part == "meta" or part.isdigit()):
        return files
    try:
        ed = editor(files)
        recs = ed.records(part)
    except Exception:
        return files
    if not recs:
        return files
    data = files[part]
    head = data[:recs[0][0]]
    tail = data[recs[-1][0] + recs[-1][1]:]
    chunks = [data[o:o + n] for o, n in recs]

    def build(kept: list[bytes]) -> Files:
        return {**files, part: head + b"".join(kept) + tail}

    kept = ddmin(chunks, lambda sub: still(build(sub)), budget)
    return build(kept)


def _shrink_vsets(files: Files, still: Still, budget: _Budget) -> Files:
    """Value sets removed from results one at a time (rebuilt by the schema, framing kept)."""
    for part in sorted(p for p in files if p.isdigit()):
        try:
            count = len(editor(files).records(part))
        except Exception:
            continue
        for i in range(1, count + 1):
            k = 0
            while budget.left > 0:
                try:
                    ed = editor(files)
                    res = ed.result(i, part)
                    if k >= len(res.vsets):
                        break
                    del res.vsets[k]
                    ed.put_result(i, res, part)
                except Exception:
                    break
                trial = {n: bytes(v) for n, v in ed.files.items()}
                budget.spend()
                if still(trial):
                    files = trial
                else:
                    k += 1
    return files


def _shrink_bytes(files: Files, name: str, still: Still, budget: _Budget, whole: bool) -> Files:
    data = files[name]
    # the tail first: binary search for the shortest prefix that keeps the signature
    lo, hi = 0, len(data)
    while lo < hi and budget.left > 0:
        mid = (lo + hi) // 2
        budget.spend()
        if still({**files, name: data[:mid]}):
            hi = mid
        else:
            lo = mid + 1
    files = {**files, name: data[:hi]}
    if whole and len(files[name]) <= 4096:
        step = 8 if len(files[name]) > 512 else 1
        chunks = [files[name][i:i + step] for i in range(0, len(files[name]), step)]
        kept = ddmin(chunks, lambda sub: still({**files, name: b"".join(sub)}), budget)
        files = {**files, name: b"".join(kept)}
    return files
