"""Archive sets (spec/sets.md) on fixed cases, against each reference libpcp: PCP QA's set
directories, sets pmlogger, pmlogextract and libpcp_import wrote, the set cases of the
corpus (what libpcp and pmlogextract do with each, against check's verdict), and the
pinned libpcp behaviours (SET-EOL-1, SET-REPLAY-5, SET-REPLAY-7, SET-MEMBER-2)."""

from __future__ import annotations

import json
import shutil
import struct
import subprocess
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

from pcpconform.check.rules import RULES, Severity
from pcpconform.check.sets import check_set
from pcpconform.conform.adapters.pmi_fixture import fixture_to_pmi
from pcpconform.corpusgen.invalid.sets import SET_CASES, SetCase, build_set_case
from pcpconform.errors import FormatError, UsageError
from pcpconform.fixtures.sets import damage_member
from pcpconform.format.pmtypes import PmID, Timestamp
from pcpconform.io.archive import Archive
from pcpconform.io.archiveset import ArchiveSet
from pcpconform.io.setform import namelist, set_profile_for
from pcpconform.oracles.derive.profiles import profile as get_profile
from pcpconform.oracles.interp.model import DEVIATIONS
from tests.cli import run_cli
from tests.differential.libpcp import bridge, derive_compare, pmlogger
from tests.differential.libpcp.referees import LibpcpError, Referee
from tests.differential.libpcp.set_bridge import SetSource, kit_interp, set_interp, set_read
from tests.differential.libpcp.set_compare import kit_document, set_differences
from tests.setmembers import T, member

pytestmark = [pytest.mark.libpcp]
QA = Path("/var/lib/pcp/testsuite/archives")
SECOND = 10**9


def _same_read(referee: Referee, source: SetSource) -> dict[str, object]:
    theirs = set_read(referee, source)
    diffs = set_differences(theirs, kit_document(source.name(), referee.set_profile))
    assert not diffs, f"{referee.name} reads {source.name()} differently:\n" + "\n".join(diffs)
    return theirs


