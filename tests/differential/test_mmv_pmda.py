"""Kit-written MMV files as each referee's MMV PMDA (under dbpmda) and mmvdump see them.

For every seed, three files of random contents (versions 1, 2 and 3, random flags among
NOPREFIX and SENTINEL, every MMV type, indoms with long and odd instance names, strings up
to 255 bytes, open and closed ELAPSED intervals, a few repeated items and items past 1023,
help texts absent, empty and present) are laid out by the kit's writer, read
back by the kit's reader, and served by the PMDA in one dbpmda session: the PMDA must
export exactly the names ``exported_metrics`` gives, with PMIDs 70.cluster.item, InDoms
70.((cluster << 11) | serial), the instances of each indom and the values the reader reads,
by type (MMV-ID-1, MMV-ID-2, MMV-IMPL-* in spec/mmv.md); mmvdump must list the same
metrics, instances and values. One run of each tool per seed and referee keeps this fast.
"""

from __future__ import annotations

import dataclasses
import math
import random
import re
import struct
import time
from typing import Any

import pytest

from pcpconform.format.pmtypes import PmUnits
from pcpconform.mmv import Indom, Instance, Label, Metric, MmvFile, Value, build_mmv, parse_mmv
from pcpconform.mmv import model as mm
from tests.differential.libpcp.mmv_pmda import DumpView, Observation, PmdaDesc, observe
from tests.differential.libpcp.referees import Referee

pytestmark = [pytest.mark.libpcp]

SEEDS = (1, 2, 3, 4)
FILES = ("v1", "v2", "v3")                 # file name = the version it is written in
PMDA_TYPES = {mm.TYPE_I32: "32-bit int", mm.TYPE_U32: "32-bit unsigned int",
              mm.TYPE_I64: "64-bit int", mm.TYPE_U64: "64-bit unsigned int",
              mm.TYPE_FLOAT: "float", mm.TYPE_DOUBLE: "double", mm.TYPE_STRING: "string",
              mm.TYPE_ELAPSED: "64-bit int", mm.TYPE_NOSUPPORT: "Not Supported"}
SEMANTICS = {0: "counter", mm.SEM_COUNTER: "counter", mm.SEM_INSTANT: "instant",
             mm.SEM_DISCRETE: "discrete"}
UNITS = (PmUnits(), PmUnits(dimSpace=1), PmUnits(dimSpace=1, dimTime=-1, scaleSpace=1, scaleTime=3),
         PmUnits(dimCount=1), PmUnits(dimCount=1, scaleCount=3), PmUnits(dimTime=1, scaleTime=1),
         PmUnits(dimTime=1, scaleTime=2), PmUnits(dimSpace=1, dimCount=-1, scaleSpace=2))
USEC = str(PmUnits(dimTime=1, scaleTime=1))
# printable ASCII and a little UTF-8; no '"' in instance names (mmvdump quotes them unescaped)
TEXT = [chr(c) for c in range(32, 127)] + ["é", "ü", "€"]
INSTANCE_TEXT = [c for c in TEXT if c != '"']
NAME_TEXT = "abcdefghijklmnopqrstuvwxyz0123456789_"
ALL_FF = b"\xff" * 8


# -- random contents -----------------------------------------------------------------------
def _text(rng: random.Random, alphabet: list[str] | str, low: int, high: int) -> str:
    """Random text of low..high UTF-8 bytes."""
    out = ""
    target = rng.randint(low, high)
    while len(out.encode()) < target:
        c = rng.choice(alphabet)
        if len((out + c).encode()) > high:
            break
        out += c
    return out


