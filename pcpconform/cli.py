"""The ``pcpconform`` command: generate, dump, rebuild.

Exit status: 0 success, 1 the archive is bad (a FormatError), 2 the request could not be
carried out (usage, missing files). No input ever ends in a traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from .errors import PcpConformError

__all__ = ["main"]


def _cmd_dump(args: argparse.Namespace) -> int:
    from .archive import Archive
    from .dump import write_jsonl, write_text

    archive = Archive(args.archive)
    out = open(args.output, "w", encoding="utf-8") if args.output else sys.stdout
    try:
        if args.format == "jsonl":
            write_jsonl(archive, out)
        else:
            write_text(archive, out)
    finally:
        if out is not sys.stdout:
            out.close()
    return 0


def _cmd_rebuild(args: argparse.Namespace) -> int:
    from .rebuild import rebuild_archive

    counts = rebuild_archive(args.in_base, args.out_base)
    if not args.quiet:
        for name, count in counts.items():
            print(f"{name}: {count} records")
    return 0


def _cmd_undump(args: argparse.Namespace) -> int:
    from .undump import undump

    stream = sys.stdin if args.dump == "-" else open(args.dump, encoding="utf-8")
    try:
        written = undump(stream, args.output)
    finally:
        if stream is not sys.stdin:
            stream.close()
    if not args.quiet:
        for path in written:
            print(path)
    return 0


def _cmd_interp(args: argparse.Namespace) -> int:
    from .archive import Archive
    from .errors import UsageError
    from .oracle.interp import DEVIATIONS, Replay
    from .oracle.report import write_csv, write_json, write_text
    from .oracle.schedule import instance_filter, interval_and_seek, plan, rate_convert

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
        from .oracle.plot import plot_replay
        plot_replay(replay, samples, args.plot, title=f"{args.archive} ({args.rules})")
    out = open(args.output, "w", encoding="utf-8") if args.output else sys.stdout
    try:
        if args.format == "json":
            write_json(archive, samples, args.rules, out, rate=args.rate, emulate=emulate)
        elif args.format == "csv":
            write_csv(archive, samples, out, rate=args.rate)
        else:
            write_text(archive, samples, out, rate=args.rate)
    finally:
        if out is not sys.stdout:
            out.close()
    return 0


def _cmd_generate(args: argparse.Namespace) -> int:
    from .fixture import load_fixture
    from .generate import generate_archive

    fixture = load_fixture(args.fixture)
    summary = generate_archive(fixture, args.output, version=args.archive_version)
    if not args.quiet:
        print(summary)
    return 0


def _cmd_check(args: argparse.Namespace) -> int:
    from .check import output
    from .check.runner import expand_inputs, jobs_from_option, run_checks

    bases, problems = expand_inputs(args.archives)
    for problem in problems:
        print(f"pcpconform check: {problem}", file=sys.stderr)
    if not bases:
        if not problems:
            print("pcpconform check: nothing to check", file=sys.stderr)
        return 2
    progress = not args.quiet and sys.stderr.isatty()
    results = run_checks(bases, jobs_from_option(args.jobs), args.max_diagnostics, progress)
    for crash in results.crashes:
        print(f"pcpconform check: {crash.archive}: not checked: {crash.reason}", file=sys.stderr)
    options = dict(crashes=results.crashes, quiet=args.quiet,
                   warnings_as_errors=args.warnings_as_errors)
    if args.output:
        with open(args.output, "w", encoding="utf-8") as out:
            output.write(args.format, results, out, **options)
    else:
        output.write(args.format, results, sys.stdout, terminal=sys.stdout.isatty(), **options)
        sys.stdout.flush()
    if problems or results.crashes:
        return 2
    if any(r.errors for r in results):
        return 1
    if args.warnings_as_errors and any(r.warnings for r in results):
        return 1
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pcpconform",
        description="Format specification and conformance kit for PCP archives.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("dump", help="dump every record of an archive")
    p.add_argument("archive", help="archive base name, or any file of the archive")
    p.add_argument("--format", choices=("text", "jsonl"), default="text")
    p.add_argument("-o", "--output", help="write to this file instead of standard output")
    p.set_defaults(func=_cmd_dump)

    p = sub.add_parser("rebuild", help="parse every record and build it again")
    p.add_argument("in_base")
    p.add_argument("out_base")
    p.add_argument("-q", "--quiet", action="store_true")
    p.set_defaults(func=_cmd_rebuild)

    p = sub.add_parser("interp", help="replay metrics at any times as libpcp's PM_MODE_INTERP does")
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
    p.add_argument("--rules", choices=("pcp-6.0", "pcp-6.3"), default="pcp-6.3")
    p.add_argument("--rate", action="store_true", help="convert counters to rates per second, as pmval does")
    p.add_argument("--emulate", action="append", choices=("all", "nonnumeric-exact-hit", "mark-first-fetch", "discrete-stale-next"),
                   help="reproduce a named libpcp deviation (spec/interp.md, INTERP-DEV-*)")
    p.add_argument("--plot", metavar="FILE.png", help="also draw observations and replayed values")
    p.add_argument("--format", choices=("text", "json", "csv"), default="text")
    p.add_argument("-o", "--output")
    p.set_defaults(func=_cmd_interp)

    from .derive.command import add_parser as add_derive
    add_derive(sub)

    p = sub.add_parser("undump", help="write the archive a JSON Lines dump describes")
    p.add_argument("dump", help="a file written by 'dump --format jsonl', or - for stdin")
    p.add_argument("-o", "--output", required=True, help="base name of the archive to write")
    p.add_argument("-q", "--quiet", action="store_true")
    p.set_defaults(func=_cmd_undump)

    p = sub.add_parser("generate", help="write an archive described by a fixture file")
    p.add_argument("fixture", help="fixture file (YAML, see spec/fixtures.md)")
    p.add_argument("-o", "--output", required=True, help="base name of the archive to write")
    p.add_argument("--archive-version", type=int, choices=(2, 3),
                   help="override the fixture's archive version")
    p.add_argument("-q", "--quiet", action="store_true")
    p.set_defaults(func=_cmd_generate)

    from .check.runner import count_option

    p = sub.add_parser("check", help="validate archives and report every problem found")
    p.add_argument("archives", nargs="+", metavar="ARCHIVE",
                   help="archive base name, any file of an archive, or a directory of archives")
    p.add_argument("--format", choices=("text", "json", "junit", "sarif"), default="text")
    p.add_argument("-o", "--output", metavar="FILE",
                   help="write the report to this file instead of standard output")
    p.add_argument("--warnings-as-errors", action="store_true",
                   help="exit 1 when there are warnings, even without errors")
    p.add_argument("--max-diagnostics", type=count_option(1), metavar="N",
                   help="stop checking an archive after N diagnostics")
    p.add_argument("-j", "--jobs", type=count_option(0), default=1, metavar="N",
                   help="check N archives at once (0: one per CPU; default 1)")
    p.add_argument("-q", "--quiet", action="store_true",
                   help="no progress bar; text output lists diagnostics only")
    p.set_defaults(func=_cmd_check)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except PcpConformError as exc:
        print(f"pcpconform {args.command}: {exc}", file=sys.stderr)
        return exc.exit_status
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        return 130
    except OSError as exc:
        print(f"pcpconform {args.command}: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
