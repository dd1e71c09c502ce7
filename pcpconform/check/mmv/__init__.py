"""The MMV validator: every rule of ``rules.py`` (spec/mmv.md, "Validation") applied to one
MMV file or to a directory of them as the MMV PMDA loads it (its one-fault corpus is
``pcpconform.corpusgen.mmv_faults``).

Exports are loaded lazily: ``pcpconform.check.rules`` imports this package's rule table
while the modules below import ``pcpconform.check.rules``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pcpconform.check.mmv.directory import check_mmv_directory, check_mmv_member
    from pcpconform.check.mmv.engine import check_mmv_file
    from pcpconform.check.mmv.magic import is_mmv_file

__all__ = ["is_mmv_file", "check_mmv_file", "check_mmv_directory", "check_mmv_member"]


def __getattr__(name: str) -> Any:
    if name == "is_mmv_file":
        from pcpconform.check.mmv import magic
        return magic.is_mmv_file
    if name == "check_mmv_file":
        from pcpconform.check.mmv import engine
        return getattr(engine, name)
    if name in ("check_mmv_directory", "check_mmv_member"):
        from pcpconform.check.mmv import directory
        return getattr(directory, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
