"""Derived metrics against the real libpcp: 6.0.3 on the host (pcp-6.0 profile and
interpolation rules), 6.3.8 in the trixie chroot (pcp-6.3).

Every check registers expressions in one libpcp process (tests/differential/libpcp/pm_derive.py), looks
up their descriptors (capturing what libpcp prints), replays the archive in PM_MODE_INTERP
and compares, bit for bit, with pcpconform.oracles.derive (spec/derive.md). The evaluator runs with
every emulatable deviation on (DERIVE-DEV-*), and values libpcp reads from uninitialised
memory are not compared; where the default (intended) evaluation differs from libpcp a
deviation must have been recorded for that metric and fetch.

``PCPCONFORM_DERIVE_EXAMPLES=N`` raises the number of random archives per version of the
property test (default 12).
"""

from __future__ import annotations

import os
import random
import struct
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, assume, given, settings
from hypothesis import strategies as st

from pcpconform.extra.strategies import fixtures
from pcpconform.fixtures.fixture import parse_fixture
from pcpconform.fixtures.generate import generate_archive
from pcpconform.format.pmtypes import PmSem, PmType, PmUnits, Timestamp
from pcpconform.format.values import F32
from pcpconform.io.archive import Archive
from pcpconform.oracles.derive.bind import Bound, DeriveSemanticError, bind
from pcpconform.oracles.derive.evaluate import EMULATABLE, UNPREDICTABLE, Evaluator
from pcpconform.oracles.derive.parser import DeriveSyntaxError, parse
from pcpconform.oracles.derive.units import ConvScaleError, UnitsError, conv_scale, parse_units
from pcpconform.oracles.interp.replay import DEVIATIONS as INTERP_DEVIATIONS
from tests.differential.libpcp import derive_eval_bridge as dbridge
from tests.differential.libpcp.compare import libpcp_encoding
from tests.unit.test_derive_bind import DESCRIPTORS, ERRORS, UNITS
from tests.unit.test_derive_eval import DERIVE_FIXTURE, P60, P63, SEED_FIXTURE, T0

pytestmark = [pytest.mark.libpcp]

PROFILE = {"pcp-6.0": P60, "pcp-6.3": P63}
VERSIONS = [pytest.param(v, marks=pytest.mark.skipif(not dbridge.available(v),
                                                     reason=f"no libpcp for {v}"))
            for v in ("pcp-6.0", "pcp-6.3")]
STEP = 2_500_000_000


@pytest.fixture(scope="module")
def derive_base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("derive-vs") / "a"
    generate_archive(parse_fixture(DERIVE_FIXTURE), base)
    return base


@pytest.fixture(scope="module")
def seed_base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("derive-seed") / "seed"
    generate_archive(parse_fixture(SEED_FIXTURE), base)
    return base


# -- running both sides -----------------------------------------------------------------

@dataclass
class Outcome:
    """One expression on one side: a descriptor, an error text, or a syntax error."""

    desc: tuple[int, int, str | None, int] | None = None
    error: str | None = None          # libpcp's printed line ("" when silent)
    syntax: bool = False


@dataclass
class Comparison:
    texts: list[str]
    ours: dict[str, Outcome] = field(default_factory=dict)
    theirs: dict[str, Outcome] = field(default_factory=dict)
    bound: list[Bound] = field(default_factory=list)
    values_ours: list[dict[str, Any]] = field(default_factory=list)     # emulated
    values_intended: list[dict[str, Any]] = field(default_factory=list)
    deviations: list[dict[str, set[str]]] = field(default_factory=list)
    unknown: list[set[str]] = field(default_factory=list)
    values_theirs: list[dict[str, Any]] = field(default_factory=list)
    eol_ours: list[bool] = field(default_factory=list)
    eol_theirs: list[bool] = field(default_factory=list)


def _name(k: int) -> str:
    return f"d.e{k}"


def _our_outcome(text: str, name: str, archive: Archive, profile: Any) -> tuple[Outcome, Bound | None]:
    try:
        tree = parse(text, profile)
    except DeriveSyntaxError:
        return Outcome(syntax=True), None
    try:
        b = bind(tree, name, archive, profile)
    except DeriveSemanticError as exc:
        return Outcome(error=exc.text), None
    d = b.desc
    return Outcome(desc=(int(d.type), int(d.sem), None if d.indom.is_null else str(d.indom),
                         d.units.to_word())), b


def _their_outcome(reply: dict[str, Any], name: str) -> Outcome:
    if reply["register"].get(name) is not None:
        return Outcome(syntax=True)
    d = reply["descs"][name]
    if "error" in d:
        return Outcome(error=d["stderr"].rstrip("\n"))
    return Outcome(desc=(d["type"], d["sem"], d["indom"], d["units"]))


