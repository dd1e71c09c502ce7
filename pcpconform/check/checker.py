"""The validator: every rule of rules.py applied to one archive, continuing past defects.

One pass per file, one record in memory at a time. Framing damage ends the pass over that
file (no resynchronisation is trustworthy), but other files are still checked; a record
that frames correctly but does not decode is reported and the pass goes on to the next.
Results go through the bulk decoder; a result it finds canonical (writer layout) is known
to satisfy the per-value storage rules, so only instances, times and counters are checked
for it, while any other result is walked field by field.
"""

from __future__ import annotations

import bisect
import itertools
import json
import operator
import os
import re
import struct
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pcpconform.check.diagnostics import DiagnosticLimit, Report
from pcpconform.check.rules import RULES
from pcpconform.errors import FormatError
from pcpconform.format.pmtypes import PM_IN_NULL, PM_INDOM_NULL, PmID, PmInDom, PmType, Timestamp
from pcpconform.format.schema import (
    INDEX_ENTRY_SIZE,
    LABEL_SIZE,
    META_TYPES,
    PM_LOG_VOL_META,
    PM_LOG_VOL_TI,
    TYPE_DESC,
    TYPE_INDOM,
    TYPE_INDOM_DELTA,
    TYPE_INDOM_V2,
    TYPE_LABEL,
    TYPE_LABEL_V2,
    TYPE_TEXT,
    block_offset,
    event_array,
    structs,
)
from pcpconform.format.values import BLOCK_PAYLOAD_SIZE
from pcpconform.io.bulk import decode_result
from pcpconform.io.files import strip_compression
from pcpconform.io.reader import Component, RawRecord, parse_payload
from pcpconform.io.writer import valfmt_for

__all__ = ["check_archive", "DEFAULT_DECOMPRESS_LIMIT"]

#: A compressed component may expand to at most this many bytes (compression bombs).
DEFAULT_DECOMPRESS_LIMIT = 8 << 30

_NAME_RE = re.compile(rb"[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z][A-Za-z0-9_]*)*")
_LABEL_NAME_RE = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,253}")
_PLAUSIBLE_ERR = range(-12345 - 8999, 0)


@dataclass
class _Volume:
    path: Path
    offsets: list[int] = field(default_factory=list)        # record start offsets
    stamps: list[int] = field(default_factory=list)         # their timestamps (ns)
    size: int = 0
    end: int = 0                                            # end of the last whole record


@dataclass
class _State:
    version: int = 0
    start: Timestamp | None = None
    descs: dict[int, Any] = field(default_factory=dict)
    names: dict[bytes, int] = field(default_factory=dict)
    indoms: dict[int, list[tuple[int, frozenset[int], dict[int, bytes]]]] = field(default_factory=dict)
    meta_offsets: list[int] = field(default_factory=list)
    meta_stamps: list[int] = field(default_factory=list)
    meta_size: int | None = None                  # None: .meta missing or unreadable
    meta_records: list[int] = field(default_factory=list)   # every record's offset
    text_idents: list[tuple[int, int, RawRecord]] = field(default_factory=list)
    volumes: dict[int, _Volume] = field(default_factory=dict)
    last_result: int | None = None
    valfmts: dict[int, int] = field(default_factory=dict)
    counters: dict[int, tuple[tuple[int, ...], tuple[Any, ...]]] = field(default_factory=dict)
    first_data_bytes: int = 0


def check_archive(path: str | os.PathLike[str], *, max_diagnostics: int | None = None,
                  decompress_limit: int = DEFAULT_DECOMPRESS_LIMIT) -> Report:
    """Check one archive (base name or any of its files); never raises for bad input."""
    base = Path(path)
    report = Report(str(base), max_diagnostics=max_diagnostics)
    started = time.perf_counter()
    try:
        _Checker(base, report, decompress_limit).run()
    except DiagnosticLimit:
        pass
    except Exception as exc:  # a bug of ours must not look like a clean archive
        report.diagnostics.append(_internal(base, exc))
    report.seconds = time.perf_counter() - started
    return report


def _internal(base: Path, exc: BaseException):  # type: ignore[no-untyped-def]
    from pcpconform.check.diagnostics import Diagnostic
    from pcpconform.check.rules import RULES, Severity
    return Diagnostic("check.internal", Severity.ERROR, base.name, None, None, None,
                      f"the check stopped on an internal error: {type(exc).__name__}: {exc}",
                      RULES["check.internal"].clause)


