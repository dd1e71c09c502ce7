"""Round trip through each referee's libpcp: its pmi writes an archive, its PMAPI reads it."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from tests.differential.libpcp import bridge
from tests.differential.libpcp.referees import Referee

pytestmark = pytest.mark.libpcp

T0 = 1700000000
NO_UNITS = {"dimSpace": 0, "dimTime": 0, "dimCount": 0,
            "scaleSpace": 0, "scaleTime": 0, "scaleCount": 0}

FIXTURE: dict[str, Any] = {
    "archive": {"version": 3, "hostname": "host.example", "timezone": "UTC"},
    "metrics": [
        {"name": "t.u64", "pmid": "60.0.1", "type": "u64", "sem": "counter", "indom": "60.2",
         "units": {"dimSpace": 1, "dimTime": -1, "dimCount": 0,
                   "scaleSpace": 1, "scaleTime": 3, "scaleCount": 0},
         "text": {"oneline": "a u64 counter", "help": "Longer help\nfor t.u64."}},
        {"name": "t.i32", "pmid": "60.0.2", "type": "32", "sem": "instant", "indom": None,
         "units": NO_UNITS},
        {"name": "t.u32", "pmid": "60.0.3", "type": "u32", "sem": "instant", "indom": None,
         "units": NO_UNITS},
        {"name": "t.i64", "pmid": "60.0.4", "type": "64", "sem": "instant", "indom": None,
         "units": NO_UNITS},
        {"name": "t.flt", "pmid": "60.1.5", "type": "float", "sem": "instant", "indom": None,
         "units": NO_UNITS},
        {"name": "t.dbl", "pmid": "60.1.6", "type": "double", "sem": "instant", "indom": "60.2",
         "units": NO_UNITS},
        {"name": "t.str", "pmid": "60.1.7", "type": "string", "sem": "discrete", "indom": None,
         "units": NO_UNITS},
    ],
    "indoms": [
        {"indom": "60.2", "instances": {"alpha": 1, "beta": 2, "gamma": 3},
         "text": {"oneline": "three greek letters"}},
    ],
    "labels": [{"type": "context", "ident": None, "labels": {"env": "test"}}],
    "samples": [
        {"time": [T0, 123456789],
         "values": {"t.u64": {"alpha": 100, "beta": 2 ** 64 - 1},
                    "t.i32": -(2 ** 31), "t.u32": 2 ** 32 - 1, "t.i64": -(2 ** 63),
                    "t.flt": 1.5, "t.dbl": {"alpha": 0.1, "beta": -0.0},
                    "t.str": "hello world"}},
        {"time": [T0 + 1, 500000000],
         "values": {"t.u64": {"alpha": 101, "beta": 7, "gamma": 3},
                    "t.i32": 2 ** 31 - 1, "t.i64": 2 ** 63 - 1,
                    "t.flt": -3.25, "t.dbl": {"gamma": 1e300},
                    "t.str": "two  spaces"}},
        {"mark": True},
        {"time": [T0 + 10, 0], "values": {"t.u64": {"gamma": 4}, "t.str": ""}},
    ],
}


def _fixture(version: int) -> dict[str, Any]:
    fx = copy.deepcopy(FIXTURE)
    fx["archive"]["version"] = version
    return fx


def _stamp(t: list[int], version: int) -> list[int]:
    sec, nsec = t
    return [sec, nsec if version == 3 else (nsec // 1000) * 1000]


def _expected_results(fx: dict[str, Any], version: int) -> list[dict[str, Any]]:
    types = {m["name"]: m["type"] for m in fx["metrics"]}
    pmids = {m["name"]: m["pmid"] for m in fx["metrics"]}
    indoms = {i["indom"]: i["instances"] for i in fx["indoms"]}
    metric_indom = {m["name"]: m["indom"] for m in fx["metrics"]}
    out: list[dict[str, Any]] = []
    last: list[int] | None = None
    for s in fx["samples"]:
        if s.get("mark"):
            assert last is not None
            sec, nsec = last
            nsec += 1_000_000            # pmiPutMark: previous timestamp + 1 msec
            sec, nsec = sec + nsec // 10 ** 9, nsec % 10 ** 9
            out.append({"time": [sec, nsec], "mark": True, "values": {}})
            continue
        last = _stamp(s["time"], version)
        values: dict[str, Any] = {}
        for name, val in s["values"].items():
            if metric_indom[name] is None:
                vals = [[-1, bridge.expected_value(types[name], val)]]
            else:
                insts = indoms[metric_indom[name]]
                vals = sorted([insts[i], bridge.expected_value(types[name], v)]
                              for i, v in val.items())
            values[pmids[name]] = vals
        out.append({"time": last, "mark": False, "values": values})
    return out


#: (archive version, pmi fixture, base, referee that wrote it)
Written = tuple[int, dict[str, Any], Path, Referee]


@pytest.fixture(params=[2, 3], ids=["v2", "v3"])
def archive(request: pytest.FixtureRequest, referee: Referee, tmp_path: Path) -> Written:
    version = request.param
    fx = _fixture(version)
    base = tmp_path / f"pmi-v{version}"
    bridge.pmi_write(referee, fx, base)
    return version, fx, base, referee


def test_files_written(archive: Written) -> None:
    _, _, base, _ = archive
    for suffix in (".0", ".meta", ".index"):
        assert base.with_name(base.name + suffix).is_file()


def test_roundtrip_values(archive: Written) -> None:
    version, fx, base, referee = archive
    doc = bridge.pm_read(referee, base)
    got = [{"time": r["time"], "mark": r["mark"],
            "values": {k: v["values"] for k, v in r["values"].items()}}
           for r in doc["results"]]
    assert got == _expected_results(fx, version)
    for r in doc["results"]:
        for vs in r["values"].values():
            assert vs["numval"] == len(vs["values"])


def test_exact_spot_values(archive: Written) -> None:
    _, _, base, referee = archive
    first = bridge.pm_read(referee, base)["results"][0]["values"]
    assert first["60.0.1"]["values"] == [[1, 100], [2, 2 ** 64 - 1]]
    assert first["60.0.4"]["values"] == [[-1, -(2 ** 63)]]
    assert first["60.1.5"]["values"] == [[-1, "f32:3fc00000"]]
    assert first["60.1.6"]["values"] == [[1, "f64:3fb999999999999a"], [2, "f64:8000000000000000"]]
    assert first["60.1.7"]["values"] == [[-1, "str:" + b"hello world".hex()]]


def test_label_and_metadata(archive: Written) -> None:
    version, fx, base, referee = archive
    doc = bridge.pm_read(referee, base)
    label = doc["label"]
    assert label["version"] == version
    assert label["hostname"] == "host.example"
    assert label["timezone"] == "UTC"
    assert label["start"] == _stamp(fx["samples"][0]["time"], version)
    assert doc["end"] == _stamp(fx["samples"][-1]["time"], version)
    m = doc["metrics"]
    assert sorted(m) == sorted(x["pmid"] for x in fx["metrics"])
    assert m["60.0.1"] == {"names": ["t.u64"], "type": 3, "sem": 1, "indom": "60.2",
                           "units": [1, -1, 0, 1, 3, 0]}
    assert m["60.1.7"]["type"] == 6 and m["60.1.7"]["sem"] == 4
    assert m["60.0.2"]["indom"] is None


def test_indom_grows(archive: Written) -> None:
    version, fx, base, referee = archive
    doc = bridge.pm_read(referee, base)
    snaps = doc["indoms"]["60.2"]
    assert snaps == [
        [_stamp(fx["samples"][0]["time"], version), {"1": "alpha", "2": "beta"}],
        [_stamp(fx["samples"][1]["time"], version), {"1": "alpha", "2": "beta", "3": "gamma"}],
    ]
    assert doc["indoms_all"]["60.2"] == {"1": "alpha", "2": "beta", "3": "gamma"}


def test_help_text_and_labels(archive: Written) -> None:
    _, _, base, referee = archive
    doc = bridge.pm_read(referee, base)
    assert doc["text"]["pmid:60.0.1:oneline"] == "a u64 counter"
    assert doc["text"]["pmid:60.0.1:help"] == "Longer help\nfor t.u64."
    assert doc["text"]["indom:60.2:oneline"] == "three greek letters"
    assert "indom:60.2:help" not in doc["text"]
    assert doc["labels"]["context"] == {"env": "test"}


def test_pmlogcheck_clean(archive: Written) -> None:
    _, _, base, referee = archive
    proc = bridge.pmlogcheck(referee, base)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_pmdumplog_sees_mark(archive: Written) -> None:
    _, _, base, referee = archive
    proc = bridge.pmdumplog(referee, base, "-a")
    assert proc.returncode == 0, proc.stderr
    assert "<mark>" in proc.stdout


def test_aggregate_is_unsupported(referee: Referee, tmp_path: Path) -> None:
    fx = {"archive": {"version": 3},
          "metrics": [{"name": "t.agg", "pmid": "60.0.1", "type": "aggregate",
                       "sem": "instant", "indom": None, "units": NO_UNITS}],
          "samples": [{"time": [T0, 0], "values": {"t.agg": "00ff"}}]}
    with pytest.raises(bridge.PmiUnsupported, match="aggregate"):
        bridge.pmi_write(referee, fx, tmp_path / "agg")
    assert not list(tmp_path.iterdir())


def test_bad_fixture_reports_stderr(referee: Referee, tmp_path: Path) -> None:
    fx = _fixture(3)
    fx["samples"][0]["values"]["t.i32"] = 2 ** 31       # out of range for "32"
    with pytest.raises(bridge.LibpcpError, match="out of range"):
        bridge.pmi_write(referee, fx, tmp_path / "bad")


def test_volume_switch(referee: Referee, tmp_path: Path) -> None:
    # pmi switches volume before a result when (volume size + record length)
    # >= PCP_LOGIMPORT_MAXLOGSZ.  v3 label = 808 bytes, first result 264
    # bytes: 1100 keeps result 1 in volume 0 (a label-only volume 0 would
    # make the archive unreadable) and pushes the later ones out.
    fx = _fixture(3)
    base = tmp_path / "vols"
    bridge.pmi_write(referee, fx, base, env={"PCP_LOGIMPORT_MAXLOGSZ": "1100"})
    vols = sorted(p.name for p in tmp_path.iterdir() if p.suffix not in (".meta", ".index"))
    assert vols == ["vols.0", "vols.1", "vols.2"]
    assert bridge.pmlogcheck(referee, base).returncode == 0
    got = [r["time"] for r in bridge.pm_read(referee, base)["results"]]
    assert got == [r["time"] for r in _expected_results(fx, 3)]


def test_late_smaller_instance_is_unsupported(referee: Referee, tmp_path: Path) -> None:
    # libpcp_import 6.0.3 would scramble instance names (see pmi_write.py)
    fx = _fixture(3)
    fx["samples"] = [{"time": [T0, 0], "values": {"t.u64": {"beta": 1}}},
                     {"time": [T0 + 1, 0], "values": {"t.u64": {"alpha": 2}}}]
    with pytest.raises(bridge.PmiUnsupported, match="scrambled"):
        bridge.pmi_write(referee, fx, tmp_path / "scr")


SCRAMBLE = """\
import sys
from pcp import pmi
import cpmapi as c
log = pmi.pmiLogImport(sys.argv[1])
log.pmiSetVersion(3)
def write(sec):
    if hasattr(pmi.LIBPCP_IMPORT, "pmiHighResWrite"):
        log.pmiHighResWrite(sec, 0)
    else:                                   # libpcp_import 2 (PCP 7): nanosecond pmiWrite
        log.pmiWrite(sec, 0)