def _encode(pairs: list[tuple[Any, Any]], ptype: int) -> list[list[Any]]:
    return [[inst, "?" if value is UNPREDICTABLE else libpcp_encoding(value, ptype)]
            for inst, value in pairs]


def compare(version: str, base: Path, texts: list[str],
            schedule: tuple[Timestamp, int, int] | None = None) -> Comparison:
    """Bind and replay ``texts`` (names d.e0, d.e1, ...) on both sides."""
    profile = PROFILE[version]
    archive = Archive(base)
    cmp = Comparison(texts)
    for k, text in enumerate(texts):
        cmp.ours[_name(k)], b = _our_outcome(text, _name(k), archive, profile)
        if b is not None:
            cmp.bound.append(b)
    request: dict[str, Any] = {"derived": [[_name(k), t] for k, t in enumerate(texts)]}
    if schedule is not None:
        start, step, count = schedule
        request["schedule"] = {"start": [start.sec, start.nsec], "delta": step, "count": count}
    reply = dbridge.pm_derive(version, request, base)
    for k in range(len(texts)):
        cmp.theirs[_name(k)] = _their_outcome(reply, _name(k))
    if schedule is None:
        return cmp
    types = {b.name: b.desc.type for b in cmp.bound}
    emulated = Evaluator(archive, cmp.bound, profile, emulate=EMULATABLE,
                         interp_emulate=INTERP_DEVIATIONS).schedule(*schedule)
    # the derived metrics' intended behaviour over libpcp's own interpolation (INTERP-DEV-*)
    intended = Evaluator(archive, cmp.bound, profile,
                         interp_emulate=INTERP_DEVIATIONS).schedule(*schedule)
    for mine, plain in zip(emulated, intended):
        cmp.eol_ours.append(mine.eol)
        cmp.values_ours.append({n: _encode(v, types[n]) for n, v in mine.values.items()})
        cmp.values_intended.append({n: _encode(v, types[n]) for n, v in plain.values.items()})
        cmp.deviations.append(plain.deviations)
        cmp.unknown.append(mine.unknown)
    for s in reply["samples"]:
        cmp.eol_theirs.append(s["eol"])
        cmp.values_theirs.append({n: v["values"] for n, v in s["values"].items()})
    return cmp


def _same(ours: list[list[Any]], theirs: list[list[Any]]) -> bool:
    """Equal, except what libpcp takes from uninitialised memory ("?")."""
    if len(ours) != len(theirs):
        return False
    for (i, v), (j, w) in zip(ours, theirs):
        if i is UNPREDICTABLE:
            continue
        if i != j or (v != "?" and v != w):
            return False
    return True


def mismatches(cmp: Comparison, skip: set[tuple[int, str]] = frozenset()) -> list[str]:  # type: ignore[assignment]
    """Every difference between the two sides, as readable lines."""
    out = []
    for k, text in enumerate(cmp.texts):
        n = _name(k)
        if cmp.ours[n] != cmp.theirs[n]:
            out.append(f"{text!r}: ours {cmp.ours[n]} libpcp {cmp.theirs[n]}")
    assert cmp.eol_ours == cmp.eol_theirs, (cmp.eol_ours, cmp.eol_theirs)
    for b in cmp.bound:
        if cmp.theirs[b.name].desc is None:
            continue
        text = cmp.texts[int(b.name[3:])]
        for f, (mine, plain, theirs) in enumerate(zip(cmp.values_ours, cmp.values_intended,
                                                      cmp.values_theirs)):
            if cmp.eol_ours[f] or (f, b.name) in skip or b.name in cmp.unknown[f]:
                continue
            got = theirs.get(b.name, [])
            if not _same(mine.get(b.name, []), got):
                out.append(f"{text!r} fetch {f}: ours {mine.get(b.name)} libpcp {got}")
            hit = cmp.deviations[f].get(b.name)
            if plain.get(b.name, []) != got and not hit:
                out.append(f"{text!r} fetch {f}: intended {plain.get(b.name)} differs from "
                           f"libpcp {got} with no deviation recorded")
    return out


def values(cmp: Comparison, k: int, side: str = "theirs") -> list[Any]:
    """Per fetch, libpcp's (or our) values of expression k, decoded to numbers."""
    rows = cmp.values_theirs if side == "theirs" else cmp.values_ours
    out = []
    for row in rows:
        pairs = row.get(_name(k), [])
        out.append([[i, _decode(v)] for i, v in pairs] if pairs else None)
    return out