def _atom(rng: random.Random, mtype: int, started_us: int) -> tuple[bytes, int]:
    """A random pmAtomValue word and extra of a numeric type (edges and sentinels often)."""
    edge = rng.random() < 0.3
    if mtype == mm.TYPE_I32:
        v: int | float = rng.choice((-2**31, -1, 0, 2**31 - 1)) if edge else rng.randint(-2**31, 2**31 - 1)
    elif mtype == mm.TYPE_U32:
        v = rng.choice((0, 2**32 - 1)) if edge else rng.randint(0, 2**32 - 1)
    elif mtype == mm.TYPE_I64:
        v = rng.choice((-2**63, -1, 2**63 - 1)) if edge else rng.randint(-2**63, 2**63 - 1)
    elif mtype == mm.TYPE_U64:
        v = rng.choice((0, 2**64 - 1)) if edge else rng.randint(0, 2**64 - 1)
    elif mtype == mm.TYPE_FLOAT:
        v = rng.choice((math.nan, math.inf, -0.0, 3.4e38)) if edge else \
            struct.unpack("<f", struct.pack("<f", rng.uniform(-1e6, 1e6)))[0]
    elif mtype == mm.TYPE_DOUBLE:
        v = rng.choice((math.nan, -math.inf, 1e300, 5e-324)) if edge else rng.uniform(-1e12, 1e12)
    elif mtype == mm.TYPE_ELAPSED:
        if edge:
            return ALL_FF, 0
        v = rng.randint(0, 2**40)
        # an open interval started 1..10 s ago: extra is minus its start in microseconds
        extra = -(started_us - rng.randint(1, 10) * 1_000_000) if rng.random() < 0.4 else 0
        return mm.Value.of(mtype, v).atom, extra
    else:                                  # NOSUPPORT: the word is never read
        return bytes(8), 0
    return mm.Value.of(mtype, v).atom, 0


def draw_file(rng: random.Random, file: str, cluster: int, started_us: int) -> MmvFile:
    version = int(file[1])
    flags = rng.choice((0, mm.FLAG_SENTINEL, mm.FLAG_NOPREFIX, mm.FLAG_SENTINEL | mm.FLAG_NOPREFIX))
    max_name = 63 if version == 1 else 255
    indoms = []
    for serial in rng.sample(range(1, 2048), rng.randint(1, 3)):
        ids = rng.sample(range(-2**31, 2**31), rng.randint(1, 6))
        insts = tuple(Instance(i, f"i{k}" + _text(rng, INSTANCE_TEXT, 0, max_name - 3))
                      for k, i in enumerate(ids) if i != mm.PM_IN_NULL)
        indoms.append(Indom(serial, insts, rng.choice((None, "", _text(rng, TEXT, 1, 80))),
                            rng.choice((None, _text(rng, TEXT, 0, 255)))))
    # NOPREFIX names are mmv.<name>: a first component of the file's own keeps them apart
    prefix = f"n{file}." if flags & mm.FLAG_NOPREFIX else ""
    metrics = []
    items = rng.sample(range(0, 1024), rng.randint(30, 60))
    for n in range(1, len(items)):   # a few the PMDA skips: a repeated item, one past 1023
        if rng.random() < 0.05:
            items[n] = rng.choice((rng.choice(items[:n]), rng.randint(1024, 2**32 - 1)))
    for n, item in enumerate(items):
        name = f"{prefix}g{n % 4}.m{n}_"
        long = version > 1 and (n == 0 or rng.random() < 0.3)
        name += _text(rng, NAME_TEXT, 64 - len(name), 200) if long else \
            _text(rng, NAME_TEXT, 0, 63 - len(name))
        mtype = rng.choice(tuple(PMDA_TYPES))
        indom = rng.choice([0, -1, *(d.serial for d in indoms)])
        owners: list[int | None] = [None] if mm.is_singular(indom) else \
            [i.internal for i in next(d for d in indoms if d.serial == indom).instances]
        values = []
        for inst in owners:
            if mtype == mm.TYPE_STRING:
                text = "" if rng.random() < 0.2 else _text(rng, TEXT, 1, 255)
                values.append(Value(inst, struct.pack("<q", len(text.encode())), 0, text))
            else:
                atom, extra = _atom(rng, mtype, started_us)
                values.append(Value(inst, atom, extra))
        metrics.append(Metric(name, item, mtype, rng.choice(tuple(SEMANTICS)),
                              rng.choice(UNITS).to_word(), indom,
                              rng.choice((None, "", _text(rng, TEXT, 1, 60))),
                              rng.choice((None, _text(rng, TEXT, 1, 255))), tuple(values)))
    labels = (Label(mm.LABEL_CLUSTER, cluster, mm.PM_IN_NULL, '{"seed":"x"}'),) if version == 3 else ()
    g = rng.randint(1, 2**63)
    return MmvFile(version, g, g, flags, 0, cluster, tuple(indoms), tuple(metrics), labels)


