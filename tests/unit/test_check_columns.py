"""The validator's result columns (check/columns.py): the same report as the reference path,
taken on the benchmark shape, and every planted value defect still found."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from pcpconform.check import columns as columns_module
from pcpconform.check import values as values_module
from pcpconform.check.columns import PATH, Fallback
from pcpconform.check.engine import check_archive
from pcpconform.check.rules import RULES
from pcpconform.check.shape import LearnedShape, ShapeCheck
from pcpconform.check.values import ValueChecks, VsetAt
from pcpconform.fastpath import Declined
from pcpconform.format.pmtypes import PM_INDOM_NULL, PmID, PmInDom, PmSem, PmType, PmUnits, Timestamp
from pcpconform.format.schema import RESULT_HEADER_SIZE, block_offset
from pcpconform.io.decoded import DecodedValueSet
from pcpconform.io.reader import Component
from pcpconform.io.writer import ArchiveWriter, LabelFields, ValueSetSpec, layout_result
from tests.bench_modules import bench_module

ROOT = Path(__file__).resolve().parents[2]
_VSET = struct.Struct(">Iii")       # pmid, numval, valfmt
_WORD = struct.Struct(">I")


def _cases() -> list[Path]:
    bases = []
    for case in sorted((ROOT / "corpus" / "cases").glob("*/*/case.json")):
        archive = json.loads(case.read_text()).get("archive")
        if archive:
            bases.append(case.parent / archive)
    return bases


def _json(base: Path, columns: bool) -> dict[str, object]:
    report = check_archive(base, columns=columns).to_json()
    report.pop("seconds")
    return report


def test_every_corpus_archive_gets_the_reference_report() -> None:
    bases = _cases()
    assert len(bases) > 250
    for base in bases:
        assert _json(base, True) == _json(base, False), base.parent.name


def _bench_archive(tmp: Path, version: int) -> Path:
    bench_decode = bench_module("bench_decode")
    base = tmp / f"v{version}" / "bench"
    base.parent.mkdir()
    bench_decode.generate(base, version, 0.3, 1)
    return base


@pytest.fixture(scope="module", params=[2, 3])
def bench(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _bench_archive(tmp_path_factory.mktemp("columns"), request.param)


def test_columns_taken_for_the_benchmark_shape(bench: Path) -> None:
    report = check_archive(bench)
    assert report.diagnostics == []
    declined = report.paths.reasons(PATH)
    answered = report.paths.answered[PATH]
    results = answered + sum(declined.values())
    assert results > 60
    # a handful of layouts are learned (with and without the string, its lengths); the rest
    # is checked on columns: a silent fallback would show here
    assert set(declined) <= {Fallback.NEW_SHAPE, Fallback.STRUCTURE}, declined
    assert answered >= 0.8 * results, report.paths


def test_shapes_are_bounded(bench: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Records too large for the shape budget go the reference path, counted, same report."""
    monkeypatch.setattr(columns_module, "SHAPE_BYTES", 12_000)     # results are ~4 KB
    report = check_archive(bench)
    assert report.paths.reasons(PATH)[Fallback.TOO_LARGE] > 0 and report.paths.answered[PATH] == 0
    assert _json(bench, True) == _json(bench, False)
    monkeypatch.setattr(columns_module, "SHAPE_BYTES", 40_000)     # a few shapes at a time
    report = check_archive(bench)
    assert report.paths.answered[PATH] > 0 and report.paths.reasons(PATH)[Fallback.NEW_SHAPE] > 6
    assert _json(bench, True) == _json(bench, False)


def test_reference_path_takes_no_column(bench: Path) -> None:
    paths = check_archive(bench, columns=False).paths
    assert paths.answered[PATH] == 0 and not paths.reasons(PATH)


# -- planted defects: each is found by the reference path and the columns alike --------------

def _records(base: Path) -> list[tuple[int, bytes]]:
    """(offset, bytes) of every result record of volume 0."""
    with Component(Path(f"{base}.0")) as comp:
        return [(rec.offset, rec.data) for rec in comp.records()]


def _vsets(data: bytes, version: int) -> list[tuple[int, int, int, int]]:
    """(pmid, numval, valfmt, offset of the vlist) of each value set of a result."""
    pos, out = RESULT_HEADER_SIZE[version], []
    for _ in range(struct.unpack_from(">i", data, pos - 4)[0]):
        pmid, numval, valfmt = _VSET.unpack_from(data, pos)
        out.append((pmid, numval, valfmt, pos + 12))
        pos += 12 + 8 * numval
    return out


