#!/usr/bin/env python3
"""Many archives: ``pcpconform check -j 2 DIR`` against ``-j 1`` on a directory of 200.

Run from the project root::

    .venv/bin/python benchmarks/bench_check_many.py [--count 200] [--repeat 3]

The directory (``build/bench/many-COUNT-SIZES/``) holds COUNT archives, each in a directory of its
own: half are pmlogger-like archives of 2 to 16 MB made by ``bench_decode.generate`` (eight
distinct ones, v2 and v3, each hard-linked as often as needed: the check reads every byte of
every link; ``--sizes`` chooses others), half are the corpus's archives and MMV files, valid and invalid, taken in turn.
Each round runs ``pcpconform check -q -j 1 DIR`` and ``-j 2 DIR`` side by side (interleaved,
output to /dev/null, the same bytes checked); the table shows the best wall clock of
``--repeat`` rounds, the CPU seconds of each (user + system of the command and its worker
processes), and the speed-up ``-j 1 / -j 2``. The outputs are compared too: ``-j 2`` must
print what ``-j 1`` prints. Nothing is asserted about time.

Also importable: ``measure(count, repeat)`` returns ``(j1_seconds, j2_seconds, cpu)`` with
``cpu`` = {"j1": CPU seconds, "j2": CPU seconds, "startup_j1": ..., "startup_j2": ...,
"machine_scaling": ...}. The machine's scaling is measured in the same rounds: two pure-CPU
loops at once against one (2.0 on two idle CPUs; on a shared machine the ceiling for ``-j 2``).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

import bench_decode  # noqa: E402  (the benchmarks' own module)

#: the generated archives' sizes in MB (each in version 3 and 2): hard-linked in turn into
#: half the directory
SIZES = (2.0, 4.0, 8.0, 16.0)
#: bump when the directory's content changes, so a stale one is rebuilt
LAYOUT_VERSION = 3


def _corpus_targets() -> list[Path]:
    """Every corpus case's files (archive components or the MMV file), valid and invalid."""
    cases = ROOT / "corpus" / "cases"
    return sorted(d for kind in ("valid", "invalid") for d in (cases / kind).iterdir() if d.is_dir())


def _link_tree(source_dir: Path, into: Path, names: list[str] | None = None) -> None:
    into.mkdir(parents=True, exist_ok=True)
    for src in sorted(source_dir.iterdir()):
        if src.is_file() and src.name != "case.json" and (names is None or src.name in names):
            os.link(src, into / src.name)


