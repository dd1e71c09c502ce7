"""What a valid archive holds, read from its canonical dump, as the tags and the spec clauses
of its case: the clauses of the records, fields and rules it exercises by obeying them.

A clause is cited only when the archive holds what the clause is about (a delta instance
domain for FMT-INDOM-6, a mark for FMT-RESULT-2, a second volume for FMT-VOL-*), so that
the coverage of ``pcpconform corpus check --coverage`` says which rules a valid example
really shows.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

__all__ = ["Features", "archive_features"]

#: every valid archive obeys these (files, framing, labels, descriptors, results, values)
_ALWAYS = (
    "FMT-CONF-1", "FMT-CONV-1", "FMT-CONV-2", "FMT-CONV-3", "FMT-CONV-4", "FMT-CONV-5",
    "FMT-CONV-6", "FMT-CONV-8", "FMT-FILE-1", "FMT-FILE-2", "FMT-FILE-3", "FMT-FILE-5",
    "FMT-FILE-6", "FMT-FILE-7", "FMT-FRAME-1", "FMT-FRAME-2", "FMT-FRAME-3", "FMT-FRAME-4",
    "FMT-FRAME-5", "FMT-LABEL-1", "FMT-LABEL-2", "FMT-LABEL-3", "FMT-LABEL-4", "FMT-LABEL-6",
    "FMT-LABEL-7", "FMT-META-1", "FMT-META-2", "FMT-META-3", "FMT-META-4", "FMT-META-5",
    "FMT-DESC-1", "FMT-DESC-2", "FMT-DESC-3", "FMT-DESC-4", "FMT-DESC-5", "FMT-DESC-7",
    "FMT-DESC-8", "FMT-UNITS-1", "FMT-UNITS-2", "FMT-RESULT-1", "FMT-RESULT-3", "FMT-RESULT-4",
    "FMT-RESULT-5", "FMT-RESULT-6", "FMT-RESULT-7", "FMT-RESULT-8", "FMT-VALUE-1",
    "FMT-VALUE-5", "FMT-VALUE-6", "FMT-TIME-3", "FMT-TIME-4", "FMT-VER-1", "FMT-VER-2",
    "FMT-DIV-1", "FMT-DIV-4", "FMT-DIV-5", "FMT-DIV-10", "FMT-DIV-21",
    "DUMP-FILE-1", "DUMP-FILE-2", "DUMP-FILE-3", "DUMP-ORDER-1", "DUMP-LOC-1", "DUMP-LOC-2",
    "DUMP-LOC-3", "DUMP-TIME-1", "DUMP-ID-1", "DUMP-ESC-1", "DUMP-INT-1", "DUMP-LABEL-1",
    "DUMP-LABEL-2", "DUMP-TAG-1", "DUMP-DESC-1", "DUMP-RESULT-1", "DUMP-RESULT-3",
    "DUMP-RESULT-4", "DUMP-VAL-1", "DUMP-VAL-2", "DUMP-RAW-1", "DUMP-RAW-2", "DUMP-RAW-4",
    "DUMP-LOSSLESS-1", "DUMP-LOSSLESS-2", "DUMP-LOSSLESS-3",
    "CHECK-SEV-1", "CHECK-EXIT-1", "CHECK-RUN-1", "CHECK-RUN-3", "CHECK-RUN-4",
)
_BY_VERSION = {2: ("FMT-TIME-1",), 3: ("FMT-TIME-2", "FMT-LABEL-5", "FMT-DIV-2")}
#: a feature (the tag it gives the case) -> the clauses an archive having it exercises
_CLAUSES: dict[str, tuple[str, ...]] = {
    "index": ("FMT-INDEX-1", "FMT-INDEX-2", "FMT-INDEX-3", "FMT-INDEX-4", "FMT-INDEX-5",
              "FMT-INDEX-6", "FMT-INDEX-7", "FMT-INDEX-8", "FMT-DIV-9", "DUMP-INDEX-1"),
    "indoms": ("FMT-CONV-7", "FMT-INDOM-1", "FMT-INDOM-2", "FMT-INDOM-3", "FMT-INDOM-5",
               "FMT-INDOM-7", "FMT-INDOM-9", "FMT-DIV-12", "DUMP-INDOM-1", "DUMP-INDOM-2"),
    "delta-indom": ("FMT-INDOM-4", "FMT-INDOM-6", "FMT-INDOM-8", "FMT-INDOM-10", "FMT-DIV-13"),
    "help": ("FMT-TEXT-1", "FMT-TEXT-2", "FMT-TEXT-4", "FMT-DIV-8", "DUMP-TEXT-1"),
    "labels": ("FMT-LABELSET-1", "FMT-LABELSET-2", "FMT-LABELSET-3", "FMT-LABELSET-4",
               "FMT-LABELSET-5", "FMT-LABELSET-6", "FMT-LABELSET-7", "FMT-LABELSET-8",
               "FMT-DIV-3", "DUMP-LABELSET-1"),
    "marks": ("FMT-RESULT-2", "DUMP-RESULT-2"),
    "dptr": ("FMT-VALUE-2", "FMT-VALUE-3", "FMT-VALUE-4", "FMT-VALUE-8", "FMT-DIV-6",
             "FMT-DIV-7"),
    "sptr": ("FMT-DIV-17",),
    "strings": ("FMT-VALUE-7", "FMT-DIV-19", "DUMP-VAL-3"),
    "events": ("FMT-EVENT-1", "FMT-EVENT-2", "FMT-EVENT-3", "FMT-EVENT-4", "FMT-EVENT-5",
               "FMT-EVENT-6", "FMT-EVENT-7", "FMT-DIV-18", "DUMP-EVENT-1", "DUMP-RAW-3"),
    "highres-events": ("FMT-EVENT-3",),
    "multi-volume": ("FMT-VOL-1", "FMT-VOL-2", "FMT-VOL-3", "FMT-VOL-4", "FMT-FILE-4",
                     "FMT-DIV-22"),
    "large-units": ("FMT-DIV-16",),
    "desc-repeat": ("FMT-DESC-6",),
    "text-repeat": ("FMT-TEXT-3",),
}


@dataclass
class Features:
    """What an archive holds: its tags (corpus/README.md) and the clauses they exercise."""

    version: int
    found: set[str] = field(default_factory=set)
    types: set[str] = field(default_factory=set)
    volumes: set[str] = field(default_factory=set)

    def tags(self) -> list[str]:
        words = ("events", "highres-events", "marks", "labels", "help", "delta-indom", "multi-volume")
        return [w for w in words if w in self.found] + [f"type:{t}" for t in sorted(self.types)]

    def clauses(self) -> list[str]:
        out = list(_ALWAYS) + list(_BY_VERSION[self.version])
        for name in sorted(self.found):
            out += _CLAUSES.get(name, ())
        return list(dict.fromkeys(out))


def _vsets(obj: dict[str, object], feats: Features) -> None:
    vsets = obj.get("vsets")
    if not isinstance(vsets, list):
        return
    if not vsets:
        feats.found.add("marks")
    for vs in vsets:
        valfmt = vs.get("valfmt")
        if valfmt == 1:
            feats.found.add("dptr")
        elif valfmt == 2:
            feats.found.add("sptr")
        for v in vs.get("values", ()):
            ptype = str(v.get("type"))
            feats.types.add(ptype.replace("_", "-").lower())
            if ptype == "string":
                feats.found.add("strings")
            if ptype == "event":
                feats.found.add("events")
            if ptype == "highres_event":
                feats.found |= {"events", "highres-events"}


def archive_features(dump: bytes) -> Features:
    """The features of the archive whose canonical JSON Lines dump is ``dump``."""
    lines = [json.loads(line) for line in dump.decode("utf-8").splitlines()]
    version = next(int(o["version"]) for o in lines if o.get("kind") == "label")
    feats = Features(version)
    descs: set[str] = set()
    texts: set[tuple[object, ...]] = set()
    for obj in lines:
        kind = obj.get("kind")
        feats.volumes.add(str(obj.get("file")))
        if kind == "index":
            feats.found.add("index")
        elif kind == "indom":
            feats.found.add("indoms")
            if obj.get("delta"):
                feats.found.add("delta-indom")
        elif kind == "text":
            feats.found.add("help")
            key = (obj.get("class"), obj.get("target"), obj.get("ident"))
            if key in texts:
                feats.found.add("text-repeat")
            texts.add(key)
        elif kind == "labelset":
            feats.found.add("labels")
        elif kind == "desc":
            if obj["pmid"] in descs:
                feats.found.add("desc-repeat")
            descs.add(str(obj["pmid"]))
            units = obj.get("units") or {}
            if isinstance(units, dict) and int(units.get("scaleSpace", 0)) > 6:
                feats.found.add("large-units")
        elif kind == "result":
            _vsets(obj, feats)
    if len(feats.volumes - {"meta", "index", "None"}) > 1:
        feats.found.add("multi-volume")
    return feats
