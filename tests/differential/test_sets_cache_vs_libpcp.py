"""libpcp's bound cache over an archive set (spec/sets.md SET-REPLAY-8, SET-REPLAY-9), on
fixed sets against each reference libpcp: a seam's virtual mark is made once, so a fetch
after one that read it can be bounded from both sides of the seam, where the rules (and
one archive alone) give no value."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pcpconform.fixtures.fixture import parse_fixture
from pcpconform.fixtures.generate import generate_archive
from pcpconform.format.pmtypes import PmID, Timestamp
from pcpconform.io.archiveset import ArchiveSet
from pcpconform.oracles.derive.profiles import profile as get_profile
from pcpconform.oracles.interp.model import DEVIATIONS
from tests.differential.libpcp import derive_compare
from tests.differential.libpcp.referees import Referee
from tests.differential.libpcp.set_bridge import SetSource, kit_interp, set_interp
from tests.setmembers import T, member

pytestmark = [pytest.mark.libpcp]
COUNTER, INSTANT, DISCRETE = str(PmID("60.0.1")), str(PmID("60.0.2")), str(PmID("60.0.3"))


def _one_record_first(directory: Path) -> SetSource:
    """A first member with one record (at T), the second 100 s later."""
    member(directory / "m1", T, n=1)
    member(directory / "m2", T + 100, n=3)
    return SetSource(directory)


def _replays(referee: Referee, source: SetSource, start: Timestamp, step: int, count: int,
             pmids: list[str]) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """libpcp's fetches, the kit's with libpcp's deviations and the kit's rules alone."""
    ids = [int(PmID(p)) for p in pmids]
    got = set_interp(referee, source, start, step, count, ids)
    assert got.signal is None and got.open_error is None
    emulated = kit_interp(source, referee.set_profile, referee.interp_rules, start, step, count, ids,
                          tuple(DEVIATIONS))
    rules = kit_interp(source, referee.set_profile, referee.interp_rules, start, step, count, ids)
    return got.fetches, emulated, rules


def test_a_virtual_mark_is_read_once(tmp_path: Path, referee: Referee) -> None:
    """SET-REPLAY-9: the fetch at the first member's only record rolls onto the virtual mark
    after it; the fetch 1 ns later searches on past the mark into the second member and
    interpolates between the two members. One archive alone has no value there."""
    source = _one_record_first(tmp_path / "s")
    theirs, ours, rules = _replays(referee, source, Timestamp(T), 1, 3, [COUNTER, INSTANT])
    assert theirs[1]["values"][COUNTER] == [[0, 0], [1, 0]] and theirs[1]["values"][INSTANT]
    assert ours == theirs
    assert rules[1]["values"] == {COUNTER: [], INSTANT: []}        # the mark is the next event
    alone = set_interp(referee, SetSource(tmp_path / "s", ("m1",)), Timestamp(T), 1, 3,
                       [int(PmID(COUNTER)), int(PmID(INSTANT))])
    assert alone.fetches[1]["values"] == {COUNTER: [], INSTANT: []}


def test_delta_over_a_virtual_mark_read_once(tmp_path: Path, referee: Referee) -> None:
    """SET-REPLAY-9 through derived metrics: delta() at the second fetch is 0 in libpcp (the
    counter has values at both fetches), and the kit gives it with libpcp's cache."""
    source = _one_record_first(tmp_path / "s")
    texts = ["delta(t.counter)", "rate(t.counter)", "instant(t.instant)"]
    s = ArchiveSet(source.directory, profile=referee.set_profile)
    cmp = derive_compare.compare(referee, get_profile(referee.derive_profile), source.directory, texts,
                                 (Timestamp(T), 1, 3), archive=s)
    assert derive_compare.mismatches(cmp) == []
    assert [inst for inst, _ in cmp.values_theirs[1]["d.e0"]] == [0, 1]


