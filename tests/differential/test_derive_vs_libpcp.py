"""Derived metrics against each real libpcp (the ``referee`` fixture: 6.0.3, 6.3.8, 7.x).

Every check registers expressions in one libpcp process (tests/differential/libpcp/
pm_derive.py), looks up their descriptors (capturing what libpcp prints), replays the
archive in PM_MODE_INTERP and compares, bit for bit, with pcpconform.oracles.derive under
the referee's profile (spec/derive.md). The comparison (tests/differential/libpcp/
derive_compare.py) leaves out only what libpcp did in that run: expressions that killed
it (each must be one the spec names) and values it read from uninitialised memory (they
differ between two runs with different heap fill bytes). Where the intended evaluation
differs from libpcp a deviation must have been recorded for that metric and fetch.

``PCPCONFORM_DERIVE_EXAMPLES=N`` sets the number of random archives per referee of the
property test (default 25, derandomized); ``PCPCONFORM_DERIVE_SEED=N`` draws them from
seed N instead; ``PCPCONFORM_DERIVE_STATS=1`` prints counts.
"""

from __future__ import annotations

import json
import os
import random
import re
import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, assume, given, seed, settings
from hypothesis import strategies as st

from pcpconform.errors import ConvScaleError, UnitsAbort, UnitsError
from pcpconform.extra.strategies import fixtures
from pcpconform.fixtures.fixture import parse_fixture
from pcpconform.fixtures.generate import generate_archive
from pcpconform.format.pmtypes import PmSem, PmType, PmUnits, Timestamp
from pcpconform.format.values import F32
from pcpconform.io.archive import Archive
from pcpconform.oracles.derive.evaluate import EMULATABLE, UNPREDICTABLE, Evaluator
from pcpconform.oracles.derive.profiles import PROFILES, Profile
from pcpconform.oracles.derive.units import conv_scale, parse_units, units_str
from pcpconform.oracles.interp.replay import DEVIATIONS as INTERP_DEVIATIONS
from tests.cli import run_cli
from tests.derive_cases import DERIVE_FIXTURE, SEED_FIXTURE, T0, UNITS, rows_for
from tests.derive_random import expressions, pool_of, schedule_of
from tests.differential.libpcp import derive_eval_bridge as dbridge
from tests.differential.libpcp.compare import libpcp_encoding
from tests.differential.libpcp.crashes import isolate
from tests.differential.libpcp.derive_compare import (
    HEAPS,
    Comparison,
    compare,
    crash_explanations,
    mismatches,
    name_of,
    values,
)
from tests.differential.libpcp.referees import Referee, archive_files

pytestmark = [pytest.mark.libpcp]

STEP = 2_500_000_000
SCHEDULE = (Timestamp(T0), STEP, 15)


def _profile(referee: Referee) -> Profile:
    return PROFILES[referee.derive_profile]


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


def _no_unexplained_crashes(cmp: Comparison, referee: Referee, profile: Profile, base: Path,
                            schedule: tuple[Timestamp, int, int] | None) -> dict[str, set[str]]:
    """Every expression that killed libpcp is one the spec names (DERIVE-DEV-*, or a parser
    abort); returns them with their reasons."""
    why = crash_explanations(cmp, referee, profile, base, schedule)
    unexplained = {t: c.signal for c in cmp.crashes for k in c.items
                   if not why.get(t := cmp.texts[k])}
    assert unexplained == {}, f"{referee.name}: libpcp killed by expressions no clause names"
    return why


def _crashed(cmp: Comparison) -> list[str]:
    return sorted(cmp.texts[k] for c in cmp.crashes for k in c.items)


def heap_fill(heap: dict[str, str]) -> int | None:
    """The byte glibc leaves in every byte of a chunk malloc hands out in heap state
    ``heap`` (derive_compare.HEAPS), where the state fixes it: with M_PERTURB (man mallopt)
    malloc fills the chunk with the perturb byte XOR 0xff (the per-thread cache, whose
    chunks skip the fill, is off); with every chunk mmap'd on its own, fresh pages hold 0.
    None for glibc's defaults: a chunk keeps what it held (or the allocator's pointers).
    test_not_of_wide_operands_per_heap_state measures this."""
    tunables = heap.get("GLIBC_TUNABLES", "")
    if heap.get("MALLOC_PERTURB_") and "tcache_count=0" in tunables:
        return (int(heap["MALLOC_PERTURB_"]) & 0xFF) ^ 0xFF
    if "mmap_threshold=0" in tunables:
        return 0
    return None


