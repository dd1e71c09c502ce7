"""The compiled kernel of the result decoder's column form (pcpconform/io/result_kernel.py):
built where CI builds the package; on PCP's QA archives (v2 and v3, INSITU, strings, 64-bit
blocks, legacy block type 0) the results it decodes to equal the schema's; each kind of
damage gives its record a typed status and no rows, and the records around it still read;
and where the kernel is missing every run is declined and counted."""

from __future__ import annotations

import contextlib
import os
import struct
from pathlib import Path

import pytest

from pcpconform.errors import FormatError
from pcpconform.fastpath import Declined, PathStats
from pcpconform.io import result_kernel
from pcpconform.io.reader import Component, RawRecord
from pcpconform.io.result_kernel import COLUMNS, KernelReason, decode_run_columns, decode_run_schema, result_arrays

QA = Path(os.environ.get("PCPCONFORM_QA_ARCHIVES", "/var/lib/pcp/testsuite/archives"))
#: v3; strings and 64-bit blocks; block type 0; many instances with strings
ARCHIVES = ["omnibus_v3.0", "20101004-trunc.0", "951127.23.01_v2.0", "bozo-disk.0"]


def _records(name: str, count: int = 12) -> tuple[list[RawRecord], int]:
    path = QA / name
    if not path.exists():
        if os.environ.get("CI") == "true":
            pytest.fail(f"{path} is missing (CI installs PCP's QA archives)")
        pytest.skip(f"{path} is not installed")
    with Component(path) as comp:
        return list(comp.records())[:count], comp.version


def test_kernel_is_built_under_ci() -> None:
    if os.environ.get("CI") == "true":
        assert result_kernel.KERNEL_ERROR is None, result_kernel.KERNEL_ERROR


@pytest.mark.parametrize("name", ARCHIVES)
def test_columns_decode_as_the_schema_does(name: str) -> None:
    if result_kernel.KERNEL_ERROR is not None:
        pytest.skip("kernel not built")
    records, version = _records(name)
    status = result_arrays(records, version).status.tolist()
    assert {result_kernel.STATUS[s] for s in status if s} <= {KernelReason.EVENTS}   # omnibus has events
    read = [rec for rec, s in zip(records, status) if not s]
    assert len(read) >= 2
    assert decode_run_columns(read, version, {}) == decode_run_schema(read, version, {})


def _patched(rec: RawRecord, at: int, word: int) -> RawRecord:
    data = bytearray(rec.data)
    struct.pack_into(">I", data, at, word)
    return RawRecord(rec.file, rec.index, rec.offset, bytes(data))


def _dptr_record(records: list[RawRecord]) -> tuple[RawRecord, int, int]:
    """A record with two or more value blocks, its first block's offset and its first DPTR
    pmValue word's offset."""
    for rec in records:
        arrays = result_arrays([rec], 2)
        blocks = (arrays.boff >= 0).nonzero()[0]
        if len(blocks) >= 2:
            first = int(blocks[0])
            vset = int((arrays.vset_val[1:] > first).nonzero()[0][0])
            at = 16 + sum(8 + (4 + 8 * n if n > 0 else 0) for n in arrays.numval[:vset].tolist())
            return rec, int(arrays.boff[first]), at + 16 + 8 * (first - int(arrays.vset_val[vset]))
    raise AssertionError("no record with two value blocks")


