#!/usr/bin/env python3
"""Every speed ratio of issue 14 in one table: the kit's commands against libpcp's tools on
the same files, timed side by side.

Run from the project root (after ``bash tools/setup.sh``; PCP's tools on PATH)::

    .venv/bin/python benchmarks/run_all.py [--repeat 3] [--size-mb 20] [--fetches 2000]

Archives come from ``bench_decode.py`` (dump, rebuild, check of version 3 and 2) and
``bench_interp.py`` (interp, derive), cached under ``build/bench/``. The in-process
interpolation replay is compared with libpcp's in C (``benchmarks/c/interp_loop.c``, built
with ``cc ... -lpcp``: without a compiler or libpcp3-dev the script says so and exits 2),
``derive`` with ``pmrep`` given the same ``PCP_DERIVED_CONFIG``, ``check -j 2`` with
``check -j 1`` over ``bench_check_many.py``'s directory of ``--many`` archives. Before
timing, the replay is verified against the C program's and derive's values against
pmrep's, so that both sides do the same work. Rounds are interleaved (each command once per
round), so a slow spell on a shared machine hits every command alike; each row shows the
best wall-clock and CPU (user + system of the child) time of ``--repeat`` runs, the
reference it is compared with, the speed ratio (reference time / command time, higher is
faster) by wall clock and by CPU, and the issue's target. Start-up (interpreter and the
command's imports) is measured on its own. Nothing is asserted; exit status 1 when a
command fails. Peak memory is ``bench_memory.py``'s job.
"""

from __future__ import annotations

import argparse
import csv
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

import bench_decode  # noqa: E402  (the benchmarks' own modules)
import bench_derive  # noqa: E402
import bench_interp  # noqa: E402


@dataclass
class Row:
    label: str
    argv: list[str] | None = None          # a command, timed as a child process
    reference: str | None = None         # the label of the row it is compared with
    target: str = ""                     # the target, as text
    call: Callable[[], None] | None = None  # or a call timed in this process
    env: dict[str, str] | None = None    # the command's environment, if not this one's
    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    failed: str | None = None

    def run(self) -> None:
        if self.call is not None:
            self._run_call(self.call)
            return
        assert self.argv is not None
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        began = time.perf_counter()
        done = subprocess.run(self.argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              text=True, check=False, env=self.env)
        took = time.perf_counter() - began
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if done.returncode not in (0, 1):     # check exits 1 when it finds problems
            self.failed = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]
            return
        self.wall.append(took)
        self.cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)

    def _run_call(self, call: Callable[[], None]) -> None:
        cpu0 = time.process_time()
        began = time.perf_counter()
        try:
            call()
        except Exception as exc:  # report it in the table, never as a fast time
            self.failed = f"{type(exc).__name__}: {exc}"
            return
        self.wall.append(time.perf_counter() - began)
        self.cpu.append(time.process_time() - cpu0)


def tool_version(argv: list[str]) -> str:
    try:
        out = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=30)
    except OSError:
        return "missing"
    return (out.stdout or out.stderr).strip().splitlines()[0] if (out.stdout or out.stderr) else "?"


def interp_rows(base: Path, fetches: int, tool: str) -> list[Row]:
    """pmrep against ``interp --format csv``, and libpcp's replay in C against the oracle's
    in-process (``Archive`` + ``Replay`` + ``schedule``, no output), on one schedule."""
    from pcpconform.io.archive import Archive
    from pcpconform.oracles.interp.replay import Replay

    archive, start, delta, _ = bench_interp.schedule(base, fetches)
    descs = archive.descs()
    names = [d.names[0] for d in descs]
    pmids = [int(d.pmid) for d in descs]
    when = f"{start.sec}.{start.nsec:09d}"

    def replay() -> None:
        Replay(Archive(base), pmids, rules="pcp-6.0").schedule(start, delta, fetches)

    binary = bench_interp.build_c_loop()
    return [
        Row("pmrep -r -o csv", bench_interp.pmrep_argv(base, names, start, delta, fetches,
                                                       archive.start)),
        Row("pcpconform interp --format csv",
            [tool, "interp", str(base), *names, "--rules", "pcp-6.0", "--start", when,
             "--interval", f"{delta / 1e9:.9f}", "--samples", str(fetches), "--format", "csv"],
            "pmrep -r -o csv", ">= 1.0x"),
        Row("C interp_loop (pmFetchHighRes)",
            bench_interp.c_loop_argv(binary, base, pmids, start, delta, fetches)),
        Row("interp in-process (Replay, no output)", call=replay,
            reference="C interp_loop (pmFetchHighRes)", target=">= 0.33x (within 3x)"),
    ]