def _runs(cmp: Comparison, f: int, name: str) -> list[list[Any]]:
    """libpcp's values of ``name`` at fetch ``f``, one list per heap state (HEAPS order)."""
    return [cmp.values_theirs[f].get(name, [])] + [o[f].get(name, []) for o in cmp.values_again]


def per_heap_predictions(cmp: Comparison, base: Path, profile: Profile,
                         schedule: tuple[Timestamp, int, int]) -> dict[int, list[dict[str, Any]]]:
    """Per heap state with a known fill (heap_fill), by its index in HEAPS: libpcp's
    values as the oracle predicts them with what that state leaves in unwritten memory
    (Evaluator(unwritten=...), DERIVE-DEV-2), encoded as libpcp's are."""
    archive = Archive(base)
    types = {b.name: b.desc.type for b in cmp.bound}
    out = {}
    for k, heap in enumerate(HEAPS):
        fill = heap_fill(heap)
        if fill is None:
            continue
        samples = Evaluator(archive, cmp.bound, profile, emulate=EMULATABLE,
                            interp_emulate=INTERP_DEVIATIONS, unwritten=fill).schedule(*schedule)
        out[k] = [{n: [[i, "?" if v is UNPREDICTABLE else libpcp_encoding(v, types[n])]
                       for i, v in pairs] for n, pairs in s.values.items()} for s in samples]
    return out


def settle_unwritten(cmp: Comparison, base: Path, profile: Profile,
                     schedule: tuple[Timestamp, int, int]) -> list[str]:
    """Values the oracle calls unpredictable (heap contents unknown) judged per heap state.

    Where the oracle's value is "?" and libpcp's runs in every heap state agree, every
    state whose fill is known must give the value the oracle predicts with that fill, bit
    for bit (a mismatch is returned as a line), and a "?" that every such state predicts
    exactly is replaced by that value, so that derive_compare.mismatches compares it like
    any other. Where the runs disagree, libpcp demonstrably read memory it never wrote in
    this run (a reused chunk need not hold the fill): that entry is not compared, as in
    mismatches; a "?" left elsewhere fails there."""
    if not any(v == "?" for row in cmp.values_ours for pairs in row.values() for _, v in pairs):
        return []
    predicted = per_heap_predictions(cmp, base, profile, schedule)
    out = []
    for f, row in enumerate(cmp.values_ours):
        if cmp.eol_ours[f]:
            continue
        for name, pairs in row.items():
            runs = _runs(cmp, f, name)
            for k, (inst, value) in enumerate(pairs):
                if value != "?" or inst is UNPREDICTABLE:
                    continue
                if not all(len(r) == len(pairs) and r[k] == runs[0][k] for r in runs):
                    continue            # libpcp's runs disagree: unwritten memory, shown
                settled = True
                for h, rows in predicted.items():
                    mine = rows[f].get(name, [])
                    if len(mine) != len(runs[h]) or len(mine) <= k or mine[k][1] == "?":
                        settled = False
                        continue
                    if mine[k] != runs[h][k]:
                        settled = False
                        out.append(f"{cmp.texts[int(name[3:])]!r} fetch {f} entry {k}: oracle "
                                   f"with heap {HEAPS[h]} {mine[k]} libpcp {runs[h][k]}")
                if settled and predicted:
                    pairs[k] = list(runs[0][k])
    return out


# -- (a) the metadata and diagnostics table ---------------------------------------------

