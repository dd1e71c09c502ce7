"""The compiled kernel of the MMV dump's value rows (pcpconform/dump/mmv_kernel.py): it is
built where CI builds the package, it writes every edge value as its reference does, and
where it is missing every run is declined and counted."""

from __future__ import annotations

import io
import os
import struct
import weakref
from typing import Any

import numpy as np
import pytest

from pcpconform.dump import mmv_jsonl, mmv_kernel
from pcpconform.dump.mmv import dump_mmv_bytes
from pcpconform.dump.mmv_blocks import Block, reference_interleave
from pcpconform.dump.mmv_jsonl import iter_mmv_lines
from pcpconform.dump.mmv_kernel import same_lines
from pcpconform.fastpath import PathStats
from pcpconform.mmv import Indom, Instance, Metric, MmvFile, Value, build_mmv, columns
from pcpconform.mmv import model as mm

F32_EDGES = ["0000c07f", "0000c0ff", "0100807f", "0000807f", "000080ff", "00000080", "00000000",
             "ffffffff", "0000003c", "caf24971", "cdcccc3d", "0000803f", "01000000"]
F64_EDGES = ["000000000000f87f", "000000000000f8ff", "010000000000f07f", "000000000000f07f",
             "000000000000f0ff", "0000000000000080", "ffffffffffffffff", "9c7500883ce4377e",
             "ffffffffffffef7f", "0100000000000000", "000000000000803f", "0000000000805040"]
INT_EDGES = ["ffffffffffffffff", "0000000000000080", "ffffffffffffff7f", "ffffffff00000000",
             "00000080ffffffff", "0000000000000000", "7b00000000000000"]
TEXTS = [b'"', b"\\", b'a"b\\c', b"\x01\x1f\x7f\x80\xff", b"", "λ \"q\" \\x41".encode(), b"x" * 255,
         b"caf\xc3\xa9\t\n"]


def edge_file(version: int, flags: int) -> bytes:
    """Every type's edge values, over a singular metric and one with an indom whose
    instance names need escapes."""
    names = ["plain", 'quo"te', "back\\slash", "\x7fdel", "x" * (63 if version == 1 else 200)]
    insts = tuple(Instance(i, n) for i, n in enumerate(names))
    metrics = []
    cases: list[tuple[int, list[bytes]]] = [
        (mm.TYPE_FLOAT, [bytes.fromhex(h).ljust(8, b"\0") for h in F32_EDGES]),
        (mm.TYPE_DOUBLE, [bytes.fromhex(h) for h in F64_EDGES]),
        *((t, [bytes.fromhex(h) for h in INT_EDGES]) for t in (mm.TYPE_I32, mm.TYPE_U32, mm.TYPE_I64, mm.TYPE_U64,
                                                              mm.TYPE_ELAPSED)),
        (mm.TYPE_NOSUPPORT, [bytes(8)])]
    item = 0
    for mtype, atoms in cases:
        for indom, owners in ((0, [None]), (7, [i.internal for i in insts])):
            for atom in atoms:
                item += 1
                extra = -5 if mtype == mm.TYPE_ELAPSED else 0
                metrics.append(Metric(f"m{item}", item, mtype, indom=indom,
                                      values=tuple(Value(o, atom, extra) for o in owners)))
    for text in TEXTS:
        item += 1
        metrics.append(Metric(f"s{item}", item, mm.TYPE_STRING, indom=7, values=tuple(
            Value(i.internal, bytes(8), 0, text.decode("utf-8", "surrogateescape")) for i in insts)))
    return build_mmv(MmvFile(version, 1, 1, flags, 0, 3, (Indom(7, insts),), tuple(metrics)))


def dumped(data: bytes, fmt: str, kernel: bool) -> tuple[str, PathStats]:
    saved = mmv_kernel._kernel
    if not kernel:
        mmv_kernel._kernel = None
    try:
        out, stats = io.StringIO(), PathStats()
        dump_mmv_bytes(data, "edges", out, fmt, stats)
    finally:
        mmv_kernel._kernel = saved
    return out.getvalue(), stats


@pytest.mark.parametrize("module", [mmv_kernel, columns], ids=["dump._mmvrows", "mmv._mmvcols"])
def test_the_kernel_is_built_where_ci_builds_the_package(module: Any) -> None:
    """Both MMV kernels: the dump's, and the reader's values' (pcpconform/mmv/columns.py)."""
    if os.environ.get("CI") or module._kernel is not None:
        assert module._kernel is not None, module.KERNEL_ERROR
    else:
        pytest.skip(f"the kernel is not built here: {module.KERNEL_ERROR}")


