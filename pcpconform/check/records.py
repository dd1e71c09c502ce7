"""Result records of any shape checked on the kernel's columns (FMT-RESULT, FMT-VALUE).

Per-process archives repeat no result layout: instances come and go, so the learned
shapes of columns.py never match, and the reference path costs Python objects per value
set. Here a record's value sets and values are read by the compiled kernel
(io/result_kernel.py) into numpy columns, and each value rule's record form
(``ValueRule.record``, beside its ``check`` and ``columns`` in values.py) says whether the
reference path would report anything on them, and what state it would leave. A record the
writer laid out (canonical: nothing for the field walk to find) on which no rule would
report is done here: the time rule runs as on the reference path, then the rules' state is
committed. Anything else (damage, marks, a metric twice, a record a rule might report
on) goes to the reference path, counted under its reason (``RecordReason``, the kernel's
``KernelReason``, or the rule's ``ValueReason``), so every finding is reported by the same
code in the same order.
"""

from __future__ import annotations

import enum
import functools
import itertools
from collections.abc import Callable
from typing import Any

from pcpconform.check import times
from pcpconform.check.counters import CounterBatch, CounterLayout
from pcpconform.check.state import Context, VolumeInfo
from pcpconform.check.values import ValueChecks, ValueReason
from pcpconform.fastpath import Declined
from pcpconform.format.pmtypes import PmType, Timestamp
from pcpconform.io.bulk import VALFMT
from pcpconform.io.decoded import result_head
from pcpconform.io.reader import RawRecord
from pcpconform.io.result_kernel import STATUS, result_arrays

__all__ = ["RecordReason", "RecordPlan", "RecordCols", "RecordChecks", "PATH"]

PATH = "check.records"
#: records shorter than this go to the reference path until a volume's first record read
#: by columns: before it, too few values for numpy's import to pay (an archive of small
#: records is checked without importing numpy); after it, the columns cost less than the
#: reference path's objects even on small records (per-process archives mix both)
MIN_BYTES = 1024
#: layouts whose plans are kept (all dropped when full)
MAX_PLANS = 256
#: block types read as numbers, and how: numpy code and payload width
_BLOCKS: dict[int, tuple[str, int]] = {PmType.I32: (">i4", 4), PmType.U32: (">u4", 4), PmType.I64: (">i8", 8),
                                       PmType.U64: (">u8", 8), PmType.DOUBLE: (">f8", 8)}


@functools.cache
def _valfmts() -> Any:
    import numpy as np

    valfmts = np.full(256, 1, dtype=np.int32)      # by type: the writer's valfmt (VALFMT.get(type, 1))
    for t, valfmt in VALFMT.items():
        if 0 <= t < 256:
            valfmts[t] = valfmt
    return valfmts


class RecordReason(enum.Enum):
    """Why a result goes to the reference path instead of the kernel's columns."""

    WALK = "every record is walked field by field (check.canonical)"
    SMALL = "a record too small to pay for numpy's import, while no record of its volume was read by columns"
    UNALIGNED = "a record length not a multiple of 4"
    MARK = "a mark record"
    PMID_TWICE = "a metric with values twice in one record"
    NOT_CANONICAL = "not the writer's layout (the field walk may find something)"


