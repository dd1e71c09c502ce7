"""The PMDA's namespace (MMV-ID-3), its model of a directory (MMV-IMPL-DIR-1), and the check
and dump that follow them: within a file, across the files of a directory, from the command
line (tests/differential/test_mmv_directory_vs_pmda.py holds them against the PMDAs)."""

from __future__ import annotations

import json
import struct
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from pcpconform.check.mmv import check_mmv_directory, check_mmv_file
from pcpconform.dump.mmv_jsonl import mmv_records
from pcpconform.mmv import Indom, Instance, Metric, MmvFile, Value, build_mmv
from pcpconform.mmv import model as mm
from pcpconform.mmv.pmda import choose_cluster, pmda_export, served_text
from pcpconform.mmv.pmns import Placement, PmdaNamespace
from tests.cli import run_cli

_PARTS = st.sampled_from(["a", "b", "c", ""])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(_PARTS, min_size=1, max_size=5).map(".".join), max_size=30))
def test_names_placed_below_known_paths_as_by_a_walk(names: list[str]) -> None:
    """The namespace's short cut (a new name below a path of non-leaves) places every name
    as the walk down its path alone does, whatever came before (leaves given children,
    non-leaves named, duplicates, empty parts)."""
    fast, walked = PmdaNamespace(), PmdaNamespace()
    for name in names:
        assert fast.add(name) == walked._walk(name), name
    assert fast.names() == walked.names()


def test_nested_names_first_one_wins() -> None:
    ns = PmdaNamespace()
    placed = [ns.add(n).placement for n in ("mmv.a.p.q", "mmv.a.p.q.r", "mmv.a.s.t.u", "mmv.a.s.t",
                                            "mmv.a.p.q", "mmv.a.p.q.r")]
    assert placed == [Placement.EXPORTED, Placement.UNDER_LEAF, Placement.EXPORTED,
                      Placement.NON_LEAF, Placement.DUPLICATE, Placement.UNDER_LEAF]
    assert [n for n in ns.names() if ".control." not in n] == ["mmv.a.p.q", "mmv.a.s.t.u"]
    assert ns.add("mmv.a.p.q.r").other == "mmv.a.p.q"


def test_control_names_by_version() -> None:
    assert PmdaNamespace().add("mmv.control.metrics").placement is Placement.DUPLICATE
    assert PmdaNamespace(pcp7=False).add("mmv.control.metrics").exported
    assert PmdaNamespace().add("mmv.control.reload").placement is Placement.DUPLICATE
    assert PmdaNamespace().add("mmv.control").placement is Placement.NON_LEAF
    assert PmdaNamespace().add("mmv.control.other").exported


def _file(*names: str, cluster: int = 5, flags: int = 0, types: tuple[int, ...] = ()) -> MmvFile:
    metrics = []
    for k, name in enumerate(names, 1):
        mtype = types[k - 1] if types else mm.TYPE_U32
        value = Value(None, struct.pack("<q", 1), 0, "s") if mtype == mm.TYPE_STRING \
            else Value.of(mtype, 100 * cluster + k)
        metrics.append(Metric(name, k, mtype, mm.SEM_INSTANT, 0, 0, f"{name} help", None, (value,)))
    return MmvFile(1, 1 << 32, 1 << 32, flags, 0, cluster, (), tuple(metrics))


def test_exported_metrics_skip_what_the_namespace_refuses() -> None:
    got = [e.name for e in mm.exported_metrics(_file("p.q", "p.q.r", "x", "x", "bad-name"), "f")]
    assert got == ["mmv.f.p.q", "mmv.f.x"]


def test_the_model_of_a_cluster_collision() -> None:
    indom_a = Indom(1, (Instance(0, "i0"), Instance(1, "i1")))
    indom_b = Indom(1, (Instance(0, "j0"), Instance(1, "j1"), Instance(2, "j2")))
    a = MmvFile(1, 1 << 32, 1 << 32, 0, 0, 5, (indom_a,), (
        Metric("y", 2, mm.TYPE_U32, mm.SEM_INSTANT, 0, 1, "a.y", None,
               tuple(Value.of(mm.TYPE_U32, 10 + i, i) for i in (0, 1))),))
    b = MmvFile(1, 1 << 32, 1 << 32, 0, 0, 5, (indom_b,), (
        Metric("y2", 2, mm.TYPE_U64, mm.SEM_COUNTER, 0, 1, "b.y2", None,
               tuple(Value.of(mm.TYPE_U64, 20 + i, i) for i in (0, 1, 2))),))
    e = pmda_export([("a", a), ("b", b)])
    assert e.names == {"mmv.a.y": "70.5.2", "mmv.b.y2": "70.5.2"}
    assert e.descs["70.5.2"]["type"] == "u64" and e.descs["70.5.2"]["sem"] == "counter"   # b's
    assert e.texts["70.5.2"] == ("a.y", None)                                              # a's
    assert e.values["70.5.2"] == [(0, {"type": "u64", "value": "10"}), (1, {"type": "u64", "value": "11"}),
                                  (2, {"type": "u64", "value": "22"})]
    assert e.indoms["70.10241"] == [(0, "i0"), (1, "i1"), (2, "j2")]
    assert json.loads(json.dumps(e.as_json()))["metrics"][0]["name"] == "mmv.a.y"