def test_metadata_table_matches_libpcp(referee: Referee, derive_base: Path) -> None:
    """DERIVE-BIND-1 .. DERIVE-BIND-31: every descriptor and every semantic error of the
    measured tables (tests/data/derive-descriptors.json, derive-semantic-errors.json), as
    this libpcp binds them; the table rows of its profile are its answers."""
    profile = _profile(referee)
    descs, errors = rows_for("descriptors"), rows_for("semantic-errors")
    texts = list(dict.fromkeys(r["text"] for r in descs + errors))
    cmp = compare(referee, profile, derive_base, texts)
    assert cmp.crashes == []
    assert mismatches(cmp) == []
    got = {t: cmp.theirs[name_of(k)] for k, t in enumerate(texts)}
    for r in descs:
        if profile.name in r["profiles"]:
            d = got[r["text"]].desc
            assert d is not None and (d[0], d[1], d[2], units_str(PmUnits.from_word(d[3]))) == \
                (r["type"], r["sem"], r["indom"], r["units"]), r["text"]
    for r in errors:
        if profile.name in r["profiles"]:
            line = "" if r["line"] is None else \
                f"Semantic error: derived metric {name_of(texts.index(r['text']))}: {r['line']}"
            assert got[r["text"]].error == line, r["text"]
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




def test_values_table_matches_libpcp(referee: Referee, derive_base: Path) -> None:
    """DERIVE-EVAL-1 .. DERIVE-EVAL-17 and DERIVE-DEV-1 .. DERIVE-DEV-5: values, bit for
    bit, at 15 fetches across a gap; the intended evaluation differs only where a
    deviation was recorded. Expressions that kill this libpcp are left out, and each must
    be a named deviation (DERIVE-DEV-6, -7 for 6.0.3)."""
    profile = _profile(referee)
    texts = VALUE_EXPRESSIONS + VALUE_EXPRESSIONS_63
    cmp = compare(referee, profile, derive_base, texts, SCHEDULE)
    why = _no_unexplained_crashes(cmp, referee, profile, derive_base, SCHEDULE)
    assert settle_unwritten(cmp, derive_base, profile, SCHEDULE) + mismatches(cmp) == []
    assert len(cmp.bound) >= len(VALUE_EXPRESSIONS) - 2
    if profile.instance_fixes:
        assert cmp.crashes == []
    else:
        assert why == {"scalar(m.inst)": {"scalar-empty"}, "scalar(m.kb)": {"scalar-empty"},
                       "(m.inst * 2)[b]": {"instselect-expr"}}


#: 7.x's indom= of mkconst() and novalue() (DERIVE-VER-6): descriptors and values
INDOM_SPEC_EXPRESSIONS = [
    "mkconst(5, indom=30.1)", "mkconst(2.5, indom=30.2, type=float)", "m.inst * mkconst(5, indom=30.1)",
    "mkconst(1, indom=30.1) * m.disc", "mkconst(4, meta=m.kb, indom=30.1)",
    "mkconst(4, meta=m.inst, indom=NULL)", "mkconst(3, indom=NULL) * m.kb", "mkconst(9, indom=30.9)",
    "m.inst > 1 ? m.inst : novalue(indom=30.1)", "m.kb > 6 ? mkconst(1, indom=30.2, type=64) : m.i64",
    "mkconst(1, indom=30.1) + m.disc", "mkconst(1, indom=x)", "mkconst(1, indom=511.1)",
]


def test_mkconst_indom_of_7(referee: Referee, derive_base: Path) -> None:
    """DERIVE-VER-6: `indom=` in mkconst() and novalue(), a syntax error before 7.x; in 7.x
    the constant takes that instance domain (NULL: none), over meta='s, and has a value per
    instance the archive lists for it at each fetch (none, with PM_ERR_INDOM_LOG, for a
    domain the archive lacks); descriptors and values as 7.2.2 gives them."""
    profile = _profile(referee)
    cmp = compare(referee, profile, derive_base, INDOM_SPEC_EXPRESSIONS, SCHEDULE)
    assert cmp.crashes == []
    assert mismatches(cmp) == []
    bound = {cmp.texts[int(b.name[3:])]: b for b in cmp.bound}
    if profile.indom_spec:
        assert str(bound["mkconst(5, indom=30.1)"].desc.indom) == "30.1"
        assert str(bound["mkconst(4, meta=m.kb, indom=30.1)"].desc.indom) == "30.1"
        assert bound["mkconst(4, meta=m.inst, indom=NULL)"].desc.indom.is_null
        # a ternary of two instance domains is a semantic error; the rest are syntax errors
        assert sorted(set(INDOM_SPEC_EXPRESSIONS) - set(bound)) == [
            "m.kb > 6 ? mkconst(1, indom=30.2, type=64) : m.i64", "mkconst(1, indom=511.1)",
            "mkconst(1, indom=x)"]
    else:
        assert bound == {}


