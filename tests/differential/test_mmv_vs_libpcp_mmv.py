"""MMV files written by each referee's libpcp_mmv: the kit reads the same contents back
and lays the same bytes out again.

``pcpconform/conform/adapters/mmv_write.py`` runs under the referee's system python and writes one file per case
with the registry API (ctypes on libpcp_mmv.so.1): v1 with short names, v2 with a long
metric and instance name, v3 with labels of every kind and value type; every value type,
help text absent, empty and present, indoms. The generation words and the PID differ from
run to run, so the expected model takes them from the file. Bytes are compared after
``mask_label_slack`` (libpcp_mmv leaves each label payload's bytes after its NUL
uninitialised: spec/mmv.md, MMV-WRITE-LABEL-SLACK).
"""

from __future__ import annotations

import dataclasses
import json
import struct
from pathlib import Path
from typing import Any

import pytest

from pcpconform.mmv import Indom, Instance, Label, Metric, MmvFile, Value, build_mmv, parse_mmv
from pcpconform.mmv import model as mm
from pcpconform.mmv.writer import mask_label_slack, select_version
from tests.differential.libpcp.referees import Referee

SCRIPT = Path(__file__).resolve().parents[2] / "pcpconform" / "conform" / "adapters" / "mmv_write.py"
BYTES = 0x10000000  # pmUnits word of "byte" (dimSpace 1)
USEC = 0x01001000   # dimTime 1, scaleTime 1 (usec)


def num(mtype: int, value: int | float, instance: int | None = None, extra: int = 0) -> dict[str, Any]:
    return {"instance": instance, "atom": mm.Value.of(mtype, value).atom.hex(), "extra": extra,
            "string": None}


def text(value: str, instance: int | None = None) -> dict[str, Any]:
    return {"instance": instance, "atom": None, "extra": 0, "string": value}


def metric(name: str, item: int, mtype: int, values: list[dict[str, Any]], *, sem: int = 3,
           dim: int = 0, indom: int = 0, short: str | None = None,
           long: str | None = None) -> dict[str, Any]:
    return {"name": name, "item": item, "type": mtype, "semantics": sem, "dimension": dim,
            "indom": indom, "shorttext": short, "helptext": long, "values": values}


LONG_METRIC = "long." + "m" * 67                 # 72 bytes: needs version 2
LONG_INSTANCE = "instance-" + "i" * 71         # 80 bytes

CASES: list[dict[str, Any]] = [
    {"name": "v1", "cluster": 42, "flags": 0, "label_calls": [],
     "indoms": [{"serial": 61, "shorttext": "tools", "helptext": "things in the shed",
                 "instances": [[1, "Anvils"], [2, "Rockets"]]}],
     "metrics": [
         metric("i32", 1, mm.TYPE_I32, [num(mm.TYPE_I32, -5)], short="a 32-bit integer"),
         metric("u32", 2, mm.TYPE_U32, [num(mm.TYPE_U32, 4000000000)], long="unsigned"),
         metric("i64", 3, mm.TYPE_I64, [num(mm.TYPE_I64, -(2**40))], short="", long=""),
         metric("u64", 4, mm.TYPE_U64, [num(mm.TYPE_U64, 2**64 - 1)], sem=1, dim=BYTES),
         metric("float", 5, mm.TYPE_FLOAT, [num(mm.TYPE_FLOAT, 1.5)]),
         metric("double", 6, mm.TYPE_DOUBLE, [num(mm.TYPE_DOUBLE, -2.25)], sem=4),
         metric("string", 7, mm.TYPE_STRING, [text("hello")], short="words"),
         metric("elapsed", 8, mm.TYPE_ELAPSED, [num(mm.TYPE_ELAPSED, 1000, extra=-5000000)],
                sem=1, dim=USEC),
         metric("nosupport", 9, mm.TYPE_NOSUPPORT, [num(mm.TYPE_I64, 0)]),
         metric("per.tool", 10, mm.TYPE_U64, [num(mm.TYPE_U64, 7, 1), num(mm.TYPE_U64, 9, 2)],
                sem=1, indom=61, short="per tool", long="one value per tool"),
         metric("per.name", 11, mm.TYPE_STRING, [text("anvil", 1), text("", 2)], indom=61),
     ]},
    {"name": "v2", "cluster": 7, "flags": mm.FLAG_NOPREFIX | mm.FLAG_SENTINEL, "label_calls": [],
     "indoms": [{"serial": 5, "shorttext": None, "helptext": "h",
                 "instances": [[0, "short"], [-3, LONG_INSTANCE]]},
                {"serial": 4101, "shorttext": "s", "helptext": None, "instances": [[9, "nine"]]}],
     "metrics": [
         metric(LONG_METRIC, 1, mm.TYPE_DOUBLE, [num(mm.TYPE_DOUBLE, 0.1, 0),
                                                 num(mm.TYPE_DOUBLE, 1e300, -3)], indom=5),
         metric("nine", 2, mm.TYPE_I32, [num(mm.TYPE_I32, 2**31 - 1, 9)], indom=4101, long="x"),
         metric("s", 3, mm.TYPE_STRING, [text("v" * 200)]),
     ]},
    {"name": "v3", "cluster": 321, "flags": 0,
     "indoms": [{"serial": 3, "shorttext": "d", "helptext": "dd",
                 "instances": [[1, "a"], [2, "b"]]}],
     "metrics": [
         metric("m", 1, mm.TYPE_U64, [num(mm.TYPE_U64, 1, 1), num(mm.TYPE_U64, 2, 2)], sem=1,
                dim=BYTES, indom=3, long="h"),
         metric("s", 2, mm.TYPE_STRING, [text("hello")], short=""),
     ],
     # (kind, identity args..., name, value, mmv_value_type_t, optional)
     "label_calls": [["registry", "app", '"x"', 1, 0], ["registry", "n", "-1.5e3", 2, 1],
                     ["indom", 3, "dom", "true", 3, 0], ["metric", 1, "met", "null", 4, 0],
                     ["metric", 2, "arr", "[1,2]", 5, 1],
                     ["instance", 3, 2, "ins", '{"k":"v"}', 6, 0]]},
]