def test_a_string_and_a_number_under_one_pmid() -> None:
    crash = pmda_export([("a", _file("n", types=(mm.TYPE_U64,))), ("b", _file("s", types=(mm.TYPE_STRING,)))])
    assert crash.values["70.5.1"] == [(None, {"crash": "SIGSEGV"})]
    odd = pmda_export([("a", _file("s", types=(mm.TYPE_STRING,))), ("b", _file("n", types=(mm.TYPE_U64,)))])
    assert odd.values["70.5.1"] == [(None, {"unpredictable": "an address"})]


def test_choose_cluster_and_served_text() -> None:
    assert choose_cluster([], 0) == 1 and choose_cluster([1, 2], 0) == 3 and choose_cluster([5], 5) == 5
    assert served_text("x" * 300) == "x" * 255 and served_text("é" * 128) == "é" * 127 + "\udcc3"
    assert served_text(None) is None


def test_the_check_of_one_file_follows_the_namespace(tmp_path: Path) -> None:
    (tmp_path / "f").write_bytes(build_mmv(_file("p", "p.q", "control", "r.s.t", "r.s", flags=mm.FLAG_NOPREFIX)))
    report = check_mmv_file(tmp_path / "f")
    assert [(d.code, d.field) for d in report.diagnostics] == [
        ("mmv.metric-name-prefix", "metrics[1].name"), ("mmv.metric-name-prefix", "metrics[2].name"),
        ("mmv.metric-name-prefix", "metrics[4].name")]
    assert "below mmv.p, the name of metrics[0]" in report.diagnostics[0].message


def test_the_dump_says_which_names_are_exported() -> None:
    records, _ = mmv_records(build_mmv(_file("p", "p.q", "q", "q")), "f")
    assert [r["exported"] for r in records if r["kind"] == "metric"] == [True, False, True, False]


def _directory(tmp: Path, files: dict[str, MmvFile]) -> Path:
    d = tmp / "mmv"
    d.mkdir()
    for name, mmv in files.items():
        (d / name).write_bytes(build_mmv(mmv))
    return d


def test_directory_rules(tmp_path: Path) -> None:
    d = _directory(tmp_path, {"a": _file("x", "y", cluster=5), "b": _file("z", cluster=5),
                              "c": _file("p", cluster=6), "d": _file("c.p.q", "a.x", cluster=7,
                                                                        flags=mm.FLAG_NOPREFIX),
                              "e": _file("n", "s", cluster=6, types=(mm.TYPE_U64, mm.TYPE_STRING))})
    codes = {Path(r.archive).name: sorted(x.code for x in r.diagnostics) for r in check_mmv_directory(d)}
    assert codes == {"a": [], "b": ["mmv.cluster-collision"], "c": [],
                     "d": ["mmv.metric-name-duplicate", "mmv.metric-name-prefix"],
                     "e": ["mmv.cluster-collision"]}
    (e,) = [r for r in check_mmv_directory(d) if r.archive.endswith("/e")]
    assert "70.6.1" in e.diagnostics[0].message and "crash" not in e.diagnostics[0].message
    (tmp_path / "mmv" / "b").write_bytes(build_mmv(_file("z", "w", "v", cluster=5)))  # items 1..3
    (b,) = [r for r in check_mmv_directory(d) if r.archive.endswith("/b")]
    assert "2 items are in both files" in b.diagnostics[0].message


def test_a_shared_cluster_without_common_items_is_a_warning(tmp_path: Path) -> None:
    only_3 = MmvFile(1, 1 << 32, 1 << 32, 0, 0, 5, (), (
        Metric("z", 3, mm.TYPE_U32, mm.SEM_INSTANT, 0, 0, None, None, (Value.of(mm.TYPE_U32, 1),)),))
    d = _directory(tmp_path, {"a": _file("x", "y", cluster=5), "b": only_3})
    a, b = check_mmv_directory(d)
    assert not a.diagnostics and [(x.code, x.severity.value) for x in b.diagnostics] == \
        [("mmv.cluster-shared", "warning")]


def test_a_string_number_collision_says_the_pmda_crashes(tmp_path: Path) -> None:
    d = _directory(tmp_path, {"a": _file("n", types=(mm.TYPE_U64,)), "b": _file("s", types=(mm.TYPE_STRING,))})
    _, b = check_mmv_directory(d)
    assert "crashes the PMDA" in b.diagnostics[0].message


def test_check_dir_applies_the_directory_rules_and_a_named_file_stands_alone(tmp_path: Path) -> None:
    d = _directory(tmp_path, {"a": _file("x", cluster=5), "b": _file("x", cluster=5)})
    (d / "sub").mkdir()
    (d / "sub" / "c").write_bytes(build_mmv(_file("x", cluster=5)))
    status, out, _ = run_cli("check", "-q", str(d))
    assert status == 1 and out.count("error mmv.cluster-collision") == 1, out   # sub/c: its own
    status, out, _ = run_cli("check", "-q", "-j", "2", str(d))
    assert status == 1 and out.count("error mmv.cluster-collision") == 1, out
    status, out, _ = run_cli("check", "-q", str(d / "a"), str(d / "b"))
    assert status == 0 and "mmv.cluster" not in out
