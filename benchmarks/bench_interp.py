#!/usr/bin/env python3
"""Interpolation speed: the oracle (pcpconform.oracles.interp.replay) against libpcp's PM_MODE_INTERP.

Run from the project root::

    .venv/bin/python benchmarks/bench_interp.py [--size-mb 20] [--fetches 2000] [--repeat 3]

The archive (~20 MB, 45 metrics: counters, instants and discretes of every numeric type and
strings, over three 10-instance domains and a 3-instance one, logged every 10 s, discretes
every 60th result, a mark and a 30-minute gap every 2500 results) is written with
``pcpconform.io.writer`` and cached under ``build/bench/``. Every metric is then replayed on
one forward schedule of ``--fetches`` fetches spread over the whole archive, with the
``pcp-6.0`` rules (what the host's libpcp 6.0.3 does), timing, in interleaved rounds,
best of ``--repeat``:

* the oracle, in-process: ``Archive(base)`` + ``Replay(...)`` (the one pass over the
  archive) + ``replay.schedule(...)``, with the two phases reported apart too;
* libpcp, in Debian's ``/usr/bin/python3`` (PCP bindings): this script run again with
  ``--libpcp-worker``, which opens the context, sets PM_MODE_INTERP and calls
  pmFetchHighRes/pmFreeHighResResult ``--fetches`` times; the fetch loop is timed inside the
  worker, the whole process (interpreter, imports, open, loop) from outside;
* ``pmrep -r`` over the same metrics and schedule, CSV to /dev/null (unless ``--no-pmrep``).

Before timing, the values of a subset of the fetches (the first ``--verify`` and as many
spread evenly over the schedule) are compared, oracle against libpcp (through
tests/differential/libpcp/pm_interp.py), so that both do the same work. Exit status 1 if they differ or
a command fails; timings are reported, never asserted. ``--profile`` runs the oracle under
cProfile and prints the top functions.
"""

from __future__ import annotations

import json
import math
import os
import random
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SYSTEM_PYTHON = os.environ.get("PCPCONFORM_SYSTEM_PYTHON", "/usr/bin/python3")

#: Bump when the generated content changes, so stale cached archives are not reused.
GENERATOR_VERSION = 1
START_SEC = 1_700_000_000
INTERVAL = 10                  # seconds between results
SEGMENT = 2500                 # results per pmlogger session; a mark and a gap between them
SEGMENT_GAP = 1800
DISCRETE_EVERY = 60            # discrete metrics are logged every 60th result (and at each session start)
STRING_EVERY = 6
INDEX_EVERY = 100_000
CHUNK = 200
SEED = 20240917
DAY = 24 * 3600 // INTERVAL

# -- the libpcp worker (runs under Debian's python: standard library and PCP only) ------