# -- (b) the surprises, pinned ----------------------------------------------------------

def test_surprises_in_binding(referee: Referee, derive_base: Path) -> None:
    """DERIVE-BIND-5: `m.c32 > 0` is U32 COUNTER with no units; DERIVE-BIND-4:
    `counter - 300` is refused; DERIVE-BIND-13: `m.kb > 0.5` is refused but `m.kb > 1`
    accepted; DERIVE-BIND-31, DERIVE-VER-3: an unknown operand is silent in 6.0.3 and
    6.3.8, reported from 7.1."""
    profile = _profile(referee)
    cmp = compare(referee, profile, derive_base, ["m.c32 > 0", "m.c32 - 300", "m.kb > 0.5",
                                                  "m.kb > 1", "no.such.metric + 1"])
    assert mismatches(cmp) == []
    t = cmp.theirs
    assert t["d.e0"].desc == (PmType.U32, PmSem.COUNTER, None, 0)
    assert t["d.e1"].error and t["d.e1"].error.endswith("Illegal operator for counter and non-counter")
    assert t["d.e2"].error and t["d.e2"].error.endswith("Dimensions are not the same")
    assert t["d.e3"].desc is not None
    unknown = "Semantic error: derived metric d.e4: operand no.such.metric: Unknown operand metric"
    assert t["d.e4"].error == (unknown if profile.report_unknown_operand else "")


def test_surprises_in_evaluation(referee: Referee, derive_base: Path) -> None:
    """Relational operators never rescale; sum/avg of nothing are 0 and min/max repeat
    their last value (DERIVE-DEV-1); !x of a FLOAT is a denormal or 0 and of a 64-bit
    value garbage (DERIVE-DEV-2); `1 ? 2 : 0 ? 3 : 4` is 3; `!0>1||0<1` is 1;
    `4294967295 + 1` is 0; rescale() of integers truncates; `x[name]` of an absent name has
    no values; scalar() takes the first instance in libpcp's order (6.3 and later;
    DERIVE-DEV-6 kills 6.0.3 on the gap)."""
    profile = _profile(referee)
    texts = ["m.kb == rescale(m.kb, \"byte\")", "sum(m.inst)", "avg(m.flt)", "min(m.inst)",
             "max(m.disc)", "!(m.flt - m.flt)", "!m.kb", "1 ? 2 : 0 ? 3 : 4", "!0>1||0<1",
             "4294967295 + 1", "rescale(m.kb, \"Mbyte\")", "m.kb + rescale(m.kb, \"byte\")",
             "m.inst[zz]", "scalar(m.inst)"]
    cmp = compare(referee, profile, derive_base, texts, SCHEDULE)
    why = _no_unexplained_crashes(cmp, referee, profile, derive_base, SCHEDULE)
    assert mismatches(cmp) == []
    gap = 6
    assert values(cmp, 0)[0] == [[-1, 0]]
    assert values(cmp, 1)[gap] == [[-1, 0.0]] and values(cmp, 2)[gap] == [[-1, 0.0]]
    assert values(cmp, 3)[gap] == values(cmp, 3)[4] == [[-1, 1.0]]       # stale
    assert values(cmp, 4)[gap] == [[-1, 9]]
    assert cmp.values_intended[gap]["d.e3"] == []                          # intended
    assert {v for _, v in cmp.values_theirs[0]["d.e5"]} == {"f32:00000001"}
    assert cmp.values_theirs[0]["d.e6"] != cmp.values_again[0][0]["d.e6"]  # uninitialised
    assert values(cmp, 7)[0] == [[-1, 3]] and values(cmp, 8)[0] == [[-1, 1]]
    assert values(cmp, 9)[0] == [[-1, 0]]
    assert values(cmp, 10)[0] == [[-1, 0]]                                 # 10 Kbyte -> 0 Mbyte
    assert values(cmp, 11)[0] == [[-1, 20.0]]                              # DOUBLE, Kbyte
    assert set(map(str, values(cmp, 12))) == {"None"}                      # not an error
    if profile.instance_fixes:                                             # first in hash order
        assert values(cmp, 13)[0] == [[-1, 1.5]] and values(cmp, 13)[6] is None
    else:
        assert why == {"scalar(m.inst)": {"scalar-empty"}}


