"""Evaluating derived metrics over an archive replay (spec/derive.md DERIVE-EVAL-*,
DERIVE-DEV-*). No libpcp here: tests/differential/test_derive_vs_libpcp.py checks the
same cases against every referee."""

from __future__ import annotations

import io
import math
import os
import re
import struct
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pcpconform.fixtures.fixture import parse_fixture
from pcpconform.fixtures.generate import generate_archive
from pcpconform.format.pmtypes import PmInDom, PmType, Timestamp
from pcpconform.format.values import F32
from pcpconform.io.archive import Archive
from pcpconform.oracles.derive.bind import Bound, DeriveSemanticError, bind
from pcpconform.oracles.derive.evaluate import (
    EMULATABLE,
    UNPREDICTABLE,
    DerivedSample,
    DerivedView,
    Evaluator,
    bin_op,
    instance_order,
    timespec_seconds,
)
from pcpconform.oracles.derive.parser import DeriveSyntaxError, parse
from pcpconform.oracles.interp.report import write_text
from tests.derive_cases import DERIVE_FIXTURE, P60, P63, SEED_FIXTURE, T0

#: every 2.5 s from the start to the last sample: 16 fetches across the gap
SCHEDULE = (Timestamp(T0), 2_500_000_000, 15)


@pytest.fixture(scope="module")
def derive_archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("derive") / "a"
    generate_archive(parse_fixture(DERIVE_FIXTURE), base)
    return base


def bound(archive: Archive, texts: list[str], profile: Any) -> list[Bound]:
    return [bind(parse(t, profile), f"d.e{k}", archive, profile) for k, t in enumerate(texts)]


def run(base: Path, texts: list[str], profile: Any = P63, *, emulate: Any = (),
        schedule: tuple[Timestamp, int, int] = SCHEDULE) -> list[DerivedSample]:
    a = Archive(base)
    return Evaluator(a, bound(a, texts, profile), profile, emulate=emulate).schedule(*schedule)


def series(samples: list[DerivedSample], name: str = "d.e0") -> list[Any]:
    """Per fetch: the values (one instance: the value itself; none: None)."""
    out = []
    for s in samples:
        pairs = s.values.get(name, [])
        out.append(None if not pairs else pairs[0][1] if len(pairs) == 1 and pairs[0][0] == -1
                   else dict(pairs))
    return out


def test_c_arithmetic_of_constants(derive_archive: Path) -> None:
    """DERIVE-EVAL-5, DERIVE-EVAL-6, DERIVE-EVAL-7: integers wrap, division is in double
    with 0/x = 0 and x/0 = inf, relational results are U32 0/1."""
    texts = ["4294967295 + 1", "1 / 0", "0 / 0", "-1 / 0", "3 / 2", "1 < 2 == 1",
             "1 ? 2 : 0 ? 3 : 4", "!0>1||0<1", "2-1-1", "-3 * 2", "1.5 * 2", "0 - 1"]
    first = run(derive_archive, texts, schedule=(Timestamp(T0), 10**9, 1))[0].values
    got = [first[f"d.e{k}"][0][1] for k in range(len(texts))]
    assert got[:5] == [0, math.inf, 0.0, -math.inf, 1.5]
    assert got[5:9] == [1, 3, 1, 0]
    assert got[9:] == [-6, 3.0, 4294967295]


def test_bin_op_promotes_through_the_result_type() -> None:
    """DERIVE-EVAL-5: FLOAT arithmetic is float32; 64-bit unsigned wraps."""
    assert bin_op(PmType.FLOAT, "PLUS", F32(0.1), PmType.FLOAT, 1, 1, 1, PmType.U32, 1, 1) \
        == struct.unpack("f", struct.pack("f", 1.1))[0]
    assert bin_op(PmType.U64, "MINUS", 0, PmType.U64, 1, 1, 1, PmType.U32, 1, 1) == 2**64 - 1
    assert bin_op(PmType.U32, "LT", -1, PmType.I32, 1, 1, 1, PmType.U32, 1, 1) == 0
    assert bin_op(PmType.DOUBLE, "PLUS", 1, PmType.U64, 1, 1024, 1, PmType.U64, 1, 1) \
        == 1 + 1 / 1024