def libpcp_worker(argv: list[str]) -> int:
    """``--libpcp-worker BASE SEC NSEC DELTA_NSEC COUNT PMID...``: replay with libpcp and
    print {"open_s", "loop_s", "fetches", "eol", "numval"} as JSON."""
    import ctypes

    os.environ["PCP_DERIVED_CONFIG"] = ""
    import cpmapi as c_api
    from pcp import pmapi

    base, sec, nsec, delta_ns, count = argv[0], int(argv[1]), int(argv[2]), int(argv[3]), int(argv[4])
    pmids = [int(p) for p in argv[5:]]
    began = time.perf_counter()
    ctx = pmapi.pmContext(c_api.PM_CONTEXT_ARCHIVE, base)
    for p in pmids:
        ctx.pmLookupDesc(p)
    pmid_array = (ctypes.c_uint * len(pmids))(*pmids)
    sign = -1 if delta_ns < 0 else 1
    delta = pmapi.timespec(sign * (abs(delta_ns) // 10**9), sign * (abs(delta_ns) % 10**9))
    ctx.pmSetModeHighRes(c_api.PM_MODE_INTERP, pmapi.timespec(sec, nsec), delta)
    opened = time.perf_counter()
    cpu0 = time.process_time()
    eol = numval = 0
    fetch, free = ctx.pmFetchHighRes, ctx.pmFreeHighResResult
    for _ in range(count):
        try:
            r = fetch(pmid_array)
        except pmapi.pmErr as exc:
            if exc.args and exc.args[0] == c_api.PM_ERR_EOL:
                eol += 1
                continue
            raise
        numval += r.contents.numpmid                   # touch the result
        free(r)
    done = time.perf_counter()
    json.dump({"open_s": opened - began, "loop_s": done - opened,
               "loop_cpu_s": time.process_time() - cpu0, "fetches": count, "eol": eol,
               "numval": numval}, sys.stdout)
    return 0


# -- the archive ----------------------------------------------------------------------

def _metrics():
    from pcpconform.format.pmtypes import PM_INDOM_NULL, PmInDom, PmSem, PmType, PmUnits

    C, INST, D = PmSem.COUNTER, PmSem.INSTANT, PmSem.DISCRETE
    disk, net, cpu, load = (int(PmInDom(s)) for s in ("60.1", "60.3", "60.0", "60.2"))
    null = PM_INDOM_NULL
    by, ms, n = PmUnits(dimSpace=1), PmUnits(dimTime=1, scaleTime=2), PmUnits(dimCount=1)
    none = PmUnits()
    T = PmType
    # (pmid, type, indom, sem, units, name, kind): kind picks the value generator
    rows = [
        ("60.0.4", T.U64, disk, C, by, "disk.dev.read_bytes", "ctr"),
        ("60.0.5", T.U64, disk, C, by, "disk.dev.write_bytes", "ctr"),
        ("60.0.6", T.U32, disk, C, n, "disk.dev.read", "ctr32"),
        ("60.0.7", T.U32, disk, C, n, "disk.dev.write", "ctr32"),
        ("60.0.8", T.I64, disk, C, ms, "disk.dev.avactive", "ctr"),
        ("60.0.9", T.DOUBLE, disk, INST, none, "disk.dev.util", "pct"),
        ("60.0.10", T.FLOAT, disk, INST, none, "disk.dev.avg_qlen", "f32"),
        ("60.0.11", T.U64, disk, D, by, "disk.dev.capacity", "const"),
        ("60.3.0", T.U64, net, C, by, "network.interface.in.bytes", "ctr"),
        ("60.3.1", T.U64, net, C, by, "network.interface.out.bytes", "ctr"),
        ("60.3.2", T.U32, net, C, n, "network.interface.in.packets", "ctr32"),
        ("60.3.3", T.U32, net, C, n, "network.interface.out.packets", "ctr32"),
        ("60.3.4", T.I32, net, C, n, "network.interface.in.drops", "ctr32"),
        ("60.3.5", T.DOUBLE, net, C, by, "network.interface.total.bytes_f", "ctrf"),
        ("60.3.6", T.U32, net, D, none, "network.interface.mtu", "const"),
        ("60.3.7", T.DOUBLE, net, INST, none, "network.interface.util", "pct"),
        ("60.0.20", T.U64, cpu, C, ms, "kernel.percpu.cpu.user", "ctr"),
        ("60.0.21", T.U64, cpu, C, ms, "kernel.percpu.cpu.sys", "ctr"),
        ("60.0.22", T.U64, cpu, C, ms, "kernel.percpu.cpu.idle", "ctr"),
        ("60.0.23", T.FLOAT, cpu, C, ms, "kernel.percpu.cpu.steal_f", "ctrf32"),
        ("60.0.24", T.DOUBLE, cpu, INST, none, "kernel.percpu.cpu.busy_pct", "pct"),
        ("60.0.25", T.DOUBLE, cpu, D, none, "hinv.cpu.clock", "const"),
        ("60.2.0", T.FLOAT, load, INST, none, "kernel.all.load", "f32"),
        ("60.0.30", T.U64, null, C, n, "kernel.all.intr", "ctr"),
        ("60.0.31", T.U64, null, C, n, "kernel.all.pswitch", "ctr"),
        ("60.0.32", T.U32, null, C, n, "kernel.all.sysfork", "ctr32"),
        ("60.0.33", T.I64, null, C, ms, "kernel.all.cpu.wait.total", "ctr"),
        ("60.0.34", T.I32, null, C, n, "kernel.all.syscall_errs", "ctr32"),
        ("60.0.35", T.DOUBLE, null, C, ms, "kernel.all.uptime_f", "ctrf"),
        ("60.1.1", T.U64, null, INST, by, "mem.util.used", "big"),
        ("60.1.2", T.U64, null, INST, by, "mem.util.free", "big"),
        ("60.1.3", T.U64, null, INST, by, "mem.util.cached", "big"),
        ("60.1.4", T.I64, null, INST, by, "mem.util.committed", "big"),
        ("60.0.40", T.U32, null, INST, n, "kernel.all.nprocs", "small"),
        ("60.0.41", T.I32, null, INST, n, "kernel.all.runnable", "small"),
        ("60.0.42", T.I32, null, INST, n, "kernel.all.blocked", "small"),
        ("60.0.43", T.DOUBLE, null, INST, none, "mem.freemem_pct", "pct"),
        ("60.0.44", T.FLOAT, null, INST, none, "kernel.all.pressure.cpu", "f32"),
        ("60.0.45", T.I64, null, INST, n, "kernel.all.entropy", "small"),
        ("250.0.1", T.STRING, null, INST, none, "syslog.last_message", "msg"),
        ("60.0.50", T.U32, null, D, n, "hinv.ncpu", "const"),
        ("60.0.51", T.U64, null, D, by, "hinv.physmem", "const"),
        ("60.0.52", T.I32, null, D, none, "hinv.zone", "const"),
        ("60.12.0", T.STRING, null, D, none, "kernel.uname.release", "release"),
        ("60.12.1", T.STRING, null, D, none, "pmcd.version", "release"),
    ]
    from pcpconform.format.pmtypes import PmID

    return [(int(PmID(p)), t, ind, s, u, name, kind) for p, t, ind, s, u, name, kind in rows]


def _indoms():
    from pcpconform.format.pmtypes import PmInDom

    return [(int(PmInDom("60.1")), [(i, f"sd{chr(97 + i)}") for i in range(10)]),
            (int(PmInDom("60.3")), [(0, "lo")] + [(i, f"eth{i - 1}") for i in range(1, 10)]),
            (int(PmInDom("60.0")), [(i, f"cpu{i}") for i in range(10)]),
            (int(PmInDom("60.2")), [(1, "1 minute"), (5, "5 minute"), (15, "15 minute")])]


def result_time(k: int):
    from pcpconform.format.pmtypes import Timestamp

    rng = random.Random(SEED * 7 + k)
    nsec = 500_000_000 + rng.randrange(0, 5000) * 1000 + rng.randrange(1000)
    return Timestamp(START_SEC + INTERVAL * k + SEGMENT_GAP * (k // SEGMENT), nsec)


_PLAN: list | None = None


def _plan() -> list:
    """Per metric: its fields, instance ids and per-instance constants (base, rate, level,
    phase), drawn once from the seed."""
    global _PLAN
    if _PLAN is None:
        indom_insts = {indom: [i for i, _ in insts] for indom, insts in _indoms()}
        _PLAN = []
        for j, row in enumerate(_metrics()):
            setup = random.Random(SEED + j)
            insts = [(inst, setup.randrange(10**6, 10**12), setup.uniform(10, 10**6),
                      setup.uniform(0.05, 0.9), setup.uniform(0, 2 * math.pi))
                     for inst in indom_insts.get(row[2], [-1])]
            _PLAN.append((row, insts))
    return _PLAN


def sample_values(k: int):
    """The k-th result's value sets: a pure function of k."""
    from pcpconform.format.pmtypes import PmSem, PmType
    from pcpconform.format.values import F32
    from pcpconform.io.writer import ValueSetSpec

    rng = random.Random(SEED * 31 + k)
    day = 2 * math.pi * k / DAY
    discrete_now = k % DISCRETE_EVERY == 0 or k % SEGMENT == 0
    vsets = []
    for (pmid, ptype, _indom, sem, _, name, kind), insts in _plan():
        if sem == PmSem.DISCRETE and not discrete_now:
            continue
        if kind == "msg" and k % STRING_EVERY:
            continue
        values = []
        for inst, base, rate, level, phase in insts:
            noise = rng.random()
            # monotonic counters: integral of a diurnal rate, plus bounded noise
            x = k - 0.4 * DAY / (2 * math.pi) * math.cos(day + phase) + 0.9 * 0.6 * noise
            shape = 1 + 0.5 * math.sin(day + phase)
            if kind == "ctr":
                v = base + int(rate * x)
            elif kind == "ctr32":
                v = (base % 10**6) + int(rate / 100 * x)
            elif kind == "ctrf":
                v = base / 1000 + rate / 7 * x
            elif kind == "ctrf32":
                v = round(rate / 1000 * x, 1)
            elif kind == "pct":
                v = min(100.0, max(0.0, 100 * level * shape + rng.gauss(0, 4)))
            elif kind == "f32":
                v = round(max(0.0, 8 * level * shape + rng.gauss(0, 0.5)), 2)
            elif kind == "big":
                v = base * 1000 + int(rate * 50 * shape) + rng.randrange(10**6)
            elif kind == "small":
                v = 60 + int(540 * level) + int(40 * math.sin(day)) + rng.randrange(-5, 6)
            elif kind == "const":
                v = base % 2**31
            elif kind == "release":
                v = f"6.1.0-{13 + k // SEGMENT}-amd64 ({name})"
            else:                   # msg
                v = (f"sshd[{rng.randrange(300, 400_000)}]: Accepted publickey for deploy from "
                     f"10.{rng.randrange(256)}.{rng.randrange(256)}.{rng.randrange(1, 255)} "
                     f"port {rng.randrange(1024, 65536)} ssh2")
            if ptype == PmType.FLOAT:
                v = F32(v)
            elif ptype == PmType.DOUBLE:
                v = float(v)
            values.append((inst, v))
        vsets.append(ValueSetSpec(pmid, ptype, values))
    return result_time(k), vsets


def build_chunk(version: int, start: int, stop: int) -> list[bytes]:
    from pcpconform.io.writer import ArchiveWriter, layout_result

    w = ArchiveWriter(os.devnull, version)
    return [w.encode_result(layout_result(version, *sample_values(k))) for k in range(start, stop)]


def _manifest(base: Path) -> Path:
    return base.with_name(base.name + ".manifest.json")


def load_cached(base: Path) -> dict | None:
    try:
        info = json.loads(_manifest(base).read_text())
        sizes = [Path(f"{base}.0").stat().st_size, Path(f"{base}.meta").stat().st_size]
    except (OSError, ValueError):
        return None
    ok = info.get("generator") == GENERATOR_VERSION and sizes == [info["data_bytes"], info["meta_bytes"]]
    return info if ok else None


def generate(base: Path, version: int, size_mb: float, jobs: int) -> dict:
    """Write ~``size_mb`` MB (data volume + .meta) at ``base``."""
    from concurrent.futures import ProcessPoolExecutor

    from bench_decode import MB

    from pcpconform.fixtures.generate import mark_time
    from pcpconform.io.writer import ArchiveWriter, LabelFields, layout_result

    _manifest(base).unlink(missing_ok=True)
    began = time.perf_counter()
    per_record = sum(map(len, build_chunk(version, 0, DISCRETE_EVERY))) / DISCRETE_EVERY
    n = max(int(size_mb * MB / per_record), 2)
    w = ArchiveWriter(base, version)
    t0 = result_time(0)
    w.start(LabelFields(hostname="interp01.example.com", timezone="UTC", start=t0, pid=4242,
                        zoneinfo=":UTC" if version == 3 else ""))
    at_label = w.meta_offset()
    for pmid, ptype, indom, sem, units, name, _ in _metrics():
        w.put_desc(pmid, ptype, indom, sem, units, [name])
    for indom, insts in _indoms():
        w.put_indom(t0, indom, insts)
    w.put_index(t0, off_meta=at_label)
    flush = w.data_offset() + INDEX_EVERY
    marks, last = 0, t0
    chunks = [(a, min(a + CHUNK, n)) for a in range(0, n, CHUNK)]
    with ProcessPoolExecutor(max_workers=max(jobs, 1)) as pool:
        for (a, _), records in zip(chunks, pool.map(build_chunk, [version] * len(chunks),
                                                    *zip(*chunks))):
            for k, record in enumerate(records, a):
                if k and k % SEGMENT == 0:
                    w.put_result_bytes(w.encode_result(layout_result(version, mark_time(last, version), [])))
                    marks += 1
                stamp = result_time(k)
                if w.data_offset() + len(record) > flush:
                    w.put_index(stamp)
                    flush = w.data_offset() + INDEX_EVERY
                w.put_result_bytes(record)
                last = stamp
            print(f"\r  generating: {a + len(records)}/{n} results", end="", file=sys.stderr, flush=True)
    w.put_index(last)
    w.close()
    print(f"\r  generated {n} results in {time.perf_counter() - began:.1f} s" + " " * 20,
          file=sys.stderr)
    info = {"generator": GENERATOR_VERSION, "version": version, "results": n, "marks": marks,
            "data_bytes": Path(f"{base}.0").stat().st_size,
            "meta_bytes": Path(f"{base}.meta").stat().st_size}
    _manifest(base).write_text(json.dumps(info, indent=1) + "\n")
    return info


# -- replaying ----------------------------------------------------------------------------

def schedule(base: Path, fetches: int):
    """A forward schedule over the whole archive that stays clear of its ends (and of exact
    record times): start 1.234567891 s after the first record, ``fetches`` fetches."""
    from pcpconform.format.pmtypes import Timestamp
    from pcpconform.io.archive import Archive

    a = Archive(base)
    first = a.start.total_nsec()
    last = max(r.timestamp.total_nsec() for r in a.results())   # once, outside the timings
    start = first + 1_234_567_891
    delta = (last - 2 * 10**9 - start) // max(fetches - 1, 1)
    return a, Timestamp.from_nsec(start), delta, last


class Oracle:
    """Archive open + Replay + schedule, in-process; the phases kept apart."""

    def __init__(self, base: Path, pmids: list[int], start, delta: int, count: int) -> None:
        self.args = (base, pmids, start, delta, count)
        self.open_replay: list[tuple[float, float]] = []    # (wall, cpu) seconds
        self.sched: list[tuple[float, float]] = []
        self.samples = None

    def __call__(self) -> None:
        from pcpconform.io.archive import Archive
        from pcpconform.oracles.interp.replay import Replay

        base, pmids, start, delta, count = self.args
        t0, c0 = time.perf_counter(), time.process_time()
        replay = Replay(Archive(base), pmids, rules="pcp-6.0")
        t1, c1 = time.perf_counter(), time.process_time()
        self.samples = replay.schedule(start, delta, count)
        t2, c2 = time.perf_counter(), time.process_time()
        self.open_replay.append((t1 - t0, c1 - c0))
        self.sched.append((t2 - t1, c2 - c1))


class Libpcp:
    """This script under the system python as the libpcp worker; the loop time it reports
    is kept apart from the whole process's."""

    def __init__(self, base: Path, pmids: list[int], start, delta: int, count: int) -> None:
        self.argv = [SYSTEM_PYTHON, "-E", "-s", str(Path(__file__).resolve()), "--libpcp-worker",
                     str(base), str(start.sec), str(start.nsec), str(delta), str(count),
                     *map(str, pmids)]
        self.loop: list[tuple[float, float]] = []          # (wall, cpu) seconds
        self.open: list[float] = []
        self.eol = 0

    def __call__(self) -> None:
        proc = subprocess.run(self.argv, capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            err = proc.stderr.strip().splitlines()
            raise RuntimeError(f"libpcp worker exit {proc.returncode}: {err[-1] if err else ''}")
        got = json.loads(proc.stdout)
        self.loop.append((got["loop_s"], got["loop_cpu_s"]))
        self.open.append(got["open_s"])
        self.eol = got["eol"]


def pmrep_argv(base: Path, names: list[str], start, delta: int, count: int, first) -> list[str]:
    offset = (start.total_nsec() - first.total_nsec()) / 1e9
    return [SYSTEM_PYTHON, "-E", "-s", "/usr/bin/pmrep", "-a", str(base), "-z", "-r", "-I",
            "-o", "csv", "-S", f"+{offset:.9f}sec", "-t", f"{delta / 1e9:.9f}sec",
            "-s", str(count), *names]


def verify(base: Path, pmids: list[int], samples, start, delta: int, count: int,
           first_n: int) -> tuple[int, int, list[str]]:
    """Compare the oracle's samples with libpcp's at the first ``first_n`` fetches and
    ``first_n`` more spread over the schedule: (fetches compared, values compared, diffs)."""
    sys.path.insert(0, str(ROOT))
    from pcpconform.format.pmtypes import PmID
    from pcpconform.io.archive import Archive
    from pcpconform.oracles.interp.replay import NoValue
    from tests.differential.libpcp.compare import libpcp_encoding
    from tests.differential.libpcp.interp_bridge import pm_interp
    from tests.differential.libpcp.referees import BY_NAME

    a = Archive(base)
    types = {p: a.desc(p).type for p in pmids}
    picks = sorted(set(range(min(first_n, count)))
                   | {min(count - 1, round(i * (count - 1) / max(first_n - 1, 1))) for i in range(first_n)})
    theirs = pm_interp(BY_NAME["pcp-6.0.3"], base, start.sec, start.nsec, delta, picks[-1] + 1,
                       [str(PmID(p)) for p in pmids])["samples"]
    diffs: list[str] = []
    nvalues = 0
    for k in picks:
        s, ref = samples[k], theirs[k]
        if s.eol != ref["eol"]:
            diffs.append(f"fetch {k}: eol oracle={s.eol} libpcp={ref['eol']}")
            continue
        for p in pmids:
            key = str(PmID(p))
            ours = sorted([inst, libpcp_encoding(v, types[p])] for inst, v in s.values.get(p, {}).items()
                          if not isinstance(v, NoValue))
            got = ref["values"].get(key, {"numval": 0, "values": []})
            lib = got["values"] if got["numval"] > 0 else []
            nvalues += len(lib)
            if ours != lib:
                diffs.append(f"fetch {k} ({s.time}) {a.metric_name(p)}: oracle {ours[:4]} libpcp {lib[:4]}")
    return len(picks), nvalues, diffs


def main(argv: list[str] | None = None) -> int:
    import argparse

    sys.path.insert(0, str(HERE))
    from bench_decode import MB, Case, _subprocess_case, measure, profile

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size-mb", type=float, default=20.0, help="archive size (default 20 MB)")
    ap.add_argument("--version", type=int, choices=(2, 3), default=3)
    ap.add_argument("--fetches", type=int, default=2000, help="fetches in the schedule (default 2000)")
    ap.add_argument("--repeat", type=int, default=3, help="runs per case, best reported (default 3)")
    ap.add_argument("--verify", type=int, default=50,
                    help="compare values at the first N fetches and N spread ones (default 50; 0: skip)")
    ap.add_argument("--no-pmrep", action="store_true", help="skip the pmrep row")
    ap.add_argument("--regenerate", action="store_true", help="ignore a cached archive")
    ap.add_argument("--profile", action="store_true", help="also run the oracle under cProfile")
    ap.add_argument("--top", type=int, default=15, help="profile rows (default 15)")
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args(argv)
    if args.fetches < 2:
        ap.error("--fetches must be at least 2")

    key = f"{args.size_mb:g}".replace(".", "p")
    base = ROOT / "build" / "bench" / f"interp-{key}mb-v{args.version}" / "bench"
    info = None if args.regenerate else load_cached(base)
    if info is None:
        print(f"generating {base} ...", file=sys.stderr)
        info = generate(base, args.version, args.size_mb, args.jobs)
    else:
        print(f"using cached {base}", file=sys.stderr)
    size = (info["data_bytes"] + info["meta_bytes"]) / MB

    archive, start, delta, _last = schedule(base, args.fetches)
    descs = archive.descs()
    pmids = [int(d.pmid) for d in descs]
    names = [d.names[0] for d in descs]
    ninst = sum(len(archive.instances(d.indom)) if not d.indom.is_null else 1 for d in descs)
    count = args.fetches

    oracle = Oracle(base, pmids, start, delta, count)
    libpcp = Libpcp(base, pmids, start, delta, count)
    status = 0
    if args.verify > 0:
        oracle()
        fetched, nvalues, diffs = verify(base, pmids, oracle.samples, start, delta, count, args.verify)
        oracle.open_replay.clear()
        oracle.sched.clear()
        if diffs:
            status = 1
            print(f"\nVALUES DIFFER at {len(diffs)} (fetch, metric) pairs of {fetched} fetches:")
            for d in diffs[:15]:
                print("  " + d)
        else:
            print(f"verified: oracle == libpcp at {fetched} fetches ({nvalues} values)",
                  file=sys.stderr)

    cases = [Case("libpcp worker (whole process)", libpcp, reference=True),
             Case("oracle in-process", oracle)]
    if not args.no_pmrep:
        cases.append(Case("pmrep -r -o csv (whole process)",
                          _subprocess_case(pmrep_argv(base, names, start, delta, count, archive.start))))
    for part in ("meta", "index", "0"):
        Path(f"{base}.{part}").read_bytes()
    measure(cases, max(1, args.repeat))

    def best_of(pairs: list[tuple[float, float]]) -> tuple[float | None, float | None]:
        return (min(p[0] for p in pairs), min(p[1] for p in pairs)) if pairs else (None, None)

    def case_best(case: Case) -> tuple[float | None, float | None]:
        return (min(case.times), min(case.cpu)) if case.times and not case.error else (None, None)

    lib_loop, lib_proc, orc = best_of(libpcp.loop), case_best(cases[0]), case_best(cases[1])
    rows = [("libpcp: pmFetchHighRes loop", lib_loop, "timed inside the worker"),
            ("libpcp: open + lookup + setmode",
             (min(libpcp.open) if libpcp.open else None, None), "inside the worker"),
            ("libpcp: whole worker process", lib_proc, "python3 start, PCP imports, open, loop"),
            ("oracle: Archive + Replay + schedule", orc, "in-process"),
            ("  oracle: Archive + Replay (one pass)", best_of(oracle.open_replay), ""),
            ("  oracle: schedule()", best_of(oracle.sched), "")]
    if not args.no_pmrep:
        rows.append(("pmrep -r (whole process)", case_best(cases[2]),
                     "raw values, CSV to /dev/null"))

    print(f"\narchive {base} (v{info['version']}): {size:.2f} MB, {info['results']} results, "
          f"{info['marks']} marks, {len(pmids)} metrics / {ninst} metric-instances")
    print(f"schedule: {count} fetches from +{(start.total_nsec() - archive.start.total_nsec()) / 1e9:.3f} s "
          f"every {delta / 1e9:.3f} s, rules pcp-6.0 (libpcp 6.0.3); "
          f"{libpcp.eol} end-of-log; best of {args.repeat} (wall and cpu each)\n")
    head = f"{'case':<40} {'seconds':>8} {'cpu s':>7} {'fetches/s':>10} {'MB/s':>8}  note"
    print(head)
    print("-" * len(head))
    for label, (secs, cpu), note in rows:
        if secs is None:
            print(f"{label:<40} {'FAILED':>8}")
            continue
        shown = f"{cpu:7.3f}" if cpu is not None else f"{'':7}"
        print(f"{label:<40} {secs:8.3f} {shown} {count / secs:10.0f} {size / secs:8.2f}  {note}")
    for c in cases:
        if c.error:
            status = 1
            print(f"FAILED {c.label}: {c.error}")
    if orc[0] and lib_loop[0] and lib_proc[0]:
        print(f"\noracle / libpcp (wall): {orc[0] / lib_loop[0]:.1f}x the fetch loop, "
              f"{orc[0] / lib_proc[0]:.1f}x the whole worker process (higher = oracle slower)")
        print(f"oracle / libpcp (cpu):  {orc[1] / lib_loop[1]:.1f}x the fetch loop, "
              f"{orc[1] / lib_proc[1]:.1f}x the whole worker process")

    if args.profile:
        prof = Oracle(base, pmids, start, delta, count)
        profile("the oracle (Archive + Replay + schedule)", prof, args.top)
    return status


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--libpcp-worker":
        sys.exit(libpcp_worker(sys.argv[2:]))
    sys.exit(main())
