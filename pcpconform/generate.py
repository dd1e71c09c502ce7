"""Writing a fixture as libpcp's archive importer (libpcp_import, PCP 6.0.3) writes it.

The record order, index entries and volume switches follow libpcp_import's policy:

* the three labels are written at the first result, with its timestamp as start time;
* before each result, the descriptor of every metric in it that was not yet written, and
  its instance domain if instances were added since it was last written (full records,
  instances in ascending id order), then an index entry pointing *before* that metadata
  if any was written, if the volume switched, or if 100000 bytes passed since the last
  entry; values in each value set are sorted by instance id;
* after the result, pending help text and then label sets (one set per record), each
  preceded by any descriptor or instance domain it names that is not yet written, and
  an index entry if such metadata was written;
* a mark is 1 ms after the last result, with libpcp's carry quirk (see spec GEN-MARK);
* at the end, a last index entry at the last result's time.

Beyond what pmi can express, fixtures may also remove instances, force volume switches
and write v3 delta instance-domain records; those follow pmlogger's rules.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from construct import Container, ConstructError

from .fixture import Fixture, Sample
from .pmtypes import LabelType, PmType, TextType, Timestamp
from .schema import event_array
from .writer import ArchiveWriter, LabelFields, ValueSetSpec, layout_result

__all__ = ["generate_archive", "MARK_OFFSET_NSEC"]

MARK_OFFSET_NSEC = 1_000_000
_FLUSH = 100000


def mark_time(last: Timestamp, version: int) -> Timestamp:
    """libpcp_import's mark time: last result + 1 ms, carrying only when the fraction
    exceeds (not reaches) one second, so .999 s + 1 ms stays at a full second's fraction."""
    if version == 2:
        usec = last.usec + 1000
        sec = last.sec
        if usec > 1_000_000:
            usec -= 1_000_000
            sec += 1
        return Timestamp(sec, usec * 1000)
    nsec = last.nsec + MARK_OFFSET_NSEC
    sec = last.sec
    if nsec > 1_000_000_000:
        nsec -= 1_000_000_000
        sec += 1
    return Timestamp(sec, nsec)


def label_json(labels: dict[str, object]) -> tuple[bytes, list[Container]]:
    """A label set's JSON (names sorted, no spaces) and its pmLabel entries."""
    parts, entries = [], []
    pos = 1
    for name, value in sorted(labels.items()):
        key = json.dumps(name)
        val = json.dumps(value, separators=(",", ":"))
        entries.append((pos + 1, len(name), pos + len(key) + 1, len(val)))
        part = f"{key}:{val}"
        parts.append(part)
        pos += len(part) + 1
    text = "{" + ",".join(parts) + "}"
    return text.encode(), [Container(name=n, namelen=nl, flags=0, value=v, valuelen=vl)
                           for n, nl, v, vl in entries]


@dataclass
class _State:
    desc_done: set[int] = field(default_factory=set)
    indom_members: dict[int, list[int]] = field(default_factory=dict)
    indom_dirty: set[int] = field(default_factory=set)
    indom_written: dict[int, dict[int, str]] = field(default_factory=dict)


