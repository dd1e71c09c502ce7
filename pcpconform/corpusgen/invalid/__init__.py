"""The invalid corpus: one-fault archives, each made from a valid generated archive.

Every case starts from an archive that ``pcpconform.fixtures.generate`` writes from a bundled
fixture (``example`` or ``events``, see ``pcpconform.fixtures.bundled_fixture``), in version 2
and/or 3, and applies one fault by editing bytes at offsets found by parsing the archive
(``pcpconform.io.reader`` framing, ``pcpconform.format.schema`` layouts). Where the fault
changes a record's length, the record is rebuilt with the schema and the index offsets after
it are moved by the same amount, so that the fault stays the only one. Each case names the
diagnostic codes the validator must report: its error codes exactly, its warning and info
codes at least.

    python -m pcpconform.corpusgen.invalid OUTDIR            # build the corpus and OUTDIR/manifest.json
    python -m pcpconform.corpusgen.invalid --readme [FILE]   # write the corpus README (table of cases)

``OUTDIR/manifest.json`` is an object: ``cases`` (a list of ``{"name", "archive", "fault",
"expect", "clause"}``, plus ``"options"`` for the keyword arguments of ``check_archive`` a case
needs), ``valid`` (the untouched originals, which must check clean) and ``uncovered`` (error
codes no byte edit can produce, each with the reason).

Quirks are the other registry: ``QUIRKS`` (module ``quirks``) lists archives that break a
rule of the spec yet every referee libpcp reads with the values written. Each ``Quirk`` has a
``name``, a ``title``, an ``edit`` (a function of an ArchiveEdit of a valid generated archive),
the ``clauses`` it bends, the ``warnings`` (codes, all warnings) check must report, the archive
``versions`` and the ``source`` fixture; ``build_quirk(quirk, version, base)`` writes it. They
belong to the valid corpus (``corpus/cases/valid/quirk-<name>-v<N>``): check exits 0 on them.

Modules: ``edit`` (ArchiveEdit and the record helpers), ``registry`` (Case, CASES, UNCOVERED),
``cases_*`` (the faults by area), ``quirks`` (Quirk, QUIRKS, build_quirk), ``build``
(build_corpus, render_readme, main).
"""

# The cases register themselves on import, and this order is the order of the manifest;
# any import of a submodule runs this file first, so the order always holds.
# isort: off
from pcpconform.corpusgen.invalid import cases_files, cases_labels, cases_meta  # noqa: F401
from pcpconform.corpusgen.invalid import cases_results, cases_index  # noqa: F401
# isort: on
from pcpconform.corpusgen.invalid.build import README, build_corpus, main, render_readme
from pcpconform.corpusgen.invalid.edit import ArchiveEdit
from pcpconform.corpusgen.invalid.quirks import QUIRKS, Quirk, build_quirk
from pcpconform.corpusgen.invalid.registry import CASES, UNCOVERED, Case

__all__ = ["Case", "CASES", "UNCOVERED", "Quirk", "QUIRKS", "build_quirk", "ArchiveEdit", "README",
           "build_corpus", "render_readme", "main"]
