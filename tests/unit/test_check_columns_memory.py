"""The validator keeps nothing per result: the index's questions about the data volumes are
answered as the records stream past (state.VolumeInfo), and memory stays flat."""

from __future__ import annotations

import bisect
import gc
import itertools
import random
import tracemalloc
from pathlib import Path

import pytest

from pcpconform.check.engine import check_archive
from pcpconform.check.state import VolumeInfo
from pcpconform.fastpath import PathStats
from pcpconform.format.pmtypes import PM_INDOM_NULL, PmSem, PmType, PmUnits, Timestamp
from pcpconform.io import frames
from pcpconform.io.decoded import DecodedResult, DecodedValueSet
from pcpconform.io.encode import encode_result
from pcpconform.io.writer import ArchiveWriter, LabelFields

PMID = (60 << 22) | 1


def _by_lists(offsets: list[int], stamps: list[int], off: int) -> tuple[bool, int, int | None]:
    """What the index pass computed from lists of every record: (a record starts at off,
    records before it, the latest of the first min(k, decoded) stamps)."""
    k = bisect.bisect_left(offsets, off)
    starts = k < len(offsets) and offsets[k] == off
    latest = max(stamps[:min(k, len(stamps))]) if k and stamps else None
    return starts, k, latest


@pytest.mark.parametrize("seed", range(40))
def test_volume_info_answers_as_the_lists_did(seed: int) -> None:
    rng = random.Random(seed)
    n = rng.randrange(0, 30)
    offsets = list(itertools.accumulate(rng.randrange(8, 40, 4) for _ in range(n)))
    decoded = [rng.random() > 0.2 for _ in range(n)]
    times = [rng.randrange(0, 50) for _ in range(n)]
    top = offsets[-1] + 50 if offsets else 50
    probes = [rng.choice(offsets) if offsets and rng.random() < 0.5 else rng.randrange(0, top)
              for _ in range(rng.randrange(0, 12))]
    info = VolumeInfo(Path("v.0"), probes)
    for off, ok, t in zip(offsets, decoded, times):
        info.record(off)
        if ok:
            info.stamp(t)
    info.finish()
    stamps = [t for ok, t in zip(decoded, times) if ok]
    assert info.records == n
    for off in probes:
        starts, k = info.starts[off]
        latest = info.firsts.get(k) if k else None
        assert (starts, k, latest) == _by_lists(offsets, stamps, off), (off, offsets, stamps)


def _tiny(base: Path, results: int) -> Path:
    """``results`` one-value results of a singular U32 counter, 1 s apart."""
    w = ArchiveWriter(base, 3)
    t0 = Timestamp(1_700_000_000, 0)
    w.start(LabelFields(hostname="tiny", timezone="UTC", start=t0, pid=1, zoneinfo=":UTC"))
    w.put_desc(PMID, PmType.U32, PM_INDOM_NULL, PmSem.COUNTER, PmUnits(), ["tiny.counter"])
    w.put_index(t0)
    types: dict[int, int] = {PMID: PmType.U32}
    records = []
    for k in range(results):
        vs = DecodedValueSet(PMID, 1, 0, None, ((-1,), (k,)))
        record = encode_result(3, DecodedResult(Timestamp(t0.sec + k, 0), [vs], None, True), types,
                               PathStats())
        assert record is not None
        records.append(record)
    w.put_result_bytes(b"".join(records))
    w.put_index(Timestamp(t0.sec + results - 1, 0))
    w.close()
    return base


def _peak(base: Path) -> int:
    gc.collect()
    tracemalloc.start()
    try:
        report = check_archive(base)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert report.diagnostics == [] and report.paths.answered["check.columns"] > 0
    return peak


def test_memory_does_not_grow_with_results(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(frames, "_CHUNK", 4096)    # the read buffer is bounded, not per result
    small = _tiny(tmp_path / "small", 2_000)
    large = _tiny(tmp_path / "large", 20_000)
    _peak(small)                     # first use: imports and caches
    growth = _peak(large) - _peak(small)
    # a list entry per result would be ~1.5 MB here (18,000 more results)
    assert growth < 200_000, growth
