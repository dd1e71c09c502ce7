"""Results of any shape checked on the kernel's columns (check/records.py): the reference
path's report on PCP's QA archives whose layouts never repeat, the path taken there, and
planted instance defects found, each record sent to the reference path by its rule."""

from __future__ import annotations

import os
import shutil
import struct
from pathlib import Path

import pytest

from pcpconform.check import values as values_module
from pcpconform.check.engine import COLUMNS, check_archive
from pcpconform.check.records import MIN_BYTES, PATH, RecordReason
from pcpconform.check.values import ValueReason
from pcpconform.io import result_kernel
from pcpconform.io.reader import Component
from pcpconform.io.result_kernel import result_arrays

QA = Path(os.environ.get("PCPCONFORM_QA_ARCHIVES", "/var/lib/pcp/testsuite/archives"))
#: archives whose results take the records path (value sets of many types, instances that change)
ARCHIVES = ["bozo-disk", "20101004-trunc", "coverage", "bug1057", "all-sles9-sp1"]

pytestmark = pytest.mark.skipif(result_kernel.KERNEL_ERROR is not None and os.environ.get("CI") != "true",
                                reason="the result kernel is not built")


def _base(name: str) -> Path:
    base = QA / name
    if not list(QA.glob(name + ".*")):
        if os.environ.get("CI") == "true":
            pytest.fail(f"{base} is missing (CI installs PCP's QA archives)")
        pytest.skip(f"{base} is not installed")
    return base


def test_every_value_rule_has_a_record_form() -> None:
    assert all(type(rule).record is not values_module.ValueRule.record for rule in values_module.VALUE_RULES)


@pytest.mark.parametrize("name", ARCHIVES)
def test_records_path_gives_the_reference_report(name: str) -> None:
    base = _base(name)
    assert COLUMNS.fast(base) == COLUMNS.reference(base)
    assert check_archive(base).paths.answered[PATH] > 0


def test_small_records_take_the_columns_once_numpy_is_paid_for() -> None:
    """20180102 mixes per-process results of 10 KB with results under 1 KB: the small ones
    before the volume's first large one go to the reference path (numpy not yet loaded for
    them), those after it are read by columns, with the reference path's report."""
    base = _base("20180102")
    with Component(QA / "20180102.0") as comp:
        sizes = [len(rec.data) for rec in comp.records()]
    first_large = next(k for k, size in enumerate(sizes) if size >= MIN_BYTES)
    small_before = sum(size < MIN_BYTES for size in sizes[:first_large])
    small_after = sum(size < MIN_BYTES for size in sizes[first_large:])
    assert small_after > 100
    stats = check_archive(base).paths
    assert stats.declined.get((PATH, RecordReason.SMALL), 0) == small_before
    assert stats.answered[PATH] > sum(size >= MIN_BYTES for size in sizes)
    assert COLUMNS.fast(base) == COLUMNS.reference(base)


def _vlists(data: bytes) -> list[tuple[int, int]]:
    """(byte offset of its first pmValue, numval) of each value set of a v2 result."""
    out, at = [], 16
    numpmid = struct.unpack_from(">i", data, 12)[0]
    for _ in range(numpmid):
        numval = struct.unpack_from(">i", data, at + 4)[0]
        out.append((at + 12, numval))
        at += 8 + (4 + 8 * numval if numval > 0 else 0)
    return out


def _planted(tmp: Path, edit: str) -> tuple[Path, int]:
    """bozo-disk with the instances of one value set of record 5 edited: ``unknown``, an
    instance no indom has; ``twice``, its second instance made its first."""
    src = _base("bozo-disk")
    for f in QA.glob("bozo-disk.*"):
        shutil.copy(f, tmp / f.name)
    with Component(tmp / "bozo-disk.0") as comp:
        rec = list(comp.records())[5]
    arrays = result_arrays([rec], 2)
    vlists = _vlists(rec.data)
    for k, (_, numval) in enumerate(vlists):
        insts = arrays.inst[arrays.vset_val[k]:arrays.vset_val[k + 1]].tolist()
        if numval >= 2 and insts[0] != -1:
            break
    else:
        raise AssertionError(f"no value set with two instances in {src}")
    vlist = vlists[k][0]
    data = bytearray((tmp / "bozo-disk.0").read_bytes())
    at = rec.offset + vlist
    if edit == "unknown":
        struct.pack_into(">i", data, at, 0x7FFFFFF0)
    else:
        struct.pack_into(">i", data, at + 8, insts[0])
    (tmp / "bozo-disk.0").write_bytes(bytes(data))
    return tmp / "bozo-disk", rec.index


