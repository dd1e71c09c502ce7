"""Binding derived metrics: descriptors, semantic errors and units (spec/derive.md).

These tests need no libpcp; tests/test_derive_vs_libpcp.py checks the same tables
against libpcp 6.0.3 and 6.3.8.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pcpconform.format.pmtypes import PmID, PmInDom, PmType, PmUnits
from pcpconform.format.values import F32
from pcpconform.io.archive import Desc
from pcpconform.oracles.derive import ast
from pcpconform.oracles.derive.bind import Bound, DeriveSemanticError, bind
from pcpconform.oracles.derive.parser import parse
from pcpconform.oracles.derive.profiles import PROFILES
from pcpconform.oracles.derive.units import ConvScaleError, UnitsError, conv_scale, parse_units, units_str

P60, P63 = PROFILES["pcp-6.0"], PROFILES["pcp-6.3"]
#: libpcp 6.3.8 prints nothing for an unknown operand (measured; the unconditional report
#: came in 7.1.0), so the tests use the 6.3 profile with that switch off
P63_MEASURED = dataclasses.replace(P63, report_unknown_operand=False)


def _desc(pmid: str, ptype: str, sem: str, units: str = "none", indom: str | None = None) -> Desc:
    return Desc(PmID(pmid), PmType.from_token(ptype), PmInDom(indom),
                {"counter": 1, "instant": 3, "discrete": 4}[sem], PmUnits.parse(units), ())


#: the metrics of tests/test_derive_eval.py's DERIVE_FIXTURE, as descriptors
METRICS: dict[str, Desc] = {
    "m.c32": _desc("30.0.1", "32", "counter", "count"),
    "m.cu32": _desc("30.0.2", "u32", "counter", "count"),
    "m.c64": _desc("30.0.3", "64", "counter", "byte"),
    "m.cu64": _desc("30.0.4", "u64", "counter", "Kbyte"),
    "m.cflt": _desc("30.0.5", "float", "counter", "millisec"),
    "m.cdbl": _desc("30.0.6", "double", "counter", "microsec"),
    "m.kb": _desc("30.1.1", "u64", "instant", "Kbyte"),
    "m.inst": _desc("30.1.2", "double", "instant", "Mbyte / sec", "30.1"),
    "m.disc": _desc("30.1.3", "32", "discrete", "none", "30.1"),
    "m.str": _desc("30.1.4", "string", "discrete"),
    "m.flt": _desc("30.1.5", "float", "instant", "Mbyte / sec", "30.1"),
    "m.i64": _desc("30.1.6", "64", "instant", "count", "30.2"),
}

U32, I32, U64, I64, FLT, DBL = (PmType.U32, PmType.I32, PmType.U64, PmType.I64,
                                PmType.FLOAT, PmType.DOUBLE)
CTR, INST, DISC = 1, 3, 4

#: (expression, profiles it applies to, type, semantics, indom, pmUnitsStr), all measured
#: against libpcp (tests/test_derive_vs_libpcp.py::test_metadata_table_matches_libpcp)
DESCRIPTORS: list[tuple[str, str, int, int, str | None, str]] = [
    # DERIVE-BIND-5: relational results copy the counter semantics of the left operand
    ("m.c32 > 0", "both", U32, CTR, None, ""),
    ("m.kb > 1", "both", U32, INST, None, ""),                       # DERIVE-BIND-13
    ("m.c64 < m.cu32", "both", U32, CTR, None, ""),
    ("m.kb == rescale(m.kb, \"byte\")", "both", U32, INST, None, ""),
    ("!m.kb", "both", U64, INST, None, "Kbyte"),                      # DERIVE-BIND-11
    ("!m.str", "both", PmType.STRING, DISC, None, ""),
    ("count(m.str)", "both", U32, INST, None, "count"),               # DERIVE-BIND-17
    ("count(m.inst)", "both", U32, INST, None, "count"),
    ("m.kb ? m.cu32 : m.cu32 * 2", "both", U32, CTR, None, "count"),  # DERIVE-BIND-23
    ("rescale(3, \"count\")", "both", U32, DISC, None, "count"),       # DERIVE-BIND-19
    ("rescale(3, \"\")", "both", U32, DISC, None, ""),
    ("m.inst", "both", DBL, INST, "30.1", "Mbyte / sec"),
    ("scalar(m.inst)", "both", DBL, INST, None, "Mbyte / sec"),       # DERIVE-BIND-18
    ("min(m.inst)", "both", DBL, INST, None, "Mbyte / sec"),          # DERIVE-BIND-16
    ("max(m.disc)", "both", I32, INST, None, ""),
    ("sum(m.inst)", "both", DBL, INST, None, "Mbyte / sec"),
    ("sum(m.c32)", "both", I32, CTR, None, "count"),                  # sum keeps COUNTER
    ("avg(m.flt)", "both", FLT, INST, None, "Mbyte / sec"),
    ("avg(m.disc)", "both", FLT, INST, None, ""),
    ("rate(m.cu32)", "both", DBL, INST, None, "count / sec"),         # DERIVE-BIND-15
    ("rate(m.cflt)", "both", DBL, INST, None, ""),                    # time utilisation
    ("rate(m.kb)", "both", DBL, INST, None, "Kbyte / sec"),
    ("delta(m.cu32)", "both", I64, INST, None, "count"),              # DERIVE-BIND-14
    ("delta(m.cu64)", "both", DBL, INST, None, "Kbyte"),
    ("delta(m.c32)", "both", I32, INST, None, "count"),
    ("instant(m.c64)", "both", I64, INST, None, "byte"),
    ("instant(m.str)", "both", PmType.STRING, DISC, None, ""),
    ("-m.cu32", "both", I32, INST, None, "count"),                    # DERIVE-BIND-12
    ("-m.cu64", "both", I64, INST, None, "Kbyte"),
    ("-3", "both", I32, INST, None, ""),
    ("3", "both", U32, DISC, None, ""),
    ("1.5", "both", DBL, DISC, None, ""),
    ("m.kb + m.kb", "both", U64, INST, None, "Kbyte"),
    ("m.c64 + rescale(m.cu64, \"byte\")", "both", U64, CTR, None, "byte"),   # promotion
    ("m.kb + rescale(m.kb, \"byte\")", "both", DBL, INST, None, "Kbyte"),    # DERIVE-BIND-9
    ("m.inst * m.flt", "both", DBL, INST, "30.1", "Mbyte^2 / sec^2"),
    ("m.inst / m.flt", "both", DBL, INST, "30.1", ""),
    ("m.flt * 2", "both", FLT, INST, "30.1", "Mbyte / sec"),
    ("m.disc * m.disc", "both", I32, DISC, "30.1", ""),
    ("m.disc + 1", "both", U32, DISC, "30.1", ""),                    # 32 + U32 -> U32
    ("m.c32 * 2", "both", U32, CTR, None, "count"),
    ("2 * m.c32", "both", U32, CTR, None, "count"),
    ("m.c32 + m.cu32", "both", U32, CTR, None, "count"),
    ("m.cu64 / 2", "both", DBL, CTR, None, "Kbyte"),
    ("m.kb / m.flt", "both", DBL, INST, "30.1", "sec"),
    ("instant(m.cflt) * m.inst", "both", DBL, INST, "30.1", "Mbyte"),  # mixed signs
    ("m.inst * instant(m.cflt)", "both", DBL, INST, "30.1", "Mbyte"),
    ("m.cflt + m.cdbl", "both", DBL, CTR, None, "millisec"),          # DERIVE-BIND-9
    ("count(m.inst) + m.disc", "both", U32, INST, "30.1", "count"),   # count vs none
    ("m.inst[a]", "both", DBL, INST, "30.1", "Mbyte / sec"),          # DERIVE-BIND-20
    ("matchinst(/a/, m.inst)", "both", DBL, INST, "30.1", "Mbyte / sec"),
    ("defined(m.kb)", "both", U32, DISC, None, ""),                   # DERIVE-BIND-21
    ("defined(no.such)", "both", U32, DISC, None, ""),
    ("mkconst(3, type=double, units=\"Kbyte\")", "both", DBL, DISC, None, "Kbyte"),
    ("mkconst(3, meta=m.inst)", "pcp-6.3", DBL, INST, "30.1", "Mbyte / sec"),
    ("1 ? m.kb : m.c64", "pcp-6.3", U64, INST, None, "Kbyte"),        # DERIVE-BIND-24
    ("defined(no.such) ? no.such : m.kb", "pcp-6.3", U64, INST, None, "Kbyte"),
    ("no.such > 0 ? m.inst : m.inst", "pcp-6.3", DBL, INST, "30.1", "Mbyte / sec"),
    ("m.kb > 0 ? novalue() : m.inst", "pcp-6.3", DBL, INST, "30.1", "Mbyte / sec"),
    ("delta(m.kb * m.kb)", "pcp-6.3", DBL, INST, None, "Kbyte^2"),
    ("scalar(m.str)", "pcp-6.3", PmType.STRING, DISC, None, ""),
]

#: (expression, profiles, libpcp's line without "Semantic error: derived metric NAME: ");
#: None = libpcp prints nothing
ERRORS: list[tuple[str, str, str | None]] = [
    ("m.c32 - 300", "both", "m.c32 - 300: Illegal operator for counter and non-counter"),
    ("m.kb > 0.5", "both", "m.kb > 0.5: Dimensions are not the same"),
    ("m.kb > -1", "both", "m.kb > <expr>: Dimensions are not the same"),
    ("no.such.metric", "both", None),
    ("no.such + 1", "both", None),
    ("m.str + 1", "both", "m.str + 1: Non-arithmetic type for left operand"),
    ("1 + m.str", "both", "1 + m.str: Non-arithmetic type for right operand"),
    ("-m.str", "both", "- m.str: Non-arithmetic operand for unary negation"),
    ("delta(m.str)", "both", "DELTA(m.str): Non-arithmetic operand for function"),
    ("sum(m.str)", "both", "SUM(m.str): Non-arithmetic operand for function"),
    ("avg(m.str)", "both", "AVG(m.str): Non-arithmetic operand for function"),
    ("m.inst + m.i64", "both", "m.inst + m.i64: Dimensions are not the same"),
    ("m.c32 * m.c32", "both", "m.c32 * m.c32: Illegal operator for counters"),
    ("3 / m.c32", "both", "3 / m.c32: Illegal operator for non-counter and counter"),
    ("m.kb + m.c64", "both", "m.kb + m.c64: Illegal operator for non-counter and counter"),
    ("m.kb && 1", "both", "m.kb && 1: Dimensions are not the same"),
    ("m.c32 ? m.kb : m.c64", "both", "m.kb : m.c64: Different types for ternary operands"),
    ("m.inst > 0 ? 1 : 2", "both",
     "<expr> ? 1 : 2: Non-scalar ternary guard with scalar expressions"),
    ("m.kb ? m.inst : 1", "both", "m.inst : 1: Different types for ternary operands"),
    ("rescale(m.kb, \"sec\")", "both", "m.kb RESCALE sec: Incompatible dimensions"),
    ("rescale(m.kb, \"Zbyte\")", "both", "m.kb RESCALE Zbyte: Incompatible dimensions"),
    ("rescale(m.str, \"sec\")", "both", "m.str RESCALE sec: Non-arithmetic operand for function"),
    ("rescale(m.kb + m.kb, \"\")", "both", "<expr> RESCALE none: Incompatible dimensions"),
    ("rescale(m.kb, \"count\")", "both", "m.kb RESCALE count: Incompatible dimensions"),
    ("rate(m.inst)", "both", "RATE(m.inst): Incorrect time dimension for operand"),
    ("m.str ? 1 : 2", "both", "m.str ? 1 : 2: Non-arithmetic operand for ternary guard"),
    ("m.kb ? m.kb : 2", "both", "m.kb : 2: Different types for ternary operands"),
    ("m.kb ? m.kb : m.c64 + m.c64", "both", "m.kb : <expr>: Different types for ternary operands"),
    ("m.kb ? rescale(m.kb, \"byte\") : m.kb", "both",
     "<expr> : m.kb: Different units or scale (space) for ternary operands"),
    ("m.kb ? m.cflt : rescale(m.cflt, \"sec\")", "both",
     "m.cflt : <expr>: Different units or scale (time) for ternary operands"),
    ("m.kb ? m.c32 : mkconst(1, type=32, semantics=counter, units=\"count x 10\")", "both",
     "m.c32 : 1: Different units or scale (count) for ternary operands"),
    ("m.kb ? m.disc : m.i64 * 0", "both", "m.disc : <expr>: Different types for ternary operands"),
    ("m.cu64 / m.cflt", "both", "m.cu64 / m.cflt: Illegal operator for counters"),
    ("m.cu64 / m.kb", "both", "m.cu64 / m.kb: Non-counter and not dimensionless for right operand"),
    ("m.kb / m.cflt", "both", "m.kb / m.cflt: Illegal operator for non-counter and counter"),
    ("m.kb ? m.disc : mkconst(2, type=32, semantics=instant)", "both",
     "m.disc : 2: Different semantics for ternary operands"),
    ("m.kb ? m.i64 : mkconst(2, type=64, units=\"count\", meta=m.disc)", "pcp-6.3",
     "m.i64 : 2: Different instance domains for ternary operands"),
    ("matchinst(/a/, m.str + 1)", "both", "m.str + 1: Non-arithmetic type for left operand"),
    ("m.inst[a] + m.i64", "both", "<expr> + m.i64: Dimensions are not the same"),
    ("count(m.kb) + m.inst", "both", "<expr> + m.inst: Dimensions are not the same"),
    ("m.kb < m.c64", "both", "m.kb < m.c64: Non-counter and not dimensionless for left operand"),
    ("m.c64 < m.kb", "both", "m.c64 < m.kb: Non-counter and not dimensionless for right operand"),
    ("m.c64 * m.kb", "both", "m.c64 * m.kb: Non-counter and not dimensionless for right operand"),
    ("m.kb * m.c64", "both", "m.kb * m.c64: Non-counter and not dimensionless for left operand"),
    ("-m.c64 + m.c64", "both", "<expr> + m.c64: Illegal operator for non-counter and counter"),
    ("m.inst < m.disc", "both", "m.inst < m.disc: Dimensions are not the same"),
    ("m.inst + 1", "both", "m.inst + 1: Dimensions are not the same"),
    ("1.5 + m.inst", "both", "1.5 + m.inst: Dimensions are not the same"),
    ("m.i64 + m.disc", "both", "m.i64 + m.disc: Operands should have the same instance domain"),
    ("m.kb > 0 ? no.such : 1", "pcp-6.3", "operand no.such: Unknown metric for ternary expression"),
    ("m.kb > 0 ? no.such : 1", "pcp-6.0", None),
    ("no.such > 0 ? 1 : 2", "pcp-6.3",
     "<expr> ? 1 : 2: Non-scalar ternary guard with scalar expressions"),
    ("m.kb > 0 ? no.such + m.kb : m.kb", "pcp-6.3",
     "no.such + m.kb: Dimensions are not the same"),
    ("rate(m.inst * 2)", "pcp-6.3", "RATE((null)): Incorrect time dimension for operand"),
    ("rate(m.inst[a])", "pcp-6.3", "RATE((null)): Incorrect time dimension for operand"),
    ("rate(m.kb * m.kb * m.c64)", "pcp-6.3",
     "<expr> * m.c64: Non-counter and not dimensionless for left operand"),
    ("delta(m.inst[a] + m.str)", "pcp-6.3", "<expr> + m.str: Non-arithmetic type for right operand"),
]


def _profiles(which: str) -> list[Any]:
    return {"both": [P60, P63_MEASURED], "pcp-6.0": [P60], "pcp-6.3": [P63_MEASURED]}[which]


def _bind(text: str, profile: Any, name: str = "d.x", **kw: Any) -> Bound:
    return bind(parse(text, profile), name, METRICS, profile, **kw)


@pytest.mark.parametrize("text,which,ptype,sem,indom,units", DESCRIPTORS)
def test_descriptors(text: str, which: str, ptype: int, sem: int, indom: str | None,
                     units: str) -> None:
    """DERIVE-BIND-4 .. DERIVE-BIND-24: the derived pmDesc."""
    for profile in _profiles(which):
        desc = _bind(text, profile).desc
        assert (desc.type, desc.sem, None if desc.indom.is_null else str(desc.indom),
                units_str(desc.units)) == (ptype, sem, indom, units), profile.name


@pytest.mark.parametrize("text,which,line", ERRORS)
def test_semantic_errors(text: str, which: str, line: str | None) -> None:
    """DERIVE-BIND-30, DERIVE-BIND-31: libpcp's exact message, or silence."""
    for profile in _profiles(which):
        with pytest.raises(DeriveSemanticError) as info:
            _bind(text, profile, name="d.bad")
        expected = "" if line is None else f"Semantic error: derived metric d.bad: {line}"
        assert info.value.text == expected, profile.name


