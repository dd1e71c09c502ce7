"""Evaluation of bound derived metrics over an archive replay, as libpcp's eval_expr does.

An ``Evaluator`` owns an interpolation ``Replay`` of every operand metric and, per fetch,
walks each bound expression bottom up with C arithmetic (integer wrap-around, float32 for
FLOAT, division in double), the instance order libpcp's INTERP results use, and per-node
state for delta()/rate(), min()/max(), [inst] and matchinst(). The rules are
spec/derive.md DERIVE-EVAL-*. ``schedule`` hands the stateless arithmetic of a whole piece
of the schedule to ``vectorised.Vectoriser`` (numpy, the same values bit for bit) and
walks the rest fetch by fetch; ``vector_stats`` counts which took which path and why.

Where libpcp is defective (spec/derive.md DERIVE-DEV-*), the evaluator gives the intended
value, records the deviation's name in ``DerivedSample.deviations``, and reproduces
libpcp's behaviour instead for the names given in ``emulate`` where that is possible;
values libpcp takes from uninitialised memory are then ``UNPREDICTABLE``, unless
``unwritten`` says what the heap state leaves in memory libpcp allocates and never writes
(DERIVE-DEV-1, DERIVE-DEV-2).
"""

from __future__ import annotations

import re
import struct
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from pcpconform.format.cnum import INTEGER_TYPES, NUMERIC_TYPES, f32, wrap, wrap_type
from pcpconform.format.pmtypes import PM_IN_NULL, PmType, Timestamp
from pcpconform.format.values import F32
from pcpconform.io.archive import Archive, Desc
from pcpconform.oracles.derive.arithmetic import (
    BOOL,
    REL,
    UNPREDICTABLE,
    Unpredictable,
    bin_op,
    origin_add,
    pairs_key,
    timespec_seconds,
    typed,
)
from pcpconform.oracles.derive.bind import Bound, BoundNode, promote
from pcpconform.oracles.derive.functions import Functions
from pcpconform.oracles.derive.instances import InDoms, instance_order
from pcpconform.oracles.derive.profiles import Profile
from pcpconform.oracles.derive.state import (
    CRASHES,
    DEVIATIONS,
    EMULATABLE,
    PM_ERR_INDOM_LOG,
    ColumnPiece,
    DerivedSample,
    NodeState,
    derived_pmid,
)
from pcpconform.oracles.derive.ternary import Ternary
from pcpconform.oracles.derive.vector_stats import Reason, VectorStats
from pcpconform.oracles.interp.model import gc_paused
from pcpconform.oracles.interp.replay import NoValue, Replay, Sample

if TYPE_CHECKING:
    from pcpconform.oracles.derive.vectorised import Vectoriser

__all__ = ["Evaluator", "DerivedSample", "DerivedView", "Unpredictable", "UNPREDICTABLE", "DEVIATIONS",
           "EMULATABLE", "CRASHES", "instance_order", "derived_pmid", "bin_op", "timespec_seconds"]


