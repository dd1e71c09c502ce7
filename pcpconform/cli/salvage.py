"""``pcpconform salvage``: rescue a damaged archive into a new one every libpcp reads.

    pcpconform salvage IN OUT [--format text|json] [-o FILE] [--force]

Exit status (SALVAGE-RUN-2): 0 OUT holds everything of IN (repairs, if any, lost nothing);
1 OUT was written and something of IN was lost (each loss is in the report); 2 nothing
could be written (usage, a missing input, an output that exists, an input with nothing an
archive can be made of) or the output does not check clean.
"""

from __future__ import annotations

import argparse
import json

from pcpconform.cli.output import opened_output
from pcpconform.salvage import salvage_archive
from pcpconform.salvage.volumes import ORDER_RULES

__all__ = ["add_arguments", "run"]


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("input", metavar="IN", help="the damaged archive: its base name or any of its files "
                                              "(only ever read)")
    p.add_argument("output", metavar="OUT", help="base name of the archive to write")
    p.add_argument("--format", choices=("text", "json"), default="text", help="the report's form")
    p.add_argument("-o", "--report", metavar="FILE", help="write the report to FILE instead of standard output")
    p.add_argument("--force", action="store_true", help="replace an archive named OUT (never IN)")
    p.add_argument("--order", choices=ORDER_RULES, default="sort", help=argparse.SUPPRESS)
    p.add_argument("--no-verify", dest="verify", action="store_false",
                   help="do not check the output with the validator")


def run(args: argparse.Namespace) -> int:
    report = salvage_archive(args.input, args.output, order=args.order, verify=args.verify, force=args.force)
    with opened_output(args.report) as out:
        if args.format == "json":
            json.dump(report.to_json(), out, indent=1)
            out.write("\n")
        else:
            report.write_text(out)
    return report.exit_status
