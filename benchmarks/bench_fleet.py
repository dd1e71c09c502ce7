"""The kit against libpcp's tools on PCP's QA archives: the fleet, and its slowest ones.

    .venv/bin/python benchmarks/bench_fleet.py [--archives DIR] [--repeat 3] [--slowest 10]
                                               [--no-dump] [--only NAME...]

The fleet is every archive under ``--archives`` (default /var/lib/pcp/testsuite/archives,
Debian's pcp-testsuite) that libpcp reads: ``pmdumplog -L`` exits 0 on it. In one run, in
interleaved rounds (each command once per round, best of ``--repeat``), by CPU time of the
child (user + system) and wall clock, command start-up included:

* ``pcpconform check`` over the whole fleet (one command, every archive named) against
  ``pmlogcheck`` run on each archive (the sum);
* ``pcpconform dump --format text`` against ``pmdumplog -a`` over the fleet, both run on
  each archive (the sums);
* for each of the ``--slowest`` archives (by pmlogcheck's CPU time in a first pass), one
  ``check`` against one ``pmlogcheck`` and one ``dump`` against one ``pmdumplog -a``;
* the same two pairs on the uniform archive of bench_decode.py (``--uniform-mb``, 200 MB by
  default, generated once under build/bench/);
* ``interp --format csv`` and ``derive --config`` against ``pmrep`` (the same schedule and
  derived config) on bench_interp.py's archive (``--interp-mb``), as run_all.py runs them;
* start-up: the interpreter alone, and ``check`` and ``dump`` of an archive of three 4 KB
  results (numpy loaded for ``check``, as for any archive with a result of 1 KB or more).

Ratios are reference time / command time (higher is faster); the target is >= 1.0x. After
the table, each single-archive pair below 1.0x is split: the command's start-up, what is
left for reading the archive, and the ratio the command would reach if that were nothing
(the C tool's time over the start-up alone). Nothing is asserted; exit 2 without the
archives or the tools.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_decode import console_script  # noqa: E402  (the benchmarks' own)
from run_all import (  # noqa: E402
    Row,
    decode_archive,
    derive_rows,
    interp_archive,
    interp_rows,
    table,
    tool_version,
)

QA = Path("/var/lib/pcp/testsuite/archives")
_SUFFIXES = (".meta", ".meta.xz", ".meta.bz2", ".meta.gz", ".meta.zst", ".meta.lzma", ".meta.Z", ".meta.z")


def fleet(root: Path) -> list[Path]:
    """Every archive base under ``root`` that ``pmdumplog -L`` reads, in name order."""
    bases = sorted({Path(str(p)[:-len(s)]) for p in root.rglob("*.meta*") for s in _SUFFIXES
                    if str(p).endswith(s)})
    out = []
    for base in bases:
        done = subprocess.run(["pmdumplog", "-L", str(base)], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, check=False)
        if done.returncode == 0:
            out.append(base)
    return out


def cpu_of(argv: list[str]) -> float:
    """One run's CPU time (user + system of the child)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