def _patch(base: Path, at: int, new: bytes, out: Path) -> Path:
    out.mkdir()
    for part in ("meta", "index", "0"):
        data = bytearray(Path(f"{base}.{part}").read_bytes())
        if part == "0":
            data[at:at + len(new)] = new
        (out / f"bench.{part}").write_bytes(bytes(data))
    return out / "bench"


def _version(base: Path) -> int:
    return 3 if Path(f"{base}.0").read_bytes()[7] == 3 else 2


def _counter_drop(base: Path) -> int:
    offset, data = _records(base)[40]
    pmid, numval, valfmt, vlist = _vsets(data, _version(base))[0]
    assert (pmid, numval, valfmt) == (int(PmID("60.3.0")), 100, 1)     # network.interface.in.bytes
    block = block_offset(_WORD.unpack_from(data, vlist + 8 * 7 + 4)[0])
    return offset + block + 4


def _time_back(base: Path) -> int:
    return _records(base)[30][0] + 4


def _unknown_inst(base: Path) -> int:
    offset, data = _records(base)[20]
    _pmid, _n, valfmt, vlist = _vsets(data, _version(base))[1]       # proc.psinfo.priority
    assert valfmt == 0
    return offset + vlist + 8 * 3


def _string_nul(base: Path) -> int:
    offset, data = _records(base)[25]
    pmid, numval, valfmt, vlist = _vsets(data, _version(base))[-1]
    assert (pmid, numval, valfmt) == (int(PmID("250.0.1")), 1, 1)      # syslog.last_message
    block = block_offset(_WORD.unpack_from(data, vlist + 4)[0])
    vlen = _WORD.unpack_from(data, block)[0] & 0xFFFFFF
    return offset + block + vlen - 1


def _fraction(base: Path) -> int:
    return _records(base)[50][0] + (12 if _version(base) == 3 else 8)    # nsec / usec


DEFECTS = {
    # code: (where, new bytes)
    "value.counter-decrease": (_counter_drop, b"\0" * 8),
    "result.time-order": (_time_back, b"\0\0\0\1"),
    "value.unknown-inst": (_unknown_inst, b"\0\x0f\xff\xff"),
    "value.string-nul": (_string_nul, b"x"),
    "time.fraction": (_fraction, b"\x7f\xff\xff\xff"),
}


@pytest.mark.parametrize("code", sorted(DEFECTS))
def test_planted_defect_found_on_both_paths(bench: Path, tmp_path: Path, code: str) -> None:
    where, new = DEFECTS[code]
    mutant = _patch(bench, where(bench), new, tmp_path / "mutant")
    fast = _json(mutant, True)
    assert fast == _json(mutant, False)
    assert code in {d["code"] for d in fast["diagnostics"]}      # type: ignore[attr-defined]
    assert code in RULES