def _decode(v: Any) -> Any:
    if isinstance(v, str) and v.startswith("f64:"):
        return struct.unpack(">d", bytes.fromhex(v[4:]))[0]
    if isinstance(v, str) and v.startswith("f32:"):
        return struct.unpack(">f", bytes.fromhex(v[4:]))[0]
    return v


# -- (a) the metadata and diagnostics table ---------------------------------------------

@pytest.mark.parametrize("version", VERSIONS)
def test_metadata_table_matches_libpcp(version: str, derive_base: Path) -> None:
    """DERIVE-BIND-1 .. DERIVE-BIND-31: every descriptor and every semantic error of the
    tables in tests/test_derive_bind.py, as libpcp binds them."""
    texts = [r[0] for r in DESCRIPTORS if r[1] in ("both", version)] + \
            [r[0] for r in ERRORS if r[1] in ("both", version)]
    cmp = compare(version, derive_base, texts)
    assert mismatches(cmp) == []
    assert sum(o.desc is not None for o in cmp.theirs.values()) >= 50
    assert sum(o.error is not None for o in cmp.theirs.values()) >= 45


#: expressions whose values are compared fetch by fetch on DERIVE_FIXTURE
VALUE_EXPRESSIONS = [
    "m.inst", "m.disc", "m.flt", "m.str", "m.kb", "min(m.inst)", "max(m.disc)", "sum(m.inst)",
    "sum(m.flt)", "sum(m.c32)", "avg(m.flt)", "avg(m.i64)", "count(m.inst)", "rate(m.cu32)",
    "rate(m.c32)", "rate(m.c64)", "rate(m.cu64)", "rate(m.cflt)", "rate(m.cdbl)",
    "delta(m.cu32)", "delta(m.cu64)", "delta(m.cflt)", "delta(m.c32)", "!m.kb", "!m.inst",
    "!m.flt", "!m.disc", "m.inst[b]", "m.inst[dd]", "m.inst[dd x]", "m.inst[zz]",
    "matchinst(/d/, m.inst)", "matchinst(!/^[ab]$/, m.inst)", "matchinst(/[[:alpha:]]/, m.flt)",
    "m.c64 + rescale(m.cu64, \"byte\")", "m.inst * m.flt", "m.inst / m.flt",
    "m.flt - m.inst", "delta(m.cu64) / delta(m.cflt)", "m.disc > 1 ? m.inst : m.inst * 2",
    "m.disc > 1 ? m.disc : m.disc * 2", "-m.cu32", "-m.cu64", "-m.flt",
    "m.kb == rescale(m.kb, \"byte\")", "m.c32 > 100", "m.kb + rescale(m.kb, \"byte\")",
    "rescale(m.kb, \"Mbyte\")", "rescale(m.inst, \"Kbyte / ms\")", "rescale(m.flt, \"byte / hour\")",
    "instant(m.cflt) * m.inst", "m.inst * instant(m.cflt)", "m.disc * 1000000 * 1000000",
    "4294967295 + m.disc", "m.kb / 0", "(m.kb - m.kb) / 0", "m.i64 / m.i64", "m.disc && m.disc > 2",
    "m.disc || 0", "m.disc > 0.25", "m.inst >= m.flt", "m.flt != m.inst", "defined(m.kb) + m.disc",
    "count(m.inst) + m.disc", "m.kb > 15 ? m.kb : m.kb * 2", "mkconst(7, type=64) * m.i64",
    "mkconst(2.5, type=float) * m.flt",
]
VALUE_EXPRESSIONS_63 = [
    "scalar(m.inst)", "scalar(m.kb)", "delta(sum(m.inst))", "delta(min(m.inst))",
    "rate(m.c64 + m.c64)", "delta(m.inst[b])", "delta(defined(m.kb))",
    "rate(matchinst(/b/, m.flt))", "m.inst > 1 ? m.inst : novalue()",
    "m.inst > 1 ? novalue() : m.inst", "(m.inst * 2)[b]", "defined(no.such) ? no.such : m.kb",
    "1 ? m.kb : m.c64", "delta(5)", "m.inst > 2 ? m.flt * 1.0 : m.inst",
    "m.disc > 1 ? m.inst : m.flt * 1.0",
]


@pytest.mark.parametrize("version", VERSIONS)
def test_values_table_matches_libpcp(version: str, derive_base: Path) -> None:
    """DERIVE-EVAL-1 .. DERIVE-EVAL-17 and DERIVE-DEV-1 .. DERIVE-DEV-5: values, bit for
    bit, at 15 fetches across a gap; the intended evaluation differs only where a
    deviation was recorded."""
    texts = VALUE_EXPRESSIONS + (VALUE_EXPRESSIONS_63 if version == "pcp-6.3" else [])
    cmp = compare(version, derive_base, texts, (Timestamp(T0), STEP, 15))
    assert mismatches(cmp) == []
    assert len(cmp.bound) >= len(texts) - 2


