"""``pcpconform undump``: write the archive a JSON Lines dump describes."""

from __future__ import annotations

import argparse
import sys

from pcpconform.dump.undump import undump

__all__ = ["add_arguments", "run"]


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("dump", help="a file written by 'dump --format jsonl', or - for stdin")
    p.add_argument("-o", "--output", required=True, help="base name of the archive to write")
    p.add_argument("-q", "--quiet", action="store_true")


def run(args: argparse.Namespace) -> int:
    if args.dump == "-":
        written = undump(sys.stdin, args.output)
    else:
        with open(args.dump, encoding="utf-8") as stream:
            written = undump(stream, args.output)
    if not args.quiet:
        for path in written:
            print(path)
    return 0