def test_instance_order_is_libpcps_hash_order(derive_archive: Path) -> None:
    """DERIVE-EVAL-3: [0, 1, 5] then 7 added: 4 buckets, 1 and 5 share one, newest first."""
    assert instance_order(Archive(derive_archive), PmInDom("30.1")) == [0, 5, 1, 7]
    values = run(derive_archive, ["m.inst"])[2].values["d.e0"]
    assert [inst for inst, _ in values] == [0, 5, 1, 7]


def test_delta_and_rate_history(derive_archive: Path) -> None:
    """DERIVE-EVAL-8, DERIVE-EVAL-9: no values on the first fetch or after one without
    values; decreasing counters per version."""
    s60 = run(derive_archive, ["delta(m.cu32)", "rate(m.cu32)", "rate(m.c32)"], P60)
    s63 = run(derive_archive, ["delta(m.cu32)", "rate(m.cu32)", "rate(m.c32)"], P63)
    assert series(s63)[:5] == [None, -37, -38, 138, 137]
    assert series(s63)[5:13] == [None] * 8 and series(s63)[13:] == [50, 50]
    assert series(s60, "d.e1")[1] == pytest.approx(1717986903.6)   # (2**32 - 37) / 2.5
    assert series(s63, "d.e1")[1:3] == [None, None]
    assert series(s63, "d.e2")[1] == series(s60, "d.e2")[1] == pytest.approx(-2.8)


def test_aggregates_of_nothing(derive_archive: Path) -> None:
    """DERIVE-EVAL-10, DERIVE-DEV-1: sum/avg/count of no values are 0; min/max have no
    value (intended) or repeat the last one (libpcp)."""
    texts = ["sum(m.inst)", "avg(m.flt)", "count(m.inst)", "min(m.inst)", "max(m.disc)"]
    intended = run(derive_archive, texts)
    libpcp = run(derive_archive, texts, emulate={"minmax-empty"})
    gap = 6
    assert [series(intended, f"d.e{k}")[gap] for k in range(5)] == [0.0, 0.0, 0, None, None]
    assert series(libpcp, "d.e3")[gap] == 1.0 and series(libpcp, "d.e4")[gap] == 9
    assert intended[gap].deviations == {"d.e3": {"minmax-empty"}, "d.e4": {"minmax-empty"}}


def test_not_of_wide_types(derive_archive: Path) -> None:
    """DERIVE-DEV-2: !x keeps x's type; libpcp writes a U32 0/1 into it."""
    intended = run(derive_archive, ["!m.flt", "!m.kb", "!(m.flt - m.flt)"])
    libpcp = run(derive_archive, ["!m.flt", "!m.kb", "!(m.flt - m.flt)"], emulate=EMULATABLE)
    assert series(intended, "d.e2")[0] == {0: 1.0, 5: 1.0, 1: 1.0}
    assert series(libpcp, "d.e2")[0] == {0: F32.from_bits(1), 5: F32.from_bits(1),
                                         1: F32.from_bits(1)}
    assert series(libpcp, "d.e1")[0] is UNPREDICTABLE and series(intended, "d.e1")[0] == 0


def test_ternary_pairs_by_instance(derive_archive: Path) -> None:
    """DERIVE-EVAL-12, DERIVE-DEV-3: novalue() drops the instance (intended); libpcp
    leaves an unwritten entry unless the dropped instances are the last ones."""
    text = "m.inst > 1 ? m.inst : novalue()"
    intended = series(run(derive_archive, [text]))
    libpcp = run(derive_archive, [text], emulate=EMULATABLE)
    assert intended[0] == {0: 1.5, 1: 2.5}
    assert libpcp[0].values["d.e0"] == [(0, 1.5), (UNPREDICTABLE, UNPREDICTABLE)]
    assert series(libpcp)[4] == intended[4] == {1: 5.0}            # a trailing drop


def test_instance_selection_and_matchinst(derive_archive: Path) -> None:
    """DERIVE-EVAL-14, DERIVE-EVAL-15: [name] by full name or up to the first space;
    matchinst on the name up to the first space, POSIX ERE."""
    texts = ["m.inst[dd x]", "m.inst[dd]", "m.inst[zz]", "matchinst(/^[[:alpha:]]{2}$/, m.inst)",
             "matchinst(!/^[ab]$/, m.inst)"]
    got = run(derive_archive, texts, schedule=(Timestamp(T0 + 5), 2_500_000_000, 2))
    assert got[0].values["d.e0"] == got[0].values["d.e1"] == [(7, 4.0)]
    assert got[0].values["d.e2"] == [] and got[0].values["d.e3"] == [(7, 4.0)]
    assert got[0].values["d.e4"] == [(5, 1.0), (7, 4.0)]