def test_unknown_operand_switch() -> None:
    """DERIVE-BIND-31: with report_unknown_operand (libpcp 7.1 and later) the unknown
    operand is printed as "operand NAME"."""
    with pytest.raises(DeriveSemanticError) as info:
        _bind("no.such + 1", dataclasses.replace(P63, report_unknown_operand=True), name="d.unk")
    assert info.value.text == "Semantic error: derived metric d.unk: operand no.such: " \
                              "Unknown operand metric"
    assert info.value.reason == "Unknown operand metric"


def test_a_real_metric_masks_the_derived_one() -> None:
    """DERIVE-BIND-1"""
    bound = _bind("m.c32 * 1000", P63_MEASURED, name="m.kb")
    assert bound.masked and bound.desc.type == U64 and bound.operand_pmids() == [int(PmID("30.1.1"))]


def test_nested_derived_metrics() -> None:
    """DERIVE-BIND-3: rejected from 6.2.2 (except as meta=), accepted before."""
    inner = _bind("m.kb * 2", P60, name="d.inner")
    outer = _bind("d.inner + m.kb", P60, name="d.outer", derived={"d.inner": inner})
    assert outer.desc.type == U64
    with pytest.raises(DeriveSemanticError) as info:
        _bind("d.inner + m.kb", P63_MEASURED, name="d.outer", derived={"d.inner": inner})
    assert info.value.text == ("Semantic error: derived metric d.outer: operand d.inner: "
                               "Illegal nested derived metric")
    assert _bind("mkconst(1, meta=d.inner)", P63_MEASURED,
                 derived={"d.inner": inner}).desc.type == U64