class RecordPlan:
    """What a result's value sets and their descriptors decide, made once per layout
    (pmIDs, numvals and valfmts) and shared by every result of that layout: each value
    set's descriptor (type, sem, indom or None), which have values (``positive``, their
    indices), where each value set's values start (``bounds``) and, per value, its value
    set. ``rules`` holds what each rule's record form derives from these alone."""

    __slots__ = ("bounds", "infos", "numvals", "pmids", "positive", "ptypes", "rules", "valfmts", "vset_of_value")

    def __init__(self, arrays: Any, infos: list[tuple[int, int, int | None] | None], pmids: list[int],
                 types: dict[int, int]) -> None:
        import numpy as np

        self.infos = infos
        self.pmids = pmids
        self.numvals: list[int] = arrays.numval.tolist()
        self.valfmts: list[int] = arrays.valfmt.tolist()
        self.bounds: list[int] = arrays.vset_val.tolist()
        self.positive = [k for k, n in enumerate(self.numvals) if n > 0]
        #: per value, the index of its value set
        self.vset_of_value = np.repeat(np.arange(len(pmids)), np.diff(arrays.vset_val))
        #: per value set, its descriptor's type as the decoder has it (-2^40: none)
        self.ptypes = np.array(list(map(types.get, pmids, itertools.repeat(-1 << 40))), dtype=np.int64)
        self.rules: dict[str, Any] = {}


class RecordCols:
    """One result's columns (``ResultArrays`` of one record), its time, and the plan of
    its layout (``RecordPlan``), whose members it shows as its own."""

    def __init__(self, rec: RawRecord, arrays: Any, ns: int, plan: RecordPlan) -> None:
        self.rec = rec
        self.ns = ns
        self.a = arrays
        self.plan = plan
        self.infos = plan.infos
        self.pmids = plan.pmids
        self.numvals = plan.numvals
        self.valfmts = plan.valfmts
        self.bounds = plan.bounds
        self.positive = plan.positive
        self.vset_of_value = plan.vset_of_value
        #: the instance column as bytes (what the rules compare with a layout's last result)
        self.seen: bytes = arrays.inst.tobytes()

    def counter_batch(self, layout: CounterLayout, like: CounterBatch | None = None) -> CounterBatch:
        """The counter value sets of ``layout`` (made by ``counter_layout``) as columns,
        typed as the bulk decoder types them; ``like``: a batch of the same layout whose
        keys are reused where the instances are the same (``CounterBatch.add``)."""
        import numpy as np

        a = self.a
        batch = CounterBatch(layout, self.seen)
        same = like is not None and like.seen == self.seen
        raw = None
        for ptype, _, _, _, (sel, insitu) in layout.groups:
            if insitu:                  # canonical: INSITU for every 32-bit value set
                words = a.word[sel]
                values = words.view(np.int32) if ptype == PmType.I32 else words
            else:
                if raw is None:
                    raw = np.frombuffer(self.rec.data, dtype=np.uint8)
                code, width = _BLOCKS[ptype]
                values = raw[a.boff[sel][:, None] + 4 + np.arange(width)].copy().view(code).ravel()
            batch.add(None if same else a.inst[sel], values, like)
        return batch

    def counter_layout(self, ks: list[int]) -> CounterLayout:
        """Value sets ``ks`` (ascending) of 32/64-bit integer or double type grouped by type
        (``Declined`` for any other type): what ``counter_batch`` reads of each result of
        this layout."""
        import numpy as np

        by_type: dict[int, list[int]] = {}
        for k in ks:
            by_type.setdefault(self.infos[k][0], []).append(k)    # type: ignore[index]
        layout = CounterLayout()
        for ptype, group in by_type.items():
            if ptype not in _BLOCKS:
                raise Declined(ValueReason.COUNTER_COLUMN)
            sel = np.isin(self.vset_of_value, group).nonzero()[0]
            counts = [self.bounds[k + 1] - self.bounds[k] for k in group]
            layout.add(ptype, [self.pmids[k] for k in group], counts, (sel, self.valfmts[group[0]] == 0))
        return layout


