"""Hypothesis strategies for archives shaped like per-process, per-container or per-device
data: instance domains of up to thousands of instances whose members leave, come back, are
born mid-archive and are renumbered (an external name moving to a new id, FIX-INDOM-2),
values missing now and then (and values of instances the domain does not list), strings
and aggregates beside numbers, marks, and records from 1 µs to hours apart; and replay
schedules that start before, inside or after the archive.

``churn_fixtures()`` draws a Fixture (write it with ``generate_archive``); ``schedules(span)``
draws (start offset, interval, count) for an archive spanning ``span`` nanoseconds.
Requires hypothesis (the ``strategies`` extra).
"""

from __future__ import annotations

import random
import re
from typing import TYPE_CHECKING, Any, NamedTuple

from pcpconform.extra import require
from pcpconform.extra.strategies import values_of
from pcpconform.fixtures.fixture import Fixture, InDomSpec, MetricSpec, Sample
from pcpconform.format.pmtypes import PM_IN_NULL, PM_INDOM_NULL, PmID, PmInDom, PmSem, PmType, PmUnits, Timestamp

if TYPE_CHECKING:
    from hypothesis import strategies as st
else:  # without hypothesis, say which extra provides it
    st = require("hypothesis.strategies", "strategies", "pcpconform.extra.churn_strategies")

__all__ = ["churn_fixtures", "schedules", "churn_shape", "ChurnShape", "STEPS_NSEC"]

#: record spacings drawn from (ns): 1 µs to 3 hours, pmlogger's usual ones in between
STEPS_NSEC = (1_000, 7_000, 1_000_000, 2_000_000, 250_000_000, 1_000_000_000, 10_000_000_000,
              60_000_000_000, 3600_000_000_000, 3 * 3600_000_000_000)
_INT_BOUNDS = {PmType.I32: (-(1 << 31), (1 << 31) - 1), PmType.U32: (0, (1 << 32) - 1),
               PmType.I64: (-(1 << 63), (1 << 63) - 1), PmType.U64: (0, (1 << 64) - 1)}
_TYPES = (PmType.I32, PmType.U32, PmType.I64, PmType.U64, PmType.FLOAT, PmType.DOUBLE,
          PmType.STRING, PmType.AGGREGATE)


#: above this many values in one value set, the values come from a pool drawn for it, picked
#: by the fixture's own Random: hypothesis holds a few thousand choices per example, and an
#: example over that is discarded, so drawing every value would never reach large domains
_DRAWN_ONE_BY_ONE = 24


def _values(ptype: PmType) -> st.SearchStrategy[Any]:
    if ptype == PmType.AGGREGATE:
        return st.binary(min_size=1, max_size=12)
    return values_of(ptype)


def _many_values(draw: st.DrawFn, rnd: random.Random, ptype: PmType, count: int) -> list[Any]:
    """``count`` values of ``ptype``: drawn one by one when few, else from a drawn pool, integers
    spread over their type's range by ``rnd`` (distinct values keep the bounds apart)."""
    vs = _values(ptype)
    if count <= _DRAWN_ONE_BY_ONE:
        return [draw(vs) for _ in range(count)]
    pool = draw(st.lists(vs, min_size=1, max_size=6))
    if ptype in _INT_BOUNDS:
        lo, hi = _INT_BOUNDS[ptype]
        return [rnd.choice(pool) if rnd.random() < 0.1 else rnd.randint(lo, hi) for _ in range(count)]
    return [rnd.choice(pool) for _ in range(count)]


def _some(rnd: random.Random, items: list[int], most: int) -> list[int]:
    """Up to ``most`` of ``items``: a share of them (all, about half, a few, none) and which,
    by ``rnd``. Shares, not counts, and not hypothesis's: it draws small numbers far more
    often than large ones, and large domains need large moves."""
    if not items:
        return []
    share = rnd.choice([1.0, 0.5, 0.05, 0.0])
    return rnd.sample(items, min(most, len(items), max(round(share * len(items)), 1 if share else 0)))


