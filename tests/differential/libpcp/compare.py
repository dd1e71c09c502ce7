"""Compare what pcpconform's reader gets from an archive with what libpcp's PMAPI gets."""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

from pcpconform.format.pmtypes import PmID, PmType
from pcpconform.format.values import F32
from pcpconform.io.archive import Archive
from tests.differential.libpcp import bridge


def libpcp_encoding(value: Any, ptype: int) -> Any:
    """A decoded value in pm_read.py's encoding."""
    if ptype == PmType.FLOAT:
        return f"f32:{value.bits:08x}" if isinstance(value, F32) else value
    if ptype == PmType.DOUBLE:
        return "f64:" + struct.pack(">d", value).hex()
    if ptype == PmType.STRING:
        return "str:" + bytes(value).rstrip(b"\0").hex()
    if ptype in (PmType.AGGREGATE, PmType.AGGREGATE_STATIC):
        return "agg:" + bytes(value).hex()
    if ptype in (PmType.EVENT, PmType.HIGHRES_EVENT):
        return "event"
    return value


def our_view(base: Path) -> dict[str, Any]:
    a = Archive(base)
    results = []
    for r in a.results():
        values = {}
        for vs in r.vsets:
            ptype = a.desc(vs.pmid).type
            values[str(PmID(vs.pmid))] = {
                "numval": vs.numval, "valfmt": vs.valfmt,
                "values": [[inst, libpcp_encoding(v, ptype)] for inst, v in vs.values]}
        results.append({"time": [r.timestamp.sec, r.timestamp.nsec], "mark": r.is_mark,
                        "values": values})
    metrics = {}
    for d in a.descs():
        u = d.units
        metrics[str(d.pmid)] = {"names": list(d.names), "type": d.type, "sem": d.sem,
                                "indom": None if d.indom.is_null else str(d.indom),
                                "units": [u.dimSpace, u.dimTime, u.dimCount, u.scaleSpace,
                                          u.scaleTime, u.scaleCount]}
    lab = a.label
    return {"label": {"version": a.version, "hostname": lab.hostname, "timezone": lab.timezone,
                      "pid": lab.pid, "start": [lab.start.sec, lab.start.nsec]},
            "metrics": metrics, "results": results}


def assert_reader_matches_libpcp(base: Path) -> None:
    theirs = bridge.pm_read(base)
    ours = our_view(base)
    for key in ("version", "hostname", "timezone", "pid", "start"):
        assert ours["label"][key] == theirs["label"][key], key
    for pmid, desc in theirs["metrics"].items():
        assert ours["metrics"][pmid] == {k: desc[k] for k in ours["metrics"][pmid]}, pmid
    assert len(ours["results"]) == len(theirs["results"])
    for mine, ref in zip(ours["results"], theirs["results"]):
        assert mine["time"] == ref["time"]
        assert mine["mark"] == ref["mark"]
        assert mine["values"].keys() == ref["values"].keys()
        for pmid, vs in ref["values"].items():
            assert mine["values"][pmid]["numval"] == vs["numval"], pmid
            assert mine["values"][pmid]["values"] == vs["values"], (pmid, mine["time"])
