"""MMV reading speed: the kit's reader (and validator) against ``mmvdump`` on the same file.

The file is at the MMV PMDA's limits: 1023 metrics (the most a file may export), indoms of
up to 4000 instances, every type, and a string slot for every STRING value and every name
(version 2: long names), written by the kit's writer (``build_mmv``) once and cached under
build/bench/. Then, in interleaved rounds, it times ``mmvdump FILE`` (output to /dev/null),
``read_mmv(FILE)`` (parsed and checked; values left as columns until read), ``read_mmv`` with
every metric's values made into ``Value`` tuples, and ``check_mmv_file(FILE)`` in-process
(the validator when ``pcpconform.check.mmv`` is there), and prints the best time of each and
the ratio to mmvdump (kit/mmvdump: below 1 is faster). Timings are printed, never asserted.

Best of 9, CPU time (load average 6 on 2 CPUs; wall clock is noisier there): mmvdump
0.023 s, read_mmv 0.011 s (0.49x), read_mmv with every value made 0.033 s (1.43x),
check_mmv_file 0.015 s (0.65x); before the column paths, read_mmv (every value made) took
0.046 s (1.9x) and check_mmv_file 0.234 s (9.8x).

    .venv/bin/python benchmarks/bench_mmv.py [--repeat 5] [--scale 1.0] [--profile]
"""

from __future__ import annotations

import argparse
import cProfile
import importlib
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


def bench_file(scale: float, regenerate: bool) -> Path:
    # the name is a metric name component, as the PMDA requires of a file it serves
    key = f"{scale:g}".replace(".", "p").replace("-", "m")
    path = ROOT / "build" / "bench" / "mmv" / f"limits_s{key}_g{GENERATOR_VERSION}"
    if regenerate or not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_bytes(build_mmv(contents(scale)))
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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--scale", type=float, default=1.0, help="indom sizes times this")
    ap.add_argument("--regenerate", action="store_true")
    ap.add_argument("--profile", action="store_true", help="cProfile read_mmv")
    ap.add_argument("--top", type=int, default=15)
    args = ap.parse_args(argv)
    path = bench_file(args.scale, args.regenerate)
    mmv = read_mmv(path)
    nvalues = sum(len(m.values) for m in mmv.metrics)
    ninst = sum(len(d.instances) for d in mmv.indoms)
    if args.profile:
        profile(lambda: read_mmv(path), args.top)
        return 0
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

    cases.append(Case("read_mmv(FILE) in-process", read))
    cases.append(Case("read_mmv(FILE), every Value made", read_all))
    check = validator()
    if check is not None:
        cases.append(Case("check_mmv_file(FILE) in-process", lambda: check_clean(check, path)))
    path.read_bytes()                          # warm the page cache for every case alike
    measure(cases, max(1, args.repeat))
    size = path.stat().st_size / 1e6
    print(f"\nfile {path}: {size:.2f} MB, MMV v{mmv.version}, {len(mmv.metrics)} metrics, "
          f"{len(mmv.indoms)} indoms, {ninst} instances, {nvalues} values")
    print(f"best of {args.repeat} runs: wall clock, and CPU (user + system, the fairer figure"
          f" on a busy machine); ratio = kit / mmvdump (below 1: faster)\n")
    ref = next((c for c in cases if c.reference and c.times), None)
    head = (f"{'command':<36} {'wall s':>7} {'MB/s':>7} {'cpu s':>7}  {'wall ratio':>10}"
            f" {'cpu ratio':>10}")
    print(head)
    print("-" * len(head))
    failed = False
    for c in cases:
        if c.error or not c.times:
            print(f"{c.label:<36} {'FAILED':>7}  {c.error}")
            failed = True
            continue
        wall, cpu = min(c.times), min(c.cpu)
        if c.reference:
            ratios = f"{'(ref)':>10} {'(ref)':>10}"
        elif ref:
            ratios = f"{wall / min(ref.times):9.2f}x {cpu / max(min(ref.cpu), 1e-3):9.2f}x"
        else:
            ratios = f"{'n/a':>10} {'n/a':>10}"
        print(f"{c.label:<36} {wall:7.3f} {size / wall:7.1f} {cpu:7.3f}  {ratios}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