# -- what the PMDA and mmvdump should show -------------------------------------------------
def nan_is_sentinel(referee: Referee) -> bool:
    """PCP 6.3.1 made a NaN FLOAT/DOUBLE "no value" under SENTINEL (isnan); before, it
    compared with NaN, which is never equal (MMV-IMPL-SENTINEL-NAN)."""
    major, minor, patch = (int(x) for x in referee.version.split(".")[:3])
    return (major, minor, patch) >= (6, 3, 1)


def no_value(m: Metric, v: Value, flags: int, nan_rule: bool) -> bool:
    """The PMDA's SENTINEL rule: the whole 8-byte word all 0xff (integers, ELAPSED), NaN
    (FLOAT, DOUBLE, from 6.3.1), an empty string."""
    if not flags & mm.FLAG_SENTINEL:
        return False
    if m.type in (mm.TYPE_I32, mm.TYPE_U32, mm.TYPE_I64, mm.TYPE_U64, mm.TYPE_ELAPSED):
        return v.atom == ALL_FF
    if m.type in (mm.TYPE_FLOAT, mm.TYPE_DOUBLE):
        x = v.typed(m.type)
        return nan_rule and isinstance(x, float) and math.isnan(x)
    return m.type == mm.TYPE_STRING and v.string == ""


def _number(m: Metric, v: Value) -> float:
    x = v.typed(m.type)
    assert isinstance(x, float), m
    return x


def pmda_text(m: Metric, v: Value) -> str:
    """dbpmda's text of one value (pmPrintValue; an ELAPSED with a closed interval)."""
    x = v.typed(m.type)
    if m.type in (mm.TYPE_I32, mm.TYPE_U32):
        # in place, and dbpmda has no descriptor: the word unsigned, as a float unless
        # that is a NaN, and in hex
        word = struct.unpack_from("<I", v.atom)[0]
        as_float = struct.unpack_from("<f", v.atom)[0]
        middle = "" if math.isnan(as_float) else f" {as_float:.8g}"
        return f"{word}{middle} 0x{word:x}"
    if m.type == mm.TYPE_FLOAT:
        return f"{_number(m, v):.8g}"
    if m.type == mm.TYPE_DOUBLE:
        return f"{_number(m, v):.16g}"
    if m.type == mm.TYPE_STRING:
        return f'"{x}"'
    return str(x)


def dump_text(m: Metric, v: Value) -> str:
    """mmvdump's text of one value (ELAPSED with a closed interval)."""
    x = v.typed(m.type)
    if m.type in (mm.TYPE_FLOAT, mm.TYPE_DOUBLE):
        return f"{_number(m, v):f}"
    if m.type == mm.TYPE_STRING:
        return f'"{x}"'
    if m.type == mm.TYPE_ELAPSED:
        return f"{x} (value={x}/extra={v.extra})"
    if m.type == mm.TYPE_NOSUPPORT:
        return "Unknown type -1"
    return str(x)


def elapsed_ok(printed: str, v: Value, obs: Observation, slack_us: int = 2_000_000) -> bool:
    """An open interval's value: value + now + extra, now within the run (plus slack)."""
    base: int = struct.unpack("<q", v.atom)[0] + v.extra
    low = base + int(obs.started * 1e6) - slack_us
    high = base + int(obs.finished * 1e6) + slack_us
    return low <= int(printed.split()[0]) <= high


