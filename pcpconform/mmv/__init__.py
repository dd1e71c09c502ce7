"""MMV (Memory Mapped Values) files: schemas, model, reader and writer.

The same layer as ``pcpconform.io``: it builds on ``pcpconform.format`` and
``pcpconform.errors`` only. ``read_mmv`` parses a file into an ``MmvFile``; ``build_mmv``
lays a model out byte for byte as libpcp_mmv does (spec/mmv.md).
"""

from __future__ import annotations

from pcpconform.mmv.model import Indom, Instance, Label, Metric, MmvFile, Value
from pcpconform.mmv.reader import parse_mmv, read_mmv
from pcpconform.mmv.writer import build_mmv, mask_label_slack, select_version

__all__ = ["Indom", "Instance", "Label", "Metric", "MmvFile", "Value", "parse_mmv", "read_mmv",
           "build_mmv", "mask_label_slack", "select_version"]
