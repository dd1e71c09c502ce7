"""The conformance corpus as data and the runner (spec/conformance.md): reading and
validating the corpus's manifest and case files (``manifest``, ``casefile``), the kit's own
expected answers (``expected``), the protocol and its persistent form, the adapters of the
built-in implementations, the verdicts, reports and the verdict matrix. Making the corpus
is ``pcpconform.corpusgen``'s job.

Nothing is imported here: an adapter run once per case
(``python -m pcpconform.conform.adapters.kit``) must not pay for the rest.
"""
