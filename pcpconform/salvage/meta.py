"""The .meta file: every record that can be kept, repaired where the repair invents nothing.

Records are framed with resynchronisation (framing.py) and taken in file order. A record
libpcp reads as it is stays byte for byte; one with a defect is either repaired from its own
bytes (a descriptor's bad names or tail cut off, help text given its missing NUL, bad
instances taken out of an instance domain) or dropped, and a descriptor that is dropped
takes its metric's values with it: they are never given a type of salvage's choosing
(SALVAGE-META-1..7).
"""

from __future__ import annotations

import bisect
import struct
from dataclasses import dataclass, field
from typing import Any

from construct import Container, ListContainer

from pcpconform.format.pmtypes import PmID, PmInDom, Timestamp
from pcpconform.format.schema import (
    LABEL_SIZE,
    TYPE_DESC,
    TYPE_INDOM_DELTA,
    TYPE_TEXT,
    structs,
)
from pcpconform.salvage.framing import Frame, Gap, frames
from pcpconform.salvage.plausible import (
    INDOM_TYPES,
    LABEL_TYPES,
    TIMESTAMP_VERSION,
    desc_type_ok,
    labelset_ok,
    meta_clean,
    name_ok,
    text_type_ok,
    time_ok,
)
from pcpconform.salvage.report import Item, SalvageReport
from pcpconform.salvage.sources import Source

__all__ = ["KeptMeta", "MetaSalvage", "salvage_meta"]

_I32 = struct.Struct(">i")
_DESC_FIXED = 24          # tag, pmid, type, indom, sem, units: the payload's first bytes
_DESC_CONFLICT = ("type", "sem", "indom", "units")


@dataclass
class KeptMeta:
    """A .meta record of the output: its bytes, its timestamp (ns) if it has one, and the
    input offset it came from."""

    data: bytes
    stamp: int | None
    offset: int
    #: for a descriptor of a pmID with conflicting descriptors: (pmID, which variant)
    variant: tuple[int, int] | None = None


@dataclass
class MetaSalvage:
    records: list[KeptMeta] = field(default_factory=list)
    #: pmID -> the descriptor the output keeps (the first sound one, as libpcp keeps the first)
    descs: dict[int, Any] = field(default_factory=dict)
    #: pmID -> the rule code of the defect that lost its descriptor
    lost: dict[int, str] = field(default_factory=dict)
    #: every pmID any descriptor record named, sound or not, with its first name
    names: dict[int, str] = field(default_factory=dict)
    #: pmID -> its descriptors that differ (type, semantics, indom or units), in file order
    variants: dict[int, list[Any]] = field(default_factory=dict)

    @property
    def conflicts(self) -> dict[int, list[Any]]:
        return {pmid: v for pmid, v in self.variants.items() if len(v) > 1}

    def settle(self, chosen: dict[int, int], source: str, report: SalvageReport) -> None:
        """Keep the chosen variant of each conflicting pmID's descriptor (SALVAGE-META-3),
        drop the others' records, and report them."""
        kept = []
        for rec in self.records:
            if rec.variant is not None and rec.variant[1] != chosen.get(rec.variant[0], 0):
                pmid, k = rec.variant
                first = chosen.get(pmid, 0)
                differ = [f for f in _DESC_CONFLICT if self.variants[pmid][first][f] != self.variants[pmid][k][f]]
                why = "the first, which libpcp keeps" if first == 0 else "the one the values are stored as"
                report.add(Item("desc.conflict", "dropped", "SALVAGE-META-3", source,
                                f"its {', '.join(differ)} differ from the descriptor kept ({why})",
                                rec.offset, rec.offset + len(rec.data), metadata=1,
                                metric=self.names.get(pmid)))
                continue
            kept.append(rec)
        self.records = kept
        for pmid, k in chosen.items():
            self.descs[pmid] = self.variants[pmid][k]