class Each(Row):
    """A command run once per archive: its times are the sums over the archives."""

    def __init__(self, label: str, argv_of: list[str], bases: list[Path], reference: str | None = None,
                 target: str = "") -> None:
        super().__init__(label, [], reference, target)
        self.argv_of = argv_of
        self.bases = bases

    def run(self) -> None:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        began = time.perf_counter()
        for base in self.bases:
            subprocess.run([*self.argv_of, str(base)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           check=False)
        self.wall.append(time.perf_counter() - began)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        self.cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--archives", type=Path, default=QA)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--slowest", type=int, default=10)
    ap.add_argument("--no-dump", action="store_true", help="check rows only")
    ap.add_argument("--only", nargs="*", help="archives (base names under --archives) instead of the fleet")
    ap.add_argument("--uniform-mb", type=float, default=200, help="the uniform archive's size (0: none)")
    ap.add_argument("--interp-mb", type=float, default=20, help="the interp/derive archive's size (0: none)")
    ap.add_argument("--fetches", type=int, default=2000)
    args = ap.parse_args(argv)
    for tool in ("pmlogcheck", "pmdumplog"):
        if shutil.which(tool) is None:
            print(f"{tool} is not installed", file=sys.stderr)
            return 2
    if not args.archives.is_dir():
        print(f"{args.archives}: no such directory (Debian's pcp-testsuite)", file=sys.stderr)
        return 2
    kit = console_script()
    bases = [args.archives / n for n in args.only] if args.only else fleet(args.archives)
    size = sum(p.stat().st_size for b in bases for p in b.parent.glob(b.name + ".*"))
    by_cost = sorted(bases, key=lambda b: cpu_of(["pmlogcheck", str(b)]), reverse=True)
    slowest = by_cost[:args.slowest]
    rows: list[Row] = [
        Each("pmlogcheck, each archive", ["pmlogcheck"], bases),
        Row("pcpconform check, the fleet", [kit, "check", *map(str, bases)], "pmlogcheck, each archive",
            ">= 1.0x"),
    ]
    if not args.no_dump:
        rows += [Each("pmdumplog -a, each archive", ["pmdumplog", "-a"], bases),
                 Each("pcpconform dump --format text, each", [kit, "dump", "--format", "text"], bases,
                      "pmdumplog -a, each archive", ">= 1.0x")]
    singles = [(base.name, base) for base in slowest]
    if args.uniform_mb:
        singles.append((f"uniform {args.uniform_mb:g} MB", decode_archive(args.uniform_mb, 3)))
    for label, base in singles:
        rows += [Row(f"pmlogcheck {label}", ["pmlogcheck", str(base)]),
                 Row(f"check {label}", [kit, "check", str(base)], f"pmlogcheck {label}", ">= 1.0x")]
        if not args.no_dump:
            rows += [Row(f"pmdumplog -a {label}", ["pmdumplog", "-a", str(base)]),
                     Row(f"dump --format text {label}", [kit, "dump", "--format", "text", str(base)],
                         f"pmdumplog -a {label}", ">= 1.0x")]
    if args.interp_mb:
        replay = interp_archive(args.interp_mb)
        rows += [r for r in interp_rows(replay, args.fetches, kit) if r.call is None and "C interp" not in r.label]
        scratch = HERE.parent / "build" / "bench"
        scratch.mkdir(parents=True, exist_ok=True)
        for r in derive_rows(replay, args.fetches, scratch):
            r.target = r.target and ">= 1.0x"
            rows.append(r)
    small = decode_archive(0.02, 3)
    starts = {"check": Row("start-up: check, 3 results of 4 KB", [kit, "check", str(small)]),
              "dump": Row("start-up: dump, 3 results of 4 KB", [kit, "dump", "--format", "text", str(small)])}
    rows += [Row("start-up: the interpreter alone", [sys.executable, "-c", "pass"]), *starts.values()]
    for _ in range(args.repeat):
        for row in rows:
            row.run()
    load = os.getloadavg()[0]
    print(f"python {platform.python_version()}, {tool_version(['pmdumplog', '--version'])}, "
          f"{os.cpu_count()} CPUs, load {load:.1f}; best of {args.repeat}, interleaved; "
          f"{len(bases)} archives, {size / 1e6:.0f} MB on disk")
    print("\n".join(table(rows)))
    print("\n".join(below_target(rows, starts)))
    return 0


def below_target(rows: list[Row], starts: dict[str, Row]) -> list[str]:
    """Each single-archive command below 1.0x by CPU, split into its start-up and the rest,
    with the ratio it would have if the rest took no time."""
    best = {r.label: min(r.cpu) for r in rows if r.cpu and r.failed is None}
    lines = []
    for r in rows:
        verb = r.label.split()[0]
        start = best.get(starts[verb].label) if verb in starts else None
        if start is None or r.reference not in best or r.label not in best:
            continue
        ref, kit = best[r.reference], best[r.label]
        if ref >= kit:
            continue
        if not lines:
            lines.append("\nbelow 1.0x, by CPU: the C tool; the command = its start-up + the rest; "
                         "the ratio with the rest at 0 s")
        lines.append(f"  {r.label}: {ref:.3f} s; {kit:.3f} s = {start:.3f} s + {kit - start:.3f} s; "
                     f"at most {ref / start:.2f}x")
    return lines


if __name__ == "__main__":
    sys.exit(main())