def test_seed_example_scale_factors() -> None:
    """DERIVE-BIND-9: the pmRegisterDerived(3) example: the right operand of "-" is
    divided by 1048576 and multiplied by 1000 to go from byte/millisec to Mbyte/sec."""
    md = {"network.interface.speed": _desc("60.3.0", "float", "instant", "Mbyte / sec"),
          "network.interface.in.bytes": _desc("60.3.1", "u64", "counter", "byte"),
          "sample.milliseconds": _desc("29.0.1", "double", "counter", "millisec")}
    text = ("network.interface.speed - delta(network.interface.in.bytes) / "
            "delta(sample.milliseconds)")
    bound = bind(parse(text, P60), "x", md, P60)
    assert (bound.desc.type, units_str(bound.desc.units)) == (DBL, "Mbyte / sec")
    ratio = bound.root.right
    assert ratio is not None and (ratio.div, ratio.mul) == (1048576, 1000)
    assert units_str(ratio.desc.units) == "byte / millisec" and ratio.desc.type == DBL


def test_ternary_lazy_binding_records_the_side() -> None:
    """DERIVE-BIND-24: a decidable guard binds only the chosen side (6.2.2)."""
    bound = _bind("defined(no.such) ? no.such : m.kb", P63_MEASURED)
    colon = bound.root.right
    assert colon is not None and colon.bind == "right"
    assert _bind("m.kb > 1 ? m.kb : m.kb", P63_MEASURED).root.right.bind == "both"  # type: ignore[union-attr]


