"""The implementation-neutral result format of an interpolation replay (spec/interp.md)."""

from __future__ import annotations

import json
from typing import Any, TextIO

from ..archive import Archive
from ..dump import typed_value
from ..pmtypes import PmID
from .interp import NoValue, Sample

__all__ = ["samples_json", "write_json", "write_text"]

FORMAT = {"kind": "interp", "format": "pcpconform-interp", "format_version": 1}


def samples_json(archive: Archive, samples: list[Sample], rules: str) -> dict[str, Any]:
    out = []
    for s in samples:
        entry: dict[str, Any] = {"time": {"sec": s.time.sec, "nsec": s.time.nsec}, "eol": s.eol,
                                 "metrics": []}
        for pmid, insts in s.values.items():
            desc = archive.desc(pmid)
            names = archive.instances(desc.indom, s.time) if not desc.indom.is_null else {}
            if not names and not desc.indom.is_null:
                names = {i: n for r in archive.indom_history(desc.indom) for i, n in r.instances.items()}
            rows = []
            for inst, v in sorted(insts.items()):
                row: dict[str, Any] = {"inst": inst, "name": names.get(inst)}
                if isinstance(v, NoValue):
                    row.update({"value": None, "reason": v.reason})
                else:
                    row["value"] = typed_value(v, desc.type, 1)
                rows.append(row)
            entry["metrics"].append({"pmid": str(PmID(pmid)), "name": archive.metric_name(pmid),
                                     "instances": rows})
        out.append(entry)
    return {**FORMAT, "rules": rules, "samples": out}


def write_json(archive: Archive, samples: list[Sample], rules: str, out: TextIO) -> None:
    json.dump(samples_json(archive, samples, rules), out, indent=1)
    out.write("\n")


def write_text(archive: Archive, samples: list[Sample], out: TextIO) -> None:
    from ..dump import _text_value, _when

    for s in samples:
        if s.eol:
            out.write(f"{_when(s.time)}  end of log\n")
            continue
        for pmid, insts in s.values.items():
            desc = archive.desc(pmid)
            for inst, v in sorted(insts.items()):
                shown = f"no value ({v.reason})" if isinstance(v, NoValue) else _text_value(v, desc.type)
                where = "" if inst == -1 else f"[{inst}]"
                out.write(f"{_when(s.time)}  {archive.metric_name(pmid)}{where}  {shown}\n")
