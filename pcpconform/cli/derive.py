"""``pcpconform derive``: define derived metrics (config files, --define), bind them against
an archive and replay them (spec/derive.md, DERIVE-CLI-*)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TextIO

from pcpconform.cli.output import opened_output, write_texts
from pcpconform.cli.schedule import add_schedule_arguments
from pcpconform.cli.sources import open_input, set_notes, set_profile
from pcpconform.errors import UsageError
from pcpconform.extra import MissingExtra
from pcpconform.io.archiveset import ArchiveSet
from pcpconform.oracles.derive.bind import Bound
from pcpconform.oracles.derive.config import Registry, load_path, read_config
from pcpconform.oracles.derive.csv_rows import CSV, derived_samples
from pcpconform.oracles.derive.document import derive_document_json
from pcpconform.oracles.derive.evaluate import (
    DEVIATIONS,
    EMULATABLE,
    DerivedView,
    Evaluator,
)
from pcpconform.oracles.derive.parser import check, format_errmsg
from pcpconform.oracles.derive.profiles import PROFILES, profile_for
from pcpconform.oracles.derive.profiles import profile as get_profile
from pcpconform.oracles.derive.session import Registered, bind_wanted, registered
from pcpconform.oracles.interp.installed import chosen_rules, other_rules_note
from pcpconform.oracles.interp.model import gc_paused
from pcpconform.oracles.interp.replay import DEVIATIONS as INTERP_DEVIATIONS
from pcpconform.oracles.interp.report import ReportSource, write_csv, write_text
from pcpconform.oracles.interp.schedule import extent_note, instance_filter, interval_and_seek, plan

__all__ = ["add_arguments", "run"]


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("archive", nargs="?", help="archive base name (not needed with --check)")
    p.add_argument("-c", "--config", action="append", default=[], metavar="PATH",
                   help="pmLoadDerivedConfig path: files or directories, ':'-separated")
    p.add_argument("-d", "--define", action="append", default=[], metavar="'NAME = EXPR'",
                   help="one definition, in config-file syntax")
    p.add_argument("--check", metavar="EXPR", help="only check EXPR's syntax, as pmRegisterDerived does")
    p.add_argument("--metric", action="append", metavar="NAME",
                   help="evaluate only these derived metrics (default: all defined)")
    add_schedule_arguments(p, "of the derived metrics")
    p.add_argument("--rules", choices=(*PROFILES, "auto"),
                   help="libpcp version profile: grammar, binding, evaluation and interpolation "
                   "(default pcp-6.3); auto: the profile of the PCP installed here")
    p.add_argument("--emulate", action="append", metavar="NAME",
                   help="reproduce a named libpcp deviation (DERIVE-DEV-*), or 'all'")
    p.add_argument("--plot", metavar="FILE.png", help="also draw the derived values")
    p.add_argument("--format", choices=("text", "json", "csv"), default="text")
    p.add_argument("-o", "--output")


def _check_only(args: argparse.Namespace) -> int:
    prof = get_profile(_rules(args)[0])
    err = check(args.check, prof)
    if err is None:
        print("ok")
        return 0
    sys.stderr.write(format_errmsg("expr", args.check, err))
    return 1


def _rules(args: argparse.Namespace) -> tuple[str, str]:
    """The profile and how it was chosen (DERIVE-CLI-7); a note when auto finds no PCP."""
    args.rules = args.rules or "pcp-6.3"
    rules, how = chosen_rules(args.rules, profile_for, "pcp-6.3")
    if how.startswith("--rules auto:"):
        print(f"pcpconform derive: {how}", file=sys.stderr)
    return rules, how


def _definitions(args: argparse.Namespace, prof: Any) -> tuple[Registered, list[str]]:
    """Registered definitions (config files first, then --define) and libpcp's messages."""
    registry = Registry(prof)
    messages: list[str] = []
    for path in args.config:
        res = load_path(path, prof, registry)
        messages += res.diagnostics
        if res.error is not None:
            raise UsageError(f"--config {path}: cannot read it (error {res.error})")
    for k, text in enumerate(args.define):
        res = read_config(text.rstrip("\n") + "\n", prof, f"--define[{k + 1}]", registry)
        messages += res.diagnostics
    return registered(registry), messages


