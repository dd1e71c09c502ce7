"""Binding: the semantic checks and the descriptor of a derived metric, as libpcp does them.

``bind(node, name, metadata, profile)`` turns a parsed expression (pcpconform.oracles.derive.ast)
into a tree of ``BoundNode``s that mirrors libpcp's expression tree (one node kind per
libpcp node type), with every node's descriptor, the operand scale factors, the ternary
binding decisions and the operand pmIDs. It raises ``DeriveSemanticError`` with the text
libpcp prints when the definition is refused. The rules are spec/derive.md DERIVE-BIND-*;
syntax is spec/derive-grammar.md.

libpcp binds in two passes, and so does this module: first every operand name is looked
up (the first unknown one fails the binding, left to right), then descriptors are built
bottom up and checked (the first failing check wins).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any, NoReturn, Protocol

from pcpconform.errors import DeriveSemanticError
from pcpconform.format.cnum import NUMERIC_TYPES
from pcpconform.format.pmtypes import PM_ID_NULL, PmInDom, PmSem, PmType, PmUnits
from pcpconform.oracles.derive import ast
from pcpconform.oracles.derive.bind_rules import first_unbound, map_units, promote, static_guard
from pcpconform.oracles.derive.profiles import Profile
from pcpconform.oracles.derive.tree import NO_UNITS, ZERO_DESC, Bound, BoundNode, DerivedDesc
from pcpconform.oracles.derive.units import ConvScaleError, UnitsError, conv_factors, parse_units, units_str

__all__ = ["DerivedDesc", "BoundNode", "Bound", "DeriveSemanticError", "bind", "NUMERIC",
           "ZERO_DESC", "OPERATOR_KINDS", "promote"]

PM_INDOM_NULL = PmInDom(None)
NUMERIC = NUMERIC_TYPES

#: libpcp node kind of each operator (n_type_c prints the operator itself)
OPERATOR_KINDS = {"+": "PLUS", "-": "MINUS", "*": "STAR", "/": "SLASH", "<": "LT",
                  "<=": "LEQ", "==": "EQ", ">=": "GEQ", ">": "GT", "!=": "NEQ",
                  "&&": "AND", "||": "OR"}
_OPERATOR_TEXT = {kind: op for op, kind in OPERATOR_KINDS.items()}
_ARITH = frozenset({"PLUS", "MINUS", "STAR", "SLASH"})
_RELATIONAL = frozenset({"LT", "LEQ", "EQ", "GEQ", "GT", "NEQ"})
_BOOLEAN = frozenset({"AND", "OR"})
_FUNCTION_KINDS = {"avg": "AVG", "count": "COUNT", "delta": "DELTA", "max": "MAX",
                   "min": "MIN", "sum": "SUM", "anon": "ANON", "rate": "RATE",
                   "instant": "INSTANT", "defined": "DEFINED", "scalar": "SCALAR"}
_ANON_TYPES = {"PM_TYPE_32": PmType.I32, "PM_TYPE_U32": PmType.U32, "PM_TYPE_64": PmType.I64,
               "PM_TYPE_U64": PmType.U64, "PM_TYPE_FLOAT": PmType.FLOAT,
               "PM_TYPE_DOUBLE": PmType.DOUBLE}
_SPEC_TYPES = {"32": PmType.I32, "u32": PmType.U32, "64": PmType.I64, "u64": PmType.U64,
               "float": PmType.FLOAT, "double": PmType.DOUBLE}
_SPEC_SEMS = {"counter": PmSem.COUNTER, "instant": PmSem.INSTANT, "discrete": PmSem.DISCRETE}


class _Metadata(Protocol):
    def desc(self, metric: str) -> Any: ...


def _as_desc(raw: Any) -> DerivedDesc | None:
    """A metric's descriptor as libpcp would see it, or None for unusable metadata."""
    try:
        units = raw.units if isinstance(raw.units, PmUnits) else PmUnits.from_word(int(raw.units))
        indom = PmInDom(raw.indom) if not isinstance(raw.indom, PmInDom) else raw.indom
        return DerivedDesc(int(raw.type), int(raw.sem), indom, units)
    except (AttributeError, TypeError, ValueError):
        return None


