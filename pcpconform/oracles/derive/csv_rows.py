"""The derived metrics' fetches as interp samples and as CSV rows (DERIVE-CLI-1, DERIVE-CLI-6).

``derived_samples`` makes the evaluator's fetches into the samples the interp report
formats read: every instance a metric has shown, in every fetch, an instance without a value
saying why. ``csv_samples`` writes them as ``write_csv`` does; ``csv_columns`` (pair
``derive.csv``) writes the same bytes from the vectoriser's columns where every metric of a
fetch was evaluated there and has a value for each of its instances (most fetches of a
replay), with no sample made, and goes through ``derived_samples`` for the others.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from pcpconform.fastpath import Declined, register
from pcpconform.format.pmtypes import PM_IN_NULL, Timestamp
from pcpconform.oracles.derive.arithmetic import Unpredictable
from pcpconform.oracles.derive.bind import Bound
from pcpconform.oracles.derive.evaluate import DerivedView, Evaluator
from pcpconform.oracles.derive.state import PM_ERR_INDOM_LOG, ColumnPiece, DerivedSample
from pcpconform.oracles.derive.vector_stats import RowReason
from pcpconform.oracles.interp.model import NoValue, Sample, gc_paused
from pcpconform.oracles.interp.report import CSV_HEADER, CsvRows, ReportSource

__all__ = ["derived_samples", "known_instances", "csv_samples", "csv_columns", "CSV", "CsvReason"]

_ERROR_NAMES = {PM_ERR_INDOM_LOG: "PM_ERR_INDOM_LOG"}
#: what an instance libpcp reads from uninitialised memory shows
_UNPREDICTABLE = NoValue("unpredictable (libpcp reads uninitialised memory)")


class CsvReason(enum.Enum):
    """Why the derived CSV is written from samples rather than from columns."""

    INSTANCES = "--instances keeps some instances only"


def _no_value_reason(ds: DerivedSample, name: str) -> str:
    """Why a derived metric has no value for an instance at a fetch (DERIVE-CLI-6)."""
    code = ds.errors.get(name)
    if code is not None:
        return f"fetch error {_ERROR_NAMES.get(code, 'code')} ({code})"
    return "none returned" if not ds.values.get(name) else "instance not returned"


def known_instances(ev: Evaluator, view: ReportSource, bounds: Sequence[Bound],
                    shown: Iterator[tuple[str, Iterator[Any]]]) -> dict[int, set[int]]:
    """Per derived pmID, every instance its rows list: the instance domain's whole history
    (PM_IN_NULL for a singular metric) and every instance ``shown`` gives a value for."""
    known: dict[int, set[int]] = {}
    by_name: dict[str, set[int]] = {}
    for b in bounds:
        insts: set[int] = set()
        if b.desc.indom.is_null:
            insts.add(PM_IN_NULL)
        else:
            insts |= {i for r in view.indom_history(b.desc.indom) for i in r.instances}
        known[int(ev.pmids[b.name])] = by_name[b.name] = insts
    for name, insts_shown in shown:
        by_name[name].update(insts_shown)
    return known


def _pair_instances(derived: Sequence[DerivedSample], bounds: Sequence[Bound]) -> Iterator[tuple[str, Iterator[Any]]]:
    for b in bounds:
        for ds in derived:
            yield b.name, map(_first, ds.values.get(b.name, ()))


def derived_samples(ev: Evaluator, view: ReportSource, bounds: Sequence[Bound], derived: Sequence[DerivedSample],
                    keep: dict[int, set[int]] | None) -> list[Sample]:
    """The derived fetches as interp Samples, every instance of each metric in every
    fetch: an instance without a value says why (DERIVE-CLI-6)."""
    known = known_instances(ev, view, bounds, _pair_instances(derived, bounds))
    rows = _SampleRows(ev, bounds, known, keep)
    return [rows.sample(ds) for ds in derived]


class _SampleRows:
    """``derived_samples`` a fetch at a time, ``known`` (``known_instances`` of the whole
    schedule) given."""

    def __init__(self, ev: Evaluator, bounds: Sequence[Bound], known: dict[int, set[int]],
                 keep: dict[int, set[int]] | None) -> None:
        if keep is not None:
            known = {pmid: insts & keep[pmid] for pmid, insts in known.items()}
        self.known = known
        self.keep = keep
        self.listed = {pmid: sorted(insts) for pmid, insts in known.items()}
        self.metrics = [(b.name, int(ev.pmids[b.name])) for b in bounds]

    def sample(self, ds: DerivedSample) -> Sample:
        s = Sample(ds.time, eol=ds.eol)
        if ds.eol:
            return s
        known, keep, listed = self.known, self.keep, self.listed
        for name, pmid in self.metrics:
            got = dict(ds.values.get(name, ()))
            shown = got.keys() if keep is None else got.keys() & keep[pmid]
            order = listed[pmid] if shown <= known[pmid] else sorted(known[pmid] | shown)
            if len(shown) == len(order) and keep is None:     # every instance has a value
                row = dict(zip(order, map(got.__getitem__, order)))
            else:
                row = dict.fromkeys(order)
                row.update((i, v) for i, v in got.items() if i in row)
                # a reason for each instance without a value
                missing = NoValue(_no_value_reason(ds, name))
                row.update((i, missing) for i, v in row.items() if v is None)
            if Unpredictable in set(map(type, got.values())):
                row.update((i, _UNPREDICTABLE) for i, v in row.items() if isinstance(v, Unpredictable))
            s.values[pmid] = row
        return s


def _first(pair: tuple[Any, Any]) -> Any:
    return pair[0]


#: what both CSV writers take: a maker of the evaluator (called once), the bound metrics,
#: ``--instances`` per derived pmID (or None) and the schedule
Make = Callable[[], Evaluator]


def csv_samples(make: Make, bounds: Sequence[Bound], keep: dict[int, set[int]] | None, start: Timestamp,
                step: int, count: int) -> Iterator[str]:
    """The CSV of the schedule (the header, then each sample's rows): ``write_csv`` of
    ``derived_samples``."""
    ev = make()
    view = DerivedView(ev)
    derived = ev.schedule(start, step, count)
    with gc_paused():               # rows of acyclic dicts: nothing to collect
        samples = derived_samples(ev, view, bounds, derived, keep)
    return _sample_texts(CsvRows(view), samples)


def _sample_texts(rows: CsvRows, samples: list[Sample]) -> Iterator[str]:
    yield CSV_HEADER
    for s in samples:
        yield rows.sample_text(s)


def csv_columns(make: Make, bounds: Sequence[Bound], keep: dict[int, set[int]] | None, start: Timestamp,
                step: int, count: int) -> Iterator[str]:
    """``csv_samples``' text, from ``Evaluator.schedule_columns``: a fetch whose every
    metric has a column, with a value for each instance the metric's rows list, is one
    ``%`` format per metric of the column's row; any other through ``derived_samples``."""
    if keep is not None:
        raise Declined(CsvReason.INSTANCES)
    ev = make()
    view = DerivedView(ev)
    with gc_paused():
        pieces = list(ev.schedule_columns(start, step, count))
        known = known_instances(ev, view, bounds, _piece_instances(pieces, bounds))
    return _column_texts(ev, view, bounds, pieces, known)


def _piece_instances(pieces: list[ColumnPiece], bounds: Sequence[Bound]) -> Iterator[tuple[str, Iterator[Any]]]:
    for piece in pieces:
        for name, runs in piece.columns.items():
            for _, col in runs:
                yield name, iter(col.insts)
        yield from _pair_instances(list(piece.fetched.values()), bounds)


def _column_texts(ev: Evaluator, view: DerivedView, bounds: Sequence[Bound], pieces: list[ColumnPiece],
                  known: dict[int, set[int]]) -> Iterator[str]:
    from pcpconform.oracles.derive.vectorised import typed_rows  # numpy: only with columns

    rows = CsvRows(view)
    stats = ev.vector_stats
    sample_rows = _SampleRows(ev, bounds, known, None)
    metrics = [(b.name, int(ev.pmids[b.name]), b.desc.type) for b in bounds]
    descs = [view.desc(pmid) for _, pmid, _ in metrics]
    # per metric: its names table if it never changes (no instance domain), and the last
    # (names table, instances, template) it used
    heads = [_Head(pmid, desc, rows.rows_of.names(desc, None) if desc.indom.is_null else None)
             for (_, pmid, _), desc in zip(metrics, descs)]
    yield CSV_HEADER
    for piece in pieces:
        # per metric, per sample: (its instances sorted, their values) where a column has
        # a value for every instance the metric's rows list
        by_q: list[list[tuple[tuple[int, ...], list[Any]] | None]] = []
        for name, pmid, ptype in metrics:
            at_q: list[tuple[tuple[int, ...], list[Any]] | None] = [None] * len(piece.samples)
            for at, col in piece.columns.get(name, ()):
                if len(col.insts) != len(known[pmid]) or set(col.insts) != known[pmid]:
                    continue
                ordered = tuple(sorted(col.insts))
                pos = {inst: k for k, inst in enumerate(col.insts)}
                order = None if ordered == col.insts else [pos[i] for i in ordered]
                for q, values in zip(at, typed_rows(col, ptype, order, as_text=True)):
                    at_q[q] = (ordered, values)
            by_q.append(at_q)
        for q, sample in enumerate(piece.samples):
            ds = piece.fetched.get(q)
            text = RowReason.FETCHED if ds is not None else _columns_text(rows, sample, heads, by_q, q)
            if isinstance(text, RowReason):
                stats.csv_rows[text] += 1
                if ds is None:      # every metric has a column here: what schedule() gives
                    pairs = piece.pairs_at(q)
                    ds = DerivedSample(sample.time, values={name: pairs[name] for name, _, _ in metrics})
                text = rows.sample_text(sample_rows.sample(ds))
            else:
                stats.csv_columns += 1
            yield text


class _Head:
    """A derived metric as ``_columns_text`` writes it: its pmID and descriptor, its names
    table where it has no instance domain, and the template it used last."""

    __slots__ = ("desc", "last", "names", "pmid")

    def __init__(self, pmid: int, desc: Any, names: dict[int, str] | None) -> None:
        self.pmid, self.desc, self.names = pmid, desc, names
        self.last: tuple[Any, Any, str] = (None, None, "")


def _columns_text(rows: CsvRows, sample: Sample, heads: list[_Head], by_q: list[list[Any]],
                  q: int) -> str | RowReason:
    """One fetch's rows from the columns, or why ``CsvRows.sample_text`` must make them."""
    names_of = rows.rows_of.names
    bodies = []
    values: list[Any] = []
    for head, at_q in zip(heads, by_q):
        got = at_q[q]
        if got is None:
            return RowReason.PARTIAL
        insts, metric_values = got
        names = head.names if head.names is not None else names_of(head.desc, sample)
        last = head.last
        if last[0] is not names or last[1] is not insts:
            template = rows.template(head.pmid, names, insts)[1]
            # the rows without their times: every row starts a line, and no field of a
            # plain template holds a newline, so the times go in after each newline
            last = head.last = (names, insts, template[2:].replace("\n%s", "\n"))
        if not last[2]:
            return RowReason.QUOTED
        bodies.append(last[2])
        values += metric_values
    when = f"{sample.time.sec}.{sample.time.nsec:09d}"
    text: str = "".join(bodies) % tuple(values)
    return when + text[:-1].replace("\n", "\n" + when) + "\n" if text else ""


def _same_text(a: Iterator[str], b: Iterator[str]) -> bool:
    return "".join(a) == "".join(b)


#: the derived CSV from the vectoriser's columns against the one made from samples
CSV = register("derive.csv", reference=csv_samples, fast=csv_columns, reasons=CsvReason,
               inputs="derive-csv", same=_same_text)