# -- (b) the surprises, pinned ----------------------------------------------------------

@pytest.mark.parametrize("version", VERSIONS)
def test_surprises_in_binding(version: str, derive_base: Path) -> None:
    """DERIVE-BIND-5: `m.c32 > 0` is U32 COUNTER with no units; DERIVE-BIND-4:
    `counter - 300` is refused; DERIVE-BIND-13: `m.kb > 0.5` is refused but `m.kb > 1`
    accepted; DERIVE-BIND-31, DERIVE-VER-3: an unknown operand is silent in 6.0.3 and 6.3.8."""
    cmp = compare(version, derive_base, ["m.c32 > 0", "m.c32 - 300", "m.kb > 0.5", "m.kb > 1",
                                         "no.such.metric + 1"])
    assert mismatches(cmp) == []
    t = cmp.theirs
    assert t["d.e0"].desc == (PmType.U32, PmSem.COUNTER, None, 0)
    assert t["d.e1"].error and t["d.e1"].error.endswith("Illegal operator for counter and non-counter")
    assert t["d.e2"].error and t["d.e2"].error.endswith("Dimensions are not the same")
    assert t["d.e3"].desc is not None and t["d.e4"].error == ""


@pytest.mark.parametrize("version", VERSIONS)
def test_surprises_in_evaluation(version: str, derive_base: Path) -> None:
    """Relational operators never rescale; sum/avg of nothing are 0 and min/max repeat
    their last value (DERIVE-DEV-1); !x of a FLOAT is a denormal or 0 and of a 64-bit
    value garbage (DERIVE-DEV-2); `1 ? 2 : 0 ? 3 : 4` is 3; `!0>1||0<1` is 1;
    `4294967295 + 1` is 0; rescale() of integers truncates; `x[name]` of an absent name has
    no values; scalar() takes the first instance in libpcp's order (6.3; DERIVE-DEV-6
    crashes 6.0.3 on the gap)."""
    texts = ["m.kb == rescale(m.kb, \"byte\")", "sum(m.inst)", "avg(m.flt)", "min(m.inst)",
             "max(m.disc)", "!(m.flt - m.flt)", "!m.kb", "1 ? 2 : 0 ? 3 : 4", "!0>1||0<1",
             "4294967295 + 1", "rescale(m.kb, \"Mbyte\")", "m.kb + rescale(m.kb, \"byte\")",
             "m.inst[zz]"] + (["scalar(m.inst)"] if version == "pcp-6.3" else [])
    cmp = compare(version, derive_base, texts, (Timestamp(T0), STEP, 15))
    assert mismatches(cmp) == []
    gap = 6
    assert values(cmp, 0)[0] == [[-1, 0]]
    assert values(cmp, 1)[gap] == [[-1, 0.0]] and values(cmp, 2)[gap] == [[-1, 0.0]]
    assert values(cmp, 3)[gap] == values(cmp, 3)[4] == [[-1, 1.0]]       # stale
    assert values(cmp, 4)[gap] == [[-1, 9]]
    assert cmp.values_intended[gap]["d.e3"] == []                          # intended
    assert {v for _, v in cmp.values_theirs[0]["d.e5"]} == {"f32:00000001"}
    assert values(cmp, 7)[0] == [[-1, 3]] and values(cmp, 8)[0] == [[-1, 1]]
    assert values(cmp, 9)[0] == [[-1, 0]]
    assert values(cmp, 10)[0] == [[-1, 0]]                                 # 10 Kbyte -> 0 Mbyte
    assert values(cmp, 11)[0] == [[-1, 20.0]]                              # DOUBLE, Kbyte
    assert set(map(str, values(cmp, 12))) == {"None"}                      # not an error
    if version == "pcp-6.3":                                               # first in hash order
        assert values(cmp, 13)[0] == [[-1, 1.5]] and values(cmp, 13)[6] is None


