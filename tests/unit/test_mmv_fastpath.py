"""The MMV column paths (the reader's and the validator's) are taken on a file shaped like
benchmarks/bench_mmv.py's (every type, large and small indoms, long names, metric by metric
or not), and a file they flag goes to the per-entry path with its reason counted."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest

from pcpconform.check.mmv import check_mmv_file
from pcpconform.check.mmv.columns import FALLBACKS as CHECK_FALLBACKS
from pcpconform.check.mmv.columns import CheckFallback
from pcpconform.errors import FormatError
from pcpconform.mmv import Indom, Instance, Metric, MmvFile, Value, build_mmv, parse_mmv
from pcpconform.mmv import model as mm
from pcpconform.mmv.columns import FALLBACKS, Fallback, ValueRun, entry_dtype
from pcpconform.mmv.schema import HEADER_SIZE, TOC_SIZE, TOC_VALUES, VALUE_SIZE, mmv_structs

TYPES = (mm.TYPE_I32, mm.TYPE_U32, mm.TYPE_I64, mm.TYPE_U64, mm.TYPE_FLOAT, mm.TYPE_DOUBLE,
         mm.TYPE_STRING, mm.TYPE_ELAPSED, mm.TYPE_NOSUPPORT)


def bench_shaped(version: int = 2) -> MmvFile:
    """bench_mmv's content, smaller: indoms of 400, 100 and 10, singular metrics, every type,
    STRING values, help texts, names long enough for version 2."""
    indoms = tuple(Indom(serial, tuple(Instance(k, f"instance-{serial}-{k:06d}") for k in range(n)),
                         f"indom {serial}", "instances of an indom")
                   for serial, n in ((11, 400), (12, 100), (13, 10)))
    metrics = []
    for item in range(1, 120):
        indom = (0, -1, 11, 12, 13)[item % 5]
        mtype = TYPES[item % len(TYPES)]
        owners: list[int | None] = [None] if mm.is_singular(indom) else \
            [i.internal for i in indoms[indom - 11].instances]
        values = []
        for inst in owners:
            if mtype == mm.TYPE_STRING:
                text = f"value {item}/{inst} " + "s" * (item % 50)
                values.append(Value(inst, struct.pack("<q", len(text)), 0, text))
            elif mtype == mm.TYPE_NOSUPPORT:
                values.append(Value(inst))
            elif mtype in (mm.TYPE_FLOAT, mm.TYPE_DOUBLE):
                values.append(Value.of(mtype, item / 7, inst))
            else:
                values.append(Value.of(mtype, item * 1000 + (inst or 0), inst, -5 * item))
        long_name = "_long" * 15 if version > 1 and item % 3 == 0 else ""
        metrics.append(Metric(f"bench.group{item % 16}.metric{item:04d}{long_name}", item, mtype,
                              mm.SEM_INSTANT, 0, indom, f"metric {item}",
                              None if item % 2 else "long help", tuple(values)))
    return MmvFile(version, 1 << 32, 1 << 32, 0, 0, 77, indoms, tuple(metrics))


@pytest.mark.parametrize("version", [1, 2, 3])
def test_column_path_taken_on_the_benchmark_shape(version: int) -> None:
    content = bench_shaped(version)
    data = build_mmv(content)
    FALLBACKS.clear()
    mmv = parse_mmv(data, "bench")
    assert not FALLBACKS, f"the column path fell back: {dict(FALLBACKS)}"
    with_values = [m for m in mmv.metrics if m.value_source is not None]
    assert len(with_values) == len(content.metrics)
    assert all(isinstance(m.value_source, ValueRun) for m in with_values)
    assert mmv == content                                  # makes every value
    assert all(m.value_source is None for m in mmv.metrics)
    assert mmv == parse_mmv(data, "bench", columns=False)


def test_values_out_of_metric_order_stay_on_the_column_path() -> None:
    data = bytearray(build_mmv(bench_shaped()))
    count, offset = _section(bytes(data), TOC_VALUES)
    rows = [data[offset + VALUE_SIZE * k:offset + VALUE_SIZE * (k + 1)] for k in range(count)]
    data[offset:offset + VALUE_SIZE * count] = b"".join(reversed(rows))
    FALLBACKS.clear()
    fast = parse_mmv(bytes(data), "f")
    assert not FALLBACKS
    assert fast == parse_mmv(bytes(data), "f", columns=False)


def test_a_flagged_file_is_read_entry_by_entry_and_counted() -> None:
    data = bytearray(build_mmv(bench_shaped()))
    count, offset = _section(bytes(data), TOC_VALUES)
    at = offset + VALUE_SIZE * (count // 2) + 16          # a metric back-pointer
    data[at:at + 8] = (7).to_bytes(8, "little")
    FALLBACKS.clear()
    with pytest.raises(FormatError) as fast:
        parse_mmv(bytes(data), "f")
    assert FALLBACKS == {Fallback.VALUE: 1}
    with pytest.raises(FormatError) as slow:
        parse_mmv(bytes(data), "f", columns=False)
    assert str(fast.value) == str(slow.value) and fast.value.location == slow.value.location
    assert fast.value.location.field == f"values[{count // 2}].metric"


@pytest.mark.parametrize("version", [1, 2, 3])
def test_dtypes_follow_the_schemas(version: int) -> None:
    s = mmv_structs(version)
    for schema in (s.header, s.toc, s.indom, s.instance, s.metric, s.value, s.string, s.label):
        if schema is None:
            continue
        dtype = entry_dtype(schema)
        assert dtype.itemsize == schema.sizeof()
        assert list(dtype.names or ()) == [sc.name for sc in schema.subcons]
        raw = bytes(range(256)) * 2
        parsed = schema.parse(raw[:schema.sizeof()])
        row = np.frombuffer(raw, dtype, 1)[0]
        for name in dtype.names or ():
            got = row[name]
            want = parsed[name]
            assert (bytes(got) if isinstance(want, bytes) else int(got)) == want, name


def _section(data: bytes, kind: int) -> tuple[int, int]:
    tocs = struct.unpack_from("<i", data, 24)[0]
    for t in range(tocs):
        k, count, offset = struct.unpack_from("<iiQ", data, HEADER_SIZE + TOC_SIZE * t)
        if k == kind:
            return count, offset
    raise AssertionError(f"no section {kind}")


@pytest.mark.parametrize("version", [1, 2, 3])
def test_check_column_pass_taken_on_the_benchmark_shape(version: int, tmp_path: Path) -> None:
    path = tmp_path / "bench"
    path.write_bytes(build_mmv(bench_shaped(version)))
    CHECK_FALLBACKS.clear()
    fast = check_mmv_file(path)
    assert not CHECK_FALLBACKS, f"the column pass fell back: {dict(CHECK_FALLBACKS)}"
    assert fast.diagnostics == check_mmv_file(path, columns=False).diagnostics
    assert fast.errors == 0 and fast.diagnostics          # ELAPSED metrics of instant semantics


def test_a_flagged_value_entry_is_checked_alone_and_counted(tmp_path: Path) -> None:
    data = bytearray(build_mmv(bench_shaped()))
    count, offset = _section(bytes(data), TOC_VALUES)
    at = offset + VALUE_SIZE * (count // 2) + 16
    data[at:at + 8] = (7).to_bytes(8, "little")
    path = tmp_path / "bench"
    path.write_bytes(bytes(data))
    CHECK_FALLBACKS.clear()
    fast = check_mmv_file(path)
    assert CHECK_FALLBACKS == {CheckFallback.VALUE_ENTRIES: 1}
    assert fast.diagnostics == check_mmv_file(path, columns=False).diagnostics
    assert [d.field for d in fast.diagnostics if d.code == "mmv.value-metric"] == \
        [f"values[{count // 2}].metric"]
