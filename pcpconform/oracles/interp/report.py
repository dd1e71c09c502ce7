"""The implementation-neutral result format of an interpolation replay (spec/interp.md,
INTERP-FMT-*), and its text and CSV views."""

from __future__ import annotations

import bisect
import csv
import io
import json
import re
from collections.abc import Iterable, Iterator
from typing import Any, Protocol, TextIO

from pcpconform.dump.jsonl import typed_value
from pcpconform.dump.text import value_text, when_text
from pcpconform.format.pmtypes import PmID, PmSem, PmType
from pcpconform.format.values import F32
from pcpconform.oracles.interp.model import NoValue, Sample


class ReportSource(Protocol):
    """What the report functions read of their source: an ``Archive`` or an archive
    set, or the derive oracle's ``DerivedView`` (its derived metrics by pmID)."""

    def desc(self, pmid: int) -> Any: ...

    def metric_name(self, pmid: int) -> str: ...

    def instances(self, indom: Any, at: Any = None) -> dict[int, str]: ...

    def indom_history(self, indom: Any) -> list[Any]: ...

__all__ = ["ReportSource", "samples_json", "write_json", "write_text", "write_csv", "CsvRows", "CSV_HEADER"]

FORMAT = {"kind": "interp", "format": "pcpconform-interp", "format_version": 1}


_Row = tuple[int, str, Any, int, list[tuple[int, str | None, Any]]]


_NO_NAMES: dict[int, str] = {}


class _Rows:
    """(pmid, metric name, desc, value type, [(inst, name, value)]) per metric of a sample,
    for one document: descriptors, names and each instance domain's history looked up once
    (names as ``Archive.instances`` gives them at the sample's time, else every name the
    domain ever had)."""

    def __init__(self, archive: ReportSource, rate: bool) -> None:
        self.archive = archive
        self.rate = rate
        self.metrics: dict[int, tuple[str, Any, int, str]] = {}
        self.histories: dict[int, tuple[list[Any], list[Any]]] = {}
        self.names_at: dict[tuple[int, int], dict[int, str]] = {}
        # the last table made per domain: an equal one is shared, so that what is cached per
        # table (write_csv's rows) stays one per distinct table, not one per record
        self.last_names: dict[int, dict[int, str]] = {}
        self.sample_time: Any = None
        self.sample_names: dict[Any, dict[int, str]] = {}

    def metric(self, pmid: int) -> tuple[str, Any, int, str]:
        """(name, desc, value type, pmID text)."""
        got = self.metrics.get(pmid)
        if got is None:
            desc = self.archive.desc(pmid)
            # rate-converted counters are doubles (INTERP-RATE-1)
            vtype = PmType.DOUBLE if self.rate and desc.sem == PmSem.COUNTER else desc.type
            got = self.metrics[pmid] = (self.archive.metric_name(pmid), desc, vtype, str(PmID(pmid)))
        return got

    def names(self, desc: Any, s: Sample | None) -> dict[int, str]:
        """The instance names at the sample's time (``s`` may be None for a metric without
        an instance domain: one table for all)."""
        if desc.indom.is_null:
            return _NO_NAMES        # one object: callers cache by the table's identity
        assert s is not None
        if s.time is not self.sample_time:     # the metrics of one sample share the lookups
            self.sample_time, self.sample_names = s.time, {}
        got = self.sample_names.get(desc.indom)
        if got is None:
            got = self.sample_names[desc.indom] = self._names_at(desc, s)
        return got

    def _names_at(self, desc: Any, s: Sample) -> dict[int, str]:
        indom = int(desc.indom)
        known = self.histories.get(indom)
        if known is None:
            history = self.archive.indom_history(desc.indom)
            known = self.histories[indom] = ([r.timestamp for r in history], history)
        stamps, history = known
        pos = bisect.bisect_right(stamps, s.time)
        names = self.names_at.get((indom, pos))
        if names is None:
            names = dict(history[pos - 1].instances) if pos else {}
            if not names:
                names = {i: n for r in history for i, n in r.instances.items()}
            last = self.last_names.get(indom)
            if last == names:
                names = last
            self.last_names[indom] = self.names_at[(indom, pos)] = names
        return names

    def __call__(self, s: Sample) -> Iterator[_Row]:
        for pmid, insts in s.values.items():
            name, desc, vtype, _ = self.metric(pmid)
            names = self.names(desc, s)
            yield (pmid, name, desc, vtype,
                   [(inst, names.get(inst), v) for inst, v in sorted(insts.items())])


