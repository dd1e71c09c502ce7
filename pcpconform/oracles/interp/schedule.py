"""Replay schedules as PCP tools take them, and pmval-style rate conversion (spec/interp.md,
INTERP-CLI-*)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from pcpconform.errors import UsageError
from pcpconform.format.pmtypes import PmSem, Timestamp
from pcpconform.oracles.interp.replay import NoValue, Sample

__all__ = ["parse_interval", "parse_when", "interval_and_seek", "plan", "instance_filter", "rate_convert"]

# pmParseInterval's unit words (case-insensitive), in nanoseconds
_UNITS = {
    "nsec": 1, "nanosec": 1, "nanosecond": 1, "nanoseconds": 1, "ns": 1,
    "usec": 10**3, "microsec": 10**3, "microsecond": 10**3, "microseconds": 10**3, "us": 10**3,
    "msec": 10**6, "millisec": 10**6, "millisecond": 10**6, "milliseconds": 10**6, "ms": 10**6,
    "s": 10**9, "sec": 10**9, "secs": 10**9, "second": 10**9, "seconds": 10**9, "": 10**9,
    "m": 60 * 10**9, "min": 60 * 10**9, "mins": 60 * 10**9, "minute": 60 * 10**9,
    "minutes": 60 * 10**9,
    "h": 3600 * 10**9, "hr": 3600 * 10**9, "hrs": 3600 * 10**9, "hour": 3600 * 10**9,
    "hours": 3600 * 10**9,
    "d": 86400 * 10**9, "day": 86400 * 10**9, "days": 86400 * 10**9,
}
_TERM = re.compile(r"\s*(\d+(?:\.\d*)?|\.\d+)\s*([a-z]*)", re.IGNORECASE)


def parse_interval(text: str, what: str) -> int:
    """An interval in nanoseconds: "10", "2.5sec", "1min 30s", "250ms" (pmParseInterval's
    units); a leading "-" makes it negative."""
    body = text.strip()
    sign = -1 if body.startswith("-") else 1
    body = body.lstrip("+-").strip()
    total = Decimal(0)
    pos = 0
    if not body:
        raise UsageError(f"{what} {text!r}: not an interval")
    while pos < len(body):
        m = _TERM.match(body, pos)
        if m is None or m.group(2).lower() not in _UNITS:
            raise UsageError(f"{what} {text!r}: not an interval (e.g. 10, 2.5sec, 1min 30s, 250ms)")
        try:
            total += Decimal(m.group(1)) * _UNITS[m.group(2).lower()]
        except InvalidOperation:
            raise UsageError(f"{what} {text!r}: not an interval") from None
        pos = m.end()
        while pos < len(body) and body[pos] in " ,":
            pos += 1
    return sign * int(total.to_integral_value())


#: plain epoch seconds (with a fraction)
_EPOCH = re.compile(r"[0-9]+(?:\.[0-9]+)?\Z").match


def parse_when(text: str, what: str, start: Timestamp, end: Timestamp) -> Timestamp:
    """A time argument as PCP's -S/-T take it: "+INTERVAL" from the archive start,
    "-INTERVAL" back from its end, "@TIME" or TIME absolute (epoch seconds or ISO 8601)."""
    body = text.strip()
    if body.startswith("+"):
        return Timestamp.from_nsec(start.total_nsec() + parse_interval(body[1:], what))
    if body.startswith("-"):
        return Timestamp.from_nsec(end.total_nsec() - parse_interval(body[1:], what))
    body = body.lstrip("@").strip()
    if _EPOCH(body):        # epoch seconds, read as parse_time reads them
        return Timestamp.from_nsec(int((Decimal(body) * 1_000_000_000).to_integral_value()))
    # the fixture reader's other time forms (ISO 8601), imported only when they are given
    from pcpconform.fixtures.fixture import FixtureError, parse_time
    try:
        return parse_time(body, what)
    except FixtureError:
        raise UsageError(f"{what} {text!r}: not a time (epoch seconds, ISO 8601, "
                         "+INTERVAL from the start or -INTERVAL from the end)") from None


def interval_and_seek(interval_arg: str, start_arg: str | None,
                      archive_start: Timestamp) -> tuple[int, Timestamp | None]:
    """The interval in nanoseconds (never 0), and the time a forward replay may seek to
    (INTERP-SEEK-1) when ``--start`` does not depend on the archive's end, else None."""
    interval = parse_interval(interval_arg, "--interval")
    if interval == 0:
        raise UsageError("--interval must not be 0")
    if interval > 0 and start_arg and not start_arg.strip().startswith("-"):
        return interval, parse_when(start_arg, "--start", archive_start, archive_start)
    return interval, None


