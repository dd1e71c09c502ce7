"""SET-REPLAY-4 against each reference libpcp: a set whose last member was cut inside its
last record, with a temporal index entry at the start of that record (written when the
record brought new metadata) and one past the end of the file."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from pcpconform.fixtures.sets import damage_member
from pcpconform.format.pmtypes import Timestamp
from pcpconform.io.archive import Archive
from pcpconform.io.archiveend import last_record_time
from tests.differential.libpcp.referees import Referee
from tests.differential.libpcp.set_bridge import SetSource, set_read
from tests.differential.libpcp.set_compare import kit_document, set_differences
from tests.setmembers import T, churn_member, member

pytestmark = [pytest.mark.libpcp]
SECOND = 10**9


def _cut_member(base: Path, t0: int) -> None:
    """Four samples 10 s apart; the last adds instance c (an instance domain record, so an
    index entry at the start of the last record), then the volume is cut inside it."""
    ab = {"a": 0, "b": 1}
    churn_member(base, [t0 + 10 * k for k in range(4)], [ab, ab, ab, {**ab, "c": 2}])
    damage_member(base, "truncated")


@pytest.mark.parametrize("seam", ["gap", "touch"])
def test_a_cut_last_member_ends_at_its_last_whole_record(tmp_path: Path, referee: Referee, seam: str) -> None:
    """pmGetArchiveEnd chases forwards from the record ending at the last index entry at or
    before the volume's physical end, that record included: the set opens, its end is the
    last whole record, and a forward read gives libpcp's results (a replay over the cut
    is SET-MEMBER-3's)."""
    directory = tmp_path / "s"
    member(directory / "m1", T, 3)                       # T .. T+20
    _cut_member(directory / "m2", T + 20 if seam == "touch" else T + 30)
    last = Archive(directory / "m2")
    entries = [e.off_data for e in last.index_entries()]
    size = (directory / "m2.0").stat().st_size
    assert entries[-1] > size and any(808 < e <= size for e in entries)     # the shape this test is about
    assert last_record_time(last) == Timestamp(T + (40 if seam == "touch" else 50))
    source = SetSource(directory)
    theirs = set_read(referee, source)
    diffs = set_differences(theirs, kit_document(source.name(), referee.set_profile))
    assert not diffs, "\n".join(diffs)
    assert "open_error" not in theirs
    # the forward pass reads up to the cut: PCP 6.0 and 6.3 stop there with PM_ERR_LOGREC, PCP 7
    # drops the rest of the member (SET-MEMBER-3)
    assert theirs["error"] == (None if referee.set_profile == "pcp-7" else "PM_ERR_LOGREC")
    assert theirs["end"] == [T + (40 if seam == "touch" else 50), 0]


def _bad_trailer(base: Path) -> None:
    """The second record's trailer word made 0xffffffff: framing from the start stops there,
    the records after it are whole."""
    vol = base.with_name(base.name + ".0")
    data = bytearray(vol.read_bytes())
    offset = 808                                         # the first record (version 3 label)
    offset += struct.unpack_from(">I", data, offset)[0]
    length = struct.unpack_from(">I", data, offset)[0]
    struct.pack_into(">I", data, offset + length - 4, 0xFFFFFFFF)
    vol.write_bytes(bytes(data))


@pytest.mark.parametrize("seam", ["gap", "overlap"])
def test_a_last_member_unframed_in_the_middle_ends_at_its_last_record(tmp_path: Path, referee: Referee,
                                                                      seam: str) -> None:
    """pmGetArchiveEnd reads the record that ends the file backwards first (its trailer gives
    its length): damage before it does not matter, the set opens and ends there (found by
    the random set test with an overlap at the last seam)."""
    directory = tmp_path / "s"
    member(directory / "m1", T, 3)                       # T .. T+20
    member(directory / "m2", T + 15 if seam == "overlap" else T + 30, 4)
    _bad_trailer(directory / "m2")
    end = T + (45 if seam == "overlap" else 60)
    assert last_record_time(Archive(directory / "m2")) == Timestamp(end)
    source = SetSource(directory)
    theirs = set_read(referee, source)
    diffs = set_differences(theirs, kit_document(source.name(), referee.set_profile))
    assert not diffs, "\n".join(diffs)
    assert theirs["end"] == [end, 0]
