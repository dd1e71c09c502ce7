#!/usr/bin/env python3
"""Every speed ratio of issue 14 in one table: the kit's commands against libpcp's tools on
the same files, timed side by side.

Run from the project root (after ``bash tools/setup.sh``; PCP's tools on PATH)::

    .venv/bin/python benchmarks/run_all.py [--repeat 3] [--size-mb 20] [--fetches 2000]

Archives come from ``bench_decode.py`` (dump, rebuild, check) and ``bench_interp.py``
(interp), cached under ``build/bench/``. Rounds are interleaved (each command once per
round), so a slow spell on a shared machine hits every command alike; each row shows the
best wall-clock and CPU (user + system of the child) time of ``--repeat`` runs, the
reference it is compared with, the speed ratio (reference time / command time, higher is
faster) by wall clock and by CPU, and the issue's target. Start-up (interpreter and the
command's imports) is measured on its own. Nothing is asserted; exit status 1 when a
command fails. Peak memory is ``bench_memory.py``'s job.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

import bench_decode  # noqa: E402  (the benchmarks' own modules)
import bench_interp  # noqa: E402


@dataclass
class Row:
    label: str
    argv: list[str]
    reference: str | None = None         # the label of the row it is compared with
    target: str = ""                     # the target, as text
    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    failed: str | None = None

    def run(self) -> None:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        began = time.perf_counter()
        done = subprocess.run(self.argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              text=True, check=False)
        took = time.perf_counter() - began
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if done.returncode not in (0, 1):     # check exits 1 when it finds problems
            self.failed = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]
            return
        self.wall.append(took)
        self.cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)


def tool_version(argv: list[str]) -> str:
    try:
        out = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=30)
    except OSError:
        return "missing"
    return (out.stdout or out.stderr).strip().splitlines()[0] if (out.stdout or out.stderr) else "?"


def console_script() -> str:
    here = Path(sys.executable).parent / "pcpconform"
    return str(here) if here.exists() else (shutil.which("pcpconform") or "pcpconform")


def interp_rows(size_mb: float, fetches: int, tool: str) -> list[Row]:
    base = ROOT / "build" / "bench" / f"interp-{size_mb:g}mb-v3" / "bench"
    if bench_interp.load_cached(base) is None:
        print(f"generating {base} ...", file=sys.stderr)
        bench_interp.generate(base, 3, size_mb, os.cpu_count() or 1)
    archive, start, delta, _ = bench_interp.schedule(base, fetches)
    names = [d.names[0] for d in archive.descs()]
    when = f"{start.sec}.{start.nsec:09d}"
    return [
        Row("pmrep -r -o csv", bench_interp.pmrep_argv(base, names, start, delta, fetches,
                                                       archive.start)),
        Row("pcpconform interp --format csv",
            [tool, "interp", str(base), *names, "--rules", "pcp-6.0", "--start", when,
             "--interval", f"{delta / 1e9:.9f}", "--samples", str(fetches), "--format", "csv"],
            "pmrep -r -o csv", ">= 1.0x"),
    ]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--size-mb", type=float, default=20.0)
    ap.add_argument("--fetches", type=int, default=2000)
    args = ap.parse_args(argv)
    tool = console_script()
    base = ROOT / "build" / "bench" / f"bench-{args.size_mb:g}mb-v3" / "bench"
    if bench_decode.load_cached(base) is None:
        print(f"generating {base} ...", file=sys.stderr)
        bench_decode.generate(base, 3, args.size_mb, os.cpu_count() or 1)
    scratch = Path(tempfile.mkdtemp(prefix="pcpconform-run-all-"))
    rows = [
        Row("pmdumplog -a", ["pmdumplog", "-a", str(base)]),
        Row("pcpconform dump --format jsonl", [tool, "dump", "--format", "jsonl", str(base)],
            "pmdumplog -a", ">= 1.0x"),
        Row("pcpconform dump --format text", [tool, "dump", str(base)], "pmdumplog -a", ">= 1.0x"),
        Row("pcpconform rebuild", [tool, "rebuild", "-q", str(base), str(scratch / "again")],
            "pcpconform dump --format jsonl", ">= 0.67x (within 1.5x)"),
        Row("pmlogcheck", ["pmlogcheck", str(base)]),
        Row("pcpconform check", [tool, "check", "--quiet", str(base)], "pmlogcheck", ""),
        *interp_rows(args.size_mb, args.fetches, tool),
        Row("start-up: pcpconform --version", [tool, "--version"]),
        Row("start-up: import pcpconform.cli.dump",
            [sys.executable, "-c", "import pcpconform.cli.dump"]),
    ]
    try:
        for _ in range(args.repeat):
            for row in rows:
                if row.failed is None:
                    row.run()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    best = {r.label: (min(r.wall), min(r.cpu)) for r in rows if r.wall and r.failed is None}
    print(f"python {platform.python_version()}, {tool_version(['pmdumplog', '--version'])}, "
          f"{tool_version([tool, '--version'])}, {os.cpu_count()} CPUs, load "
          f"{os.getloadavg()[0]:.1f}; best of {args.repeat}, {args.size_mb:g} MB archives")
    print(f"{'command':38} {'wall s':>7} {'cpu s':>7} {'vs':32} {'wall x':>7} {'cpu x':>7}  target")
    for r in rows:
        if r.failed is not None or r.label not in best:
            print(f"{r.label:38} FAILED: {r.failed}")
            continue
        wall, cpu = best[r.label]
        ratio = ""
        if r.reference in best:
            ref_wall, ref_cpu = best[r.reference]
            ratio = f"{ref_wall / wall:6.2f}x {ref_cpu / cpu if cpu else 0:6.2f}x"
        print(f"{r.label:38} {wall:7.2f} {cpu:7.2f} {r.reference or '(reference)':32} "
              f"{ratio:15}  {r.target}")
    return 1 if any(r.failed for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
