#!/usr/bin/env python3
"""A week of daily archives replayed as one set: ``pcpconform interp DIR`` against
``pmrep -a DIR``, side by side, and peak memory as members are added.

Run from the project root::

    .venv/bin/python benchmarks/bench_sets.py [--members 7] [--size-mb 20] [--fetches 2000] [--repeat 3]

The set is ``--members`` archives of ``--size-mb`` MB each, in one directory as pmlogger
leaves a host's days (``20231114.00.10`` ...), written with ``bench_interp``'s generator
(45 metrics, 245 metric-instances, a result every 10 s, a mark and a 30-minute gap every
2500 results) and cached under ``build/bench/``; each member continues where the one before
ends. Every metric is replayed on one forward schedule of ``--fetches`` fetches over the
whole week (crossing every seam), with the ``pcp-6.0`` rules (the host's libpcp 6.0.3):

* ``pcpconform interp DIR ... --format csv -o /dev/null``, the whole process;
* ``pmrep -a DIR -r -o csv`` over the same metrics and schedule, the whole process, CSV to
  /dev/null: the ratio printed is pmrep's time over the kit's (target at least 1.0x);
* the C reference ``benchmarks/c/interp_loop.c`` (libpcp's PM_MODE_INTERP in C) on the
  directory, which also checks the kit's values first, value by value at a subset of the
  fetches and at all of them by checksum (exit status 1 if they differ).

Memory: the kit's peak resident set (the child's ``ru_maxrss``) replaying the first member,
the first three, and all of them, each over its own span at the same fetch density; flat
means it does not grow with the number of members. Timings are reported, never asserted.
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

import bench_interp  # noqa: E402
from bench_memory import peak_rss_mb  # noqa: E402

GENERATOR_VERSION = 1


def generate_member(base: Path, version: int, first: int, count: int, jobs: int) -> None:
    """Results ``first`` .. ``first + count - 1`` of bench_interp's series as one archive."""
    from concurrent.futures import ProcessPoolExecutor

    from pcpconform.fixtures.generate import mark_time
    from pcpconform.io.writer import ArchiveWriter, LabelFields, layout_result

    w = ArchiveWriter(base, version)
    t0 = bench_interp.result_time(first)
    w.start(LabelFields(hostname="interp01.example.com", timezone="UTC", start=t0, pid=4242 + first,
                        zoneinfo=":UTC" if version == 3 else ""))
    at_label = w.meta_offset()
    for pmid, ptype, indom, sem, units, name, _ in bench_interp._metrics():
        w.put_desc(pmid, ptype, indom, sem, units, [name])
    for indom, insts in bench_interp._indoms():
        w.put_indom(t0, indom, insts)
    w.put_index(t0, off_meta=at_label)
    flush = w.data_offset() + bench_interp.INDEX_EVERY
    last = t0
    stop = first + count
    chunks = [(a, min(a + bench_interp.CHUNK, stop)) for a in range(first, stop, bench_interp.CHUNK)]
    with ProcessPoolExecutor(max_workers=max(jobs, 1)) as pool:
        for (a, _), records in zip(chunks, pool.map(bench_interp.build_chunk, [version] * len(chunks),
                                                    *zip(*chunks))):
            for k, record in enumerate(records, a):
                if k > first and k % bench_interp.SEGMENT == 0:
                    w.put_result_bytes(w.encode_result(layout_result(version, mark_time(last, version), [])))
                stamp = bench_interp.result_time(k)
                if w.data_offset() + len(record) > flush:
                    w.put_index(stamp)
                    flush = w.data_offset() + bench_interp.INDEX_EVERY
                w.put_result_bytes(record)
                last = stamp
    w.put_index(last)
    w.close()


