"""``pcpconform rebuild``: parse every record of an archive and build it again, byte for byte."""

from __future__ import annotations

import argparse

from pcpconform.io.rebuild import rebuild_archive

__all__ = ["add_arguments", "run"]


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("in_base")
    p.add_argument("out_base")
    p.add_argument("-q", "--quiet", action="store_true")


def run(args: argparse.Namespace) -> int:
    counts = rebuild_archive(args.in_base, args.out_base)
    if not args.quiet:
        for name, count in counts.items():
            print(f"{name}: {count} records")
    return 0
