#!/usr/bin/env python3
"""Derived metrics: ``pmrep`` with ``PCP_DERIVED_CONFIG`` against ``pcpconform derive`` with
the same config file, on the ``bench_interp.py`` archive and schedule.

Run from the project root::

    .venv/bin/python benchmarks/bench_derive.py [--size-mb 20] [--fetches 2000] [--repeat 3]
        [--baseline DIR]

Both replay the derived metrics of ``DERIVED_CONFIG`` (sums of counters and of instants,
ratios, a scaled double, over instance domains and singular metrics: expressions the
``pcp-6.0`` profile and libpcp 6.0.3 agree on) at ``--fetches`` fetches spread over the
archive, raw values (``pmrep -r``), CSV to /dev/null, ``--rules pcp-6.0`` as the host's
libpcp. Rounds are interleaved, best of ``--repeat``; wall clock and CPU (user + system of
the child) are reported, and the ratio pmrep / derive (higher is faster; the target is
>= 1.0x). Nothing is asserted; exit status 1 if a command fails.

``--baseline DIR`` adds a third command: the same ``derive`` run from another source tree
of the project (e.g. ``git archive REV | tar -x -C DIR``), interleaved with the other two,
so that before and after are measured side by side in one run.

``measure()`` returns the timings for other scripts (``run_all.py``).
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

import bench_decode  # noqa: E402  (the benchmarks' own modules)
import bench_interp  # noqa: E402

#: derived metrics over the bench_interp archive that the pcp-6.0 profile and libpcp 6.0.3
#: agree on
DERIVED_CONFIG = """\
bench.disk.bytes = disk.dev.read_bytes + disk.dev.write_bytes
bench.disk.ops = disk.dev.read + disk.dev.write
bench.net.bytes = network.interface.in.bytes + network.interface.out.bytes
bench.cpu.busy = kernel.percpu.cpu.user + kernel.percpu.cpu.sys
bench.cpu.busy_frac = kernel.percpu.cpu.busy_pct / 100
bench.mem.total = mem.util.used + mem.util.free
bench.mem.used_frac = mem.util.used / (mem.util.used + mem.util.free)
bench.all.ctx = kernel.all.intr + kernel.all.pswitch
"""
NAMES = [line.split("=", 1)[0].strip() for line in DERIVED_CONFIG.splitlines()]
PMREP = "pmrep -r -o csv, derived"
DERIVE = "pcpconform derive --format csv"


def archive(size_mb: float = 20) -> Path:
    """The bench_interp archive, generated once into build/bench/ (as run_all.py does)."""
    base = ROOT / "build" / "bench" / f"interp-{size_mb:g}mb-v3" / "bench"
    if bench_interp.load_cached(base) is None:
        base.parent.mkdir(parents=True, exist_ok=True)
        bench_interp.generate(base, 3, size_mb, os.cpu_count() or 1)
    return base


BASELINE = "baseline derive --format csv"
#: the pcpconform command from whatever source tree PYTHONPATH names first
_FROM_PATH = "import sys; from pcpconform.cli import main; sys.exit(main())"


def commands(base: Path, fetches: int, config: Path,
             baseline: Path | None = None) -> dict[str, tuple[list[str], dict[str, str]]]:
    a, start, delta, _ = bench_interp.schedule(base, fetches)
    tool = bench_decode.console_script()
    when = f"{start.sec}.{start.nsec:09d}"
    args = ["derive", str(base), "--config", str(config), "--rules", "pcp-6.0", "--start", when,
            "--interval", f"{delta / 1e9:.9f}", "--samples", str(fetches), "--format", "csv"]
    runs = {
        PMREP: (bench_interp.pmrep_argv(base, NAMES, start, delta, fetches, a.start),
                {**os.environ, "PCP_DERIVED_CONFIG": str(config)}),
        DERIVE: ([tool, *args], dict(os.environ)),
    }
    if baseline is not None:
        runs[BASELINE] = ([sys.executable, "-P", "-c", _FROM_PATH, *args],   # -P: not the cwd first
                          {**os.environ, "PYTHONPATH": str(baseline.resolve())})
    return runs


def _run(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall, CPU) seconds of one run; RuntimeError with the last error line if it fails."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.perf_counter()
    done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                          check=False, env=env)
    wall = time.perf_counter() - began
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise RuntimeError((done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1])
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def measure(base: Path | None = None, fetches: int = 2000, repeat: int = 3,
            baseline: Path | None = None) -> dict[str, tuple[float, float]]:
    """Best (wall, CPU) seconds per command over ``repeat`` interleaved rounds."""
    base = archive() if base is None else base
    with tempfile.TemporaryDirectory() as scratch:
        config = Path(scratch) / "bench.derived"
        config.write_text(DERIVED_CONFIG)
        runs = commands(base, fetches, config, baseline)
        times: dict[str, list[tuple[float, float]]] = {label: [] for label in runs}
        for _ in range(repeat):
            for label, (argv, env) in runs.items():
                times[label].append(_run(argv, env))
    return {label: (min(w for w, _ in got), min(c for _, c in got)) for label, got in times.items()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size-mb", type=float, default=20)
    ap.add_argument("--fetches", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--baseline", type=Path, metavar="DIR",
                    help="also run derive from this source tree of the project")
    args = ap.parse_args(argv)
    if args.baseline is not None and not (args.baseline / "pcpconform" / "cli").is_dir():
        print(f"--baseline {args.baseline}: not a source tree of pcpconform", file=sys.stderr)
        return 2
    try:
        got = measure(archive(args.size_mb), args.fetches, args.repeat, args.baseline)
    except RuntimeError as exc:
        print(f"FAILED: {exc}", file=sys.stderr)
        return 1
    print(f"best of {args.repeat}, {args.fetches} fetches, {len(NAMES)} derived metrics")
    print(f"{'command':34} {'wall s':>7} {'cpu s':>7} {'wall x':>7} {'cpu x':>7}  target")
    ref_wall, ref_cpu = got[PMREP]
    for label, (wall, cpu) in got.items():
        ratio = "" if label == PMREP else f"{ref_wall / wall:6.2f}x {ref_cpu / cpu:6.2f}x  >= 1.0x"
        print(f"{label:34} {wall:7.2f} {cpu:7.2f} {ratio}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
