"""The text dump shows times and floating-point values as each libpcp's ``pmdumplog -az`` does
(DUMP-LIST-1, DUMP-LIST-3): the same local times in the archive's timezone, the same
abbreviation-free clock, and the same digits for FLOAT and DOUBLE values."""

from __future__ import annotations

import io
import random
import re
import struct
from pathlib import Path

import pytest

from pcpconform.dump.text import write_text
from pcpconform.fixtures.fixture import parse_fixture
from pcpconform.fixtures.generate import generate_archive
from pcpconform.io.archive import Archive
from tests.differential.libpcp.referees import Referee

ZONES = ["UTC", "AEST-10", "EST5EDT", "ACST-9:30", "NZST-12NZDT,M9.5.0,M4.1.0/3", ":Europe/Berlin"]


def _random_floats(rng: random.Random, n: int) -> list[str]:
    out = ["0x" + struct.pack(">f", v).hex() for v in (0.1, 1 / 3, 1e20, 123456.789, -0.0, 16777217.0)]
    while len(out) < n:
        out.append(f"0x{rng.getrandbits(32):08x}")
    return out


def _random_doubles(rng: random.Random, n: int) -> list[str]:
    out = ["0x" + struct.pack(">d", v).hex() for v in (0.1 + 0.2, 1e300, 2.0**-1074, 1 / 3)]
    while len(out) < n:
        out.append(f"0x{rng.getrandbits(64):016x}")
    return out


def _fixture(zone: str, version: int, seed: int) -> dict:
    rng = random.Random(seed)
    floats, doubles = _random_floats(rng, 40), _random_doubles(rng, 40)
    start = 1_700_000_000 + rng.randrange(0, 365 * 86400)
    samples = []
    for i, (f, d) in enumerate(zip(floats, doubles)):
        samples.append({"time": start + i * 86400 * 5 + rng.randrange(0, 3600),
                        "values": {"t.f": f, "t.d": d}})
    return {"archive": {"version": version, "hostname": "h", "timezone": zone},
            "metrics": [{"name": "t.f", "pmid": "60.0.1", "type": "float"},
                        {"name": "t.d", "pmid": "60.0.2", "type": "double"}],
            "samples": samples}


_RESULT = re.compile(r"^(?:\d{4}-\d\d-\d\d )?(\d\d:\d\d:\d\d\.\d+)Z?(?: [^ ]+)? \d+ metrics?$")
_VALUE = re.compile(r"^\s+60\.0\.\d \(t\.[fd]\): value (\S+)$")


def _times_and_values(text: str, fraction_digits: int) -> list[tuple[str, ...]]:
    """(clock time, value, value) per result; the clock cut to ``fraction_digits``."""
    rows: list[tuple[str, ...]] = []
    for line in text.splitlines():
        m = _RESULT.match(line)
        if m:
            clock, frac = m.group(1).split(".")
            rows.append((clock + "." + frac[:fraction_digits],))
            continue
        v = _VALUE.match(line)
        if v and rows:
            rows[-1] = (*rows[-1], v.group(1))
    return rows


@pytest.mark.parametrize("zone", ZONES)
def test_text_dump_times_and_values_match_pmdumplog(referee: Referee, zone: str, tmp_path: Path) -> None:
    version = 2 if zone in ("EST5EDT", ":Europe/Berlin") else 3
    base = tmp_path / "a"
    generate_archive(parse_fixture(_fixture(zone, version, len(zone)), source="zones"), base)
    ours = io.StringIO()
    write_text(Archive(base), ours)
    proc = referee.on_archive(["pmdumplog", "-az", base], base)
    assert proc.returncode == 0, proc.stderr
    digits = 6 if version == 2 else 9
    theirs_rows = _times_and_values(proc.stdout, digits)
    ours_rows = _times_and_values(ours.getvalue(), digits)
    assert len(ours_rows) == 40
    assert ours_rows == theirs_rows


def test_utc_option_keeps_utc(tmp_path: Path) -> None:
    base = tmp_path / "a"
    generate_archive(parse_fixture(_fixture("AEST-10", 3, 1), source="zones"), base)
    local, utc = io.StringIO(), io.StringIO()
    write_text(Archive(base), local)
    write_text(Archive(base), utc, utc=True)
    assert " AEST " in local.getvalue() and "Z 2 metrics" in utc.getvalue()
    assert "AEST" not in utc.getvalue().split("Archive timezone")[1].split("\n", 1)[1]