@pytest.mark.parametrize("version", VERSIONS)
def test_rate_of_a_decreasing_counter(version: str, derive_base: Path) -> None:
    """DERIVE-EVAL-9: a U32 counter going 200 -> 162.5: 6.0.3 returns the wrapped
    difference, 6.3.8 no value; a PM_TYPE_32 counter is negative in both."""
    cmp = compare(version, derive_base, ["rate(m.cu32)", "rate(m.c32)", "delta(m.cu32)"],
                  (Timestamp(T0), STEP, 3))
    assert mismatches(cmp) == []
    if version == "pcp-6.0":
        assert values(cmp, 0)[1] == [[-1, pytest.approx((2**32 - 37) / 2.5)]]
    else:
        assert values(cmp, 0)[1] is None
    assert values(cmp, 1)[1] == [[-1, pytest.approx(-2.8)]]
    assert values(cmp, 2)[1] == [[-1, -37]]                                # delta: no check


@pytest.mark.parametrize("version", VERSIONS[1:])
def test_delta_of_sum_across_a_gap(version: str, derive_base: Path) -> None:
    """DERIVE-EVAL-10: sum() of no values is 0, so delta(sum(x)) drops to minus the last
    sum when the instances go (6.3: delta() of an expression)."""
    cmp = compare(version, derive_base, ["delta(sum(m.inst))"], (Timestamp(T0), STEP, 15))
    assert mismatches(cmp) == []
    assert values(cmp, 0)[5] == [[-1, -6.0]] and values(cmp, 0)[6] == [[-1, 0.0]]


@pytest.mark.parametrize("version", VERSIONS[1:])
def test_libpcp_6_3_defects(version: str, derive_base: Path) -> None:
    """DERIVE-DEV-3: a non-trailing novalue() leaves garbage; DERIVE-DEV-4: delta() of
    x[inst] never has values; DERIVE-DEV-5: matchinst() misses "dd x" when the origin
    is T0+4 s + 1e9 ns."""
    cmp = compare(version, derive_base, ["m.inst > 1 ? m.inst : novalue()",
                                         "delta(m.inst[b])", "matchinst(/d/, m.inst)"],
                  (Timestamp(T0), STEP, 6))
    assert mismatches(cmp) == []
    first = cmp.values_theirs[0]["d.e0"]
    assert first[0] == [0, "f64:3ff8000000000000"] and first[1][0] != 1   # not inst 1
    assert set(map(str, values(cmp, 1))) == {"None"}
    assert values(cmp, 2)[2] is None and cmp.values_intended[2]["d.e2"] == [[7, "f64:4010000000000000"]]


# -- (c) the seed's worked example --------------------------------------------------------

SEED_ROWS = [  # the man page's table: expression, type, units; then the rescaling of the right operand
    ("sample.milliseconds", PmType.DOUBLE, "millisec"),
    ("delta(sample.milliseconds)", PmType.DOUBLE, "millisec"),
    ("network.interface.in.bytes", PmType.U64, "byte"),
    ("delta(network.interface.in.bytes)", PmType.DOUBLE, "byte"),    # the table says U64
    ("delta(network.interface.in.bytes) / delta(sample.milliseconds)", PmType.DOUBLE,
     "byte / millisec"),
    ("network.interface.speed", PmType.FLOAT, "Mbyte / sec"),
    ("network.interface.speed - delta(network.interface.in.bytes) / delta(sample.milliseconds)",
     PmType.DOUBLE, "Mbyte / sec"),
]


@pytest.mark.parametrize("version", VERSIONS)
def test_seed_worked_example(version: str, seed_base: Path) -> None:
    """DERIVE-BIND-9, DERIVE-BIND-14: the pmRegisterDerived(3) table row by row. libpcp
    types delta() of a U64 as DOUBLE (the man page's table says U64); the ratio is scaled
    /1048576 and *1000 into Mbyte/sec; values at 1 s steps."""
    texts = [r[0] for r in SEED_ROWS]
    cmp = compare(version, seed_base, texts, (Timestamp(T0), 10**9, 3))
    assert mismatches(cmp) == []
    for k, (_, ptype, units) in enumerate(SEED_ROWS):
        desc = cmp.theirs[_name(k)].desc
        assert desc is not None and desc[0] == ptype
        assert str(PmUnits.from_word(desc[3])) == units
    x = cmp.bound[-1].root.right
    assert x is not None and (x.div, x.mul) == (1048576, 1000)
    assert values(cmp, 6)[1] == [[-1, pytest.approx(100 - 2097152 / 1000 * 1000 / 1048576)]]


# -- units -------------------------------------------------------------------------------

def _random_units_texts(n: int) -> list[str]:
    rng = random.Random(42)
    words = ["byte", "Kbyte", "MB", "GiB", "sec", "ms", "usec", "hour", "h", "count",
             "count x 10^3", "counts", "2", "0.5", "-1", "1e3", "/", "^2", "^-1", "^0", "x",
             "space-9", "time-7", "nanosec", "Tbytes", "min"]
    return [" ".join(rng.choice(words) for _ in range(rng.randint(0, 5))) for _ in range(n)]