class Evaluator(Functions, Ternary):
    """Replay ``bound`` derived metrics of ``archive`` as libpcp of ``profile`` does.

    ``rules`` picks the interpolation rules (default: the profile's name, pcp-6.0 or
    pcp-6.3, which go together); ``emulate`` names DEVIATIONS to reproduce as libpcp
    shows them instead of the intended behaviour. ``unwritten`` is the byte every
    byte of freshly malloc'd memory holds in a heap state that fixes it (glibc's
    MALLOC_PERTURB_ fill, 0 for fresh pages), used for the memory DERIVE-DEV-1 and the half of
    a value DERIVE-DEV-2 leave unwritten; None (glibc's defaults): such values, and all
    that depends on them, are UNPREDICTABLE. ``vectorise=False``: ``schedule`` evaluates
    every fetch one at a time, the reference for the vectorised path (vectorised.py)."""

    def __init__(self, archive: Archive, bound: Sequence[Bound], profile: Profile, *,
                 rules: str | None = None, emulate: Iterable[str] = (),
                 interp_emulate: Iterable[str] = (), from_time: Timestamp | None = None,
                 unwritten: int | None = None, vectorise: bool = True) -> None:
        self.archive = archive
        if unwritten is not None and not 0 <= unwritten <= 0xFF:
            raise ValueError(f"unwritten must be a byte value, not {unwritten}")
        self.unwritten = unwritten
        self.bound = list(bound)
        self.profile = profile
        self.emulate = frozenset(emulate)
        unknown = self.emulate - EMULATABLE
        if unknown:
            raise ValueError(f"cannot emulate {', '.join(sorted(unknown))}")
        pmids: list[int] = []
        for b in self.bound:
            for pmid in b.operand_pmids():
                if pmid not in pmids:
                    pmids.append(pmid)
        # interp_emulate: the interpolation oracle's named deviations (INTERP-DEV-*) for
        # the operands, so that a comparison with a given libpcp is exact end to end
        self.replay = Replay(archive, pmids, rules=rules or profile.interp_rules, emulate=interp_emulate,
                             from_time=from_time)     # INTERP-SEEK-1 for a late forward start
        self.order = {pmid: instance_order(archive, self.replay.descs[pmid].indom)
                      for pmid in pmids}
        self.indoms = InDoms(archive)
        self.states: dict[int, NodeState] = {}
        self.pmids = {b.name: derived_pmid(k) for k, b in enumerate(self.bound)}
        self._sample: Sample | None = None
        self._exact: tuple[int, int] = (0, 0)
        self._real_stamp: tuple[int, int] = (0, 0)
        self._origin_after: tuple[int, int] = (0, 0)
        self._hits: set[str] = set()
        self._unknown = False
        self._prev_hits: dict[str, tuple[set[str], bool]] = {}
        self._history = {b.name: any(n.save_last for n in b.root.walk()) for b in self.bound}
        # schedule() evaluates what it can a piece at a time (vectorised.py); the rest, and
        # every metric without numpy or with vectorise=False, one fetch at a time
        self.vector_stats = VectorStats()
        self.vectoriser: Vectoriser | None = None
        why = Reason.DISABLED if not vectorise else self._start_vectoriser()
        self._no_vectoriser: Reason = why or Reason.DISABLED

    def _start_vectoriser(self) -> Reason | None:
        from pcpconform.oracles.derive.vectorised import Vectoriser  # numpy, when first needed
        self.vectoriser = Vectoriser(self.bound, self.order, self._constant)
        self.vector_stats = self.vectoriser.stats
        return None

    # -- driving -------------------------------------------------------------------------
    def schedule(self, start: Timestamp, interval_nsec: int, count: int) -> list[DerivedSample]:
        """Fetch ``count`` times from ``start`` every ``interval_nsec``, with libpcp's
        timestamp arithmetic for the context origin (DERIVE-EVAL-16).

        Each piece of the schedule is offered to the vectoriser first; what it returns
        is what ``fetch`` would give (tests/property/test_derive_vectorised.py), and the
        metric-fetches it leaves are evaluated by ``fetch`` and counted in
        ``vector_stats``."""
        out = []
        for piece in self.schedule_columns(start, interval_nsec, count):
            with gc_paused():           # ~10^5 acyclic pairs and lists: nothing to collect
                rows = piece.rows() if len(piece.fetched) < len(piece.samples) else {}
                for q, sample in enumerate(piece.samples):
                    got = piece.fetched.get(q)
                    if got is None:     # every metric vectorised: what fetch gives then
                        got = DerivedSample(sample.time, values={b.name: rows[b.name][q] for b in self.bound})
                    out.append(got)
        return out

    def schedule_columns(self, start: Timestamp, interval_nsec: int, count: int) -> Iterator[ColumnPiece]:
        """``schedule`` a piece at a time, what the vectoriser evaluated left as its
        columns: a sample every bound metric has a column for is not fetched (the state
        left is the same); ``fetched`` holds the other samples' ``fetch``, by position."""
        sign = -1 if interval_nsec < 0 else 1
        delta = (sign * (abs(interval_nsec) // 10**9), sign * (abs(interval_nsec) % 10**9))
        origin = (start.sec, start.nsec)
        names = [b.name for b in self.bound]
        # the operands' samples a piece of the schedule at a time (the vectorised replay
        # gives what one replay.fetch after another gives, fetch state included)
        for samples in self.replay.schedule_chunks(start, interval_nsec, count):
            with gc_paused():
                piece = ColumnPiece(samples, self._vectorised(samples), self._pair_rows)
                covered = [0] * len(samples)
                for runs in piece.columns.values():
                    for at, _ in runs:
                        for q in at:
                            covered[q] += 1
                skipped = False
                for q, sample in enumerate(samples):
                    after = origin_add(origin, delta)
                    if sample.eol or covered[q] < len(names):
                        if skipped:     # what fetch leaves for a metric it is given
                            self._prev_hits.update((name, (set(), False)) for name in names)
                            skipped = False
                        piece.fetched[q] = self.fetch(sample.time, stamp=origin, origin_after=after,
                                                      sample=sample, given=piece.pairs_at(q))
                    else:
                        skipped = True
                    origin = after
                if skipped:
                    self._prev_hits.update((name, (set(), False)) for name in names)
            yield piece

    def _vectorised(self, piece: list[Sample]) -> dict[str, list[tuple[list[int], Any]]]:
        if self.vectoriser is None:
            live = sum(1 for s in piece if not s.eol)
            self.vector_stats.fallbacks[self._no_vectoriser] += live * len(self.bound)
            return {}
        return self.vectoriser.piece_columns(piece)

    def _pair_rows(self, columns: dict[str, list[tuple[list[int], Any]]],
                   count: int) -> dict[str, list[list[tuple[Any, Any]] | None]]:
        assert self.vectoriser is not None or not columns
        return self.vectoriser.rows(columns, count) if self.vectoriser is not None else {}

    def fetch(self, when: Timestamp, *, stamp: tuple[int, int] | None = None,
              origin_after: tuple[int, int] | None = None, sample: Sample | None = None,
              given: dict[str, list[tuple[Any, Any]]] | None = None) -> DerivedSample:
        """One fetch at ``when``. ``stamp`` is the result timestamp as libpcp holds it and
        ``origin_after`` the context origin after the fetch (both default to ``when``);
        ``sample`` is the operands' replay at ``when`` if already computed; ``given`` the
        values of metrics already evaluated for it (vectorised, stateless expressions)."""
        if sample is None:
            sample = self.replay.fetch(when)
        out = DerivedSample(when, eol=sample.eol)
        if sample.eol:                 # libpcp does not evaluate derived metrics at EOL
            return out
        self._sample = sample
        self._exact = (when.sec, when.nsec)
        self._real_stamp = stamp if stamp is not None else self._exact
        self._origin_after = origin_after if origin_after is not None else self._exact
        for b in self.bound:
            pairs = given.get(b.name) if given else None
            if pairs is not None:      # no state, no deviation: nothing else to record
                self._prev_hits[b.name] = (set(), False)
                out.values[b.name] = pairs
                continue
            # a previous sample kept for delta()/rate() carries its deviations one fetch on
            history = self._history[b.name]
            carried = self._prev_hits.get(b.name, (set(), False)) if history else (set(), False)
            self._hits, self._unknown = set(), False
            numval = self._eval(b.root, b)
            self._prev_hits[b.name] = (set(self._hits), self._unknown)
            self._hits |= carried[0]
            if self._unknown or carried[1]:
                out.unknown.add(b.name)
            state = self._state(b.root)
            if numval < 0:
                out.errors[b.name] = numval
                out.values[b.name] = []
            else:
                pairs = state.ivlist[:numval]
                out.values[b.name] = [(i, typed(v, b.desc.type)) for i, v in pairs]
            if self._hits:
                out.deviations[b.name] = set(self._hits)
        return out

    def interp_sample(self, derived: DerivedSample) -> Sample:
        """The fetch as an interp Sample keyed by the derived pmIDs (inst -> value)."""
        out = Sample(derived.time, eol=derived.eol)
        for name, pairs in derived.values.items():
            out.values[int(self.pmids[name])] = dict(pairs)
        return out

    def _eval(self, node: BoundNode, bound: Bound) -> int:
        kind = node.kind
        st = self._state(node)
        left, right = node.left, node.right
        if left is not None and kind not in ("NOVALUE", "INTEGER", "DOUBLE") and \
                (kind != "COLON" or node.bind in ("left", "both")):
            sts = self._eval(left, bound)
            if sts < 0:
                if kind == "COUNT":
                    st.numval, st.ivlist = 1, [(PM_IN_NULL, 0)]
                    return 1
                return sts
        if right is not None and (kind != "COLON" or node.bind in ("right", "both")):
            sts = self._eval(right, bound)
            if sts < 0:
                return sts
        method = getattr(self, "_eval_" + kind.lower(), None)
        if method is None:
            return self._eval_binary(node, st)
        got: int = method(node, st)
        return got

    def _eval_name(self, node: BoundNode, st: NodeState) -> int:
        if node.pmid is None or node.derived is not None:
            return 0                               # not found (lazy) or a nested metric
        self._save(node, st)
        assert self._sample is not None
        values = self._sample.values.get(node.pmid, {})
        st.ivlist = [(inst, values[inst]) for inst in self.order.get(node.pmid, [])
                     if inst in values and not isinstance(values[inst], NoValue)]
        st.numval = len(st.ivlist)
        return st.numval

    def _constant(self, node: BoundNode) -> Any:
        text = node.text or "0"
        ptype = node.desc.type
        if ptype in (PmType.FLOAT, PmType.DOUBLE):
            try:
                value = float(text) if text != "." else 0.0
            except ValueError:
                value = 0.0
            return F32(f32(value)) if ptype == PmType.FLOAT else value
        digits = re.match(r"\d*", text)
        number = int(digits.group(0)) if digits and digits.group(0) else 0
        if ptype in (PmType.I32, PmType.U32):      # atoi: strtol's long truncated to int
            return wrap_type(wrap(min(number, 2**63 - 1), 32, True), ptype)
        if ptype == PmType.I64:                    # strtoll saturates
            return min(number, 2**63 - 1)
        return number if number < 2**64 else 2**64 - 1

    def _eval_integer(self, node: BoundNode, st: NodeState) -> int:
        if node.save_last and st.ivlist and not st.last_ivlist:
            st.last_numval, st.last_ivlist = st.numval, st.ivlist
        if node.desc.indom.is_null:
            if not st.ever:
                st.ever = True
                st.numval, st.ivlist = 1, [(PM_IN_NULL, self._constant(node))]
            return st.numval
        insts, _ = self._at(self._origin_after, lambda t: self.indoms.at(node.desc.indom, t))
        if insts is None:
            st.numval, st.ivlist = PM_ERR_INDOM_LOG, []
            return st.numval
        ids = list(insts)
        if [i for i, _ in st.ivlist] != ids or not st.ever:
            st.ever = True
            value = self._constant(node)
            st.ivlist = [(i, value) for i in ids]
            st.numval = len(ids)
        return st.numval

    _eval_double = _eval_integer

    def _eval_defined(self, node: BoundNode, st: NodeState) -> int:
        self._save(node, st)
        st.numval, st.ivlist = 1, [(PM_IN_NULL, 1 if node.defined else 0)]
        return 1

    def _eval_novalue(self, node: BoundNode, st: NodeState) -> int:
        st.numval, st.ivlist = 0, []
        return 0

    _eval_anon = _eval_novalue
    _eval_scale = _eval_novalue
    _eval_pattern = _eval_novalue
    _eval_colon = _eval_novalue

    def _eval_not(self, node: BoundNode, st: NodeState) -> int:
        left = node.left
        assert left is not None
        ls = self._operand(node, st)
        if ls is None:
            return st.numval
        ptype = left.desc.type
        if ptype not in NUMERIC_TYPES:
            self._hit("string-values")
            st.numval = 0
            return 0
        out = []
        for inst, value in ls.ivlist[:ls.numval]:
            truth = UNPREDICTABLE if value is UNPREDICTABLE else int(value == 0)
            if ptype in (PmType.I32, PmType.U32) or truth is UNPREDICTABLE:
                out.append((inst, truth))
            elif self._hit("not-wide"):
                out.append((inst, self._not_wide(truth, ptype)))
            else:
                out.append((inst, truth if ptype in INTEGER_TYPES else
                            (F32(float(truth)) if ptype == PmType.FLOAT else float(truth))))
        st.ivlist = out
        return st.numval

    def _not_wide(self, truth: int, ptype: int) -> Any:
        """DERIVE-DEV-2: libpcp stores ``truth`` in value.ul, the low-addressed 4 bytes of
        the pmAtomValue of an entry of a list malloc'd afresh at every fetch; the other 4
        (the upper half on x86-64) keep what malloc left there."""
        if ptype == PmType.FLOAT:
            return F32.from_bits(truth)
        if self.unwritten is None:
            return UNPREDICTABLE
        bits = (self.unwritten * 0x01010101) << 32 | truth
        if ptype == PmType.DOUBLE:
            return struct.unpack("<d", struct.pack("<Q", bits))[0]
        return wrap_type(bits, ptype)

    def _eval_neg(self, node: BoundNode, st: NodeState) -> int:
        left = node.left
        assert left is not None
        ls = self._operand(node, st)
        if ls is None:
            return st.numval
        ptype = left.desc.type
        out: list[tuple[Any, Any]] = []
        for inst, value in ls.ivlist[:ls.numval]:
            if value is UNPREDICTABLE:
                out.append((inst, value))
            elif ptype in (PmType.I32, PmType.U32):
                out.append((inst, wrap(-value, 32, True)))
            elif ptype in (PmType.I64, PmType.U64):
                out.append((inst, wrap(-value, 64, True)))
            elif ptype == PmType.FLOAT:
                out.append((inst, F32(-float(value))))
            else:
                out.append((inst, -float(value)))
        st.ivlist = out
        return st.numval

    def _eval_binary(self, node: BoundNode, st: NodeState) -> int:
        left, right = node.left, node.right
        assert left is not None and right is not None
        ls, rs = self._state(left), self._state(right)
        self._save(node, st)
        if ls.numval <= 0 or rs.numval <= 0:
            st.numval = 0
            return 0
        lset, rset = not left.desc.indom.is_null, not right.desc.indom.is_null
        kind = node.kind
        relational = kind in REL or kind in BOOL
        rtype = promote(left.desc.type, right.desc.type) if relational else node.desc.type
        out = []
        lvals, rvals = ls.ivlist[:ls.numval], rs.ivlist[:rs.numval]
        if lset and rset:
            if any(inst is UNPREDICTABLE for inst, _ in lvals + rvals):
                self._unknown = True     # which instances pair depends on uninitialised memory
            rmap = {inst: value for inst, value in rvals}
            pairs = [(inst, lv, rmap[inst]) for inst, lv in lvals if inst in rmap]
            pairs = pairs[:min(len(lvals), len(rvals))]
        elif lset:
            pairs = [(inst, lv, rvals[0][1]) for inst, lv in lvals]
        elif rset:
            pairs = [(inst, lvals[0][1], rv) for inst, rv in rvals]
        else:
            pairs = [(rvals[0][0], lvals[0][1], rvals[0][1])]
        for inst, lv, rv in pairs:
            # an unpredictable truth value is still 0 or 1: the result may not depend on it
            results = [bin_op(rtype, kind, a, left.desc.type, left.mul, left.div, b,
                              right.desc.type, right.mul, right.div)
                       for a in _truth_values(left, lv) for b in _truth_values(right, rv)]
            if len(results) == 1:           # no unpredictable truth value: one outcome
                out.append((inst, results[0]))
                continue
            same = all(pairs_key([(0, r)]) == pairs_key([(0, results[0])]) for r in results)
            out.append((inst, results[0] if same else UNPREDICTABLE))
        st.ivlist, st.numval = out, len(out)
        return st.numval


def _truth_values(node: BoundNode, value: Any) -> list[Any]:
    """The values an operand can have: an unpredictable result of a relational or boolean
    operator is a U32 0 or 1; anything else unpredictable stays so."""
    if value is UNPREDICTABLE and (node.kind in REL or node.kind in BOOL):
        return [0, 1]
    return [value]


class DerivedView:
    """An Archive stand-in for the interp report code (pcpconform.oracles.interp.report): the
    derived metrics by pmID, instance domains from the archive."""

    def __init__(self, evaluator: Evaluator) -> None:
        self.archive = evaluator.archive
        self._descs = {int(evaluator.pmids[b.name]): Desc(
            evaluator.pmids[b.name], b.desc.type, b.desc.indom, b.desc.sem, b.desc.units,
            (b.name,)) for b in evaluator.bound}

    def desc(self, pmid: int) -> Any:
        return self._descs[int(pmid)]

    def metric_name(self, pmid: int) -> str:
        return self._descs[int(pmid)].names[0]

    def instances(self, indom: Any, at: Timestamp | None = None) -> dict[int, str]:
        return self.archive.instances(indom, at)

    def indom_history(self, indom: Any) -> list[Any]:
        return self.archive.indom_history(indom)
