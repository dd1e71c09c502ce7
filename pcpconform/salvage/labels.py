"""Labels: each file's label read leniently, and the one label every output file gets.

A label is fixed-size for its version, so its fields can be read even where its magic,
length words or volume number are damaged. The archive's version is what most label words
say (the magic's version byte and the two length words of every file: 132 is version 2, 808
version 3); each other field (pid, hostname, timezone, zoneinfo, start, features) is what
most intact labels say, ties going to .meta, then the data volumes, then .index
(SALVAGE-LABEL-1). Only the feature bits libpcp defines are kept (SALVAGE-LABEL-2); a start
time that no file gives intact is the first result's (SALVAGE-LABEL-3).
"""

from __future__ import annotations

import contextlib
from collections import Counter
from dataclasses import dataclass
from typing import Any

from construct import ConstructError

from pcpconform.format.pmtypes import Timestamp
from pcpconform.format.schema import LABEL_SIZE, PM_LOG_MAGIC, structs
from pcpconform.io.writer import LabelFields
from pcpconform.salvage.sources import Source

__all__ = ["FileLabel", "read_label", "agree", "archive_version", "LABEL_FIELDS"]

_V3_FEATURES = 0x80000000
_SIZE_VERSION = {size: version for version, size in LABEL_SIZE.items()}
LABEL_FIELDS = ("pid", "hostname", "timezone", "zoneinfo", "start", "features")


@dataclass
class FileLabel:
    """One file's label as read: ``intact`` when magic, lengths and volume are all right."""

    name: str
    kind: str                          # meta, index or volume
    expected_vol: int
    votes: list[int]                   # the version its magic names (any, 1 included)
    sizes: list[int]                   # versions its length words stand for
    parsed: dict[int, Any]             # version -> label fields read as that version
    intact_version: int | None = None  # the version of an intact label
    problem: tuple[str, str] | None = None   # (check code, detail) of the first defect

    def fields(self, version: int) -> Any | None:
        return self.parsed.get(version)


def _fraction_ok(ts: Timestamp, version: int) -> bool:
    return 0 <= ts.nsec < 1_000_000_000 and (version == 3 or ts.nsec % 1000 == 0) and ts.sec >= 0


def read_label(source: Source, kind: str, expected_vol: int) -> FileLabel:
    """Read what can be read of a file's label."""
    head = source.read(0, LABEL_SIZE[3])
    label = FileLabel(source.name, kind, expected_vol, [], [], {})
    if len(head) < 8:
        label.problem = ("label.truncated", f"the file is {len(head)} bytes, too short for a label")
        return label
    length = int.from_bytes(head[0:4], "big")
    magic = int.from_bytes(head[4:8], "big")
    if magic >> 8 == PM_LOG_MAGIC >> 8:
        label.votes.append(magic & 0xFF)
    if length in _SIZE_VERSION:
        label.sizes.append(_SIZE_VERSION[length])
    for version, size in LABEL_SIZE.items():
        if len(head) >= size:
            trailer = int.from_bytes(head[size - 4:size], "big")
            if trailer == size:
                label.sizes.append(version)
            with contextlib.suppress(ConstructError):
                label.parsed[version] = structs(version).label.parse(head[4:size - 4])
    label.problem = _problem(label, head, length, magic)
    if label.problem is None:
        label.intact_version = magic & 0xFF
    return label


def _problem(label: FileLabel, head: bytes, length: int, magic: int) -> tuple[str, str] | None:
    if magic >> 8 != PM_LOG_MAGIC >> 8:
        return "label.magic", f"bad label magic 0x{magic:08x}"
    version = magic & 0xFF
    if version not in LABEL_SIZE:
        return "label.version", f"archive version {version} in the label magic"
    size = LABEL_SIZE[version]
    if length != size:
        return "label.length", f"label length {length}, not {size}"
    if len(head) < size:
        return "label.truncated", "the label is cut short"
    if int.from_bytes(head[size - 4:size], "big") != size:
        return "label.trailer", "the label's trailing length differs from its header"
    fields = label.parsed.get(version)
    if fields is None:
        return "label.truncated", "the label does not decode"
    if fields.vol != label.expected_vol:
        return "label.vol", f"the label says volume {fields.vol}, the file is {label.expected_vol}"
    return None


