"""The pinned examples of libpcp's bound cache (tests/interp_pins.py) against each reference
libpcp: it still returns what tests/data/interp-cache-pins.json recorded, which the oracle
emulating INTERP-DEV-5 gives (tests/unit/test_interp_cache_pins.py); and the replay that
kills every libpcp (INTERP-DEV-4) still does."""

from __future__ import annotations

from pathlib import Path

import pytest

from pcpconform.fixtures.fixture import parse_fixture
from pcpconform.fixtures.generate import generate_archive
from pcpconform.format.pmtypes import Timestamp
from pcpconform.io.archive import Archive
from tests.differential.libpcp.interp_bridge import libpcp_segments_view
from tests.differential.libpcp.referees import LibpcpError, Referee
from tests.interp_pins import PINS, Pin, build, pinned, pmids_of, segments_of

pytestmark = [pytest.mark.libpcp]


@pytest.mark.parametrize("pin", PINS, ids=[p.id for p in PINS])
def test_libpcp_still_gives_the_pinned_answer(pin: Pin, referee: Referee, tmp_path: Path) -> None:
    base = build(pin, tmp_path)
    view = libpcp_segments_view(referee, base, segments_of(pin, base), pmids_of(pin, base))
    assert view == pinned()[pin.id][referee.name]


#: INTERP-DEV-4: a second pmSetMode to the upper bound a string's first fetch cached, then two
#: fetches (the bounds bracket the new time and are kept, INTERP-CACHE-2): double free
STRINGS = {"archive": {"version": 3, "hostname": "pin.example", "timezone": "UTC"},
           "metrics": [{"name": "m.str", "pmid": "60.0.1", "type": "string", "sem": "instant"}],
           "samples": [{"time": str(1740000000 + 10 * k), "values": {"m.str": v}} for k, v in enumerate("zabcd")]}
CRASHES = {"pcp-6.0.3": True, "pcp-6.3": True, "pcp-7": True}


def test_second_set_mode_on_kept_string_bounds_kills_libpcp(referee: Referee, tmp_path: Path) -> None:
    generate_archive(parse_fixture(STRINGS), tmp_path / "a")
    start = Archive(tmp_path / "a").start.total_nsec()
    segments = [(Timestamp.from_nsec(start + 15 * 10**9), 5 * 10**9, 1),
                (Timestamp.from_nsec(start + 20 * 10**9), 5 * 10**9, 2)]
    try:
        libpcp_segments_view(referee, tmp_path / "a", segments, [int(Archive(tmp_path / "a").desc("m.str").pmid)])
    except LibpcpError as exc:
        assert CRASHES[referee.name] and exc.returncode < 0, exc
        return
    assert not CRASHES[referee.name], "libpcp no longer dies here: record it and compare its values"
