"""``pcpconform derive``: define derived metrics (config files, --define), bind them against
an archive and replay them (spec/derive.md, DERIVE-CLI-*)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, TextIO, cast

from pcpconform.cli.output import opened_output
from pcpconform.errors import DeriveSemanticError, UsageError
from pcpconform.format.pmtypes import PmID
from pcpconform.io.archive import Archive
from pcpconform.oracles.derive.bind import Bound, bind
from pcpconform.oracles.derive.config import ANON, Registry, load_path, read_config
from pcpconform.oracles.derive.evaluate import (
    DEVIATIONS,
    EMULATABLE,
    DerivedView,
    Evaluator,
    Unpredictable,
    derived_pmid,
)
from pcpconform.oracles.derive.parser import check, format_errmsg
from pcpconform.oracles.derive.profiles import PROFILES
from pcpconform.oracles.derive.profiles import profile as get_profile
from pcpconform.oracles.interp.replay import DEVIATIONS as INTERP_DEVIATIONS
from pcpconform.oracles.interp.replay import NoValue
from pcpconform.oracles.interp.report import samples_json, write_csv, write_text
from pcpconform.oracles.interp.schedule import interval_and_seek, plan

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
    p.add_argument("--start")
    p.add_argument("--end")
    p.add_argument("--interval", default="1")
    p.add_argument("--samples", type=int)
    p.add_argument("--rules", choices=tuple(PROFILES), default="pcp-6.3",
                   help="libpcp version profile: grammar, binding, evaluation and interpolation")
    p.add_argument("--emulate", action="append", metavar="NAME",
                   help="reproduce a named libpcp deviation (DERIVE-DEV-*), or 'all'")
    p.add_argument("--format", choices=("text", "json", "csv"), default="text")
    p.add_argument("-o", "--output")


def _check_only(args: argparse.Namespace) -> int:
    prof = get_profile(args.rules)
    err = check(args.check, prof)
    if err is None:
        print("ok")
        return 0
    sys.stderr.write(format_errmsg("expr", args.check, err))
    return 1


def _definitions(args: argparse.Namespace, prof: Any) -> tuple[list[Any], list[str]]:
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
    # global derived pmIDs count up from 511.0.1 in registration order, the anonymous
    # event metrics first (measured: pminfo -m shows the first defined metric as 511.0.3)
    registered = [d for d in registry.metrics.values() if d.registered]
    for k, d in enumerate(registered):
        d.pmid = derived_pmid(k)
    defs = [d for d in registered if d.name not in ANON]
    return defs, messages


def run(args: argparse.Namespace) -> int:
    if args.check is not None:
        return _check_only(args)
    if not args.archive:
        raise UsageError("an archive is needed (or --check EXPR)")
    if not args.config and not args.define:
        raise UsageError("no derived metrics: give --config PATH or --define 'NAME = EXPR'")

    prof = get_profile(args.rules)
    archive = Archive(args.archive)
    defs, messages = _definitions(args, prof)
    failed = bool(messages)
    wanted = args.metric or [d.name for d in defs]
    by_name = {d.name: d for d in defs}
    bounds: list[Bound] = []
    derived: dict[str, Bound | None] = {}
    for name in wanted:
        d = by_name.get(name)
        if d is None:
            raise UsageError(f"--metric {name}: not a registered derived metric")
        try:
            b = bind(d.tree, name, archive, prof, derived=derived)
        except DeriveSemanticError as e:
            derived[name] = None
            messages.append(e.text or f"derived metric {name}: {e.reason} "
                                      "(libpcp prints nothing; pmLookupDesc fails)")
            failed = True
            continue
        derived[name] = b
        bounds.append(b)
    for line in messages:
        sys.stderr.write(line + "\n")
    if not bounds:
        return 1
    emulate = set(args.emulate or [])
    if "all" in emulate:
        emulate = set(EMULATABLE) | set(INTERP_DEVIATIONS)
    known = EMULATABLE | INTERP_DEVIATIONS.keys()
    if emulate - known:
        bad = sorted(emulate - known)[0]
        raise UsageError(f"--emulate {bad}: not an emulatable deviation "
                         f"({', '.join(sorted(known))}; see DEVIATIONS: {', '.join(DEVIATIONS)})")
    interval, early = interval_and_seek(args.interval, args.start, archive.start)
    ev = Evaluator(archive, bounds, prof, emulate=emulate & EMULATABLE,
                   interp_emulate=emulate & INTERP_DEVIATIONS.keys(), from_time=early)
    ev.pmids = {b.name: by_name[b.name].pmid for b in bounds}
    start, count = plan(archive.start, ev.replay.last, args.start, args.end, interval, args.samples)
    derived_samples = ev.schedule(start, interval, count)
    with opened_output(args.output) as out:
        _write(ev, bounds, derived_samples, args, out, sorted(emulate))
    return 1 if failed else 0


def _samples(ev: Any, derived_samples: list[Any]) -> list[Any]:
    out = []
    for ds in derived_samples:
        s = ev.interp_sample(ds)
        for insts in s.values.values():
            for inst, v in insts.items():
                if isinstance(v, Unpredictable):
                    insts[inst] = NoValue("unpredictable (libpcp reads uninitialised memory)")
        out.append(s)
    return out


def _report_source(ev: Evaluator) -> Archive:
    """The derived metrics as the interp report functions read an archive: DerivedView
    provides the Archive methods they call (desc, metric_name, instances, indom_history)
    without being an Archive, so the static type is asserted here, in one place."""
    return cast(Archive, DerivedView(ev))


def _write(ev: Evaluator, bounds: list[Bound], derived_samples: list[Any],
           args: argparse.Namespace, out: TextIO, emulate: list[str]) -> None:
    view = _report_source(ev)
    samples = _samples(ev, derived_samples)
    if args.format == "text":
        write_text(view, samples, out)
        return
    if args.format == "csv":
        write_csv(view, samples, out)
        return
    doc = samples_json(view, samples, args.rules, emulate=tuple(emulate))
    doc["kind"] = "derive"
    doc["derived"] = [{
        "name": b.name, "pmid": str(PmID(int(ev.pmids[b.name]))), "masked": b.masked,
        "type": int(b.desc.type), "sem": int(b.desc.sem), "indom": str(b.desc.indom),
        "units": b.desc.units_str} for b in bounds]
    for entry, ds in zip(doc["samples"], derived_samples):
        for m in entry["metrics"]:
            hits = ds.deviations.get(m["name"])
            if hits:
                m["deviations"] = sorted(hits)
    json.dump(doc, out, indent=1)
    out.write("\n")