def _trailing_mark(directory: Path) -> SetSource:
    """A first member whose DISCRETE metric is observed once, then a mark 1 ms later; the
    second member starts 1 ms after that mark (its virtual mark's time) and observes it again
    only after a mark of its own."""
    metrics = [{"name": "t.discrete", "pmid": "60.0.3", "type": "float", "sem": "discrete"},
               {"name": "t.counter", "pmid": "60.0.1", "type": "u64", "sem": "counter"}]
    for name, samples in (("m1", [{"time": T, "values": {"t.discrete": -0.0}}, {"mark": True}]),
                          ("m2", [{"time": T + 0.002, "values": {"t.counter": 0}}, {"mark": True},
                                  {"time": T + 0.004, "values": {"t.counter": 5, "t.discrete": 1.0}}])):
        doc = {"archive": {"version": 3, "hostname": "h1", "timezone": "UTC"}, "metrics": metrics,
               "samples": samples}
        generate_archive(parse_fixture(doc), directory / name)
    return SetSource(directory)


def test_a_discrete_value_outlives_marks_it_never_reads(tmp_path: Path, referee: Referee) -> None:
    """SET-REPLAY-8, -9: the first fetch bounds the DISCRETE metric by its observation and the
    member's own mark above it; fetches after that mark search forwards from the end of the
    member (the mark already behind), read the virtual mark once as the next bound, and then
    the second member: the observation stays the lower bound across both marks."""
    source = _trailing_mark(tmp_path / "s")
    start = Timestamp.from_nsec(T * 10**9 + 66_666)
    theirs, ours, rules = _replays(referee, source, start, 200_000, 12, [DISCRETE])
    assert all(f["values"][DISCRETE] == [[-1, "f32:80000000"]] for f in theirs)
    assert ours == theirs
    assert rules[5]["values"][DISCRETE] == []       # after the member's mark


def test_a_replay_positioned_in_a_member_reads_its_hidden_records(tmp_path: Path, referee: Referee) -> None:
    """SET-REPLAY-2, -8: the second member's first record lies at the first member's last
    (a touching seam), so a replay crossing the seam never delivers it; a replay positioned
    in the second member reads it, and the instant there is interpolated from it."""
    d = tmp_path / "s"
    member(d / "m1", T, n=2)
    member(d / "m2", T + 10, n=3)
    member(d / "m3", T + 100, n=2)
    source = SetSource(d)
    theirs, ours, rules = _replays(referee, source, Timestamp(T + 15), 5 * 10**9, 2, [INSTANT])
    assert theirs[0]["values"][INSTANT] == [[-1, "f64:3ff8000000000000"]]     # 1.5: m2's first record
    assert ours == theirs
    assert rules[0]["values"][INSTANT] == []        # the rules: the virtual mark is the prior event


def test_a_mark_at_the_fetch_time_above_a_discrete_32_bit_value(tmp_path: Path, referee: Referee) -> None:
    """INTERP-CACHE-7 over a set: after the switch to the second member the context no longer
    reads the first member's own mark, which stays the upper bound of a DISCRETE 32-bit
    instance; at a fetch exactly at that mark libpcp returns the word the bound holds (0)."""
    d = tmp_path / "s"
    metrics = [{"name": "t.discrete", "pmid": "60.0.3", "type": "32", "sem": "discrete"},
               {"name": "t.counter", "pmid": "60.0.1", "type": "u64", "sem": "counter"}]
    for name, samples in (("m1", [{"time": T, "values": {"t.discrete": 0}}, {"mark": True}]),
                          ("m2", [{"time": T + 0.002, "values": {"t.discrete": 0}}, {"mark": True},
                                  {"time": T + 0.004, "values": {"t.counter": 0}}])):
        doc = {"archive": {"version": 3, "hostname": "h1", "timezone": "UTC"}, "metrics": metrics,
               "samples": samples}
        generate_archive(parse_fixture(doc), d / name)
    start = Timestamp.from_nsec(T * 10**9 + 100_000)
    theirs, ours, rules = _replays(referee, SetSource(d), start, 300_000, 5, [DISCRETE])
    assert theirs[3]["values"][DISCRETE] == [[-1, 0]]         # at the mark's own time, 1 ms
    assert ours == theirs
    assert rules[3]["values"][DISCRETE] == []
