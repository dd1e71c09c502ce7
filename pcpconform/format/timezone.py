"""Times in an archive's own timezone, as libpcp shows them.

libpcp's pmNewZone sets ``$TZ`` to the label's timezone (PCP's squashed POSIX form such as
``AEST-10`` or ``EST5EDT``, or ``:Area/City``) and lets the C library convert; ``pmdumplog
-z`` then prints local times in that zone. The version 3 ``zoneinfo`` field is not used
for this by 6.0.3, 6.3 or 7.x (measured: spec/dump-jsonl.md, DUMP-LIST-2). The C library is
the only complete reader of POSIX TZ strings, so the offsets come from it: ``$TZ`` is set for
the moment of one ``localtime`` call and restored, and the result is cached per quarter of
an hour (every real zone changes its offset on a quarter-hour boundary).
"""

from __future__ import annotations

import os
import time
from datetime import UTC, datetime, timedelta

from pcpconform.format.pmtypes import Timestamp

__all__ = ["ArchiveZone", "UTC_ZONE"]

_QUARTER = 900


class ArchiveZone:
    """One timezone: ``None``, empty or ``UTC`` forms give UTC with a ``Z`` suffix."""

    def __init__(self, tz: str | None) -> None:
        self.tz = (tz or "").strip("\0")
        self.is_utc = self.tz in ("", "UTC", "UTC0", ":UTC", "GMT", "GMT0", "Z")
        self._cache: dict[int, tuple[int, str]] = {}
        # the last local minute shown, and its "YYYY-MM-DD HH:MM:": results come seconds apart
        self._minute: tuple[tuple[int, int] | None, str] = (None, "")

    def _offset(self, sec: int) -> tuple[int, str]:
        """Seconds east of UTC and the zone abbreviation at ``sec``."""
        key = sec // _QUARTER
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        saved = os.environ.get("TZ")
        os.environ["TZ"] = self.tz
        try:
            time.tzset()
            tm = time.localtime(key * _QUARTER)
            hit = (tm.tm_gmtoff, tm.tm_zone)
        finally:
            if saved is None:
                del os.environ["TZ"]
            else:
                os.environ["TZ"] = saved
            time.tzset()
        if len(self._cache) > 4096:     # bounded: a long archive walks many quarters
            self._cache.clear()
        self._cache[key] = hit
        return hit

    def when(self, ts: Timestamp) -> str:
        """``YYYY-MM-DD HH:MM:SS.nnnnnnnnn ZONE`` (``...Z`` in UTC); ``@sec.nsec`` when the
        time is outside what a calendar date can show."""
        try:
            gmtoff, abbrev = (0, "") if self.is_utc else self._offset(ts.sec)
        except (OverflowError, OSError, ValueError):
            return f"@{ts.sec}.{ts.nsec:09d}"
        suffix = "Z" if self.is_utc else " " + abbrev
        minute, second = divmod(ts.sec + gmtoff, 60)
        # the calendar's limits fall on whole minutes of UTC and of local time: a time in the
        # UTC minute and the local minute of one shown before is shown too
        key = (minute, ts.sec // 60)
        if self._minute[0] == key:
            return f"{self._minute[1]}{second:02d}.{ts.nsec:09d}{suffix}"
        try:
            dt = datetime.fromtimestamp(ts.sec, tz=UTC)
            if gmtoff:
                dt += timedelta(seconds=gmtoff)
            text = dt.strftime("%Y-%m-%d %H:%M:%S")
        except (OverflowError, OSError, ValueError):
            return f"@{ts.sec}.{ts.nsec:09d}"
        self._minute = (key, text[:-2])
        return f"{text}.{ts.nsec:09d}{suffix}"


UTC_ZONE = ArchiveZone(None)
