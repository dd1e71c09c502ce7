"""MMV reading, checking and dumping speed: the kit against ``mmvdump`` on the same files.

Two files, written by the kit's writer (``build_mmv``) once and cached under build/bench/mmv:
``limits``, at the MMV PMDA's limits (1023 metrics, the most a file may export, of every
type, indoms of up to 4000 instances, a string slot for every STRING value and every name,
version 2: long names; 63 435 values), and ``values100k`` (100 metrics of 1000 instances
each, every numeric type, 100 000 values). For each, in interleaved rounds, it times
``mmvdump FILE`` (output to /dev/null), ``read_mmv(FILE)`` (parsed and checked; values left as
columns until read), ``read_mmv`` with every metric's values made into ``Value`` tuples,
``check_mmv_file(FILE)``, and the dump in both formats (``dump_mmv`` to /dev/null: the text
listing, mmvdump's counterpart, and JSON Lines) in-process; then the commands ``pcpconform
check FILE`` and ``pcpconform dump [--format jsonl] FILE`` as processes, start-up included.
It prints the best time of each and the speed relative to mmvdump (``x mmvdump`` = mmvdump's
time / the kit's: 1.0x or more is as fast or faster), by wall clock and by CPU. Timings are
printed, never asserted. Figures: benchmarks/README.md.

    .venv/bin/python benchmarks/bench_mmv.py [--repeat 5] [--scale 1.0] [--only limits|values100k] [--profile]
"""

from __future__ import annotations

import argparse
import cProfile
import functools
import importlib
import os
import pstats
import random
import shutil
import struct
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_decode import ROOT, Case, _subprocess_case, measure

from pcpconform.mmv import Indom, Instance, Metric, MmvFile, Value, build_mmv, read_mmv
from pcpconform.mmv import model as mm

GENERATOR_VERSION = 1
SEED = 20261124
MMVDUMP = ("/var/lib/pcp/pmdas/mmv/mmvdump", "/usr/lib/pcp/pmdas/mmv/mmvdump")
TYPES = (mm.TYPE_I32, mm.TYPE_U32, mm.TYPE_I64, mm.TYPE_U64, mm.TYPE_FLOAT, mm.TYPE_DOUBLE,
         mm.TYPE_STRING, mm.TYPE_ELAPSED)


def contents(scale: float) -> MmvFile:
    """1023 metrics over indoms of 4000, 1000, 100 and 10 instances (times scale) and
    singular ones; one metric in four is a STRING; long names make it version 2."""
    rng = random.Random(SEED)
    sizes = [max(1, int(n * scale)) for n in (4000, 1000, 100, 10)]
    indoms = tuple(Indom(serial, tuple(Instance(k, f"instance-{serial}-{k:06d}-" + "x" * (k % 60))
                                       for k in range(n)),
                         f"indom {serial}", "instances of a benchmark indom")
                   for serial, n in zip((11, 12, 13, 14), sizes))
    # most metrics on small indoms, a few on the large ones: about 40 values per metric
    weights = {0: 0.005, -1: 0.395, 11: 0.005, 12: 0.02, 13: 0.175, 14: 0.4}
    metrics = []
    for item in range(1, 1024):
        indom = rng.choices(list(weights), list(weights.values()))[0]
        mtype = rng.choice(TYPES)
        owners: list[int | None] = [None] if mm.is_singular(indom) else \
            [i.internal for i in indoms[indom - 11].instances]
        values = []
        for inst in owners:
            if mtype == mm.TYPE_STRING:
                text = f"value {item}/{inst} " + "s" * rng.randrange(0, 200)
                values.append(Value(inst, struct.pack("<q", len(text)), 0, text))
            elif mtype in (mm.TYPE_FLOAT, mm.TYPE_DOUBLE):
                values.append(Value.of(mtype, rng.uniform(-1e6, 1e6), inst))
            else:
                values.append(Value.of(mtype, rng.randrange(0, 2**31), inst))
        name = f"bench.group{item % 16}.metric{item:04d}" + ("_long" * 15 if item % 3 == 0 else "")
        metrics.append(Metric(name, item, mtype, mm.SEM_INSTANT, 0, indom,
                              f"metric {item}", None if item % 2 else "long help " * 20,
                              tuple(values)))
    return MmvFile(2, 1 << 32, 1 << 32, 0, 0, 77, indoms, tuple(metrics))