def test_a_column_check_left_out_shows(bench: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The comparison is sharp: without the counter rule's column form the columns miss the drop."""
    mutant = _patch(bench, _counter_drop(bench), b"\0" * 8, tmp_path / "mutant")
    monkeypatch.setattr(values_module.CounterRule, "columns", lambda self, vc, shape: None)
    assert _json(mutant, True) != _json(mutant, False)


class _Answer42(values_module.ValueRule):
    """A rule added in one place: a value of 42 is reported (under a code the test adds)."""

    codes = ("value.test-42",)

    def __init__(self) -> None:
        self.shapes = 0

    def check(self, vc: ValueChecks, at: VsetAt, vs: DecodedValueSet, stamp: Timestamp) -> bool:
        if 42 in vs.columns[1]:
            vc.ctx.add("value.test-42", at.file, "a value of 42", field=at.fld, **at.where)
        return True

    def columns(self, vc: ValueChecks, shape: LearnedShape) -> ShapeCheck | None:
        self.shapes += 1
        readers = [vs.reader() for vs in shape.vsets]

        def no_42(data: bytes, ns: int) -> None:
            if any(42 in read(data) for read in readers):
                raise Declined(Fallback.FINDING)
        return no_42


def test_a_rule_added_to_values_runs_on_the_column_path(bench: Path, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """A rule appended to ``VALUE_RULES`` is called by the column engine on every learned
    shape, and its finding in a record that would take the column path is reported there
    as on the reference path."""
    offset, data = _records(bench)[60]
    _pmid, _n, valfmt, vlist = _vsets(data, _version(bench))[1]       # proc.psinfo.priority
    assert valfmt == 0
    mutant = _patch(bench, offset + vlist + 4, struct.pack(">I", 42), tmp_path / "mutant")
    rule = _Answer42()
    monkeypatch.setitem(RULES, "value.test-42", RULES["value.nosupport"])
    monkeypatch.setattr(values_module, "VALUE_RULES", [*values_module.VALUE_RULES, rule])
    report = check_archive(mutant)
    assert rule.shapes > 0 and report.paths.answered[PATH] > 0.8 * len(_records(bench))
    assert [d.record for d in report.diagnostics if d.code == "value.test-42"] == [61]
    assert _json(mutant, True) == _json(mutant, False)



def test_a_counter_twice_in_one_result(tmp_path: Path) -> None:
    """The second value set of a counter is compared with the first, in the same result."""
    pmid = int(PmID("60.0.1"))
    w = ArchiveWriter(tmp_path / "a", 3)
    t0 = Timestamp(1_700_000_000, 0)
    w.start(LabelFields(hostname="twice", timezone="UTC", start=t0, pid=1, zoneinfo=":UTC"))
    w.put_desc(pmid, PmType.U32, PM_INDOM_NULL, PmSem.COUNTER, PmUnits(), ["twice.counter"])
    w.put_index(t0)
    for k in range(20):
        vsets = [ValueSetSpec(pmid, PmType.U32, [(-1, 100 + k)]),
                 ValueSetSpec(pmid, PmType.U32, [(-1, 100 + k + (5 if k < 10 else -5))])]
        w.put_result_bytes(w.encode_result(layout_result(3, Timestamp(t0.sec + k, 0), vsets)))
    w.put_index(Timestamp(t0.sec + 19, 0))
    w.close()
    fast = _json(tmp_path / "a", True)
    assert fast == _json(tmp_path / "a", False)
    assert {d["code"] for d in fast["diagnostics"]} == {"value.counter-decrease"}  # type: ignore[attr-defined]


def _layouts(base: Path, sizes: list[int], empty: bool) -> Path:
    """Results of a U64 counter over ``sizes[k]`` instances each, and with ``empty`` a
    second metric with no values (numval 0: a shape the columns do not learn)."""
    pmid, other = int(PmID("60.0.1")), int(PmID("60.0.2"))
    w = ArchiveWriter(base, 3)
    t0 = Timestamp(1_700_000_000, 0)
    w.start(LabelFields(hostname="layouts", timezone="UTC", start=t0, pid=1, zoneinfo=":UTC"))
    indom = int(PmInDom("60.1"))
    w.put_desc(pmid, PmType.U64, indom, PmSem.COUNTER, PmUnits(), ["layouts.counter"])
    w.put_desc(other, PmType.U32, PM_INDOM_NULL, PmSem.INSTANT, PmUnits(), ["layouts.empty"])
    w.put_index(t0)
    w.put_indom(t0, indom, [(i, f"i{i}") for i in range(max(sizes))])
    for k, size in enumerate(sizes):
        vsets = [ValueSetSpec(pmid, PmType.U64, [(i, 1000 * k + i) for i in range(size)])]
        if empty:
            vsets.append(ValueSetSpec(other, PmType.U32, [], numval=0))
        w.put_result_bytes(w.encode_result(layout_result(3, Timestamp(t0.sec + k, 0), vsets)))
    w.put_index(Timestamp(t0.sec + len(sizes) - 1, 0))
    w.close()
    return base


@pytest.mark.parametrize("shape", ["never-again", "declined", "repeats"])
def test_a_shape_is_learned_only_where_it_can_pay(tmp_path: Path, shape: str) -> None:
    """Learning decodes a record the records path has checked: not for a layout seen once
    (every result of per-process metrics), nor again for one whose shape was declined
    (a value set without values), but for one that comes again, used from then on."""
    sizes = list(range(80, 140)) if shape == "never-again" else [80] * 60
    base = _layouts(tmp_path / "a", sizes, empty=shape == "declined")
    report = check_archive(base)
    assert not report.diagnostics
    paths = report.paths
    assert paths.answered["check.records"] + paths.answered[PATH] == 60
    if shape == "repeats":
        assert paths.answered[PATH] >= 57 and paths.answered["bulk.decode"] == 1
    else:
        assert paths.answered[PATH] == 0
        assert paths.answered["bulk.decode"] <= (1 if shape == "declined" else 0)
