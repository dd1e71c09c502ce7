#!/usr/bin/env python3
"""Decode throughput: Debian's ``pmdumplog -a`` against pcpconform on the same archive.

Run from the project root::

    .venv/bin/python benchmarks/bench_decode.py [--size-mb 20] [--version 3] [--keep DIR]

The archive is generated once with ``pcpconform.io.writer`` (no YAML fixture) and cached
under ``build/bench/`` (or DIR with ``--keep``; ``--no-cache`` uses a temporary
directory that is removed afterwards). Each run then times, best of ``--repeat``
wall-clock runs (``time.perf_counter``), rounds interleaved:

* ``pmdumplog -a BASE``                         (the C tool, stdout to /dev/null)
* ``pcpconform dump --format jsonl BASE``       (console script, stdout to /dev/null)
* ``pcpconform dump --format text BASE``        (unless ``--no-text``)
* ``for r in Archive(BASE).results(): pass``    (in-process decode only, every value)

and prints archive size (data volumes + .meta, MB = 10**6 bytes), seconds, MB/s and each
pcpconform speed as a multiple of pmdumplog's. Timings are reported, never asserted.
``--profile`` also runs the decode-only pass under cProfile and prints the top functions
(``--profile decode,jsonl,text`` profiles the in-process dumps as well).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import math
import os
import pstats
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from pcpconform.fastpath import PathStats
from pcpconform.fixtures.generate import mark_time
from pcpconform.format.pmtypes import PM_INDOM_NULL, PmID, PmInDom, PmSem, PmType, PmUnits, Timestamp
from pcpconform.format.values import F32
from pcpconform.io.archive import Archive
from pcpconform.io.decoded import DecodedResult, DecodedValueSet
from pcpconform.io.encode import encode_result
from pcpconform.io.writer import ArchiveWriter, LabelFields, ValueSetSpec, layout_result

ROOT = Path(__file__).resolve().parent.parent
#: Bump when the generated content changes, so stale cached archives are not reused.
GENERATOR_VERSION = 1
MB = 1_000_000

# -- the archive's shape ---------------------------------------------------------------
START_SEC = 1_700_000_000          # 2023-11-14 22:13:20 UTC
INTERVAL = 10                      # seconds between samples
SEGMENT = 1000                     # results per pmlogger "session"; a mark between them
SEGMENT_GAP = 1800                 # seconds of downtime after each mark
STRING_EVERY = 5                   # the string metric is in every 5th result
INDEX_EVERY = 100_000              # bytes of data between temporal index entries
CHUNK = 100                        # results per worker task
SEED = 20240601

N_NETIF, N_PROC, N_CPU = 100, 100, 50
DAY = 24 * 3600 // INTERVAL        # samples per day, for diurnal shapes

IN_NETIF = int(PmInDom("60.3"))
IN_PROC = int(PmInDom("3.9"))
IN_CPU = int(PmInDom("60.0"))
IN_LOAD = int(PmInDom("60.2"))

PM_NETIN = int(PmID("60.3.0"))      # network.interface.in.bytes   u64 counter, 100 inst
PM_PRIO = int(PmID("3.8.2"))        # proc.psinfo.priority         32-bit (INSITU), 100 inst
PM_BUSY = int(PmID("60.0.90"))      # kernel.percpu.cpu.busy_pct   double, 50 inst
PM_NPROCS = int(PmID("60.0.8"))     # kernel.all.nprocs            u32 singular (INSITU)
PM_LOAD = int(PmID("60.2.0"))       # kernel.all.load              float, 3 inst (DPTR)
PM_LAST = int(PmID("250.0.1"))      # syslog.last_message          string, singular

METRICS = [
    # pmid, type, indom, sem, units, name
    (PM_NETIN, PmType.U64, IN_NETIF, PmSem.COUNTER, PmUnits(dimSpace=1),
     "network.interface.in.bytes"),
    (PM_PRIO, PmType.I32, IN_PROC, PmSem.INSTANT, PmUnits(), "proc.psinfo.priority"),
    (PM_BUSY, PmType.DOUBLE, IN_CPU, PmSem.INSTANT, PmUnits(), "kernel.percpu.cpu.busy_pct"),
    (PM_NPROCS, PmType.U32, PM_INDOM_NULL, PmSem.INSTANT, PmUnits(dimCount=1),
     "kernel.all.nprocs"),
    (PM_LOAD, PmType.FLOAT, IN_LOAD, PmSem.INSTANT, PmUnits(), "kernel.all.load"),
    (PM_LAST, PmType.STRING, PM_INDOM_NULL, PmSem.DISCRETE, PmUnits(), "syslog.last_message"),
]

_setup = random.Random(SEED)
NETIFS = [(i, n) for i, n in enumerate(
    ["lo", "eth0", "eth1", "docker0", "virbr0"]
    + [f"veth{_setup.getrandbits(28):07x}" for _ in range(N_NETIF - 5)])]
_PROG = ["/usr/lib/systemd/systemd", "/usr/sbin/sshd", "/usr/sbin/cron", "/usr/bin/dbus-daemon",
         "/usr/sbin/rsyslogd", "/usr/libexec/pcp/bin/pmcd", "/usr/libexec/pcp/bin/pmlogger",
         "/usr/sbin/nginx", "/usr/bin/postgres", "/usr/bin/python3", "/usr/bin/containerd",
         "/usr/bin/dockerd", "-bash", "/usr/sbin/chronyd", "/usr/bin/java"]
_pids = sorted(_setup.sample(range(2, 400_000), N_PROC - 1)) + [1]
PROCS = sorted((pid, f"{pid:06d} {'/sbin/init' if pid == 1 else _setup.choice(_PROG)}")
               for pid in _pids)
CPUS = [(i, f"cpu{i}") for i in range(N_CPU)]
LOADS = [(1, "1 minute"), (5, "5 minute"), (15, "15 minute")]
INDOMS = [(IN_NETIF, NETIFS), (IN_PROC, PROCS), (IN_CPU, CPUS), (IN_LOAD, LOADS)]
#: values in every result, the string metric's (every STRING_EVERY-th result) aside
VALUES_PER_RESULT = N_NETIF + N_PROC + N_CPU + 1 + len(LOADS)

# per-instance constants: counter base, bytes per interval, diurnal amplitude and phase
_NET_BASE = [_setup.randrange(0, 5 * 10**12) for _ in NETIFS]
_NET_STEP = [0 if _setup.random() < 0.1 else int(10 ** _setup.uniform(2, 9.5)) for _ in NETIFS]
_NET_AMP = [_setup.uniform(0.1, 0.5) for _ in NETIFS]
_NET_PHASE = [_setup.uniform(0, 2 * math.pi) for _ in NETIFS]
_PRIO = [_setup.choice([20] * 12 + [0, 19, 39, -2, -51, 10]) for _ in PROCS]
_CPU_BASE = [_setup.uniform(2, 70) for _ in CPUS]
_MESSAGES = [
    "sshd[{pid}]: Accepted publickey for deploy from 10.{a}.{b}.{c} port {port} ssh2",
    "kernel: [{up}.{frac:06d}] TCP: request_sock_TCP: Possible SYN flooding on port {port}",
    "CRON[{pid}]: (root) CMD (command -v debian-sa1 > /dev/null && debian-sa1 1 1)",
    "systemd[1]: Started session {n} of user deploy.",
    "nginx[{pid}]: 10.{a}.{b}.{c} - - \"GET /api/v1/items?page={n} HTTP/1.1\" 200 {port}",
    "pmlogger[{pid}]: pmlogger: Validating metrics after PMCD state changed at {up}",
]


def result_time(k: int, version: int) -> Timestamp:
    """Timestamp of the k-th result: a 10 s interval with sub-second jitter, and a gap
    after every SEGMENT results (pmlogger was restarted; a mark separates them)."""
    rng = random.Random(SEED * 7 + k)
    usec = 250_000 + rng.randrange(0, 4000)
    nsec = usec * 1000 + (rng.randrange(1000) if version == 3 else 0)
    return Timestamp(START_SEC + INTERVAL * k + SEGMENT_GAP * (k // SEGMENT), nsec)


def _counter_noise(k: int) -> list[float]:
    rng = random.Random(SEED * 13 + k)
    return [rng.random() for _ in range(N_NETIF)]


def sample_values(k: int, version: int) -> tuple[Timestamp, list[ValueSetSpec]]:
    """The k-th result's values: a pure function of k, so workers can build any chunk."""
    rng = random.Random(SEED * 31 + k)
    noise = _counter_noise(k)
    two_pi = 2 * math.pi
    day = two_pi * k / DAY
    net = []
    for j, (inst, _) in enumerate(NETIFS):
        step, amp = _NET_STEP[j], _NET_AMP[j]
        # integral of a diurnal rate step*(1 + amp*sin), plus bounded noise: monotonic
        x = k - amp * DAY / two_pi * math.cos(day + _NET_PHASE[j]) + 0.9 * (1 - amp) * noise[j]
        net.append((inst, _NET_BASE[j] + max(0, int(step * x))))
    prio = [(pid, p if rng.random() > 0.02 else rng.choice((0, 19, -20, 5)))
            for (pid, _), p in zip(PROCS, _PRIO)]
    shape = 1 + 0.6 * math.sin(day)
    busy = [(inst, min(100.0, max(0.0, base * shape + rng.gauss(0, 4))))
            for (inst, _), base in zip(CPUS, _CPU_BASE)]
    load1 = max(0.0, 6.0 * shape + rng.gauss(0, 0.7))
    load = [(1, F32(round(load1, 2))), (5, F32(round(load1 * 0.9 + 0.4, 2))),
            (15, F32(round(load1 * 0.8 + 0.6, 2)))]
    nprocs = 620 + int(80 * math.sin(day)) + rng.randrange(-15, 16)
    vsets = [
        ValueSetSpec(PM_NETIN, PmType.U64, net),
        ValueSetSpec(PM_PRIO, PmType.I32, prio),
        ValueSetSpec(PM_BUSY, PmType.DOUBLE, busy),
        ValueSetSpec(PM_NPROCS, PmType.U32, [(-1, nprocs)]),
        ValueSetSpec(PM_LOAD, PmType.FLOAT, load),
    ]
    if k % STRING_EVERY == 0:
        msg = rng.choice(_MESSAGES).format(
            pid=rng.randrange(300, 400_000), a=rng.randrange(256), b=rng.randrange(256),
            c=rng.randrange(1, 255), port=rng.randrange(1024, 65536), n=rng.randrange(1, 9999),
            up=k * INTERVAL + 86_400, frac=rng.randrange(10**6))
        vsets.append(ValueSetSpec(PM_LAST, PmType.STRING, [(-1, msg)]))
    return result_time(k, version), vsets