#: DERIVE-DEV-2's operands: U64, PM_TYPE_64 with two instances, DOUBLE, a DOUBLE literal,
#: a U64 zero; and values computed from the unwritten half: `== 5` never depends on it,
#: `== 0` does (it is 1 only if that half is 0), and the random test's
#: `((!1000.0) * m.kb) == 1` (0 unless the unwritten half makes the product exactly 1)
NOT_WIDE = ["!m.kb", "!m.i64", "!m.cdbl", "!1000.0", "!(m.kb - m.kb)", "(!m.kb) == 5",
            "(!m.kb) == 0", "((!1000.0) * m.kb) == 1"]


def _low32(value: Any) -> int:
    if isinstance(value, str):                      # "f64:" + 16 hex digits
        return int(value[4:], 16) & 0xFFFFFFFF
    return int(value) & 0xFFFFFFFF


def test_not_of_wide_operands_per_heap_state(referee: Referee, derive_base: Path) -> None:
    """DERIVE-DEV-2, measured in every heap state (derive_compare.HEAPS): libpcp writes the
    0/1 into the low 32 bits of a freshly malloc'd value and never the upper 32, so those
    hold the state's malloc fill: 0xaaaaaaaa and 0x55555555 under MALLOC_PERTURB_ 85 and
    170, 0 with fresh mmap'd chunks (heap_fill), and with glibc's defaults whatever the
    chunk held. The oracle with that fill (Evaluator(unwritten=...)) gives every value
    of those states bit for bit; the low 32 bits are the same in all states."""
    profile = _profile(referee)
    cmp = compare(referee, profile, derive_base, NOT_WIDE, SCHEDULE)
    assert cmp.crashes == []
    predicted = per_heap_predictions(cmp, derive_base, profile, SCHEDULE)
    assert sorted(predicted) == [0, 1, 3]
    fetches = [f for f, eol in enumerate(cmp.eol_theirs) if not eol]
    assert fetches and len(fetches) == len(cmp.eol_ours) - sum(cmp.eol_ours)
    for f in fetches:
        for k, text in enumerate(NOT_WIDE):
            runs = _runs(cmp, f, name_of(k))
            for h, rows in predicted.items():
                assert runs[h] == rows[f].get(name_of(k), []), (text, f, HEAPS[h])
            if k < 5:                                 # !x itself: the low half is written
                lows = [[(i, _low32(v)) for i, v in r] for r in runs]
                assert all(low == lows[0] for low in lows), (text, f)
    first = next(f for f in fetches if _runs(cmp, f, "d.e0"))
    assert [r[0][1] for r in _runs(cmp, first, "d.e0")][:2] == [0xAAAAAAAA << 32, 0x55555555 << 32]
    assert [r[0][1] for r in _runs(cmp, first, "d.e4")][:2] == [(0xAAAAAAAA << 32) | 1,
                                                                  (0x55555555 << 32) | 1]
    assert _runs(cmp, first, "d.e0")[3] == [[-1, 0]]
    assert _runs(cmp, first, "d.e2")[0] == [[-1, "f64:aaaaaaaa00000000"]]
    # m.kb is never 0 or 5: `== 5` is 0 in every state, `== 0` is 1 only with the zero fill
    checked = 0
    for f in fetches:
        if _runs(cmp, f, "d.e5")[0]:
            checked += 1
            assert all(r == [[-1, 0]] for r in _runs(cmp, f, "d.e5"))
            assert [r[0][1] for r in _runs(cmp, f, "d.e6")][:2] == [0, 0]
            assert _runs(cmp, f, "d.e6")[3] == [[-1, 1]]
    assert checked >= 5
    # with the heap's contents unknown the oracle leaves unpredictable exactly what
    # depends on the unwritten half, and settles the rest per heap state
    assert settle_unwritten(cmp, derive_base, profile, SCHEDULE) == []
    assert mismatches(cmp) == []