def values_100k() -> MmvFile:
    """100 metrics of every numeric type over one indom of 1000 instances: 100 000 values."""
    rng = random.Random(SEED + 1)
    indom = Indom(1, tuple(Instance(k, f"cpu{k}") for k in range(1000)))
    numeric = [t for t in TYPES if t != mm.TYPE_STRING]
    metrics = []
    for item in range(1, 101):
        mtype = numeric[item % len(numeric)]
        values = tuple(Value.of(mtype, rng.uniform(-1e6, 1e6) if mtype in (mm.TYPE_FLOAT, mm.TYPE_DOUBLE)
                                else rng.randrange(0, 2**31), k) for k in range(1000))
        metrics.append(Metric(f"host.metric{item:03d}", item, mtype, mm.SEM_COUNTER, 0, 1,
                              f"metric {item}", None, values))
    return MmvFile(1, 1 << 32, 1 << 32, 0, 0, 78, (indom,), tuple(metrics))


def bench_file(scale: float, regenerate: bool, which: str = "limits") -> Path:
    # the name is a metric name component, as the PMDA requires of a file it serves
    key = f"{scale:g}".replace(".", "p").replace("-", "m")
    name = f"limits_s{key}_g{GENERATOR_VERSION}" if which == "limits" else f"values100k_g{GENERATOR_VERSION}"
    path = ROOT / "build" / "bench" / "mmv" / name
    if regenerate or not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_bytes(build_mmv(contents(scale) if which == "limits" else values_100k()))
        tmp.replace(path)
    return path


def find_mmvdump() -> str | None:
    return next((p for p in MMVDUMP if Path(p).exists()), shutil.which("mmvdump"))


def validator() -> Callable[[Path], object] | None:
    """check_mmv_file, where pcpconform.check.mmv is there."""
    try:
        fn: Callable[[Path], object] = importlib.import_module("pcpconform.check.mmv").check_mmv_file
    except (ImportError, AttributeError):
        return None
    return fn


def check_clean(check: Callable[[Path], object], path: Path) -> None:
    report = check(path)
    errors = getattr(report, "errors", 0)
    if errors:
        raise RuntimeError(f"{errors} errors in the benchmark file")


def profile(fn: Callable[[], object], top: int) -> None:
    prof = cProfile.Profile()
    prof.enable()
    fn()
    prof.disable()
    stats = pstats.Stats(prof, stream=sys.stdout)
    for key in ("cumulative", "tottime"):
        print(f"\n--- by {key} ---")
        stats.sort_stats(key).print_stats(top)


def dump_case(path: Path, fmt: str) -> Callable[[], None]:
    def run() -> None:
        from pcpconform.dump.mmv import dump_mmv

        with open(os.devnull, "w", encoding="utf-8") as out:
            dump_mmv(path, out, fmt)
    return run


