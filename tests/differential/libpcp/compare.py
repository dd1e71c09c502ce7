"""Compare what pcpconform's reader gets from an archive with what a libpcp's PMAPI gets.

``our_view(base)`` builds, from ``pcpconform.io.archive.Archive``, the document pm_read.py
prints (same keys, same value encoding). ``reader_differences(theirs, ours)`` lists every
place they differ; ``assert_reader_matches_libpcp(referee, base)`` reads ``base`` with
``referee`` and asserts there is none. What is compared is what libpcp returned: its metrics
(pm_read.py leaves out derived ones), its results, the instance domains and texts it was
asked for and answered; nothing is left out on the strength of a label of the input.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pcpconform.format.pmtypes import LabelType, PmID, PmInDom, PmType, TextType, Timestamp
from pcpconform.format.values import F32
from pcpconform.io.archive import Archive
from pcpconform.io.decoded import DecodedResult
from pcpconform.salvage.measure import encode
from tests.differential.libpcp import bridge
from tests.differential.libpcp.referees import Referee

__all__ = ["assert_reader_matches_libpcp", "libpcp_encoding", "our_view", "reader_differences"]


def libpcp_encoding(value: Any, ptype: int) -> Any:
    """A decoded value in pm_read.py's encoding (``pcpconform.salvage.measure.encode``); a
    FLOAT that is not an F32 (a computed one) stays as it is."""
    if ptype == PmType.FLOAT and not isinstance(value, F32):
        return value
    return encode(value, ptype)


def _ts(t: Timestamp) -> list[int]:
    return [t.sec, t.nsec]


def result_views(a: Archive, results: Iterator[DecodedResult], out: list[dict[str, Any]]) -> None:
    """pm_read.py's form of each result, appended to ``out`` as it is read (what was read
    before an error is kept)."""
    for r in results:
        values = {}
        for vs in r.vsets:
            if vs.pmid not in a.metadata.descs:
                # a set whose members' metadata libpcp lost (SET-MEMBER-2): values it cannot
                # look up, as pm_set.py reports them
                values[str(PmID(vs.pmid))] = {"numval": vs.numval, "valfmt": vs.valfmt if vs.numval > 0 else None,
                                              "values": [], "nodesc": "PM_ERR_PMID_LOG"}
                continue
            ptype = a.desc(vs.pmid).type
            values[str(PmID(vs.pmid))] = {
                "numval": vs.numval, "valfmt": vs.valfmt if vs.numval > 0 else None,
                "values": [[inst, libpcp_encoding(v, ptype)] for inst, v in vs.values]}
        out.append({"time": _ts(r.timestamp), "mark": r.is_mark, "values": values})


def our_view(base: Path, archive: Archive | None = None,
             results: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """pm_read.py's document, as far as the kit's reader can give it (labels: see below),
    of ``base`` or of an opened ``archive`` (an archive set); ``results`` already read."""
    a = archive if archive is not None else Archive(base)
    if results is None:
        results = []
        result_views(a, a.results(), results)
    metrics = {}
    for d in a.descs():
        u = d.units
        metrics[str(d.pmid)] = {"names": sorted(d.names), "type": d.type, "sem": d.sem,
                                "indom": None if d.indom.is_null else str(d.indom),
                                "units": [u.dimSpace, u.dimTime, u.dimCount, u.scaleSpace,
                                          u.scaleTime, u.scaleCount]}
    # instance domains as pm_read.py samples them: the set in force after each result
    indoms: dict[str, list[Any]] = {}
    every: dict[str, dict[str, str]] = {}
    for indom in sorted({int(d.indom) for d in a.descs() if not d.indom.is_null}):
        key = str(PmInDom(indom))
        last = None
        history = a.indom_history(indom)
        for res in results:
            at = Timestamp(res["time"][0], res["time"][1])
            if not any(rec.timestamp <= at for rec in history):
                continue        # pmGetInDom fails: no record of the indom in force yet
            snap = {str(i): n for i, n in sorted(a.instances(indom, at).items())}
            if snap != last:
                indoms.setdefault(key, []).append([res["time"], snap])
                last = snap
        union: dict[str, str] = {}
        for irec in history:
            union.update({str(i): n for i, n in irec.instances.items()})
        every[key] = union
    text = {}
    for (kind, ident), body in a.metadata.text.items():
        target = "indom" if kind & TextType.INDOM else "pmid"
        ident_s = str(PmInDom(ident)) if target == "indom" else str(PmID(ident))
        cls = "oneline" if kind & TextType.ONELINE else "help"
        text[f"{target}:{ident_s}:{cls}"] = body
    # libpcp answers pmGetContextLabels of an archive without a context label set with the
    # label record's host name
    context: dict[str, Any] = {"hostname": a.label.hostname}
    for rec in a.labels():
        if rec.type == LabelType.CONTEXT:
            for _, labels in rec.sets:
                if isinstance(labels, dict):
                    context = dict(labels)
    lab = a.label
    end = results[-1]["time"] if results else _ts(lab.start)
    version = getattr(a, "label_version", a.version)     # a set reports its first member's
    return {"label": {"version": version, "hostname": lab.hostname, "timezone": lab.timezone,
                      "zoneinfo": getattr(lab, "zoneinfo", None), "pid": lab.pid,
                      "start": _ts(lab.start)},
            "end": end, "metrics": metrics, "results": results, "indoms": indoms,
            "indoms_all": every, "text": text, "labels": {"context": context}}


def reader_differences(theirs: dict[str, Any], ours: dict[str, Any]) -> list[str]:
    """Every difference between libpcp's document and the kit's, as readable lines."""
    out: list[str] = []
    for key, value in theirs["label"].items():
        if key == "zoneinfo" and theirs["label"]["version"] == 2:
            continue        # a v2 label has no zoneinfo; libpcp reports its own idea of one
        if ours["label"].get(key) != value:
            out.append(f"label.{key}: libpcp {value!r}, ours {ours['label'].get(key)!r}")
    if theirs["end"] != ours["end"]:
        out.append(f"end: libpcp {theirs['end']}, ours {ours['end']}")
    for pmid, desc in theirs["metrics"].items():
        if ours["metrics"].get(pmid) != desc:
            out.append(f"metric {pmid}: libpcp {desc}, ours {ours['metrics'].get(pmid)}")
    if len(theirs["results"]) != len(ours["results"]):
        out.append(f"results: libpcp {len(theirs['results'])}, ours {len(ours['results'])}")
    for n, (ref, mine) in enumerate(zip(theirs["results"], ours["results"])):
        if ref != mine:
            out.append(f"result {n} at {ref['time']}: libpcp {ref}, ours {mine}")
    for indom, snaps in theirs["indoms"].items():
        if ours["indoms"].get(indom) != snaps:
            out.append(f"instances of {indom} over time: libpcp {snaps}, ours {ours['indoms'].get(indom)}")
    for indom, insts in theirs["indoms_all"].items():
        if ours["indoms_all"].get(indom) != insts:
            out.append(f"all instances of {indom}: libpcp {insts}, ours {ours['indoms_all'].get(indom)}")
    asked = {f"pmid:{p}" for p in theirs["metrics"]} | {
        f"indom:{d['indom']}" for d in theirs["metrics"].values() if d["indom"]}
    mine = {k: v for k, v in ours["text"].items() if k.rsplit(":", 1)[0] in asked}
    if mine != theirs["text"]:
        out.append(f"help text: libpcp {theirs['text']}, ours {mine}")
    their_context = theirs["labels"].get("context", {})
    if their_context != ours["labels"]["context"]:
        out.append(f"context labels: libpcp {their_context}, ours {ours['labels']['context']}")
    return out


def assert_reader_matches_libpcp(referee: Referee, base: Path) -> dict[str, Any]:
    """Read ``base`` with ``referee`` and with the kit: no difference. Returns libpcp's document."""
    theirs = bridge.pm_read(referee, base)
    diffs = reader_differences(theirs, our_view(base))
    assert not diffs, f"{referee.name} reads {base} differently:\n" + "\n".join(diffs)
    return theirs
