"""pcpconform: the format specification and conformance kit for Performance Co-Pilot archives.

The package is layered; each layer imports only from the layers below it
(``docs/architecture.md``; ``tests/unit/test_layers.py`` enforces the order):

========================  ==========================================================
``pcpconform.format``     typed PCP values, C-number semantics, the construct schemas
``pcpconform.io``         files, the streaming reader, the bulk decoder, ``Archive``,
                          the writer and rebuild
``pcpconform.dump``       the JSON Lines and text dumps, and undump
``pcpconform.fixtures``   fixture files and libpcp_import-compatible generation
``pcpconform.check``      the validator: rules, checks by spec area, reports
``pcpconform.oracles``    reference interpolation (``interp``) and derived metrics
                          (``derive``)
``pcpconform.extra``      optional integrations: hypothesis strategies, plotting
``pcpconform.cli``        the ``pcpconform`` command, one module per subcommand
========================  ==========================================================

The names below are the public API; they are imported on first use, so ``import
pcpconform`` stays cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from pcpconform.errors import (
    ConvScaleError,
    DeriveSemanticError,
    DeriveSyntaxError,
    FixtureError,
    FormatError,
    Location,
    PcpConformError,
    UnitsAbort,
    UnitsError,
    UsageError,
)
from pcpconform.version import __version__

#: public name -> the module that defines it
_LAZY = {
    "Archive": "pcpconform.io.archive",
    "structs": "pcpconform.format.schema",
    "PmID": "pcpconform.format.pmtypes",
    "PmInDom": "pcpconform.format.pmtypes",
    "PmType": "pcpconform.format.pmtypes",
    "PmSem": "pcpconform.format.pmtypes",
    "PmUnits": "pcpconform.format.pmtypes",
    "Timestamp": "pcpconform.format.pmtypes",
    "ArchiveWriter": "pcpconform.io.writer",
    "rebuild_archive": "pcpconform.io.rebuild",
    "write_jsonl": "pcpconform.dump.jsonl",
    "write_text": "pcpconform.dump.text",
    "undump": "pcpconform.dump.undump",
    "Fixture": "pcpconform.fixtures.fixture",
    "load_fixture": "pcpconform.fixtures.fixture",
    "parse_fixture": "pcpconform.fixtures.fixture",
    "generate_archive": "pcpconform.fixtures.generate",
    "check_archive": "pcpconform.check.engine",
    "salvage_archive": "pcpconform.salvage",
    "SalvageReport": "pcpconform.salvage",
    "Replay": "pcpconform.oracles.interp.replay",
    "interpolate": "pcpconform.oracles.interp.replay",
}

__all__ = [
    "__version__", "PcpConformError", "FormatError", "UsageError", "Location", "FixtureError",
    "UnitsError", "UnitsAbort", "ConvScaleError", "DeriveSyntaxError", "DeriveSemanticError",
    "Archive", "structs", "PmID", "PmInDom", "PmType", "PmSem", "PmUnits", "Timestamp",
    "ArchiveWriter", "rebuild_archive", "write_jsonl", "write_text", "undump", "Fixture",
    "load_fixture", "parse_fixture", "generate_archive", "check_archive", "salvage_archive", "SalvageReport",
    "Replay", "interpolate",
]

if TYPE_CHECKING:
    from pcpconform.check.engine import check_archive
    from pcpconform.dump.jsonl import write_jsonl
    from pcpconform.dump.text import write_text
    from pcpconform.dump.undump import undump
    from pcpconform.fixtures.fixture import Fixture, load_fixture, parse_fixture
    from pcpconform.fixtures.generate import generate_archive
    from pcpconform.format.pmtypes import PmID, PmInDom, PmSem, PmType, PmUnits, Timestamp
    from pcpconform.format.schema import structs
    from pcpconform.io.archive import Archive
    from pcpconform.io.rebuild import rebuild_archive
    from pcpconform.io.writer import ArchiveWriter
    from pcpconform.oracles.interp.replay import Replay, interpolate
    from pcpconform.salvage import SalvageReport, salvage_archive


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'pcpconform' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
