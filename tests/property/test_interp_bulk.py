"""The replay's pass in windows (records of one layout decoded together by numpy) keeps
what the pass a record at a time keeps, on any generated archive and any window size:
the same series in the same order, times and values bit for bit, type for type, the same
marks, end and singular quirks, or the same error."""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pcpconform.errors import PcpConformError
from pcpconform.extra.strategies import fixtures
from pcpconform.fixtures.generate import generate_archive
from pcpconform.io.archive import Archive
from pcpconform.oracles.interp import observations as observations_module
from pcpconform.oracles.interp.replay import Replay
from tests.interp_replays import OneAtATime

SETTINGS = settings(max_examples=60, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


def _exact(v: Any) -> Any:
    if isinstance(v, float):
        return (type(v).__name__, struct.pack("<d", v), getattr(v, "bits", None))
    return (type(v).__name__, repr(v))


def _kept(cls: type[Replay], base: Path, pmids: list[int]) -> Any:
    try:
        r = cls(Archive(base), pmids)
    except PcpConformError as exc:
        return ("error", type(exc).__name__, str(exc))
    return ([(key, list(s.times), type(s.values).__name__, [_exact(v) for v in s.values])
             for key, s in r.series.items()], r.marks, r.end, r.last, r.first_record,
            r.singular_quirks)


@SETTINGS
@given(data=st.data(), window=st.sampled_from([1, 2, 3, 1024]))
def test_windows_keep_what_one_record_at_a_time_keeps(tmp_path_factory: pytest.TempPathFactory,
                                                      monkeypatch: pytest.MonkeyPatch,
                                                      data: st.DataObject, window: int) -> None:
    fixture = data.draw(fixtures(max_samples=10), label="fixture")
    base = tmp_path_factory.mktemp("bulk") / "a"
    generate_archive(fixture, base)
    pmids = [int(d.pmid) for d in Archive(base).descs()]
    wanted = data.draw(st.sets(st.sampled_from(pmids)), label="wanted") if pmids else set()
    chosen = [p for p in pmids if p in wanted] or pmids
    monkeypatch.setattr(observations_module, "_RUN", window)
    assert _kept(Replay, base, chosen) == _kept(OneAtATime, base, chosen)