def test_damage_gets_its_status_and_no_rows() -> None:
    if result_kernel.KERNEL_ERROR is not None:
        pytest.skip("kernel not built")
    records, version = _records("20101004-trunc.0")
    assert version == 2
    rec, block, word_at = _dptr_record(records)
    word = struct.unpack_from(">I", rec.data, word_at)[0]
    head = struct.unpack_from(">I", rec.data, block)[0]
    damaged = {
        KernelReason.SHORT: RawRecord(rec.file, rec.index, rec.offset, rec.data[:16]),
        KernelReason.NUMPMID: _patched(rec, 12, 0x7FFFFFFF),
        KernelReason.BLOCK_OUTSIDE: _patched(rec, word_at, 0xFFFFFF),
        KernelReason.ORDER: _patched(rec, word_at, word + (head & 0xFFFFFF) // 4 + (head % 4 > 0)),
        KernelReason.BLOCK_VLEN: _patched(rec, block, head & 0xFF000000 | 2),
        KernelReason.EVENTS: _patched(rec, block, 9 << 24 | head & 0xFFFFFF),
        KernelReason.COVERAGE: RawRecord(rec.file, rec.index, rec.offset, rec.data[:-4] + b"\0" * 8),
        # no value sets (numpmid 0), then a word before the trailer
        KernelReason.TAIL: RawRecord(rec.file, rec.index, rec.offset, rec.data[:12] + b"\0" * 8 + rec.data[-4:]),
    }
    clean = records[1]
    for reason, bad in damaged.items():
        arrays = result_arrays([clean, bad, clean], version)
        assert result_kernel.STATUS[arrays.status[1]] is reason, reason
        assert arrays.status[0] == arrays.status[2] == 0
        # the damaged record's rows are dropped: the runs of both clean records are equal
        one = result_arrays([clean], version)
        assert arrays.rec_vset.tolist() == [0, len(one.pmid), len(one.pmid), 2 * len(one.pmid)]
        assert arrays.inst.tolist() == 2 * one.inst.tolist()
        with pytest.raises(Declined) as declined:
            decode_run_columns([clean, bad], version, {})
        assert declined.value.reason is reason
        stats = PathStats()
        with contextlib.suppress(FormatError):    # the reference reports the damage
            COLUMNS(stats, [clean, bad], version, {})
        assert stats.reasons("bulk.columns") == {reason: 1}


def test_missing_kernel_declines_every_run(monkeypatch: pytest.MonkeyPatch) -> None:
    records, version = _records("20101004-trunc.0", 3)
    monkeypatch.setattr(result_kernel, "_kernel", None)
    stats = PathStats()
    assert COLUMNS(stats, records, version, {}) == decode_run_schema(records, version, {})
    assert stats.reasons("bulk.columns") == {KernelReason.NOT_BUILT: 1}


def _odd_blocks(rec: RawRecord, arrays: result_kernel.ResultArrays) -> bool:
    """Whether a block of the (one) record is not as the writer makes it, by its bytes."""
    sizes = {2: 12, 3: 12, 5: 12, 4: 8}         # 64-bit integers and DOUBLE, FLOAT: 4 + payload
    for vtype, vlen, boff in zip(arrays.vtype.tolist(), arrays.vlen.tolist(), arrays.boff.tolist()):
        if boff < 0:
            continue
        if vlen != sizes.get(vtype, vlen) or (vtype == 6 and (vlen == 4 or rec.data[boff + vlen - 1] != 0)):
            return True
        if any(b != ord("~") for b in rec.data[boff + vlen:boff + vlen + (-vlen & 3)]):
            return True
    return False


@pytest.mark.parametrize("name", ARCHIVES)
def test_odd_is_the_writers_blocks(name: str) -> None:
    """Per record read, ``odd`` says whether a block differs from the writer's layout (its
    size, a string's NUL, the "~" padding): on the records as written, and with a padding
    byte, a string's last byte or a block's type changed in each."""
    if result_kernel.KERNEL_ERROR is not None:
        pytest.skip("kernel not built")
    records, version = _records(name, 40)
    seen = {True: 0, False: 0}
    for rec in records:
        arrays = result_arrays([rec], version)
        if arrays.status[0] or not (arrays.boff >= 0).any():
            continue
        variants = [rec]
        for boff, vlen in zip(arrays.boff.tolist(), arrays.vlen.tolist()):
            if boff >= 0:
                data = bytearray(rec.data)
                data[boff + vlen - 1] ^= 0x01                       # a string's NUL, or a payload byte
                variants.append(RawRecord(rec.file, rec.index, rec.offset, bytes(data)))
                if vlen % 4:
                    data = bytearray(rec.data)
                    data[boff + vlen] = 0                           # padding
                    variants.append(RawRecord(rec.file, rec.index, rec.offset, bytes(data)))
                data = bytearray(rec.data)
                data[boff] = 5 if data[boff] != 5 else 4            # DOUBLE (12 bytes) or FLOAT (8)
                variants.append(RawRecord(rec.file, rec.index, rec.offset, bytes(data)))
                break
        for variant in variants:
            got = result_arrays([variant], version)
            if got.status[0]:
                continue
            want = _odd_blocks(variant, got)
            assert bool(got.odd[0]) is want, (name, rec.index)
            seen[want] += 1
    assert seen[True] and seen[False], seen
