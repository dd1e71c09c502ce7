"""Every registered fast path against its reference (pcpconform/fastpath.py), on drawn inputs.

For each registered pair, inputs of its family (tests/fast_path_inputs.py) are drawn, and
the fast path must give the reference's answer (by the pair's ``same``), or decline with a
member of its reason enums; where the reference raises, the fast path declines or raises
the same kind of error. Over the draws every fast path must answer at least once, so a
path that always declines fails too.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import pcpconform
from pcpconform.fastpath import REGISTRY, Declined, FastPath
from tests.fast_path_inputs import Families


def _load_registrations() -> None:
    """Import every module of the package that registers a fast path."""
    for info in pkgutil.walk_packages(pcpconform.__path__, "pcpconform."):
        if info.ispkg:
            continue
        spec = importlib.util.find_spec(info.name)
        if spec is None or spec.origin is None or not spec.origin.endswith(".py"):   # a compiled module
            continue
        if "register(" in Path(spec.origin).read_text(encoding="utf-8"):
            importlib.import_module(info.name)


_load_registrations()

#: draws per family (an archive-wide pair costs a whole check, dump or replay per draw)
EXAMPLES = {"archive": 60, "archive-object": 80, "derive-schedule": 40, "derive-csv": 60, "interp-schedule": 50,
            "interp-archive": 40, "archive-result": 80, "volume-file": 80, "text-run": 80,
            "event-payload": 200}


@pytest.fixture(scope="module")
def families(tmp_path_factory: pytest.TempPathFactory) -> Families:
    return Families(tmp_path_factory.mktemp)


def test_every_pair_reads_a_known_family(families: Families) -> None:
    assert len(REGISTRY) >= 15
    unknown = {name: path.inputs for name, path in REGISTRY.items() if path.inputs not in families.draws}
    assert not unknown


def _outcome(fn: Any, args: tuple[Any, ...]) -> tuple[str, Any]:
    try:
        return "answer", fn(*args)
    except Declined as declined:
        return "declined", declined.reason
    except Exception as exc:  # compared below: the fast path must not raise what the reference does not
        return "raised", exc


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_fast_path_answers_as_its_reference(name: str, families: Families) -> None:
    path: FastPath[Any] = REGISTRY[name]
    draw = families.draws[path.inputs]
    seen: Counter[str] = Counter()

    @settings(max_examples=EXAMPLES.get(path.inputs, 150), deadline=None, derandomize=True, database=None,
              phases=[Phase.explicit, Phase.generate],
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                                     HealthCheck.data_too_large])
    @given(data=st.data())
    def run(data: st.DataObject) -> None:
        args = draw(data)
        fast_kind, fast = _outcome(path.fast, args)
        if fast_kind == "declined":
            assert isinstance(fast, path.reasons), (name, fast)
            seen["declined"] += 1
            return
        ref_kind, ref = _outcome(path.reference, args)
        if ref_kind == "raised":
            assert fast_kind == "raised" and type(fast) is type(ref), (name, fast, ref)
            seen["both raised"] += 1
            return
        if fast_kind == "raised":
            raise fast
        same = path.same or (lambda a, b: a == b)
        assert same(ref, fast), (name, args)
        seen["answered"] += 1

    run()
    assert seen["answered"] > 0, (name, seen)