# -- the tests -----------------------------------------------------------------------------
_OBSERVED: dict[tuple[str, int], tuple[dict[str, MmvFile], Observation]] = {}


def observed(referee: Referee, seed: int) -> tuple[dict[str, MmvFile], Observation]:
    """Each seed's files, as the kit reads them back, and what the referee showed (once)."""
    key = (referee.name, seed)
    if key not in _OBSERVED:
        rng = random.Random(seed)
        now_us = int(time.time() * 1e6)
        clusters = rng.sample(range(1, 4096), len(FILES))
        data = {f: build_mmv(draw_file(rng, f, c, now_us)) for f, c in zip(FILES, clusters)}
        kit = {f: parse_mmv(b, f) for f, b in data.items()}
        exported = [(f, e) for f in FILES for e in mm.exported_metrics(kit[f], f)]
        indoms = sorted({str(mm.exported_indom(kit[f].cluster, d.serial))
                         for f in FILES for d in kit[f].indoms})
        _OBSERVED[key] = kit, observe(referee, data, descs=[e.name for _, e in exported],
                                      indoms=indoms, fetch=[str(e.pmid) for _, e in exported],
                                      texts=[e.name for _, e in exported])
    return _OBSERVED[key]


@pytest.mark.parametrize("seed", SEEDS)
def test_pmda_exports_what_the_kit_reads(referee: Referee, seed: int) -> None:
    kit, obs = observed(referee, seed)
    assert obs.pmda.run.status == 0 and not obs.pmda.run.crashed, obs.pmda.run.output[-2000:]
    assert kit["v1"].version == 1 and kit["v2"].version == 2 and kit["v3"].version == 3
    check_pmda(kit, obs, nan_is_sentinel(referee))


def check_pmda(kit: dict[str, MmvFile], obs: Observation, nan_rule: bool) -> None:
    view = obs.pmda
    exported = [(f, e) for f in FILES for e in mm.exported_metrics(kit[f], f)]
    assert sorted(n for n in view.names if not n.startswith("mmv.control.")) == \
        sorted(e.name for _, e in exported)
    for f, e in exported:
        m = e.metric
        if m.type == mm.TYPE_NOSUPPORT:
            expected = PmdaDesc(str(e.pmid), PMDA_TYPES[m.type])
        elif m.type == mm.TYPE_ELAPSED:   # exported as a 64-bit microsecond counter
            expected = PmdaDesc(str(e.pmid), PMDA_TYPES[m.type], None if e.indom.is_null
                                else str(e.indom), "counter", USEC)
        else:
            expected = PmdaDesc(str(e.pmid), PMDA_TYPES[m.type], None if e.indom.is_null
                                else str(e.indom), SEMANTICS[m.semantics], str(m.units))
        assert view.descs[e.name] == expected, (f, m.name)
        got = view.values[str(e.pmid)]
        if m.type == mm.TYPE_NOSUPPORT:
            assert isinstance(got, str) and "not supported" in got, got
            continue
        assert isinstance(got, list), (e.name, got)
        want = [v for v in m.values if not no_value(m, v, kit[f].flags, nan_rule)]
        assert [i for i, _ in got] == [v.instance for v in want], e.name
        for (_, printed), v in zip(got, want):
            if m.type == mm.TYPE_ELAPSED and v.extra < 0:
                assert elapsed_ok(printed, v, obs), (e.name, printed, v)
            else:
                assert printed == pmda_text(m, v), (e.name, v)
    for f in FILES:
        for d in kit[f].indoms:
            assert view.instances[str(mm.exported_indom(kit[f].cluster, d.serial))] == \
                [(i.internal, i.name) for i in d.instances]
    for _, e in exported:
        assert view.texts[e.name] == expected_text(e.metric), e.name


