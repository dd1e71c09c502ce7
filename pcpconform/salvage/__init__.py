"""Salvage: a damaged archive rescued into a new one every libpcp reads (spec/salvage.md).

``salvage_archive(IN, OUT)`` reads IN (never writing to it), keeps every value it can
prove, invents none, and returns a ``SalvageReport`` of what was kept, repaired and lost.
"""

from pcpconform.salvage.report import Item, SalvageReport
from pcpconform.salvage.salvage import salvage_archive

__all__ = ["salvage_archive", "SalvageReport", "Item"]
