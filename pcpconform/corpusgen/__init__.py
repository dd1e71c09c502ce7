"""Making the conformance corpus (``corpus/`` of a source checkout) from the kit, and
checking it: the valid cases written from the fixtures (``golden``, with their features,
expected answers, replay plans and compressed forms), the one-fault archives (``invalid``)
and MMV files (``mmv_faults``), the set and salvage cases, the whole build (``build``), and
the corpus's check of itself (``sanity``, with clause ``coverage``).

    pcpconform corpus build [CORPUS_DIR]    # (re)write CORPUS_DIR/cases from the kit
    pcpconform corpus check [CORPUS_DIR]    # the sanity check; exit 0 clean, 1 problems, 2 cannot run

Reading the corpus and running it against an implementation is ``pcpconform.conform``'s
job; nothing there imports this package.
"""
