"""What the evaluator keeps: the named libpcp deviations, per-node state (libpcp's node
info: the value list, the previous one for delta()/rate(), matchinst() caches), one fetch's
result, and the evaluation plumbing every node kind shares (spec/derive.md DERIVE-EVAL-*,
DERIVE-DEV-*).
"""

from __future__ import annotations

import bisect
import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pcpconform.format.cnum import wrap_type
from pcpconform.format.pmtypes import PmID, PmType, Timestamp
from pcpconform.format.values import F32
from pcpconform.io.archive import Archive
from pcpconform.oracles.derive.arithmetic import UNPREDICTABLE
from pcpconform.oracles.derive.bind import Bound, BoundNode
from pcpconform.oracles.derive.instances import InDoms
from pcpconform.oracles.derive.profiles import Profile
from pcpconform.oracles.interp.replay import Replay, Sample

__all__ = ["DEVIATIONS", "EMULATABLE", "CRASHES", "PM_ERR_INDOM_LOG", "NodeState", "ColumnPiece",
           "DerivedSample", "EvalCore", "derived_pmid"]

#: libpcp defects the evaluator knows (spec/derive.md DERIVE-DEV-n)
DEVIATIONS = {
    "minmax-empty": "DERIVE-DEV-1: min()/max() of no values repeat an old or uninitialised value",
    "not-wide": "DERIVE-DEV-2: !x of a 64-bit, FLOAT or DOUBLE x is a U32 read as x's type",
    "ternary-positional": "DERIVE-DEV-3: ?: pairs guard and branches by position",
    "no-history": "DERIVE-DEV-4: delta()/rate() of x[inst] or defined() never have values",
    "lookup-time": "DERIVE-DEV-5: instance names are looked up at the context's origin",
    "scalar-empty": "DERIVE-DEV-6: 6.0.3 crashes on scalar() of no values",
    "instselect-expr": "DERIVE-DEV-7: 6.0.3 crashes on (expr)[inst]",
    "instant-history": "DERIVE-DEV-8: delta()/rate() of instant() double-frees",
    "string-values": "DERIVE-DEV-11: !, ?: and scalar() of strings corrupt libpcp's heap",
    "matchinst-history": "DERIVE-DEV-12: delta()/rate() of matchinst() see uninitialised entries",
}
#: the deviations whose libpcp behaviour the evaluator can reproduce
EMULATABLE = frozenset({"minmax-empty", "not-wide", "ternary-positional", "no-history",
                        "lookup-time", "matchinst-history"})
#: the deviations seen to kill libpcp (a signal) rather than give wrong values
CRASHES = frozenset({"scalar-empty", "instselect-expr", "instant-history", "string-values",
                     "matchinst-history"})
PM_ERR_INDOM_LOG = -12379


def derived_pmid(k: int) -> PmID:
    """The pmID libpcp gives the k-th (from 0) globally registered derived metric."""
    return PmID.from_parts(511, 0, k + 1)


@dataclass
class NodeState:
    numval: int = 0
    ivlist: list[tuple[Any, Any]] = field(default_factory=list)
    last_numval: int = 0
    last_ivlist: list[tuple[Any, Any]] = field(default_factory=list)
    stamp: tuple[int, int] = (0, 0)
    last_stamp: tuple[int, int] = (0, 0)
    ever: bool = False                      # ivlist allocated (aggregates, constants)
    matches: dict[int, list[Any]] = field(default_factory=dict)  # inst -> [match, used, contested]
    used: int = 0
    exact_inst: int | None = None
    exact_contested: bool = False


@dataclass
class DerivedSample:
    """One fetch: per derived metric, the (instance, value) pairs in libpcp's order."""

    time: Timestamp
    eol: bool = False
    values: dict[str, list[tuple[Any, Any]]] = field(default_factory=dict)
    errors: dict[str, int] = field(default_factory=dict)
    deviations: dict[str, set[str]] = field(default_factory=dict)
    #: emulation only: metrics whose very instance list depends on uninitialised memory
    unknown: set[str] = field(default_factory=set)