_TYPES = {pmid: ptype for pmid, ptype, *_ in METRICS}


def encode_sample(version: int, stamp: Timestamp, vsets: list[ValueSetSpec]) -> bytes | None:
    """The record ``layout_result`` makes of these values, packed by ``encode.encode_result``
    (~20x faster than the construct build; None where it does not apply)."""
    decoded = []
    for vs in vsets:
        insts, vals = zip(*vs.values)
        if vs.type == PmType.STRING:
            vals = tuple(v.encode() for v in vals)
        decoded.append(DecodedValueSet(vs.pmid, len(insts), None, None, (insts, vals)))
    return encode_result(version, DecodedResult(stamp, decoded, None, True), _TYPES, PathStats())


def build_chunk(version: int, start: int, stop: int) -> list[bytes]:
    """Encoded result records start..stop-1 (run in worker processes)."""
    w = ArchiveWriter(os.devnull, version)   # only its encoder is used
    out = []
    for k in range(start, stop):
        stamp, vsets = sample_values(k, version)
        record = encode_sample(version, stamp, vsets)
        out.append(record if record is not None
                   else w.encode_result(layout_result(version, stamp, vsets)))
    return out


def build_chunk_reference(version: int, start: int, stop: int) -> list[bytes]:
    """``build_chunk`` through the construct schemas (what the fast encoder must equal)."""
    w = ArchiveWriter(os.devnull, version)
    return [w.encode_result(layout_result(version, *sample_values(k, version)))
            for k in range(start, stop)]