class _Source:
    """Name lookups in the context: the archive's metrics, then other derived metrics."""

    def __init__(self, metadata: Any, derived: Mapping[str, Bound | None]) -> None:
        self.metadata = metadata
        self.derived = derived

    def real(self, name: str) -> tuple[int, DerivedDesc | None] | None:
        md = self.metadata
        try:
            if isinstance(md, Mapping):
                raw = md[name]
            else:
                names = getattr(getattr(md, "metadata", None), "names", None)
                if names is not None and name not in names:
                    return None
                raw = md.desc(name)
        except (KeyError, ValueError, TypeError):
            return None
        pmid = getattr(raw, "pmid", PM_ID_NULL)
        try:
            pmid = int(pmid)
        except (TypeError, ValueError):
            pmid = PM_ID_NULL
        return pmid, _as_desc(raw)


def _is_numeric(desc: DerivedDesc) -> bool:
    return desc.type in NUMERIC


def _operand_text(node: BoundNode) -> str:
    return node.text if node.kind in ("INTEGER", "DOUBLE", "NAME") and node.text else "<expr>"


def _subject(node: BoundNode) -> str:
    """How libpcp's report_sem_error prints a node (DERIVE-BIND-30)."""
    kind = node.kind
    if kind in _OPERATOR_TEXT:
        assert node.left is not None and node.right is not None
        return f"{_operand_text(node.left)} {_OPERATOR_TEXT[kind]} {_operand_text(node.right)}"
    if kind in ("NOT", "NEG"):
        assert node.left is not None
        return f"{'!' if kind == 'NOT' else '-'} {_operand_text(node.left)}"
    if kind in ("AVG", "COUNT", "DELTA", "RATE", "INSTANT", "MAX", "MIN", "SUM", "ANON",
                "DEFINED", "SCALAR"):
        assert node.left is not None
        arg = node.left.text
        return f"{kind}({arg if arg is not None else '(null)'})"
    if kind == "QUEST":
        assert node.left is not None and node.right is not None
        return f"{_operand_text(node.left)} ? {_subject(node.right)}"
    if kind == "COLON":
        assert node.left is not None and node.right is not None
        return f"{_operand_text(node.left)} : {_operand_text(node.right)}"
    if kind == "RESCALE":
        assert node.left is not None and node.right is not None
        return f"{_operand_text(node.left)} RESCALE {units_str(node.right.desc.units) or 'none'}"
    if kind == "FILTERINST":
        return "FILTERINST "
    if kind == "NAME":
        return f"operand {node.text}"
    return f"botch @ node type {kind}?"


