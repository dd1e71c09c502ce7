"""interp keeps the C heap between runs of records (cli/heap.py): on glibc both settings
take, and a replay that frees and makes large arrays run after run touches fewer new pages."""

from __future__ import annotations

import platform
import subprocess
import sys

import pytest

from pcpconform.cli.heap import pad_heap

GLIBC = sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc"

# a run of records as the replay makes them: a joined buffer and arrays of it, freed each time
CHURN = """
import resource, sys
from pcpconform.cli.heap import pad_heap
if sys.argv[1] == "padded":
    assert pad_heap()
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for k in range(60):
    chunks = [bytes([k % 256]) * 1500 for _ in range(2000)]
    buf = b"".join(chunks)
    copy = bytearray(buf)
    del chunks, buf, copy
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


@pytest.mark.skipif(not GLIBC, reason="mallopt is glibc's")
def test_pad_heap_takes_on_glibc() -> None:
    assert pad_heap()


@pytest.mark.skipif(not GLIBC, reason="mallopt is glibc's")
def test_padded_heap_reuses_pages() -> None:
    def faults(how: str) -> int:
        out = subprocess.run([sys.executable, "-c", CHURN, how], capture_output=True, text=True, check=True)
        return int(out.stdout)
    plain, padded = faults("plain"), faults("padded")
    assert padded * 4 < plain, (plain, padded)


@pytest.mark.parametrize("fmt", ["text", "jsonl"])
def test_dump_of_an_archive_pads_the_heap(monkeypatch: pytest.MonkeyPatch, fmt: str) -> None:
    """dump streams an archive in chunks as interp's replay does: it sets the heap up too."""
    from pathlib import Path

    from pcpconform.cli import heap
    from tests.cli import run_cli

    calls: list[int] = []
    monkeypatch.setattr(heap, "pad_heap", lambda: bool(calls.append(1)) or True)
    case = Path(__file__).resolve().parents[2] / "corpus" / "cases" / "valid" / "interp-seed-v3"
    base = next(case.glob("*.meta")).with_suffix("")
    status, out, _ = run_cli("dump", "--format", fmt, str(base))
    assert status == 0 and out and calls == [1]