def derive_rows(base: Path, fetches: int, scratch: Path) -> list[Row]:
    """pmrep with PCP_DERIVED_CONFIG against ``derive --config`` with the same file
    (bench_derive.py's config and commands) on the interp schedule: raw values, CSV,
    pcp-6.0 rules as the host's libpcp."""
    config = scratch / "bench.derived"
    config.write_text(bench_derive.DERIVED_CONFIG)
    runs = bench_derive.commands(base, fetches, config)
    (pmrep, pmrep_env), (derive, derive_env) = runs[bench_derive.PMREP], runs[bench_derive.DERIVE]
    return [Row(bench_derive.PMREP, pmrep, env=pmrep_env),
            Row(bench_derive.DERIVE, derive, bench_derive.PMREP, ">= 1.0x",
                env=derive_env)]


def verify_interp(base: Path, fetches: int, count: int = 10) -> list[str]:
    """The oracle's replay against interp_loop's: value by value at 2 x ``count`` fetches,
    at every fetch by checksum (bench_interp.verify); the differences."""
    from pcpconform.io.archive import Archive
    from pcpconform.oracles.interp.replay import Replay

    archive, start, delta, _ = bench_interp.schedule(base, fetches)
    pmids = [int(d.pmid) for d in archive.descs()]
    samples = Replay(Archive(base), pmids, rules="pcp-6.0").schedule(start, delta, fetches)
    return bench_interp.verify(bench_interp.build_c_loop(), base, pmids, samples, start, delta,
                               fetches, count)[2]


def derive_columns(pmrep_row: Row, derive_row: Row) -> tuple[dict[str, int], dict[str, int]]:
    """Values per (metric, instance) in pmrep's CSV and in derive's: equal when both
    evaluated the same metrics over the same schedule."""
    assert pmrep_row.argv is not None and derive_row.argv is not None
    outs = [subprocess.run(r.argv, capture_output=True, text=True, check=True, env=r.env).stdout
            for r in (pmrep_row, derive_row)]
    theirs: dict[str, int] = {}
    pm = list(csv.reader(outs[0].splitlines()))
    for row in pm[1:]:
        for name, cell in zip(pm[0][1:], row[1:]):
            theirs[name] = theirs.get(name, 0) + (cell != "")
    ours: dict[str, int] = {}
    for rec in csv.DictReader(outs[1].splitlines()):
        name = f"{rec['metric']}-{rec['instance']}" if rec["instance"] else rec["metric"]
        ours[name] = ours.get(name, 0) + (rec["value"] != "")
    return theirs, ours


def check_rows(base: Path, version: int, tool: str) -> list[Row]:
    ref = f"pmlogcheck v{version}"
    return [Row(ref, ["pmlogcheck", str(base)]),
            Row(f"pcpconform check v{version}", [tool, "check", "--quiet", str(base)], ref, "")]


def check_many_rows(tool: str, count: int) -> list[Row]:
    """``check -j 2`` against ``-j 1`` over bench_check_many.py's directory of ``count``
    archives and MMV files (none when that module is not there or ``count`` is 0)."""
    try:
        import bench_check_many
    except ImportError:
        print("run_all: no benchmarks/bench_check_many.py, no check -j rows", file=sys.stderr)
        return []
    if count <= 0:
        return []
    where = bench_check_many.build_directory(count)
    j1 = f"pcpconform check -j 1, {count} files"
    return [Row(j1, [tool, "check", "-q", "-j", "1", str(where)]),
            Row(f"pcpconform check -j 2, {count} files", [tool, "check", "-q", "-j", "2", str(where)],
                j1, ">= 1.8x")]


def decode_archive(size_mb: float, version: int) -> Path:
    base = ROOT / "build" / "bench" / f"bench-{size_mb:g}mb-v{version}" / "bench"
    if bench_decode.load_cached(base) is None:
        print(f"generating {base} ...", file=sys.stderr)
        bench_decode.generate(base, version, size_mb, os.cpu_count() or 1)
    return base


