"""The MMV validator's rules: a stable code, its severity, the spec clause (spec/mmv.md,
"Validation") and a summary, in the shape of ``pcpconform.check.rules``, which registers them.

Severity ``error``: the MMV PMDA or mmvdump rejects the file or a section of it, crashes,
reads outside the file, or exports something other than the file says; ``warning``: the
format's rule is broken or the file is suspect, but both readers serve it as written (or
skip one entry quietly). This module imports nothing, so ``check.rules`` can import it.
"""

from __future__ import annotations

__all__ = ["MMV_TABLE", "MMV_CODES"]

_E, _W = "error", "warning"

#: (code, severity, clause, summary)
MMV_TABLE: list[tuple[str, str, str, str]] = [
    ("mmv.read", _E, "MMV-CHK-FILE-1", "an MMV file cannot be read"),
    # header
    ("mmv.header-short", _E, "MMV-CHK-HDR-1", "the file is shorter than the 40-byte header"),
    ("mmv.magic", _E, "MMV-CHK-HDR-1", "the magic is not MMV\\0"),
    ("mmv.version", _E, "MMV-CHK-HDR-1", "the version is not 1, 2 or 3"),
    ("mmv.rewriting", _E, "MMV-CHK-HDR-2",
     "g1 differs from g2 (being rewritten) or is 0 (not initialised): the PMDA skips the file"),
    ("mmv.tocs", _E, "MMV-CHK-HDR-3", "fewer than 2 TOC entries, or the TOC runs past the file"),
    ("mmv.cluster", _E, "MMV-CHK-HDR-3", "the cluster lies outside 0..4095"),
    ("mmv.flags", _W, "MMV-CHK-HDR-4", "unknown flag bits"),
    ("mmv.process", _W, "MMV-CHK-HDR-4", "the PROCESS flag with no positive PID (never acted on)"),
    # table of contents
    ("mmv.toc-type", _E, "MMV-CHK-TOC-1", "an unknown section type (mmvdump fails)"),
    ("mmv.toc-version", _W, "MMV-CHK-TOC-1", "a labels section in a version 1 or 2 file"),
    ("mmv.toc-duplicate", _E, "MMV-CHK-TOC-1", "a section type appears twice (the last one wins)"),
    ("mmv.toc-count", _E, "MMV-CHK-TOC-2", "a negative section count"),
    ("mmv.toc-bounds", _E, "MMV-CHK-TOC-2", "a section runs past the end of the file"),
    ("mmv.toc-overlap", _E, "MMV-CHK-TOC-2", "a section overlaps the header, the TOC or another section"),
    ("mmv.toc-limit", _E, "MMV-CHK-TOC-3", "a section count beyond the PMDA's limit (it skips the section)"),
    ("mmv.toc-missing", _W, "MMV-CHK-TOC-4", "no metrics or no values section"),
    ("mmv.toc-empty", _W, "MMV-CHK-TOC-4", "a section of count 0 (mmvdump says Bad TOC)"),
    ("mmv.toc-crosscheck", _W, "MMV-CHK-TOC-4",
     "the instances or strings section disagrees with the entries that are reached"),
    # instance domains and instances
    ("mmv.indom-serial", _E, "MMV-CHK-INDOM-1", "an indom serial above 2^22-1 (the PMDA skips it)"),
    ("mmv.indom-duplicate", _E, "MMV-CHK-INDOM-1", "two indoms of one file share a serial (merged)"),
    ("mmv.indom-collision", _E, "MMV-CHK-INDOM-1",
     "two indoms map to one PCP InDom (cluster << 11 | serial): instances are lost"),
    ("mmv.indom-wide-serial", _W, "MMV-CHK-INDOM-1", "a serial of 2048 or more (can collide across files)"),
    ("mmv.indom-unused", _W, "MMV-CHK-INDOM-1", "no metric uses the indom (serial 0 never can)"),
    ("mmv.indom-bounds", _E, "MMV-CHK-INDOM-2", "an indom's instances run past the end of the file"),
    ("mmv.instance-indom", _W, "MMV-CHK-INDOM-2", "an instance's indom back-pointer is not its indom"),
    ("mmv.instance-indom-bounds", _E, "MMV-CHK-INDOM-2",
     "an instance's indom back-pointer lies outside the file (mmvdump fails)"),
    ("mmv.instance-name-offset", _E, "MMV-CHK-INDOM-2",
     "a v2 instance name offset is 0 or outside the file (the PMDA follows it unchecked)"),
    ("mmv.name-nul", _E, "MMV-CHK-INDOM-2",
     "a metric or instance name has no NUL (the PMDA exports another name)"),
    ("mmv.instance-duplicate", _W, "MMV-CHK-INDOM-3", "an instance id or name repeats in one indom"),
    ("mmv.instance-negative", _W, "MMV-CHK-INDOM-3", "a negative internal instance id"),
    ("mmv.instance-empty-name", _W, "MMV-CHK-INDOM-3", "an empty instance name"),
    # metrics
    ("mmv.metric-name", _E, "MMV-CHK-METRIC-1",
     "a metric name is empty or fails the PMDA's character rule (not exported)"),
    ("mmv.metric-name-offset", _E, "MMV-CHK-METRIC-1", "a v2 metric name offset is 0 or outside the file"),
    ("mmv.metric-name-pmns", _W, "MMV-CHK-METRIC-1",
     "a metric name passes the PMDA's rule but not the PMNS rule"),
    ("mmv.metric-name-duplicate", _E, "MMV-CHK-METRIC-1",
     "a name an earlier metric (or the PMDA's own) has: the PMDA does not create the metric"),
    ("mmv.metric-name-prefix", _E, "MMV-CHK-METRIC-1",
     "a name below an earlier metric's, or one above it (p.q and p.q.r): no name reaches it"),
    ("mmv.metric-item", _E, "MMV-CHK-METRIC-2", "an item above 1023 (not exported)"),
    ("mmv.metric-item-duplicate", _E, "MMV-CHK-METRIC-2", "an item repeats in the file (the second is dropped)"),
    ("mmv.metric-type", _E, "MMV-CHK-METRIC-3", "a type that is not an MMV type"),
    ("mmv.metric-semantics", _W, "MMV-CHK-METRIC-3", "semantics other than 0, counter, instant or discrete"),
    ("mmv.metric-units", _W, "MMV-CHK-METRIC-3", "a pmUnits word with out-of-range scales or pad bits"),
    ("mmv.metric-indom", _E, "MMV-CHK-METRIC-3", "a metric's indom serial is not declared"),
    ("mmv.elapsed-desc", _W, "MMV-CHK-METRIC-3",
     "an ELAPSED metric declares semantics or units the PMDA replaces"),
    ("mmv.semantics-zero", _W, "MMV-CHK-METRIC-4", "semantics 0 (exported as a counter)"),
    ("mmv.units-missing", _W, "MMV-CHK-METRIC-4",
     "semantics 0 and no units: metadata pcp.mmv of PCP before 6.3.1 never set"),
    ("mmv.cluster-collision", _E, "MMV-CHK-DIR-1",
     "two files of a directory get one PMID cluster and share an item: their PMIDs collide"),
    ("mmv.cluster-shared", _W, "MMV-CHK-DIR-1",
     "two files of a directory get one PMID cluster, with no item in common (yet)"),
    # values and strings
    ("mmv.value-metric", _E, "MMV-CHK-VALUE-1", "a value's metric back-pointer is not a metric entry"),
    ("mmv.value-instance", _E, "MMV-CHK-VALUE-1",
     "a value's instance back-pointer is not an instance of its metric's indom"),
    ("mmv.value-singular-instance", _W, "MMV-CHK-VALUE-1", "a singular metric's value points at an instance"),
    ("mmv.string-value-offset", _E, "MMV-CHK-VALUE-2",
     "a STRING value's slot is not 256 bytes inside the file"),
    ("mmv.string-value-nul", _E, "MMV-CHK-VALUE-2",
     "a STRING value's slot has no NUL (the PMDA serves 255 bytes, mmvdump reads on)"),
    ("mmv.elapsed-extra", _W, "MMV-CHK-VALUE-2", "an ELAPSED value's extra word is positive"),
    ("mmv.value-missing", _W, "MMV-CHK-VALUE-3", "a metric, or one instance of it, has no value"),
    ("mmv.value-duplicate", _W, "MMV-CHK-VALUE-3", "two values for one metric and instance (the first wins)"),
    ("mmv.help-offset", _E, "MMV-CHK-STR-1", "a help text offset is not a 256-byte slot inside the file"),
    ("mmv.string-nul", _W, "MMV-CHK-STR-1", "a help text slot has no NUL (both readers serve 255 bytes)"),
    # labels
    ("mmv.label-flags", _W, "MMV-CHK-LABEL-1", "label flags without exactly one served type, or unknown bits"),
    ("mmv.label-identity", _W, "MMV-CHK-LABEL-1", "a label names an item, indom, cluster or instance the file lacks"),
    ("mmv.label-nul", _E, "MMV-CHK-LABEL-2", "a label payload has no NUL within its 244 bytes"),
    ("mmv.label-json", _W, "MMV-CHK-LABEL-2", "a label payload is not a JSON object of labels"),
    ("mmv.label-name", _W, "MMV-CHK-LABEL-2", "a label name is not [A-Za-z][A-Za-z0-9_]*"),
    ("mmv.label-slack", _W, "MMV-CHK-LABEL-3", "non-zero bytes after a label payload's NUL"),
    # live files (check --watch)
    ("mmv.watch-rewriting", _W, "MMV-CHK-WATCH-1",
     "a sample found the generations unequal or 0: a rewrite in progress, which the PMDA skips"),
    ("mmv.watch-generation", "info", "MMV-CHK-WATCH-1", "the generation changed: the file was written anew"),
    ("mmv.watch-torn", _E, "MMV-CHK-WATCH-2", "a counter read lower than the samples before and after it"),
    ("mmv.watch-counter-regress", _E, "MMV-CHK-WATCH-2", "a counter went down and stayed down"),
    ("mmv.watch-file-appeared", "info", "MMV-CHK-WATCH-3", "a file appeared in the directory"),
    ("mmv.watch-file-gone", _W, "MMV-CHK-WATCH-3", "a file went away: the PMDA no longer serves its metrics"),
    ("mmv.watch-process-gone", _W, "MMV-CHK-WATCH-3",
     "the PROCESS writer's process is gone: the PMDA drops the file's metrics"),
    ("mmv.watch-metrics-changed", _W, "MMV-CHK-WATCH-3", "the file exports other metrics than before"),
    ("mmv.watch-static", "info", "MMV-CHK-WATCH-4", "a metric's values never changed while watched"),
]

MMV_CODES = frozenset(code for code, *_ in MMV_TABLE)
