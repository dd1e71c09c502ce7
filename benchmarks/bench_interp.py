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

* the reference, libpcp in C: ``benchmarks/c/interp_loop.c``, compiled with ``cc ... -lpcp``
  into ``build/c/`` (libpcp3-dev and a C compiler are needed; without them the script says so
  and exits 2), which opens the archive, sets PM_MODE_INTERP with the same start and
  interval, calls pmFetchHighRes ``--fetches`` times and extracts every value with
  pmExtractValue by its type; the whole process is timed from outside, the fetch loop inside;
* the oracle, in-process: ``Archive(base)`` + ``Replay(...)`` (the one pass over the
  archive) + ``replay.schedule(...)``, no output, with the two phases reported apart too;
  the target is within 3x of the C program;
* libpcp's Python bindings in Debian's ``/usr/bin/python3``: this script run again with
  ``--libpcp-worker``, the same loop without extracting the values;
* ``pmrep -r`` over the same metrics and schedule, CSV to /dev/null (unless ``--no-pmrep``).

Before timing, the oracle's samples are compared with the C program's: value by value at a
subset of the fetches (the first ``--verify`` and as many spread evenly over the schedule),
and at every fetch by the end-of-log count, the number of values and an order-independent
checksum of (fetch, pmID, instance, value bits), so that both do the same work. Exit status 1
if they differ or a command fails; timings are reported, never asserted. ``--profile`` runs
the oracle under cProfile and prints the top functions.
"""

from __future__ import annotations

import json
import math
import os
import random
import shutil
import struct
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


# -- the C reference: benchmarks/c/interp_loop.c -------------------------------------------

C_SOURCE = HERE / "c" / "interp_loop.c"
C_BINARY = ROOT / "build" / "c" / "interp_loop"
PMAPI_HEADER = Path("/usr/include/pcp/pmapi.h")


class CBuildError(Exception):
    """The C reference could not be built: no compiler, no libpcp header, or cc failed."""


def build_c_loop(cc: str | None = None, out: Path = C_BINARY) -> Path:
    """Compile interp_loop.c against the host's libpcp (once; again when the source is
    newer). No fallback: without it there is no C reference to compare with."""
    cc = cc or os.environ.get("CC", "cc")
    compiler = shutil.which(cc)
    if compiler is None:
        raise CBuildError(f"no C compiler ({cc}) on PATH: install gcc and libc6-dev")
    if not PMAPI_HEADER.exists():
        raise CBuildError(f"{PMAPI_HEADER} is missing: install libpcp3-dev")
    if out.exists() and out.stat().st_mtime >= C_SOURCE.stat().st_mtime:
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run([compiler, "-O2", "-Wall", "-Wextra", "-Werror", "-std=c99",
                           "-D_POSIX_C_SOURCE=200809L", "-o", str(out), str(C_SOURCE), "-lpcp"],
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        err = proc.stderr.strip().splitlines()
        raise CBuildError(f"{cc} {C_SOURCE.name} failed: {err[-1] if err else proc.returncode}")
    return out


def c_loop_argv(binary: Path, base: Path, pmids: list[int], start, delta: int, count: int,
                picks: list[int] | None = None) -> list[str]:
    return [str(binary), str(base), str(start.sec), str(start.nsec), str(delta), str(count),
            ",".join(map(str, picks)) if picks else "-", *map(str, pmids)]


def run_c_loop(argv: list[str]) -> tuple[dict, list[dict]]:
    """(the summary line, the picked fetches' lines) of one interp_loop run."""
    proc = subprocess.run(argv, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        err = proc.stderr.strip().splitlines()
        raise RuntimeError(f"interp_loop exit {proc.returncode}: {err[-1] if err else ''}")
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    return lines[-1], lines[:-1]


class CLoop:
    """interp_loop as a subprocess: the whole process timed from outside (the Case), the
    fetch loop and the open as it reports them."""

    def __init__(self, argv: list[str]) -> None:
        self.argv = argv
        self.loop: list[tuple[float, float]] = []          # (wall, cpu) seconds
        self.open: list[float] = []
        self.summary: dict = {}

    def __call__(self) -> None:
        self.summary, _ = run_c_loop(self.argv)
        self.loop.append((self.summary["loop_s"], self.summary["loop_cpu_s"]))
        self.open.append(self.summary["open_s"])


_M64 = (1 << 64) - 1


def mix64(x: int) -> int:
    """splitmix64's finaliser, as interp_loop.c's mix64."""
    z = (x + 0x9E3779B97F4A7C15) & _M64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _M64
    return z ^ (z >> 31)


def value_bits(value, ptype: int) -> int:
    """A value's 64 bits as interp_loop.c feeds them to the checksum."""
    from pcpconform.format.pmtypes import PmType

    if ptype == PmType.FLOAT:
        return int(value.bits)
    if ptype == PmType.DOUBLE:
        return int.from_bytes(struct.pack("<d", value), "little")
    if ptype == PmType.STRING:
        h = 0xCBF29CE484222325
        for byte in bytes(value).split(b"\0", 1)[0]:
            h = ((h ^ byte) * 0x100000001B3) & _M64
        return h
    return int(value) & _M64


def checksum(samples, types: dict[int, int]) -> tuple[int, int, int]:
    """(end-of-log fetches, values, checksum) of the oracle's samples, as interp_loop.c
    sums them: order-independent, so instance order does not matter."""
    from pcpconform.oracles.interp.replay import NoValue

    eol = nvalues = total = 0
    for k, s in enumerate(samples):
        if s.eol:
            eol += 1
            continue
        for pmid, values in s.values.items():
            key = mix64(((k << 32) ^ pmid) & _M64)
            for inst, v in values.items():
                if isinstance(v, NoValue):
                    continue
                total += mix64(mix64(key ^ (inst & 0xFFFFFFFF)) ^ value_bits(v, types[pmid]))
                nvalues += 1
    return eol, nvalues, total & _M64


def verify(binary: Path, base: Path, pmids: list[int], samples, start, delta: int, count: int,
           first_n: int) -> tuple[int, int, list[str]]:
    """Compare the oracle's samples with interp_loop's (libpcp's) at the first ``first_n``
    fetches and ``first_n`` more spread over the schedule, value by value, and over every
    fetch by end-of-log count, value count and checksum: (fetches compared, values
    compared, differences)."""
    from pcpconform.format.pmtypes import PmID, PmType
    from pcpconform.io.archiveset import open_source
    from pcpconform.oracles.interp.replay import NoValue

    def encoding(v, ptype: int):          # pm_interp.py's, as interp_loop.c prints it
        if ptype == PmType.FLOAT:
            return f"f32:{v.bits:08x}"
        if ptype == PmType.DOUBLE:
            return "f64:" + struct.pack(">d", v).hex()
        if ptype == PmType.STRING:
            return "str:" + bytes(v).split(b"\0", 1)[0].hex()
        return v

    a = open_source(base)               # an archive, or a directory of them (bench_sets.py)
    types = {p: a.desc(p).type for p in pmids}
    picks = sorted(set(range(min(first_n, count)))
                   | {min(count - 1, round(i * (count - 1) / max(first_n - 1, 1))) for i in range(first_n)})
    summary, theirs = run_c_loop(c_loop_argv(binary, base, pmids, start, delta, count, picks))
    diffs: list[str] = []
    nvalues = 0
    for ref in theirs:
        k = ref["fetch"]
        s = samples[k]
        if s.eol != ref["eol"]:
            diffs.append(f"fetch {k}: eol oracle={s.eol} libpcp={ref['eol']}")
            continue
        for p in pmids:
            ours = sorted([inst, encoding(v, types[p])] for inst, v in s.values.get(p, {}).items()
                          if not isinstance(v, NoValue))
            lib = sorted(ref["values"].get(str(PmID(p)), []))
            nvalues += len(lib)
            if ours != lib:
                diffs.append(f"fetch {k} ({s.time}) {a.metric_name(p)}: oracle {ours[:4]} libpcp {lib[:4]}")
    eol, total_values, total = checksum(samples, types)
    mine = (eol, total_values, f"{total:016x}")
    lib_sum = (summary["eol"], summary["values"], summary["checksum"])
    if mine != lib_sum:
        diffs.append(f"all {count} fetches (eol, values, checksum): oracle {mine} libpcp {lib_sum}")
    return len(theirs), nvalues, diffs


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

    try:
        binary = build_c_loop()
    except CBuildError as exc:
        print(f"bench_interp: cannot build the C reference: {exc}", file=sys.stderr)
        return 2
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
    c_loop = CLoop(c_loop_argv(binary, base, pmids, start, delta, count))
    libpcp = Libpcp(base, pmids, start, delta, count)
    status = 0
    if args.verify > 0:
        oracle()
        fetched, nvalues, diffs = verify(binary, base, pmids, oracle.samples, start, delta, count,
                                         args.verify)
        oracle.open_replay.clear()
        oracle.sched.clear()
        oracle.samples = None
        if diffs:
            status = 1
            print(f"\nVALUES DIFFER: {len(diffs)} differences, oracle against interp_loop.c "
                  f"(libpcp), {fetched} fetches compared value by value and all by checksum:")
            for d in diffs[:15]:
                print("  " + d)
        else:
            print(f"verified: oracle == interp_loop.c (libpcp) at {fetched} fetches value by value "
                  f"({nvalues} values) and at all {count} by checksum", file=sys.stderr)

    cases = [Case("C interp_loop (whole process)", c_loop, reference=True),
             Case("oracle in-process", oracle),
             Case("libpcp Python bindings worker (whole process)", libpcp)]
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

    c_proc, orc = case_best(cases[0]), case_best(cases[1])
    rows = [("C: pmFetchHighRes + pmExtractValue loop", best_of(c_loop.loop), "timed inside interp_loop"),
            ("C: open + lookup + setmode", (min(c_loop.open) if c_loop.open else None, None),
             "inside interp_loop"),
            ("C: interp_loop whole process", c_proc, "the reference"),
            ("oracle: Archive + Replay + schedule", orc, "in-process, no output"),
            ("  oracle: Archive + Replay (one pass)", best_of(oracle.open_replay), ""),
            ("  oracle: schedule()", best_of(oracle.sched), ""),
            ("Python bindings: pmFetchHighRes loop", best_of(libpcp.loop),
             "values not extracted"),
            ("Python bindings: whole worker process", case_best(cases[2]),
             "python3 start, PCP imports, open, loop")]
    if not args.no_pmrep:
        rows.append(("pmrep -r (whole process)", case_best(cases[3]),
                     "raw values, CSV to /dev/null"))

    shown_base = base.relative_to(ROOT) if base.is_relative_to(ROOT) else base
    print(f"\narchive {shown_base} (v{info['version']}): {size:.2f} MB, {info['results']} results, "
          f"{info['marks']} marks, {len(pmids)} metrics / {ninst} metric-instances")
    print(f"schedule: {count} fetches from +{(start.total_nsec() - archive.start.total_nsec()) / 1e9:.3f} s "
          f"every {delta / 1e9:.3f} s, rules pcp-6.0 (libpcp 6.0.3); "
          f"{c_loop.summary.get('eol', '?')} end-of-log, {c_loop.summary.get('values', '?')} values; "
          f"best of {args.repeat} (wall and cpu each)\n")
    head = f"{'case':<42} {'seconds':>8} {'cpu s':>7} {'fetches/s':>10} {'MB/s':>8}  note"
    print(head)
    print("-" * len(head))
    for label, (secs, cpu), note in rows:
        if secs is None:
            print(f"{label:<42} {'FAILED':>8}")
            continue
        shown = f"{cpu:7.3f}" if cpu is not None else f"{'':7}"
        print(f"{label:<42} {secs:8.3f} {shown} {count / secs:10.0f} {size / secs:8.2f}  {note}")
    for c in cases:
        if c.error:
            status = 1
            print(f"FAILED {c.label}: {c.error}")
    if orc[0] and orc[1] and c_proc[0] and c_proc[1]:
        print(f"\noracle / C interp_loop: {orc[0] / c_proc[0]:.2f}x wall, {orc[1] / c_proc[1]:.2f}x cpu "
              f"(higher = oracle slower; target: within 3x)")

    if args.profile:
        prof = Oracle(base, pmids, start, delta, count)
        profile("the oracle (Archive + Replay + schedule)", prof, args.top)
    return status


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--libpcp-worker":
        sys.exit(libpcp_worker(sys.argv[2:]))
    sys.exit(main())
