"""A parsed fixture (spec/fixtures.md) as the JSON document ``pmi_write.py`` takes: what
libpcp_import can be asked to write of it. Volume switches cannot be asked for (ValueError);
instance sets (FIX-SAMPLE-4) and explicit mark times are not passed on, since pmi has no call
for either.

    doc = fixture_to_pmi(load_fixture("corpus/fixtures/example.yaml"), version=3)
"""

from __future__ import annotations

import struct
from typing import Any

from pcpconform.fixtures.fixture import Fixture, FixtureError
from pcpconform.format.pmtypes import LabelType, PmID, PmInDom, PmType
from pcpconform.format.values import F32

__all__ = ["NO_PMI_TYPES", "fixture_to_pmi"]

#: value types libpcp_import has no call to write: pmiAddMetric refuses aggregates, and an
#: event array is no string for pmiPutValue
NO_PMI_TYPES = frozenset({PmType.EVENT, PmType.HIGHRES_EVENT, PmType.AGGREGATE, PmType.AGGREGATE_STATIC})


def _value(ptype: PmType, value: Any) -> Any:
    if ptype == PmType.FLOAT:
        return f"f32:{value.bits:08x}" if isinstance(value, F32) else f"f32:{F32(value).bits:08x}"
    if ptype == PmType.DOUBLE:
        return "f64:" + struct.pack(">d", value).hex()
    if ptype == PmType.STRING:
        return value.decode("utf-8")
    return value


def fixture_to_pmi(f: Fixture, version: int | None = None) -> dict[str, Any]:
    names = {int(d.indom): d.external() for d in f.indoms.values()}
    doc: dict[str, Any] = {
        "archive": {"version": version or f.version, "hostname": f.hostname, "timezone": f.timezone},
        "metrics": [], "indoms": [], "labels": [], "samples": []}
    for m in f.metrics:
        u = m.units
        entry: dict[str, Any] = {"name": m.name, "pmid": str(m.pmid), "type": m.type.token,
                 "sem": {1: "counter", 3: "instant", 4: "discrete"}[m.sem],
                 "indom": None if m.indom.is_null else str(m.indom),
                 "units": {"dimSpace": u.dimSpace, "dimTime": u.dimTime, "dimCount": u.dimCount,
                           "scaleSpace": u.scaleSpace, "scaleTime": u.scaleTime,
                           "scaleCount": u.scaleCount}}
        if m.text:
            entry["text"] = dict(m.text)
        doc["metrics"].append(entry)
    for d in f.indoms.values():
        external = {n: i for i, n in names[int(d.indom)].items()}
        if len(external) != len(d.instances):     # libpcp_import: PMI_ERR_DUPINSTNAME
            raise FixtureError(f"indom {d.indom}: libpcp_import cannot give one instance name two ids")
        ientry: dict[str, Any] = {"indom": str(d.indom), "instances": external}
        if d.text:
            ientry["text"] = dict(d.text)
        doc["indoms"].append(ientry)
    for lab in f.labels:
        kind = lab.type.name.lower()
        for inst, labels in lab.sets:
            lentry: dict[str, Any] = {"type": kind, "labels": labels}
            if lab.type == LabelType.DOMAIN:
                lentry["ident"] = lab.ident
            elif lab.type == LabelType.CLUSTER:
                lentry["ident"] = f"{PmID(lab.ident).domain}.{PmID(lab.ident).cluster}"
            elif lab.type == LabelType.ITEM:
                lentry["ident"] = str(PmID(lab.ident))
            elif lab.type == LabelType.INDOM:
                lentry["ident"] = str(PmInDom(lab.ident))
            elif lab.type == LabelType.INSTANCES:
                lentry["ident"] = {"indom": str(PmInDom(lab.ident)), "inst": inst}
            doc["labels"].append(lentry)
    for s in f.samples:
        if s.kind == "mark":
            doc["samples"].append({"mark": True})
            continue
        if s.kind != "values":
            raise ValueError("pmi cannot switch volumes on request")
        values: dict[str, Any] = {}
        for m, vals in s.values:
            if m.indom.is_null:
                values[m.name] = _value(m.type, vals[0][1])
            else:
                values[m.name] = {names[int(m.indom)][i]: _value(m.type, v) for i, v in vals}
        assert s.time is not None
        doc["samples"].append({"time": [s.time.sec, s.time.nsec], "values": values})
    return doc