# -- generation -----------------------------------------------------------------------

@dataclass
class BenchArchive:
    base: Path
    version: int
    results: int
    marks: int
    values: int
    index_entries: int
    data_bytes: int
    meta_bytes: int

    @property
    def size_bytes(self) -> int:
        return self.data_bytes + self.meta_bytes


def _manifest_path(base: Path) -> Path:
    return base.with_name(base.name + ".manifest.json")


def load_cached(base: Path) -> BenchArchive | None:
    manifest = _manifest_path(base)
    try:
        info = json.loads(manifest.read_text())
    except (OSError, ValueError):
        return None
    if info.get("generator") != GENERATOR_VERSION:
        return None
    arch = BenchArchive(base=base, **info["archive"])
    try:
        sizes = (Path(f"{base}.0").stat().st_size, Path(f"{base}.meta").stat().st_size)
    except OSError:
        return None
    return arch if sizes == (arch.data_bytes, arch.meta_bytes) else None


def generate(base: Path, version: int, size_mb: float, jobs: int) -> BenchArchive:
    """Write an archive of about ``size_mb`` MB (data volume + .meta) at ``base``."""
    target = int(size_mb * MB)
    _manifest_path(base).unlink(missing_ok=True)
    w = ArchiveWriter(base, version)
    t0 = result_time(0, version)
    w.start(LabelFields(hostname="bench01.example.com", timezone="UTC", start=t0, pid=4242,
                        zoneinfo=":UTC" if version == 3 else ""))
    meta_at_label = w.meta_offset()
    for pmid, ptype, indom, sem, units, name in METRICS:
        w.put_desc(pmid, ptype, indom, sem, units, [name])
    for indom, instances in INDOMS:
        w.put_indom(t0, indom, instances)
    # as pmlogger does: the first entry points before the metadata the results need
    w.put_index(t0, off_meta=meta_at_label)
    n_index = 1
    flushsize = w.data_offset() + INDEX_EVERY

    sample = build_chunk(version, 0, STRING_EVERY)
    per_record = sum(map(len, sample)) / len(sample)
    estimate = int((target - w.meta_offset() - w.data_offset()) / per_record * 1.01) + CHUNK
    chunks = [(k, k + CHUNK) for k in range(0, estimate, CHUNK)]

    def chunk_stream():
        if jobs > 1:
            with ProcessPoolExecutor(max_workers=jobs) as pool:
                futures = [pool.submit(build_chunk, version, a, b) for a, b in chunks]
                try:
                    for fut in futures:
                        yield fut.result()
                finally:
                    for fut in futures:
                        fut.cancel()
        else:
            for a, b in chunks:
                yield build_chunk(version, a, b)
        k = chunks[-1][1] if chunks else 0
        while True:                      # the estimate fell short: go on serially
            yield build_chunk(version, k, k + CHUNK)
            k += CHUNK

    results = marks = values = 0
    last = t0
    began = time.perf_counter()
    stream = chunk_stream()
    for records in stream:
        for record in records:
            k = results
            stamp = result_time(k, version)
            if k and k % SEGMENT == 0:
                mark = w.encode_result(layout_result(version, mark_time(last, version), []))
                w.put_result_bytes(mark)
                marks += 1
            if w.data_offset() + len(record) > flushsize:
                w.put_index(stamp)
                n_index += 1
                flushsize = w.data_offset() + INDEX_EVERY
            w.put_result_bytes(record)
            results += 1
            values += VALUES_PER_RESULT + (1 if k % STRING_EVERY == 0 else 0)
            last = stamp
            if w.data_offset() + w.meta_offset() >= target:
                break
        else:
            done = (w.data_offset() + w.meta_offset()) * 100 // target
            print(f"\r  generating: {results} results ({done}%)", end="", file=sys.stderr,
                  flush=True)
            continue
        break
    stream.close()                       # cancels chunks not started, joins the workers
    w.put_index(last)
    n_index += 1
    w.close()
    print(f"\r  generated {results} results in {time.perf_counter() - began:.1f} s"
          + " " * 20, file=sys.stderr)
    arch = BenchArchive(base=base, version=version, results=results, marks=marks,
                        values=values, index_entries=n_index,
                        data_bytes=Path(f"{base}.0").stat().st_size,
                        meta_bytes=Path(f"{base}.meta").stat().st_size)
    info = {"generator": GENERATOR_VERSION, "size_mb": size_mb,
            "archive": {k: v for k, v in vars(arch).items() if k != "base"}}
    _manifest_path(base).write_text(json.dumps(info, indent=1) + "\n")
    return arch