@pytest.mark.parametrize("version", VERSIONS)
def test_units_match_pmParseUnitsStr_and_pmConvScale(version: str) -> None:
    """DERIVE-BIND-19, DERIVE-EVAL-13: parse_units is pmParseUnitsStr (units, multiplier,
    message) and conv_scale is pmConvScale, for fixed and random inputs."""
    texts = [t for t in UNITS + _random_units_texts(300) if "time-7^0" not in t]
    rng = random.Random(7)
    samples = [PmUnits(1, 0, 0, s, 0, 0) for s in range(0, 8)] + \
        [PmUnits(0, 1, 0, 0, s, 0) for s in range(0, 7)] + \
        [PmUnits(0, 0, 1, 0, 0, s) for s in (-3, 0, 2)] + [PmUnits(1, -1, 0, 1, 3, 0),
                                                             PmUnits(), PmUnits(0, 0, 0, 0, 0, 3)]
    conversions = []
    for _ in range(400):
        ptype = rng.choice(list(PmType)[1:7])
        a, b = rng.choice(samples), rng.choice(samples)
        raw = rng.choice([0, 1, 511, 512, 513, 1000, 2**31 - 1, 2**32 - 1, 123456789])
        if ptype in (PmType.I32, PmType.I64):
            raw = rng.choice([raw, -raw])
        if ptype == PmType.I32:
            raw = raw - 2**32 if raw >= 2**31 else raw
        value: Any = raw
        if ptype == PmType.FLOAT:
            value = F32(raw / 7)
        elif ptype == PmType.DOUBLE:
            value = raw / 7
        conversions.append((ptype, value, a, b))
    reply = dbridge.pm_derive(version, {
        "units": texts,
        "convscale": [[int(t), libpcp_encoding(v, t), a.to_word(), b.to_word()]
                      for t, v, a, b in conversions]})
    for text, got in zip(texts, reply["units"]):
        try:
            units, mult = parse_units(text)
        except UnitsError as exc:
            assert got.get("error") == exc.message, text
            continue
        assert "error" not in got, text
        assert (units.to_word(), "f64:" + struct.pack(">d", mult).hex()) == \
            (got["word"], got["mult"]), text
    for (ptype, value, a, b), got in zip(conversions, reply["convscale"]):
        try:
            mine = libpcp_encoding(conv_scale(ptype, value, a, b), ptype)
        except ConvScaleError as exc:
            mine = f"error:{exc.code}"
        assert mine == got, (ptype, value, str(a), str(b))


# -- (d) random archives x random expressions -------------------------------------------

_REGEXES = ["a", "^a", "b$", "[[:digit:]]", "^[a-m]", ".", "x|y", "^$", "[0-9]+"]


@dataclass
class _Pool:
    """What the expression strategy may use: the archive's metrics by kind."""

    numeric: list[str]
    other: list[str]
    indom_metrics: dict[str, list[str]]       # metric -> its instance names


def _pool(archive: Archive) -> _Pool:
    numeric, other, indoms = [], [], {}
    for d in archive.descs():
        name = d.names[0]
        (numeric if d.type in (0, 1, 2, 3, 4, 5) else other).append(name)
        if not d.indom.is_null and d.type in (0, 1, 2, 3, 4, 5):
            names = {n for r in archive.indom_history(d.indom) for n in r.instances.values()}
            indoms[name] = sorted(names)
    return _Pool(numeric, other, indoms)


def _overflows(a: PmUnits, text: str) -> bool:
    """Whether pmConvScale's 64-bit factors overflow between ``a`` and ``text``'s units
    (libpcp then divides by zero: DERIVE-DEV-9)."""
    try:
        b = parse_units(text)[0]
    except UnitsError:
        return False
    scale = {"Space": 1024, "Time": 1000, "Count": 10}
    big = 0
    for axis, base in scale.items():
        dim = getattr(a, "dim" + axis)
        steps = abs(getattr(a, "scale" + axis) - getattr(b, "scale" + axis))
        big += abs(dim) * (steps + 4) * base.bit_length()
    return big >= 63


def _units_like(draw: st.DrawFn, units: PmUnits) -> str:
    """A units string with the dimensions of ``units`` and random scales."""
    parts = []
    for dim, words in ((units.dimSpace, ["byte", "Kbyte", "Mbyte", "Gbyte"]),
                       (units.dimTime, ["ns", "us", "ms", "sec", "min", "hour"]),
                       (units.dimCount, ["count", "count x 10", "count x 10^3"])):
        if dim:
            word = draw(st.sampled_from(words))
            parts.append(word if dim == 1 else f"{word}^{dim}")
    return " ".join(parts)


