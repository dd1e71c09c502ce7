"""The evaluator's functions: delta(), rate(), instant(), rescale(), scalar(), the
aggregates, and instance filters ([name], matchinst()) (spec/derive.md DERIVE-EVAL-8..-11,
DERIVE-EVAL-13..-15, DERIVE-DEV-1, -4..-8, -12).
"""

from __future__ import annotations

from typing import Any

from pcpconform.format.cnum import INTEGER_TYPES, NUMERIC_TYPES, f32, wrap, wrap_type
from pcpconform.format.pmtypes import PM_IN_NULL, PmSem, PmType
from pcpconform.format.values import F32
from pcpconform.oracles.derive.arithmetic import (
    UNPREDICTABLE,
    as_float,
    ieee_div,
    time_scale,
    timespec_seconds,
    timespec_sub,
)
from pcpconform.oracles.derive.bind import BoundNode
from pcpconform.oracles.derive.instances import regex_for
from pcpconform.oracles.derive.state import EvalCore, NodeState
from pcpconform.oracles.derive.units import ConvScaleError, conv_scale

__all__ = ["Functions"]


class Functions(EvalCore):
    """Node kinds DELTA, RATE, INSTANT, RESCALE, SCALAR, COUNT, SUM, AVG, MIN, MAX and
    FILTERINST."""

    def _no_history(self, node: BoundNode) -> bool:
        """delta()/rate() over a node that never saves a previous sample."""
        assert node.left is not None
        child = node.left
        if child.kind == "DEFINED" or (child.kind == "FILTERINST" and child.left is not None \
                and child.left.exact):
            return self._hit("no-history")
        if child.kind == "INSTANT":
            self._hit("instant-history")
        return False

    def _eval_delta(self, node: BoundNode, st: NodeState) -> int:
        left = node.left
        assert left is not None
        ls = self._state(left)
        st.last_stamp, st.stamp = st.stamp, self._real_stamp
        self._save(node, st)
        if self._no_history(node):
            return 0
        numval = min(ls.numval, ls.last_numval)
        if numval <= 0:
            st.numval = numval
            return numval
        prev = {inst: value for inst, value in ls.last_ivlist[:ls.last_numval]}
        ptype = left.desc.type
        out = []
        for inst, now in ls.ivlist[:ls.numval]:
            if inst not in prev:
                continue
            before = prev[inst]
            if now is UNPREDICTABLE and before is UNPREDICTABLE and left.kind in ("MIN", "MAX"):
                # DERIVE-DEV-1 below delta()/rate(): both lists are the allocator's, the same
                # bits every time (measured in four heap states): the difference is 0
                now = before = 0 if ptype in INTEGER_TYPES else 0.0
            if now is UNPREDICTABLE or before is UNPREDICTABLE:
                if node.kind == "RATE" and self.profile.rate_drops_decreases \
                        and left.desc.sem == PmSem.COUNTER and ptype != PmType.I32:
                    self._unknown = True           # dropped or not: cannot tell
                out.append((inst, UNPREDICTABLE))
                continue
            if node.kind == "DELTA":
                out.append((inst, self._delta(ptype, now, before)))
                continue
            value = self._rate_diff(ptype, left.desc.sem, now, before)
            if value is None:
                continue
            sec, nsec = timespec_sub(st.stamp, st.last_stamp)
            value = ieee_div(value, timespec_seconds(sec, nsec))
            if left.desc.units.dimTime == 1:
                value *= time_scale(left.desc.units.scaleTime)
            out.append((inst, value))
        st.ivlist, st.numval = out, len(out)
        return st.numval

    _eval_rate = _eval_delta

    @staticmethod
    def _delta(ptype: int, now: Any, before: Any) -> Any:
        if ptype == PmType.I32:
            return wrap(now - before, 32, True)
        if ptype == PmType.U32:
            return now - before                     # exact in the 64-bit result
        if ptype == PmType.I64:
            return wrap(now - before, 64, True)
        if ptype == PmType.U64:
            return float(now) - float(before)       # DOUBLE result
        if ptype == PmType.FLOAT:
            return F32(f32(float(now) - float(before)))
        return float(now) - float(before)

    def _rate_diff(self, ptype: int, sem: int, now: Any, before: Any) -> float | None:
        drops = self.profile.rate_drops_decreases and sem == PmSem.COUNTER
        if ptype == PmType.I32:
            return float(wrap(now - before, 32, True))
        if drops and now < before:
            return None
        if ptype == PmType.U32:
            return float(wrap(now - before, 32, False))
        if ptype == PmType.I64:
            return float(wrap(now - before, 64, True))
        if ptype == PmType.U64:
            return float(wrap(now - before, 64, False))
        if ptype == PmType.FLOAT:
            return f32(float(now) - float(before))
        return float(now) - float(before)

    def _eval_instant(self, node: BoundNode, st: NodeState) -> int:
        left = node.left
        assert left is not None
        ls = self._state(left)
        if node.save_last:
            st.last_numval, st.last_ivlist = st.numval, st.ivlist
        st.last_stamp, st.stamp = st.stamp, self._real_stamp
        st.numval = ls.numval
        st.ivlist = list(ls.ivlist) if ls.numval > 0 else []
        return st.numval

    def _eval_rescale(self, node: BoundNode, st: NodeState) -> int:
        left, right = node.left, node.right
        assert left is not None and right is not None
        ls = self._operand(node, st)
        if ls is None:
            return st.numval
        out: list[tuple[Any, Any]] = []
        for inst, value in ls.ivlist[:ls.numval]:
            if value is UNPREDICTABLE:
                out.append((inst, value))
                continue
            try:
                out.append((inst, conv_scale(node.desc.type, value, left.desc.units,
                                             right.desc.units)))
            except ConvScaleError:
                continue
        st.ivlist, st.numval = out, len(out)
        return st.numval

    def _eval_scalar(self, node: BoundNode, st: NodeState) -> int:
        left = node.left
        assert left is not None
        ls = self._state(left)
        self._save(node, st)
        st.numval = min(ls.numval, 1)
        if node.desc.type not in NUMERIC_TYPES:
            self._hit("string-values")
        if ls.numval > 0:
            st.ivlist = [(PM_IN_NULL, ls.ivlist[0][1])]
        elif not self.profile.instance_fixes:
            self._hit("scalar-empty")
        return st.numval

    def _eval_count(self, node: BoundNode, st: NodeState) -> int:
        assert node.left is not None
        ls = self._state(node.left)
        self._save(node, st)
        st.numval, st.ivlist = 1, [(PM_IN_NULL, ls.numval)]
        return 1

    def _eval_sum(self, node: BoundNode, st: NodeState) -> int:
        left = node.left
        assert left is not None
        ls = self._state(left)
        self._save(node, st)
        ptype = node.desc.type
        total: Any = 0 if ptype in INTEGER_TYPES else 0.0
        for _, value in ls.ivlist[:ls.numval]:
            if value is UNPREDICTABLE or total is UNPREDICTABLE:
                total = UNPREDICTABLE
            elif ptype in INTEGER_TYPES:
                total = wrap_type(total + value, ptype)
            elif ptype == PmType.FLOAT:
                total = f32(total + float(value))
            else:
                total = total + float(value)
        st.numval, st.ivlist = 1, [(PM_IN_NULL, total)]
        return 1

    def _eval_avg(self, node: BoundNode, st: NodeState) -> int:
        left = node.left
        assert left is not None
        ls = self._state(left)
        self._save(node, st)
        n = ls.numval
        total: Any = 0.0
        for _, value in ls.ivlist[:max(n, 0)]:
            if value is UNPREDICTABLE or total is UNPREDICTABLE:
                total = UNPREDICTABLE
                continue
            part = f32(as_float(value, left.desc.type) / float(n))
            total = f32(total + part)
        st.numval, st.ivlist = 1, [(PM_IN_NULL, total)]
        return 1

    def _eval_min(self, node: BoundNode, st: NodeState) -> int:
        left = node.left
        assert left is not None
        ls = self._state(left)
        old, had = st.ivlist, st.ever
        self._save(node, st)
        st.ever = True
        best: Any = None
        for _, value in ls.ivlist[:max(ls.numval, 0)]:
            if value is UNPREDICTABLE or best is UNPREDICTABLE:
                best = UNPREDICTABLE
            elif best is None or (best > value if node.kind == "MIN" else best < value):
                best = value
        if best is not None:
            st.numval, st.ivlist = 1, [(PM_IN_NULL, best)]
            return 1
        if self._hit("minmax-empty"):
            # libpcp keeps what its list held: the previous value, or memory never
            # written (first use, or a fresh list because delta()/rate() took the old one)
            stale = old[0][1] if had and old and not node.save_last \
                else self._fresh(node.desc.type)
            st.numval, st.ivlist = 1, [(PM_IN_NULL, stale)]
            return 1
        st.numval = 0
        return 0

    _eval_max = _eval_min

    def _eval_filterinst(self, node: BoundNode, st: NodeState) -> int:
        pattern, right = node.left, node.right
        assert pattern is not None and right is not None
        rs = self._state(right)
        st.last_stamp, st.stamp = st.stamp, self._real_stamp
        if pattern.exact:
            return self._select_exact(node, st, rs, right)
        previous = st.numval
        self._save(node, st)
        regex = regex_for(pattern.text or "")
        out = []
        for inst, value in rs.ivlist[:max(rs.numval, 0)]:
            entry = st.matches.get(inst)
            if entry is None:
                name, contested = self._at(self._real_stamp,
                                           lambda t, i=inst: self.indoms.name(right.desc.indom, t, i))
                if name is None:
                    match = 0
                else:
                    match = int(regex.search(name.split(" ", 1)[0]) != pattern.negate)
                entry = st.matches[inst] = [match, 0, contested]
            elif entry[2]:
                self._hit("lookup-time")         # a cached answer of the deviation
            entry[1] += 1
            if entry[0]:
                out.append((inst, value))
        st.ivlist, st.numval = out, len(out)
        if node.save_last and previous > 0 and out and self._hit("matchinst-history"):
            # libpcp appends the matches after `previous` entries it never writes
            self._unknown = True
        st.used += 1
        if st.used >= 100:                       # libpcp's REGEX_INST_COMPACT
            st.matches = {i: [m, 0, c] for i, (m, used, c) in st.matches.items() if used >= 50}
            st.used = 0
        return st.numval

    def _select_exact(self, node: BoundNode, st: NodeState, rs: NodeState,
                      right: BoundNode) -> int:
        assert node.left is not None
        if node.left.paren and not self.profile.instance_fixes:
            self._hit("instselect-expr")
        self._save(node, st)
        for inst, value in rs.ivlist[:max(rs.numval, 0)]:
            if st.exact_inst is None:
                assert node.left is not None
                text = node.left.text or ""
                found, st.exact_contested = self._at(
                    self._origin_after, lambda t, x=text: self.indoms.lookup(right.desc.indom, t, x))
                if found is None:
                    break
                st.exact_inst = found
            elif st.exact_contested:
                self._hit("lookup-time")
            if st.exact_inst == inst:
                st.ivlist, st.numval = [(inst, value)], 1
                break
        return st.numval
