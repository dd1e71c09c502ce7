"""The implementation-neutral result format of an interpolation replay (spec/interp.md,
INTERP-FMT-*), and its text and CSV views."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Iterator
from typing import Any, TextIO

from pcpconform.dump.jsonl import typed_value
from pcpconform.dump.text import value_text, when_text
from pcpconform.format.pmtypes import PmID, PmSem, PmType
from pcpconform.io.archive import Archive
from pcpconform.oracles.interp.model import NoValue, Sample

__all__ = ["samples_json", "write_json", "write_text", "write_csv"]

FORMAT = {"kind": "interp", "format": "pcpconform-interp", "format_version": 1}


def _names(archive: Archive, desc: Any, s: Sample) -> dict[int, str]:
    if desc.indom.is_null:
        return {}
    names = archive.instances(desc.indom, s.time)
    if not names:
        names = {i: n for r in archive.indom_history(desc.indom) for i, n in r.instances.items()}
    return names


_Row = tuple[int, str, Any, int, list[tuple[int, str | None, Any]]]


def _rows(archive: Archive, s: Sample, rate: bool) -> Iterator[_Row]:
    """(pmid, metric name, desc, value type, [(inst, name, value)]) per metric of a sample."""
    for pmid, insts in s.values.items():
        desc = archive.desc(pmid)
        names = _names(archive, desc, s)
        # rate-converted counters are doubles (INTERP-RATE-1)
        vtype = PmType.DOUBLE if rate and desc.sem == PmSem.COUNTER else desc.type
        yield (pmid, archive.metric_name(pmid), desc, vtype,
               [(inst, names.get(inst), v) for inst, v in sorted(insts.items())])


def _sample_json(archive: Archive, s: Sample, rate: bool) -> dict[str, Any]:
    entry: dict[str, Any] = {"time": {"sec": s.time.sec, "nsec": s.time.nsec}, "eol": s.eol,
                             "metrics": []}
    for pmid, name, _desc, vtype, rows in _rows(archive, s, rate):
        insts = []
        for inst, iname, v in rows:
            row: dict[str, Any] = {"inst": inst, "name": iname}
            if isinstance(v, NoValue):
                row.update({"value": None, "reason": v.reason})
            else:
                row["value"] = typed_value(v, vtype, 1)
            insts.append(row)
        entry["metrics"].append({"pmid": str(PmID(pmid)), "name": name, "instances": insts})
    return entry


def _document(rules: str, rate: bool, emulate: tuple[str, ...],
              rules_from: str | None) -> tuple[dict[str, Any], dict[str, Any]]:
    """The document's members before ``samples`` and after it, in their order."""
    head: dict[str, Any] = {**FORMAT, "rules": rules}
    if rules_from is not None:
        head["rules_from"] = rules_from          # how the rule set was chosen (INTERP-CLI-7)
    tail: dict[str, Any] = {}
    if rate:
        tail["rate"] = True
    if emulate:
        tail["emulate"] = sorted(emulate)
    return head, tail


def samples_json(archive: Archive, samples: Iterable[Sample], rules: str, *,
                 rate: bool = False, emulate: tuple[str, ...] = (),
                 rules_from: str | None = None) -> dict[str, Any]:
    head, tail = _document(rules, rate, emulate, rules_from)
    return {**head, "samples": [_sample_json(archive, s, rate) for s in samples], **tail}


def _indented(value: Any, depth: int) -> str:
    """``json.dumps(value, indent=1)`` as it reads ``depth`` levels down a document."""
    return json.dumps(value, indent=1).replace("\n", "\n" + " " * depth)


def write_json(archive: Archive, samples: Iterable[Sample], rules: str, out: TextIO, *,
               rate: bool = False, emulate: tuple[str, ...] = (),
               rules_from: str | None = None) -> None:
    """``json.dump(samples_json(...), out, indent=1)`` and a newline, written a sample at a
    time: the document is never built whole."""
    head, tail = _document(rules, rate, emulate, rules_from)
    out.write("{\n" + "".join(f" {json.dumps(k)}: {_indented(v, 1)},\n" for k, v in head.items()))
    out.write(' "samples": [')
    first = True
    for s in samples:
        out.write(("\n  " if first else ",\n  ") + _indented(_sample_json(archive, s, rate), 2))
        first = False
    out.write("]" if first else "\n ]")
    out.write("".join(f",\n {json.dumps(k)}: {_indented(v, 1)}" for k, v in tail.items()))
    out.write("\n}\n")


def write_text(archive: Archive, samples: Iterable[Sample], out: TextIO, *, rate: bool = False,
               header: str | None = None) -> None:
    if header is not None:
        out.write(header + "\n")
    for s in samples:
        if s.eol:
            out.write(f"{when_text(s.time)}  end of log\n")
            continue
        for _pmid, name, _desc, vtype, rows in _rows(archive, s, rate):
            for inst, iname, v in rows:
                shown = f"no value ({v.reason})" if isinstance(v, NoValue) else value_text(v, vtype)
                where = "" if inst == -1 else f"[{iname if iname is not None else inst}]"
                out.write(f"{when_text(s.time)}  {name}{where}  {shown}\n")


def write_csv(archive: Archive, samples: Iterable[Sample], out: TextIO, *, rate: bool = False) -> None:
    """One row per sample, metric and instance: time (epoch seconds with nanoseconds),
    metric, pmid, inst, instance name, value (decimal, or IEEE repr for floats), reason."""
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["time", "metric", "pmid", "inst", "instance", "value", "reason"])
    for s in samples:
        when = f"{s.time.sec}.{s.time.nsec:09d}"
        if s.eol:
            w.writerow([when, "", "", "", "", "", "end of log"])
            continue
        for pmid, name, _desc, vtype, rows in _rows(archive, s, rate):
            for inst, iname, v in rows:
                if isinstance(v, NoValue):
                    w.writerow([when, name, str(PmID(pmid)), inst, iname or "", "", v.reason])
                else:
                    w.writerow([when, name, str(PmID(pmid)), inst, iname or "", value_text(v, vtype), ""])
