"""An archive's times as ``ArchiveZone.when`` shows them, against the plain conversion it
caches (a date and time made once a minute): the same text for every time, ``@sec.nsec``
for a time no calendar date shows, in UTC and in zones whose offsets are not whole minutes."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest

from pcpconform.format.pmtypes import Timestamp
from pcpconform.format.timezone import ArchiveZone

ZONES = [None, "UTC", "EST5EDT", "AEST-10", "ABC-0:0:30", "ABC+0:0:30", ":Europe/Amsterdam", "XYZ-5:30:17"]
#: the calendar's first and last seconds (UTC), and times past what localtime takes
EDGES = [0, -1, 1700000000, -62135596800, -62135596801, -62135596800 + 59, 253402300799, 253402300800,
         2**62, 2**63 - 1, -2**63, 10**18]


def _plain(zone: ArchiveZone, ts: Timestamp) -> str:
    try:
        if zone.is_utc:
            return datetime.fromtimestamp(ts.sec, tz=UTC).strftime("%Y-%m-%d %H:%M:%S") + f".{ts.nsec:09d}Z"
        gmtoff, abbrev = zone._offset(ts.sec)
        dt = datetime.fromtimestamp(ts.sec, tz=UTC) + timedelta(seconds=gmtoff)
        return dt.strftime("%Y-%m-%d %H:%M:%S") + f".{ts.nsec:09d} {abbrev}"
    except (OverflowError, OSError, ValueError):
        return f"@{ts.sec}.{ts.nsec:09d}"


@pytest.mark.parametrize("tz", ZONES)
def test_cached_minutes_show_what_the_plain_conversion_shows(tz: str | None) -> None:
    shown, plain = ArchiveZone(tz), ArchiveZone(tz)
    rng = random.Random(35)
    for edge in EDGES:
        sec = edge
        for _ in range(120):        # walks across minutes and the calendar's limits, both ways
            sec += rng.choice([0, 1, 1, 7, 29, 31, 59, 60, 61, -1, -30, -61, 3600])
            ts = Timestamp(sec, rng.randrange(10**9))
            assert shown.when(ts) == _plain(plain, ts), (tz, sec)


def test_a_time_past_the_calendar_is_shown_by_its_numbers() -> None:
    assert ArchiveZone("EST5EDT").when(Timestamp(2**62, 123)) == "@4611686018427387904.000000123"
    zone = ArchiveZone("ABC-0:0:30")        # 30 s east: a local minute across the first second
    assert zone.when(Timestamp(-62135596800, 123)).startswith("1-01-01 00:00:30")
    assert zone.when(Timestamp(-62135596801, 123)) == "@-62135596801.000000123"
