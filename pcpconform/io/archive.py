"""The Archive API: an archive's label, metadata and results, read as libpcp reads them.

Metadata (.meta) is loaded whole on first use, as libpcp does at open; results are
streamed volume by volume in volume order, one record in memory at a time.
"""

from __future__ import annotations

import bisect
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from pcpconform.errors import FormatError, Location, UsageError
from pcpconform.fastpath import PathStats
from pcpconform.format.pmtypes import PmID, PmInDom, PmUnits, TextType, Timestamp
from pcpconform.format.schema import (
    INDOM_TAGS,
    LABEL_TAGS,
    TYPE_DESC,
    TYPE_INDOM_DELTA,
    TYPE_TEXT,
)
from pcpconform.io.bulk import DecodedResult, decode_result
from pcpconform.io.files import ArchiveFiles, find_archive
from pcpconform.io.frames import framed_records
from pcpconform.io.index import index_entries
from pcpconform.io.meta import parse_meta
from pcpconform.io.reader import Component, RawRecord

__all__ = ["Archive", "Desc", "InDomRecord", "LabelRecord", "MetaRecord"]


@dataclass(frozen=True)
class Desc:
    """A metric descriptor (pmDesc) and the metric's names."""

    pmid: PmID
    type: int
    indom: PmInDom
    sem: int
    units: PmUnits
    names: tuple[str, ...]


@dataclass(frozen=True)
class InDomRecord:
    """An instance domain as in force from ``timestamp``: internal id -> external name."""

    timestamp: Timestamp
    indom: PmInDom
    instances: dict[int, str]
    delta: bool = False


@dataclass(frozen=True)
class LabelRecord:
    timestamp: Timestamp
    type: int
    ident: int
    sets: list[tuple[int, dict[str, Any] | str]]


@dataclass(frozen=True)
class MetaRecord:
    """A parsed .meta record with where it came from."""

    record: RawRecord
    type: int
    body: Any


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", errors="surrogateescape")


@dataclass
class _Metadata:
    descs: dict[int, Desc] = field(default_factory=dict)
    names: dict[str, int] = field(default_factory=dict)
    indoms: dict[int, list[InDomRecord]] = field(default_factory=dict)
    text: dict[tuple[int, int], str] = field(default_factory=dict)
    labels: list[LabelRecord] = field(default_factory=list)


