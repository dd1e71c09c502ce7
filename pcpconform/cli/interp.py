"""``pcpconform interp``: replay metrics at any times as libpcp's PM_MODE_INTERP does."""

from __future__ import annotations

import argparse
import itertools
import sys
from collections.abc import Iterable
from typing import Any

from pcpconform.cli.heap import pad_heap
from pcpconform.cli.output import opened_output
from pcpconform.cli.schedule import add_schedule_arguments
from pcpconform.cli.sources import open_input, set_notes, set_profile
from pcpconform.errors import UsageError
from pcpconform.extra import MissingExtra
from pcpconform.io.archiveset import ArchiveSet
from pcpconform.oracles.interp.builtin import MetricSource
from pcpconform.oracles.interp.installed import chosen_rules, interp_rules_for, other_rules_note
from pcpconform.oracles.interp.model import Sample
from pcpconform.oracles.interp.replay import DEVIATIONS, RULE_SETS, Replay
from pcpconform.oracles.interp.report import write_csv, write_json, write_text
from pcpconform.oracles.interp.schedule import (
    extent_note,
    instance_filter,
    interval_and_seek,
    plan,
    rate_convert,
)
from pcpconform.oracles.interp.setreplay import open_set_replay
from pcpconform.oracles.interp.window import open_replay

__all__ = ["add_arguments", "run"]

DEFAULT_RULES = "pcp-6.3"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("archive", help="archive base name or any of its files; a directory or a "
                   "comma-separated list is one archive set, as libpcp reads it (spec/sets.md)")
    p.add_argument("metric", nargs="+", help="metric name or pmID (60.0.4)")
    add_schedule_arguments(p, "of the metrics")
    p.add_argument("--rules", choices=(*RULE_SETS, "pcp-7", "auto"),
                   help="interpolation rules: pcp-6.0 (libpcp before 6.3.2), pcp-6.3 (6.3.2 "
                   "and later, PCP 7; the default), pcp-7 (as pcp-6.3, with PCP 7's handling of "
                   "archive sets), or auto: those of the PCP installed here")
    p.add_argument("--rate", action="store_true", help="convert counters to rates per second, as pmval does")
    p.add_argument("--emulate", action="append", choices=("all", *DEVIATIONS),
                   help="reproduce a named libpcp deviation (spec/interp.md, INTERP-DEV-*)")
    p.add_argument("--plot", metavar="FILE.png", help="also draw observations and replayed values "
                   "(with --rate, the rates on an axis of their own)")
    p.add_argument("--format", choices=("text", "json", "csv"), default="text")
    p.add_argument("-o", "--output")


def _plotter() -> Any:
    """extra.plot's plot_replay: matplotlib is imported only when a plot is asked for."""
    try:
        from pcpconform.extra.plot import plot_replay
    except MissingExtra as exc:
        raise UsageError(f"--plot: {exc}") from None
    return plot_replay


def singular_warnings(replay: Replay, source: MetricSource) -> list[str]:
    """INTERP-SINGULAR-1: what libpcp 6.x does differently on these archives."""
    return [f"{source.metric_name(pmid)} has no instance domain but value sets with {n} values: "
            "the last of each is replayed (libpcp 7); libpcp 6.0.3 and 6.3.8 abort on them"
            for pmid, n in sorted(replay.singular_quirks.items()) if n > 1]


def run(args: argparse.Namespace) -> int:
    # not given: the default, and a note (once the request is found good) if the host's PCP
    # goes by the other rule set (INTERP-CLI-8)
    args.rules_note = None if args.rules else other_rules_note("pcpconform interp", DEFAULT_RULES,
                                                               interp_rules_for)
    args.rules = args.rules or DEFAULT_RULES
    pad_heap()          # each run of records reuses the pages the run before freed
    try:
        return _run(args)
    except MemoryError:
        # the observations of the metrics asked for are kept (8 bytes a time and a value)
        raise UsageError(f"{args.archive}: out of memory holding the observations of "
                         f"{', '.join(args.metric)}; ask for fewer metrics or instances") from None