def run(args: argparse.Namespace) -> int:
    if args.check is not None:
        return _check_only(args)
    if not args.archive:
        raise UsageError("an archive is needed (or --check EXPR)")
    if not args.config and not args.define:
        raise UsageError("no derived metrics: give --config PATH or --define 'NAME = EXPR'")

    # none asked for: a note at the end when the host's PCP goes by another (DERIVE-CLI-11)
    rules_note = None if args.rules else other_rules_note("pcpconform derive", "pcp-6.3", profile_for, "profile")
    rules, how = _rules(args)
    prof = get_profile(rules)
    emulate = _emulated(args)
    archive = open_input(args.archive, set_profile(args.rules, rules), "derive")
    archive.descs()                 # the archive's own errors first (DERIVE-CLI-8)
    defs, messages = _definitions(args, prof)
    binding = bind_wanted(defs, args.metric, archive, prof)
    if binding.unknown:
        raise UsageError(f"--metric {binding.unknown[0]}: not a registered derived metric")
    bounds = binding.bounds
    messages += binding.messages
    failed = bool(messages)
    by_name = defs.by_name()
    interval, early = interval_and_seek(args.interval, args.start, archive.start)
    if isinstance(archive, ArchiveSet):
        archive.refuse_retyped()                # as interp declines it (SET-META-6)
        if interval < 0:
            archive = archive.for_direction(-1)     # a backward replay's seams (SET-REPLAY-3)
        else:
            archive.refuse_damage()                 # as interp declines it (SET-MEMBER-3)
    # reads the whole archive (the operands' replay): a damaged archive stops here, before
    # any derived-metric message (DERIVE-CLI-8)
    ev = Evaluator(archive, bounds, prof, emulate=emulate & EMULATABLE,
                   interp_emulate=emulate & INTERP_DEVIATIONS.keys(), from_time=early)
    for line in messages:
        sys.stderr.write(line + "\n")
    if not bounds:
        return 1
    ev.pmids = {b.name: by_name[b.name].pmid for b in bounds}
    start, count = plan(archive.start, ev.replay.last, args.start, args.end, interval, args.samples,
                        first_record=ev.replay.first_record)
    note = extent_note(archive.start, ev.replay.first_record)
    if note:
        print(f"pcpconform derive: warning: {note}", file=sys.stderr)
    view = DerivedView(ev)
    keep = _instance_filter(view, ev, bounds, args.instances)
    if args.format == "csv" and not args.plot:
        texts = CSV(archive.stats, lambda: ev, bounds, keep, start, interval, count)
        with opened_output(args.output) as out:
            write_texts(out, texts)
    else:
        derived = ev.schedule(start, interval, count)
        with gc_paused():               # rows of acyclic dicts: nothing to collect
            samples = derived_samples(ev, view, bounds, derived, keep)
        if args.plot:
            _plot(ev, view, samples, args, rules)
        with opened_output(args.output) as out:
            _write(ev, view, bounds, samples, derived, args, out, sorted(emulate), rules, how)
    if rules_note:
        print(rules_note, file=sys.stderr)
    set_notes(archive, "derive")
    return 1 if failed else 0


def _emulated(args: argparse.Namespace) -> set[str]:
    emulate = set(args.emulate or [])
    if "all" in emulate:
        emulate = set(EMULATABLE) | set(INTERP_DEVIATIONS)
    known = EMULATABLE | INTERP_DEVIATIONS.keys()
    if emulate - known:
        bad = sorted(emulate - known)[0]
        raise UsageError(f"--emulate {bad}: not an emulatable deviation "
                         f"({', '.join(sorted(known))}; see DEVIATIONS: {', '.join(DEVIATIONS)})")
    return emulate


def _instance_filter(view: ReportSource, ev: Evaluator, bounds: list[Bound],
                     instances: list[str] | None) -> dict[int, set[int]] | None:
    """--instances (DERIVE-CLI-5): per derived pmID the instance ids to show."""
    if not instances:
        return None
    wanted = [w for arg in instances for w in arg.split(",") if w]
    keep: dict[int, set[int]] = {}
    for b in bounds:
        pmid = int(ev.pmids[b.name])
        if b.desc.indom.is_null:
            raise UsageError(f"--instances: {b.name} has no instance domain")
        names = {i: n for r in view.indom_history(b.desc.indom) for i, n in r.instances.items()}
        keep[pmid] = instance_filter(names, wanted, b.name)
    return keep


def _plot(ev: Evaluator, view: ReportSource, samples: list[Any], args: argparse.Namespace,
          rules: str) -> None:
    """--plot (DERIVE-CLI-5): the derived values per metric-instance, with the operands'
    marks; derived metrics have no observations of their own."""
    try:
        from pcpconform.extra.plot import plot_replay
    except MissingExtra as exc:
        raise UsageError(f"--plot: {exc}") from None
    descs = {int(ev.pmids[b.name]): view.desc(int(ev.pmids[b.name])) for b in ev.bound}
    source = _DerivedPlot(descs, {}, {p: sorted({i for s in samples for i in s.values.get(p, {})}) for p in descs},
                          ev.replay.marks, rules, view, ev.replay.rel)
    plot_replay(source, samples, args.plot, title=f"{args.archive} ({rules})", names=view.metric_name)


@dataclass(frozen=True)
class _DerivedPlot:
    """The derived metrics as a figure reads a replay (``PlotSource``): no observations of
    their own, the operands' marks and time origin."""

    descs: dict[int, Any]
    series: dict[tuple[int, int], Any]
    instances: dict[int, list[int]]
    marks: list[float]
    rules: str
    archive: ReportSource
    rel: Callable[[Any], float]


def _write(ev: Evaluator, view: ReportSource, bounds: list[Bound], samples: list[Any],
           derived_samples: list[Any], args: argparse.Namespace, out: TextIO, emulate: list[str],
           rules: str, how: str) -> None:
    if args.format == "text":
        write_text(view, samples, out, header=f"# rules {rules} ({how})")
        return
    if args.format == "csv":
        write_csv(view, samples, out)
        return
    doc = derive_document_json(ev, bounds, samples, derived_samples, rules, emulate=tuple(emulate),
                               rules_from=how)
    json.dump(doc, out, indent=1)
    out.write("\n")