@st.composite
def expressions(draw: st.DrawFn, pool: _Pool, archive: Archive, profile: Any,
                depth: int = 3) -> str:
    """An expression over the archive's metrics, fully parenthesised. Operands are chosen
    to be mostly well typed; whatever does not bind is compared as an error."""
    def metric() -> str:
        return draw(st.sampled_from(pool.numeric)) if pool.numeric else "1"

    def desc_of(text: str) -> Any:
        try:
            return bind(parse(text, profile), "d.tmp", archive, profile).desc
        except (DeriveSemanticError, DeriveSyntaxError):
            return None

    def leaf() -> str:
        choice = draw(st.integers(0, 11))
        if choice <= 4 or not pool.numeric:
            return metric() if pool.numeric else "1"
        if choice == 5:
            return str(draw(st.sampled_from([0, 1, 2, 7, 1000, 4294967295])))
        if choice == 6:
            return draw(st.sampled_from(["0.5", "1.5", "2.", ".25", "1000.0"]))
        if choice == 7:
            func = draw(st.sampled_from(["sum", "avg", "min", "max", "count"]))
            return f"{func}({metric()})"
        if choice == 8:
            func = draw(st.sampled_from(["rate", "delta", "instant"]))
            return f"{func}({metric()})"
        if choice == 9 and pool.indom_metrics:
            m = draw(st.sampled_from(sorted(pool.indom_metrics)))
            inst = draw(st.sampled_from(pool.indom_metrics[m] + ["nosuch"]))
            return f"{m}[{inst}]"
        if choice == 10 and pool.indom_metrics:
            m = draw(st.sampled_from(sorted(pool.indom_metrics)))
            bang = draw(st.sampled_from(["", "!"]))
            return f"matchinst({bang}/{draw(st.sampled_from(_REGEXES))}/, {m})"
        name = draw(st.sampled_from(pool.numeric + ["no.such"]))
        return f"defined({name})"

    def expr(level: int) -> str:
        if level == 0 or draw(st.integers(0, 3)) == 0:
            return leaf()
        kind = draw(st.integers(0, 9))
        if kind <= 3:
            left = expr(level - 1)
            ld = desc_of(left)
            op = draw(st.sampled_from(["+", "-", "*", "/", "<", ">=", "==", "!=", "&&", "||"]))
            if op in ("+", "-") and ld is not None and draw(st.booleans()):
                # the same dimensions: rescale a metric like the left operand
                target = _units_like(draw, ld.units)
                right = f"rescale({metric()}, \"{target}\")"
                right = right if desc_of(right) and not any(
                    _overflows(desc_of(m).units, target) for m in pool.numeric) \
                    else expr(level - 1)
            else:
                right = expr(level - 1)
            return f"({left} {op} {right})"
        if kind == 4:
            inner = expr(level - 1)
            d = desc_of(inner)
            if (d is not None and d.type in (PmType.I32, PmType.U32)) or draw(st.booleans()):
                return f"(!{inner})"
            return f"(-{inner})"
        if kind == 5:
            guard = expr(level - 1)
            then = expr(level - 1)
            d = desc_of(then)
            other = then if d is None or draw(st.booleans()) else expr(level - 1)
            if profile.novalue and draw(st.integers(0, 3)) == 0:
                other = "novalue()"             # never on the left: DERIVE-DEV-3 crash
            return f"({guard} ? {then} : {other})"
        if kind == 6:
            inner = expr(level - 1)
            d = desc_of(inner)
            target = _units_like(draw, d.units) if d is not None else ""
            if d is None or _overflows(d.units, target):
                return inner
            return f"rescale({inner}, \"{target}\")"
        if kind == 7 and profile.expr_args:
            func = draw(st.sampled_from(["rate", "delta"]))
            inner = expr(level - 1)
            if "instant(" in inner or "matchinst(" in inner:   # DERIVE-DEV-8, -12 crash
                return inner
            return f"{func}({inner})"
        if kind == 8 and profile.instance_fixes:
            inner = expr(level - 1)
            return draw(st.sampled_from([f"scalar({inner})", f"({inner})[{draw(st.sampled_from(sum(pool.indom_metrics.values(), []) or ['x']))}]"]))
        return leaf()

    return expr(depth)


