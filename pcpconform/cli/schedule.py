"""The fetch schedule options ``interp`` and ``derive`` share, with pmrep's short forms
(-S, -T, -t, -s, -i) so that a pmrep command line carries over."""

from __future__ import annotations

import argparse

__all__ = ["add_schedule_arguments"]


def add_schedule_arguments(p: argparse.ArgumentParser, instances_of: str) -> None:
    """--start, --end, --interval, --samples and --instances (``instances_of``: whose)."""
    p.add_argument("-S", "--start", help="first fetch: epoch seconds, ISO 8601, +INTERVAL from the "
                   "archive start or -INTERVAL from its end (default: the start; the end "
                   "for a negative interval)")
    p.add_argument("-T", "--end", help="last fetch time, same forms as --start (default: the archive's end)")
    p.add_argument("-t", "--interval", default="1", help="time between fetches: 10, 2.5sec, 1min, 250ms; "
                   "negative replays backwards")
    p.add_argument("-s", "--samples", type=int, help="number of fetches (default: up to --end)")
    p.add_argument("-i", "--instances", action="append", metavar="NAME[,NAME...]",
                   help=f"only these instances {instances_of} (external names or ids)")