def expected_text(m: Metric) -> tuple[str | None, str | None]:
    """The metric's one-line and help text as dbpmda shows them (MMV-IMPL-HELP): None
    (offset 0) is an error, an empty text is shown as dbpmda's placeholder; a NOSUPPORT
    metric has no text (its lookup answers PM_ERR_PMID)."""
    if m.type == mm.TYPE_NOSUPPORT:
        return None, None
    short = "<no one line help text specified>" if m.shorttext == "" else m.shorttext
    long = "<no help text specified>" if m.helptext == "" else m.helptext
    return short, long


def _planted(kit: dict[str, MmvFile], how: str) -> dict[str, MmvFile]:
    """The kit's contents with one defect planted in file v2 (or v1)."""
    f = "v2"
    mmv = kit[f]
    if how == "value":        # one numeric value off by one
        n, m = next((n, m) for n, m in enumerate(mmv.metrics)
                    if m.type in (mm.TYPE_U64, mm.TYPE_I64) and m.values
                    and all(v.atom != ALL_FF for v in m.values))
        v = m.values[0]
        bumped = Value(v.instance, struct.pack("<Q", (struct.unpack("<Q", v.atom)[0] + 1) % 2**64),
                       v.extra)
        metric = dataclasses.replace(m, values=(bumped, *m.values[1:]))
        mmv = dataclasses.replace(mmv, metrics=(*mmv.metrics[:n], metric, *mmv.metrics[n + 1:]))
    elif how == "instance":   # one instance renamed
        d = mmv.indoms[0]
        renamed = (Instance(d.instances[0].internal, d.instances[0].name + "x"), *d.instances[1:])
        mmv = dataclasses.replace(mmv, indoms=(dataclasses.replace(d, instances=renamed),
                                               *mmv.indoms[1:]))
    elif how == "cluster":    # a cluster the PMDA does not use
        mmv = dataclasses.replace(mmv, cluster=(mmv.cluster % 4095) + 1)
    elif how == "semantics":  # a discrete metric read as instant
        n, m = next((n, m) for n, m in enumerate(mmv.metrics) if m.semantics == mm.SEM_DISCRETE
                    and m.type not in (mm.TYPE_ELAPSED, mm.TYPE_NOSUPPORT))
        metric = dataclasses.replace(m, semantics=mm.SEM_INSTANT)
        mmv = dataclasses.replace(mmv, metrics=(*mmv.metrics[:n], metric, *mmv.metrics[n + 1:]))
    elif how == "help":       # one help text changed
        n, m = next((n, m) for n, m in enumerate(mmv.metrics) if m.helptext
                    and m.type != mm.TYPE_NOSUPPORT)
        metric = dataclasses.replace(m, helptext=f"{m.helptext}!")
        mmv = dataclasses.replace(mmv, metrics=(*mmv.metrics[:n], metric, *mmv.metrics[n + 1:]))
    return {**kit, f: mmv}


@pytest.mark.parametrize("how", ["value", "instance", "cluster", "semantics", "help"])
def test_a_planted_difference_fails(referee: Referee, how: str) -> None:
    kit, obs = observed(referee, SEEDS[0])
    nan_rule = nan_is_sentinel(referee)
    check_pmda(kit, obs, nan_rule)
    with pytest.raises(AssertionError):
        check_pmda(_planted(kit, how), obs, nan_rule)
    if how != "cluster":      # mmvdump does not show PMIDs
        with pytest.raises(AssertionError):
            check_dump(_planted(kit, how), obs)


