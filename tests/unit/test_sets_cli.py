"""The commands on archive sets: every bad set is a located diagnostic and an exit status,
never a traceback; the window replay of a large set is the whole replay's."""

from __future__ import annotations

from pathlib import Path

import pytest

from pcpconform.corpusgen.invalid.sets import SET_CASES, SetCase, build_set_case
from pcpconform.errors import UsageError
from pcpconform.fixtures.sets import DAMAGE, damage_member
from pcpconform.format.pmtypes import Timestamp
from pcpconform.io.archiveset import ArchiveSet
from pcpconform.oracles.interp.replay import Replay
from pcpconform.oracles.interp.window import WindowReplay, open_replay
from tests.cli import run_cli
from tests.setmembers import T, member

COMMANDS = (["interp", "{s}", "seed.counter", "--interval", "7"],
            ["interp", "{s}", "seed.instant", "--interval", "-7", "--rules", "pcp-7"],
            ["derive", "{s}", "--define", "x = rate(seed.counter)", "--interval", "7"],
            ["dump", "{s}"], ["dump", "--format", "jsonl", "--rules", "pcp-7", "{s}"],
            ["check", "--set", "-q", "{s}"])


@pytest.mark.parametrize("case", SET_CASES, ids=[c.name for c in SET_CASES])
def test_every_set_case_through_every_command(tmp_path: Path, case: SetCase) -> None:
    source = build_set_case(case, tmp_path / "s")
    for argv in COMMANDS:
        status, out, err = run_cli(*(a.replace("{s}", source) for a in argv))
        assert "Traceback" not in out + err
        assert status in (0, 1, 2), (argv, status, err)
        if status and argv[0] != "check":
            # the message names a member file (and, for a record, where in it)
            assert "s/" in err or ".meta" in err or ".0" in err, (argv, err)
        if argv[0] == "check":
            assert status == (1 if case.errors else 0)


@pytest.mark.parametrize("kind", list(DAMAGE))
def test_damaged_members_are_located(tmp_path: Path, kind: str) -> None:
    for k in range(3):
        member(tmp_path / f"m{k}", T + 100 * k)
    damage_member(tmp_path / "m1", kind)
    for argv in (["interp", str(tmp_path), "t.counter"], ["interp", str(tmp_path), "t.counter", "--rules", "pcp-7"],
                 ["derive", str(tmp_path), "--define", "x = rate(t.counter)", "--rules", "pcp-7"],
                 ["dump", str(tmp_path)], ["check", "--set", "-q", str(tmp_path)]):
        status, out, err = run_cli(*argv)
        assert "Traceback" not in out + err and status in (0, 1, 2)
        assert status == 0 or "m1" in err + out, (kind, argv, err)
        if "pcp-7" in argv and argv[0] != "dump":
            # a member libpcp 7 drops: the replay is declined (SET-MEMBER-3)
            dropped = ArchiveSet(tmp_path, profile="pcp-7")
            list(dropped.volume_records())
            assert (status == 2) == bool(dropped.dropped), (kind, argv, err)


def test_names_that_are_no_set(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    (tmp_path / "junk").mkdir()
    (tmp_path / "junk" / "a.meta").write_bytes(b"not an archive")
    for name in (tmp_path / "empty", tmp_path / "junk", f"{tmp_path}/nothing,{tmp_path}/else"):
        for argv in (["interp", str(name), "x"], ["dump", str(name)], ["check", "--set", str(name)]):
            status, out, err = run_cli(*argv)
            assert status in (1, 2) and "Traceback" not in out + err and str(tmp_path) in err + out


def test_window_replay_of_a_set_is_the_whole_replay(tmp_path: Path) -> None:
    for k in range(3):
        member(tmp_path / f"m{k}", T + 100 * k, n=12, step=5)
    s = ArchiveSet(tmp_path)
    pmids = [int(d.pmid) for d in s.descs()]
    window = open_replay(s, pmids, rules="pcp-6.3", min_bytes=0)
    assert isinstance(window, WindowReplay)
    start, step = Timestamp(T - 3, 500_000_000), 3_300_000_000
    pieces = [x for chunk in window.schedule_chunks(start, step, 90) for x in chunk]
    assert pieces == Replay(s, pmids, rules="pcp-6.3").schedule(start, step, 90)


def test_a_member_recording_another_type_is_declined_not_crashed(tmp_path: Path) -> None:
    """SET-META-6: under pcp-7 a member whose metadata was lost may record a metric as another
    type; interp and derive decline the set (exit 2) rather than replay its bytes."""
    member(tmp_path / "a", T)
    member(tmp_path / "b", T + 100)
    member(tmp_path / "c", T + 200, ctype="double")
    damage_member(tmp_path / "a", "bad-meta")
    name = ",".join(str(tmp_path / m) for m in ("c", "a", "b"))
    s = ArchiveSet(name, profile="pcp-7")
    with pytest.raises(UsageError, match=r"records 60\.0\.1 as type"):
        s.refuse_retyped()
    for argv in (("interp", name, "t.counter"), ("interp", name, "t.counter", "--rate"),
                 ("derive", name, "-d", "x = rate(t.counter)", "--metric", "x"),
                 ("derive", name, "-d", "x = t.counter", "--metric", "x", "-t", "-5")):
        status, _, err = run_cli(*argv, "--rules", "pcp-7")
        assert status == 2 and "not modelled" in err, argv