class _MetaPass:
    def __init__(self, source: Source, version: int, report: SalvageReport) -> None:
        self.src = source
        self.version = version
        self.s = structs(version)
        self.report = report
        self.out = MetaSalvage()
        #: indom -> [(stamp ns, {inst: name})] of the records kept so far, in time order
        self.history: dict[int, list[tuple[int, dict[int, bytes]]]] = {}

    # -- reporting -----------------------------------------------------------------------
    def drop(self, frame: Frame | None, code: str, clause: str, detail: str, *, start: int | None = None,
             end: int | None = None, metric: str | None = None) -> None:
        if frame is not None:
            start, end = frame.offset, frame.offset + len(frame.data)
        self.report.add(Item(code, "dropped", clause, self.src.name, detail, start, end,
                             metadata=1 if frame is not None else 0, metric=metric))

    def repair(self, frame: Frame, code: str, clause: str, detail: str, metric: str | None = None) -> None:
        self.report.add(Item(code, "repaired", clause, self.src.name, detail, frame.offset,
                             frame.offset + len(frame.data), metric=metric))

    def keep(self, frame: Frame, tag: int, body: Any | None, stamp: Timestamp | None = None) -> None:
        """Keep a record: its own bytes when ``body`` is None, else ``body`` built anew."""
        data = frame.data if body is None else self.s.meta_record.build(Container(type=tag, body=body))
        self.out.records.append(KeptMeta(data, None if stamp is None else stamp.total_nsec(), frame.offset))

    # -- the pass ------------------------------------------------------------------------
    def run(self) -> MetaSalvage:
        version = self.version
        for got in frames(self.src, LABEL_SIZE[version], min_len=8, aligned=False, stray_below=8,
                          decode=self.decode, proven=lambda p: meta_clean(p.type, p.body, version),
                          undecodable="meta.decode"):
            if isinstance(got, Gap):
                self.drop(None, got.code, "SALVAGE-FRAME-2" if got.end < self.src.size else "SALVAGE-FRAME-1",
                          _gap_detail(got, self.src.size), start=got.start, end=got.end)
                continue
            if got.repaired is not None:
                self.repair(got, got.repaired[0], "SALVAGE-FRAME-5", got.repaired[1])
            if got.decoded is None:
                self.undecoded(got)
            else:
                self.record(got, got.decoded.type, got.decoded.body)
        return self.out

    def decode(self, data: bytes) -> Any:
        try:
            return self.s.meta.parse(data[4:-4])
        except Exception:  # construct raises several kinds; all mean "does not decode"
            return None

    def undecoded(self, frame: Frame) -> None:
        payload = frame.data[4:-4]
        tag = _I32.unpack_from(payload)[0] if len(payload) >= 4 else None
        if tag == TYPE_DESC and len(payload) >= _DESC_FIXED:
            body = self.lenient_desc(payload)
            if body is not None:
                code = "desc.no-numnames" if len(frame.data) == 32 else "desc.length"
                self.desc(frame, body, repaired=(code, "the descriptor is kept with the names that fit "
                                                       f"in its record ({len(body.names)})"))
                return
        code = ("indom.length" if tag in INDOM_TYPES else "labelset.length" if tag in LABEL_TYPES
                else "desc.length" if tag == TYPE_DESC else "meta.decode")
        self.drop(frame, code, "SALVAGE-FRAME-3", f"a record of type {tag} does not decode")

    def lenient_desc(self, payload: bytes) -> Any | None:
        """A descriptor's fixed fields and the names that lie wholly inside its record."""
        names: list[bytes] = []
        if len(payload) >= _DESC_FIXED + 4:
            count = _I32.unpack_from(payload, _DESC_FIXED)[0]
            pos = _DESC_FIXED + 4
            for _ in range(max(count, 0)):
                if pos + 4 > len(payload):
                    break
                n = _I32.unpack_from(payload, pos)[0]
                if n < 0 or pos + 4 + n > len(payload):
                    break
                names.append(payload[pos + 4:pos + 4 + n])
                pos += 4 + n
        fixed = payload[4:_DESC_FIXED] + _I32.pack(len(names)) + b"".join(_I32.pack(len(n)) + n for n in names)
        try:
            return self.s.desc.parse(fixed)
        except Exception:
            return None

    def record(self, frame: Frame, tag: int, body: Any) -> None:
        if tag not in range(1, 8):
            self.drop(frame, "meta.tag", "SALVAGE-META-1", f"record type {tag} is not 1..7")
        elif tag == TYPE_DESC:
            self.desc(frame, body)
        elif tag == TYPE_TEXT:
            self.text(frame, body)
        elif not time_ok(body.timestamp, TIMESTAMP_VERSION[tag]):
            self.drop(frame, "time.fraction", "SALVAGE-META-6", f"its timestamp {body.timestamp} is not a time")
        elif tag in INDOM_TYPES:
            self.indom(frame, tag, body)
        else:
            self.labelset(frame, tag, body)

    # -- descriptors ---------------------------------------------------------------------
    def desc(self, frame: Frame, body: Any, repaired: tuple[str, str] | None = None) -> None:
        pmid = int(body.pmid)
        good_names = [n for n in body.names if name_ok(bytes(n))]
        metric = _metric(pmid, good_names)
        self.out.names.setdefault(pmid, metric)
        if not desc_type_ok(body.type):
            if pmid not in self.out.descs:
                self.out.lost.setdefault(pmid, "desc.type")
            self.drop(frame, "desc.type", "SALVAGE-META-2", f"type {body.type} is not a PCP type: its "
                      "values cannot be read as anything", metric=metric)
            return
        variants = self.out.variants.setdefault(pmid, [])
        variant = next((k for k, v in enumerate(variants) if all(v[f] == body[f] for f in _DESC_CONFLICT)), None)
        if variant is None:
            variant = len(variants)
            variants.append(body)
        if repaired is not None:
            self.repair(frame, repaired[0], "SALVAGE-META-2", repaired[1], metric)
        changed = repaired is not None
        if len(good_names) != len(body.names):
            self.repair(frame, "desc.name", "SALVAGE-META-2", f"{len(body.names) - len(good_names)} empty or "
                        "over-long names taken out", metric)
            changed = True
        if body.tail:
            self.repair(frame, "meta.tail", "SALVAGE-META-2", f"{len(body.tail)} bytes after the names "
                        "taken out", metric)
            changed = True
        if changed:
            body = Container(body)
            body.names = ListContainer(bytes(n) for n in good_names)
            body.tail = b""
        if variant == 0:
            self.out.descs.setdefault(pmid, body)
        self.out.lost.pop(pmid, None)
        self.keep(frame, TYPE_DESC, body if changed else None)
        self.out.records[-1].variant = (pmid, variant)

    # -- help text -----------------------------------------------------------------------
    def text(self, frame: Frame, body: Any) -> None:
        if not text_type_ok(body.type):
            self.drop(frame, "text.type", "SALVAGE-META-5", f"text type 0x{body.type:x} is not a kind of help text")
            return
        if body.text.endswith(b"\0"):
            self.keep(frame, TYPE_TEXT, None)
            return
        self.repair(frame, "text.nul", "SALVAGE-META-5", "the text is kept with the NUL it lacked")
        self.keep(frame, TYPE_TEXT, Container(type=body.type, ident=body.ident, text=bytes(body.text) + b"\0"))

    # -- instance domains ----------------------------------------------------------------
    def indom(self, frame: Frame, tag: int, body: Any) -> None:
        if body.numinst < 0:
            self.drop(frame, "indom.length", "SALVAGE-META-4", f"numinst {body.numinst}: libpcp 7.2 refuses to "
                      "open an archive holding it")
            return
        delta = tag == TYPE_INDOM_DELTA
        indom = int(body.indom)
        stamp = body.timestamp.total_nsec()
        entries: list[tuple[int, bytes | None]] = []
        bad: dict[str, int] = {}
        for inst, off, name in zip(body.instlist, body.offsets, body.names):
            code = None
            if inst < 0:
                code = "indom.inst-negative"
            elif off == -1:
                code = None if delta else "indom.deleted-in-full"
            elif off < 0 or off >= len(body.strtab) or b"\0" not in body.strtab[off:]:
                code = "indom.offset"
            if code is not None:
                bad[code] = bad.get(code, 0) + 1
                continue
            entries.append((inst, None if off == -1 else bytes(name)))
        history = self.history.setdefault(indom, [])
        pos = bisect.bisect_right([h[0] for h in history], stamp)
        if delta:
            before = history[pos - 1][1] if pos else None
            if before is None:
                self.drop(frame, "indom.delta-no-full", "SALVAGE-META-4", f"a delta of {PmInDom(indom)} with no "
                          "earlier full instance domain to apply it to")
                return
            state = dict(before)
            kept_entries = []
            for inst, name in entries:
                if (name is None) == (inst in state):
                    kept_entries.append((inst, name))
                    if name is None:
                        state.pop(inst)
                    else:
                        state[inst] = name
                else:
                    bad["indom.delta-change"] = bad.get("indom.delta-change", 0) + 1
            entries = kept_entries
        else:
            state = {inst: name for inst, name in entries if name is not None}
        if body.numinst > 0 and not entries:
            self.drop(frame, next(iter(bad), "indom.empty"), "SALVAGE-META-4",
                      f"no instance of {PmInDom(indom)} in the record is sound")
            return
        history.insert(pos, (stamp, state))
        if not bad:
            self.keep(frame, tag, None, body.timestamp)
            return
        for code, count in bad.items():
            self.repair(frame, code, "SALVAGE-META-4", f"{count} instance entr{'y' if count == 1 else 'ies'} of "
                        f"{PmInDom(indom)} taken out")
        self.keep(frame, tag, _indom_body(body, entries), body.timestamp)

    # -- label sets ----------------------------------------------------------------------
    def labelset(self, frame: Frame, tag: int, body: Any) -> None:
        if not labelset_ok(body) or body.nsets < 0:
            self.drop(frame, "labelset.json", "SALVAGE-META-5", "a label set's JSON is not an object, or a "
                      "label lies outside it")
            return
        if body.tail:
            self.repair(frame, "labelset.length", "SALVAGE-META-5", f"{len(body.tail)} bytes after the label "
                        "sets taken out")
            body = Container(body)
            body.tail = b""
            self.keep(frame, tag, body, body.timestamp)
            return
        self.keep(frame, tag, None, body.timestamp)


