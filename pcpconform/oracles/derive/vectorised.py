"""Derived metrics evaluated over a whole piece of a schedule at once, with numpy.

The common case is arithmetic, relational and boolean operators, unary minus, instant()
and constants over numeric operands whose instance lists stay the same for many fetches in a
row. Over such a *run* the pairing of DERIVE-EVAL-4 is fixed, so each node is one array
(fetches x instances) and each operator one numpy expression that reproduces
``arithmetic.bin_op`` (DERIVE-EVAL-5..-7) bit for bit: integers converted to the result
type and wrapping, FLOAT computed in double and rounded once to float32, DOUBLE operands
divided by their divisor and multiplied by their multiplier, ``0 / x`` is 0.

Nothing here keeps state from one fetch to the next, so a metric may go back and forth
between this path and the per-fetch ``Evaluator``. Everything else (delta(), rate() and
what is below them, aggregates, ternaries, instance filters, ``!``, constants with an
instance domain, nested or unknown names, short runs) is left to the per-fetch evaluator,
and each metric-fetch so left is counted with its ``Reason`` in ``VectorStats``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

from pcpconform.fastpath import Declined, register
from pcpconform.format.cnum import INTEGER_TYPES, NUMERIC_TYPES
from pcpconform.format.pmtypes import PM_IN_NULL, PmType, Timestamp
from pcpconform.format.values import F32
from pcpconform.io.archive import Archive
from pcpconform.oracles.derive.arithmetic import BOOL, REL, pairs_key
from pcpconform.oracles.derive.bind import Bound, BoundNode, promote
from pcpconform.oracles.derive.profiles import Profile
from pcpconform.oracles.derive.vector_stats import Reason, VectorStats
from pcpconform.oracles.interp.replay import NoValue, Sample

__all__ = ["Reason", "VectorStats", "Vectoriser", "Column", "typed_rows", "plan", "MIN_RUN"]

ARITH = frozenset({"PLUS", "MINUS", "STAR", "SLASH"})
_NONE = type(None)
#: below this many fetches with the same instance lists numpy costs more than it saves
MIN_RUN = 4

_DTYPE: dict[int, Any] = {PmType.I32: np.int32, PmType.U32: np.uint32, PmType.I64: np.int64,
                          PmType.U64: np.uint64, PmType.FLOAT: np.float32,
                          PmType.DOUBLE: np.float64}

#: the type of ``-x`` for each type of ``x`` (DERIVE-BIND-12)
_NEGATED: dict[int, int] = {PmType.I32: PmType.I32, PmType.U32: PmType.I32, PmType.I64: PmType.I64,
                            PmType.U64: PmType.I64, PmType.FLOAT: PmType.FLOAT,
                            PmType.DOUBLE: PmType.DOUBLE}


def plan(node: BoundNode) -> Reason | None:
    """None if every fetch of the expression under ``node`` can be evaluated here, else
    why not (a property of the bound tree, the same at every fetch)."""
    for n in _evaluated(node):
        if n.save_last or n.kind in ("DELTA", "RATE"):
            return Reason.HISTORY
        if n.desc.type not in NUMERIC_TYPES:
            return Reason.NAME if n.kind == "NAME" else Reason.NODE
        if n.kind == "NAME":
            if n.pmid is None or n.derived is not None:
                return Reason.NAME
        elif n.kind in ("INTEGER", "DOUBLE"):
            if not n.desc.indom.is_null:
                return Reason.CONSTANT_INDOM
        elif n.kind in ARITH or n.kind in REL or n.kind in BOOL:
            why = _binary_plan(n)
            if why is not None:
                return why
        elif n.kind == "INSTANT":
            if n.left is None or n.left.desc.type != n.desc.type:
                return Reason.NODE
        elif n.kind != "NEG" or n.desc.type != _NEGATED.get(n.left.desc.type if n.left else -1):
            return Reason.NODE
    return None


def _evaluated(node: BoundNode) -> list[BoundNode]:
    """The nodes the evaluator visits under ``node`` (not the ``meta=`` of a constant)."""
    if node.kind in ("INTEGER", "DOUBLE", "NOVALUE"):
        return [node]
    return [node] + [n for child in (node.left, node.right) if child is not None
                     for n in _evaluated(child)]


def _binary_plan(n: BoundNode) -> Reason | None:
    left, right = n.left, n.right
    assert left is not None and right is not None
    rtype = promote(left.desc.type, right.desc.type) if n.kind not in ARITH else n.desc.type
    if (n.kind not in ARITH and n.desc.type != PmType.U32) or \
            (n.kind == "SLASH" and n.desc.type != PmType.DOUBLE):
        return Reason.NODE                 # not the result types bin_op's callers give
    kinds = {left.desc.type, right.desc.type}
    if rtype in INTEGER_TYPES and not kinds <= INTEGER_TYPES:
        return Reason.MIXED_TYPES          # bin_op would truncate a float: never bound so
    if rtype == PmType.FLOAT and PmType.DOUBLE in kinds:
        return Reason.MIXED_TYPES
    if rtype == PmType.DOUBLE and (left.div == 0 or right.div == 0):
        return Reason.ZERO_DIVISOR         # x / 0 then * mul: left to ieee_div
    return None


@dataclass
class Column:
    """A node's values over a run: its instances in order, one row per fetch."""

    insts: tuple[Any, ...]
    values: np.ndarray            # shape (fetches, len(insts)); dtype of the node's type


