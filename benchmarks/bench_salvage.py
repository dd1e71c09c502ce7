"""Salvage, measured (spec/salvage.md SALVAGE-VERIFY-2): what it keeps of damaged archives
against what a perfect salvage could keep and against libpcp's own best, and whether every
libpcp reads what it writes; and its speed against pmdumplog reading the same archive.

Inputs: every archive of the invalid corpus, PCP QA's damaged archives (badarchives/), and
``--mutants N`` fuzzed mutants of real archives (tests/differential/libpcp/salvage_sweep.py:
the kit's, pmi's of three PCP versions, pmlogger's, pmlogextract's, pmlogrewrite's and PCP
QA's, versions 2 and 3, some compressed). For each input: values salvage keeps, values of
the original among them against a perfect salvage (mutants only), invented values (by the
raw input record each came from), and per referee libpcp's own best (the values a PMAPI
forward read of the input extracts before it stops) and whether the output reads clean
(forward, interpolated, backwards). Tables are printed; ``--jsonl FILE`` keeps every input's
line. Nothing is asserted: tests/differential/test_salvage_vs_libpcp.py asserts a bounded run.

    .venv/bin/python benchmarks/bench_salvage.py [--mutants 1000] [--seed 0] [--jsonl FILE]
                                                 [--referee NAME ...] [--no-speed]
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pcpconform.salvage import salvage_archive  # noqa: E402
from pcpconform.salvage.measure import archive_values, invented_values  # noqa: E402
from pcpconform.salvage.salvage import Provenance  # noqa: E402
from tests.differential.libpcp.referees import REFEREES, Referee, archive_files  # noqa: E402
from tests.differential.libpcp.salvage_sweep import Outcome, read_with, salvage_sweep  # noqa: E402

BADARCHIVES = Path("/var/lib/pcp/testsuite/badarchives")


def _bases(directory: Path) -> list[Path]:
    names = set()
    for p in directory.iterdir():
        parts = p.name.split(".")
        for k in range(len(parts) - 1, 0, -1):
            if parts[k] in ("meta", "index") or parts[k].isdigit():
                names.add(".".join(parts[:k]))
                break
    return [directory / n for n in sorted(names)]


def damaged_inputs(work: Path) -> list[tuple[str, Path]]:
    """(name, base) of the invalid corpus's archives and of PCP QA's damaged archives, each
    copied under a name of its own."""
    out = []
    for case in sorted((ROOT / "corpus" / "cases" / "invalid").glob("*/case.json")):
        doc = json.loads(case.read_text())
        if doc.get("format", "archive") == "archive":
            out.append((doc["id"], case.parent / doc["archive"]))
    if BADARCHIVES.is_dir():
        out += [(f"qa-bad-{b.name}", b) for b in _bases(BADARCHIVES)]
    copied = []
    for k, (name, src) in enumerate(out):
        dest = work / "damaged" / f"d{k:04d}"
        dest.parent.mkdir(parents=True, exist_ok=True)
        for f in archive_files(src):
            shutil.copy(f, dest.with_name(dest.name + f.name[len(src.name):]))
        copied.append((name, dest))
    return copied


def salvage_damaged(inputs: list[tuple[str, Path]], work: Path) -> list[dict[str, Any]]:
    rows = []
    for name, base in inputs:
        out = work / "damaged-out" / base.name
        prov: list[Provenance] = []
        row: dict[str, Any] = {"input": name, "base": base, "out": None}
        try:
            report = salvage_archive(base, out, provenance=prov)
        except Exception as exc:        # no such archive (the case removes every file): usage
            row["failure"] = f"{type(exc).__name__}: {exc}"
            rows.append(row)
            continue
        row.update(exit=report.exit_status, failure=report.failure, out_errors=report.out_errors,
                   values_lost=report.values_lost)
        if report.failure is None:
            row["out"] = out
            row["kept"] = len(archive_values(out))
            row["invented"] = len(invented_values(base, out, prov))
        rows.append(row)
    return rows


def read_damaged(rows: list[dict[str, Any]], referee: Referee) -> None:
    ins = read_with(referee, [r["base"] for r in rows if archive_files(r["base"])], "--values")
    outs = read_with(referee, [r["out"] for r in rows if r["out"] is not None], "--replay")
    for r in rows:
        got = ins.get(r["base"].name, {})
        values = got.get("values") if isinstance(got.get("values"), list) else []
        stopped = bool(got.get("open") or got.get("stop") or got.get("crash") or got.get("hang")) or not got
        entry = {"in_values": len(values), "in_stopped": stopped}
        if r["out"] is not None:
            o = outs.get(r["out"].name, {})
            entry["out_ok"] = not (o.get("open") or o.get("stop") or o.get("replay") or o.get("crash")
                                   or o.get("hang") or o.get("script_error"))
        r.setdefault("libpcp", {})[referee.name] = entry


def _pct(a: int, b: int) -> str:
    return "n/a" if not b else f"{100 * a / b:.2f}%"


def mutant_table(outcomes: list[Outcome], referees: Iterable[Referee]) -> str:
    groups: dict[str, list[Outcome]] = defaultdict(list)
    for o in outcomes:
        groups[f"{o.writer} v{o.version}{' compressed' if o.compressed else ''}"].append(o)
    groups["all"] = outcomes
    lines = ["| inputs | mutants | one-record | perfect (one-record) | recovered | ratio | invented | "
             "no output | output errors | altered kept |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for name, group in sorted(groups.items(), key=lambda kv: (kv[0] == "all", kv[0])):
        one = [o for o in group if o.one_record]
        perfect = sum(o.perfect for o in one)
        recovered = sum(o.recovered for o in one)
        lines.append(f"| {name} | {len(group)} | {len(one)} | {perfect} | {recovered} | {_pct(recovered, perfect)} | "
                     f"{sum(o.invented for o in group)} | {sum(1 for o in group if o.failure or o.crash)} | "
                     f"{sum(1 for o in group if o.out_errors)} | {sum(o.altered for o in group)} |")
    lines += ["", "| referee | outputs read clean | salvage >= libpcp's best | libpcp stops early | "
              "salvage more there | equal there (nothing of a perfect salvage after the stop) | "
              "fewer (singular metric, SALVAGE-RESULT-4) |", "|---|---|---|---|---|---|---|"]
    for ref in referees:
        rows = [o for o in outcomes if ref.name in o.libpcp]
        outs = [o for o in rows if "out_ok" in o.libpcp[ref.name]]
        clean = sum(1 for o in outs if o.libpcp[ref.name]["out_ok"])
        ge = sum(1 for o in rows if o.genuine >= o.libpcp[ref.name]["in_genuine"])
        stopped = [o for o in rows if o.libpcp[ref.name]["in_stopped"]]
        more = sum(1 for o in stopped if o.genuine > o.libpcp[ref.name]["in_genuine"])
        equal = sum(1 for o in stopped if o.genuine == o.libpcp[ref.name]["in_genuine"]
                    and o.perfect <= o.libpcp[ref.name]["in_genuine"])
        fewer = sum(1 for o in rows if o.genuine < o.libpcp[ref.name]["in_genuine"] and o.singular)
        lines.append(f"| {ref.name} | {clean}/{len(outs)} | {ge}/{len(rows)} | {len(stopped)} | {more} | "
                     f"{equal} | {fewer} |")
    return "\n".join(lines)


def damaged_table(rows: list[dict[str, Any]], referees: Iterable[Referee]) -> str:
    refs = list(referees)
    lines = ["| inputs | salvaged | nothing to salvage | values kept | invented | output errors | "
             + " | ".join(f"{r.name}: outputs clean, libpcp's best, salvage more / equal / fewer" for r in refs)
             + " |", "|---|---|---|---|---|---|" + "---|" * len(refs)]
    for name, group in (("invalid corpus", [r for r in rows if not r["input"].startswith("qa-bad-")]),
                        ("PCP QA badarchives", [r for r in rows if r["input"].startswith("qa-bad-")])):
        out = [r for r in group if r["out"] is not None]
        cells = []
        for ref in refs:
            clean = sum(1 for r in out if r["libpcp"][ref.name]["out_ok"])
            best = sum(r["libpcp"][ref.name]["in_values"] for r in group)
            cmp = [(r.get("kept", 0), r["libpcp"][ref.name]["in_values"]) for r in group]
            cells.append(f"{clean}/{len(out)}, {best}, {sum(k > v for k, v in cmp)} / {sum(k == v for k, v in cmp)} "
                         f"/ {sum(k < v for k, v in cmp)}")
        lines.append(f"| {name} | {len(out)} | {len(group) - len(out)} | {sum(r.get('kept', 0) for r in out)} | "
                     f"{sum(r.get('invented', 0) for r in out)} | {sum(1 for r in out if r['out_errors'])} | "
                     + " | ".join(cells) + " |")
    fewer = {r["input"]: [f"{ref.name}: {r['libpcp'][ref.name]['in_values']}" for ref in refs
                          if r.get("kept", 0) < r["libpcp"][ref.name]["in_values"]] for r in rows}
    lines += ["", "Where libpcp's reading of the input gives more values than salvage keeps (salvage's count, "
              "then libpcp's):", ""]
    lines += [f"* {name}: {next(r.get('kept', 0) for r in rows if r['input'] == name)}; {', '.join(refs_)}"
              for name, refs_ in fewer.items() if refs_]
    return "\n".join(lines)


def speed(work: Path, size_mb: int = 20) -> str:
    """salvage of a large intact archive against pmdumplog -a of it (both read every record)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from bench_decode import console_script, generate, load_cached  # type: ignore[import-not-found]

    # the archive bench_check.py and bench_decode.py use (cached under build/bench)
    base = ROOT / "build" / "bench" / f"bench-{size_mb}mb-v3" / "bench"
    if load_cached(base) is None:
        base.parent.mkdir(parents=True, exist_ok=True)
        generate(base, 3, size_mb, 2)
    timings: dict[str, list[float]] = {"pmdumplog -a": [], "salvage (verify)": [], "salvage --no-verify": []}
    for _ in range(3):
        for name in timings:
            out = work / "speed"
            shutil.rmtree(out, ignore_errors=True)
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            if name == "pmdumplog -a":
                subprocess.run(["pmdumplog", "-a", str(base)], stdout=subprocess.DEVNULL, check=True)
            else:
                cmd = [console_script(), "salvage", str(base), str(out / "o")]
                subprocess.run(cmd + (["--no-verify"] if "no-verify" in name else []), stdout=subprocess.DEVNULL,
                               check=False)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            timings[name].append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    c = min(timings["pmdumplog -a"])
    mb = sum(p.stat().st_size for p in archive_files(base)) / 1e6
    return "\n".join([f"| {name} | {min(t):.2f} s CPU | {mb / min(t):.1f} MB/s | {min(t) / c:.2f}x |"
                      for name, t in timings.items()])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--mutants", type=int, default=1000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--jsonl", type=Path)
    p.add_argument("--referee", action="append", choices=[r.name for r in REFEREES])
    p.add_argument("--no-speed", action="store_true")
    args = p.parse_args(argv)
    referees = [r for r in REFEREES if r.available() and (not args.referee or r.name in args.referee)]
    work = Path(tempfile.mkdtemp(prefix="pcpconform-bench-salvage-"))
    try:
        started = time.monotonic()
        damaged = salvage_damaged(damaged_inputs(work), work)
        sweep = salvage_sweep(args.mutants, work, rng_seed=args.seed,
                              progress=lambda s: print(s, file=sys.stderr, flush=True))
        salvaged_in = time.monotonic() - started
        for ref in referees:
            print(f"reading with {ref.name}", file=sys.stderr, flush=True)
            read_damaged(damaged, ref)
            sweep.read_with(ref)
        print(f"## Damaged archives ({len(damaged)})\n\n{damaged_table(damaged, referees)}\n")
        print(f"## Fuzzed mutants of real archives ({args.mutants}, seed {args.seed})\n\n"
              f"{mutant_table(sweep.outcomes, referees)}\n")
        print(f"salvaged in {salvaged_in:.0f} s of wall clock (measurement included)\n")
        if not args.no_speed:
            print("## Speed (20 MB v3 archive, best of 3)\n\n| run | CPU | throughput | to pmdumplog |\n"
                  "|---|---|---|---|\n" + speed(work))
        if args.jsonl:
            with args.jsonl.open("w") as fh:
                for row in damaged:
                    fh.write(json.dumps({k: str(v) if isinstance(v, Path) else v for k, v in row.items()}) + "\n")
                for o in sweep.outcomes:
                    fh.write(json.dumps(o.as_json(), default=str) + "\n")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