class _Generator:
    def __init__(self, fixture: Fixture, out: Path, version: int) -> None:
        self.f = fixture
        self.version = version
        self.w = ArchiveWriter(out, version)
        self.st = _State()
        self.by_pmid = {int(m.pmid): m for m in fixture.metrics}
        self.names = {int(d.indom): {i: n for n, i in d.instances.items()}
                      for d in fixture.indoms.values()}
        self.pending_text = self._texts()
        self.pending_labels = list(fixture.labels)
        self.flushsize = _FLUSH
        self.stamp: Timestamp | None = None      # libpcp_import's static "stamp"
        self.last_result: Timestamp | None = None
        self.volume_pending = False
        self.results = 0
        self.marks = 0

    def _texts(self) -> list[tuple[int, int, str]]:
        texts = []
        for m in self.f.metrics:
            for cls, bit in (("oneline", TextType.ONELINE), ("help", TextType.HELP)):
                if cls in m.text:
                    texts.append((bit | TextType.PMID, int(m.pmid), m.text[cls]))
        for d in self.f.indoms.values():
            for cls, bit in (("oneline", TextType.ONELINE), ("help", TextType.HELP)):
                if cls in d.text:
                    texts.append((bit | TextType.INDOM, int(d.indom), d.text[cls]))
        return texts

    # -- metadata ------------------------------------------------------------------------
    def _check_indom(self, indom: int, stamp: Timestamp) -> bool:
        if indom not in self.st.indom_dirty:
            return False
        members = sorted(self.st.indom_members.get(indom, []))
        current = {i: self.names[indom][i] for i in members}
        previous = self.st.indom_written.get(indom)
        delta = (self.version == 3 and self.f.indom_records == "delta" and previous is not None)
        if delta:
            added = [(i, current[i]) for i in members if previous.get(i) != current[i]]
            deleted = [(i, None) for i in sorted(previous) if i not in current]
            changes = sorted(added + deleted)
            if len(changes) <= len(members) and not any(
                    i in previous and previous[i] != n for i, n in added):
                self.w.put_indom(stamp, indom, changes, delta=True)
            else:
                delta = False
        if not delta:
            self.w.put_indom(stamp, indom, [(i, current[i]) for i in members])
        self.st.indom_written[indom] = current
        self.st.indom_dirty.discard(indom)
        return True

    def _check_metric(self, pmid: int, stamp: Timestamp) -> bool:
        wrote = False
        m = self.by_pmid.get(pmid)
        if m is None:
            return False
        if pmid not in self.st.desc_done:
            self.w.put_desc(m.pmid, m.type, m.indom, m.sem, m.units, [m.name])
            self.st.desc_done.add(pmid)
            wrote = True
        if not m.indom.is_null:
            wrote |= self._check_indom(int(m.indom), stamp)
        return wrote

    # -- samples -------------------------------------------------------------------------
    def _add_instances(self, sample: Sample) -> None:
        for metric, values in sample.values:
            if metric.indom.is_null:
                continue
            members = self.st.indom_members.setdefault(int(metric.indom), [])
            for inst, _ in values:
                if inst not in members:
                    members.append(inst)
                    self.st.indom_dirty.add(int(metric.indom))
        for indom, insts in (sample.instances or {}).items():
            if sorted(insts) != sorted(self.st.indom_members.get(indom, [])):
                self.st.indom_members[indom] = list(insts)
                self.st.indom_dirty.add(indom)

    def put_values(self, sample: Sample) -> None:
        assert sample.time is not None
        self._add_instances(sample)
        stamp = sample.time
        self.stamp = stamp
        if not self.w.started:
            self.w.start(LabelFields(hostname=self.f.hostname, timezone=self.f.timezone,
                                     start=stamp, pid=self.f.pid, zoneinfo=self.f.zoneinfo))
        old_meta = self.w.meta_offset()
        specs = [ValueSetSpec(int(m.pmid), m.type, sorted(vals, key=lambda iv: iv[0]))
                 for m, vals in sample.values]
        needti = False
        for spec in specs:
            needti |= self._check_metric(spec.pmid, stamp)
            # as pmlogger does, describe the metrics an event record's parameters name
            for param in _event_param_pmids(spec):
                needti |= self._check_metric(param, stamp)
        record = self.w.encode_result(layout_result(self.version, stamp, specs))
        end = self.w.data_offset() + len(record)
        limit = self.f.max_volume_bytes
        if self.volume_pending or (limit is not None and end >= limit):
            self.w.new_volume()
            self.volume_pending = False
            self.flushsize = _FLUSH
            needti = True
        if needti or self.w.data_offset() + len(record) > self.flushsize:
            self.w.put_index(stamp, off_meta=old_meta)
            self.flushsize = self.w.data_offset() + _FLUSH
        self.w.put_result_bytes(record)
        self.last_result = stamp
        self.results += 1
        self._put_text_and_labels(stamp)

    def _put_text_and_labels(self, stamp: Timestamp) -> None:
        needti = False
        for kind, ident, text in self.pending_text:
            if kind & TextType.PMID:
                needti |= self._check_metric(ident, stamp)
            else:
                needti |= self._check_indom(ident, stamp) if ident in self.names else False
            self.w.put_text(kind, ident, text)
        self.pending_text = []
        if needti:
            self.w.put_index(stamp)
        needti = False
        for lab in self.pending_labels:
            if lab.type == LabelType.ITEM:
                needti |= self._check_metric(lab.ident, stamp)
            elif lab.type in (LabelType.INDOM, LabelType.INSTANCES):
                needti |= self._check_indom(lab.ident, stamp) if lab.ident in self.names else False
            for inst, labels in lab.sets:
                js, entries = label_json(labels)
                for e in entries:
                    e.flags = int(lab.type)
                self.w.put_labels(stamp, int(lab.type), lab.ident, [(inst, js, entries)])
        self.pending_labels = []
        if needti:
            self.w.put_index(stamp)

    def put_mark(self, sample: Sample) -> None:
        if self.last_result is None:
            return  # libpcp_import writes no mark before the first result
        when = sample.time or mark_time(self.last_result, self.version)
        record = self.w.encode_result(layout_result(self.version, when, []))
        self.w.put_result_bytes(record)
        self.marks += 1

    def run(self) -> str:
        for sample in self.f.samples:
            if sample.kind == "volume":
                self.volume_pending = True
            elif sample.kind == "mark":
                self.put_mark(sample)
            elif sample.values:
                self.put_values(sample)
        if not self.w.started:
            raise ValueError("the fixture has no sample with values; nothing to write")
        assert self.stamp is not None
        self.w.put_index(self.stamp)
        self.w.close()
        return (f"{self.w.base}: version {self.version}, {self.results} results, "
                f"{self.marks} marks, {self.w.vol + 1} volume(s)")


def _event_param_pmids(spec: ValueSetSpec) -> list[int]:
    if spec.type not in (PmType.EVENT, PmType.HIGHRES_EVENT):
        return []
    schema = event_array(spec.type == PmType.HIGHRES_EVENT)
    seen: list[int] = []
    for _, payload in spec.values:
        for rec in schema.parse(payload).records:
            for p in rec.params or []:
                if int(p.pmid) not in seen:
                    seen.append(int(p.pmid))
    return seen


def generate_archive(fixture: Fixture, out: str | Path, *, version: int | None = None) -> str:
    """Write the fixture as an archive with base name ``out``; returns a one-line summary."""
    from .fixture import FixtureError

    try:
        return _Generator(fixture, Path(out), version or fixture.version).run()
    except ConstructError as exc:
        raise FixtureError(f"a value cannot be encoded: {str(exc).splitlines()[-1]}") from None
    except ValueError as exc:
        raise FixtureError(str(exc)) from None

