"""The conformance corpus as data (``corpus/`` of a source checkout): reading and
validating its manifest (``manifest``), making it from the kit (``build``) and checking it
against the spec's clauses and the kit's own oracles (``sanity``).

    pcpconform corpus build [CORPUS_DIR]    # (re)write CORPUS_DIR/cases from the kit
    pcpconform corpus check [CORPUS_DIR]    # the sanity check; exit 0 clean, 1 problems, 2 cannot run
"""

from pcpconform.conform.build import corpus_files, write_corpus
from pcpconform.conform.manifest import Case, ManifestError, load_corpus
from pcpconform.conform.sanity import Sanity, sanity, spec_clauses

__all__ = ["Case", "ManifestError", "Sanity", "corpus_files", "load_corpus", "sanity",
           "spec_clauses", "write_corpus"]