@pytest.mark.parametrize(("edit", "code"), [("unknown", "value.unknown-inst"), ("twice", "value.duplicate-inst")])
def test_planted_instance_defect_goes_to_the_reference_path(tmp_path: Path, edit: str, code: str) -> None:
    base, index = _planted(tmp_path, edit)
    report = check_archive(base)
    assert [d.record for d in report.diagnostics if d.code == code] == [index]
    assert report.paths.reasons(PATH)[ValueReason.INSTANCES] == 1
    assert COLUMNS.fast(base) == COLUMNS.reference(base)


def _counter_sets(base: Path) -> tuple[list[tuple[int, int]], dict[int, int]]:
    """(record index, value set) of every 32-bit INSITU counter value set
    with values in a record of ``base``'s first volume, and the counters' types."""
    from pcpconform.io.archive import Archive

    archive = Archive(sorted(base.parent.glob(base.name + ".meta*"))[0])
    counters = {int(p): d.type for p, d in archive.metadata.descs.items() if d.sem == 1 and d.type in (0, 1)}
    out = []
    with Component(base.parent / (base.name + ".0")) as comp:
        for rec in comp.records():
            if rec.index == 0 or len(rec.data) < 1024:
                continue
            arrays = result_arrays([rec], 2)
            if arrays.status[0]:
                continue
            for k, (pmid, numval, valfmt) in enumerate(zip(arrays.pmid.tolist(), arrays.numval.tolist(),
                                                           arrays.valfmt.tolist())):
                if pmid in counters and numval > 0 and valfmt == 0:
                    out.append((rec.index, k))
    return out, counters


@pytest.mark.parametrize("later", [1, 3])
def test_a_counter_decrease_after_results_checked_on_columns_is_reported(tmp_path: Path, later: int) -> None:
    """A counter set to zero in a result checked after earlier results of its layout were
    checked on columns (their values kept as columns, check/counters.py): reported on the
    record, by the reference path, as with every result on the reference path."""
    src = _base("bozo-disk")
    for f in QA.glob("bozo-disk.*"):
        shutil.copy(f, tmp_path / f.name)
    base = tmp_path / "bozo-disk"
    sets, _ = _counter_sets(base)
    records = sorted({index for index, _ in sets})
    assert len(records) > later + 2, src
    index = records[later + 1]          # results of its layout checked on columns before it
    k = next(s[1] for s in sets if s[0] == index)
    with Component(base.parent / "bozo-disk.0") as comp:
        rec = next(r for r in comp.records() if r.index == index)
    at = rec.offset + _vlists(rec.data)[k][0] + 4      # the first value's INSITU word
    data = bytearray((tmp_path / "bozo-disk.0").read_bytes())
    assert struct.unpack_from(">I", data, at)[0] > 0
    struct.pack_into(">I", data, at, 0)
    (tmp_path / "bozo-disk.0").write_bytes(bytes(data))
    report = check_archive(base)
    assert [d.record for d in report.diagnostics if d.code == "value.counter-decrease"] == [index]
    assert report.paths.reasons(PATH)[ValueReason.COUNTER] == 1
    assert report.paths.answered[PATH] >= later
    assert COLUMNS.fast(base) == COLUMNS.reference(base)


def _one_layout(base: Path, sets: list[list[tuple[int, int]]], drop_at: int = -1) -> Path:
    """Results of one layout: a U64 counter over the (instance, value) pairs of ``sets[k]``
    (150 each) and a gauge; ``drop_at``: the result before which an indom record drops
    instance 149."""
    from pcpconform.format.pmtypes import PM_INDOM_NULL, PmID, PmInDom, PmSem, PmType, PmUnits, Timestamp
    from pcpconform.io.writer import ArchiveWriter, LabelFields, ValueSetSpec, layout_result

    pmid, gauge = int(PmID("60.0.1")), int(PmID("60.0.2"))
    indom = int(PmInDom("60.1"))
    w = ArchiveWriter(base, 3)
    t0 = Timestamp(1_700_000_000, 0)
    w.start(LabelFields(hostname="same", timezone="UTC", start=t0, pid=1, zoneinfo=":UTC"))
    w.put_desc(pmid, PmType.U64, indom, PmSem.COUNTER, PmUnits(), ["same.counter"])
    w.put_desc(gauge, PmType.U32, PM_INDOM_NULL, PmSem.INSTANT, PmUnits(), ["same.gauge"])
    w.put_index(t0)
    w.put_indom(t0, indom, [(i, f"i{i}") for i in range(151)])
    if drop_at >= 0:
        w.put_indom(Timestamp(t0.sec + drop_at - 1, 500_000_000), indom,
                    [(i, f"i{i}") for i in range(151) if i != 149])
    for k, values in enumerate(sets):
        vsets = [ValueSetSpec(pmid, PmType.U64, values), ValueSetSpec(gauge, PmType.U32, [(-1, k)])]
        w.put_result_bytes(w.encode_result(layout_result(3, Timestamp(t0.sec + k, 0), vsets)))
    w.put_index(Timestamp(t0.sec + len(sets) - 1, 0))
    w.close()
    return base


