#!/usr/bin/env python3
"""Peak memory (RSS) of check, dump, rebuild and interp as archives grow.

Run from the project root::

    .venv/bin/python benchmarks/bench_memory.py [--sizes 20,200,1000] [--tiny 2000000] [--keep DIR]

Two kinds of archive, generated into ``--keep`` (default ``build/bench``) and reused:

* the shape of ``bench_decode.py`` (254 values a result, ~3.9 KB records) at each of
  ``--sizes`` MB;
* ``--tiny`` results of one singular U32 counter and nothing else (40-byte records, the
  shape that made ``interp`` run out of memory), packed with ``encode.encode_result``.

Each command runs in a child of a fresh ``python -c`` wrapper that reports the child's
``ru_maxrss``, so every figure is one process's peak. The table shows peak RSS in MB per
archive and the ratio to the smallest archive of the same kind (flat memory reads ~1.0x).
Nothing is asserted; exit status 1 if a command fails.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

from pcpconform.fastpath import PathStats
from pcpconform.format.pmtypes import PM_INDOM_NULL, PmSem, PmType, PmUnits, Timestamp
from pcpconform.io.decoded import DecodedResult, DecodedValueSet
from pcpconform.io.encode import encode_result
from pcpconform.io.writer import ArchiveWriter, LabelFields

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
TINY_PMID = (60 << 22) | 1          # 60.0.1
TINY_START = 1_700_000_000
_WRAPPER = ("import resource, subprocess, sys\n"
            "rc = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL).returncode\n"
            "print(rc, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n")


def tiny_archive(base: Path, results: int) -> Path:
    """``results`` one-value results of ``tiny.counter``, 1 s apart (cached by count)."""
    stamp = base.with_name(base.name + ".count")
    if stamp.exists() and stamp.read_text() == str(results) and Path(f"{base}.0").exists():
        return base
    base.parent.mkdir(parents=True, exist_ok=True)
    w = ArchiveWriter(base, 3)
    t0 = Timestamp(TINY_START, 0)
    w.start(LabelFields(hostname="tiny.example.com", timezone="UTC", start=t0, pid=1,
                        zoneinfo=":UTC"))
    w.put_desc(TINY_PMID, PmType.U32, PM_INDOM_NULL, PmSem.COUNTER, PmUnits(), ["tiny.counter"])
    w.put_index(t0)
    types: dict[int, int] = {TINY_PMID: PmType.U32}
    chunk: list[bytes] = []
    for k in range(results):
        vs = DecodedValueSet(TINY_PMID, 1, 0, None, ((-1,), ((k * 7) & 0xFFFFFFFF,)))
        record = encode_result(3, DecodedResult(Timestamp(TINY_START + k, 0), [vs], None, True), types,
                               PathStats())
        assert record is not None
        chunk.append(record)
        if len(chunk) == 65536:
            w.put_result_bytes(b"".join(chunk))
            chunk.clear()
    w.put_result_bytes(b"".join(chunk))
    w.put_index(Timestamp(TINY_START + results - 1, 0))
    w.close()
    stamp.write_text(str(results))
    return base


def bench_archive(where: Path, size_mb: float) -> Path:
    sys.path.insert(0, str(HERE))
    import bench_decode
    base = where / f"bench-{size_mb:g}mb-v3" / "bench"
    if bench_decode.load_cached(base) is None:
        print(f"generating {base} ...", file=sys.stderr)
        bench_decode.generate(base, 3, size_mb, 1)
    return base


def peak_rss_mb(argv: list[str]) -> tuple[float, float, int]:
    """(peak RSS in MB, wall seconds, exit status) of one run of ``argv``."""
    began = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", _WRAPPER, *argv], capture_output=True,
                         text=True, check=True).stdout.split()
    return int(out[1]) / 1024, time.perf_counter() - began, int(out[0])


def commands(base: Path, metric: str, scratch: Path) -> dict[str, list[str]]:
    tool = str(Path(sys.executable).with_name("pcpconform"))
    return {
        "check": [tool, "check", "--quiet", str(base)],
        "dump --format jsonl": [tool, "dump", "--format", "jsonl", str(base)],
        "dump --format text": [tool, "dump", str(base)],
        "rebuild": [tool, "rebuild", "-q", str(base), str(scratch / "rebuilt")],
        "interp --format csv": [tool, "interp", str(base), metric, "--interval", "600",
                                "--format", "csv"],
        "interp --format json": [tool, "interp", str(base), metric, "--interval", "600",
                                 "--format", "json"],
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="20,200,1000",
                    help="bench-shape sizes in MB (default 20,200,1000; the 1 GB one builds in ~1 min)")
    ap.add_argument("--tiny", default="200000,2000000",
                    help="result counts of the tiny archives (default 200000,2000000)")
    ap.add_argument("--keep", type=Path, default=ROOT / "build" / "bench")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON too")
    ap.add_argument("--commands", help="only these rows, comma-separated (e.g. check,interp --format csv)")
    args = ap.parse_args(argv)
    archives: list[tuple[str, str, Path, str]] = []
    for size in (float(s) for s in args.sizes.split(",") if s):
        base = bench_archive(args.keep, size)
        archives.append(("bench", f"{size:g} MB", base, "network.interface.in.bytes"))
    for n in (int(s) for s in args.tiny.split(",") if s):
        base = tiny_archive(args.keep / f"tiny-{n}" / "tiny", n)
        mb = Path(f"{base}.0").stat().st_size / 1e6
        archives.append(("tiny", f"{n} results ({mb:.0f} MB)", base, "tiny.counter"))
    scratch = args.keep / "memory-scratch"
    scratch.mkdir(parents=True, exist_ok=True)
    failed = False
    figures: list[dict[str, object]] = []
    smallest: dict[tuple[str, str], float] = {}
    print(f"{'command':24} {'archive':32} {'peak RSS MB':>11} {'seconds':>8} {'vs smallest':>12}")
    for kind, label, base, metric in archives:
        for name, cmd in commands(base, metric, scratch).items():
            if args.commands and name not in args.commands.split(","):
                continue
            rss, secs, rc = peak_rss_mb(cmd)
            failed |= rc != 0
            first = smallest.setdefault((kind, name), rss)
            shown = "FAILED" if rc else f"{rss:11.1f}"
            print(f"{name:24} {kind + ' ' + label:32} {shown:>11} {secs:8.1f} {rss / first:11.2f}x")
            figures.append({"command": name, "archive": f"{kind} {label}", "rss_mb": round(rss, 1),
                            "seconds": round(secs, 2), "status": rc})
    if args.json:
        print(json.dumps(figures))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