def test_contents_reach_every_rule() -> None:
    """The seeds draw every case the comparisons distinguish."""
    seen: set[str] = set()
    for seed in SEEDS:
        rng = random.Random(seed)
        now_us = int(time.time() * 1e6)
        clusters = rng.sample(range(1, 4096), len(FILES))
        for f, c in zip(FILES, clusters):
            mmv = draw_file(rng, f, c, now_us)
            sentinel = bool(mmv.flags & mm.FLAG_SENTINEL)
            seen |= {f"flags {mmv.flags}"}
            items = [m.item for m in mmv.metrics]
            seen |= {"repeated item"} if len(set(items)) < len(items) else set()
            seen |= {"item past 1023"} if max(items) > 1023 else set()
            for m in mmv.metrics:
                seen.add(f"type {m.type}")
                seen |= {"long name"} if len(m.name) >= 64 else set()
                for v in m.values:
                    x = v.typed(m.type)
                    if v.atom == ALL_FF and m.type != mm.TYPE_STRING:
                        seen.add(f"all-ff sentinel={sentinel}")
                    if v.atom == b"\xff" * 4 + bytes(4) and m.type in (mm.TYPE_I32, mm.TYPE_U32):
                        seen.add(f"32-bit all-ff sentinel={sentinel}")
                    if isinstance(x, float) and math.isnan(x):
                        seen.add(f"nan sentinel={sentinel}")
                    if x == "":
                        seen.add(f"empty string sentinel={sentinel}")
                    if m.type == mm.TYPE_ELAPSED and v.extra < 0:
                        seen.add("open interval")
    wanted = {f"type {t}" for t in PMDA_TYPES} | {f"flags {f}" for f in range(0, 6) if f & 2 == 0}
    wanted |= {f"{case} sentinel={s}" for case in ("all-ff", "32-bit all-ff", "nan", "empty string")
               for s in (True, False)} | {"long name", "open interval", "repeated item",
                                          "item past 1023"}
    assert wanted <= seen, wanted - seen


def _dump_fields(m: Metric) -> dict[str, Any]:
    return {"units": m.units.unit_string(),
            "indom": None if mm.is_singular(m.indom) else str(m.indom & 0xFFFFFFFF),
            "shorttext": m.shorttext, "helptext": m.helptext}


@pytest.mark.parametrize("seed", SEEDS)
def test_mmvdump_shows_what_the_kit_reads(referee: Referee, seed: int) -> None:
    kit, obs = observed(referee, seed)
    check_dump(kit, obs)


def check_dump(kit: dict[str, MmvFile], obs: Observation) -> None:
    for f in FILES:
        mmv, dump = kit[f], obs.dumps[f]
        assert dump.run.status == 0, dump.run.output[-2000:]
        assert dump.header["Version"] == str(mmv.version)
        assert int(dump.header["Cluster"]) == mmv.cluster
        assert int(dump.header["Flags"].split()[0], 16) == mmv.flags
        assert dump.instances == [(d.serial, i.internal, i.name) for d in mmv.indoms
                                  for i in d.instances]
        assert [(d.item, d.name) for d in dump.metrics] == [(m.item, m.name) for m in mmv.metrics]
        for d, m in zip(dump.metrics, mmv.metrics):
            assert {k: d.fields.get(k) for k in ("units", "indom", "shorttext", "helptext")} == \
                _dump_fields(m), m.name
            # "type=<name> (0x<type>), sem=<name> (0x<semantics>), pad=0x0"
            assert re.findall(r"\((0x[0-9a-f]+)\)", d.fields.get("type") or "") == \
                [f"{m.type & 0xFFFFFFFF:#x}", f"{m.semantics:#x}"], m.name
        check_dump_values(dump, mmv, obs)


def check_dump_values(dump: DumpView, mmv: MmvFile, obs: Observation) -> None:
    names = {d.serial: {i.internal: i.name for i in d.instances} for d in mmv.indoms}
    rows = [(m, v) for m in mmv.metrics for v in m.values]
    assert len(dump.values) == len(rows)
    for got, (m, v) in zip(dump.values, rows):
        inst_name = None if v.instance is None else names[m.indom][v.instance]
        assert (got.item, got.name, got.instance, got.instance_name) == \
            (m.item, m.name, v.instance, inst_name)
        if m.type == mm.TYPE_ELAPSED and v.extra < 0:
            assert got.text.endswith(f"(value={v.typed(m.type)}/extra={v.extra})")
            assert elapsed_ok(got.text, v, obs), (m.name, got.text)
        else:
            assert got.text == dump_text(m, v), (m.name, v)