def _run(args: argparse.Namespace) -> int:
    requested = "pcp-6.3" if args.rules == "pcp-7" else args.rules
    rules, how = chosen_rules(requested, interp_rules_for, "pcp-6.3")
    if how.startswith("--rules auto:"):
        print(f"pcpconform interp: {how}", file=sys.stderr)
    if args.rules == "pcp-7":
        how = "as asked: pcp-7 (PCP 7 interpolates as pcp-6.3, INTERP-VER-1)"
    archive = open_input(args.archive, set_profile(args.rules, rules), "interp")
    interval, early = interval_and_seek(args.interval, args.start, archive.start)
    if isinstance(archive, ArchiveSet) and interval < 0:
        archive = archive.for_direction(-1)     # a backward replay's seams (SET-REPLAY-3)
    source = MetricSource(archive)
    pmids: list[int] = []
    for m in args.metric:
        try:
            pmid = int(source.lookup(m).pmid)
        except KeyError:
            raise UsageError(f"{args.archive}: unknown metric {m!r}") from None
        if pmid not in pmids:
            pmids.append(pmid)
    emulate = tuple(DEVIATIONS) if "all" in (args.emulate or []) else tuple(args.emulate or [])
    whole_schedule = bool(args.plot or args.rate)
    replay: Any
    if isinstance(archive, ArchiveSet) and not whole_schedule:
        # a forward replay of a set reads one member at a time (SetReplay); it declines
        # what is not modelled (SET-META-6, SET-MEMBER-3)
        replay = open_set_replay(archive, pmids, rules=rules, emulate=emulate,
                                 forward=interval > 0, from_time=early)
    else:
        if isinstance(archive, ArchiveSet):
            archive.refuse_retyped()    # SET-META-6, as open_set_replay declines it
        # a forward replay of a large archive reads the records as the schedule advances
        replay = open_replay(archive, pmids, rules=rules, emulate=emulate, from_time=early,
                             whole_schedule=whole_schedule)
    known_quirks = dict(replay.singular_quirks)
    start, count = plan(archive.start, replay.last, args.start, args.end, interval, args.samples,
                        first_record=replay.first_record)
    if args.instances:
        wanted = [w for arg in args.instances for w in arg.split(",") if w]
        restrict_instances(source, replay, wanted)
    note = extent_note(archive.start, replay.first_record)
    for line in [*([note] if note else []), *singular_warnings(replay, source)]:
        print(f"pcpconform interp: warning: {line}", file=sys.stderr)
    if args.rules_note:
        print(args.rules_note, file=sys.stderr)
    shown: Iterable[Sample]
    if args.plot or args.rate:          # both read the whole schedule
        samples = replay.schedule(start, interval, count)
        rates = rate_convert(samples, replay.descs) if args.rate else None
        if args.plot:
            plot_replay = _plotter()
            plot_replay(replay, samples, args.plot, title=f"{args.archive} ({rules})",
                        rates=rates, names=source.metric_name)
        shown = rates if rates is not None else samples
    else:                               # a piece of the schedule at a time
        shown = itertools.chain.from_iterable(replay.schedule_chunks(start, interval, count))
    with opened_output(args.output) as out:
        if args.format == "json":
            write_json(source, shown, rules, out, rate=args.rate, emulate=emulate, rules_from=how)
        elif args.format == "csv":
            write_csv(source, shown, out, rate=args.rate)
        else:
            write_text(source, shown, out, rate=args.rate, header=f"# rules {rules} ({how})")
    if replay.singular_quirks != known_quirks:     # a window finds them as it reads
        for line in singular_warnings(replay, source):
            print(f"pcpconform interp: warning: {line}", file=sys.stderr)
    set_notes(archive, "interp")
    return 0


def restrict_instances(source: MetricSource, replay: Any, wanted: list[str]) -> None:
    """--instances (INTERP-CLI-2): keep only the named instances of every replayed metric."""
    for pmid in replay.instances:
        desc = source.desc(pmid)
        name = source.metric_name(pmid)
        if desc.indom.is_null:
            raise UsageError(f"--instances: {name} has no instance domain")
        names = {i: n for r in source.indom_history(desc.indom) for i, n in r.instances.items()}
        keep = instance_filter(names, wanted, name)
        replay.instances[pmid] = [i for i in replay.instances[pmid] if i in keep]