def _schedules(s: ArchiveSet) -> Iterator[tuple[Timestamp, int, int]]:
    """Forwards and backwards across every seam, at a step that lands between records."""
    lo, hi = s.start.total_nsec(), s.end().total_nsec()      # type: ignore[union-attr]
    span = hi - lo
    step = max(span // 37, 1)
    yield Timestamp.from_nsec(lo + step // 3), step, 37
    yield Timestamp.from_nsec(hi - step // 3), -step, 37


def _same_replays(referee: Referee, source: SetSource, pmids: list[int] | None = None) -> int:
    """Replay every schedule on both sides; the number of fetches compared."""
    s = ArchiveSet(source.name(), profile=referee.set_profile)
    pmids = pmids or sorted(int(d.pmid) for d in s.descs())[:12]
    compared = 0
    for start, delta, count in _schedules(s):
        ours = kit_interp(source, referee.set_profile, referee.interp_rules, start, delta, count, pmids,
                          tuple(DEVIATIONS))
        got = set_interp(referee, source, start, delta, count, pmids)
        assert got.signal is None or delta < 0      # SET-REPLAY-7: backwards only
        assert got.fetches == ours[:len(got.fetches)], f"{source.name()} from {start} every {delta}"
        compared += len(got.fetches)
    return compared


# ---- PCP QA's set directories -----------------------------------------------------------------

@pytest.mark.parametrize("name", ["multi", "multi-xz"])
def test_qa_sets_read_and_replay_as_libpcp(referee: Referee, name: str) -> None:
    source = SetSource(QA / name)
    theirs = _same_read(referee, source)
    assert sum(r["mark"] for r in theirs["results"]) == 3        # a virtual mark at each seam
    assert _same_replays(referee, source) > 50
    # the command line gives libpcp's values too
    status, out, _ = run_cli("interp", str(QA / name), "kernel.all.load", "--interval", "30", "--format", "json",
                             "--rules", "pcp-7" if referee.set_profile == "pcp-7" else referee.interp_rules)
    assert status == 0
    doc = json.loads(out)
    s = ArchiveSet(QA / name)
    pmid = int(s.desc("kernel.all.load").pmid)
    got = set_interp(referee, source, s.start, 30 * SECOND, len(doc["samples"]), [pmid])
    assert [smp["eol"] for smp in got.fetches] == [smp["eol"] for smp in doc["samples"]]
    ours = kit_interp(source, referee.set_profile, referee.interp_rules, s.start, 30 * SECOND,
                      len(doc["samples"]), [pmid])
    assert ours == got.fetches
    # the command's values are libpcp's, fetch by fetch and instance by instance
    cli = [sorted(i["inst"] for m in smp.get("metrics", []) for i in m["instances"] if i["value"] is not None)
           for smp in doc["samples"]]
    assert cli == [sorted(inst for inst, _ in f["values"].get(str(PmID(pmid)), [])) for f in got.fetches]


@pytest.mark.parametrize("members", [("19970807.09.54", "19970807.09.59"), ("20150105.17.57", "20150105.17.57-00"),
                                     ("20190628.04.03", "20190628.06.31"), ("20150105.17.57", "20180102")])
def test_qa_archives_of_one_host_as_lists(referee: Referee, members: tuple[str, str]) -> None:
    """PCP QA's archives of one host given as a comma list: opened (or refused: a type and a
    semantics change) and replayed as libpcp does."""
    source = SetSource(QA, members)
    theirs = _same_read(referee, source)
    if "open_error" in theirs:
        assert theirs["open_error"] in ("PM_ERR_LOGCHANGETYPE", "PM_ERR_LOGCHANGESEM")
    else:
        assert _same_replays(referee, source) > 20


def test_qa_corrupted_set(referee: Referee) -> None:
    """SET-MEMBER-3: PCP 6 stops at the damaged record (PM_ERR_LOGREC); PCP 7.2.2 leaves the
    rest of that member out and goes on, with no virtual mark."""
    source = SetSource(QA / "multi-corrupted")
    theirs = _same_read(referee, source)
    if referee.set_profile == "pcp-7":
        assert theirs["error"] is None and sum(r["mark"] for r in theirs["results"]) == 2
    else:
        assert theirs["error"] == "PM_ERR_LOGREC"
    report = check_set(QA / "multi-corrupted")
    assert [d.code for d in report.diagnostics] == ["set.member-damaged"]
    if referee.set_profile == "pcp-7":
        # PM_MODE_INTERP across the damage leaves the set's order in 7.2.2 (pinned): a fetch
        # in the gap before the damaged member has the last member's pmlogger instance, and
        # every fetch from inside the damaged member on is end of log; the kit declines it
        s = ArchiveSet(source.name(), profile="pcp-7")
        pmids = sorted(int(d.pmid) for d in s.descs())[:12]
        step = (s.end().total_nsec() - s.start.total_nsec()) // 100    # type: ignore[union-attr]
        start = Timestamp.from_nsec(s.start.total_nsec() + step // 3)
        got = set_interp(referee, source, start, step, 100, pmids).fetches
        port = str(PmID("2.3.0"))
        assert [6819, 4330] in got[38]["values"][port] and all(f["eol"] for f in got[45:])
        with pytest.raises(UsageError, match="libpcp 7 drops"):
            kit_interp(source, "pcp-7", referee.interp_rules, start, step, 100, pmids)


# ---- sets libpcp's own tools wrote ------------------------------------------------------------------

@pytest.fixture(scope="module")
def pmlogger_set(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three archives pmlogger 6.0.3 recorded one after another into one directory, the first
    in version 2 and the others in version 3 (as after an upgrade)."""
    if not pmlogger.available():
        pytest.skip("needs root and pmlogger")      # a failure in CI (conftest)
    root = tmp_path_factory.mktemp("pmlogger-set")
    session = pmlogger.PmcdSession()
    session.start(root)
    try:
        for k, version in enumerate((2, 3, 3)):
            pmlogger.record_with(session, root, root / "log" / f"20260101.00.{k:02d}", version=version, samples=8)
    finally:
        session.stop()
    for f in (root / "log").iterdir():
        if not f.name.startswith("2026"):
            f.unlink()
    return root / "log"


class RefereeDied(UserWarning):
    """A referee died by a signal on a set recorded in this run; that comparison is left out."""


def _same_read_of_recordings(referee: Referee, source: SetSource) -> None:
    """``_same_read`` of a set made of this run's pmlogger recordings. FMT-DIV-27: 6.0.3
    corrupts its heap on deltas that add instances and dies on some recordings; what it did
    in this run, not the recording, decides that the read is not compared."""
    try:
        _same_read(referee, source)
    except LibpcpError as exc:
        if exc.returncode >= 0:
            raise
        warnings.warn(RefereeDied(f"{referee.name} read of {source.name()}: {exc}"), stacklevel=2)


def test_pmlogger_set(referee: Referee, pmlogger_set: Path) -> None:
    source = SetSource(pmlogger_set)
    _same_read_of_recordings(referee, source)
    s = ArchiveSet(pmlogger_set)
    pmids = [int(s.desc(m).pmid) for m in ("kernel.all.load", "kernel.all.cpu.user", "disk.dev.read",
                                            "mem.util.used", "hinv.ncpu")]
    assert _same_replays(referee, source, pmids) > 50
    assert {d.code for d in check_set(pmlogger_set).diagnostics} == {"set.versions"}


def test_pmlogextract_splits(tmp_path: Path, referee: Referee, pmlogger_archives: dict[str, Path]) -> None:
    """A 3 s pmlogger recording cut in three by pmlogextract -S/-T, as pmlogger_daily's
    splits are; the pieces replay as one set exactly as libpcp replays them. (pmlogextract
    6.0.3 ends a -T window, counted from its -S start, about one second late -- -T +0sec
    keeps 0.92 s of 100 ms samples -- so the cuts are: -T +0sec, -S +1sec -T +0sec, -S +2sec.)"""
    base = pmlogger_archives["v3"]
    out = tmp_path / "split"
    out.mkdir()
    for k, window in enumerate((["-T", "+0sec"], ["-S", "+1sec", "-T", "+0sec"], ["-S", "+2sec"])):
        subprocess.run(["pmlogextract", *window, str(base), str(out / f"piece{k}")], check=True,
                       capture_output=True, timeout=60)
    source = SetSource(out)
    _same_read_of_recordings(referee, source)
    assert len(ArchiveSet(out).members) == 3
    assert _same_replays(referee, source) > 50
    assert {d.code for d in check_set(out).diagnostics} == set()


def test_pmi_written_members(tmp_path: Path, referee: Referee) -> None:
    """Members libpcp_import wrote (each referee's own) from the corpus's gap case."""
    case = next(c for c in SET_CASES if c.name == "set-gaps")
    out = tmp_path / "pmi"
    out.mkdir()
    for m in case.make():
        bridge.pmi_write(referee, fixture_to_pmi(m.fixture, 3), out / m.name)
    source = SetSource(out)
    _same_read(referee, source)
    assert _same_replays(referee, source) > 50


# ---- the corpus's set cases: libpcp reads and replays what the kit expects --------------------------

CORPUS_SETS = sorted(p for p in (Path(__file__).resolve().parents[2] / "corpus" / "cases" / "valid").glob("set-*"))


@pytest.mark.parametrize("case", CORPUS_SETS, ids=[p.name for p in CORPUS_SETS])
def test_corpus_sets_read_and_replay_as_libpcp(referee: Referee, case: Path) -> None:
    data = json.loads((case / "case.json").read_text(encoding="utf-8"))
    listed = data["set"].get("list")
    source = SetSource(case, tuple(listed) if listed else None)
    _same_read(referee, source)
    assert _same_replays(referee, source) > 20


# ---- the set cases of the corpus: libpcp, pmlogextract and check agree -----------------------------

def _pmlogextract_merges(referee: Referee, directory: Path) -> bool:
    names = sorted(Path(n).name for n in namelist(directory))
    proc = referee.tool(["pmlogextract", *(directory / n for n in names), directory / "merged"],
                        dirs=[directory], outputs=[directory / "merged"])
    for f in directory.glob("merged.*"):
        f.unlink()
    return proc.returncode == 0


@pytest.mark.parametrize("case", SET_CASES, ids=[c.name for c in SET_CASES])
def test_set_case_verdicts(tmp_path: Path, referee: Referee, case: SetCase) -> None:
    """check's errors are where a libpcp refuses or misreads the set or pmlogextract will
    not merge it; its warnings where every libpcp reads it and pmlogextract merges it."""
    name = build_set_case(case, tmp_path / "s")
    source = SetSource(tmp_path / "s", tuple(Path(p).name for p in name.split(",")) if "," in name else None)
    theirs = set_read(referee, source)
    assert set_differences(theirs, kit_document(name, referee.set_profile)) == []
    refused = "open_error" in theirs or theirs["error"] is not None
    merges = _pmlogextract_merges(referee, tmp_path / "s")
    codes = {d.code for d in check_set(name).diagnostics}
    errors = {c for c in codes if RULES[c].severity == Severity.ERROR}
    if not case.errors:
        assert not refused and merges
    if case.name in ("set-rename",):
        assert not merges           # pmlogextract refuses a renamed metric; libpcp merges it
    if case.name in ("set-host", "set-type", "set-units", "set-same-start"):
        assert refused
    if case.name == "set-unreadable":
        assert refused == (referee.set_profile != "pcp-7")     # SET-MEMBER-2
    if case.name in ("set-overlap", "set-damaged"):
        assert theirs.get("error") in ("PM_ERR_LOGOVERLAP", "PM_ERR_LOGREC") or referee.set_profile == "pcp-7"
    assert errors == set(case.errors)


# ---- pinned libpcp behaviours ---------------------------------------------------------------------

def _gap(directory: Path) -> SetSource:
    for k in range(3):
        member(directory / f"m{k}", T + 100 * k, n=5)
    return SetSource(directory)


COUNTER, INSTANT = int(PmID("60.0.1")), int(PmID("60.0.2"))


def test_end_of_log_only_in_the_last_member(tmp_path: Path, referee: Referee) -> None:
    """SET-EOL-1: after a fetch in the first member, the next fetch beyond the set's end
    still reads (no values for counters and instants here), the one after it is end of log."""
    source = _gap(tmp_path / "gap")
    got = set_interp(referee, source, Timestamp(T + 5), 1000 * SECOND, 3, [COUNTER, INSTANT])
    assert [f["eol"] for f in got.fetches] == [False, False, True]
    assert kit_interp(source, referee.set_profile, referee.interp_rules, Timestamp(T + 5), 1000 * SECOND, 3,
                      [COUNTER, INSTANT]) == got.fetches
    # from the last member, end of log at once
    got = set_interp(referee, source, Timestamp(T + 205), 1000 * SECOND, 2, [COUNTER])
    assert [f["eol"] for f in got.fetches] == [False, True]


def test_a_damaged_first_member_is_declined_under_pcp7(tmp_path: Path, referee: Referee) -> None:
    """SET-MEMBER-3: PCP 6 stops at the damage (PM_ERR_LOGREC; the kit raises the record's
    FormatError). PCP 7 removes the first member from its list when a forward replay reads
    its damaged record and from then on measures times from the next member's start, in the
    middle of that fetch: its values are the next member's at the fetch's offset from the old
    start (pinned), and a later fetch before the new start is end of log. The kit declines
    that replay (UsageError, exit status 2)."""
    d = tmp_path / "front"
    member(d / "m1", T)
    member(d / "m2", T + 100)
    first = next(Archive(d / "m1").volume_records())[1]
    with open(d / "m1.0", "r+b") as f:
        f.truncate(first.offset + 12)                 # the first record cut short
    source, pmids = SetSource(d), [COUNTER, INSTANT]
    got = set_interp(referee, source, Timestamp(T + 5), SECOND, 2, pmids)
    if referee.set_profile != "pcp-7":
        assert {f["error"] for f in got.fetches} == {"PM_ERR_LOGREC"}
        with pytest.raises(FormatError):
            kit_interp(source, referee.set_profile, referee.interp_rules, Timestamp(T + 5), SECOND, 2, pmids)
        return
    with pytest.raises(UsageError, match="libpcp 7 drops"):
        kit_interp(source, referee.set_profile, referee.interp_rules, Timestamp(T + 5), SECOND, 2, pmids)
    shifted = kit_interp(SetSource(d, ("m2",)), referee.set_profile, referee.interp_rules, Timestamp(T + 105),
                         SECOND, 1, pmids)
    assert got.fetches[0]["values"] == shifted[0]["values"] and shifted[0]["values"][str(PmID(COUNTER))]
    later = set_interp(referee, source, Timestamp(T + 50), SECOND, 3, pmids)
    assert [f["eol"] for f in later.fetches] == [False, True, True]


def test_backward_replay_across_a_seam_kills_libpcp(tmp_path: Path, referee: Referee) -> None:
    """SET-REPLAY-7: pinned per referee; a referee that stops dying here fails this test
    until the clause records it, and the kit's values up to the death are libpcp's."""
    source = _gap(tmp_path / "gap")
    start = Timestamp(T + 110)
    got = set_interp(referee, source, start, -2_500_000_000, 40, [COUNTER, INSTANT])
    assert got.signal is not None
    ours = kit_interp(source, referee.set_profile, referee.interp_rules, start, -2_500_000_000, 40,
                      [COUNTER, INSTANT])
    assert len(got.fetches) >= 12 and got.fetches == ours[:len(got.fetches)]


def test_overlap_stops_libpcps_replay_and_the_kit_refuses_it(tmp_path: Path, referee: Referee) -> None:
    """SET-REPLAY-5: across an overlapping seam libpcp replays no values (and the forward
    read fails with PM_ERR_LOGOVERLAP); the kit does not replay the set."""
    member(tmp_path / "o" / "m1", T, n=5)
    member(tmp_path / "o" / "m2", T + 25, n=5)
    source = SetSource(tmp_path / "o")
    assert set_read(referee, source)["error"] == "PM_ERR_LOGOVERLAP"
    got = set_interp(referee, source, Timestamp(T), 10 * SECOND, 9, [COUNTER, INSTANT])
    assert got.fetches[4]["values"][str(PmID(COUNTER))]                           # 40 s, in m1
    assert all(not v for f in got.fetches[5:] for v in f["values"].values())      # after the seam
    with pytest.raises(FormatError) as exc:
        kit_interp(source, referee.set_profile, referee.interp_rules, Timestamp(T), 10 * SECOND, 9, [COUNTER])
    assert exc.value.code == "set.overlap"


def test_unreadable_member_loses_earlier_metadata_in_pcp7(tmp_path: Path, referee: Referee) -> None:
    """SET-MEMBER-2: 6.x refuses the set; 7.x leaves the member out and the metadata of the
    members opened before it is lost (unless it is the last name)."""
    d = tmp_path / "lost"
    member(d / "m1", T)
    member(d / "m2", T + 100)
    member(d / "m3", T + 200, insts={"c": 2})
    (d / "m2.0").write_bytes(b"")
    for order in (("m1", "m2", "m3"), ("m1", "m3", "m2")):
        source = SetSource(d, order)
        _same_read(referee, source)
        theirs = set_read(referee, source)
        if referee.set_profile != "pcp-7":
            assert theirs["open_error"] == "PM_ERR_NODATA"
    shutil.rmtree(d)


def test_referees_named(referee: Referee) -> None:
    """Each referee's set profile is the one SET-VER-1 gives its version."""
    assert set_profile_for(referee.version) == referee.set_profile


ONLY_FIRST, EXTRA, UNDER_NEW_NODE = int(PmID("60.0.5")), int(PmID("60.0.3")), int(PmID("60.0.4"))


def _names_set(directory: Path) -> None:
    """m1 with v.only (60.0.5); m2, 1 ms after it, with t.extra (a string, 60.0.3: a new leaf
    of t) and u.extra (60.0.4: under a node u no other member has)."""
    member(directory / "m1", T, extra=[("v.only", 5, "double")])
    member(directory / "m2", T + 20.001, extra=[("t.extra", 3, "string"), ("u.extra", 4, "double")])


@pytest.mark.parametrize("order", [("m1", "m2"), ("m2", "m1")])
def test_names_under_a_node_a_later_member_made(tmp_path: Path, referee: Referee, order: tuple[str, str]) -> None:
    """SET-META-4: every member's metrics are known by pmID from the open on (descriptor,
    pmNameAll, values: a forward read and an INTERP replay give the later member's values);
    PCP 6.0 finds no name under a node the first member of the namelist did not make, before
    or after a replay reaches the member that has it."""
    _names_set(tmp_path / "n")
    source = SetSource(tmp_path / "n", order)
    theirs = _same_read(referee, source)
    found = set(theirs["names_at_open"])
    if referee.set_profile == "pcp-6.0":
        assert found >= {"t.counter", "t.instant", "t.extra"}
        assert ("u.extra" in found, "v.only" in found) == ((False, True) if order[0] == "m1" else (True, False))
    else:
        assert found >= {"t.extra", "u.extra", "v.only"}
    later = theirs["results"][-1]["values"]
    assert later[str(PmID(UNDER_NEW_NODE))]["numval"] == 1 and "nodesc" not in later[str(PmID(UNDER_NEW_NODE))]
    assert theirs["metrics"][str(PmID(UNDER_NEW_NODE))]["names"] == ["u.extra"]
    assert _same_replays(referee, source, [COUNTER, ONLY_FIRST, EXTRA, UNDER_NEW_NODE]) > 30
    got = set_interp(referee, source, Timestamp(T + 25), 5 * SECOND, 2, [EXTRA, UNDER_NEW_NODE]).fetches
    assert all(f["values"][str(PmID(p))] for f in got for p in (EXTRA, UNDER_NEW_NODE))
    # by name, the interp command finds what libpcp finds
    rules = "pcp-7" if referee.set_profile == "pcp-7" else referee.interp_rules
    status, _, err = run_cli("interp", source.name(), "u.extra", "--rules", rules, "--format", "json")
    assert (status == 0) == ("u.extra" in found), err


def test_derived_metrics_bind_to_the_names_found_at_open(tmp_path: Path, referee: Referee) -> None:
    """SET-META-4: a derived metric binds when the context is opened, to the names found
    then: under PCP 6.0 one of v.only and u.extra (whichever is under a node the directory's
    first member did not make) does not bind; under 6.3 and 7 both do. Replayed across the
    seam, the kit's values are libpcp's."""
    _names_set(tmp_path / "n")
    directory = tmp_path / "n"
    s = ArchiveSet(directory, profile=referee.set_profile)
    texts = ["u.extra * 2", "v.only * 2", "t.instant + 1"]
    schedule = (Timestamp(T + 3), 5 * SECOND, 9)
    cmp = derive_compare.compare(referee, get_profile(referee.derive_profile), directory, texts, schedule,
                                 archive=s)
    assert derive_compare.mismatches(cmp) == []
    bound = [cmp.theirs[derive_compare.name_of(k)].desc is not None for k in range(3)]
    assert bound[2] and sum(bound[:2]) == (1 if referee.set_profile == "pcp-6.0" else 2)


def test_a_member_whose_metadata_was_lost_keeps_its_types(tmp_path: Path, referee: Referee) -> None:
    """SET-META-6: 6.x refuses the set (the member that cannot be opened, or the type change
    at open); 7.x loses the metadata of the members opened before the failed one, so no
    type change is seen, and their values are extracted by the set's descriptor: a value
    recorded as another type is PM_ERR_CONV; a replay reads its bytes as the set's type,
    which the kit declines."""
    d = tmp_path / "retyped"
    member(d / "a", T)
    member(d / "b", T + 100)
    member(d / "c", T + 200, ctype="double")
    damage_member(d / "a", "bad-meta")
    for order, refused in ((("b", "a", "c"), None), (("c", "a", "b"), None), (("b", "c", "a"), "PM_ERR_LOGCHANGETYPE"),
                           (("a", "b", "c"), "PM_ERR_LOGCHANGETYPE")):
        source = SetSource(d, order)
        theirs = _same_read(referee, source)
        if referee.set_profile != "pcp-7":
            assert theirs["open_error"] in ("PM_ERR_LOGREC", "PM_ERR_LOGCHANGETYPE")     # SET-MEMBER-2
            continue
        assert theirs.get("open_error") == refused, order
        if refused:
            continue
        lost = 100 if order[-1] == "c" else 200     # b's records, or c's: the members whose metadata is lost
        conv = [r["time"][0] for r in theirs["results"]
                if any(v[1] == "error:PM_ERR_CONV" for v in r["values"].get(str(PmID(COUNTER)), {}).get("values", []))]
        assert conv == [T + lost + k * 10 for k in range(3)], order
        at = Timestamp(T + lost + 5)
        with pytest.raises(UsageError):
            kit_interp(source, referee.set_profile, referee.interp_rules, at, 10 * SECOND, 3, [COUNTER])
        got = set_interp(referee, source, at, 10 * SECOND, 1, [COUNTER])
        # halfway between the lost member's first two values (0 and 100), their bytes read as
        # the set's type: the u64s as doubles (the u64 50's bits), or the doubles as u64s
        half = "f64:0000000000000032" if lost == 100 else struct.unpack(">Q", struct.pack(">d", 100.0))[0] // 2
        assert got.fetches[0]["values"][str(PmID(COUNTER))] == [[0, half], [1, half]], order
    shutil.rmtree(d)