def build_set(directory: Path, members: int, size_mb: float, version: int, jobs: int) -> list[Path]:
    """The set's members (cached: a manifest records what was generated)."""
    from bench_decode import MB

    from pcpconform.dump.text import when_text

    manifest = directory / "manifest.json"
    want = {"generator": GENERATOR_VERSION, "members": members, "size_mb": size_mb, "version": version}
    per_record = sum(map(len, bench_interp.build_chunk(version, 0, bench_interp.DISCRETE_EVERY))) \
        / bench_interp.DISCRETE_EVERY
    n = max(int(size_mb * MB / per_record), 2)
    names = []
    for d in range(members):
        stamp = when_text(bench_interp.result_time(d * n))
        names.append(directory / (stamp[:10].replace("-", "") + f".00.{d:02d}"))
    try:
        if json.loads(manifest.read_text()) == want and all(Path(f"{b}.0").exists() for b in names):
            print(f"using cached {directory}", file=sys.stderr)
            return names
    except (OSError, ValueError):
        pass
    directory.mkdir(parents=True, exist_ok=True)
    for f in directory.iterdir():
        f.unlink()
    for d, base in enumerate(names):
        began = time.perf_counter()
        generate_member(base, version, d * n, n, jobs)
        print(f"  generated {base.name}: {n} results in {time.perf_counter() - began:.1f} s", file=sys.stderr)
    manifest.write_text(json.dumps(want) + "\n")
    return names


