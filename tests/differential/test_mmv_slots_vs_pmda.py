"""String slots with no NUL in their 256 bytes, as each referee's MMV PMDA and mmvdump read
them, against the kit's dump and check (MMV-IMPL-SLOT-255, DUMP-MMV-ESC, MMV-CHK-STR-1).

A version 2 file whose metric name, one-line help, help text and STRING value slots are
filled with 256 letters: the PMDA exports the name with its first 255 bytes, serves both
help texts and the value with 255 bytes; mmvdump prints the name and the help texts with 255
bytes and the value running on past its slot. The dump's ``pcp_name``, help texts and value
are what the PMDA serves, each marked ``_unterminated``; the check calls the name and the
value errors (the PMDA exports another name; mmvdump reads past the slot) and the help texts
warnings (both readers serve the same 255 bytes).
"""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from pcpconform.check.mmv import check_mmv_file
from pcpconform.dump.mmv_jsonl import mmv_records
from pcpconform.mmv import Metric, MmvFile, Value, build_mmv
from pcpconform.mmv import model as mm
from tests.differential.libpcp.mmv_pmda import observe
from tests.differential.libpcp.referees import Referee

pytestmark = [pytest.mark.libpcp]


def unterminated() -> bytes:
    metrics = (Metric("a" * 250, 1, mm.TYPE_U32, mm.SEM_INSTANT, 0, 0, "S" * 250, "H" * 250,
                      (Value.of(mm.TYPE_U32, 5),)),
               Metric("str", 2, mm.TYPE_STRING, mm.SEM_INSTANT, 0, 0, None, None,
                      (Value(None, struct.pack("<q", 250), 0, "V" * 250),)))
    data = bytearray(build_mmv(MmvFile(2, 1 << 32, 1 << 32, 0, 0, 5, (), metrics)))
    for ch in b"aSHV":
        at = data.find(bytes([ch]) * 250)
        data[at:at + 256] = bytes([ch]) * 256
    return bytes(data)


def test_unterminated_slots_as_the_pmda_serves_them(referee: Referee, tmp_path: Path) -> None:
    data = unterminated()
    name = "mmv.f." + "a" * 255
    obs = observe(referee, {"f": data}, descs=[name], fetch=["70.5.1", "70.5.2"], texts=[name])
    view, dump = obs.pmda, obs.dumps["f"]
    assert not view.run.crashed and dump.run.status == 0
    assert name in view.names and "mmv.f." + "a" * 256 not in view.names
    assert view.texts[name] == ("S" * 255, "H" * 255)
    assert view.values["70.5.2"] == [(None, '"' + "V" * 255 + '"')]
    # mmvdump: the name and help texts cut at 255 bytes, the value read on past its slot
    (metric, _) = dump.metrics
    assert metric.name == "a" * 255 and metric.fields["shorttext"] == "S" * 255
    assert len(dump.values[1].text) > 256 + 2

    records, problems = mmv_records(data, "f")
    assert not problems
    lines = {(r["kind"], r.get("index")): r for r in records}
    m = lines[("metric", 0)]
    assert m["pcp_name"] == name and m["name"] == "a" * 255 and m["name_unterminated"] is True
    assert (m["shorttext"], m["helptext"]) == view.texts[name]
    assert m["shorttext_unterminated"] and m["helptext_unterminated"] and m["exported"]
    v = lines[("value", 1)]
    assert v["value"] == {"type": "string", "value": "V" * 255} and v["value_unterminated"] is True

    (tmp_path / "f").write_bytes(data)
    report = check_mmv_file(tmp_path / "f")
    found = {(d.code, d.severity.value, d.field) for d in report.diagnostics}
    assert found == {("mmv.name-nul", "error", "metrics[0].name"),
                     ("mmv.string-nul", "warning", "metrics[0].shorttext"),
                     ("mmv.string-nul", "warning", "metrics[0].helptext"),
                     ("mmv.string-value-nul", "error", "values[1].extra")}, found
