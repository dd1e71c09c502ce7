"""The benchmark scripts of benchmarks/ as modules, for the tests that use their archive
generators and tables."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

__all__ = ["bench_module", "derive_workload"]

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def bench_module(name: str) -> ModuleType:
    """The module benchmarks/``name``.py (benchmarks/ on sys.path for the import only)."""
    sys.path.insert(0, str(BENCHMARKS))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.pop(0)


def derive_workload(directory: Path, fetches: int) -> tuple[Any, Any, int, Any]:
    """bench_derive.py's definitions bound on a small archive of bench_interp.py's shape
    (written in ``directory``) and its schedule of ``fetches``: (archive, start, interval
    in nanoseconds, the binding), the definitions read without a diagnostic."""
    from pcpconform.oracles.derive.config import Registry, read_config
    from pcpconform.oracles.derive.profiles import PROFILES
    from pcpconform.oracles.derive.session import bind_wanted, registered

    bench_interp, bench_derive = bench_module("bench_interp"), bench_module("bench_derive")
    base = directory / "bench"
    bench_interp.generate(base, 3, 0.2, 1)
    archive, start, delta, _ = bench_interp.schedule(base, fetches)
    prof = PROFILES["pcp-6.0"]
    registry = Registry(prof)
    assert not read_config(bench_derive.DERIVED_CONFIG, prof, "bench", registry).diagnostics
    return archive, start, delta, bind_wanted(registered(registry), [], archive, prof)
