"""``pcpconform interp``: replay metrics at any times as libpcp's PM_MODE_INTERP does."""

from __future__ import annotations

import argparse
from typing import Any

from pcpconform.cli.output import opened_output
from pcpconform.errors import UsageError
from pcpconform.extra import MissingExtra
from pcpconform.io.archive import Archive
from pcpconform.oracles.interp.replay import DEVIATIONS, RULE_SETS, Replay
from pcpconform.oracles.interp.report import write_csv, write_json, write_text
from pcpconform.oracles.interp.schedule import (
    instance_filter,
    interval_and_seek,
    plan,
    rate_convert,
)

__all__ = ["add_arguments", "run"]


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("archive")
    p.add_argument("metric", nargs="+", help="metric name or pmID (60.0.4)")
    p.add_argument("--start", help="first fetch: epoch seconds, ISO 8601, +INTERVAL from the "
                   "archive start or -INTERVAL from its end (default: the start; the end "
                   "for a negative interval)")
    p.add_argument("--end", help="last fetch time, same forms as --start (default: the archive's end)")
    p.add_argument("--interval", default="1", help="time between fetches: 10, 2.5sec, 1min, 250ms; "
                   "negative replays backwards")
    p.add_argument("--samples", type=int, help="number of fetches (default: up to --end)")
    p.add_argument("--instances", action="append", metavar="NAME[,NAME...]",
                   help="only these instances (external names or ids)")
    p.add_argument("--rules", choices=RULE_SETS, default="pcp-6.3")
    p.add_argument("--rate", action="store_true", help="convert counters to rates per second, as pmval does")
    p.add_argument("--emulate", action="append", choices=("all", *DEVIATIONS),
                   help="reproduce a named libpcp deviation (spec/interp.md, INTERP-DEV-*)")
    p.add_argument("--plot", metavar="FILE.png", help="also draw observations and replayed values")
    p.add_argument("--format", choices=("text", "json", "csv"), default="text")
    p.add_argument("-o", "--output")


def _plotter() -> Any:
    """extra.plot's plot_replay: matplotlib is imported only when a plot is asked for."""
    try:
        from pcpconform.extra.plot import plot_replay
    except MissingExtra as exc:
        raise UsageError(f"--plot: {exc}") from None
    return plot_replay


def run(args: argparse.Namespace) -> int:
    archive = Archive(args.archive)
    pmids = []
    for m in args.metric:
        try:
            pmids.append(int(archive.desc(m).pmid))
        except KeyError:
            raise UsageError(f"{args.archive}: unknown metric {m!r}") from None
    emulate = tuple(DEVIATIONS) if "all" in (args.emulate or []) else tuple(args.emulate or [])
    interval, early = interval_and_seek(args.interval, args.start, archive.start)
    replay = Replay(archive, pmids, rules=args.rules, emulate=emulate, from_time=early)
    start, count = plan(archive.start, replay.last, args.start, args.end, interval, args.samples)
    if args.instances:
        wanted = [w for arg in args.instances for w in arg.split(",") if w]
        for pmid in pmids:
            desc = archive.desc(pmid)
            if desc.indom.is_null:
                raise UsageError(f"--instances: {archive.metric_name(pmid)} has no instance domain")
            names = {i: n for r in archive.indom_history(desc.indom) for i, n in r.instances.items()}
            keep = instance_filter(names, wanted, archive.metric_name(pmid))
            replay.instances[pmid] = [i for i in replay.instances[pmid] if i in keep]
    samples = replay.schedule(start, interval, count)
    if args.rate:
        samples = rate_convert(samples, replay.descs)
    if args.plot:
        plot_replay = _plotter()
        plot_replay(replay, samples, args.plot, title=f"{args.archive} ({args.rules})")
    with opened_output(args.output) as out:
        if args.format == "json":
            write_json(archive, samples, args.rules, out, rate=args.rate, emulate=emulate)
        elif args.format == "csv":
            write_csv(archive, samples, out, rate=args.rate)
        else:
            write_text(archive, samples, out, rate=args.rate)
    return 0