class Archive:
    """A PCP archive opened by base name (or by the name of any of its files)."""

    def __init__(self, path: str | os.PathLike[str], *, stats: PathStats | None = None) -> None:
        """``stats`` counts what the fast paths reading this archive did (a new one if
        none is given)."""
        self.files: ArchiveFiles = find_archive(path)
        self.stats = PathStats() if stats is None else stats
        if self.files.meta is None:
            raise UsageError(f"{path}: archive has no .meta file")
        if not self.files.volumes:
            raise UsageError(f"{path}: archive has no data volume")
        with Component(self.files.meta) as meta:
            self.version: int = meta.version
            self.label = meta.label
        self._meta: _Metadata | None = None

    # -- label -------------------------------------------------------------------------
    @property
    def hostname(self) -> str:
        value: str = self.label.hostname
        return value

    @property
    def timezone(self) -> str:
        value: str = self.label.timezone
        return value

    @property
    def start(self) -> Timestamp:
        value: Timestamp = self.label.start
        return value

    # -- metadata ----------------------------------------------------------------------
    def meta_records(self) -> Iterator[MetaRecord]:
        """Every .meta record after the label, parsed, in file order."""
        assert self.files.meta is not None
        with Component(self.files.meta) as meta:
            for record in framed_records(meta, self.stats, "meta"):
                parsed = parse_meta(record, self.version, self.stats)
                yield MetaRecord(record, parsed.type, parsed.body)

    @property
    def metadata(self) -> _Metadata:
        if self._meta is None:
            self._meta = self._load_metadata()
        return self._meta

    def _load_metadata(self) -> _Metadata:
        md = _Metadata()
        for m in self.meta_records():
            body = m.body               # a construct Container: a dict, read by key (faster)
            if m.type == TYPE_DESC:
                desc = Desc(body["pmid"], body["type"], body["indom"], body["sem"], body["units"],
                            tuple(_text(n) for n in body["names"]))
                md.descs.setdefault(int(desc.pmid), desc)
                for name in desc.names:
                    md.names.setdefault(name, int(desc.pmid))  # first binding wins
            elif m.type in INDOM_TAGS:
                self._add_indom(md, m, body)
            elif m.type == TYPE_TEXT:
                md.text[(body["type"], body["ident"])] = _text(body["text"].split(b"\0", 1)[0])
            elif m.type in LABEL_TAGS:
                md.labels.append(LabelRecord(body.timestamp, body.type & 0x3F, body.ident,
                                             [(s.inst, _json_or_text(s.json)) for s in body.sets]))
            else:
                raise FormatError(f"unknown metadata record type {m.type}",
                                  m.record.location("meta.type"), "meta.type")
        return md

    def _add_indom(self, md: _Metadata, m: MetaRecord, body: Any) -> None:
        if body.numinst <= 0:
            return  # libpcp reads, then drops, empty instance-domain records
        delta = m.type == TYPE_INDOM_DELTA
        history = md.indoms.setdefault(int(body.indom), [])
        stamp = body.timestamp
        # records come in time order: the common place is the end (no list of times made
        # per record, which is quadratic in a domain's records)
        pos = len(history) if not history or not stamp < history[-1].timestamp else \
            bisect.bisect_right([r.timestamp for r in history], stamp)
        names = body.names
        if not delta and None not in names:
            # every name at once: a NUL ends any UTF-8 sequence, so the names decode as
            # they would one by one
            state = dict(zip(body.instlist, _text(b"\0".join(names)).split("\0")))
        else:
            state = dict(history[pos - 1].instances) if delta and pos else {}
            for inst, name in zip(body.instlist, names):
                if name is None:
                    if not delta:
                        raise FormatError("instance name offset -1 in a full instance domain",
                                          m.record.location("indom.offsets"), "indom.offset")
                    state.pop(inst, None)
                else:
                    state[inst] = _text(name)
        history.insert(pos, InDomRecord(stamp, body.indom, state, delta))

    def descs(self) -> list[Desc]:
        return list(self.metadata.descs.values())

    def desc(self, metric: str | int) -> Desc:
        """The descriptor of a metric by name or pmID (int or ``"60.0.4"``)."""
        md = self.metadata
        if isinstance(metric, str) and metric in md.names:
            return md.descs[md.names[metric]]
        try:
            pmid = int(PmID(metric))
        except (ValueError, TypeError):
            raise KeyError(f"unknown metric {metric!r}") from None
        if pmid not in md.descs:
            raise KeyError(f"unknown metric {metric!r}")
        return md.descs[pmid]

    def instances(self, indom: int | str, at: Timestamp | None = None) -> dict[int, str]:
        """The instance domain in force at time ``at`` (latest record with time <= at)."""
        history = self.metadata.indoms.get(int(PmInDom(indom)), [])
        if not history:
            return {}
        if at is None:
            return dict(history[-1].instances)
        pos = bisect.bisect_right([r.timestamp for r in history], at)
        return dict(history[pos - 1].instances) if pos else {}

    def indom_history(self, indom: int | str) -> list[InDomRecord]:
        return list(self.metadata.indoms.get(int(PmInDom(indom)), []))

    def help_text(self, ident: int | str, *, oneline: bool = True, indom: bool = False) -> str | None:
        kind = (TextType.ONELINE if oneline else TextType.HELP) | (
            TextType.INDOM if indom else TextType.PMID)
        key = int(PmInDom(ident)) if indom else int(PmID(ident))
        return self.metadata.text.get((kind, key))

    def labels(self) -> list[LabelRecord]:
        return list(self.metadata.labels)

    # -- results -----------------------------------------------------------------------
    def volume_records(self) -> Iterator[tuple[int, RawRecord]]:
        """Every data record of every volume, in volume order then file order."""
        for vol in sorted(self.files.volumes):
            path = self.files.volumes[vol]
            with Component(path) as comp:
                if comp.version != self.version:
                    raise FormatError(f"volume is version {comp.version}, .meta is {self.version}",
                                      Location(path.name, 0, 4, "label.magic"), "label.version")
                for record in framed_records(comp, self.stats):
                    yield vol, record

    def results(self) -> Iterator[DecodedResult]:
        """Every result (marks included) with typed values, across volumes in order."""
        types = {pmid: d.type for pmid, d in self.metadata.descs.items()}
        for _, record in self.volume_records():
            yield decode_result(record, self.version, types, self.stats)

    def results_from(self, vol: int, offset: int) -> Iterator[DecodedResult]:
        """The results from byte ``offset`` of volume ``vol`` on (an index entry's position),
        across later volumes. Earlier records are framed but not decoded, so record numbers
        and error locations stay those of a full pass."""
        types = {pmid: d.type for pmid, d in self.metadata.descs.items()}
        for v, record in self.volume_records():
            if v < vol or (v == vol and record.offset < offset):
                continue
            yield decode_result(record, self.version, types, self.stats)

    def index_entries(self) -> Iterator[Any]:
        if self.files.index is None:
            return
        with Component(self.files.index) as comp:
            for _, _, entry in index_entries(comp, self.stats):
                yield entry

    def metric_name(self, pmid: int) -> str:
        desc = self.metadata.descs.get(int(pmid))
        return desc.names[0] if desc and desc.names else str(PmID(pmid))


def _json_or_text(raw: bytes) -> dict[str, Any] | str:
    try:
        value = json.loads(raw)
        return value if isinstance(value, dict) else _text(raw)
    except ValueError:
        return _text(raw)