def cases_for(path: Path) -> list[Case]:
    cases: list[Case] = []
    dump = find_mmvdump()
    if dump:
        cases.append(Case("mmvdump FILE > /dev/null", _subprocess_case([dump, str(path)]),
                          reference=True))

    def read() -> None:
        read_mmv(path)

    def read_all() -> None:
        for m in read_mmv(path).metrics:
            m.values                           # noqa: B018 - makes the metric's Value tuples

    cases.append(Case("read_mmv(FILE)", read))
    cases.append(Case("read_mmv(FILE), every Value made", read_all))
    check = validator()
    if check is not None:
        cases.append(Case("check_mmv_file(FILE)", lambda: check_clean(check, path)))
    cases.append(Case("dump text (dump_mmv)", dump_case(path, "text")))
    cases.append(Case("dump jsonl (dump_mmv)", dump_case(path, "jsonl")))
    script = Path(sys.executable).with_name("pcpconform")      # the installed command
    command = [str(script)] if script.exists() else [sys.executable, "-c",
                                                      "import sys; from pcpconform.cli import main; sys.exit(main())"]
    cases.append(Case("$ pcpconform check FILE", _subprocess_case([*command, "check", "-q", str(path)])))
    cases.append(Case("$ pcpconform dump FILE", _subprocess_case([*command, "dump", str(path)])))
    cases.append(Case("$ pcpconform dump --format jsonl FILE",
                      _subprocess_case([*command, "dump", "--format", "jsonl", str(path)])))
    # what the commands above spend before reading the file: the interpreter and the imports
    cases.append(Case("$ start-up: the dump command's imports",
                      _subprocess_case([sys.executable, "-c", "import pcpconform.cli, pcpconform.dump.mmv"])))
    # the floor of any command run by this interpreter: its start alone, site included
    cases.append(Case("$ start-up: the interpreter alone", _subprocess_case([sys.executable, "-c", "pass"])))
    return cases


def print_table(path: Path, cases: list[Case], repeat: int) -> bool:
    mmv = read_mmv(path)
    nvalues = sum(len(m.values) for m in mmv.metrics)
    ninst = sum(len(d.instances) for d in mmv.indoms)
    size = path.stat().st_size / 1e6
    print(f"\nfile {path.name}: {size:.2f} MB, MMV v{mmv.version}, {len(mmv.metrics)} metrics, "
          f"{len(mmv.indoms)} indoms, {ninst} instances, {nvalues} values")
    from pcpconform.dump import mmv_kernel
    print("the dump's value kernel: " + ("built" if mmv_kernel.KERNEL_ERROR is None
                                        else f"NOT BUILT ({mmv_kernel.KERNEL_ERROR}): every run declined"))
    print(f"best of {repeat} runs: wall clock and CPU (user + system: the fairer figure on a busy"
          " machine);\nx mmvdump = mmvdump's time / the kit's (1.0x or more: as fast or faster)\n")
    ref = next((c for c in cases if c.reference and c.times), None)
    head = f"{'command':<40} {'wall s':>7} {'cpu s':>7}  {'wall':>12} {'cpu':>12}"
    print(head)
    print("-" * len(head))
    failed = False
    for c in cases:
        if c.error or not c.times:
            print(f"{c.label:<40} {'FAILED':>7}  {c.error}")
            failed = True
            continue
        wall, cpu = min(c.times), min(c.cpu)
        if c.reference:
            speeds = f"{'(ref)':>12} {'(ref)':>12}"
        elif ref:
            speeds = f"{min(ref.times) / wall:11.2f}x {min(ref.cpu) / max(cpu, 1e-3):11.2f}x"
        else:
            speeds = f"{'n/a':>12} {'n/a':>12}"
        print(f"{c.label:<40} {wall:7.3f} {cpu:7.3f}  {speeds}")
    return failed


def profiled(path: Path) -> None:
    read_mmv(path)
    dump_case(path, "text")()
    dump_case(path, "jsonl")()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--scale", type=float, default=1.0, help="the limits file's indom sizes times this")
    ap.add_argument("--only", choices=("limits", "values100k"), help="one of the two files")
    ap.add_argument("--regenerate", action="store_true")
    ap.add_argument("--profile", action="store_true", help="cProfile read_mmv and the dumps")
    ap.add_argument("--top", type=int, default=15)
    args = ap.parse_args(argv)
    failed = False
    for which in ("limits", "values100k"):
        if args.only and which != args.only:
            continue
        path = bench_file(args.scale, args.regenerate, which)
        if args.profile:
            profile(functools.partial(profiled, path), args.top)
            continue
        cases = cases_for(path)
        path.read_bytes()                      # warm the page cache for every case alike
        measure(cases, max(1, args.repeat))
        failed |= print_table(path, cases, args.repeat)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
