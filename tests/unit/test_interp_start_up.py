"""interp's start-up: an epoch-seconds --start reads as the fixture reader's parse_time reads
it (half-even nanoseconds included) without importing that reader, and the command's
modules leave the fixture reader unimported."""

from __future__ import annotations

import subprocess
import sys

import pytest

from pcpconform.fixtures.fixture import parse_time
from pcpconform.format.pmtypes import Timestamp
from pcpconform.oracles.interp.schedule import parse_when


@pytest.mark.parametrize("text", ["1700000001.738352365", "1700000001", "0.5", "12.0000000005",
                                  "13.0000000005", "12.00000000049", "@ 42.25", "0",
                                  "2023-11-14T22:13:20Z", "2023-11-14T22:13:20.5+01:00"])
def test_absolute_times_read_as_parse_time(text: str) -> None:
    assert parse_when(text, "--start", Timestamp(0), Timestamp(0)) == parse_time(text.lstrip("@").strip(), "x")


def test_epoch_start_leaves_the_fixture_reader_unimported() -> None:
    code = ("import sys\n"
            "import pcpconform.cli.interp\n"
            "from pcpconform.format.pmtypes import Timestamp\n"
            "from pcpconform.oracles.interp.schedule import parse_when\n"
            "parse_when('1700000001.5', '--start', Timestamp(0), Timestamp(0))\n"
            "print('pcpconform.fixtures.fixture' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