def _sample_json(rows_of: _Rows, s: Sample) -> dict[str, Any]:
    entry: dict[str, Any] = {"time": {"sec": s.time.sec, "nsec": s.time.nsec}, "eol": s.eol,
                             "metrics": []}
    for pmid, name, _desc, vtype, rows in rows_of(s):
        insts = []
        for inst, iname, v in rows:
            row: dict[str, Any] = {"inst": inst, "name": iname}
            if isinstance(v, NoValue):
                row.update({"value": None, "reason": v.reason})
            else:
                row["value"] = typed_value(v, vtype, 1)
            insts.append(row)
        entry["metrics"].append({"pmid": rows_of.metric(pmid)[3], "name": name, "instances": insts})
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


def samples_json(archive: ReportSource, samples: Iterable[Sample], rules: str, *,
                 rate: bool = False, emulate: tuple[str, ...] = (),
                 rules_from: str | None = None) -> dict[str, Any]:
    head, tail = _document(rules, rate, emulate, rules_from)
    rows_of = _Rows(archive, rate)
    return {**head, "samples": [_sample_json(rows_of, s) for s in samples], **tail}


def _indented(value: Any, depth: int) -> str:
    """``json.dumps(value, indent=1)`` as it reads ``depth`` levels down a document."""
    return json.dumps(value, indent=1).replace("\n", "\n" + " " * depth)


def write_json(archive: ReportSource, samples: Iterable[Sample], rules: str, out: TextIO, *,
               rate: bool = False, emulate: tuple[str, ...] = (),
               rules_from: str | None = None) -> None:
    """``json.dump(samples_json(...), out, indent=1)`` and a newline, written a sample at a
    time: the document is never built whole."""
    head, tail = _document(rules, rate, emulate, rules_from)
    out.write("{\n" + "".join(f" {json.dumps(k)}: {_indented(v, 1)},\n" for k, v in head.items()))
    out.write(' "samples": [')
    first = True
    rows_of = _Rows(archive, rate)
    for s in samples:
        out.write(("\n  " if first else ",\n  ") + _indented(_sample_json(rows_of, s), 2))
        first = False
    out.write("]" if first else "\n ]")
    out.write("".join(f",\n {json.dumps(k)}: {_indented(v, 1)}" for k, v in tail.items()))
    out.write("\n}\n")


def write_text(archive: ReportSource, samples: Iterable[Sample], out: TextIO, *, rate: bool = False,
               header: str | None = None) -> None:
    if header is not None:
        out.write(header + "\n")
    rows_of = _Rows(archive, rate)
    for s in samples:
        when = when_text(s.time)
        if s.eol:
            out.write(f"{when}  end of log\n")
            continue
        lines = []
        for _pmid, name, _desc, vtype, rows in rows_of(s):
            for inst, iname, v in rows:
                shown = f"no value ({v.reason})" if isinstance(v, NoValue) else _shown(v, vtype)
                where = "" if inst == -1 else f"[{iname if iname is not None else inst}]"
                lines.append(f"{when}  {name}{where}  {shown}\n")
        out.write("".join(lines))


#: a field csv.writer (QUOTE_MINIMAL, "\n" line ends) writes as it is
_PLAIN = re.compile(r'[^,"\r\n]*\Z').match
CSV_HEADER = "time,metric,pmid,inst,instance,value,reason\n"


#: value classes whose row is ``%s`` of the value: str() of an int, float repr of a float
#: (an F32 is a float subclass whose repr is its float's, as value_text writes it)
_BULK = frozenset((int, float, F32))
#: characters of templates kept at most (a domain of thousands of instances with churn can
#: list new instances at every sample): then they are made again as they come
_TEMPLATE_CHARS = 8 << 20


def write_csv(archive: ReportSource, samples: Iterable[Sample], out: TextIO, *, rate: bool = False) -> None:
    """One row per sample, metric and instance: time (epoch seconds with nanoseconds),
    metric, pmid, inst, instance name, value (decimal, or IEEE repr for floats), reason.
    The bytes ``csv.writer`` writes (``CsvRows``), a sample at a time."""
    out.write(CSV_HEADER)
    rows = CsvRows(archive, rate)
    for s in samples:
        out.write(rows.sample_text(s))


