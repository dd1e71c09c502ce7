"""Interp samples as comparable values, for the interp property tests: a value's identity
is its type and, for floats, its bits (so 0.0 and -0.0, or two NaNs of different payloads,
differ); the registered interp fast paths compare them the same way."""

from __future__ import annotations

from pcpconform.oracles.interp.fast_paths import exact_samples as view

__all__ = ["view"]