def _schedule(draw: st.DrawFn, archive: Archive) -> tuple[Timestamp, int, int]:
    times = [r.timestamp for r in archive.results()]
    lo, hi = times[0].total_nsec(), times[-1].total_nsec()
    span = max(hi - lo, 1)
    start = lo + draw(st.integers(-2 * 10**9, span + 10**9), label="start offset ns") \
        if draw(st.booleans()) else lo
    count = draw(st.integers(3, 16), label="count")
    # mostly steps that cover the archive, sometimes any step
    step = draw(st.sampled_from([max(span // (count - 1), 1), max(span // count, 1)])
                | st.integers(1, max(span // 3, 1)) | st.sampled_from([10**9, 250_000_000]),
                label="delta ns")
    fetches = [start + k * step for k in range(count)]
    # INTERP-EOL-2: the 1 ms edges of the archive are not modelled
    assume(not any(lo - 2_000_000 <= t < lo or hi < t <= hi + 2_000_000 for t in fetches))
    return Timestamp.from_nsec(start), step, count


INTERP_MISMATCHES: list[str] = []
STATS: dict[str, int] = {k: 0 for k in ("examples", "expressions", "bound", "errors", "fetches",
                                        "values", "deviations")}


@pytest.mark.parametrize("version", VERSIONS)
@settings(max_examples=int(os.environ.get("PCPCONFORM_DERIVE_EXAMPLES", "12")), deadline=None,
          # shrinking costs a libpcp process per step: on request only
          phases=[Phase.explicit, Phase.reuse, Phase.generate]
          + ([Phase.shrink] if os.environ.get("PCPCONFORM_DERIVE_SHRINK") else []),
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                 HealthCheck.filter_too_much, HealthCheck.data_too_large])
@given(data=st.data())
def test_random_archives_and_expressions_match_libpcp(tmp_path_factory: pytest.TempPathFactory,
                                                       version: str, data: st.DataObject) -> None:
    """DERIVE-BIND-*, DERIVE-EVAL-*: random archives, 24 random expressions each, a
    random forward schedule: outcomes and every fetch's values equal libpcp's. The
    operands are also replayed on their own; a fetch where one of them differs is an
    interpolation mismatch (not derived metrics'), reported and skipped."""
    profile = PROFILE[version]
    fixture = data.draw(fixtures(max_metrics=5, max_samples=7), label="fixture")
    base = tmp_path_factory.mktemp("derive-rnd") / "a"
    generate_archive(fixture, base)
    archive = Archive(base)
    pool = _pool(archive)
    assume(pool.numeric)
    texts = [data.draw(expressions(pool, archive, profile), label=f"expr {k}") for k in range(24)]
    operands = pool.numeric + pool.other
    schedule = _schedule(data.draw, archive)
    try:
        cmp = compare(version, base, operands + texts, schedule)
    except dbridge.bridge.LibpcpError as exc:
        # a libpcp killed by a signal on an expression the strategy does not yet steer
        # around (DERIVE-DEV-6..12 are avoided): nothing to compare, libpcp's defect
        assume(exc.returncode >= 0)
        raise
    skip: set[tuple[int, str]] = set()
    known = len(INTERP_MISMATCHES)
    for k, name in enumerate(operands):
        for f, (mine, theirs) in enumerate(zip(cmp.values_ours, cmp.values_theirs)):
            if not cmp.eol_ours[f] and mine.get(_name(k), []) != theirs.get(_name(k), []):
                INTERP_MISMATCHES.append(f"{version} {name} fetch {f}: {mine.get(_name(k))} "
                                         f"vs libpcp {theirs.get(_name(k))}")
                skip.add((f, _name(k)))
                for later in range(f, len(cmp.values_ours)):
                    skip.update((later, _name(j)) for j in range(len(operands), len(cmp.texts))
                                if name in cmp.texts[j])
    if len(INTERP_MISMATCHES) > known:
        warnings.warn("interpolation mismatches (not derived-metric ones): "
                      + "; ".join(INTERP_MISMATCHES[known:known + 3]))
    STATS["examples"] += 1
    STATS["expressions"] += len(texts)
    STATS["bound"] += sum(1 for b in cmp.bound if int(b.name[3:]) >= len(operands))
    STATS["errors"] += sum(1 for k in range(len(operands), len(cmp.texts))
                           if cmp.theirs[_name(k)].error is not None)
    STATS["fetches"] += sum(1 for e in cmp.eol_theirs if not e)
    STATS["values"] += sum(len(v) for k, row in enumerate(cmp.values_theirs)
                           for n, v in row.items() if int(n[3:]) >= len(operands))
    STATS["deviations"] += sum(len(d) for d in cmp.deviations)
    if os.environ.get("PCPCONFORM_DERIVE_STATS"):
        print(version, dict(STATS), len(INTERP_MISMATCHES))
    assert mismatches(cmp, skip) == []