def _indom_body(body: Any, entries: list[tuple[int, bytes | None]]) -> Container:
    """An instance-domain body holding just ``entries`` (names as stored, byte for byte)."""
    offsets, table = [], bytearray()
    for _, name in entries:
        if name is None:
            offsets.append(-1)
        else:
            offsets.append(len(table))
            table += name + b"\0"
    return Container(timestamp=body.timestamp, indom=body.indom, numinst=len(entries),
                     instlist=ListContainer(i for i, _ in entries), offsets=ListContainer(offsets),
                     strtab=bytes(table))


def _metric(pmid: int, names: list[Any]) -> str:
    return f"{PmID(pmid)} ({bytes(names[0]).decode('utf-8', 'replace')})" if names else str(PmID(pmid))


def _gap_detail(gap: Gap, size: int) -> str:
    if gap.code == "frame.stray-bytes":
        return gap.detail
    if gap.end >= size:
        return f"{gap.detail}; no whole record can be proven after it: the rest of the file is lost"
    return f"{gap.detail}; {gap.end - gap.start} bytes skipped to the next record proven by its own framing"


def salvage_meta(source: Source, version: int, report: SalvageReport) -> MetaSalvage:
    """Salvage a .meta file whose records are of archive version ``version``."""
    return _MetaPass(source, version, report).run()