@dataclass
class ColumnPiece:
    """A piece of a schedule as ``Evaluator.schedule_columns`` gives it: the operands'
    samples; per derived metric, the runs the vectoriser evaluated (the positions each
    covers and a ``vectorised.Column``); and ``fetched``, by position, the samples some
    metric of was left to ``Evaluator.fetch`` (end-of-log ones included)."""

    samples: list[Any]
    columns: dict[str, list[tuple[list[int], Any]]]
    pair_rows: Callable[[dict[str, list[tuple[list[int], Any]]], int], dict[str, list[Any]]]
    fetched: dict[int, DerivedSample] = field(default_factory=dict)
    #: per (metric, run): the run's pairs, made once, when first asked for
    _run_pairs: dict[tuple[str, int], list[Any]] = field(default_factory=dict)

    def _pairs(self, name: str, r: int) -> list[Any]:
        made = self._run_pairs.get((name, r))
        if made is None:
            at, col = self.columns[name][r]
            made = self._run_pairs[(name, r)] = self.pair_rows({name: [(list(range(len(at))), col)]}, len(at))[name]
        return made

    def rows(self) -> dict[str, list[Any]]:
        """Per metric, per sample: its pairs where a column has it, else None."""
        out: dict[str, list[Any]] = {}
        for name, runs in self.columns.items():
            got: list[Any] = [None] * len(self.samples)
            for r, (at, _) in enumerate(runs):
                for q, pairs in zip(at, self._pairs(name, r)):
                    got[q] = pairs
            out[name] = got
        return out

    def pairs_at(self, q: int) -> dict[str, Any]:
        """Per metric with a column at sample ``q``, its pairs there (``rows`` of one sample)."""
        out: dict[str, Any] = {}
        for name, runs in self.columns.items():
            for r, (at, _) in enumerate(runs):
                if at[0] <= q <= at[-1]:
                    j = bisect.bisect_left(at, q)
                    if at[j] == q:
                        out[name] = self._pairs(name, r)[j]
                    break
        return out


class EvalCore:
    """The state and helpers shared by the evaluator's node kinds (evaluate.Evaluator
    combines them with functions.Functions and ternary.Ternary)."""

    archive: Archive
    bound: list[Bound]
    profile: Profile
    emulate: frozenset[str]
    replay: Replay
    order: dict[int, list[int]]
    indoms: InDoms
    states: dict[int, NodeState]
    pmids: dict[str, PmID]
    _sample: Sample | None
    _exact: tuple[int, int]
    _real_stamp: tuple[int, int]
    _origin_after: tuple[int, int]
    _hits: set[str]
    _unknown: bool
    unwritten: int | None

    def _fresh(self, ptype: int) -> Any:
        """A value of ``ptype`` read from memory libpcp malloc'd and never wrote: every
        byte is ``unwritten`` where the heap state fixes it, else UNPREDICTABLE."""
        if self.unwritten is None:
            return UNPREDICTABLE
        bits = self.unwritten * 0x0101010101010101
        if ptype in (PmType.I32, PmType.U32, PmType.I64, PmType.U64):
            return wrap_type(bits, ptype)
        if ptype == PmType.FLOAT:
            return F32.from_bits(bits & 0xFFFFFFFF)
        if ptype == PmType.DOUBLE:
            return struct.unpack("<d", struct.pack("<Q", bits))[0]
        return UNPREDICTABLE

    def _state(self, node: BoundNode) -> NodeState:
        key = id(node)
        if key not in self.states:
            self.states[key] = NodeState()
        return self.states[key]

    def _at(self, libpcp_time: tuple[int, int], lookup: Any) -> tuple[Any, bool]:
        """``lookup(time)`` at the fetch time, or at the time libpcp uses when that
        answers differently and DERIVE-DEV-5 is emulated; and whether they differ."""
        intended = lookup(self._exact)
        if libpcp_time == self._exact:
            return intended, False
        theirs = lookup(libpcp_time)
        if theirs == intended:
            return intended, False
        return (theirs if self._hit("lookup-time") else intended), True

    def _hit(self, name: str) -> bool:
        """Record that deviation ``name`` arose; True if libpcp's behaviour is wanted."""
        self._hits.add(name)
        return name in self.emulate

    def _save(self, node: BoundNode, st: NodeState) -> None:
        """free_ivlist/save_ivlist: keep this sample as the previous one for delta()."""
        if node.save_last:
            st.last_numval, st.last_ivlist = st.numval, st.ivlist
        st.ivlist = []
        st.numval = 0

    def _operand(self, node: BoundNode, st: NodeState) -> NodeState | None:
        """Start a node whose result has its operand's values: save the previous result,
        take the operand's numval; the operand's state, or None when there are no values."""
        assert node.left is not None
        ls = self._state(node.left)
        self._save(node, st)
        st.numval = ls.numval
        return ls if st.numval > 0 else None