# -- measuring --------------------------------------------------------------------------

@dataclass
class Case:
    label: str
    run: Callable[[], None]
    reference: bool = False
    times: list[float] = field(default_factory=list)   # wall clock seconds per run
    cpu: list[float] = field(default_factory=list)     # CPU seconds (user + system) per run
    error: str | None = None


def _cpu_now() -> float:
    """CPU seconds used so far by this process and its waited-for children."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _subprocess_case(argv: list[str]) -> Callable[[], None]:
    def run() -> None:
        proc = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, check=False)
        if proc.returncode != 0:
            err = proc.stderr.decode(errors="replace").strip().splitlines()
            raise RuntimeError(f"exit {proc.returncode}: {err[-1] if err else ''}")
    return run


def decode_only(base: Path) -> None:
    for _result in Archive(base).results():
        pass


def measure(cases: list[Case], repeat: int) -> None:
    for rnd in range(repeat):                # interleaved rounds: drift hits every tool alike
        for case in cases:
            if case.error:
                continue
            cpu0 = _cpu_now()
            began = time.perf_counter()
            try:
                case.run()
            except Exception as exc:  # report, do not hide behind a fast time
                case.error = str(exc)
                continue
            case.times.append(time.perf_counter() - began)
            case.cpu.append(_cpu_now() - cpu0)
            print(f"  round {rnd + 1}/{repeat} {case.label}: {case.times[-1]:.2f} s "
                  f"(cpu {case.cpu[-1]:.2f} s)", file=sys.stderr)


def print_table(arch: BenchArchive, cases: list[Case], repeat: int) -> None:
    size = arch.size_bytes / MB
    ref = next((c for c in cases if c.reference and c.times), None)
    print()
    print(f"archive {arch.base} (v{arch.version}): {size:.2f} MB = "
          f"data {arch.data_bytes / MB:.2f} MB + meta {arch.meta_bytes / MB:.4f} MB; "
          f"{arch.results} results, {arch.marks} marks, {arch.values} values, "
          f"{arch.index_entries} index entries")
    print(f"best of {repeat} runs, wall clock (cpu: best user+system seconds); "
          f"MB = 10^6 bytes;\n'x pmdumplog' = wall-clock speed relative to pmdumplog -a "
          f"(higher is faster)")
    print()
    head = (f"{'command':<46} {'size MB':>8} {'seconds':>8} {'MB/s':>7} {'cpu s':>6}"
            f"  {'vs pmdumplog':>16}")
    print(head)
    print("-" * len(head))
    for c in cases:
        if c.error or not c.times:
            print(f"{c.label:<46} {size:8.2f} {'FAILED':>8}  {c.error}")
            continue
        best = min(c.times)
        rel = "(reference)" if c.reference else (
            f"{min(ref.times) / best:.2f}x pmdumplog" if ref else "n/a")
        print(f"{c.label:<46} {size:8.2f} {best:8.2f} {size / best:7.2f} {min(c.cpu):6.2f}"
              f"  {rel:>16}")


def dump_to_devnull(fmt: str) -> Callable[[Path], None]:
    """What ``pcpconform dump --format FMT`` does, in-process, for profiling."""
    def run(base: Path) -> None:
        from pcpconform.dump.jsonl import write_jsonl
        from pcpconform.dump.text import write_text

        with open(os.devnull, "w", encoding="utf-8") as out:
            (write_jsonl if fmt == "jsonl" else write_text)(Archive(base), out)
    return run


def profile(what: str, fn: Callable[[], None], top: int) -> None:
    prof = cProfile.Profile()
    began = time.perf_counter()
    prof.enable()
    fn()
    prof.disable()
    elapsed = time.perf_counter() - began
    for key in ("cumulative", "tottime"):
        buf = io.StringIO()
        pstats.Stats(prof, stream=buf).strip_dirs().sort_stats(key).print_stats(top)
        text = buf.getvalue()
        body = text[text.find("   ncalls"):] if "   ncalls" in text else text
        print(f"\ncProfile of {what} ({elapsed:.2f} s under the profiler), "
              f"top {top} by {key}:\n{body.rstrip()}")


def startup_seconds(repeat: int) -> float | None:
    """Interpreter start plus the imports ``pcpconform dump`` needs: a fixed cost inside
    both subprocess figures, small against a 20 MB archive."""
    argv = [sys.executable, "-c", "import pcpconform.cli, pcpconform.dump.jsonl"]
    best = None
    for _ in range(repeat):
        began = time.perf_counter()
        if subprocess.run(argv, stdout=subprocess.DEVNULL, check=False).returncode != 0:
            return None
        took = time.perf_counter() - began
        best = took if best is None else min(best, took)
    return best


def console_script() -> str:
    """The kit's console script, the package's bytecode compiled first: an installed package
    has it (pip compiles at install), while a source tree run with PYTHONDONTWRITEBYTECODE
    set would compile every changed module at every start and time that too."""
    import compileall

    compileall.compile_dir(str(ROOT / "pcpconform"), quiet=2)
    here = Path(sys.executable).parent / "pcpconform"
    return str(here) if here.exists() else (shutil.which("pcpconform") or "pcpconform")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size-mb", type=float, default=20.0,
                    help="archive size, data volume + .meta, in 10^6 bytes (default 20)")
    ap.add_argument("--version", type=int, choices=(2, 3), default=3,
                    help="archive format version (default 3)")
    ap.add_argument("--keep", metavar="DIR", type=Path,
                    help="generate into (and reuse from) DIR instead of build/bench")
    ap.add_argument("--no-cache", action="store_true",
                    help="generate into a temporary directory, removed afterwards")
    ap.add_argument("--regenerate", action="store_true", help="ignore a cached archive")
    ap.add_argument("--repeat", type=int, default=3, help="runs per command (default 3)")
    ap.add_argument("--no-text", action="store_true", help="skip pcpconform dump --format text")
    ap.add_argument("--profile", nargs="?", const="decode", default="", metavar="WHAT",
                    help="also run in-process passes under cProfile: a comma-separated "
                         "list of decode, jsonl, text (default: decode)")
    ap.add_argument("--top", type=int, default=10, help="profile rows to show (default 10)")
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1,
                    help="processes for generating the archive (default: all cores)")
    args = ap.parse_args(argv)
    unknown = {w.strip() for w in args.profile.split(",") if w.strip()} - {"decode", "jsonl", "text"}
    if unknown:
        ap.error(f"--profile: unknown pass {', '.join(sorted(unknown))} (decode, jsonl, text)")

    tmp: tempfile.TemporaryDirectory[str] | None = None
    if args.no_cache:
        tmp = tempfile.TemporaryDirectory(prefix="pcpconform-bench-")
        where = Path(tmp.name)
    else:
        where = args.keep if args.keep else ROOT / "build" / "bench"
    size_key = f"{args.size_mb:g}".replace(".", "p")
    base = where / f"bench-{size_key}mb-v{args.version}" / "bench"
    try:
        arch = None if args.regenerate else load_cached(base)
        if arch is None:
            print(f"generating {base} ({args.size_mb:g} MB, v{args.version}) ...",
                  file=sys.stderr)
            arch = generate(base, args.version, args.size_mb, max(1, args.jobs))
        else:
            print(f"using cached {base}", file=sys.stderr)

        pcpconform = console_script()
        cases = [
            Case("pmdumplog -a", _subprocess_case(["pmdumplog", "-a", str(base)]),
                 reference=True),
            Case("pcpconform dump --format jsonl",
                 _subprocess_case([pcpconform, "dump", "--format", "jsonl", str(base)])),
        ]
        if not args.no_text:
            cases.append(Case("pcpconform dump --format text",
                              _subprocess_case([pcpconform, "dump", "--format", "text",
                                                str(base)])))
        cases.append(Case("decode only: for r in Archive(b).results()",
                          lambda: decode_only(base)))
        for path in [Path(f"{base}.meta"), Path(f"{base}.index"), Path(f"{base}.0")]:
            path.read_bytes()            # warm the page cache for the first round
        measure(cases, max(1, args.repeat))
        print_table(arch, cases, max(1, args.repeat))
        startup = startup_seconds(max(1, args.repeat))
        if startup is not None:
            print(f"\n(python start + pcpconform imports, part of each subprocess figure: "
                  f"{startup:.2f} s)")
        passes = {"decode": ("the decode-only pass", decode_only),
                  "jsonl": ("write_jsonl to /dev/null", dump_to_devnull("jsonl")),
                  "text": ("write_text to /dev/null", dump_to_devnull("text"))}
        for what in filter(None, args.profile.split(",")):
            label, fn = passes[what.strip()]
            profile(label, lambda fn=fn: fn(base), args.top)
        return 1 if any(c.error for c in cases) else 0
    finally:
        if tmp is not None:
            tmp.cleanup()


if __name__ == "__main__":
    sys.exit(main())