class Vectoriser:
    """Evaluates the bound metrics whose ``plan`` allows it over pieces of a schedule.

    ``order`` is the evaluator's instance order per operand pmID (DERIVE-EVAL-3) and
    ``constant`` its reading of a literal (DERIVE-EVAL-17)."""

    def __init__(self, bounds: Sequence[Bound], order: dict[int, list[int]],
                 constant: Callable[[BoundNode], Any], *, min_run: int = MIN_RUN) -> None:
        self.order = order
        self.constant = constant
        self.min_run = min_run
        self.plans = {b.name: plan(b.root) for b in bounds}
        self.bounds = list(bounds)
        self.types = {b.name: b.desc.type for b in bounds}
        self.stats = VectorStats()

    def piece(self, samples: Sequence[Sample]) -> dict[str, list[list[tuple[Any, Any]] | None]]:
        """Per metric, per sample: its (instance, value) pairs as ``Evaluator.fetch`` gives
        them, or None where the per-fetch evaluator must do it (end-of-log samples
        included: nothing is evaluated there). Metrics planned out are left out."""
        return self.rows(self.piece_columns(samples), len(samples))

    def rows(self, columns: dict[str, list[tuple[list[int], Column]]],
             count: int) -> dict[str, list[list[tuple[Any, Any]] | None]]:
        """``piece_columns``' answer for ``count`` samples as ``piece`` gives it."""
        out: dict[str, list[list[tuple[Any, Any]] | None]] = {}
        for name, runs in columns.items():
            rows: list[list[tuple[Any, Any]] | None] = [None] * count
            for at, col in runs:
                for q, pairs in zip(at, _pairs(col, self.types[name])):
                    rows[q] = pairs
            out[name] = rows
        return out

    def piece_columns(self, samples: Sequence[Sample]) -> dict[str, list[tuple[list[int], Column]]]:
        """``piece`` as columns: per metric, its runs, each the positions in ``samples``
        it covers and the metric's values there (one row per position)."""
        live = [q for q, s in enumerate(samples) if not s.eol]
        names: dict[int, tuple[list[tuple[Any, ...]], list[list[Any]]]] = {}
        out: dict[str, list[tuple[list[int], Column]]] = {}
        with np.errstate(all="ignore"):     # wrap-around, inf and NaN are the C results
            for b in self.bounds:
                why = self.plans[b.name]
                if why is not None:
                    self.stats.fallbacks[why] += len(live)
                    continue
                pmids = list(dict.fromkeys(n.pmid for n in _evaluated(b.root)
                                           if n.kind == "NAME" and n.pmid is not None))
                for pmid in pmids:
                    if pmid not in names:
                        names[pmid] = self._name_rows(samples, live, pmid)
                runs: list[tuple[list[int], Column]] = []
                for lo, hi in self._runs(live, [names[p][0] for p in pmids]):
                    if hi - lo < self.min_run:
                        self.stats.fallbacks[Reason.SHORT_RUN] += hi - lo
                        continue
                    try:
                        col = self._node(b.root, names, lo, hi)
                    except Declined as declined:     # an operand value outside its dtype
                        assert isinstance(declined.reason, Reason)
                        self.stats.fallbacks[declined.reason] += hi - lo
                        continue
                    runs.append((live[lo:hi], col))
                    self.stats.vectorised += hi - lo
                out[b.name] = runs
        return out

    def _name_rows(self, samples: Sequence[Sample], live: list[int],
                   pmid: int) -> tuple[list[tuple[Any, ...]], list[list[Any]]]:
        """Per live sample, the instances with a value in the evaluator's order and the
        values (what ``Evaluator._eval_name`` lists)."""
        order = self.order.get(pmid, [])
        whole = tuple(order)
        known = _whole_rows(samples, live, pmid, order)
        rows, ok = known if known is not None else ((), [False] * len(live))
        keys: list[tuple[Any, ...]] = []
        vals: list[Any] = []
        last_key: tuple[Any, ...] = ()
        row: Sequence[Any]
        for k, q in enumerate(live):
            if ok[k]:                   # every instance has a value: the replay's columns
                key, row = whole, rows[k]
            else:
                values = samples[q].values.get(pmid, {})
                row = list(map(values.get, order))
                kinds = set(map(type, row))
                if NoValue in kinds or _NONE in kinds:      # some instances without a value
                    got = [(inst, v) for inst, v in zip(order, row)
                           if v is not None and not isinstance(v, NoValue)]
                    key = tuple(inst for inst, _ in got)
                    row = [v for _, v in got]
                else:
                    key = whole
            if key == last_key:
                key = last_key                  # one object per run: cheap comparisons
            last_key = key
            keys.append(key)
            vals.append(row)
        return keys, vals

    @staticmethod
    def _runs(live: list[int], keys: list[list[tuple[Any, ...]]]) -> list[tuple[int, int]]:
        """Positions in ``live`` [lo, hi) over which every operand's instances stay the same."""
        out = []
        lo = 0
        for k in range(1, len(live) + 1):
            if k == len(live) or any(col[k] is not col[k - 1] and col[k] != col[k - 1]
                                     for col in keys):
                out.append((lo, k))
                lo = k
        return out

    # -- the nodes over one run -----------------------------------------------------------
    def _node(self, node: BoundNode, names: dict[int, tuple[list[tuple[Any, ...]], list[list[Any]]]],
              lo: int, hi: int) -> Column:
        kind = node.kind
        if kind == "NAME":
            assert node.pmid is not None
            keys, vals = names[node.pmid]
            return Column(keys[lo], _array(vals[lo:hi], node.desc.type, len(keys[lo])))
        if kind in ("INTEGER", "DOUBLE"):
            value = self.constant(node)
            arr = _array([[value]], node.desc.type, 1)
            return Column((PM_IN_NULL,), np.repeat(arr, hi - lo, axis=0))
        assert node.left is not None
        left = self._node(node.left, names, lo, hi)
        if kind == "INSTANT":                  # the operand's values (outside delta()/rate())
            return left
        if kind == "NEG":
            return Column(left.insts, _negate(left.values, node.left.desc.type, node.desc.type))
        assert node.right is not None
        right = self._node(node.right, names, lo, hi)
        return _binary(node, left, right, hi - lo)