class RecordChecks:
    """The value rules' record forms over the kernel's columns, for one data volume."""

    def __init__(self, ctx: Context, values: ValueChecks, version: int, types: dict[int, int]) -> None:
        self.ctx = ctx
        self.values = values
        self.version = version
        self.types = types
        self.stats = ctx.report.paths
        self._plans: dict[bytes, RecordPlan] = {}
        #: whether a record of this volume has been read by columns (numpy is loaded)
        self.columns_paid = False

    def check(self, rec: RawRecord, info: VolumeInfo) -> bool:
        """True if ``rec`` was checked on its columns (state updated, nothing to report);
        False (the reason counted, nothing changed) if the reference path must check it."""
        try:
            stamp, commits = self._commits(rec)
        except Declined as declined:
            self.stats.decline(PATH, declined.reason)
            return False
        ctx = self.ctx
        ctx.result_stamp = (rec.file, rec.index, stamp)
        info.stamp(stamp.total_nsec())
        for rule in times.RECORD_RULES:
            rule.check(ctx, rec, stamp, self.version)
        for commit in commits:
            commit()
        self.stats.answer(PATH)
        return True

    def _commits(self, rec: RawRecord) -> tuple[Timestamp, list[Callable[[], None]]]:
        """The result's time and what its rules' record forms would commit; ``Declined``
        where the reference path must check it."""
        if self.ctx.walk_canonical:
            raise Declined(RecordReason.WALK)
        data = rec.data
        if len(data) < MIN_BYTES and not self.columns_paid:
            raise Declined(RecordReason.SMALL)
        if len(data) % 4:
            raise Declined(RecordReason.UNALIGNED)
        arrays = result_arrays([rec], self.version)
        self.columns_paid = True
        if arrays.status[0]:
            raise Declined(STATUS[int(arrays.status[0])])
        if not len(arrays.pmid):
            raise Declined(RecordReason.MARK)
        plan = self._plan(arrays)
        stamp = result_head(data, self.version)[0]
        rc = RecordCols(rec, arrays, stamp.total_nsec(), plan)
        if plan.rules["pmid-twice"]:
            raise Declined(RecordReason.PMID_TWICE)
        self._canonical(rc)
        return stamp, self.values.record(rc)

    def _plan(self, arrays: Any) -> RecordPlan:
        """The plan of the result's layout, made at its first result (a few hundred kept:
        pmlogger's groups of metrics, logged at their intervals, repeat a few layouts)."""
        key = arrays.pmid.tobytes() + arrays.numval.tobytes() + arrays.valfmt.tobytes()
        plan = self._plans.get(key)
        if plan is None:
            if len(self._plans) >= MAX_PLANS:
                self._plans.clear()
            pmid_list = arrays.pmid.tolist()
            plan = self._plans[key] = RecordPlan(arrays, self.values.desc_infos(pmid_list), pmid_list,
                                                 self.types)
            pmids = [plan.pmids[k] for k in plan.positive]
            plan.rules["pmid-twice"] = len(set(pmids)) != len(pmids)
        return plan

    def _canonical(self, rc: RecordCols) -> None:
        """Decline unless the bulk decoder would call the record canonical (decode_fast):
        every valfmt the writer's for the descriptor's type, every block of that type, of
        its type's payload size, a string ending in NUL, padded with "~" (the kernel's
        ``odd``: all but the type, which is the layout's)."""
        a = rc.a
        rules = rc.plan.rules
        layout = rules.get("canonical")
        if layout is None:      # once per layout: the writer's valfmts, and per block its type
            ptypes = rc.plan.ptypes
            positive = a.numval > 0
            typed = ptypes[positive]
            # undescribed, or a type with no writer's valfmt (NOSUPPORT among them): not canonical here
            writers = not (((typed < 0) | (typed > 255)).any() or (a.valfmt[positive] != _valfmts()[typed]).any())
            blocks = a.boff >= 0
            layout = rules["canonical"] = (writers, blocks if blocks.any() else None,
                                           ptypes[rc.vset_of_value][blocks])
        writers, blocks, block_ptypes = layout
        if not writers:
            raise Declined(RecordReason.NOT_CANONICAL)
        if blocks is not None and (a.odd[0] or (a.vtype[blocks] != block_ptypes).any()):
            raise Declined(RecordReason.NOT_CANONICAL)