def build_directory(count: int, sizes: tuple[float, ...] = SIZES) -> Path:
    """``build/bench/many-COUNT-SIZES/``, made once: COUNT archives (and MMV files), one per
    directory."""
    where = ROOT / "build" / "bench" / f"many-{count}-{'-'.join(f'{mb:g}' for mb in sizes)}"
    stamp = where / ".layout"
    if stamp.is_file() and stamp.read_text() == str(LAYOUT_VERSION):
        return where
    shutil.rmtree(where, ignore_errors=True)
    sources = []
    for size, version in ((mb, v) for mb in sizes for v in (3, 2)):
        base = ROOT / "build" / "bench" / f"bench-{size:g}mb-v{version}".replace(".", "p") / "bench"
        if bench_decode.load_cached(base) is None:
            base.parent.mkdir(parents=True, exist_ok=True)
            bench_decode.generate(base, version, size, 1)
        sources.append(base)
    corpus = _corpus_targets()
    for k in range(count):
        into = where / f"{k:04d}"
        if k % 2 == 0:
            base = sources[(k // 2) % len(sources)]
            _link_tree(base.parent, into, [f"{base.name}.{part}" for part in ("0", "meta", "index")])
        else:
            _link_tree(corpus[(k // 2) % len(corpus)], into)
    stamp.write_text(str(LAYOUT_VERSION))
    return where


def _children_cpu() -> float:
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return kids.ru_utime + kids.ru_stime


def _run(argv: list[str]) -> tuple[float, float, bytes]:
    """Wall clock and CPU seconds of one command (its workers included), and its output."""
    cpu0, began = _children_cpu(), time.perf_counter()
    done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, check=False)
    took, cpu = time.perf_counter() - began, _children_cpu() - cpu0
    if done.returncode not in (0, 1):      # 1: the corpus's invalid archives
        err = done.stderr.decode(errors="replace").strip().splitlines()
        raise RuntimeError(f"{' '.join(argv)}: exit {done.returncode}: {err[-1] if err else ''}")
    return took, cpu, done.stdout


#: a pure-CPU loop of about half a second: the machine's own scaling, for comparison
_SPIN = [sys.executable, "-c", "x = 0\nfor i in range(12_000_000): x += i"]


def _spin(copies: int) -> float:
    """Wall clock of ``copies`` CPU loops run at once."""
    began = time.perf_counter()
    procs = [subprocess.Popen(_SPIN) for _ in range(copies)]
    for proc in procs:
        proc.wait()
    return time.perf_counter() - began


def measure(count: int = 200, repeat: int = 3, sizes: tuple[float, ...] = SIZES, *, verbose: bool = True
            ) -> tuple[float, float, dict[str, float]]:
    """Best wall clock of ``-j 1`` and ``-j 2`` over the directory, and the CPU seconds
    (the best round's of each; start-up: one tiny archive with one and with two jobs)."""
    where = build_directory(count, sizes)
    cli = bench_decode.console_script()
    tiny, other = (str(t) for t in _corpus_targets()[:2])
    commands = {
        "j1": [cli, "check", "-q", "-j", "1", str(where)],
        "j2": [cli, "check", "-q", "-j", "2", str(where)],
        "startup_j1": [cli, "check", "-q", "-j", "1", tiny],
        "startup_j2": [cli, "check", "-q", "-j", "2", tiny, other],
    }
    best: dict[str, tuple[float, float]] = {}
    outputs: dict[str, str] = {}
    spins: dict[int, float] = {}
    for rnd in range(repeat):           # interleaved: a slow spell hits both alike
        for copies in (1, 2):
            spins[copies] = min(spins.get(copies, float("inf")), _spin(copies))
        for name, argv in commands.items():
            took, cpu, out = _run(argv)
            outputs.setdefault(name, hashlib.sha256(out).hexdigest())
            if name not in best or took < best[name][0]:
                best[name] = (took, cpu)
            if verbose:
                print(f"  round {rnd + 1}/{repeat} {name}: {took:.2f} s (cpu {cpu:.2f} s)", file=sys.stderr)
    if outputs["j1"] != outputs["j2"]:
        raise RuntimeError("check -j 2 printed something else than -j 1")
    cpu = {name: seconds for name, (_took, seconds) in best.items()}
    cpu.update({f"{name}_wall": took for name, (took, _cpu) in best.items() if name.startswith("startup")})
    # 2.0 on two idle CPUs; less when other work shares them
    cpu["machine_scaling"] = 2 * spins[1] / spins[2]
    return best["j1"][0], best["j2"][0], cpu


def projected(cpu: dict[str, float]) -> float:
    """The speed-up the CPU seconds allow on two CPUs nobody else uses: -j 1 runs at one
    CPU; -j 2 runs its start-up alone, then its checking on both."""
    start = cpu["startup_j2"]
    return cpu["j1"] / (start + (cpu["j2"] - start) / 2)


def _size(where: Path) -> float:
    return sum(p.stat().st_size for p in where.rglob("*") if p.is_file()) / bench_decode.MB


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--count", type=int, default=200, help="archives in the directory (default 200)")
    ap.add_argument("--repeat", type=int, default=3, help="rounds; the best is shown (default 3)")
    ap.add_argument("--sizes", type=lambda t: tuple(float(x) for x in t.split(",")), default=SIZES,
                    metavar="MB,MB...", help=f"the generated archives' sizes (default {','.join(map(str, SIZES))})")
    args = ap.parse_args(argv)
    j1, j2, cpu = measure(args.count, max(1, args.repeat), args.sizes)
    where = build_directory(args.count, args.sizes)
    print(f"\n{args.count} archives and MMV files in {where}: {_size(where):.1f} MB; "
          f"best of {args.repeat} interleaved rounds; {os.cpu_count()} CPUs, load "
          f"{os.getloadavg()[0]:.2f}\n")
    print(f"{'command':<28} {'seconds':>8} {'cpu s':>7}")
    print(f"{'check -q -j 1 DIR':<28} {j1:8.2f} {cpu['j1']:7.2f}")
    print(f"{'check -q -j 2 DIR':<28} {j2:8.2f} {cpu['j2']:7.2f}")
    print(f"{'start-up, -j 1':<28} {cpu['startup_j1_wall']:8.2f} {cpu['startup_j1']:7.2f}")
    print(f"{'start-up, -j 2':<28} {cpu['startup_j2_wall']:8.2f} {cpu['startup_j2']:7.2f}")
    print(f"\nspeed-up -j 2 / -j 1: {j1 / j2:.2f}x (target 1.8x); CPU -j 2 / -j 1: {cpu['j2'] / cpu['j1']:.2f}")
    print(f"the machine's own: two CPU loops at once do {cpu['machine_scaling']:.2f}x the work of one "
          f"in the same time (2.00 on two idle CPUs)")
    print(f"on two idle CPUs, from the CPU seconds (start-up serial, the rest halved): "
          f"{projected(cpu):.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