@pytest.mark.parametrize("metadata", [
    {"m.x": Desc(PmID("1.0.1"), 77, PmInDom(None), 3, PmUnits(), ())},
    {"m.x": Desc(PmID("1.0.1"), 3, PmInDom(None), 99, PmUnits(dimSpace=7, scaleSpace=15), ())},
    {"m.x": object()},
    {"m.x": Desc(PmID("1.0.1"), 1, "bogus", 3, PmUnits(), ())},  # type: ignore[arg-type]
])
def test_bad_metadata_never_raises_anything_else(metadata: dict[str, Any]) -> None:
    """Unusable operand metadata is a DeriveSemanticError or a descriptor, never a crash."""
    for text in ("m.x", "m.x + 1", "-m.x", "rate(m.x)", "m.x ? m.x : m.x", "sum(m.x)",
                 "rescale(m.x, \"byte\")", "m.x[a] * 2"):
        try:
            bind(parse(text, P63), "d.x", metadata, P63)
        except DeriveSemanticError:
            pass


def test_hand_built_trees_bind() -> None:
    """Trees built without the parser (DERIVE-BIND-2)."""
    tree = ast.Binary(0, "+", ast.Metric(0, "m.kb"), ast.Call(0, "sum", ast.Metric(0, "m.kb")))
    assert bind(tree, "d.x", METRICS, P60).desc.type == U64
    with pytest.raises(DeriveSemanticError):
        bind(ast.Call(0, "delta", ast.Integer(0, 1, "1")), "d.x", METRICS, P60)


