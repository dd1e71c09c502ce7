"""Validation speed: ``pcpconform check`` against ``pmlogcheck`` on the same archive.

Uses the archive of bench_decode.py (generated once, cached under build/bench/), then times,
in interleaved rounds, ``pmlogcheck BASE``, ``pcpconform check BASE`` (a subprocess, so
Python start-up counts), the same command on the bundled one-result example (its start-up
alone) and ``check_archive(BASE)`` in-process, and prints MB/s for each and the ratio to
pmlogcheck, by wall clock and by CPU time (the steadier figure on a shared machine), and how
many results the validator checked on learned shapes (check/columns.py) and why the others
went the reference path. Timings are printed, never asserted.

    .venv/bin/python benchmarks/bench_check.py [--size-mb 20] [--version 2|3] [--repeat 3]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_decode import (
    MB,
    ROOT,
    Case,
    _subprocess_case,
    console_script,
    generate,
    load_cached,
    measure,
)

from pcpconform.check.engine import check_archive

STARTUP = "  its start-up (1-result archive)"
#: the in-process run's results by path (check/columns.py's Fallback reasons)
PATHS: dict[str, int] = {}


def in_process(base: Path) -> None:
    report = check_archive(base)
    if report.errors:
        raise RuntimeError(f"{report.errors} errors in the benchmark archive")
    PATHS["columns"] = PATHS.get("columns", 0) + report.paths.answered["check.columns"]
    for reason, count in report.paths.reasons("check.columns").items():
        PATHS[reason.value] = PATHS.get(reason.value, 0) + count


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size-mb", type=float, default=20.0)
    ap.add_argument("--version", type=int, choices=(2, 3), default=3)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("-j", "--jobs", type=int, default=2, help="processes to generate the archive")
    args = ap.parse_args(argv)
    size_key = f"{args.size_mb:g}".replace(".", "p")
    base = ROOT / "build" / "bench" / f"bench-{size_key}mb-v{args.version}" / "bench"
    arch = load_cached(base) or generate(base, args.version, args.size_mb, args.jobs)
    cli = console_script()
    example = ROOT / "corpus" / "cases" / "valid" / f"example-v{args.version}" / "a"
    cases = [
        Case("pmlogcheck", _subprocess_case(["pmlogcheck", str(base)]), reference=True),
        Case("pcpconform check", _subprocess_case([cli, "check", "--quiet", str(base)])),
        Case(STARTUP, _subprocess_case([cli, "check", "--quiet", str(example)])),
        Case("check_archive() in-process", lambda: in_process(base)),
    ]
    for part in ("meta", "index", "0"):
        Path(f"{base}.{part}").read_bytes()
    measure(cases, max(1, args.repeat))
    size = arch.size_bytes / MB
    ref = min(cases[0].times) if cases[0].times else None
    ref_cpu = min(cases[0].cpu) if cases[0].cpu else None
    print(f"\narchive {base} (v{arch.version}): {size:.2f} MB, {arch.results} results, "
          f"{arch.values} values; best of {args.repeat}; ratio = pmlogcheck's time / the row's "
          "(above 1: faster than pmlogcheck)\n")
    print(f"{'command':<34} {'seconds':>8} {'cpu s':>7} {'MB/s':>8}  {'vs pmlogcheck':>13} {'by cpu':>8}")
    for c in cases:
        if c.error or not c.times:
            print(f"{c.label:<34} {'FAILED':>8}  {c.error}")
            continue
        best, cpu = min(c.times), min(c.cpu)
        if c.label == STARTUP:     # checks almost nothing: its time is the command's floor
            print(f"{c.label:<34} {best:8.2f} {cpu:7.2f} {'-':>8}  {'-':>13} {'-':>8}")
            continue
        rel = "(reference)" if c.reference else (f"{ref / best:.2f}x" if ref else "n/a")
        rel_cpu = "" if c.reference else (f"{ref_cpu / cpu:.2f}x" if ref_cpu and cpu else "n/a")
        print(f"{c.label:<34} {best:8.2f} {cpu:7.2f} {size / best:8.2f}  {rel:>13} {rel_cpu:>8}")
    fallbacks = ", ".join(f"{k} {v}" for k, v in sorted(PATHS.items()) if k != "columns") or "none"
    print(f"\nresults checked on columns: {PATHS.get('columns', 0)}; on the reference path: {fallbacks}")
    return 1 if any(c.error for c in cases) else 0


if __name__ == "__main__":
    sys.exit(main())
