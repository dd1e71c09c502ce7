"""Cases per second of ``pcpconform conform`` with the kit's own adapter, one-shot form
(a process per unit) against persistent form (a process per worker), over the whole corpus
or the suites and cases asked for.

    .venv/bin/python benchmarks/bench_conform.py                 # every suite, -j 2
    .venv/bin/python benchmarks/bench_conform.py --suite validator --suite reader -j 4
    .venv/bin/python benchmarks/bench_conform.py --persistent-only

Prints, per form, the units run, the seconds, the units per second and the verdicts; the
persistent form must also agree with the one-shot form unit for unit. Exit status 1 when a
form does not pass every unit or the two disagree (never because of a time).
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from pathlib import Path

from pcpconform.conform.protocol import SUITES
from pcpconform.conform.runner import ConformReport, run_conformance

ROOT = Path(__file__).resolve().parents[1]
KIT = f"{shlex.quote(sys.executable)} -m pcpconform.conform.adapters.kit"


def _one(form: str, args: argparse.Namespace) -> ConformReport:
    started = time.perf_counter()
    report = run_conformance(args.corpus, KIT, suites=args.suite or SUITES, globs=args.cases, jobs=args.jobs,
                             persistent=(form == "persistent"), timeout=args.timeout)
    seconds = time.perf_counter() - started
    n = len(report.results)
    counts = ", ".join(f"{c} {v}" for v, c in report.counts().items() if c)
    print(f"{form:10} {n:5d} units  {seconds:7.2f} s  {n / seconds:8.1f} units/s  ({counts})")
    for suite in report.suites:
        per = [r.seconds for r in report.results if r.suite == suite]
        print(f"{'':10} {suite:9} {len(per):4d} units, {sum(per) / max(len(per), 1) * 1000:7.1f} ms each")
    return report


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--corpus", default=str(ROOT / "corpus"))
    p.add_argument("--suite", action="append", choices=SUITES)
    p.add_argument("--cases", action="append", default=[], metavar="GLOB")
    p.add_argument("-j", "--jobs", type=int, default=2)
    p.add_argument("--timeout", type=float, default=120.0)
    p.add_argument("--persistent-only", action="store_true", help="skip the (slow) one-shot form")
    args = p.parse_args(argv)
    forms = ["persistent"] if args.persistent_only else ["one-shot", "persistent"]
    reports = {form: _one(form, args) for form in forms}
    status = 0 if all(r.ok for r in reports.values()) else 1
    if len(reports) == 2:
        a, b = ({(r.suite, r.case): r.verdict for r in rep.results} for rep in reports.values())
        differ = sorted(k for k in a.keys() & b.keys() if a[k] != b[k])
        if differ:
            print(f"the two forms disagree on {len(differ)} units, first {differ[0]}: {a[differ[0]].value} "
                  f"one-shot, {b[differ[0]].value} persistent")
            status = 1
        if a.keys() != b.keys():     # the corpus changed between the runs
            print(f"only one form ran {len(a.keys() ^ b.keys())} units (the corpus changed in between)")
        one, per = (reports[f].seconds for f in forms)
        print(f"persistent / one-shot: {one / per:.1f}x faster")
    return status


if __name__ == "__main__":
    sys.exit(main())