# -- units ---------------------------------------------------------------------------------

UNITS = ["Kbyte / sec", "count x 10^3", "", "none", "byte^2/ms", "2 Kbyte", "Kbyte/Mbyte",
         "sec^-1", "MB", "foo", "sec sec", "count x 10^-2 / hour^2", "1e3 byte", "-inf byte",
         "space-9", "time-7", "Kbytes / second", "nanosec", "GiB/hr", "count x 10", "counts",
         "s^2 / Kbyte^3", "byte^8", "byte^7 / sec^-1", "0x10 msec", "- byte", "1e999 byte",
         "1e-320 byte", "Kilobyte", "us", "byte^", "byte^16", "Kbyte/", "/sec", "ms ms",
         "byte / byte", "h", "KB MB"]


def test_parse_units_examples() -> None:
    """DERIVE-BIND-19: pmParseUnitsStr (cross-checked with libpcp in
    tests/test_derive_vs_libpcp.py)."""
    assert parse_units("Kbyte / sec") == (PmUnits(1, -1, 0, 1, 3, 0), 1.0)
    assert parse_units("2 Kbyte")[1] == 0.5
    assert parse_units("byte^2/ms")[0] == PmUnits(2, -1, 0, 0, 2, 0)
    with pytest.raises(UnitsError, match="unrecognized or duplicate base unit"):
        parse_units("none")
    with pytest.raises(UnitsError, match="invalid floating point literal"):
        parse_units("1e999 byte")
    with pytest.raises(UnitsError, match="space dimension out of bounds"):
        parse_units("byte^8")


