"""Binding derived metrics: descriptors, semantic errors and units (spec/derive.md).

These tests need no libpcp; tests/test_derive_vs_libpcp.py checks the same tables
against libpcp 6.0.3 and 6.3.8.
"""

from __future__ import annotations

import contextlib
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
from tests.derive_cases import rows_for

P60, P63, P7 = PROFILES["pcp-6.0"], PROFILES["pcp-6.3"], PROFILES["pcp-7"]


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

#: (expression, profiles it applies to, type, semantics, indom, pmUnitsStr), measured
#: (tests/data/derive-descriptors.json; tests/differential/test_derive_vs_libpcp.py)
DESCRIPTORS: list[tuple[str, tuple[str, ...], int, int, str | None, str]] = [
    (r["text"], tuple(r["profiles"]), r["type"], r["sem"], r["indom"], r["units"])
    for r in rows_for("descriptors")]

#: (expression, profiles, libpcp's line without "Semantic error: derived metric NAME: ");
#: None = libpcp prints nothing (tests/data/derive-semantic-errors.json)
ERRORS: list[tuple[str, tuple[str, ...], str | None]] = [
    (r["text"], tuple(r["profiles"]), r["line"]) for r in rows_for("semantic-errors")]


def _profiles(which: tuple[str, ...]) -> list[Any]:
    return [PROFILES[n] for n in which]


def _bind(text: str, profile: Any, name: str = "d.x", **kw: Any) -> Bound:
    return bind(parse(text, profile), name, METRICS, profile, **kw)


@pytest.mark.parametrize("text,which,ptype,sem,indom,units", DESCRIPTORS)
def test_descriptors(text: str, which: tuple[str, ...], ptype: int, sem: int, indom: str | None,
                     units: str) -> None:
    """DERIVE-BIND-4 .. DERIVE-BIND-24: the derived pmDesc."""
    for profile in _profiles(which):
        desc = _bind(text, profile).desc
        assert (desc.type, desc.sem, None if desc.indom.is_null else str(desc.indom),
                units_str(desc.units)) == (ptype, sem, indom, units), profile.name


@pytest.mark.parametrize("text,which,line", ERRORS)
def test_semantic_errors(text: str, which: tuple[str, ...], line: str | None) -> None:
    """DERIVE-BIND-30, DERIVE-BIND-31: libpcp's exact message, or silence."""
    for profile in _profiles(which):
        with pytest.raises(DeriveSemanticError) as info:
            _bind(text, profile, name="d.bad")
        expected = "" if line is None else f"Semantic error: derived metric d.bad: {line}"
        assert info.value.text == expected, profile.name


def test_unknown_operand_switch() -> None:
    """DERIVE-BIND-31, DERIVE-VER-3: with report_unknown_operand (pcp-7: libpcp 7.1 and
    later) the unknown operand is printed as "operand NAME"; without it (6.0.3, 6.3.8)
    the binding fails silently. The same profile with only the switch turned off is
    silent, so the switch is what decides."""
    line = "Semantic error: derived metric d.unk: operand no.such: Unknown operand metric"
    for profile, expected in ((P7, line), (dataclasses.replace(P7, report_unknown_operand=False), ""),
                              (P63, ""), (dataclasses.replace(P63, report_unknown_operand=True), line)):
        with pytest.raises(DeriveSemanticError) as info:
            _bind("no.such + 1", profile, name="d.unk")
        assert info.value.text == expected, profile
        assert info.value.reason == "Unknown operand metric"


def test_a_real_metric_masks_the_derived_one() -> None:
    """DERIVE-BIND-1"""
    bound = _bind("m.c32 * 1000", P63, name="m.kb")
    assert bound.masked and bound.desc.type == U64 and bound.operand_pmids() == [int(PmID("30.1.1"))]


def test_nested_derived_metrics() -> None:
    """DERIVE-BIND-3: rejected from 6.2.2 (except as meta=), accepted before."""
    inner = _bind("m.kb * 2", P60, name="d.inner")
    outer = _bind("d.inner + m.kb", P60, name="d.outer", derived={"d.inner": inner})
    assert outer.desc.type == U64
    with pytest.raises(DeriveSemanticError) as info:
        _bind("d.inner + m.kb", P63, name="d.outer", derived={"d.inner": inner})
    assert info.value.text == ("Semantic error: derived metric d.outer: operand d.inner: "
                               "Illegal nested derived metric")
    assert _bind("mkconst(1, meta=d.inner)", P63,
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
    bound = _bind("defined(no.such) ? no.such : m.kb", P63)
    colon = bound.root.right
    assert colon is not None and colon.bind == "right"
    assert _bind("m.kb > 1 ? m.kb : m.kb", P63).root.right.bind == "both"  # type: ignore[union-attr]


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
        with contextlib.suppress(DeriveSemanticError):
            bind(parse(text, P63), "d.x", metadata, P63)


def test_hand_built_trees_bind() -> None:
    """Trees built without the parser (DERIVE-BIND-2)."""
    tree = ast.Binary(0, "+", ast.Metric(0, "m.kb"), ast.Call(0, "sum", ast.Metric(0, "m.kb")))
    assert bind(tree, "d.x", METRICS, P60).desc.type == U64
    with pytest.raises(DeriveSemanticError):
        bind(ast.Call(0, "delta", ast.Integer(0, 1, "1")), "d.x", METRICS, P60)


# -- units ---------------------------------------------------------------------------------



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
    with contextlib.suppress(UnitsError):
        parse_units(text)
