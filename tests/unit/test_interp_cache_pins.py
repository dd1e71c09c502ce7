"""libpcp's bound cache on the pinned examples (tests/interp_pins.py): the oracle emulating
INTERP-DEV-5 gives what each reference libpcp returned (tests/data/interp-cache-pins.json,
checked against the libpcps by tests/differential/test_interp_cache_pins.py), and each
clause the example pins is needed: with it taken out of the model (tests/interp_ablations.py)
the answer differs. Where the example shows libpcp departing from the rules, the rules'
answer differs too."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.differential.libpcp.interp_bridge import oracle_segments_view
from tests.interp_ablations import ABLATIONS
from tests.interp_pins import ALL, PINS, Pin, build, pinned, pmids_of, segments_of

#: the referee settings the pins were measured with: rule set, and libpcp 7's pmSetMode
SETTINGS = {"pcp-6.0.3": ("pcp-6.0", False), "pcp-6.3": ("pcp-6.3", False), "pcp-7": ("pcp-6.3", True)}


@pytest.fixture(scope="module")
def bases(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return {pin.id: build(pin, tmp_path_factory.mktemp(pin.id)) for pin in PINS}


@pytest.mark.parametrize("pin", PINS, ids=[p.id for p in PINS])
def test_the_model_gives_the_pinned_answer(pin: Pin, bases: dict[str, Path]) -> None:
    base = bases[pin.id]
    segments, pmids = segments_of(pin, base), pmids_of(pin, base)
    theirs = pinned()[pin.id]
    for name, (rules, again) in SETTINGS.items():
        assert oracle_segments_view(base, segments, pmids, rules, ALL, again) == theirs[name], name
        departs = oracle_segments_view(base, segments, pmids, rules, (), again) != theirs[name]
        assert departs == (name in pin.deviates), name


@pytest.mark.parametrize("pin", PINS, ids=[p.id for p in PINS])
def test_each_pinned_clause_is_needed(pin: Pin, bases: dict[str, Path]) -> None:
    base = bases[pin.id]
    segments, pmids = segments_of(pin, base), pmids_of(pin, base)
    theirs = pinned()[pin.id]
    assert pin.ablations and {ABLATIONS[a][0] for a in pin.ablations} <= set(pin.clauses)
    for ablation in pin.ablations:
        with ABLATIONS[ablation][1]():
            differs = [name for name, (rules, again) in SETTINGS.items()
                       if oracle_segments_view(base, segments, pmids, rules, ALL, again) != theirs[name]]
        assert differs, f"{pin.id}: the model without {ablation} still gives libpcp's answer"


def test_every_cache_clause_is_pinned() -> None:
    clauses = {c for pin in PINS for c in pin.clauses}
    wanted = {f"INTERP-CACHE-{k}" for k in range(1, 8)} | {"INTERP-EOL-2", "INTERP-EXIST-2", "INTERP-VER-2"}
    assert wanted <= clauses, sorted(wanted - clauses)
    assert {clause for clause, _ in ABLATIONS.values()} <= clauses