def _label_version(label: FileLabel) -> int | None:
    """What one label says its version is: its magic's, unless both its length words say
    otherwise (132 bytes is version 2, or 1; 808 is version 3)."""
    magic = label.votes[0] if label.votes else None
    sizes = label.sizes
    fits = magic is not None and (magic in sizes or (magic == 1 and 2 in sizes) or not sizes)
    if fits:
        return magic
    if len(sizes) == 2 and sizes[0] == sizes[1]:
        return sizes[0]
    return magic if magic is not None else (sizes[0] if sizes else None)


def archive_version(labels: list[FileLabel]) -> int | None:
    """The version most labels say they are (each by its magic, unless both its length words
    say otherwise); a tie is settled by all the labels' length words. May be a version
    libpcp cannot read (1, or garbage): the caller refuses it."""
    votes = Counter(v for lab in labels if (v := _label_version(lab)) is not None)
    sizes = Counter(v for lab in labels for v in lab.sizes)
    if not votes and not sizes:
        return None
    return max(set(votes) | set(sizes), key=lambda v: (votes[v], sizes[v], v))


def _value(fields: Any, name: str) -> Any:
    if name in ("hostname", "timezone", "zoneinfo"):
        return fields.get(name, "")
    if name == "features":
        return fields.get("features", 0)
    return fields[name]


def agree(labels: list[FileLabel], version: int) -> tuple[LabelFields | None, list[tuple[str, str, str]]]:
    """The label of the output, and what it repairs: (check code, file, detail) for each
    file whose label said something else."""
    order = {"meta": 0, "volume": 1, "index": 2}
    ranked = sorted(labels, key=lambda lab: order[lab.kind])
    intact = [lab for lab in ranked if lab.intact_version == version]
    readable = intact or [lab for lab in ranked if lab.fields(version) is not None]
    if not readable:
        return None, []
    chosen: dict[str, Any] = {}
    for name in LABEL_FIELDS:
        counts: Counter[Any] = Counter()
        first: dict[Any, int] = {}
        for k, lab in enumerate(readable):
            value = _value(lab.fields(version), name)
            if name == "start" and not _fraction_ok(value, version):
                continue
            counts[value] += 1
            first.setdefault(value, k)
        chosen[name] = max(counts, key=lambda v: (counts[v], -first[v])) if counts else None
    repairs: list[tuple[str, str, str]] = []
    for lab in labels:
        if lab.problem is not None:
            repairs.append((lab.problem[0], lab.name, lab.problem[1]))
            continue
        fields = lab.fields(version)
        if lab.intact_version != version:
            repairs.append(("label.mismatch", lab.name, f"version {lab.intact_version} among version {version} files"))
            continue
        differ = [n for n in LABEL_FIELDS if _value(fields, n) != chosen[n] and chosen[n] is not None]
        if differ:
            code = ("label.mismatch" if {"pid", "hostname"} & set(differ) else
                    "label.start-mismatch" if differ == ["start"] else
                    "label.features" if differ == ["features"] else "label.timezone-mismatch")
            repairs.append((code, lab.name, "its " + ", ".join(differ) + " differ from the other files'"))
    features = chosen["features"] or 0
    if features & ~_V3_FEATURES:
        repairs.append(("label.features", "", f"unknown feature bits 0x{features & ~_V3_FEATURES:08x} cleared"))
    start = chosen["start"]
    out = LabelFields(hostname=chosen["hostname"] or "", timezone=chosen["timezone"] or "",
                      start=start if start is not None else Timestamp(0, 0),
                      pid=chosen["pid"] or 0, zoneinfo=chosen["zoneinfo"] or "",
                      features=features & _V3_FEATURES)
    return out, repairs


def start_known(fields: LabelFields) -> bool:
    """Whether the agreed start time came from a label (else the first result gives it)."""
    return fields.start != Timestamp(0, 0)