def test_rate_of_a_decreasing_counter(referee: Referee, derive_base: Path) -> None:
    """DERIVE-EVAL-9: a U32 counter going 200 -> 162.5: 6.0.3 returns the wrapped
    difference, 6.3.8 and later no value; a PM_TYPE_32 counter is negative in all."""
    profile = _profile(referee)
    cmp = compare(referee, profile, derive_base, ["rate(m.cu32)", "rate(m.c32)", "delta(m.cu32)"],
                  (Timestamp(T0), STEP, 3))
    assert mismatches(cmp) == []
    if profile.rate_drops_decreases:
        assert values(cmp, 0)[1] is None
    else:
        assert values(cmp, 0)[1] == [[-1, pytest.approx((2**32 - 37) / 2.5)]]
    assert values(cmp, 1)[1] == [[-1, pytest.approx(-2.8)]]
    assert values(cmp, 2)[1] == [[-1, -37]]                                # delta: no check


def test_delta_of_sum_across_a_gap(referee: Referee, derive_base: Path) -> None:
    """DERIVE-EVAL-10: sum() of no values is 0, so delta(sum(x)) drops to minus the last
    sum when the instances go (delta() of an expression: 6.3 and later; a syntax error
    before, DERIVE-BIND-14)."""
    profile = _profile(referee)
    cmp = compare(referee, profile, derive_base, ["delta(sum(m.inst))"], SCHEDULE)
    assert mismatches(cmp) == []
    if profile.expr_args:
        assert values(cmp, 0)[5] == [[-1, -6.0]] and values(cmp, 0)[6] == [[-1, 0.0]]
    else:
        assert cmp.theirs["d.e0"].syntax


def test_libpcp_defects(referee: Referee, derive_base: Path) -> None:
    """DERIVE-DEV-3: a non-trailing novalue() leaves garbage; DERIVE-DEV-4: delta() of
    x[inst] never has values; DERIVE-DEV-5: matchinst() misses "dd x" when the origin
    is T0+4 s + 1e9 ns (6.3 and later; 6.0.3 has neither novalue() nor delta(expr))."""
    profile = _profile(referee)
    cmp = compare(referee, profile, derive_base, ["m.inst > 1 ? m.inst : novalue()",
                                                  "delta(m.inst[b])", "matchinst(/d/, m.inst)"],
                  (Timestamp(T0), STEP, 6))
    assert mismatches(cmp) == []
    assert values(cmp, 2)[2] is None and cmp.values_intended[2]["d.e2"] == [[7, "f64:4010000000000000"]]
    if not profile.novalue:
        assert cmp.theirs["d.e0"].syntax and cmp.theirs["d.e1"].syntax
        return
    first = cmp.values_theirs[0]["d.e0"]
    assert first[0] == [0, "f64:3ff8000000000000"] and first[1][0] != 1   # not inst 1
    assert set(map(str, values(cmp, 1))) == {"None"}


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




def test_seed_worked_example(referee: Referee, seed_base: Path) -> None:
    """DERIVE-BIND-9, DERIVE-BIND-14: the pmRegisterDerived(3) table row by row. libpcp
    types delta() of a U64 as DOUBLE (the man page's table says U64); the ratio is scaled
    /1048576 and *1000 into Mbyte/sec; values at 1 s steps."""
    profile = _profile(referee)
    texts = [r[0] for r in SEED_ROWS]
    cmp = compare(referee, profile, seed_base, texts, (Timestamp(T0), 10**9, 3))
    assert mismatches(cmp) == []
    for k, (_, ptype, units) in enumerate(SEED_ROWS):
        desc = cmp.theirs[name_of(k)].desc
        assert desc is not None and desc[0] == ptype
        assert str(PmUnits.from_word(desc[3])) == units
    x = cmp.bound[-1].root.right
    assert x is not None and (x.div, x.mul) == (1048576, 1000)
    assert values(cmp, 6)[1] == [[-1, pytest.approx(100 - 2097152 / 1000 * 1000 / 1048576)]]


