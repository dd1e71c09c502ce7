"""Archive sets as one source (spec/sets.md): forming, ordering, refusals, seams, replay order."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pcpconform.errors import FormatError, UsageError
from pcpconform.fastpath import PathStats
from pcpconform.format.pmtypes import PmID, Timestamp
from pcpconform.io.archive import Archive
from pcpconform.io.archiveset import VOL_STRIDE, ArchiveSet, open_source
from pcpconform.io.bulk import decode_result
from pcpconform.io.setform import log_base_name, namelist
from pcpconform.io.setrecords import forward_mark_time, v2_result_as_v3
from tests.setmembers import T, member


def times(s: ArchiveSet) -> list[tuple[float, bool]]:
    return [(round(r.timestamp.total_nsec() / 1e9 - T, 3), not r.vsets) for r in s.results()]


def test_log_base_name_is_libpcps() -> None:
    assert log_base_name("20250101.meta") == ("20250101", "meta")
    assert log_base_name("a.b.0.xz") == ("a.b", "0")
    assert log_base_name("a.meta.zst") == ("a", "meta")
    assert log_base_name("a.meta.zst", "pcp-6.0") is None       # .zst from 6.3.2 only
    assert log_base_name("a.index") == ("a", "index")
    assert log_base_name("a.+12") == ("a", "+12")                # strtol takes a sign
    assert log_base_name("a.1x") is None and log_base_name(".xz") is None and log_base_name("a") is None


def test_namelist_expands_directories_in_readdir_order(tmp_path: Path) -> None:
    for name in ("b", "a"):
        member(tmp_path / "d" / name, T)
    (tmp_path / "d" / "notes.txt").write_text("x")
    (tmp_path / "d" / "sub").mkdir()
    order = [n for n in os.listdir(tmp_path / "d") if n.endswith(".meta")]
    assert namelist(tmp_path / "d") == [str(tmp_path / "d" / n[:-5]) for n in order]
    assert namelist(f"{tmp_path}/x,{tmp_path}/d") == [f"{tmp_path}/x", *namelist(tmp_path / "d")]


def test_members_in_time_order_with_virtual_marks(tmp_path: Path) -> None:
    member(tmp_path / "z", T)
    member(tmp_path / "a", T + 100)
    s = ArchiveSet(tmp_path)
    assert [Path(m.name).name for m in s.members] == ["z", "a"]
    assert s.start == Timestamp(T) and s.end() == Timestamp(T + 120)
    assert times(s) == [(0, False), (10, False), (20, False), (20.001, True),
                        (100, False), (110, False), (120, False)]
    back = s.for_direction(-1)
    assert times(back)[3] == (99.999, True)
    assert isinstance(open_source(tmp_path), ArchiveSet) and type(open_source(tmp_path / "a")) is Archive


def test_touching_seam_hides_the_records_before_the_mark(tmp_path: Path) -> None:
    member(tmp_path / "m1", T)
    member(tmp_path / "m2", T + 20)         # its first record is m1's last record's time
    s = ArchiveSet(tmp_path)
    assert times(s) == [(0, False), (10, False), (20, False), (20.001, True), (30, False), (40, False)]
    assert [(r.timestamp.sec - T, bool(r.vsets)) for r in s.for_direction(-1).results()] == [
        (0, True), (10, True), (19, False), (20, True), (30, True), (40, True)]


def test_refusals(tmp_path: Path) -> None:
    member(tmp_path / "same" / "m1", T)
    member(tmp_path / "same" / "m2", T)
    with pytest.raises(FormatError) as got:
        ArchiveSet(tmp_path / "same")
    assert got.value.code == "set.same-start" and "PM_ERR_LOGOVERLAP" in got.value.message
    member(tmp_path / "host" / "m1", T)
    member(tmp_path / "host" / "m2", T + 100, host="h2")
    with pytest.raises(FormatError) as got:
        ArchiveSet(tmp_path / "host")
    assert got.value.code == "set.host" and got.value.location.field == "label.hostname"
    member(tmp_path / "type" / "m1", T)
    member(tmp_path / "type" / "m2", T + 100, ctype="u32")
    with pytest.raises(FormatError) as got:
        ArchiveSet(tmp_path / "type")
    assert got.value.code == "set.desc" and "PM_ERR_LOGCHANGETYPE" in got.value.message
    assert got.value.location.record is not None
    (tmp_path / "empty").mkdir()
    with pytest.raises(UsageError):
        ArchiveSet(tmp_path / "empty")


def test_overlap_is_refused_at_the_seam(tmp_path: Path) -> None:
    member(tmp_path / "m1", T)
    member(tmp_path / "m2", T + 15)
    s = ArchiveSet(tmp_path)
    assert [seam.overlap for seam in s.seams()] == [True]
    with pytest.raises(FormatError) as got:
        list(s.results())
    assert got.value.code == "set.overlap"


def test_unreadable_member_dropped_only_by_pcp7(tmp_path: Path) -> None:
    for k in range(3):
        member(tmp_path / f"m{k}", T + 100 * k)
    (tmp_path / "m1.0").write_bytes(b"")
    with pytest.raises(FormatError):
        ArchiveSet(tmp_path, profile="pcp-6.3")
    s = ArchiveSet(tmp_path, profile="pcp-7")
    assert [Path(m.name).name for m in s.members] == ["m0", "m2"]
    assert [Path(n).name for n, _ in s.skipped] == ["m1"]


def test_help_text_per_profile(tmp_path: Path) -> None:
    member(tmp_path / "m1", T, text="first")
    member(tmp_path / "m2", T + 100, text="second")
    names = [f"{tmp_path}/m2", f"{tmp_path}/m1"]
    assert ArchiveSet(",".join(names)).help_text("60.0.1") == "first"      # the last loaded
    assert ArchiveSet(",".join(names), profile="pcp-6.0").help_text("60.0.1") == "first"
    assert ArchiveSet(",".join(reversed(names))).help_text("60.0.1") == "second"
    assert ArchiveSet(",".join(reversed(names)), profile="pcp-6.0").help_text("60.0.1") == "first"


def test_mixed_versions_read_as_version_3(tmp_path: Path) -> None:
    member(tmp_path / "m1", T, version=2)
    member(tmp_path / "m2", T + 100)
    s = ArchiveSet(tmp_path)
    assert s.version == 3
    v2 = [r for _, r in Archive(tmp_path / "m1").volume_records()]
    types = {p: d.type for p, d in s.metadata.descs.items()}
    for raw in v2:
        assert decode_result(v2_result_as_v3(raw), 3, types, PathStats()) == decode_result(raw, 2, types, PathStats())
    assert [vol // VOL_STRIDE for vol, _ in s.volume_records()] == [0, 0, 0, 1, 1, 1, 1]


def test_forward_mark_carry_is_reported_as_libpcp_does() -> None:
    assert forward_mark_time(Timestamp(5, 999_000_000)) == (Timestamp(6, 0), 1_000_000_000)
    assert forward_mark_time(Timestamp(5, 999_500_000)) == (Timestamp(6, 500_000), 500_000)


def test_pcp60_finds_no_name_under_a_node_a_later_member_made(tmp_path: Path) -> None:
    """SET-META-4: every metric is known by pmID; under pcp-6.0 a name is found only when the
    first namelist member made every inner node of it."""
    member(tmp_path / "m1", T, extra=[("v.only", 5, "double")])
    member(tmp_path / "m2", T + 100, extra=[("t.extra", 3, "string"), ("u.extra", 4, "double"),
                                             ("t.d.e", 6, "double")])
    names = f"{tmp_path / 'm1'},{tmp_path / 'm2'}"
    six = ArchiveSet(names, profile="pcp-6.0")
    assert sorted(six.metadata.names) == ["t.counter", "t.extra", "t.instant", "v.only"]
    assert six.desc(int(PmID("60.0.4"))).names == ("u.extra",)
    with pytest.raises(KeyError):
        six.desc("u.extra")
    assert len(six.descs()) == len(ArchiveSet(names, profile="pcp-6.3").descs()) == 6
    assert "u.extra" in ArchiveSet(names, profile="pcp-6.3").metadata.names
    assert "v.only" not in ArchiveSet(f"{tmp_path / 'm2'},{tmp_path / 'm1'}", profile="pcp-6.0").metadata.names