class _Binder:
    def __init__(self, name: str, source: _Source, profile: Profile) -> None:
        self.name = name
        self.source = source
        self.profile = profile

    def fail(self, reason: str, node: BoundNode | None, *, printed: bool = True) -> NoReturn:
        if node is not None and node.kind == "NAME" and not self.profile.reject_nested:
            printed = False                   # 6.0.3's report_sem_error has no NAME case
        raise DeriveSemanticError(self.name, reason, _subject(node) if node else None,
                                  printed=printed)

    # -- pass 1: build the tree and look up operand names (libpcp's bind_expr) ----------
    def build(self, node: ast.Node, parent: str | None, lazy: bool) -> BoundNode:
        p = self.profile
        if isinstance(node, ast.Metric):
            return self.bind_name(node.name, parent, lazy)
        if isinstance(node, ast.Integer):
            return BoundNode("INTEGER", DerivedDesc(PmType.U32, PmSem.DISCRETE, PM_INDOM_NULL,
                                                    NO_UNITS), text=node.text)
        if isinstance(node, ast.Double):
            return BoundNode("DOUBLE", DerivedDesc(PmType.DOUBLE, PmSem.DISCRETE,
                                                   PM_INDOM_NULL, NO_UNITS), text=node.text)
        if isinstance(node, ast.Unary):
            kind = "NEG" if node.op == "-" else "NOT"
            return BoundNode(kind, left=self.build(node.operand, kind, lazy))
        if isinstance(node, ast.Binary):
            op_kind = OPERATOR_KINDS.get(node.op)
            if op_kind is None:
                self.fail(f"unknown operator {node.op!r}", None, printed=False)
            left = self.build(node.left, op_kind, lazy)
            return BoundNode(op_kind, left=left, right=self.build(node.right, op_kind, lazy))
        if isinstance(node, ast.Ternary):
            inner = lazy or p.novalue          # 6.2.2: undefined names allowed below ?:
            guard = self.build(node.guard, "QUEST", inner)
            colon = BoundNode("COLON")
            colon.left = self.build(node.then, "COLON", inner)
            colon.right = self.build(node.other, "COLON", inner)
            return BoundNode("QUEST", left=guard, right=colon)
        if isinstance(node, ast.Call):
            return self.build_call(node, lazy)
        if isinstance(node, ast.Rescale):
            left = self.build(node.operand, "RESCALE", lazy)
            units = self.parse_units(node.units)
            scale = BoundNode("SCALE", DerivedDesc(0, 0, PmInDom(0), units))
            return BoundNode("RESCALE", left=left, right=scale)
        if isinstance(node, ast.MatchInst):
            pattern = BoundNode("PATTERN", text=node.pattern, negate=node.negate)
            return BoundNode("FILTERINST", left=pattern,
                             right=self.build(node.operand, "FILTERINST", lazy))
        if isinstance(node, ast.InstSelect):
            # "(m)[i]" and "m[i]" parse alike; the operand starts after the "("
            paren = not isinstance(node.operand, ast.Metric) or node.operand.pos != node.pos
            pattern = BoundNode("PATTERN", text=node.instance, exact=True, paren=paren)
            return BoundNode("FILTERINST", left=pattern,
                             right=self.build(node.operand, "FILTERINST", lazy))
        if isinstance(node, ast.MkConst):
            return self.build_const(node, lazy)
        if isinstance(node, ast.NoValueExpr):
            if not p.novalue:
                self.fail("novalue() is not supported by this version", None, printed=False)
            desc, flags, meta = self.spec_desc(node.spec, DerivedDesc(
                PmType.I32, PmSem.DISCRETE, PM_INDOM_NULL, NO_UNITS), "NOVALUE", lazy)
            return BoundNode("NOVALUE", desc, left=meta, spec_flags=flags)
        self.fail(f"cannot bind {type(node).__name__}", None, printed=False)

    def parse_units(self, text: str) -> PmUnits:
        try:
            return parse_units(text, asserts=self.profile.units_asserts)[0]
        except UnitsError as exc:
            self.fail(f"Illegal units: {exc.message}", None, printed=False)

    def bind_name(self, name: str, parent: str | None, lazy: bool) -> BoundNode:
        node = BoundNode("NAME", text=name)
        found = self.source.real(name)
        if found is not None:
            pmid, desc = found
            if desc is None:
                self.fail("Metadata for operand metric not available", node, printed=False)
            assert desc is not None
            node.pmid, node.desc = pmid, desc
            return node
        if name in self.source.derived:
            if self.profile.reject_nested and parent not in (None, "NOVALUE", "INTEGER",
                                                            "DOUBLE"):
                self.fail("Illegal nested derived metric", node)
            other = self.source.derived[name]
            if other is None:
                self.fail("Metadata for operand metric not available", node, printed=False)
            assert other is not None
            node.pmid, node.desc, node.derived = PM_ID_NULL, other.desc, name
            return node
        if lazy:
            node.pmid, node.desc = None, ZERO_DESC
            return node
        self.fail("Unknown operand metric", node, printed=self.profile.report_unknown_operand)

    def build_call(self, node: ast.Call, lazy: bool) -> BoundNode:
        kind = _FUNCTION_KINDS.get(node.func)
        if kind is None:
            self.fail(f"unknown function {node.func}()", None, printed=False)
        if kind in ("DELTA", "RATE", "INSTANT") and not self.profile.expr_args \
                and not isinstance(node.arg, ast.Metric):
            self.fail(f"Metric name expected to follow {node.func}(", None, printed=False)
        if kind == "ANON":
            arg_name = node.arg.name if isinstance(node.arg, ast.Metric) else ""
            if arg_name not in _ANON_TYPES:
                self.fail(f"type={arg_name} not allowed for anon()", None, printed=False)
            leaf = BoundNode("INTEGER", DerivedDesc(_ANON_TYPES[arg_name], PmSem.DISCRETE,
                                                    PM_INDOM_NULL, NO_UNITS), text=arg_name)
            return BoundNode("ANON", left=leaf)
        arg = self.build(node.arg, kind, lazy or kind == "DEFINED")
        out = BoundNode(kind, left=arg)
        if kind in ("DELTA", "RATE"):
            arg.save_last = True
        return out

    def build_const(self, node: ast.MkConst, lazy: bool) -> BoundNode:
        is_double = isinstance(node.value, ast.Double)
        kind = "DOUBLE" if is_double else "INTEGER"
        base = DerivedDesc(PmType.DOUBLE if is_double else PmType.U32, PmSem.DISCRETE,
                           PM_INDOM_NULL, NO_UNITS)
        desc, flags, meta = self.spec_desc(node.spec, base, kind, lazy)
        if is_double and "type" in flags and desc.type not in (PmType.FLOAT, PmType.DOUBLE):
            self.fail("Incompatible floating point constant and type", None, printed=False)
        return BoundNode(kind, desc, left=meta, text=node.value.text, spec_flags=flags)

    def spec_desc(self, spec: ast.Spec, base: DerivedDesc, kind: str,
                  lazy: bool) -> tuple[DerivedDesc, frozenset[str], BoundNode | None]:
        """mkconst()/novalue() metadata: the spec over ``base`` or over meta='s metric
        (libpcp's bind_desc)."""
        flags: set[str] = set()
        desc = base
        meta: BoundNode | None = None
        for key, value in spec.items:
            if key == "type":
                t = _SPEC_TYPES.get(value.lower())
                if t is None:
                    self.fail(f"Unrecognized value for type {value}", None, printed=False)
                desc = replace(desc, type=t)
            elif key == "semantics":
                s = _SPEC_SEMS.get(value.lower())
                if s is None:
                    self.fail(f"Unrecognized value for semantics {value}", None, printed=False)
                desc = replace(desc, sem=s)
            elif key == "units":
                desc = replace(desc, units=self.parse_units(value))
            elif key == "indom" and self.profile.indom_spec:      # 7.x (DERIVE-VER-6)
                desc = replace(desc, indom=spec_indom(value))
            elif key == "meta" and self.profile.novalue:
                meta = self.bind_name(value, kind, lazy)
                continue
            else:
                self.fail(f"{key}= is not supported by this version", None, printed=False)
            flags.add(key)
        if meta is not None:
            out = meta.desc
            if "type" in flags:
                out = replace(out, type=desc.type)
            if "semantics" in flags:
                out = replace(out, sem=desc.sem)
            if "units" in flags:
                out = replace(out, units=desc.units)
            if "indom" in flags:
                out = replace(out, indom=desc.indom)
            desc = out
        return desc, frozenset(flags), meta

    # -- pass 2: descriptors and checks (libpcp's check_expr, map_desc, map_units) ------
    def check(self, node: BoundNode, parent: BoundNode | None) -> None:
        kind = node.kind
        if kind in ("INTEGER", "DOUBLE", "NAME", "SCALE", "PATTERN", "NOVALUE"):
            return
        if kind == "DEFINED":
            assert node.left is not None
            node.defined = node.left.pmid is not None
            node.text = node.left.text          # libpcp keeps the name for printing
            node.desc = DerivedDesc(PmType.U32, PmSem.DISCRETE, PM_INDOM_NULL, NO_UNITS)
            node.left = None
            return
        assert node.left is not None
        if kind == "COLON":
            self.check_colon(node, parent)
            return
        if node.right is not None:
            self.check(node.left, node)
            self.check(node.right, node)
            if kind == "QUEST":
                self.check_quest(node)
            elif kind == "FILTERINST":
                node.desc = node.right.desc
            else:
                self.map_desc(node)
            return
        self.check(node.left, node)
        self.check_unary(node)

    def check_colon(self, node: BoundNode, parent: BoundNode | None) -> None:
        assert node.left is not None and node.right is not None
        node.bind = "both"
        if self.profile.novalue and parent is not None and parent.kind == "QUEST":
            assert parent.left is not None
            guard = static_guard(parent.left)
            node.bind = {1: "left", 0: "right"}.get(guard, "both")
        left, right = node.left, node.right
        if node.bind in ("left", "both"):
            self.check(left, node)
        if node.bind in ("right", "both"):
            self.check(right, node)
        if node.bind == "both":
            node.desc = right.desc if left.kind == "NOVALUE" else left.desc
            node.desc = replace(node.desc, indom=left.desc.indom
                                if not left.desc.indom.is_null else right.desc.indom)
        else:
            node.desc = left.desc if node.bind == "left" else right.desc
        if self.profile.novalue:
            for side, hand in ((left, "left"), (right, "right")):
                if node.bind in (hand, "both"):
                    missing = first_unbound(side)
                    if missing is not None:
                        self.fail("Unknown metric for ternary expression", missing)
            if left.kind == "NOVALUE" or right.kind == "NOVALUE" or node.bind != "both":
                return
        ld, rd = left.desc, right.desc
        if ld.type != rd.type:
            self.fail("Different types for ternary operands", node)
        if ld.indom != rd.indom and not ld.indom.is_null and not rd.indom.is_null:
            self.fail("Different instance domains for ternary operands", node)
        if ld.sem != rd.sem:
            self.fail("Different semantics for ternary operands", node)
        lu, ru = ld.units, rd.units
        for axis in ("Space", "Time", "Count"):
            if (getattr(lu, "dim" + axis), getattr(lu, "scale" + axis)) != \
                    (getattr(ru, "dim" + axis), getattr(ru, "scale" + axis)):
                self.fail(f"Different units or scale ({axis.lower()}) for ternary operands",
                          node)
        if not self.profile.novalue:
            node.desc = replace(ld, indom=ld.indom if not ld.indom.is_null else rd.indom)

    def check_quest(self, node: BoundNode) -> None:
        guard, colon = node.left, node.right
        assert guard is not None and colon is not None
        assert colon.left is not None and colon.right is not None
        if not _is_numeric(guard.desc):
            self.fail("Non-arithmetic operand for ternary guard", node)
        if colon.left.desc.indom.is_null and colon.right.desc.indom.is_null \
                and not guard.desc.indom.is_null:
            self.fail("Non-scalar ternary guard with scalar expressions", node)
        node.desc = colon.desc

    def check_unary(self, node: BoundNode) -> None:
        kind = node.kind
        assert node.left is not None
        arg = node.left.desc
        desc = arg
        if kind == "COUNT":
            desc = DerivedDesc(PmType.U32, PmSem.INSTANT, PM_INDOM_NULL,
                               PmUnits(dimCount=1, scaleCount=0))
        elif kind == "INSTANT":
            desc = replace(arg, sem=PmSem.INSTANT if arg.sem == PmSem.COUNTER else arg.sem)
        elif kind == "SCALAR":
            desc = replace(arg, indom=PM_INDOM_NULL)
        elif kind in ("AVG", "SUM", "MAX", "MIN", "DELTA", "RATE", "NEG"):
            if not _is_numeric(arg):
                self.fail("Non-arithmetic operand for unary negation" if kind == "NEG"
                          else "Non-arithmetic operand for function", node)
            if kind != "SUM":
                desc = replace(desc, sem=PmSem.INSTANT)
            if kind == "RATE" and arg.units.dimTime not in (0, 1):
                self.fail("Incorrect time dimension for operand", node)
            if kind in ("AVG", "SUM", "MAX", "MIN"):
                desc = replace(desc, indom=PM_INDOM_NULL)
            if kind == "AVG":
                desc = replace(desc, type=PmType.FLOAT)
            elif kind == "RATE":
                dim = arg.units.dimTime - 1
                desc = replace(desc, type=PmType.DOUBLE, units=replace(
                    arg.units, dimTime=dim, scaleTime=0 if dim == 0 else 3))
            elif kind == "NEG":
                desc = replace(desc, type={PmType.U32: PmType.I32, PmType.U64: PmType.I64}
                               .get(PmType(arg.type), arg.type))
            elif kind == "DELTA":
                desc = replace(desc, type={PmType.U32: PmType.I64, PmType.U64: PmType.DOUBLE}
                               .get(PmType(arg.type), arg.type))
        node.desc = desc

    def map_desc(self, node: BoundNode) -> None:
        kind = node.kind
        left, right = node.left, node.right
        assert left is not None and right is not None
        ld, rd = left.desc, right.desc
        if kind == "RESCALE":
            if not _is_numeric(ld):
                self.fail("Non-arithmetic operand for function", node)
            try:
                conv_factors(ld.units, rd.units)
            except ConvScaleError:
                self.fail("Incompatible dimensions", node)
            node.desc = replace(ld, units=rd.units)
            return
        counter_l, counter_r = ld.sem == PmSem.COUNTER, rd.sem == PmSem.COUNTER
        if kind in _ARITH:
            if counter_l and counter_r and kind not in ("PLUS", "MINUS"):
                self.fail("Illegal operator for counters", node)
            if counter_l and not counter_r and kind not in ("STAR", "SLASH"):
                self.fail("Illegal operator for counter and non-counter", node)
            if not counter_l and counter_r and kind != "STAR":
                self.fail("Illegal operator for non-counter and counter", node)
        # prefer a metric or an expression's metadata to a constant's
        desc = ld if left.kind not in ("INTEGER", "DOUBLE") else rd
        if not counter_l and not counter_r:
            both_discrete = ld.sem == PmSem.DISCRETE and rd.sem == PmSem.DISCRETE
            desc = replace(desc, sem=PmSem.DISCRETE if both_discrete else PmSem.INSTANT)
        if not _is_numeric(ld):
            self.fail("Non-arithmetic type for left operand", node)
        if not _is_numeric(rd):
            self.fail("Non-arithmetic type for right operand", node)
        if kind == "SLASH":
            desc = replace(desc, type=PmType.DOUBLE)
        elif kind in _RELATIONAL or kind in _BOOLEAN:
            desc = replace(desc, type=PmType.U32)
        else:
            desc = replace(desc, type=promote(ld.type, rd.type))
        lu, ru = ld.units, rd.units
        same_dims = (lu.dimSpace, lu.dimTime, lu.dimCount) == (ru.dimSpace, ru.dimTime,
                                                                ru.dimCount)
        count_vs_none = (lu.dimTime == ru.dimTime == 0 and lu.dimSpace == ru.dimSpace == 0
                         and {lu.dimCount, ru.dimCount} == {0, 1})
        if kind in ("PLUS", "MINUS") and not same_dims and not count_vs_none:
            self.fail("Dimensions are not the same", node)
        # libpcp compares pmDesc.type with N_INTEGER (1), i.e. PM_TYPE_U32 (DERIVE-BIND-13)
        if kind in _RELATIONAL and ld.type != PmType.U32 and rd.type != PmType.U32 \
                and not same_dims and not count_vs_none:
            self.fail("Dimensions are not the same", node)
        if kind in _BOOLEAN and any((lu.dimCount, ru.dimCount, lu.dimTime, ru.dimTime,
                                     lu.dimSpace, ru.dimSpace)):
            self.fail("Dimensions are not the same", node)
        if kind in ("STAR", "SLASH") or kind in _RELATIONAL:
            if counter_l and not counter_r and (ru.dimCount or ru.dimTime or ru.dimSpace):
                self.fail("Non-counter and not dimensionless for right operand", node)
            if not counter_l and counter_r and (lu.dimCount or lu.dimTime or lu.dimSpace):
                self.fail("Non-counter and not dimensionless for left operand", node)
        if kind in _ARITH:
            desc = map_units(node, desc)
        else:
            desc = replace(desc, units=NO_UNITS)
        li, ri = ld.indom, rd.indom
        if not li.is_null and not ri.is_null and li != ri:
            self.fail("Operands should have the same instance domain", node)
        if not li.is_null and ri.is_null:
            desc = replace(desc, indom=li)
        elif not ri.is_null and li.is_null:
            desc = replace(desc, indom=ri)
        node.desc = desc


def bind(node: ast.Node, name: str, metadata: _Metadata | Mapping[str, Any],
         profile: Profile, *, derived: Mapping[str, Bound | None] | None = None) -> Bound:
    """Bind the derived metric ``name`` = ``node`` against ``metadata`` (an Archive, or a
    mapping of metric name to a pmDesc-like object) as libpcp of ``profile`` binds it in a
    new context. ``derived`` names the other derived metrics of the context (bound, or
    None when their binding failed). Raises DeriveSemanticError."""
    source = _Source(metadata, derived or {})
    real = source.real(name)
    if real is not None and real[1] is not None:          # DERIVE-BIND-1
        leaf = BoundNode("NAME", real[1], text=name, pmid=real[0])
        return Bound(name, real[1], leaf, masked=True)
    binder = _Binder(name, source, profile)
    root = binder.build(node, None, False)
    binder.check(root, None)
    return Bound(name, root.desc, root)


def spec_indom(text: str) -> PmInDom:
    """The instance domain an accepted ``indom=`` names (DERIVE-VER-6)."""
    parts = ast.indom_of_spec(text)
    if parts is None:
        return PmInDom(None)
    return PmInDom((parts[0] << 22) | parts[1])