def _same_instances(base: Path, *, decrease_at: int = -1, drop_at: int = -1) -> Path:
    """30 results over the same 150 instances; ``decrease_at``: the result whose instance 7
    goes to 0; ``drop_at``: the result before which instance 149 leaves its indom."""
    return _one_layout(base, [[(i, 0 if (k == decrease_at and i == 7) else 1000 * k + i) for i in range(150)]
                              for k in range(30)], drop_at)


@pytest.mark.parametrize(("edit", "code", "count"), [("none", None, 0), ("decrease", "value.counter-decrease", 1),
                                                     ("drop", "value.unknown-inst", 12)])
def test_results_repeating_their_instances(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, edit: str,
                                           code: str | None, count: int) -> None:
    """Results of one layout and the same instances, every one on the records path (no
    learned shape): the counter batch keeps the keys of the one before and takes its
    place (``CounterHistory.renew``), the instance rule answers from the layout's last
    clean instances while the same members are in force; a counter decrease, and an
    instance dropped from its indom while results keep it, still reach the reference
    path and its report."""
    from pcpconform.check import columns as columns_module
    from pcpconform.check.counters import CounterHistory

    base = _same_instances(tmp_path / "a", decrease_at=12 if edit == "decrease" else -1,
                           drop_at=18 if edit == "drop" else -1)
    reference = COLUMNS.reference(base)
    renewed: list[int] = []
    renew = CounterHistory.renew
    monkeypatch.setattr(CounterHistory, "renew",
                        lambda self, held, batch: (renewed.append(1), renew(self, held, batch)))
    monkeypatch.setattr(columns_module.ResultColumns, "check", lambda self, rec, info: False)
    report = check_archive(base)
    codes = [d.code for d in report.diagnostics]
    assert codes == ([code] * count if code else [])
    assert report.paths.reasons(PATH).get(ValueReason.COUNTER if edit == "decrease" else ValueReason.INSTANCES,
                                          0) == count
    assert report.paths.answered[PATH] == 30 - count
    assert len(renewed) >= 30 - 2 * count - 2
    fast = report.to_json()
    fast.pop("seconds")
    assert {k: v for k, v in fast.items() if k != "paths"} == {k: v for k, v in reference.items() if k != "paths"}


_A, _B = list(range(150)), [*range(149), 150]


@pytest.mark.parametrize(("order", "last", "code"), [
    ("ABAB", (150, 1500), None),                        # 150 is not in the A before: nothing to compare
    ("ABAB", (5, 5), "value.counter-decrease"),         # 5 below the A before's
    ("ABAA", (149, 5), "value.counter-decrease"),       # 149 below the A before's
    ("ABAB", None, None), ("ABBA", None, None), ("AABBAA", None, None)])
def test_results_whose_instances_change_and_come_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, order: str,
                                                       last: tuple[int, int] | None, code: str | None) -> None:
    """A layout's instances changing and coming back (A, B, A...): each result's counters
    are read with its own instances, whichever result of the layout came before, so the
    report is the reference path's."""
    from pcpconform.check import columns as columns_module

    sets = [[(i, 1000 * k + i) for i in (_A if which == "A" else _B)] for k, which in enumerate(order)]
    if last is not None:
        sets[-1] = [(i, last[1] if i == last[0] else v) for i, v in sets[-1]]
    base = _one_layout(tmp_path / "a", sets)
    reference = COLUMNS.reference(base)
    monkeypatch.setattr(columns_module.ResultColumns, "check", lambda self, rec, info: False)
    report = check_archive(base)
    assert [d.code for d in report.diagnostics] == ([code] if code else [])
    assert report.paths.answered[PATH] == len(order) - (1 if code else 0)
    fast = report.to_json()
    fast.pop("seconds")
    assert {k: v for k, v in fast.items() if k != "paths"} == {k: v for k, v in reference.items() if k != "paths"}