def child_run(argv: list[str]) -> tuple[float, float, int, int]:
    """Run ``argv``: (wall s, cpu s, peak RSS KiB of any child so far, exit status)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    with open(os.devnull, "wb") as null:
        proc = subprocess.run(argv, stdout=null, stderr=subprocess.PIPE, check=False)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr.decode(errors="replace")[-500:])
    return wall, cpu, after.ru_maxrss, proc.returncode


def kit_argv(source: str, names: list[str], start: object, delta: int, count: int) -> list[str]:
    return [str(Path(sys.executable).with_name("pcpconform")), "interp", source, *names, "--rules", "pcp-6.0",
            "--start", f"{start}", "--interval", f"{delta / 1e9:.9f}sec", "--samples", str(count),
            "--format", "csv", "-o", os.devnull]


def main(argv: list[str] | None = None) -> int:
    import argparse

    from pcpconform.format.pmtypes import Timestamp
    from pcpconform.io.archiveset import ArchiveSet
    from pcpconform.oracles.interp.setreplay import open_set_replay

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--members", type=int, default=7)
    ap.add_argument("--size-mb", type=float, default=20.0, help="each member's size (default 20 MB)")
    ap.add_argument("--version", type=int, choices=(2, 3), default=3)
    ap.add_argument("--fetches", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--verify", type=int, default=50, help="fetches compared value by value (0: skip)")
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args(argv)

    try:
        binary = bench_interp.build_c_loop()
    except bench_interp.CBuildError as exc:
        print(f"bench_sets: cannot build the C reference: {exc}", file=sys.stderr)
        return 2
    key = f"{args.size_mb:g}".replace(".", "p")
    directory = ROOT / "build" / "bench" / f"set-{args.members}x{key}mb-v{args.version}"
    bases = build_set(directory, args.members, args.size_mb, args.version, args.jobs)
    whole = ArchiveSet(directory)
    descs = whole.descs()
    pmids = [int(d.pmid) for d in descs]
    names = [d.names[0] for d in descs]
    size = sum(p.stat().st_size for p in directory.iterdir() if p.name != "manifest.json") / 1e6

    def plan(s: ArchiveSet, fetches: int) -> tuple[Timestamp, int]:
        lo, hi = s.start.total_nsec(), s.end().total_nsec()     # type: ignore[union-attr]
        start = lo + 1_234_567_891
        return Timestamp.from_nsec(start), (hi - 2 * 10**9 - start) // max(fetches - 1, 1)

    start, delta = plan(whole, args.fetches)
    count = args.fetches
    status = 0
    if args.verify > 0:
        replay = open_set_replay(whole, pmids, rules="pcp-6.0")   # the replay the command uses
        samples = replay.schedule(start, delta, count)
        fetched, nvalues, diffs = bench_interp.verify(binary, directory, pmids, samples, start, delta, count,
                                                      args.verify)
        if diffs:
            status = 1
            print(f"VALUES DIFFER: {len(diffs)} differences against interp_loop.c (libpcp):")
            for d in diffs[:15]:
                print("  " + d)
        else:
            print(f"verified: pcpconform == interp_loop.c (libpcp) on the set at {fetched} fetches value by "
                  f"value ({nvalues} values) and at all {count} by checksum", file=sys.stderr)

    runs = {
        "pcpconform interp DIR (whole process)": kit_argv(str(directory), names, start, delta, count),
        "pmrep -a DIR -r -o csv (whole process)": bench_interp.pmrep_argv(directory, names, start, delta, count,
                                                                          whole.start),
        "C interp_loop on DIR (whole process)": bench_interp.c_loop_argv(binary, directory, pmids, start, delta,
                                                                         count),
    }
    best: dict[str, tuple[float, float]] = {}
    every: dict[str, list[tuple[float, float]]] = {label: [] for label in runs}
    load = os.getloadavg()[0]
    for _ in range(max(1, args.repeat)):           # interleaved rounds
        for label, cmd in runs.items():
            wall, cpu, _rss, rc = child_run(cmd)
            if rc != 0:
                status = 1
                print(f"FAILED {label}: exit {rc}")
                continue
            every[label].append((wall, cpu))
            old = best.get(label)
            best[label] = (min(wall, old[0]), min(cpu, old[1])) if old else (wall, cpu)

    print(f"\nset {directory.relative_to(ROOT)}: {len(bases)} members, {size:.1f} MB, {len(pmids)} metrics; "
          f"{count} fetches every {delta / 1e9:.1f} s across {len(bases) - 1} seams, rules pcp-6.0; "
          f"best of {args.repeat}; load average {load:.1f} to {os.getloadavg()[0]:.1f}\n")
    head = f"{'case':<44} {'seconds':>8} {'cpu s':>7} {'fetches/s':>10} {'MB/s':>7}"
    print(head)
    print("-" * len(head))
    for label, (wall, cpu) in best.items():
        print(f"{label:<44} {wall:8.2f} {cpu:7.2f} {count / wall:10.0f} {size / wall:7.1f}")
    kit, pmrep = best.get(next(iter(runs))), best.get(list(runs)[1])
    if kit and pmrep:
        print(f"\npmrep / pcpconform: {pmrep[0] / kit[0]:.2f}x wall, {pmrep[1] / kit[1]:.2f}x cpu "
              f"(higher = pcpconform faster; target at least 1.0x)")
        # each round's own ratio: the two commands of a round ran under the same load
        rounds = [(p[0] / k[0], p[1] / k[1]) for k, p in zip(every[next(iter(runs))], every[list(runs)[1]])]
        if rounds:
            walls, cpus = sorted(r[0] for r in rounds), sorted(r[1] for r in rounds)
            print(f"per round: {min(walls):.2f}x to {max(walls):.2f}x wall (median {statistics.median(walls):.2f}x), "
                  f"{min(cpus):.2f}x to {max(cpus):.2f}x cpu (median {statistics.median(cpus):.2f}x)")

    print("\npeak memory of pcpconform interp, by members replayed (same fetch density):")
    density = count / len(bases)
    for k in sorted({1, min(3, len(bases)), len(bases)}):
        source = ",".join(str(b) for b in bases[:k])
        part = ArchiveSet(source)
        n = max(int(density * k), 2)
        s0, d0 = plan(part, n)
        rss, wall, rc = peak_rss_mb(kit_argv(source, names, s0, d0, n))
        print(f"  {k} member(s), {n} fetches: {rss:.0f} MB, {wall:.1f} s" + ("" if rc == 0 else f" (exit {rc})"))
    return status


if __name__ == "__main__":
    sys.exit(main())
