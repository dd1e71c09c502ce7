"""``pcpconform fuzz``: a structure-aware fuzzer driven by the record schemas.

    pcpconform fuzz --target 'pmdumplog -a {archive}' [--chroot ROOT] [--time S] [--runs N]
                    [--seed N] [-j N] [--dask ADDRESS] [--findings DIR] [--differential]
    pcpconform fuzz --impl CMD ...             a conformance reader adapter, dumps compared
    pcpconform fuzz --replay FINDING           run a finding's reproducer again
    pcpconform fuzz --promote FINDING [--corpus DIR]

Exit status: 0 no findings, 1 findings (listed), 2 the campaign could not be run.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from pathlib import Path

from pcpconform.cli.cluster import dask_cluster
from pcpconform.errors import UsageError

__all__ = ["add_arguments", "run"]


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1: {text!r}")
    return value


def _seconds(text: str) -> float:
    units = {"s": 1, "m": 60, "min": 60, "h": 3600}
    for suffix in sorted(units, key=len, reverse=True):
        if text.endswith(suffix):
            text, scale = text[: -len(suffix)], units[suffix]
            break
    else:
        scale = 1
    try:
        value = float(text) * scale
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a duration: {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError("a duration must be positive")
    return value


def add_arguments(p: argparse.ArgumentParser) -> None:
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--target", metavar="CMD",
                      help="command run on each mutant, without a shell: {archive} (the mutant's base "
                           "path), {dir}, {mmv} (an MMV file), {config} (a derived-metric config)")
    what.add_argument("--impl", metavar="CMD",
                      help="a conformance reader adapter (spec/conformance.md): run as 'CMD reader "
                           "ARCHIVE', its dump compared with the kit's")
    what.add_argument("--promote", metavar="FINDING", help="turn a finding directory into a corpus case")
    what.add_argument("--replay", metavar="FINDING", help="run a finding's reproducer again and say "
                                                         "whether it still gives its signature")
    p.add_argument("--chroot", metavar="ROOT", help="run the target inside this root (files copied under ROOT/tmp)")
    p.add_argument("--findings", metavar="DIR", default="fuzz-findings",
                   help="where findings and the campaign's state go (default fuzz-findings); a campaign "
                        "started again on the same directory resumes")
    p.add_argument("--time", type=_seconds, metavar="DURATION", help="stop after this long (e.g. 30m)")
    p.add_argument("--runs", type=_positive, metavar="N", help="stop after N runs")
    p.add_argument("--seed", type=int, default=0, help="the campaign's seed (default 0)")
    p.add_argument("-j", "--jobs", type=_positive, default=1, metavar="N", help="worker processes (default 1)")
    p.add_argument("--dask", metavar="ADDRESS", help="run the mutants on this Dask scheduler")
    p.add_argument("--timeout", type=_seconds, default=10.0, metavar="S", help="per run (default 10s)")
    p.add_argument("--memory", type=_positive, default=1024, metavar="MB",
                   help="address-space limit per run (default 1024 MB)")
    p.add_argument("--differential", action="store_true",
                   help="also report where the target and the kit's validator disagree: it accepts "
                        "silently what the validator calls an error, or rejects what it calls clean")
    p.add_argument("--shrink-runs", type=int, default=300, metavar="N",
                   help="target runs spent shrinking each new finding (0: none; default 300)")
    p.add_argument("--corpus", metavar="DIR", default="corpus", help="the corpus --promote writes into")
    p.add_argument("--format", choices=("text", "json"), default="text")


def run(args: argparse.Namespace) -> int:
    if args.promote:
        from pcpconform.fuzz.promote import promote

        where = promote(Path(args.promote), Path(args.corpus))
        print(f"pcpconform fuzz: promoted to {where}")
        return 0
    if args.replay:
        from pcpconform.fuzz.replay import replay

        same, line = replay(Path(args.replay))
        print(line)
        return 1 if same else 0
    from pcpconform.fuzz.campaign import Options, run_campaign
    from pcpconform.fuzz.targets import target_from_impl, target_from_template

    if args.runs is None and args.time is None:
        raise UsageError("give --runs N or --time DURATION (or both)")
    if args.impl and args.chroot:
        raise UsageError("--chroot applies to --target commands")
    # checked before the target: a missing extra or a bad address is a usage error
    cluster = dask_cluster(args.dask, "fuzz") if args.dask is not None else None
    target = (target_from_impl(args.impl, timeout=args.timeout, memory_mb=args.memory) if args.impl else
              target_from_template(args.target, timeout=args.timeout, memory_mb=args.memory, chroot=args.chroot))
    findings = Path(args.findings)
    try:
        findings.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"--findings {findings}: {exc.strerror}") from None
    status = sys.stderr if sys.stderr.isatty() and args.format == "text" else None
    with contextlib.ExitStack() as stack:
        connected = stack.enter_context(cluster) if cluster is not None else None
        summary = run_campaign(Options(target, findings, seed=args.seed, runs=args.runs, seconds=args.time,
                                       jobs=args.jobs, differential=args.differential, dask=connected,
                                       shrink_runs=args.shrink_runs, status=status))
    if args.format == "json":
        print(json.dumps(summary.as_json(), indent=1))
    else:
        print(f"{summary.runs} runs in {summary.seconds:.1f}s ({summary.runs / max(summary.seconds, 1e-9):.1f}/s), "
              f"{summary.kept} inputs kept, {len(summary.findings)} distinct findings "
              f"({len(summary.new)} new) in {findings}")
        for f in summary.findings:
            print(f"  {f.id}  {f.kind:<15} {f.size:>6} bytes  {f.hits:>4} hits  {f.signature}")
    return 1 if summary.findings else 0