def _whole_rows(samples: Sequence[Sample], live: list[int], pmid: int,
                order: list[int]) -> tuple[list[tuple[Any, ...]], list[bool]] | None:
    """Per ``live`` fetch, the values of the instances in ``order``, and whether the
    vectorised replay says each of them has a value there (``Samples.whole``: the same
    instances as ``order``); None where the samples must be read one by one."""
    got = getattr(samples, "whole", {}).get(pmid)
    if got is None or not order:
        return None
    insts, cols, ok = got
    if len(insts) != len(order) or set(insts) != set(order) or len(ok) != len(live):
        return None
    if any(None in col for col in cols):        # no value where the replay has none to give
        return None
    pos = {inst: k for k, inst in enumerate(insts)}
    return list(zip(*[cols[pos[inst]] for inst in order])), ok


def _array(rows: list[list[Any]], ptype: int, width: int) -> np.ndarray:
    """Values of ``ptype`` as an array of its dtype, bits kept (a FLOAT from its bits)."""
    try:
        if ptype == PmType.FLOAT:
            bits = [[v.bits if isinstance(v, F32) else F32(float(v)).bits for v in r] for r in rows]
            return np.array(bits, dtype=np.uint32).reshape(len(rows), width).view(np.float32)
        return np.array(rows, dtype=_DTYPE[ptype]).reshape(len(rows), width)
    except (OverflowError, TypeError, ValueError):
        raise Declined(Reason.VALUES) from None


def _negate(values: np.ndarray, ptype: int, rtype: int) -> np.ndarray:
    """``-x`` as _eval_neg: integers wrap into the signed type, floats flip their sign."""
    if ptype in INTEGER_TYPES:
        wide = values.astype(np.int64) if ptype != PmType.U64 else values.view(np.int64)
        return np.asarray(np.negative(wide)).astype(_DTYPE[rtype])
    return np.asarray(np.negative(values))


def _pairing(node: BoundNode, left: Column, right: Column) -> tuple[tuple[Any, ...], Any, Any]:
    """The instances of the result and the columns of each operand that pair (DERIVE-EVAL-4)."""
    assert node.left is not None and node.right is not None
    lset, rset = not node.left.desc.indom.is_null, not node.right.desc.indom.is_null
    if lset and rset:
        rpos = {inst: j for j, inst in enumerate(right.insts)}
        keep = [(inst, i, rpos[inst]) for i, inst in enumerate(left.insts) if inst in rpos]
        keep = keep[:min(len(left.insts), len(right.insts))]
        if [i for _, i, _ in keep] == list(range(len(left.insts))) and \
                [j for _, _, j in keep] == list(range(len(right.insts))):
            return left.insts, slice(None), slice(None)     # the same instances in order
        return tuple(k[0] for k in keep), [k[1] for k in keep], [k[2] for k in keep]
    if lset:
        return left.insts, slice(None), [0] * len(left.insts)
    if rset:
        return right.insts, [0] * len(right.insts), slice(None)
    return right.insts[:1], [0], [0]


