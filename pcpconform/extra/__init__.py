"""Optional integrations, each importable only with its extra installed.

* ``strategies``, ``schemagen``, ``derive_strategies``: hypothesis strategies for archive
  contents, single records and derived-metric expressions (``pcpconform[strategies]``);
* ``plot``: drawing interpolation replays with matplotlib (``pcpconform[plot]``).

Importing one without its extra raises ``MissingExtra`` (an ImportError) that says what to
install.
"""

from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["MissingExtra", "require"]


class MissingExtra(ImportError):
    """An optional integration was imported without the package it needs."""


def require(package: str, extra: str, user: str) -> ModuleType:
    """Import ``package`` for module ``user``, or say which extra provides it."""
    try:
        return importlib.import_module(package)
    except ImportError as exc:
        raise MissingExtra(f"{user} needs {package}: install pcpconform[{extra}] "
                           f"(pip install 'pcpconform[{extra}]')") from exc