indom = log.pmiInDom(60, 2)
log.pmiAddMetric("t.m", log.pmiID(60, 0, 1), c.PM_TYPE_U32, indom, c.PM_SEM_INSTANT,
                 log.pmiUnits(0, 0, 0, 0, 0, 0))
for batch, sec in ((((5, "eps"), (3, "gamma")), 0), (((1, "alpha"), (4, "delta"), (2, "beta")), 1)):
    for inst, name in batch:
        log.pmiAddInstance(indom, name, inst)
        log.pmiPutValue("t.m", name, "1")
    write(1700000000 + sec)
log.pmiEnd()
"""


def test_libpcp_import_scrambles_instances_added_out_of_order(referee: Referee, tmp_path: Path) -> None:
    """FMT-PMI-4, why pmi_write.py refuses such fixtures: with raw pmi calls, instances
    added in descending id order after the domain was written get each other's names."""
    from pcpconform.io.archive import Archive

    script = tmp_path / "scramble.py"
    script.write_text(SCRAMBLE, encoding="utf-8")
    base = tmp_path / "scr"
    proc = referee.python(script, base, outputs=[base])
    assert proc.returncode == 0, proc.stderr
    history = Archive(base).indom_history("60.2")
    assert history[0].instances == {3: "gamma", 5: "eps"}
    # what was asked: 1 alpha, 2 beta, 3 gamma, 4 delta, 5 eps
    assert history[-1].instances == {1: "alpha", 2: "beta", 3: "eps", 4: "delta", 5: "gamma"}
