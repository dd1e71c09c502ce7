"""The MMV dump's column path (``pcpconform.dump.mmv_blocks``) writes what the per-entry walk
writes, line for line, in both formats, for random files and for random damage to them; the
rows it leaves to the walk are counted, never silent."""

from __future__ import annotations

import io

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pcpconform.dump import mmv_blocks
from pcpconform.dump.mmv_jsonl import iter_mmv_lines, iter_mmv_records, write_mmv_jsonl
from pcpconform.dump.mmv_text import write_mmv_text
from pcpconform.extra.mmv_strategies import mmv_files

SETTINGS = settings(max_examples=80, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow])


def written(data: bytes, fmt: str, blocks: bool) -> str:
    lines, _ = iter_mmv_lines(data, "drawn", blocks=blocks)
    out = io.StringIO()
    (write_mmv_jsonl if fmt == "jsonl" else write_mmv_text)(lines, out)
    return out.getvalue()


def same(data: bytes) -> None:
    for fmt in ("jsonl", "text"):
        assert written(data, fmt, True) == written(data, fmt, False), fmt
    records, _ = iter_mmv_records(data, "drawn")
    reference = [line for line in written(data, "jsonl", False).splitlines()[1:]]
    assert len(list(records)) == len(reference)


def test_random_files() -> None:
    @SETTINGS
    @given(mmv_files())
    def check(data: bytes) -> None:
        same(data)

    check()


def test_random_damage() -> None:
    @SETTINGS
    @given(mmv_files(), st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255)), max_size=8),
           st.integers(0, 10**6))
    def check(data: bytes, edits: list[tuple[int, int]], cut: int) -> None:
        raw = bytearray(data)
        for at, byte in edits:
            raw[40 + at % max(1, len(raw) - 40)] = byte
        if cut % 3 == 0:
            raw = raw[:40 + cut % max(1, len(raw) - 40)]
        same(bytes(raw))

    check()


def test_rows_left_to_the_walk_are_counted() -> None:
    data = bytearray(mmv_blocks_file())
    before = sum(mmv_blocks.ROW_FALLBACKS.values())
    written(bytes(data), "jsonl", True)
    assert sum(mmv_blocks.ROW_FALLBACKS.values()) == before
    # a value whose metric back-pointer names no metric entry: that row goes to the walk
    records, _ = iter_mmv_records(bytes(data), "drawn")
    at = next(r["offset"] for r in records if r["kind"] == "value" and r["atom"] == "2a00000000000000")
    data[at + 16:at + 24] = (12345).to_bytes(8, "little")
    out = written(bytes(data), "jsonl", True)
    assert sum(mmv_blocks.ROW_FALLBACKS.values()) == before + 1
    assert '"kind":"problem"' in out and out == written(bytes(data), "jsonl", False)


def mmv_blocks_file() -> bytes:
    from pcpconform.mmv import Indom, Instance, Metric, MmvFile, Value, build_mmv
    from pcpconform.mmv import model as mm

    indom = Indom(1, tuple(Instance(i, f"i{i}") for i in range(3)))
    metrics = (Metric("a", 1, mm.TYPE_U64, mm.SEM_COUNTER, 0, 1, None, None,
                      tuple(Value.of(mm.TYPE_U64, 40 + i, i) for i in range(3))),
               Metric("b", 2, mm.TYPE_STRING, mm.SEM_INSTANT, 0, 0, None, None,
                      (Value(None, bytes(8), 0, "x"),)))
    return build_mmv(MmvFile(1, 1 << 32, 1 << 32, 0, 0, 3, (indom,), metrics))