# -- the command line's derived pmIDs ---------------------------------------------------

PMINFO = Path(__file__).resolve().parent / "libpcp" / "derive_pminfo.py"


def test_cli_derived_pmids_equal_libpcps(referee: Referee, cpu: Path, tmp_path: Path) -> None:
    """DERIVE-CLI-1: 511.0.N in registration order after the two anonymous event metrics;
    a definition with a syntax error takes no pmID, one that fails to bind keeps its own
    (pminfo -m with $PCP_DERIVED_CONFIG)."""
    conf = tmp_path / "d.conf"
    conf.write_text("a.one = 1\nbad.x = 1 +\nb.two = 2\nc.three = m.nosuch + 1\nd.four = 4\n")
    names = ["a.one", "b.two", "c.three", "d.four"]
    proc = referee.python(PMINFO, conf, cpu, *names, files=[conf, *archive_files(cpu)])
    theirs = dict(re.findall(r"^(\S+) PMID: (\S+)$", proc.stdout, re.M))
    status, out, _ = run_cli("derive", str(cpu), "-c", str(conf), "--samples", "1",
                             "--format", "json", "--rules", referee.derive_profile)
    assert status == 1          # bad.x and c.three fail
    ours = {d["name"]: d["pmid"] for d in json.loads(out)["derived"]}
    assert ours == {"a.one": "511.0.3", "b.two": "511.0.4", "d.four": "511.0.6"}
    assert ours == {k: v for k, v in theirs.items() if k in ours}


# -- units -------------------------------------------------------------------------------

def _random_units_texts(n: int) -> list[str]:
    rng = random.Random(42)
    words = ["byte", "Kbyte", "MB", "GiB", "sec", "ms", "usec", "hour", "h", "count",
             "count x 10^3", "counts", "2", "0.5", "-1", "1e3", "/", "^2", "^-1", "^0", "x",
             "space-9", "time-7", "nanosec", "Tbytes", "min"]
    return [" ".join(rng.choice(words) for _ in range(rng.randint(0, 5))) for _ in range(n)]



def _conversions() -> list[tuple[PmType, Any, PmUnits, PmUnits]]:
    rng = random.Random(7)
    samples = [PmUnits(1, 0, 0, s, 0, 0) for s in range(0, 8)] + \
        [PmUnits(0, 1, 0, 0, s, 0) for s in range(0, 7)] + \
        [PmUnits(0, 0, 1, 0, 0, s) for s in (-3, 0, 2)] + [PmUnits(1, -1, 0, 1, 3, 0),
                                                             PmUnits(), PmUnits(0, 0, 0, 0, 0, 3)]
    out = []
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
        out.append((ptype, value, a, b))
    return out


def test_units_match_pmParseUnitsStr_and_pmConvScale(referee: Referee) -> None:
    """DERIVE-BIND-19, DERIVE-EVAL-13: parse_units is pmParseUnitsStr (units, multiplier,
    message) and conv_scale is pmConvScale, for fixed and random inputs. The units strings
    that kill libpcp are exactly those parse_units says abort under the referee's profile
    (DERIVE-SYN-10; none from 7.2.2, DERIVE-VER-5)."""
    asserts = _profile(referee).units_asserts
    texts = list(dict.fromkeys(UNITS + _random_units_texts(300) + ["time-7^0", "time-9^0 byte"]))
    answer, alive, crashes = isolate(
        lambda ts: dbridge.pm_derive(referee, {"units": ts})["units"], texts)
    killed = [t for c in crashes for t in c.items]
    for text in killed:
        with pytest.raises(UnitsAbort):
            parse_units(text, asserts=asserts)
    assert ("time-7^0" in killed) == asserts
    for text, got in zip(alive, answer):
        try:
            units, mult = parse_units(text, asserts=asserts)
        except UnitsAbort:
            pytest.fail(f"{text!r}: parse_units says libpcp aborts, {referee.name} did not")
        except UnitsError as exc:
            assert got.get("error") == exc.message, text
            continue
        assert "error" not in got, text
        assert (units.to_word(), "f64:" + struct.pack(">d", mult).hex()) == \
            (got["word"], got["mult"]), text
    conversions = _conversions()
    reply = dbridge.pm_derive(referee, {
        "convscale": [[int(t), libpcp_encoding(v, t), a.to_word(), b.to_word()]
                      for t, v, a, b in conversions]})
    for (ptype, value, a, b), got in zip(conversions, reply["convscale"]):
        try:
            mine = libpcp_encoding(conv_scale(ptype, value, a, b), ptype)
        except ConvScaleError as exc:
            mine = f"error:{exc.code}"
        assert mine == got, (ptype, value, str(a), str(b))