LABEL_TYPES = {"registry": mm.LABEL_CLUSTER, "indom": mm.LABEL_INDOM, "metric": mm.LABEL_ITEM,
               "instance": mm.LABEL_INSTANCES}


def expected_model(case: dict[str, Any], parsed: MmvFile) -> MmvFile:
    """The content the case asked libpcp_mmv for, with the file's generation and PID."""
    indoms = tuple(Indom(d["serial"], tuple(Instance(i, n) for i, n in d["instances"]),
                         d["shorttext"], d["helptext"]) for d in case["indoms"])
    metrics = []
    for m in case["metrics"]:
        values = tuple(
            Value(v["instance"], struct.pack("<q", len(v["string"].encode())), 0, v["string"])
            if v["string"] is not None else Value(v["instance"], bytes.fromhex(v["atom"]), v["extra"])
            for v in m["values"])
        metrics.append(Metric(m["name"], m["item"], m["type"], m["semantics"], m["dimension"],
                              m["indom"], m["shorttext"], m["helptext"], values))
    labels = []
    for call in case["label_calls"]:
        kind, rest = call[0], call[1:]
        name, value, vtype, optional = rest[-4:]
        ident = {"registry": [case["cluster"]], "indom": rest[:1], "metric": rest[:1],
                 "instance": rest[:1]}[kind][0]
        internal = rest[1] if kind == "instance" else mm.PM_IN_NULL
        flags = LABEL_TYPES[kind] | (mm.LABEL_OPTIONAL if optional else 0)
        labels.append(Label(flags, ident, internal, f'{{"{name}":{"null" if vtype == 4 else value}}}'))
    content = MmvFile(0, 0, 0, case["flags"], 0, case["cluster"], indoms, tuple(metrics),
                      tuple(labels))
    return dataclasses.replace(content, version=select_version(content), g1=parsed.g1,
                               g2=parsed.g2, process=parsed.process)


@pytest.fixture(scope="module")
def spec(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("mmvspec") / "mmvspec.json"
    path.write_text(json.dumps(CASES))
    return path


_WRITTEN: dict[str, dict[str, bytes]] = {}


def write_with(referee: Referee, spec: Path, out_dir: Path) -> dict[str, bytes]:
    """Every case's file as this referee writes it (one run per referee)."""
    if referee.name not in _WRITTEN:
        out = out_dir / "mmvout"
        proc = referee.python(SCRIPT, spec, out, files=[spec], outputs=[out])
        assert proc.returncode == 0, proc.stderr
        _WRITTEN[referee.name] = {c["name"]: (out_dir / f"mmvout.{c['name']}").read_bytes()
                                  for c in CASES}
    return _WRITTEN[referee.name]


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_kit_reads_and_rebuilds_libpcp_mmv_files(referee: Referee, spec: Path, tmp_path: Path,
                                                 case: dict[str, Any]) -> None:
    data = write_with(referee, spec, tmp_path)[case["name"]]
    parsed = parse_mmv(data, f"mmvout.{case['name']}")
    assert parsed.version == int(case["name"][1])
    assert parsed.g1 == parsed.g2 != 0 and parsed.process > 0
    assert parsed == expected_model(case, parsed)
    rebuilt = build_mmv(parsed)
    assert mask_label_slack(rebuilt) == mask_label_slack(data)
    if not parsed.labels:
        assert rebuilt == data