class CsvRows:
    """The CSV rows of samples, and what is cached to make them: a metric's rows in a
    sample are one ``%`` format when every value is a number and no field needs quoting
    (``template``, cached per instance-name table and instance list), else rows are joined
    as strings (the per-instance middle cached per instance-name table), and a row with a
    field that needs quoting goes through ``csv.writer``."""

    def __init__(self, archive: ReportSource, rate: bool = False) -> None:
        self.rows_of = _Rows(archive, rate)
        self._quoted = io.StringIO()
        self._quoting = csv.writer(self._quoted, lineterminator="\n")
        # (pmid, id of the cached names table) -> inst -> ",metric,pmid,inst,instance," ("" if quoted)
        self._middles: dict[tuple[int, int], dict[int, str]] = {}
        # (pmid, id of the names table, the instances in the sample's order) ->
        # (the instances sorted, or None if already so; the rows' template, "" if a field is quoted)
        self._templates: dict[tuple[int, int, tuple[int, ...]], tuple[list[int] | None, str]] = {}
        self._held = 0            # their characters and instances

    def template(self, pmid: int, names: dict[int, str], insts: tuple[int, ...]) -> tuple[list[int] | None, str]:
        """The instances of ``insts`` (in a sample's order) sorted, None if already so, and
        the rows' ``%`` template, a ``%s`` for the time and one for the value of each ("" if
        a field needs quoting)."""
        key = (pmid, id(names), insts)
        known = self._templates.get(key)
        if known is None:
            if self._held > _TEMPLATE_CHARS:      # churn: instance lists without end
                self._templates.clear()
                self._held = 0
            name, _, _, ptext = self.rows_of.metric(pmid)
            ordered = sorted(insts)
            plain = _PLAIN
            mids = [f",{name},{ptext},{inst},{names.get(inst) or ''}," for inst in ordered]
            template = "".join(f"%s{m.replace('%', '%%')}%s,\n" for m in mids) \
                if plain(name) and all(plain(names.get(inst) or "") for inst in ordered) else ""
            known = self._templates[key] = (None if ordered == list(insts) else ordered, template)
            self._held += len(template) + 2 * len(ordered)
        return known

    def sample_text(self, s: Sample) -> str:
        """The rows of one sample."""
        when = f"{s.time.sec}.{s.time.nsec:09d}"
        if s.eol:
            return f"{when},,,,,,end of log\n"
        rows_of = self.rows_of
        lines = []
        for pmid, insts in s.values.items():
            desc = rows_of.metric(pmid)[1]
            names = rows_of.names(desc, s)       # cached per position in the history
            order, template = self.template(pmid, names, tuple(insts))
            values = list(insts.values()) if order is None else [insts[i] for i in order]
            if template and set(map(type, values)) <= _BULK:
                args = [when] * (2 * len(values))
                args[1::2] = values
                lines.append(template % tuple(args))
                continue
            self._rows(lines, when, pmid, names, insts)
        return "".join(lines)

    def _rows(self, lines: list[str], when: str, pmid: int, names: dict[int, str], insts: dict[int, Any]) -> None:
        """A metric's rows one at a time (a value that is no number, a field to quote)."""
        name, _, vtype, ptext = self.rows_of.metric(pmid)
        plain = _PLAIN
        middle = self._middles.get((pmid, id(names)))
        if middle is None:
            middle = self._middles[(pmid, id(names))] = {}
        for inst in sorted(insts):
            v = insts[inst]
            mid = middle.get(inst)
            iname = None
            if mid is None:
                iname = names.get(inst) or ""
                mid = middle[inst] = (f",{name},{ptext},{inst},{iname},"
                                      if plain(name) and plain(iname) else "")
            cls = v.__class__
            if cls is int or cls is float:      # value_text's str(), never quoted
                if mid:
                    lines.append(f"{when}{mid}{v},\n")
                    continue
                text, reason = str(v), ""
            elif cls is NoValue:
                text, reason = "", v.reason
                if mid and plain(reason):
                    lines.append(f"{when}{mid},{reason}\n")
                    continue
            else:
                text, reason = value_text(v, vtype), ""
                if mid and plain(text):
                    lines.append(f"{when}{mid}{text},\n")
                    continue
            if iname is None:
                iname = names.get(inst) or ""
            self._quoting.writerow([when, name, ptext, inst, iname, text, reason])
            lines.append(self._quoted.getvalue())
            self._quoted.seek(0)
            self._quoted.truncate()


def _shown(value: Any, vtype: int) -> str:
    """``value_text``, with its commonest case (an int) first."""
    return str(value) if value.__class__ is int else value_text(value, vtype)