def test_conv_scale_arithmetic() -> None:
    """DERIVE-EVAL-13: pmConvScale rounds integers half up (towards +inf for the
    positive), truncates towards zero for negatives, and wraps to the type."""
    kb, mb, b = PmUnits(1, 0, 0, 1, 0, 0), PmUnits(1, 0, 0, 2, 0, 0), PmUnits(1, 0, 0, 0, 0, 0)
    assert conv_scale(PmType.U64, 1, kb, mb) == 0
    assert conv_scale(PmType.U64, 512, kb, mb) == 1
    assert conv_scale(PmType.I32, -512, kb, mb) == 0
    assert conv_scale(PmType.I32, -513, kb, mb) == 0
    assert conv_scale(PmType.I32, -1537, kb, mb) == -1
    assert conv_scale(PmType.U32, 5, mb, b) == 5 * 1048576
    assert conv_scale(PmType.U32, 5000, mb, b) == (5000 * 1048576) & 0xFFFFFFFF
    assert conv_scale(PmType.DOUBLE, 1.5, kb, b) == 1536.0
    assert isinstance(conv_scale(PmType.FLOAT, F32(1.5), b, kb), F32)
    with pytest.raises(ConvScaleError):
        conv_scale(PmType.U32, 1, kb, PmUnits(0, 1, 0, 0, 3, 0))
    with pytest.raises(ConvScaleError):
        conv_scale(PmType.U32, 1, kb, PmUnits(1, 0, 0, 7, 0, 0))        # Zbyte


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=" ^/-.0123456789abcdeghiklmnorstuxyBKMGT", max_size=16))
def test_parse_units_never_raises_anything_else(text: str) -> None:
    try:
        parse_units(text)
    except UnitsError:
        pass
