"""The conformance corpus as data (``corpus/`` of a source checkout): reading and
validating its manifest (``manifest``), making it from the kit (``build``) and checking it
against the spec's clauses and the kit's own oracles (``sanity``).

    pcpconform corpus build [CORPUS_DIR]    # (re)write CORPUS_DIR/cases from the kit
    pcpconform corpus check [CORPUS_DIR]    # the sanity check; exit 0 clean, 1 problems, 2 cannot run

The names below are imported on first use: an adapter run once per case
(``python -m pcpconform.conform.adapters.kit``) must not pay for the corpus builder.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pcpconform.conform.build import corpus_files, write_corpus
    from pcpconform.conform.manifest import Case, ManifestError, load_corpus
    from pcpconform.conform.sanity import Sanity, sanity, spec_clauses

__all__ = ["Case", "ManifestError", "Sanity", "corpus_files", "load_corpus", "sanity",
           "spec_clauses", "write_corpus"]

_WHERE = {"corpus_files": "build", "write_corpus": "build", "Case": "manifest", "ManifestError": "manifest",
          "load_corpus": "manifest", "Sanity": "sanity", "sanity": "sanity", "spec_clauses": "sanity"}


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        return getattr(importlib.import_module(f"pcpconform.conform.{_WHERE[name]}"), name)
    raise AttributeError(f"module 'pcpconform.conform' has no attribute {name!r}")