def interp_archive(size_mb: float) -> Path:
    base = ROOT / "build" / "bench" / f"interp-{size_mb:g}mb-v3" / "bench"
    if bench_interp.load_cached(base) is None:
        print(f"generating {base} ...", file=sys.stderr)
        bench_interp.generate(base, 3, size_mb, os.cpu_count() or 1)
    return base


def table(rows: list[Row]) -> list[str]:
    """The table's lines: best wall and CPU time of each row, and for a row with a
    reference the speed ratios (reference time / row time, higher is faster)."""
    best = {r.label: (min(r.wall), min(r.cpu)) for r in rows if r.wall and r.failed is None}
    width = max([38, *(len(r.label) for r in rows)])
    lines = [f"{'command':{width}} {'wall s':>7} {'cpu s':>7} {'vs':32} {'wall x':>7} {'cpu x':>7}  target"]
    for r in rows:
        if r.failed is not None or r.label not in best:
            lines.append(f"{r.label:{width}} FAILED: {r.failed}")
            continue
        wall, cpu = best[r.label]
        ratio = ""
        if r.reference in best:
            ref_wall, ref_cpu = best[r.reference]
            ratio = f"{ref_wall / wall:6.2f}x {ref_cpu / cpu if cpu else 0:6.2f}x"
        lines.append(f"{r.label:{width}} {wall:7.2f} {cpu:7.2f} {r.reference or '(reference)':32} "
                     f"{ratio:15}  {r.target}".rstrip())
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--size-mb", type=float, default=20.0)
    ap.add_argument("--fetches", type=int, default=2000)
    ap.add_argument("--many", type=int, default=200,
                    help="archives for the check -j rows (bench_check_many.py; 0: none)")
    args = ap.parse_args(argv)
    try:
        bench_interp.build_c_loop()
    except bench_interp.CBuildError as exc:
        print(f"run_all: cannot build the C reference: {exc}", file=sys.stderr)
        return 2
    tool = bench_decode.console_script()
    base = decode_archive(args.size_mb, 3)
    base_v2 = decode_archive(args.size_mb, 2)
    interp_base = interp_archive(args.size_mb)
    scratch = Path(tempfile.mkdtemp(prefix="pcpconform-run-all-"))
    try:
        interp = interp_rows(interp_base, args.fetches, tool)
        rows = [
            Row("pmdumplog -a", ["pmdumplog", "-a", str(base)]),
            Row("pcpconform dump --format jsonl", [tool, "dump", "--format", "jsonl", str(base)],
                "pmdumplog -a", ">= 1.0x"),
            Row("pcpconform dump --format text", [tool, "dump", str(base)], "pmdumplog -a", ">= 1.0x"),
            Row("pcpconform rebuild", [tool, "rebuild", "-q", str(base), str(scratch / "again")],
                "pcpconform dump --format jsonl", ">= 0.67x (within 1.5x)"),
            *check_rows(base, 3, tool),
            *check_rows(base_v2, 2, tool),
            *check_many_rows(tool, args.many),
            *interp,
            *derive_rows(interp_base, args.fetches, scratch),
            Row("start-up: pcpconform --version", [tool, "--version"]),
            Row("start-up: import pcpconform.cli.dump",
                [sys.executable, "-c", "import pcpconform.cli.dump"]),
        ]
        same_work = verify_interp(interp_base, args.fetches)
        pmrep_derived, derived = (next(r for r in rows if r.label == label)
                                  for label in (bench_derive.PMREP, bench_derive.DERIVE))
        theirs, ours = derive_columns(pmrep_derived, derived)
        if theirs != ours:
            same_work.append(f"derive: values per column differ: pmrep {sorted(theirs.items())[:3]} "
                             f"derive {sorted(ours.items())[:3]}")
        for diff in same_work:
            print(f"NOT THE SAME WORK: {diff}")
        if not same_work:
            print(f"verified: the oracle's replay == interp_loop.c's (libpcp); derive and pmrep "
                  f"give {sum(ours.values())} values in the same {len(ours)} columns", file=sys.stderr)
        for _ in range(args.repeat):
            for row in rows:
                if row.failed is None:
                    row.run()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print(f"python {platform.python_version()}, {tool_version(['pmdumplog', '--version'])}, "
          f"{tool_version([tool, '--version'])}, {os.cpu_count()} CPUs, load "
          f"{os.getloadavg()[0]:.1f}; best of {args.repeat}, {args.size_mb:g} MB archives, "
          f"{args.fetches} fetches")
    print("\n".join(table(rows)))
    return 1 if same_work or any(r.failed for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