@st.composite
def churn_fixtures(draw: st.DrawFn, *, max_instances: int = 2000, max_records: int = 10,
                   max_metrics: int = 4, min_instances: int = 1) -> Fixture:
    """An archive of one instance domain of ``min_instances`` to ``max_instances`` members that
    churn (leave, return, are born), a singular metric beside it, marks and missing values.
    The simplest draw lists all ``max_instances`` in its first record."""
    version = draw(st.sampled_from([2, 3]))
    rnd = draw(st.randoms(use_true_random=True), label="bulk choices")   # a seeded Random
    small = [n for n in (15, 16, 17) if min_instances <= n <= max_instances]
    size = draw(st.sampled_from([max_instances, *small]) | st.integers(min_instances, max_instances),
                label="domain")
    ids = sorted(rnd.sample(range(4 * max_instances + 100), size))
    indom = PmInDom("60.7")
    spec = InDomSpec(indom, {f"i{i} cmd{i % 7}": i for i in ids})
    external = spec.names                              # renumbered ids' names
    metrics = []
    for k in range(draw(st.integers(1, max_metrics))):
        ptype = draw(st.sampled_from(_TYPES))
        metrics.append(MetricSpec(name=f"churn.m{k}", pmid=PmID.from_parts(60, 1, k), type=ptype,
                                  sem=int(draw(st.sampled_from(list(PmSem)))), indom=indom, units=PmUnits()))
    metrics.append(MetricSpec(name="churn.nprocs", pmid=PmID.from_parts(60, 0, 0), type=PmType.U32,
                              sem=int(PmSem.INSTANT), indom=PmInDom(PM_INDOM_NULL), units=PmUnits()))
    live = set(_some(rnd, ids, size) or ids[:1])
    born = set(live)
    retired: set[int] = set()                          # renumbered away: never back
    at = draw(st.integers(1_000_000_000, 2_000_000_000)) * 10**9
    samples: list[Sample] = []
    for k in range(draw(st.integers(1, max_records))):
        if k and draw(st.integers(0, 5)) == 0:
            samples.append(Sample("mark"))
        step = draw(st.sampled_from(STEPS_NSEC) | st.integers(1_000, 5 * 10**9))
        at += (step - step % 1000 if version == 2 else step) if k else 0
        if k:                                          # churn: leave, return, be born, renumber
            live -= set(_some(rnd, sorted(live), len(live) // 2 + 1))
            live |= set(_some(rnd, sorted(born - live - retired), size))
            fresh = [i for i in ids if i not in born]
            if fresh and born - retired and draw(st.integers(0, 3)) == 0:
                old = draw(st.sampled_from(sorted(born - retired)))
                external[fresh[0]] = external.get(old, f"i{old} cmd{old % 7}")
                live.discard(old)                      # its name moves to a new id
                retired.add(old)
                live.add(fresh[0])
                born.add(fresh.pop(0))
            new = len(_some(rnd, fresh, len(fresh)))
            live |= set(fresh[:new])
            born |= set(fresh[:new])
            live = live or {min(born - retired)}
        order = sorted(live)
        values = []
        for m in metrics:
            if m.indom.is_null:                        # always there: every record is written
                values.append((m, [(PM_IN_NULL, len(order))]))
                continue
            if draw(st.integers(0, 4)) == 4:           # a metric missing from a record
                continue
            keep = draw(st.sampled_from(["all", "most", "stray"]))
            insts = order if keep == "all" else [i for n, i in enumerate(order) if n % 5 != k % 5]
            if keep == "stray":                        # a value of an instance not listed
                insts = insts + [i for i in ids if i not in live][:1]
            values.append((m, list(zip(insts, _many_values(draw, rnd, m.type, len(insts)), strict=True))))
        samples.append(Sample("values", Timestamp.from_nsec(at), values, {int(indom): order}))
    return Fixture(version=version, hostname="churn.example", timezone="UTC", zoneinfo="", pid=1,
                   max_volume_bytes=None, indom_records="full", metrics=metrics,
                   indoms={int(indom): spec}, labels=[], samples=samples)


class ChurnShape(NamedTuple):
    """What a drawn fixture holds, to check the draws reach what they are for."""

    listed: int          # the most instances one record lists
    returned: int        # instances listed, then not, then listed again
    marks: int


def churn_shape(fixture: Fixture) -> ChurnShape:
    """The shape of a fixture's instance domains and samples."""
    flags: dict[tuple[int, int], list[bool]] = {}
    listed = 0
    for s in fixture.samples:
        for indom, ids in (s.instances or {}).items():
            listed = max(listed, len(ids))
            present = set(ids)
            for i in fixture.indoms[indom].instances.values():
                flags.setdefault((indom, i), []).append(i in present)
    returned = sum(bool(re.search("10+1", "".join("1" if x else "0" for x in f))) for f in flags.values())
    return ChurnShape(listed, returned, sum(s.kind == "mark" for s in fixture.samples))


@st.composite
def schedules(draw: st.DrawFn, span: int, *, max_count: int = 12) -> tuple[int, int, int]:
    """(start offset from the first record, interval, count) in ns: a start before, inside
    or after the archive (within 1 ms of its ends too), either direction."""
    offset = draw(st.integers(-2 * 10**9, span + 2 * 10**9)
                  | st.sampled_from([-1_000_001, -999_999, -1, 0, span, span + 1, span + 999_999, span + 1_000_001])
                  | st.integers(0, span))
    interval = draw(st.sampled_from([1, 1_000, 999_999, 10**9])
                    | st.integers(1, max(span // 3, 1)) | st.integers(1, max(2 * span, 1)))
    if draw(st.booleans()):
        interval = -interval
    return offset, interval, draw(st.integers(1, max_count))
