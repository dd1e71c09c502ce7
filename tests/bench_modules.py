"""The benchmark scripts of benchmarks/ as modules, for the tests that use their archive
generators and tables."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType

__all__ = ["bench_module"]

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def bench_module(name: str) -> ModuleType:
    """The module benchmarks/``name``.py (benchmarks/ on sys.path for the import only)."""
    sys.path.insert(0, str(BENCHMARKS))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.pop(0)
