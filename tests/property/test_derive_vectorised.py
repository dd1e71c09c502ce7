"""The vectorised evaluation of derived metrics (pcpconform/oracles/derive/vectorised.py)
gives what the per-fetch evaluator gives, bit for bit, on random archives, expressions,
profiles and schedules, with and without emulated deviations; and wherever its plan
accepts a metric, it is the path every fetch of that metric takes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, assume, event, given, settings
from hypothesis import strategies as st

from pcpconform.errors import DeriveSemanticError, DeriveSyntaxError, UnitsError
from pcpconform.extra.strategies import fixtures
from pcpconform.fixtures.generate import generate_archive
from pcpconform.io.archive import Archive
from pcpconform.oracles.derive.arithmetic import pairs_key
from pcpconform.oracles.derive.bind import Bound, bind
from pcpconform.oracles.derive.evaluate import EMULATABLE, DerivedSample, Evaluator
from pcpconform.oracles.derive.parser import parse
from pcpconform.oracles.derive.profiles import PROFILES, Profile
from pcpconform.oracles.derive.vectorised import plan
from tests.derive_random import expressions, pool_of, schedule_of
from tests.fast_path_inputs import arithmetic


def _bound(texts: list[str], archive: Archive, profile: Profile) -> list[Bound]:
    out = []
    for k, text in enumerate(texts):
        try:
            out.append(bind(parse(text, profile), f"d.m{k}", archive, profile))
        except (DeriveSemanticError, DeriveSyntaxError, UnitsError):
            continue
    return out


def _key(ds: DerivedSample) -> Any:
    return (ds.time, ds.eol, {n: pairs_key(v) for n, v in ds.values.items()}, ds.errors,
            ds.deviations, ds.unknown)


@settings(max_examples=120, deadline=None, derandomize=True, database=None,
          phases=[Phase.explicit, Phase.generate],      # shrinking can take minutes
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                 HealthCheck.filter_too_much, HealthCheck.data_too_large])
@given(data=st.data())
def test_vectorised_equals_per_fetch(tmp_path_factory: pytest.TempPathFactory,
                                     data: st.DataObject) -> None:
    fixture = data.draw(fixtures(max_metrics=5, max_samples=7), label="fixture")
    base: Path = tmp_path_factory.mktemp("derive-vec") / "a"
    generate_archive(fixture, base)
    archive = Archive(base)
    pool = pool_of(archive)
    assume(pool.numeric)
    profile = PROFILES[data.draw(st.sampled_from(sorted(PROFILES)), label="profile")]
    few = st.lists(st.sampled_from(pool.numeric), min_size=1, max_size=2)
    texts = [data.draw(arithmetic(data.draw(few)), label=f"arith {k}") for k in range(10)]
    texts += [data.draw(expressions(pool, archive, profile), label=f"expr {k}") for k in range(4)]
    bound = _bound(texts, archive, profile)
    assume(bound)
    start, step, count = schedule_of(data.draw, archive)
    emulate = EMULATABLE if data.draw(st.booleans(), label="emulate") else frozenset()
    unwritten = data.draw(st.sampled_from([None, 0, 0xAA]), label="unwritten")

    def run(vectorise: bool, min_run: int = 1) -> tuple[Evaluator, list[DerivedSample]]:
        ev = Evaluator(archive, bound, profile, emulate=emulate, unwritten=unwritten,
                       vectorise=vectorise)
        if ev.vectoriser is not None:
            ev.vectoriser.min_run = min_run     # every run, however short, vectorised
        return ev, ev.schedule(start, step, count)

    ref_ev, ref = run(False)
    ev, got = run(True)
    assert [_key(ds) for ds in got] == [_key(ds) for ds in ref]
    # the path is taken wherever planned: every live fetch of every planned metric
    live = sum(1 for ds in ref if not ds.eol)
    planned = sum(1 for b in bound if plan(b.root) is None)
    assert ev.vector_stats.vectorised == live * planned, ev.vector_stats
    assert sum(ev.vector_stats.fallbacks.values()) == live * (len(bound) - planned)
    assert ref_ev.vector_stats.vectorised == 0
    event(f"metrics planned: {min(planned, 5)}{'+' if planned >= 5 else ''}")
    # the default run length: still the same values, short runs counted as such
    _, default = run(True, min_run=4)
    assert [_key(ds) for ds in default] == [_key(ds) for ds in ref]