def _binary(node: BoundNode, left: Column, right: Column, fetches: int) -> Column:
    """bin_op over a run (arithmetic.bin_op is the reference)."""
    lnode, rnode = node.left, node.right
    assert lnode is not None and rnode is not None
    kind = node.kind
    if not left.insts or not right.insts:              # no values propagate
        return Column((), np.zeros((fetches, 0), dtype=_DTYPE[node.desc.type]))
    insts, li, ri = _pairing(node, left, right)
    a, b = left.values[:, li], right.values[:, ri]
    relational = kind in REL or kind in BOOL
    rtype = promote(lnode.desc.type, rnode.desc.type) if relational else node.desc.type
    if rtype in INTEGER_TYPES:
        dt = _DTYPE[rtype]
        a, b = a.astype(dt), b.astype(dt)          # C conversion: modular
    elif rtype == PmType.FLOAT:
        # each operand rounded once to float32, the operation in double, rounded again
        a, b = a.astype(np.float32).astype(np.float64), b.astype(np.float32).astype(np.float64)
    else:
        a = a.astype(np.float64) / float(lnode.div) * float(lnode.mul)
        b = b.astype(np.float64) / float(rnode.div) * float(rnode.mul)
    if relational:
        return Column(insts, _compare(kind, a, b).astype(np.uint32))
    if kind == "SLASH":                                # a DOUBLE result; 0 / x is 0
        got = np.where(a == 0, 0.0, a / b)
    else:
        got = np.asarray(_ARITH[kind](a, b))
    if rtype == PmType.FLOAT:
        got = got.astype(np.float32)
    return Column(insts, got)


#: relational operators as numpy's ufuncs (NaN compares false except !=, as in C)
_COMPARE: dict[str, Any] = {"LT": np.less, "LEQ": np.less_equal, "EQ": np.equal,
                            "GEQ": np.greater_equal, "GT": np.greater, "NEQ": np.not_equal}
_ARITH: dict[str, Any] = {"PLUS": np.add, "MINUS": np.subtract, "STAR": np.multiply}


def _compare(kind: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if kind == "AND":
        return np.asarray(np.logical_and(a != 0, b != 0))
    if kind == "OR":
        return np.asarray(np.logical_or(a != 0, b != 0))
    return np.asarray(_COMPARE[kind](a, b))


def typed_rows(col: Column, ptype: int, order: list[int] | None = None, *,
               as_text: bool = False) -> list[list[Any]]:
    """Each fetch's values (its instances in ``order``, positions in ``col.insts``, if
    given) as the Python values ``arithmetic.typed`` gives: FLOAT as F32 from its bits, or
    (``as_text``: for their text, which is the same) as the floats those hold."""
    values = col.values if order is None else col.values[:, order]
    if ptype == PmType.FLOAT and as_text:
        floats: list[list[Any]] = values.astype(np.float32).astype(np.float64).tolist()
        return floats
    if ptype == PmType.FLOAT:
        from_bits = F32.from_bits
        return [list(map(from_bits, row)) for row in values.astype(np.float32).view(np.uint32).tolist()]
    rows: list[list[Any]] = values.astype(_DTYPE[ptype]).tolist()
    return rows


def _pairs(col: Column, ptype: int) -> list[list[tuple[Any, Any]]]:
    """Each fetch's (instance, value) pairs, as ``Evaluator.fetch`` lists them."""
    if not col.insts:
        return [[] for _ in range(col.values.shape[0])]
    return [list(zip(col.insts, row)) for row in typed_rows(col, ptype)]


def _evaluated_samples(vectorise: bool, archive: Archive, bound: Sequence[Bound], profile: Profile,
                       emulate: frozenset[str], unwritten: int | None, start: Timestamp, step: int,
                       count: int) -> list[Any]:
    """Every derived sample of a schedule, as comparable values."""
    from pcpconform.oracles.derive.evaluate import Evaluator

    ev = Evaluator(archive, bound, profile, emulate=emulate, unwritten=unwritten, vectorise=vectorise)
    return [(ds.time, ds.eol, {n: pairs_key(v) for n, v in ds.values.items()}, ds.errors,
             ds.deviations, ds.unknown) for ds in ev.schedule(start, step, count)]


#: metric-fetches evaluated a run at a time against the per-fetch evaluator
VECTORISED = register("derive.vectorised", reference=partial(_evaluated_samples, False),
                      fast=partial(_evaluated_samples, True), reasons=Reason, inputs="derive-schedule")
