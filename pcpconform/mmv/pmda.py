"""What the MMV PMDA exports from the files of its directory, as one document.

``pmda_export([(name, MmvFile), ...])`` follows pmdammv's steps over well-formed files given
in the order it loads them (its alphasort of the directory, files it rejects left out): each
file's cluster (``choose_cluster``), every metric's name into one namespace (MMV-ID-3),
InDoms merged by ``(cluster << 11) | serial`` with the first file's names kept, and the
lookups behind a descriptor, a help text and a fetch (MMV-IMPL-DIR-1): the descriptor of a
PMID is the last file's metric of that cluster and item, its help text and each instance's
value the first file's that has one. For one file alone this is what it exports
(MMV-IMPL-1..3); the ``mmv-writer`` conformance suite grades writers on this document.

The document (``PmdaExport.as_json``) holds plain JSON: names with their PMIDs, descriptors,
instance domains with their instances in order, values tagged as DUMP-VAL-1 tags them (the
time-dependent part of an open ELAPSED interval left out, its start kept), help texts and
labels.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pcpconform.format.pmtypes import PmUnits
from pcpconform.mmv.model import (
    FLAG_SENTINEL,
    LABEL_CLUSTER,
    LABEL_INDOM,
    LABEL_INSTANCES,
    LABEL_ITEM,
    LABEL_OPTIONAL,
    SEM_COUNTER,
    TYPE_DOUBLE,
    TYPE_ELAPSED,
    TYPE_FLOAT,
    TYPE_NOSUPPORT,
    TYPE_STRING,
    Metric,
    MmvFile,
    Value,
    encode_text,
    exported_indom,
    exported_name,
    exported_pmid,
    is_singular,
    pmda_name_ok,
)
from pcpconform.mmv.pmns import PmdaNamespace

__all__ = ["PmdaExport", "pmda_export", "choose_cluster", "served_text", "PROFILES"]

#: the PMDA versions whose exports differ (MMV-IMPL-SENTINEL-NAN, MMV-IMPL-CONTROL)
PROFILES = ("pcp-6.0", "pcp-6.3", "pcp-7")
_USEC = PmUnits(dimTime=1, scaleTime=1).to_word()
_INT = {0: "<i", 1: "<I", 2: "<q", 3: "<Q"}
_TOKENS = {-1: "nosupport", 0: "32", 1: "u32", 2: "64", 3: "u64", 4: "float", 5: "double",
           6: "string"}
_LABEL_TYPES = {LABEL_INDOM: "indom", LABEL_CLUSTER: "cluster", LABEL_ITEM: "item",
                LABEL_INSTANCES: "instances"}


def choose_cluster(loaded: Sequence[int], requested: int) -> int | None:
    """pmdammv's choose_cluster: the requested cluster, or for 0 the first its search finds
    free among the clusters of the files loaded before (None: none left)."""
    if requested:
        return requested
    nxt, i = 1, 0
    while i < len(loaded):
        if loaded[i] == nxt:
            nxt += 1
            i = 0       # the C loop restarts at 0, then its i++ skips entry 0
        i += 1
    return nxt if nxt <= 4095 else None


def served_text(text: str | None) -> str | None:
    """A slot's text as the PMDA serves it: at most 255 bytes (it copies the 256-byte slot
    and ends it with a NUL)."""
    if text is None:
        return None
    raw = encode_text(text)
    return text if len(raw) < 256 else raw[:255].decode("utf-8", "surrogateescape")


@dataclass
class _Created:
    file: str
    mmv: MmvFile
    metric: Metric
    pmid: str
    name: str | None        # None: created without a name anyone can find


@dataclass
class PmdaExport:
    """The PMDA's view of a directory (see the module's docstring)."""

    clusters: dict[str, int] = field(default_factory=dict)
    names: dict[str, str] = field(default_factory=dict)                   # name -> PMID
    descs: dict[str, dict[str, Any]] = field(default_factory=dict)        # PMID -> desc
    indoms: dict[str, list[tuple[int, str]]] = field(default_factory=dict)
    values: dict[str, list[tuple[int | None, dict[str, Any]]] | str] = field(default_factory=dict)
    texts: dict[str, tuple[str | None, str | None]] = field(default_factory=dict)
    labels: list[dict[str, Any]] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        """The export as JSON, metrics by name (sorted), each with its PMID, descriptor, help
        and values; instance domains by InDom; labels as the files hold them."""
        metrics = []
        for name in sorted(self.names):
            pmid = self.names[name]
            values = self.values.get(pmid, [])
            metrics.append({
                "name": name, "pmid": pmid, **self.descs[pmid],
                "oneline": self.texts.get(pmid, (None, None))[0],
                "help": self.texts.get(pmid, (None, None))[1],
                "values": values if isinstance(values, str) else
                [{"inst": i, "value": v} for i, v in values]})
        return {"metrics": metrics,
                "indoms": [{"indom": k, "instances": [{"inst": i, "name": n} for i, n in v]}
                           for k, v in sorted(self.indoms.items())],
                "labels": self.labels}


def pmda_export(files: Sequence[tuple[str, MmvFile]], profile: str = "pcp-7") -> PmdaExport:
    """What the PMDA of ``profile`` exports from these files, given in its load order."""
    out = PmdaExport()
    names = PmdaNamespace(pcp7=profile == "pcp-7")
    loaded: list[tuple[str, MmvFile, int]] = []
    for fname, mmv in files:
        cluster = choose_cluster([c for _, _, c in loaded], mmv.cluster)
        if cluster is None:
            continue
        loaded.append((fname, mmv, cluster))
        out.clusters[fname] = cluster
    created: list[_Created] = []
    for fname, mmv, cluster in loaded:
        for d in mmv.indoms:          # indoms: created, or merged into an earlier file's
            if d.serial > (1 << 22) - 1:
                continue
            key = str(exported_indom(cluster, d.serial))
            have = out.indoms.setdefault(key, [])
            known = {i for i, _ in have}
            for inst in d.instances:
                if inst.internal not in known:
                    have.append((inst.internal, inst.name))
                    known.add(inst.internal)
        seen: set[int] = set()
        for m in mmv.metrics:
            full = exported_name(fname, m.name, mmv.flags)
            item_ok = m.item <= 1023 and m.item not in seen
            seen.add(m.item)
            if not (m.name and pmda_name_ok(full)):
                continue
            placed = names.add(full)
            if placed.placement.value == "duplicate" or not item_ok:
                continue
            pmid = str(exported_pmid(cluster, m.item))
            created.append(_Created(fname, mmv, m, pmid, full if placed.exported else None))
    by_pmid: dict[str, _Created] = {}
    for c in created:               # the hashed descriptor lookup finds the last one
        by_pmid[c.pmid] = c
        if c.name is not None:
            out.names[c.name] = c.pmid
    for pmid, c in by_pmid.items():
        out.descs[pmid] = _desc(c)
        sources = [(f, m, cl) for f, m, cl in loaded if cl == int(pmid.split(".")[1])]
        item = int(pmid.split(".")[2])
        out.texts[pmid] = _texts(sources, item)
        out.values[pmid] = _values(sources, item, out.descs[pmid], out.indoms, profile)
    out.labels = [_label(f, mmv, cl, lb) for f, mmv, cl in loaded for lb in mmv.labels]
    return out


def _desc(c: _Created) -> dict[str, Any]:
    m = c.metric
    indom = None if is_singular(m.indom) else str(exported_indom(int(c.pmid.split(".")[1]),
                                                                 m.indom & 0xFFFFFFFF))
    if m.type == TYPE_ELAPSED:
        return {"type": "64", "sem": "counter", "units": f"0x{_USEC:08x}", "indom": indom}
    sem = m.semantics or SEM_COUNTER
    return {"type": _TOKENS.get(m.type, f"type-{m.type}"),
            "sem": {1: "counter", 3: "instant", 4: "discrete"}.get(sem, f"sem-{sem}"),
            "units": f"0x{m.dimension:08x}", "indom": indom}


def _entries(sources: Sequence[tuple[str, MmvFile, int]], item: int
             ) -> list[tuple[MmvFile, Metric]]:
    """Every metric entry of that item, file by file in load order (mmv_lookup_item)."""
    return [(mmv, m) for _, mmv, _ in sources for m in mmv.metrics if m.item == item]


def _texts(sources: Sequence[tuple[str, MmvFile, int]], item: int
           ) -> tuple[str | None, str | None]:
    for _mmv, m in _entries(sources, item):
        if m.type == TYPE_NOSUPPORT:
            return (None, None)
        return (served_text(m.shorttext), served_text(m.helptext))
    return (None, None)


def _values(sources: Sequence[tuple[str, MmvFile, int]], item: int, desc: dict[str, Any],
            indoms: dict[str, list[tuple[int, str]]], profile: str
            ) -> list[tuple[int | None, dict[str, Any]]] | str:
    instances: list[int | None] = [None] if desc["indom"] is None else \
        [i for i, _ in indoms.get(desc["indom"], [])]
    out: list[tuple[int | None, dict[str, Any]]] = []
    error = "no values"
    for inst in instances:
        for mmv, m in _entries(sources, item):
            v = _value_of(m, inst)
            if v is None:
                continue
            if m.type == TYPE_NOSUPPORT:
                error = "PM_ERR_APPVERSION"
                continue
            if mmv.flags & FLAG_SENTINEL and _sentinel(m, v, profile):
                break
            out.append((inst, _tagged(desc["type"], m, v)))
            break
    return out if out or not instances else (error if error != "no values" else [])


def _value_of(m: Metric, inst: int | None) -> Value | None:
    """mmv_lookup_item's match: a singular metric's (or any instance's, for PM_IN_NULL)
    first value, else the value of that instance."""
    for v in m.values:
        if is_singular(m.indom) or inst is None or v.instance == inst:
            return v
    return None


def _sentinel(m: Metric, v: Value, profile: str) -> bool:
    """SENTINEL "no value" (MMV-IMPL-SENTINEL-1, -NAN)."""
    if m.type in (0, 1, 2, 3, TYPE_ELAPSED):
        return v.atom == b"\xff" * 8
    if m.type in (TYPE_FLOAT, TYPE_DOUBLE):
        x = struct.unpack_from("<f" if m.type == TYPE_FLOAT else "<d", v.atom)[0]
        return x != x and profile != "pcp-6.0"
    return m.type == TYPE_STRING and not v.string


def _tagged(served: str, m: Metric, v: Value) -> dict[str, Any]:
    """The value as the descriptor's type reads the pmAtomValue the lookup found. Where a
    STRING and a numeric metric share a PMID (MMV-IMPL-DIR-CRASH), a STRING descriptor
    reads a number as a pointer and the PMDA crashes (``crash``), and a numeric descriptor
    reads the address of the PMDA's buffer (``unpredictable``)."""
    if (served == "string") != (m.type == TYPE_STRING):
        return {"crash": "SIGSEGV"} if served == "string" else {"unpredictable": "an address"}
    if m.type == TYPE_STRING:
        return {"type": "string", "value": served_text(v.string or "")}
    if m.type == TYPE_ELAPSED:
        value: dict[str, Any] = {"type": "64", "value": str(struct.unpack_from("<q", v.atom)[0])}
        if v.extra < 0:          # an open interval: the PMDA adds the time since -extra
            value["open_since_usec"] = str(-v.extra)
        return value
    if served in ("float", "double"):
        raw = v.atom[3::-1] if served == "float" else v.atom[::-1]
        return {"type": served, "value": "0x" + raw.hex()}
    code = {tok: t for t, tok in _TOKENS.items()}.get(served, 3)
    return {"type": served, "value": str(struct.unpack_from(_INT.get(code, "<Q"), v.atom)[0])}


def _label(fname: str, mmv: MmvFile, cluster: int, lb: Any) -> dict[str, Any]:
    kind = _LABEL_TYPES.get(lb.flags & ~LABEL_OPTIONAL, f"type-0x{lb.flags & ~LABEL_OPTIONAL:x}")
    ident: str | int = lb.identity
    if kind in ("indom", "instances"):
        ident = str(exported_indom(cluster, lb.identity))
    elif kind == "item":
        ident = str(exported_pmid(cluster, lb.identity))
    elif kind == "cluster":
        ident = cluster
    try:
        labels = json.loads(lb.payload)
    except ValueError:
        labels = None
    return {"file": fname, "type": kind, "ident": ident, "optional": bool(lb.flags & LABEL_OPTIONAL),
            "inst": None if lb.internal == -1 else lb.internal, "labels": labels}
