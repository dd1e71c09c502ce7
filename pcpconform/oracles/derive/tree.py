"""The bound expression tree: descriptors and nodes shaped like libpcp's node_t
(spec/derive.md DERIVE-BIND-*), shared by the binder and the evaluator."""

from __future__ import annotations

from dataclasses import dataclass

from pcpconform.format.pmtypes import PmInDom, PmType, PmUnits
from pcpconform.oracles.derive.units import units_str

__all__ = ["DerivedDesc", "BoundNode", "Bound", "ZERO_DESC", "NO_UNITS"]



@dataclass(frozen=True)
class DerivedDesc:
    """A derived metric's (or a subexpression's) pmDesc, without the pmID."""

    type: int
    sem: int
    indom: PmInDom
    units: PmUnits

    @property
    def units_str(self) -> str:
        return units_str(self.units)


#: the descriptor of an operand libpcp could not look up in a ternary (calloc'd memory):
#: type 32, semantics 0, instance domain 0.0, no units
ZERO_DESC = DerivedDesc(PmType.I32, 0, PmInDom(0), PmUnits())
NO_UNITS = PmUnits()


@dataclass(eq=False)
class BoundNode:
    """One node of a bound expression, shaped like libpcp's node_t."""

    kind: str                       # libpcp node type without "N_": NAME, PLUS, QUEST, ...
    desc: DerivedDesc = ZERO_DESC
    left: BoundNode | None = None
    right: BoundNode | None = None
    text: str | None = None         # libpcp's np->value: a name, a literal, a pattern
    pmid: int | None = None         # NAME: the operand's pmID; None when not found (lazy)
    mul: int = 1                    # scale factors applied when this node is an operand
    div: int = 1                    # of + - * / (int, wrapping as C's int does)
    bind: str = "both"              # COLON: "left", "right" or "both" sides bound
    defined: bool = False           # DEFINED: whether the name was found
    negate: bool = False            # PATTERN: matchinst(!/re/)
    exact: bool = False             # PATTERN: name[inst] rather than matchinst()
    paren: bool = False             # PATTERN: written (expr)[inst], even for a name
    save_last: bool = False         # operand of delta()/rate(): keeps one previous sample
    derived: str | None = None      # NAME of another derived metric (pcp-6.0 nesting)
    spec_flags: frozenset[str] = frozenset()   # mkconst/novalue: fields given in the spec

    def walk(self) -> list[BoundNode]:
        out = [self]
        for child in (self.left, self.right):
            if child is not None:
                out += child.walk()
        return out


@dataclass
class Bound:
    """A bound derived metric: its descriptor and expression, or the real metric that
    masks it (DERIVE-BIND-1)."""

    name: str
    desc: DerivedDesc
    root: BoundNode
    masked: bool = False

    def operand_pmids(self) -> list[int]:
        """The metrics a fetch of this derived metric needs, in tree order, once each
        (names under mkconst/novalue meta= are never fetched)."""
        out: list[int] = []

        def visit(node: BoundNode | None) -> None:
            if node is None or node.kind in ("NOVALUE", "INTEGER", "DOUBLE"):
                return
            if node.kind == "NAME" and node.pmid is not None and node.derived is None \
                    and node.pmid not in out:
                out.append(node.pmid)
            visit(node.left)
            visit(node.right)
        visit(self.root)
        return out