def test_lookup_time_deviation(derive_archive: Path) -> None:
    """DERIVE-DEV-5: from T0 every 2.5 s libpcp's origin for the third fetch is T0+4 s and
    1e9 ns, before the instance-domain record of T0+5, so "dd x" is not found."""
    text = ["matchinst(/d/, m.inst)"]
    assert series(run(derive_archive, text))[2] == {7: 4.0}
    assert series(run(derive_archive, text, emulate={"lookup-time"}))[2] is None


def test_no_history_deviation(derive_archive: Path) -> None:
    """DERIVE-DEV-4: delta() of x[inst] has values (intended), never in libpcp."""
    assert series(run(derive_archive, ["delta(m.inst[b])"]))[1:3] == [{1: 0.0}, {1: -2.0}]
    assert set(series(run(derive_archive, ["delta(m.inst[b])"], emulate=EMULATABLE))) == {None}


def test_crash_deviations_are_reported(derive_archive: Path) -> None:
    """DERIVE-DEV-6, DERIVE-DEV-7: what crashes libpcp 6.0.3 is evaluated as intended and
    flagged."""
    got = run(derive_archive, ["scalar(m.kb)", "(m.inst * 2)[b]", "(m.inst)[b]", "m.inst[b]"], P60)
    assert got[6].values["d.e0"] == [] and got[6].deviations["d.e0"] == {"scalar-empty"}
    assert got[0].values["d.e1"] == [(1, 5.0)] and "instselect-expr" in got[0].deviations["d.e1"]
    assert "instselect-expr" in got[0].deviations["d.e2"] and "d.e3" not in got[0].deviations


def test_end_of_log_leaves_the_state_alone(derive_archive: Path) -> None:
    """DERIVE-EVAL-2: EOL fetches evaluate nothing, so delta() spans them."""
    got = run(derive_archive, ["delta(m.c64)"], P63,
              schedule=(Timestamp(T0 + 35), 10**9, 1))
    assert got[0].values["d.e0"] == []
    a = Archive(derive_archive)
    ev = Evaluator(a, bound(a, ["delta(m.c64)"], P63), P63)
    first = ev.fetch(Timestamp(T0 + 30))
    eol = ev.fetch(Timestamp(T0 + 99))
    last = ev.fetch(Timestamp(T0 + 35))
    assert first.values["d.e0"] == [] and eol.eol and last.values["d.e0"] == [(-1, 1000)]


def test_rate_uses_long_double_seconds() -> None:
    """DERIVE-EVAL-9: pmtimespecToReal adds nsec/1e9 to sec in long double."""
    assert timespec_seconds(2, 500_000_000) == 2.5
    assert timespec_seconds(0, 1) == 1e-9
    assert timespec_seconds(3, 1_000_000_000) == 4.0


def test_report_code_prints_derived_samples(derive_archive: Path) -> None:
    """Derived samples use the interp oracle's value types and print with its report."""
    a = Archive(derive_archive)
    ev = Evaluator(a, bound(a, ["m.inst * 2", "count(m.inst)"], P63), P63)
    samples = [ev.interp_sample(s) for s in ev.schedule(Timestamp(T0), 5 * 10**9, 3)]
    out = io.StringIO()
    write_text(DerivedView(ev), samples, out)  # type: ignore[arg-type]
    text = out.getvalue()
    assert re.search(r"d\.e0\[(0|a)\]  3", text) and "d.e1  4" in text


def test_seed_example_values(tmp_path: Path) -> None:
    """DERIVE-BIND-9: the pmRegisterDerived(3) example evaluates speed minus the rate in
    Mbyte/sec: delta(bytes) / delta(ms) bytes per ms is x 1000 / 1048576 Mbyte/sec."""
    base = tmp_path / "seed"
    generate_archive(parse_fixture(SEED_FIXTURE), base)
    text = ("network.interface.speed - delta(network.interface.in.bytes) / "
            "delta(sample.milliseconds)")
    got = series(run(base, [text], P60, schedule=(Timestamp(T0), 10**9, 3)))
    assert got[0] is None
    assert got[1] == pytest.approx(100.0 - 2097152 / 1000 * 1000 / 1048576)
    assert got[2] == pytest.approx(100.0 - 1048576 / 500 * 1000 / 1048576)


