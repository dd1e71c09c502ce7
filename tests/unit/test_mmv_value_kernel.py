"""The compiled kernel of the MMV reader's values (pair ``mmv.value-run``,
pcpconform/mmv/columns.py): it makes every edge value as the reference does (in the file's
order or not, STRING texts that are not UTF-8), it refuses rows outside its buffers, and
where it is missing every run is declined and counted. That it is built where CI builds
the package is tested with the dump's kernel, in test_mmv_kernel.py."""

from __future__ import annotations

import random

import numpy as np
import pytest

from pcpconform.fastpath import PathStats
from pcpconform.mmv import columns
from pcpconform.mmv.columns import VALUE_RUN, KernelReason, ValueColumns, ValueRun, reference_value_run
from pcpconform.mmv.model import Metric, Value
from pcpconform.mmv.reader import parse_mmv
from pcpconform.mmv.schema import VALUE_SIZE
from tests.unit.test_mmv_kernel import edge_file


def _values_section(data: bytes) -> tuple[int, int]:
    """The offset and count of the values section (TOC type 4) of an MMV file."""
    tocs = int.from_bytes(data[24:28], "little")
    for t in range(tocs):
        at = 40 + 16 * t
        if int.from_bytes(data[at:at + 4], "little") == 4:
            return int.from_bytes(data[at + 8:at + 16], "little"), int.from_bytes(data[at + 4:at + 8], "little")
    raise AssertionError("no values section")


def _shuffled(data: bytes, seed: int) -> bytes:
    """The file with its value entries in another order (their pointers stay valid)."""
    base, count = _values_section(data)
    rows = [data[base + VALUE_SIZE * k:base + VALUE_SIZE * (k + 1)] for k in range(count)]
    random.Random(seed).shuffle(rows)
    return data[:base] + b"".join(rows) + data[base + VALUE_SIZE * count:]


def _runs(data: bytes, stats: PathStats) -> list[tuple[Metric, ValueRun]]:
    parsed = parse_mmv(data, stats=stats)
    runs = [(m, m.value_source) for m in parsed.metrics]
    return [(m, run) for m, run in runs if isinstance(run, ValueRun)]


@pytest.mark.parametrize("version", [1, 2, 3])
@pytest.mark.parametrize("order", ["as written", "shuffled"])
def test_edge_values_as_the_reference_makes_them(version: int, order: str) -> None:
    if columns._kernel is None:
        pytest.skip("the kernel is not built here")
    data = edge_file(version, 0)
    if order == "shuffled":
        data = _shuffled(data, version)
    stats = PathStats()
    runs = _runs(data, stats)
    assert runs and any(run.string for _, run in runs) and any(run.singular for _, run in runs)
    assert (order == "shuffled") == any(not isinstance(run.rows, slice) for _, run in runs)
    for metric, run in runs:
        reference = reference_value_run(run)
        made = metric.values                    # through the pair, counted
        assert VALUE_RUN.same(reference, made), metric.name
    assert stats.answered["mmv.value-run"] == len(runs)
    assert not stats.declined
    texts = {v.string for _, run in runs if run.string for v in reference_value_run(run)}
    assert "\x01\x1f\x7f\udc80\udcff" in texts and "x" * 255 in texts and "λ \"q\" \\x41" in texts


def test_without_the_kernel_every_run_is_declined_and_counted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(columns, "_kernel", None)
    stats = PathStats()
    runs = _runs(edge_file(2, 0), stats)
    for metric, run in runs:
        assert VALUE_RUN.same(metric.values, reference_value_run(run))
    assert not stats.answered["mmv.value-run"]
    assert stats.reasons("mmv.value-run") == {KernelReason.NOT_BUILT: len(runs)}


def test_the_kernel_refuses_rows_outside_its_buffers() -> None:
    if columns._kernel is None:
        pytest.skip("the kernel is not built here")
    _, run = _runs(edge_file(2, 0), PathStats())[-1]
    c = run.columns
    assert run.string and not run.singular
    cases = {
        "a row past the end": ValueColumns(c.data[:c.base + 20], c.base, c.atoms, c.extras, c.internals,
                                           c.string_at, c.string_end),
        "too few instances": ValueColumns(c.data, c.base, c.atoms, c.extras, c.internals[:1], c.string_at,
                                          c.string_end),
        "a slot past the end": ValueColumns(c.data, c.base, c.atoms, c.extras, c.internals, c.string_at,
                                            c.string_end + len(c.data)),
    }
    # arguments no reader passes, whose products would overflow: refused, no wild read
    assert columns._kernel.value_run(Value, b"\0" * 64, 2**62, 2**62, 1, 2, b"", b"", b"", b"", True, False) is None
    far = np.array([2**59], np.int64)
    assert columns._kernel.value_run(Value, b"\0" * 64, 0, 32, 0, 0, far, b"", b"", b"", True, False) is None
    for why, cut in cases.items():
        stats = PathStats()
        cut.stats = stats
        with pytest.raises(columns.Declined):
            columns.kernel_value_run(ValueRun(cut, run.rows, run.singular, run.string))
        VALUE_RUN(stats, ValueRun(cut, run.rows, run.singular, run.string))    # the reference's answer
        assert stats.reasons("mmv.value-run") == {KernelReason.OUTSIDE: 1}, why