# -- (d) random archives x random expressions -------------------------------------------

_KEYS = ("examples", "expressions", "bound", "errors", "fetches", "values", "uninitialised",
         "crashes")
#: per referee: what the property test compared (printed with PCPCONFORM_DERIVE_STATS=1)
STATS: dict[str, dict[str, int]] = {}


#: PCPCONFORM_DERIVE_SEED=N: a random run from seed N instead of the derandomized one
#: (local; a seed overrides derandomize, so it is applied only when given)
_SEED = os.environ.get("PCPCONFORM_DERIVE_SEED")


def _seeded(test: Callable[..., None]) -> Callable[..., None]:
    return seed(int(_SEED))(test) if _SEED else test


@_seeded
@settings(max_examples=int(os.environ.get("PCPCONFORM_DERIVE_EXAMPLES", "25")), deadline=None,
          derandomize=not _SEED, database=None,
          # shrinking costs a libpcp process per step: on request only
          phases=[Phase.explicit, Phase.generate]
          + ([Phase.shrink] if os.environ.get("PCPCONFORM_DERIVE_SHRINK") else []),
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                 HealthCheck.filter_too_much, HealthCheck.data_too_large])
@given(data=st.data())
def test_random_archives_and_expressions_match_libpcp(tmp_path_factory: pytest.TempPathFactory,
                                                       referee: Referee, data: st.DataObject) -> None:
    """DERIVE-BIND-*, DERIVE-EVAL-*: random archives, 24 random expressions each, a
    random forward schedule: outcomes and every fetch's values equal libpcp's. The
    operands are replayed as expressions too, so an interpolation mismatch fails here as
    well. An expression that kills libpcp is left out alone, and must be a named one."""
    profile = _profile(referee)
    fixture = data.draw(fixtures(max_metrics=5, max_samples=7), label="fixture")
    base = tmp_path_factory.mktemp("derive-rnd") / "a"
    generate_archive(fixture, base)
    archive = Archive(base)
    pool = pool_of(archive)
    assume(pool.numeric)
    texts = [data.draw(expressions(pool, archive, profile), label=f"expr {k}") for k in range(24)]
    operands = pool.numeric + pool.other
    schedule = schedule_of(data.draw, archive)
    cmp = compare(referee, profile, base, operands + texts, schedule)
    _no_unexplained_crashes(cmp, referee, profile, base, schedule)
    assert not any(k < len(operands) for c in cmp.crashes for k in c.items), _crashed(cmp)
    found = settle_unwritten(cmp, base, profile, schedule) + mismatches(cmp)
    stats = STATS.setdefault(referee.name, dict.fromkeys(_KEYS, 0))
    stats["examples"] += 1
    stats["expressions"] += len(texts)
    stats["bound"] += sum(1 for b in cmp.bound if int(b.name[3:]) >= len(operands))
    stats["errors"] += sum(1 for k in cmp.alive if k >= len(operands)
                           and cmp.theirs[name_of(k)].error is not None)
    stats["fetches"] += sum(1 for e in cmp.eol_theirs if not e)
    stats["values"] += sum(len(v) for row in cmp.values_theirs
                           for n, v in row.items() if int(n[3:]) >= len(operands))
    stats["uninitialised"] += cmp.uninitialised
    stats["crashes"] += len(cmp.crashes)
    if os.environ.get("PCPCONFORM_DERIVE_STATS"):
        print(referee.name, stats, _crashed(cmp), len(found))
    assert found == []