#: the most fetches a default schedule (no --samples) may make (INTERP-CLI-6)
DEFAULT_LIMIT = 1_000_000


def _span(nsec: int) -> str:
    days, rest = divmod(abs(nsec) // 10**9, 86400)
    return f"{days} days {rest // 3600}h" if days else f"{rest}s"


def plan(first: Timestamp, last: Timestamp, start_arg: str | None, end_arg: str | None,
         interval: int, samples: int | None, *, first_record: Timestamp | None = None,
         limit: int = DEFAULT_LIMIT) -> tuple[Timestamp, int]:
    """The first fetch time and the number of fetches for a replay of an archive whose label
    starts at ``first`` and whose latest record is at ``last`` (INTERP-CLI-1): by default
    from one end to the other in the direction of ``interval``. A start outside the archive
    is accepted: those fetches are end of log, as in libpcp (INTERP-EOL-3). A default
    schedule of more than ``limit`` fetches is refused, naming the extent it came from
    (INTERP-CLI-6)."""
    start = parse_when(start_arg, "--start", first, last) if start_arg else (
        first if interval > 0 else last)
    end = parse_when(end_arg, "--end", first, last) if end_arg else None
    if samples is not None:
        if samples < 1:
            raise UsageError("--samples must be at least 1")
        return start, samples
    stop = (end or (last if interval > 0 else first)).total_nsec()
    count = max((stop - start.total_nsec()) // interval + 1, 1)
    if count > limit:
        extent = f"the label starts at {first}, the latest record is at {last}"
        if first_record is not None:
            extent += f", the first record is at {first_record}"
            gap = first_record.total_nsec() - first.total_nsec()
            if abs(gap) > 86400 * 10**9:
                extent += f": the label's start lies {_span(gap)} from the first record (a damaged label?)"
        raise UsageError(f"the default schedule would make {count} fetches from {start} to "
                         f"{Timestamp.from_nsec(stop)} ({extent}); give --samples, --end or a "
                         f"larger --interval (at most {limit} fetches by default)")
    return start, count


def extent_note(first: Timestamp, first_record: Timestamp | None) -> str | None:
    """A warning when the label's start lies after the first record: libpcp replays no
    record before it (INTERP-EOL-4)."""
    if first_record is None or first_record.total_nsec() >= first.total_nsec():
        return None
    return (f"the label starts at {first}, after the first record ({first_record}): no record "
            "before the label's start is replayed (a damaged label?)")


def instance_filter(names: dict[int, str], wanted: list[str], metric: str) -> set[int]:
    """The instance ids ``wanted`` names (an external name, its first word as libpcp
    matches it, or a numeric id) in a domain's ``names``."""
    chosen: set[int] = set()
    for w in wanted:
        hits = {i for i, n in names.items() if n == w or n.split(" ", 1)[0] == w}
        if not hits and w.lstrip("-").isdigit() and int(w) in names:
            hits = {int(w)}
        if not hits:
            raise UsageError(f"instance {w!r} is not in the instance domain of {metric}")
        chosen |= hits
    return chosen


@dataclass(frozen=True)
class _Prev:
    time: Timestamp
    value: Any


def rate_convert(samples: list[Sample], descs: dict[int, Any]) -> list[Sample]:
    """pmval's default treatment of counters (INTERP-RATE-1): each counter value becomes
    (v - v_prev) / (t - t_prev) in units per second; the first value after a fetch without
    one is the base of the next rate, so it has none ("rate base"), and a decrease has none
    ("counter decreased"). Other semantics pass through."""
    prev: dict[tuple[int, int], _Prev] = {}
    out = []
    for s in samples:
        conv = Sample(s.time, eol=s.eol, values={})
        for pmid, insts in s.values.items():
            desc = descs[pmid]
            if desc.sem != PmSem.COUNTER:
                conv.values[pmid] = dict(insts)
                continue
            row: dict[int, Any] = {}
            for inst, v in insts.items():
                key = (pmid, inst)
                if isinstance(v, NoValue):
                    prev.pop(key, None)
                    row[inst] = v
                    continue
                before = prev.get(key)
                prev[key] = _Prev(s.time, v)
                if before is None:
                    row[inst] = NoValue("rate base")
                    continue
                dt = (s.time.total_nsec() - before.time.total_nsec()) / 1e9
                rate = (float(v) - float(before.value)) / dt if dt else None
                if rate is None:
                    row[inst] = NoValue("rate base")
                elif rate < 0:          # in time order: pmval prints "!" for these
                    row[inst] = NoValue("counter decreased")
                else:
                    row[inst] = rate
            conv.values[pmid] = row
        if s.eol:
            prev.clear()
        out.append(conv)
    return out
