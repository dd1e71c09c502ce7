"""The evaluator's ternary operator: by instance as intended, by position as libpcp does
(spec/derive.md DERIVE-EVAL-12, DERIVE-DEV-3, DERIVE-DEV-11).
"""

from __future__ import annotations

from typing import Any

from pcpconform.format.cnum import NUMERIC_TYPES
from pcpconform.format.pmtypes import PM_IN_NULL
from pcpconform.oracles.derive.arithmetic import UNPREDICTABLE, pairs_key
from pcpconform.oracles.derive.bind import BoundNode
from pcpconform.oracles.derive.state import EvalCore, NodeState

__all__ = ["Ternary"]


class Ternary(EvalCore):
    """Node kind QUEST (its COLON is evaluated with it)."""

    def _eval_quest(self, node: BoundNode, st: NodeState) -> int:
        guard, colon = node.left, node.right
        assert guard is not None and colon is not None
        then, other = colon.left, colon.right
        assert then is not None and other is not None
        gs, ts, os_ = self._state(guard), self._state(then), self._state(other)
        self._save(node, st)
        if node.desc.type not in NUMERIC_TYPES:
            self._hit("string-values")
        if gs.numval <= 0:
            st.numval = gs.numval
            return st.numval
        if ts.numval <= 0 and then.kind != "NOVALUE" and colon.bind in ("left", "both"):
            st.numval = ts.numval
            return st.numval
        if os_.numval <= 0 and other.kind != "NOVALUE" and colon.bind in ("right", "both"):
            st.numval = os_.numval
            return st.numval
        if colon.bind != "both":
            chosen = ts if colon.bind == "left" else os_
            st.ivlist, st.numval = list(chosen.ivlist[:chosen.numval]), chosen.numval
            return st.numval
        pick_inst = then if not (then.desc.indom.is_null and not other.desc.indom.is_null) \
            else other
        by_position = self._positional(guard, then, other, pick_inst, gs, ts, os_)
        by_id = self._by_instance(guard, then, other, pick_inst, gs, ts, os_)
        if pairs_key(by_position) != pairs_key(by_id) and self._hit("ternary-positional"):
            st.ivlist, st.numval = by_position, len(by_position)
        else:
            st.ivlist, st.numval = by_id, len(by_id)
        return st.numval

    def _truth(self, ptype: int, value: Any) -> Any:
        return UNPREDICTABLE if value is UNPREDICTABLE else value != 0

    def _positional(self, guard: BoundNode, then: BoundNode, other: BoundNode,
                    pick_inst: BoundNode, gs: NodeState, ts: NodeState,
                    os_: NodeState) -> list[tuple[Any, Any]]:
        """libpcp's loop: entry i takes guard[i], the picked branch's [i] (or [0]) and
        pick_inst's [i] instance; a novalue() pick leaves entry i unwritten but shortens
        the list by one."""
        numval = max(ts.numval, os_.numval)
        slots: list[tuple[Any, Any] | None] = [None] * numval
        count = numval
        pick: BoundNode | None = None
        instate = self._state(pick_inst)
        for i in range(numval):
            garbage = False
            if i < gs.numval:
                truth = self._truth(guard.desc.type, gs.ivlist[i][1])
                if truth is UNPREDICTABLE:
                    if then.kind == "NOVALUE" or other.kind == "NOVALUE":
                        self._unknown = True       # dropped or not: cannot tell
                    garbage, truth = True, True
                pick = then if truth else other
            assert pick is not None
            if pick.kind == "NOVALUE":
                count -= 1
                continue
            ps = self._state(pick)
            value = ps.ivlist[i][1] if i < ps.numval else ps.ivlist[0][1]
            inst = instate.ivlist[i][0] if i < instate.numval else UNPREDICTABLE
            if garbage:
                value = UNPREDICTABLE
            slots[i] = (inst, value)
        return [s if s is not None else (UNPREDICTABLE, UNPREDICTABLE) for s in slots[:count]]

    def _by_instance(self, guard: BoundNode, then: BoundNode, other: BoundNode,
                     pick_inst: BoundNode, gs: NodeState, ts: NodeState,
                     os_: NodeState) -> list[tuple[Any, Any]]:
        """The intended ternary: per instance, the guard's value picks the branch."""
        def table(node: BoundNode, s: NodeState) -> dict[Any, Any] | None:
            if node.kind == "NOVALUE":
                return {}
            return None if node.desc.indom.is_null else dict(s.ivlist[:s.numval])

        tables = [(guard, gs, table(guard, gs)), (then, ts, table(then, ts)),
                  (other, os_, table(other, os_))]
        order: list[Any] = []
        first = [t for t in tables if t[0] is pick_inst] + [t for t in tables
                                                             if t[0] is not pick_inst]
        for node_, s, tab in first:
            if tab is not None and node_.kind != "NOVALUE":
                for inst, _ in s.ivlist[:s.numval]:
                    if inst not in order:
                        order.append(inst)
        if not order:
            order = [ts.ivlist[0][0] if ts.numval > 0 else
                     (os_.ivlist[0][0] if os_.numval > 0 else PM_IN_NULL)]

        def value_of(node: BoundNode, s: NodeState, tab: dict[Any, Any] | None, inst: Any) -> Any:
            if node.kind == "NOVALUE":
                return None
            if tab is None:
                return s.ivlist[0][1] if s.numval > 0 else None
            return tab.get(inst)

        out = []
        for inst in order:
            g = value_of(guard, gs, tables[0][2], inst)
            if g is None:
                continue
            truth = self._truth(guard.desc.type, g)
            branch = tables[1] if truth else tables[2]
            if truth is UNPREDICTABLE:
                out.append((inst, UNPREDICTABLE))
                continue
            value = value_of(branch[0], branch[1], branch[2], inst)
            if value is None:
                continue
            out.append((inst, value))
        return out