@pytest.mark.parametrize("version", [1, 2, 3])
@pytest.mark.parametrize("flags", [0, mm.FLAG_SENTINEL])
@pytest.mark.parametrize("fmt", ["jsonl", "text"])
def test_edge_values_as_the_reference_writes_them(version: int, flags: int, fmt: str) -> None:
    if mmv_kernel._kernel is None:
        pytest.skip("the kernel is not built here")
    data = edge_file(version, flags)
    fast, stats = dumped(data, fmt, True)
    reference, ref_stats = dumped(data, fmt, False)
    assert fast == reference
    assert all(stats.answered[path] > 0 for path in ("dump.mmv-values", "dump.mmv-strings", "dump.mmv-slot-ends",
                                                     "dump.mmv-string-clean", "dump.mmv-interleave"))
    assert not stats.declined
    assert ref_stats.reasons("dump.mmv-values") == {mmv_kernel.KernelReason.NOT_BUILT:
                                                    ref_stats.declined[("dump.mmv-values",
                                                                        mmv_kernel.KernelReason.NOT_BUILT)]}
    if fmt == "text":
        assert " = inf" in fast and " = -0.000000" in fast
        assert ("(no value: sentinel)" in fast) if flags else (" = -nan" in fast)


def test_without_the_kernel_every_run_is_declined_and_counted() -> None:
    data = edge_file(2, 0)
    _, stats = dumped(data, "jsonl", False)
    runs = sum(1 for obj in iter_mmv_lines(data, "edges")[0] if isinstance(obj, Block) and obj.kind == "value")
    assert not stats.answered["dump.mmv-values"]
    assert stats.declined[("dump.mmv-values", mmv_kernel.KernelReason.NOT_BUILT)] >= runs > 0
    for path in ("dump.mmv-strings", "dump.mmv-slot-ends", "dump.mmv-string-clean", "dump.mmv-interleave"):
        assert not stats.answered[path]
        assert set(stats.reasons(path)) == {mmv_kernel.KernelReason.NOT_BUILT}, path


def test_the_kernel_refuses_rows_outside_its_bytes() -> None:
    if mmv_kernel._kernel is None:
        pytest.skip("the kernel is not built here")
    blocks = [obj.source for obj in iter_mmv_lines(edge_file(2, 0), "edges")[0]
              if isinstance(obj, Block) and obj.kind == "value"]
    values, lo, hi = blocks[0]
    with pytest.raises(ValueError):
        mmv_kernel._kernel.value_lines(False, values.data[:values.base + 40], values.base, lo, hi, False,
                                       values.positions, values.metric_columns, *values.instance_columns)
    assert struct.calcsize("n") == values.positions.itemsize
    data, base, lo, hi = next(obj.source for obj in iter_mmv_lines(edge_file(2, 0), "edges")[0]
                              if isinstance(obj, Block) and obj.kind == "string")
    with pytest.raises(ValueError):
        mmv_kernel._kernel.string_lines(False, data[:base + 256 * hi - 1], base, lo, hi)
    unterminated = data[:base] + b"x" * 256 + data[base + 256:]
    with pytest.raises(ValueError):
        mmv_kernel._kernel.string_lines(True, unterminated, base, 0, 1)


def test_interleave_across_chunks_as_its_reference() -> None:
    """Lines that fill several 32 KB chunks (empty lines, long ones, one longer than a
    chunk) are the reference's, as the writer joins them."""
    if mmv_kernel._kernel is None:
        pytest.skip("the kernel is not built here")
    cases = [
        (40_000, ("\n",)),
        (3_000, ("[", ("i", np.arange(3_000, dtype=np.int64) * -7919), "] ", ["x" * (k % 97) for k in range(3_000)],
                 ("j", ['"q\\' * (k % 13) if k % 5 else None for k in range(3_000)]), "\n")),
        (3, (["y" * 70_000, "", "z"], "\n")),
    ]
    for rows, pieces in cases:
        fast = mmv_kernel.kernel_interleave(rows, pieces)
        assert len(fast) > 1 or rows == 3
        assert same_lines(fast, reference_interleave(rows, pieces)), rows


def test_interleave_refuses_columns_of_another_length() -> None:
    if mmv_kernel._kernel is None:
        pytest.skip("the kernel is not built here")
    with pytest.raises(ValueError):            # 8 * rows would overflow to 0
        mmv_kernel._kernel.interleave(2**61, (("i", b""), "\n"))
    with pytest.raises(ValueError):
        mmv_kernel._kernel.interleave(2, (("u", np.zeros(3, np.uint64)), "\n"))


def test_a_dump_frees_its_walk_without_the_collector() -> None:
    """The collector is off while a file is dumped: nothing the walk makes may hold it in
    a cycle (its tables keep the file's bytes)."""
    walks: list[weakref.ref[Any]] = []
    made = mmv_jsonl._Walk.__init__

    def spy(self: Any, *args: Any, **kwargs: Any) -> None:
        made(self, *args, **kwargs)
        walks.append(weakref.ref(self))

    data = edge_file(2, 0)
    try:
        mmv_jsonl._Walk.__init__ = spy  # type: ignore[method-assign]
        for fmt in ("jsonl", "text"):
            dump_mmv_bytes(data, "edges", io.StringIO(), fmt, PathStats())
            assert walks and walks[-1]() is None, fmt
    finally:
        mmv_jsonl._Walk.__init__ = made  # type: ignore[method-assign]