class _Checker:
    def __init__(self, base: Path, report: Report, decompress_limit: int) -> None:
        self.base = base
        self.r = report
        self.limit = decompress_limit
        self.st = _State()
        self._dinfo: dict[int, tuple[int, int, int | None]] = {}
        self._indexed: list[tuple[int, int]] = []
        self._meta_start_set: set[int] | None = None
        self._running_max: dict[int, list[int]] = {}
        self._members_cache: dict[int, tuple[int, int, frozenset[int]]] = {}
        self._insts_ok: dict[int, tuple[tuple[int, ...], frozenset[int] | None]] = {}

    def add(self, code: str, file: str, message: str, **where: Any) -> None:
        self.r.add(code, file, message, **where)

    # -- files -------------------------------------------------------------------------
    def run(self) -> None:
        files = self._discover()
        if files is None:
            return
        meta, index, volumes = files
        labels: dict[str, Any] = {}
        if meta is not None:
            self._check_meta(meta, labels)
        for vol in sorted(volumes):
            self._check_volume(vol, volumes[vol], labels, first=vol == min(volumes))
        if index is not None:
            self._check_index(index, labels)
        self._cross_checks(labels)

    def _discover(self) -> tuple[Path | None, Path | None, dict[int, Path]] | None:
        from pcpconform.io.files import base_name_of
        base = base_name_of(self.base)
        self.base = base
        self.r.archive = str(base)
        directory = base.parent if str(base.parent) else Path(".")
        name = base.name
        try:
            entries = sorted(os.listdir(directory))
        except OSError as exc:
            self.add("file.no-archive", name, f"cannot list {directory}: {exc.strerror}")
            return None
        found: dict[str, list[Path]] = {}
        for entry in entries:
            if not entry.startswith(name + "."):
                continue
            plain, _ = strip_compression(entry[len(name) + 1:])
            if plain in ("meta", "index") or plain.isdigit():
                if plain.isdigit() and plain != str(int(plain)):
                    self.add("file.name", entry, f"volume number {plain!r} is not canonical "
                             f"decimal; libpcp opens {name}.{int(plain)} instead")
                    continue
                found.setdefault(plain, []).append(directory / entry)
        if not found:
            self.add("file.no-archive", name, f"no {name}.meta, {name}.index or {name}.N here")
            return None
        for part, paths in found.items():
            if len(paths) > 1:
                code = "file.duplicate-volume" if part.isdigit() else "file.duplicate"
                self.add(code, paths[0].name, "several copies: " + ", ".join(p.name for p in paths))
        pick = {part: sorted(paths, key=lambda p: (bool(strip_compression(p.name)[1]), p.name))[0]
                for part, paths in found.items()}
        meta, index = pick.get("meta"), pick.get("index")
        volumes = {int(p): path for p, path in pick.items() if p.isdigit()}
        if meta is None:
            self.add("file.missing-meta", f"{name}.meta", "the archive has no .meta file")
        if not volumes:
            self.add("file.missing-volume", f"{name}.0", "the archive has no data volume")
        if index is None:
            self.add("file.missing-index", f"{name}.index", "no temporal index (allowed, but readers cannot seek)")
        return meta, index, volumes

    def _reader_error(self, exc: FormatError) -> None:
        loc = exc.location
        # the reader raises rule codes; anything else (a label that does not decode) is a read failure
        code = exc.code if exc.code in RULES else "file.read"
        self.add(code, loc.file, exc.message, record=loc.record, offset=loc.offset, field=loc.field)

    def _label(self, comp: Component, expected_vol: int, labels: dict[str, Any]) -> None:
        lab, name = comp.label, comp.name
        labels[name] = (comp.version, lab)
        if self.st.version == 0:
            self.st.version = comp.version
            self.st.start = lab.start
        if lab.vol != expected_vol:
            self.add("label.vol", name, f"label says volume {lab.vol}, the file is {expected_vol}",
                     record=0, offset=20 if comp.version == 2 else 24, field="label.vol")
        self._time(lab.start, name, 0, 12, "label.start", comp.version)
        if comp.version == 3:
            if lab.features & ~0x80000000:
                self.add("label.features", name, f"unknown feature bits 0x{lab.features & ~0x80000000:08x}",
                         record=0, offset=28, field="label.features")
            if lab.reserved:
                self.add("label.reserved", name, f"reserved word is 0x{lab.reserved:08x}, not 0",
                         record=0, offset=32, field="label.reserved")
        for fld in ("hostname", "timezone") + (("zoneinfo",) if comp.version == 3 else ()):
            if b"\0" not in lab[f"{fld}_raw"]:
                self.add("label.unterminated", name, f"{fld} fills its field with no NUL",
                         record=0, field=f"label.{fld}")
        first = next(iter(labels.values()))
        fv, fl = first
        if (comp.version, lab.pid, lab.hostname) != (fv, fl.pid, fl.hostname):
            self.add("label.mismatch", name, f"version/pid/hostname {comp.version}/{lab.pid}/{lab.hostname!r} "
                     f"differ from {fv}/{fl.pid}/{fl.hostname!r} of the first file", record=0, field="label")
        else:
            if lab.start != fl.start:
                self.add("label.start-mismatch", name, f"start {lab.start} differs from {fl.start}",
                         record=0, field="label.start")
            if lab.timezone != fl.timezone or getattr(lab, "zoneinfo", "") != getattr(fl, "zoneinfo", ""):
                self.add("label.timezone-mismatch", name, "timezone/zoneinfo differ from the first file",
                         record=0, field="label.timezone")

    def _time(self, ts: Timestamp, file: str, record: int | None, offset: int | None, fld: str,
              version: int | None = None) -> None:
        version = version or self.st.version
        bad = ts.nsec < 0 or (ts.nsec >= 1_000_000_000) or (version == 2 and ts.nsec % 1000)
        if bad or (version == 2 and ts.usec >= 1_000_000):
            self.add("time.fraction", file, f"fraction of a second out of range in {ts}",
                     record=record, offset=offset, field=fld)

    @contextmanager
    def _component(self, path: Path, vol: int, labels: dict[str, Any]) -> Iterator[Component | None]:
        """An opened component with its label checked, or None (reported) if it cannot open."""
        comp = Component(path, max_bytes=self.limit)
        try:
            comp.__enter__()
        except FormatError as exc:
            self._reader_error(exc)
            comp.__exit__()
            yield None
            return
        try:
            self._label(comp, vol, labels)
            yield comp
        finally:
            comp.__exit__()

    # -- .meta ---------------------------------------------------------------------------
    def _check_meta(self, path: Path, labels: dict[str, Any]) -> None:
        with self._component(path, PM_LOG_VOL_META, labels) as comp:
            if comp is None:
                return
            s = structs(comp.version)
            count = 0
            end = LABEL_SIZE[comp.version]
            last_stamp: Timestamp | None = None
            try:
                for rec in comp.records("meta"):
                    count += 1
                    end = rec.offset + len(rec.data)
                    self.st.meta_records.append(rec.offset)
                    try:
                        parsed = parse_payload(s.meta, rec, "meta")
                    except FormatError as exc:
                        self.add(self._decode_code(rec), rec.file, exc.message, record=rec.index,
                                 offset=exc.location.offset, field=exc.location.field)
                        continue
                    stamp = self._meta_record(rec, parsed.type, parsed.body, comp.version)
                    if stamp is not None:
                        if last_stamp is not None and stamp < last_stamp:
                            self.add("meta.time-order", rec.file, f"timestamp {stamp} is before {last_stamp}",
                                     record=rec.index, offset=rec.offset + 8, field="timestamp")
                        if self.st.start is not None and stamp < self.st.start:
                            self.add("meta.time-range", rec.file, f"timestamp {stamp} is before the "
                                     f"archive start {self.st.start}", record=rec.index,
                                     offset=rec.offset + 8, field="timestamp")
                        last_stamp = stamp if last_stamp is None else max(stamp, last_stamp)
                        self.st.meta_offsets.append(rec.offset)
                        self.st.meta_stamps.append(stamp.total_nsec())
            except FormatError as exc:
                self._reader_error(exc)
            if comp.trailing:
                self.add("frame.stray-bytes", comp.name, f"{len(b''.join(comp.trailing))} bytes after "
                         "the last record", offset=end)
            if count == 0 and not comp.trailing:
                self.add("file.empty", comp.name, ".meta holds only its label (libpcp: empty archive)")
            if not self.st.descs:
                self.add("meta.no-desc", comp.name, ".meta holds no metric descriptor")
            # offsets up to the end of the last whole record are what an index may name
            self.st.meta_size = end
            if comp.version == 2 and self.st.meta_size > 0x7FFFFFFF:
                self.add("file.too-large", comp.name, f"{self.st.meta_size} bytes; v2 offsets are 32-bit")

    @staticmethod
    def _decode_code(rec: RawRecord) -> str:
        """The rule a .meta record breaks when it does not decode, by its tag."""
        tag = struct.unpack_from(">i", rec.data, 4)[0] if len(rec.data) >= 12 else 0
        if tag == TYPE_DESC:
            return "desc.no-numnames" if len(rec.data) == 32 else "desc.length"
        if tag in (TYPE_INDOM_V2, TYPE_INDOM, TYPE_INDOM_DELTA):
            return "indom.length"
        if tag in (TYPE_LABEL_V2, TYPE_LABEL):
            return "labelset.length"
        return "meta.decode"

    def _meta_record(self, rec: RawRecord, tag: int, body: Any, version: int) -> Timestamp | None:
        f, i = rec.file, rec.index
        if tag not in range(1, 8):
            self.add("meta.tag", f, f"record type {tag} is not 1..7 (libpcp: PM_ERR_RECTYPE)",
                     record=i, offset=rec.offset + 4, field="meta.type")
            return None
        if tag not in META_TYPES[version]:
            self.add("meta.tag-version", f, f"record type {tag} does not belong in a version "
                     f"{version} archive", record=i, offset=rec.offset + 4, field="meta.type")
        if tag == TYPE_DESC:
            self._desc(rec, body)
            return None
        if tag in (TYPE_INDOM_V2, TYPE_INDOM, TYPE_INDOM_DELTA):
            self._time(body.timestamp, f, i, rec.offset + 8, "indom.timestamp", 2 if tag == TYPE_INDOM_V2 else 3)
            self._indom(rec, tag, body)
            return body.timestamp
        if tag == TYPE_TEXT:
            self._text(rec, body)
            return None
        self._time(body.timestamp, f, i, rec.offset + 8, "labelset.timestamp", 2 if tag == TYPE_LABEL_V2 else 3)
        self._labelset(rec, body)
        return body.timestamp

    def _desc(self, rec: RawRecord, d: Any) -> None:
        f, i = rec.file, rec.index
        where = {"record": i, "offset": rec.offset}
        if d.tail:
            self.add("meta.tail", f, f"{len(d.tail)} bytes after the descriptor's names", field="desc.tail", **where)
        if d.type not in range(-1, 11):
            self.add("desc.type", f, f"type {d.type} is not a PCP type", field="desc.type", **where)
        if d.sem not in (1, 3, 4):
            self.add("desc.sem", f, f"semantics {d.sem} is not 1, 3 or 4", field="desc.sem", **where)
        if not d.names:
            self.add("desc.no-name", f, f"pmID {d.pmid} has no name", field="desc.names", **where)
        for name in d.names:
            if not name or len(name) >= 4096:
                self.add("desc.name", f, f"name of {len(name)} bytes", field="desc.names", **where)
            elif not _NAME_RE.fullmatch(name):
                self.add("desc.name-syntax", f, f"name {name[:60]!r} is not a PMNS path", field="desc.names", **where)
            owner = self.st.names.setdefault(bytes(name), int(d.pmid))
            if owner != int(d.pmid):
                self.add("desc.name-reused", f, f"name {name.decode('latin-1')} already names "
                         f"{PmID(owner)}; {d.pmid} loses it", field="desc.names", **where)
        u = d.units
        for dim, scale, label, top in ((u.dimSpace, u.scaleSpace, "Space", 8), (u.dimTime, u.scaleTime, "Time", 5),
                                       (u.dimCount, u.scaleCount, "Count", None)):
            if not -2 <= dim <= 2:
                self.add("units.dim", f, f"dim{label} {dim} is outside -2..2", field=f"desc.units.dim{label}", **where)
            if dim == 0 and scale != 0:
                self.add("units.scale-without-dim", f, f"scale{label} {scale} with dim{label} 0",
                         field=f"desc.units.scale{label}", **where)
            elif top is not None and scale > top:
                self.add("units.scale", f, f"scale{label} {scale} is above {top}", field=f"desc.units.scale{label}", **where)
        if (u.extraUnit, u.extraScale) != (0, 0):
            ok = {1: 3, 2: 3, 3: 3, 4: 4}.get(abs(u.extraUnit))
            if ok is None or not 1 <= u.extraScale <= ok:
                self.add("units.extra", f, f"extraUnit {u.extraUnit} / extraScale {u.extraScale} is not a "
                         "defined unit", field="desc.units.extra", **where)
        if not d.indom.is_null and d.indom.domain != PmID(d.pmid).domain and not (
                PmID(d.pmid).domain == 511 and PmID(d.pmid).cluster & 2048):
            self.add("desc.indom-domain", f, f"indom {d.indom} is not of pmID {d.pmid}'s domain",
                     field="desc.indom", **where)
        old = self.st.descs.get(int(d.pmid))
        if old is None:
            self.st.descs[int(d.pmid)] = d
        else:
            for fld in ("type", "sem", "indom", "units"):
                if old[fld] != d[fld]:
                    self.add("desc.conflict", f, f"pmID {d.pmid}: {fld} {d[fld]} differs from the earlier "
                             f"descriptor's {old[fld]} (libpcp: PM_ERR_LOGCHANGE{fld.upper()})",
                             field=f"desc.{fld}", **where)

    def _indom(self, rec: RawRecord, tag: int, b: Any) -> None:
        f, i = rec.file, rec.index
        where = {"record": i, "offset": rec.offset}
        delta = tag == TYPE_INDOM_DELTA
        if b.numinst <= 0:
            self.add("indom.empty", f, f"instance domain {b.indom} with {b.numinst} instances", field="indom.numinst", **where)
            return
        names: dict[int, bytes] = {}
        seen_names: set[bytes] = set()
        for k, (inst, off, name) in enumerate(zip(b.instlist, b.offsets, b.names)):
            fld = f"indom.instlist[{k}]"
            if inst < 0:
                self.add("indom.inst-negative", f, f"instance id {inst}", field=fld, **where)
            if off == -1:
                if not delta:
                    self.add("indom.deleted-in-full", f, "name offset -1 in a full instance domain",
                             field=f"indom.offsets[{k}]", **where)
                continue
            if off < 0 or off >= len(b.strtab) or b"\0" not in b.strtab[off:]:
                self.add("indom.offset", f, f"name offset {off} with a string table of {len(b.strtab)} bytes",
                         field=f"indom.offsets[{k}]", **where)
                continue
            if inst in names:
                self.add("indom.duplicate-id", f, f"instance id {inst} twice", field=fld, **where)
            if name in seen_names:
                self.add("indom.duplicate-name", f, f"instance name {name[:40]!r} twice", field=fld, **where)
            if not name:
                self.add("indom.empty-name", f, f"instance {inst} has an empty name", field=fld, **where)
            names[inst] = name or b""
            seen_names.add(name or b"")
        if tag != TYPE_INDOM_V2 and list(b.instlist) != sorted(b.instlist):
            self.add("indom.unsorted", f, "instance ids are not in ascending order", field="indom.instlist", **where)
        history = self.st.indoms.setdefault(int(b.indom), [])
        stamp = b.timestamp.total_nsec()
        pos = bisect.bisect_right([h[0] for h in history], stamp)
        if delta:
            if not history or pos == 0:
                self.add("indom.delta-no-full", f, f"delta for {b.indom} with no earlier full instance domain",
                         field="indom", **where)
                state: dict[int, bytes] = {}
            else:
                state = dict(history[pos - 1][2])
            for inst, name in zip(b.instlist, b.names):
                if name is None:
                    if inst not in state:
                        self.add("indom.delta-change", f, f"delta deletes absent instance {inst}", field="indom", **where)
                    state.pop(inst, None)
                else:
                    if inst in state:
                        self.add("indom.delta-change", f, f"delta re-adds present instance {inst}", field="indom", **where)
                    state[inst] = name
            names = state
        history.insert(pos, (stamp, frozenset(names), names))

    def _text(self, rec: RawRecord, t: Any) -> None:
        f, where = rec.file, {"record": rec.index, "offset": rec.offset}
        kind = t.type
        if bool(kind & 1) == bool(kind & 2) or bool(kind & 4) == bool(kind & 8) or kind & ~0xF:
            self.add("text.type", f, f"text type 0x{kind:x} needs exactly one of ONELINE/HELP and one "
                     "of PMID/INDOM", field="text.type", **where)
        if not t.text.endswith(b"\0"):
            self.add("text.nul", f, "text is not NUL-terminated", field="text.text", **where)
        self.st.text_idents.append((kind, t.ident, rec))

    def _labelset(self, rec: RawRecord, b: Any) -> None:
        f, where = rec.file, {"record": rec.index, "offset": rec.offset}
        ltype = b.type & ~0xC0
        if ltype not in (1, 2, 4, 8, 16, 32):
            self.add("labelset.type", f, f"label type {b.type}", field="labelset.type", **where)
        if ltype == 1 and b.ident != 0xFFFFFFFF:
            self.add("labelset.ident", f, f"context labels name ident 0x{b.ident:08x}, not PM_IN_NULL",
                     field="labelset.ident", **where)
        if b.tail:
            self.add("labelset.length", f, f"{len(b.tail)} bytes after the label sets", field="labelset.tail", **where)
        if b.nsets < 0 or (ltype != 32 and b.nsets != 1):
            self.add("labelset.nsets", f, f"{b.nsets} label sets for label type {b.type}", field="labelset.nsets", **where)
        for k, s in enumerate(b.sets):
            fld = f"labelset.sets[{k}]"
            if not 0 <= s.jsonlen <= 65535:
                self.add("labelset.json", f, f"jsonlen {s.jsonlen}", field=fld + ".jsonlen", **where)
                continue
            try:
                obj = json.loads(s.json) if s.json else {}
                if not isinstance(obj, dict):
                    raise ValueError
            except ValueError:
                self.add("labelset.json", f, f"JSON {s.json[:40]!r} is not an object", field=fld + ".json", **where)
                obj = None
            if s.nlabels > 255:
                self.add("labelset.nlabels", f, f"{s.nlabels} labels (at most 255)", field=fld + ".nlabels", **where)
            names = []
            for lab in s.labels:
                if lab.name + lab.namelen > len(s.json) or lab.value + lab.valuelen > len(s.json):
                    self.add("labelset.span", f, "a label span lies outside the JSON", field=fld + ".labels", **where)
                    break
                name = s.json[lab.name:lab.name + lab.namelen].decode("utf-8", "replace")
                names.append(name)
                if obj is not None and name not in obj:
                    self.add("labelset.span", f, f"label name {name!r} is not a member of the JSON",
                             field=fld + ".labels", **where)
                    break
            if obj is not None and s.nlabels >= 0 and len(names) == len(s.labels) and len(obj) != s.nlabels:
                self.add("labelset.nlabels", f, f"{s.nlabels} labels for a JSON object of {len(obj)} members",
                         field=fld + ".nlabels", **where)
            if names and (names != sorted(names) or len(set(names)) != len(names)
                          or not all(_LABEL_NAME_RE.fullmatch(n) or "." in n for n in names)):
                self.add("labelset.name", f, "label names are not legal, unique and sorted", field=fld + ".labels", **where)

    # -- data volumes --------------------------------------------------------------------
    def _check_volume(self, vol: int, path: Path, labels: dict[str, Any], first: bool) -> None:
        with self._component(path, vol, labels) as comp:
            if comp is None:
                return
            info = self.st.volumes[vol] = _Volume(path)
            version = comp.version
            types = {pmid: d.type for pmid, d in self.st.descs.items()}
            count = 0
            end = LABEL_SIZE[version]
            try:
                for rec in comp.records():
                    count += 1
                    end = rec.offset + len(rec.data)
                    info.offsets.append(rec.offset)
                    self._result(rec, version, types, info)
            except FormatError as exc:
                self._reader_error(exc)
            if comp.trailing:
                self.add("frame.stray-bytes", comp.name, f"{len(b''.join(comp.trailing))} bytes after "
                         "the last record", offset=end)
            info.end = end
            info.size = end + len(b"".join(comp.trailing))
            if version == 2 and info.size > 0x7FFFFFFF:
                self.add("file.too-large", comp.name, f"{info.size} bytes; v2 offsets are 32-bit")
            self.r.bytes_checked += info.size
            if count == 0:
                code = "file.empty" if first else "file.empty-volume"
                self.add(code, comp.name, "the volume holds only its label")

    def _result(self, rec: RawRecord, version: int, types: dict[int, int], info: _Volume) -> None:
        f, i = rec.file, rec.index
        if len(rec.data) % 4:
            self.add("frame.align", f, f"record length {len(rec.data)} is not a multiple of 4",
                     record=i, offset=rec.offset, field="len")
        try:
            res = decode_result(rec, version, types)
        except FormatError as exc:
            code = {"result.valfmt": "result.valfmt", "result.dptr": "result.dptr"}.get(exc.code, "result.decode")
            self.add(code, f, exc.message, record=i, offset=exc.location.offset, field=exc.location.field)
            self._structure(rec, version)
            self.st.counters.clear()  # an unreadable record is a gap, as libpcp sees it
            return
        stamp = res.timestamp
        ns = stamp.total_nsec()
        info.stamps.append(ns)
        self._time(stamp, f, i, rec.offset + 4, "result.timestamp", version)
        if self.st.last_result is not None and ns < self.st.last_result:
            self.add("result.time-order", f, f"timestamp {stamp} is earlier than the previous result's",
                     record=i, offset=rec.offset + 4, field="result.timestamp")
        if self.st.start is not None and stamp < self.st.start:
            self.add("result.before-start", f, f"timestamp {stamp} is before the archive start {self.st.start}",
                     record=i, offset=rec.offset + 4, field="result.timestamp")
        self.st.last_result = ns if self.st.last_result is None else max(ns, self.st.last_result)
        if res.is_mark:
            if len(rec.data) != structs(version).mark_size:
                self.add("result.mark-size", f, f"a mark of {len(rec.data)} bytes", record=i, offset=rec.offset)
            self.st.counters.clear()  # counters restart after a gap
            return
        if not res.canonical:
            self._structure(rec, version)
        for k, vs in enumerate(res.vsets):
            self._values(rec, k, vs, stamp)

    def _desc_info(self, pmid: int) -> tuple[int, int, int | None] | None:
        """(type, sem, indom or None) of a pmID, cached: Container attribute access is slow."""
        info = self._dinfo.get(pmid)
        if info is None:
            desc = self.st.descs.get(pmid)
            if desc is None:
                return None
            info = self._dinfo[pmid] = (desc.type, desc.sem, None if desc.indom.is_null else int(desc.indom))
        return info

    def _members(self, indom: int, ns: int) -> frozenset[int] | None:
        """Instances of an indom in force at time ns (None: no record yet)."""
        hit = self._members_cache.get(indom)
        if hit is not None and hit[0] <= ns < hit[1]:
            return hit[2]
        history = self.st.indoms.get(indom)
        if not history:
            return None
        stamps = [h[0] for h in history]
        pos = bisect.bisect_right(stamps, ns)
        if not pos:
            return None
        until = stamps[pos] if pos < len(stamps) else 1 << 127
        self._indexed: list[tuple[int, int]] = []
        self._members_cache[indom] = (stamps[pos - 1], until, history[pos - 1][1])
        return history[pos - 1][1]

    def _values(self, rec: RawRecord, k: int, vs: Any, stamp: Timestamp) -> None:
        f = rec.file
        pmid = vs.pmid
        if vs.numval <= 0:
            if vs.numval < 0 and vs.numval not in _PLAUSIBLE_ERR:
                self.add("value.numval-code", f, f"numval {vs.numval} is not a PMAPI error code",
                         record=rec.index, offset=rec.offset, field=f"result.vset[{k}].numval")
            if vs.numval == 0 or self._desc_info(pmid) is not None:
                return
        info = self._desc_info(pmid)
        where = {"record": rec.index, "offset": rec.offset}
        fld = f"result.vset[{k}]"
        if info is None:
            self.add("value.undescribed", f, f"pmID {PmID(pmid)} has no descriptor", field=fld + ".pmid", **where)
            return
        ptype, sem, indom = info
        if ptype == PmType.NOSUPPORT:
            self.add("value.nosupport", f, f"values for NOSUPPORT metric {PmID(pmid)}", field=fld, **where)
        prev = self.st.valfmts.setdefault(pmid, vs.valfmt)
        if prev != vs.valfmt:
            self.add("value.valfmt-change", f, f"{PmID(pmid)}: valfmt {vs.valfmt}, earlier {prev}",
                     field=fld + ".valfmt", **where)
        insts, values = vs.columns
        members = None if indom is None else self._members(indom, stamp.total_nsec())
        good = self._insts_ok.get(pmid)
        if good is not None and good[1] is members and good[0] == insts:
            pass  # the same instances were checked against the same indom state before
        else:
            self._inst_checks(f, where, fld, pmid, indom, insts, members)
        if sem == 1 and 0 <= ptype <= 5:
            self._counters(f, where, fld, pmid, insts, values)

    def _inst_checks(self, f: str, where: dict[str, Any], fld: str, pmid: int, indom: int | None,
                     insts: tuple[int, ...], members: frozenset[int] | None) -> None:
        inst_set = set(insts)
        ok = True
        if len(inst_set) != len(insts):
            ok = False
            self.add("value.duplicate-inst", f, f"{PmID(pmid)}: an instance appears twice", field=fld, **where)
        if indom is None:
            if inst_set != {PM_IN_NULL}:
                ok = False
                self.add("value.singular-inst", f, f"{PmID(pmid)} has no indom but instance {insts[0]}",
                         field=fld + ".vlist", **where)
        else:
            if members is None:
                ok = False
                self.add("value.no-indom", f, f"no record of indom {PmInDom(indom)} is in force yet",
                         field=fld, **where)
            elif not inst_set <= members:
                ok = False
                self.add("value.unknown-inst", f, f"{PmID(pmid)}: instance {min(inst_set - members)} is not "
                         f"in indom {PmInDom(indom)} at that time", field=fld + ".vlist", **where)
        if ok:
            self._insts_ok[pmid] = (insts, members)

    def _counters(self, f: str, where: dict[str, Any], fld: str, pmid: int,
                  insts: tuple[int, ...], values: tuple[Any, ...]) -> None:
        last = self.st.counters.get(pmid)
        self.st.counters[pmid] = (insts, values)
        if last is None:
            return
        if last[0] == insts:   # the usual case: same instances, compare in C
            if not any(map(operator.lt, values, last[1])):
                return
            pairs = zip(insts, last[1], values)
        else:
            old = dict(zip(*last))
            pairs = ((i, old[i], v) for i, v in zip(insts, values) if i in old)
        for inst, was, now in pairs:
            if now < was:
                self.add("value.counter-decrease", f, f"{PmID(pmid)}[{inst}] counter went from {was} "
                         f"to {now}", field=fld, **where)

    def _structure(self, rec: RawRecord, version: int) -> None:
        """Field-by-field walk of a result the bulk decoder could not vouch for."""
        data, f = rec.data, rec.file
        end = len(data) - 4
        where = {"record": rec.index, "offset": rec.offset}
        pos = structs(version).result_header_size
        if pos + 4 > end + 4:
            return
        numpmid = struct.unpack_from(">i", data, pos - 4)[0]
        if numpmid == 0 and len(data) != structs(version).mark_size:
            self.add("result.mark-size", f, f"a mark of {len(data)} bytes", **where)
            return
        blocks: list[tuple[int, int, int]] = []
        for k in range(max(numpmid, 0)):
            if pos + 8 > end:
                return
            pmid, numval = struct.unpack_from(">Ii", data, pos)
            pos += 8
            if numval <= 0:
                continue
            if pos + 4 + 8 * numval > end:
                return
            valfmt = struct.unpack_from(">I", data, pos)[0]
            pos += 4
            desc = self.st.descs.get(pmid)
            fld = f"result.vset[{k}]"
            if valfmt not in (0, 1, 2):
                return  # already reported as result.valfmt
            if desc is not None and desc.type in range(0, 11) and valfmt != valfmt_for(desc.type):
                if valfmt == 0 and desc.type == PmType.FLOAT:
                    self.add("value.insitu-float", f, f"{PmID(pmid)}: INSITU float", field=fld + ".valfmt", **where)
                elif not (valfmt in (1, 2) and valfmt_for(desc.type) in (1, 2)):
                    self.add("value.valfmt", f, f"{PmID(pmid)}: valfmt {valfmt} for type "
                             f"{PmType(desc.type).token}", field=fld + ".valfmt", **where)
            for j in range(numval):
                word = struct.unpack_from(">I", data, pos + 8 * j + 4)[0]
                if valfmt == 0:
                    continue
                off = block_offset(word)
                vfld = f"{fld}.vlist[{j}]"
                if off < 0 or off + 4 > end:
                    self.add("result.dptr", f, f"value index {word} points outside the record", field=vfld, **where)
                    continue
                head = struct.unpack_from(">I", data, off)[0]
                vtype, vlen = head >> 24, head & 0xFFFFFF
                if vlen < 4 or off + vlen > end:
                    self.add("result.vlen", f, f"value block at {off} has vlen {vlen}", field=vfld, **where)
                    continue
                blocks.append((off, vlen + (-vlen % 4), j))
                payload = data[off + 4:off + vlen]
                if desc is not None:
                    self._block(f, where, vfld, pmid, desc.type, vtype, payload)
            pos += 8 * numval
        if blocks:
            blocks.sort()
            at = pos
            for off, size, _ in blocks:
                if off != at:
                    self.add("result.blocks", f, f"value blocks {'overlap' if off < at else 'leave a gap'} "
                             f"at byte {min(off, at)}", field="result.blocks", **where)
                    return
                at += size
            if at != end:
                self.add("result.blocks", f, f"{end - at} bytes after the last value block",
                         field="result.blocks", **where)
        elif pos != end and numpmid > 0:
            self.add("result.blocks", f, f"{end - pos} bytes after the value sets", field="result.blocks", **where)

    def _block(self, f: str, where: dict[str, Any], fld: str, pmid: int, dtype: int, vtype: int,
               payload: bytes) -> None:
        if vtype == 0:
            self.add("value.vtype-legacy", f, f"{PmID(pmid)}: value block type 0", field=fld, **where)
            return
        if vtype != dtype:
            self.add("value.vtype", f, f"{PmID(pmid)}: block type {vtype}, descriptor type {dtype}",
                     field=fld, **where)
            return
        size = BLOCK_PAYLOAD_SIZE.get(vtype)  # type: ignore[call-overload]
        if size is not None and len(payload) != size:
            self.add("value.vlen", f, f"{PmID(pmid)}: {len(payload)}-byte payload for a "
                     f"{PmType(vtype).token}", field=fld, **where)
        if vtype == PmType.STRING and not payload.endswith(b"\0"):
            self.add("value.string-nul", f, f"{PmID(pmid)}: string without NUL", field=fld, **where)
        if vtype in (PmType.EVENT, PmType.HIGHRES_EVENT):
            self._events(f, where, fld, vtype == PmType.HIGHRES_EVENT, payload)

    def _events(self, f: str, where: dict[str, Any], fld: str, highres: bool, payload: bytes) -> None:
        try:
            arr = event_array(highres).parse(payload)
        except Exception:  # construct raises several kinds; all mean "does not fit"
            self.add("event.structure", f, "event array does not fit its value block", field=fld, **where)
            return
        if arr.nrecords < 0 or arr.tail:
            self.add("event.structure", f, f"nrecords {arr.nrecords}, {len(arr.tail)} bytes left over",
                     field=fld, **where)
        for r in arr.records:
            if r.flags & 0x80000000 and r.flags != 0x80000000:
                self.add("event.missed", f, f"MISSED record with flags 0x{r.flags:08x}", field=fld, **where)
            for p in r.params or []:
                want = {0: 4, 1: 4, 2: 8, 3: 8, 4: 4, 5: 8}.get(p.type)
                if want is not None and len(p.vbuf) != want:
                    self.add("event.param-len", f, f"parameter {p.pmid} of type {p.type} has "
                             f"{len(p.vbuf)} value bytes", field=fld, **where)

    # -- index ---------------------------------------------------------------------------
    def _check_index(self, path: Path, labels: dict[str, Any]) -> None:
        with self._component(path, PM_LOG_VOL_TI, labels) as comp:
            if comp is None:
                return
            version = comp.version
            lsize = LABEL_SIZE[version]
            prev = None
            count = 0
            try:
                for number, offset, e in comp.index_entries():
                    count += 1
                    self._index_entry(comp.name, number, offset, e, prev, lsize)
                    prev = e
            except FormatError as exc:
                self._reader_error(exc)
            if comp.trailing:
                self.add("index.partial", comp.name, f"{len(comp.trailing[0])} bytes of a partial entry "
                         f"(entries are {INDEX_ENTRY_SIZE[version]} bytes)",
                         offset=lsize + count * INDEX_ENTRY_SIZE[version])
            if count == 0:
                self.add("index.empty", comp.name, ".index holds no entry (libpcp: empty archive)")
            indexed = {(e_vol, off) for e_vol, off in self._indexed}
            for vol in sorted(self.st.volumes)[1:]:
                info = self.st.volumes[vol]
                if info.offsets and (vol, lsize) not in indexed:
                    self.add("volume.switch-unindexed", comp.name, f"volume {vol} starts with no index entry")

    def _index_entry(self, f: str, n: int, offset: int, e: Any, prev: Any, lsize: int) -> None:
        where = {"record": n, "offset": offset}
        self._time(e.timestamp, f, n, offset, "index.timestamp")
        if e.timestamp.sec < 0:
            self.add("time.fraction", f, f"negative timestamp {e.timestamp}", field="index.timestamp", **where)
        if self.st.start is not None and e.timestamp < self.st.start:
            self.add("index.before-start", f, f"timestamp {e.timestamp} before the archive start",
                     field="index.timestamp", **where)
        if e.vol < 0:
            self.add("index.vol", f, f"volume {e.vol}", field="index.vol", **where)
        elif e.vol not in self.st.volumes:
            self.add("index.vol-missing", f, f"volume {e.vol} does not exist", field="index.vol", **where)
        meta_end = self.st.meta_size
        if meta_end is not None:
            if not lsize <= e.off_meta <= meta_end:
                self.add("index.offset", f, f"off_meta {e.off_meta} outside {lsize}..{meta_end}",
                         field="index.off_meta", **where)
            elif e.off_meta != meta_end and e.off_meta not in self._meta_starts():
                self.add("index.boundary", f, f"off_meta {e.off_meta} is not the start of a .meta record",
                         field="index.off_meta", **where)
        info = self.st.volumes.get(e.vol)
        if info is not None:
            if not lsize <= e.off_data <= info.size:
                self.add("index.offset", f, f"off_data {e.off_data} outside {lsize}..{info.size} of volume {e.vol}",
                         field="index.off_data", **where)
            else:
                k = bisect.bisect_left(info.offsets, e.off_data)
                if e.off_data not in (info.end, info.size) and (k == len(info.offsets) or info.offsets[k] != e.off_data):
                    self.add("index.boundary", f, f"off_data {e.off_data} is not the start of a record",
                             field="index.off_data", **where)
                t = e.timestamp.total_nsec()
                if k and info.stamps and self._latest(info.stamps, min(k, len(info.stamps))) > t:
                    self.add("index.invariant", f, f"a record before off_data {e.off_data} is later than {e.timestamp}",
                             field="index.off_data", **where)
            self._indexed.append((e.vol, e.off_data))
        m = bisect.bisect_left(self.st.meta_offsets, e.off_meta)
        if m and self._latest(self.st.meta_stamps, m) > e.timestamp.total_nsec():
            self.add("index.invariant", f, f"a .meta record before off_meta {e.off_meta} is later than {e.timestamp}",
                     field="index.off_meta", **where)
        if prev is not None:
            if e.timestamp < prev.timestamp:
                self.add("index.time-order", f, f"timestamp {e.timestamp} before {prev.timestamp}",
                         field="index.timestamp", **where)
            if e.vol < prev.vol:
                self.add("index.vol-order", f, f"volume {e.vol} after {prev.vol}", field="index.vol", **where)
            elif e.vol == prev.vol and (e.off_data < prev.off_data or e.off_meta < prev.off_meta):
                self.add("index.offset-order", f, "offsets decrease within one volume", field="index", **where)

    def _latest(self, stamps: list[int], count: int) -> int:
        """The latest of the first ``count`` stamps; running maxima computed once per list
        (the index pass runs after the lists are complete)."""
        running = self._running_max.get(id(stamps))
        if running is None:
            running = self._running_max[id(stamps)] = list(itertools.accumulate(stamps, max))
        return running[count - 1]

    def _meta_starts(self) -> set[int]:
        if self._meta_start_set is None:
            self._meta_start_set = set(self.st.meta_records)
        return self._meta_start_set

    # -- across files --------------------------------------------------------------------
    def _cross_checks(self, labels: dict[str, Any]) -> None:
        described_indoms = {int(d.indom) for d in self.st.descs.values() if not d.indom.is_null}
        for indom in self.st.indoms:
            if indom not in described_indoms:
                self.add("indom.undescribed", f"{self.base.name}.meta",
                         f"instance domain {PmInDom(indom)} is used by no descriptor")
        for kind, ident, rec in self.st.text_idents:
            if kind & 4 and ident not in self.st.descs:
                self.add("text.undescribed", rec.file, f"help text for pmID {PmID(ident)} with no descriptor",
                         record=rec.index, offset=rec.offset, field="text.ident")
            elif kind & 8 and ident not in described_indoms and ident != PM_INDOM_NULL:
                self.add("text.undescribed", rec.file, f"help text for indom {PmInDom(ident)} no descriptor uses",
                         record=rec.index, offset=rec.offset, field="text.ident")