_TOKENS = ["m.c32", "m.cu32", "m.kb", "m.inst", "m.disc", "m.str", "m.flt", "m.i64", "m.cflt",
           "no.such", "1", "0", "2.5", "4294967295", "+", "-", "*", "/", "<", "==", "&&", "||",
           "!", "?", ":", "(", ")", "(", ")", "sum(", "avg(", "min(", "count(", "rate(",
           "delta(", "instant(", "scalar(", "defined(", "[a]", "[dd x]",
           "rescale(m.kb, \"byte\")", "matchinst(/a|d/, m.inst)", "novalue()",
           "mkconst(3, type=u64, units=\"Kbyte\")", "mkconst(1, meta=m.inst)"]


@settings(max_examples=int(os.environ.get("PCPCONFORM_DERIVE_FUZZ", "300")), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(_TOKENS), min_size=1, max_size=12))
def test_no_input_gives_a_traceback(derive_archive: Path, tokens: list[str]) -> None:
    """Any text: a syntax error, a semantic error, or values; never another exception."""
    text = " ".join(tokens).replace("( ", "(").replace(" [", "[")
    a = Archive(derive_archive)
    for profile in (P60, P63):
        try:
            b = bind(parse(text, profile), "d.x", a, profile)
        except (DeriveSyntaxError, DeriveSemanticError):
            continue
        for emulate in ((), EMULATABLE):
            Evaluator(a, [b], profile, emulate=emulate).schedule(Timestamp(T0), 5 * 10**9, 8)


def test_unwritten_memory_per_heap_fill(derive_archive: Path) -> None:
    """DERIVE-DEV-2, DERIVE-DEV-1: with the byte a heap state leaves in fresh memory, the
    upper half of !x (64-bit, DOUBLE) and min() of no values at their first use are that
    byte repeated; FLOAT is exact in any case; unknown (None), they are UNPREDICTABLE, and
    so is a comparison with them."""
    texts = ["!m.kb", "!m.i64", "!m.cdbl", "!(m.kb - m.kb)", "!m.flt", "(!m.kb) == 0",
             "min(m.inst)"]
    a = Archive(derive_archive)
    b = bound(a, texts, P63)

    def at(fill: int | None, fetch: int = 0) -> list[Any]:
        s = Evaluator(a, b, P63, emulate=EMULATABLE, unwritten=fill).schedule(*SCHEDULE)
        return [s[fetch].values.get(f"d.e{k}") for k in range(len(texts))]

    aa = at(0xAA)
    assert aa[0] == [(-1, 0xAAAAAAAA00000000)]
    assert aa[1] == [(4, 0xAAAAAAAA00000000 - 2**64), (3, 0xAAAAAAAA00000000 - 2**64)]
    assert struct.pack(">d", aa[2][0][1]).hex() == "aaaaaaaa00000000"
    assert aa[3] == [(-1, 0xAAAAAAAA00000001)] and aa[5] == [(-1, 0)]
    assert [(i, v.bits) for i, v in aa[4]] == [(i, v.bits) for i, v in at(None)[4]] \
        == [(0, 0), (5, 0), (1, 0)]
    zero = at(0)
    assert zero[0] == [(-1, 0)] and zero[3] == [(-1, 1)] and zero[5] == [(-1, 1)]
    unknown = at(None)
    assert unknown[0] == [(-1, UNPREDICTABLE)] and unknown[5] == [(-1, UNPREDICTABLE)]
    # the first fetch with min() of nothing where no value was ever held: from T0 + 17.5 s
    late = Evaluator(a, b, P63, emulate=EMULATABLE, unwritten=0x55).schedule(
        Timestamp(T0 + 17, 500_000_000), 2_500_000_000, 1)
    assert struct.pack(">d", late[0].values["d.e6"][0][1]).hex() == "5555555555555555"
    none = Evaluator(a, b, P63, emulate=EMULATABLE).schedule(
        Timestamp(T0 + 17, 500_000_000), 2_500_000_000, 1)
    assert none[0].values["d.e6"] == [(-1, UNPREDICTABLE)]
    with pytest.raises(ValueError):
        Evaluator(a, b, P63, unwritten=256)
