"""Salvage against the three libpcps (spec/salvage.md): every output of the invalid corpus and
of a bounded sweep of fuzzed mutants of real archives opens, reads forward, replays
interpolated and backwards with no error under each referee, with as many values as the kit
reads; no value is invented; a mutant damaging one record keeps >= 99% of what a perfect
salvage keeps; salvage keeps at least what libpcp's own reading of the input gives, and more
wherever libpcp stops early with something of a perfect salvage after it; and the time-order
rule of SALVAGE-ORDER-1 is the one that loses least.

PCPCONFORM_SALVAGE_MUTANTS sets the sweep's size (default 48, a few minutes with the three
referees); benchmarks/bench_salvage.py runs the full sweep and prints its tables.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from pcpconform.salvage import salvage_archive
from tests.differential.libpcp.referees import Referee, archive_files
from tests.differential.libpcp.salvage_sweep import Salvaged, read_with, salvage_sweep

ROOT = Path(__file__).resolve().parents[2]
MUTANTS = int(os.environ.get("PCPCONFORM_SALVAGE_MUTANTS", "48"))
BADLOG = Path("/var/lib/pcp/testsuite/badarchives")


@pytest.fixture(scope="module")
def corpus_outputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, int]]:
    """Every invalid corpus archive salvaged: case id -> (output base, values it holds)."""
    from pcpconform.io.archive import Archive

    work = tmp_path_factory.mktemp("salvaged-corpus")
    out = {}
    for path in sorted((ROOT / "corpus" / "cases" / "invalid").glob("*/case.json")):
        case = json.loads(path.read_text())
        if case.get("format", "archive") != "archive" or case["id"].startswith("file-no-archive"):
            continue
        base = work / case["id"].replace("-", "_")
        report = salvage_archive(path.parent / case["archive"], base)
        if report.failure is None:
            a = Archive(base)
            out[case["id"]] = (base, sum(len(vs.values) for r in a.results() for vs in r.vsets))
    return out


def test_every_salvaged_corpus_archive_reads_clean(referee: Referee,
                                                   corpus_outputs: dict[str, tuple[Path, int]]) -> None:
    got = read_with(referee, [b for b, _ in corpus_outputs.values()], "--replay")
    problems = []
    for cid, (base, values) in corpus_outputs.items():
        r = got.get(base.name, {})
        trouble = (r.get("open") or r.get("stop") or r.get("replay") or r.get("crash") or r.get("hang")
                   or r.get("script_error"))
        if trouble is None and (r.get("values", 0) + r.get("conv", 0)) != values:
            trouble = f"{r.get('values')} values, the kit reads {values}"
        if trouble:
            problems.append(f"{cid}: {trouble}")
    assert len(got) == len(corpus_outputs) > 230
    assert problems == []


@pytest.fixture(scope="module")
def sweep(tmp_path_factory: pytest.TempPathFactory, pmlogger_archives: dict[str, Path]) -> Salvaged:
    return salvage_sweep(MUTANTS, tmp_path_factory.mktemp("sweep"), recorded=pmlogger_archives)


def test_the_sweep_invents_nothing_and_keeps_what_a_perfect_salvage_keeps(sweep: Salvaged) -> None:
    outcomes = sweep.outcomes
    writers = {o.writer for o in outcomes}
    assert {"kit", "pmi", "pmlogger", "pmlogger-qa", "pmlogger-live"} <= writers
    assert {o.version for o in outcomes} == {2, 3} and any(o.compressed for o in outcomes)
    assert [o.id for o in outcomes if o.crash] == []
    assert [(o.id, o.invented_detail) for o in outcomes if o.invented] == []
    assert [o.id for o in outcomes if o.out_errors] == []
    # nothing written only where a perfect salvage keeps nothing either
    assert [o.id for o in outcomes if o.failure and o.perfect] == []
    one = [o for o in outcomes if o.one_record and o.perfect]
    assert len(one) >= MUTANTS // 2
    assert sum(o.recovered for o in one) >= 0.99 * sum(o.perfect for o in one)


def test_the_sweep_outputs_read_clean_and_beat_libpcps_own_reading(referee: Referee, sweep: Salvaged) -> None:
    sweep.read_with(referee)
    bad, fewer, not_more = [], [], []
    for o in sweep.outcomes:
        e = o.libpcp[referee.name]
        if "out_ok" in e and not e["out_ok"]:
            bad.append(f"{o.id} {o.notes}: {e['out_error']}")
        # SALVAGE-RESULT-4's values: libpcp's forward read shows them, its replay aborts
        if o.genuine + o.singular < e["in_genuine"]:
            fewer.append(f"{o.id} {o.notes}: libpcp {e['in_genuine']}, salvage {o.genuine}")
        if e["in_stopped"] and o.perfect > e["in_genuine"] and o.genuine <= e["in_genuine"]:
            not_more.append(f"{o.id} {o.notes}: libpcp stops at {e['in_genuine']}, salvage {o.genuine}")
    assert bad == [] and fewer == [] and not_more == []


@pytest.mark.parametrize("case", ["result-time-order-v2", "result-time-order-v3", "badlog-3"])
def test_time_order_rule_loses_least(referee: Referee, case: str, tmp_path: Path) -> None:
    """SALVAGE-ORDER-1: what each libpcp replays forward for keep / drop / sort."""
    src = BADLOG / case if case.startswith("badlog") else ROOT / "corpus" / "cases" / "invalid" / case / "a"
    if not archive_files(src):
        pytest.fail(f"{src}: PCP QA's archives are not installed (.ci/install-pcp.sh)")
    bases = {}
    for f in archive_files(src):
        shutil.copy(f, tmp_path / ("in" + f.name[len(src.name):]))
    bases["in"] = tmp_path / "in"
    for rule in ("keep", "drop", "sort"):
        salvage_archive(src, tmp_path / rule, order=rule)
        bases[rule] = tmp_path / rule
    got = read_with(referee, list(bases.values()))
    values = {rule: got[base.name]["values"] for rule, base in bases.items()}
    assert values["sort"] > max(values["in"], values["keep"], values["drop"]), values
    assert values["in"] == values["keep"] == values["drop"]     # libpcp skips the late result itself
    expected = {"result-time-order-v2": 29, "result-time-order-v3": 29, "badlog-3": 123}
    assert values["sort"] == expected[case]



def _replay(referee: Referee, base: Path) -> dict[str, object]:
    return read_with(referee, [base], "--replay")[base.name]


def test_libpcp_aborts_interpolating_several_values_of_a_singular_metric(referee: Referee) -> None:
    """SALVAGE-RESULT-4: the input of corpus case salvage-singular-several-v2 (its salvage
    drops those values)."""
    got = _replay(referee, ROOT / "corpus" / "cases" / "invalid" / "salvage-singular-several-v2" / "a")
    assert got.get("crash") == ("SIGABRT" if referee.name != "pcp-7" else None), got
    assert got.get("values") in (None, 29)


def test_libpcp_7_refuses_an_instance_domain_of_negative_count(referee: Referee, tmp_path: Path) -> None:
    """SALVAGE-META-4: numinst -1 in the example's first instance domain (v3)."""
    import struct

    from pcpconform.fixtures import bundled_fixture
    from pcpconform.fixtures.fixture import load_fixture
    from pcpconform.fixtures.generate import generate_archive

    base = tmp_path / "neg"
    generate_archive(load_fixture(bundled_fixture("example")), base, version=3)
    meta = bytearray(base.with_suffix(".meta").read_bytes())
    pos = 808
    while struct.unpack_from(">i", meta, pos + 4)[0] not in (5, 6):
        pos += struct.unpack_from(">I", meta, pos)[0]
    struct.pack_into(">i", meta, pos + 24, -1)
    base.with_suffix(".meta").write_bytes(bytes(meta))
    got = _replay(referee, base)
    assert bool(got.get("open")) == (referee.name == "pcp-7"), got
    salvage_archive(base, tmp_path / "out")
    assert _replay(referee, tmp_path / "out").get("open") is None


def test_libpcp_crashes_interpolating_a_discrete_metric_up_to_a_last_mark(referee: Referee, tmp_path: Path) -> None:
    """spec/salvage.md, Limits: a valid archive (two results of a discrete metric, then a mark
    a minute later) that every libpcp crashes on when interpolating up to the mark; salvage
    keeps an input's marks, so an input ending so gives an output ending so."""
    from pcpconform.fixtures.fixture import parse_fixture
    from pcpconform.fixtures.generate import generate_archive

    doc = {"archive": {"version": 2, "hostname": "h", "timezone": "UTC"},
           "metrics": [{"name": "m.d", "pmid": "60.0.1", "type": "u64", "sem": "discrete"}],
           "samples": [{"time": 1100000000, "values": {"m.d": 5}}, {"time": 1100000060, "values": {"m.d": 6}},
                       {"time": 1100000120, "mark": True}]}
    generate_archive(parse_fixture(doc), tmp_path / "mark")
    got = _replay(referee, tmp_path / "mark")
    assert got.get("crash") == "SIGSEGV", got
