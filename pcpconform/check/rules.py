"""Every validator rule: a stable code, its severity, the spec clause it enforces, a summary.

Severity (CHECK-SEV-1), calibrated by measurement against the referee libpcps:
``error`` — libpcp rejects the archive (pmdumplog or pmlogcheck fails on it) or reads a value
other than the one written (spec/validator.md names the rules kept as errors on a written
reason); ``warning`` — every other spec violation, including quirks real archives carry and
libpcp reads correctly (``--strict`` fails on them); ``info`` — worth knowing.
Codes never change meaning; retired codes are not reused.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

__all__ = ["Severity", "Rule", "RULES", "UNCHECKED_CLAUSES", "rule"]


class Severity(str, Enum):  # noqa: UP042 (StrEnum would change str() of a severity)
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


@dataclass(frozen=True)
class Rule:
    code: str
    severity: Severity
    clause: str
    summary: str


E, W, I = Severity.ERROR, Severity.WARNING, Severity.INFO  # noqa: E741 (the table's columns)

_TABLE: list[tuple[str, Severity, str, str]] = [
    ("check.internal", E, "FMT-CONF-1", "the checker stopped on an internal error (a bug: please report it)"),
    # files and compression
    ("file.no-archive", E, "FMT-FILE-1", "no archive component matches the name"),
    ("file.missing-meta", E, "FMT-FILE-2", "the archive has no .meta file"),
    ("file.missing-volume", E, "FMT-FILE-2", "the archive has no data volume"),
    ("file.missing-index", W, "FMT-FILE-2", "the archive has no .index file"),
    ("file.name", E, "FMT-FILE-3", "a volume number is not canonical decimal (libpcp cannot open it)"),
    ("file.duplicate", W, "FMT-COMPRESS-3",
     "two copies of .meta or .index (plain and compressed, or two compressions)"),
    ("file.duplicate-volume", W, "FMT-COMPRESS-3", "two copies of one data volume"),
    ("file.read", E, "FMT-COMPRESS-1", "a file cannot be read or decompressed"),
    ("file.decompress-limit", E, "FMT-COMPRESS-1", "a compressed file expands beyond the configured limit"),
    ("file.too-large", E, "FMT-FILE-8", "a version 2 .meta or volume exceeds 2^31-1 bytes"),
    ("file.empty", E, "FMT-FILE-7", ".meta, .index or the first volume holds only its label"),
    ("file.empty-volume", W, "FMT-FILE-7", "a later data volume holds only its label"),
    # framing
    ("frame.length", E, "FMT-FRAME-1", "a record length is less than 8"),
    ("frame.truncated", E, "FMT-FRAME-1", "a record is cut short by the end of the file"),
    ("frame.trailer", E, "FMT-FRAME-1", "the trailing length differs from the leading one"),
    ("frame.stray-bytes", E, "FMT-FRAME-4", "bytes after the last complete record (libpcp ignores them)"),
    ("frame.align", E, "FMT-FRAME-5", "a data-volume record length is not a multiple of 4"),
    # labels
    ("label.truncated", E, "FMT-LABEL-2", "the file is too short for a label"),
    ("label.magic", E, "FMT-LABEL-1", "bad label magic"),
    ("label.version", E, "FMT-LABEL-1", "archive version is not 2 or 3"),
    ("label.length", E, "FMT-LABEL-2", "label length is wrong for the version"),
    ("label.trailer", E, "FMT-LABEL-2", "label trailer differs from its header"),
    ("label.vol", E, "FMT-LABEL-3", "label volume number does not match the file"),
    ("label.mismatch", E, "FMT-LABEL-4", "version, pid or hostname differ between files"),
    ("label.start-mismatch", W, "FMT-LABEL-7", "start time differs between files"),
    ("label.timezone-mismatch", W, "FMT-LABEL-4", "timezone or zoneinfo differ between files"),
    ("label.features", E, "FMT-LABEL-5", "unknown v3 feature bits are set"),
    ("label.reserved", W, "FMT-LABEL-5", "the v3 reserved word is not zero"),
    ("label.unterminated", W, "FMT-LABEL-6", "a label text field has no terminating NUL"),
    # metadata
    ("meta.decode", E, "FMT-META-1", "a .meta record does not decode"),
    ("meta.tag", E, "FMT-META-1", "unknown .meta record type"),
    ("meta.tag-version", W, "FMT-META-2", "record type not used by this archive version"),
    ("meta.no-desc", E, "FMT-META-3", ".meta holds no descriptor"),
    ("meta.time-order", W, "FMT-META-5", "a .meta timestamp is earlier than the previous one"),
    ("meta.time-range", W, "FMT-META-5", "a .meta timestamp lies before the archive start"),
    ("meta.tail", E, "FMT-DESC-1", "bytes left over after a descriptor's names"),
    ("desc.length", E, "FMT-DESC-1", "a descriptor record's names do not fit its length"),
    ("desc.no-numnames", E, "FMT-DESC-5", "a 32-byte descriptor without the numnames word"),
    ("indom.length", E, "FMT-INDOM-1", "instance ids, offsets or count do not fit the record"),
    ("labelset.length", E, "FMT-LABELSET-1", "label sets do not fit, or do not fill, the record"),
    ("desc.type", E, "FMT-DESC-2", "descriptor type is not a PCP type"),
    ("desc.sem", W, "FMT-DESC-3", "descriptor semantics are not counter, instant or discrete"),
    ("desc.no-name", W, "FMT-DESC-4", "descriptor has no name"),
    ("desc.name", E, "FMT-DESC-8", "a metric name is empty or longer than 4095 bytes"),
    ("desc.name-syntax", W, "FMT-DESC-4", "a metric name is not a PMNS path"),
    ("desc.name-reused", W, "FMT-DESC-4", "a name is bound to two pmIDs (the first wins)"),
    ("desc.conflict", E, "FMT-DESC-6", "two descriptors of one pmID disagree"),
    ("desc.indom-domain", W, "FMT-DESC-7", "the indom's domain differs from the pmID's"),
    ("units.dim", W, "FMT-UNITS-2", "a dimension lies outside -2..2"),
    ("units.scale-without-dim", W, "FMT-UNITS-2", "a non-zero scale with a zero dimension"),
    ("units.scale", W, "FMT-UNITS-2", "a scale is out of range"),
    ("units.extra", W, "FMT-UNITS-3", "the low (extraUnit/extraScale) byte is not valid"),
    ("indom.inst-negative", E, "FMT-INDOM-2", "a negative instance identifier"),
    ("indom.offset", E, "FMT-INDOM-3", "a name offset outside the string table or without NUL"),
    ("indom.deleted-in-full", E, "FMT-INDOM-4", "offset -1 in a full instance domain"),
    ("indom.duplicate-id", W, "FMT-INDOM-3", "an instance identifier appears twice"),
    ("indom.duplicate-name", W, "FMT-INDOM-3", "an instance name appears twice"),
    ("indom.empty-name", W, "FMT-INDOM-3", "an empty instance name"),
    ("indom.empty", W, "FMT-INDOM-9", "an instance domain record with no instances (libpcp ignores it)"),
    ("indom.unsorted", W, "FMT-INDOM-7", "v3 instance identifiers are not ascending"),
    ("indom.delta-no-full", E, "FMT-INDOM-8", "a delta instance domain with no earlier full one"),
    ("indom.delta-change", E, "FMT-INDOM-6", "a delta deletes an absent instance or re-adds a present one"),
    ("indom.undescribed", W, "FMT-DIV-21", "no descriptor uses this instance domain"),
    ("labelset.type", W, "FMT-LABELSET-2", "unknown label type"),
    ("labelset.ident", W, "FMT-LABELSET-2", "the ident does not fit the label type"),
    ("labelset.nsets", W, "FMT-LABELSET-3", "number of label sets is wrong for the type"),
    ("labelset.json", E, "FMT-LABELSET-4", "label JSON is not a JSON object"),
    ("labelset.nlabels", W, "FMT-LABELSET-5", "bad number of labels"),
    ("labelset.span", E, "FMT-LABELSET-6", "a label's name or value lies outside its JSON or disagrees with it"),
    ("labelset.name", W, "FMT-LABELSET-7", "label names are not legal, unique and sorted"),
    ("text.type", E, "FMT-TEXT-1", "help text type bits are invalid (libpcp mis-reads the file)"),
    ("text.nul", E, "FMT-TEXT-2", "help text is not NUL-terminated"),
    ("text.undescribed", W, "FMT-TEXT-4", "help text for an identifier with no descriptor"),
    ("time.fraction", E, "FMT-TIME-3", "microseconds or nanoseconds out of range"),
    # results and values
    ("result.decode", E, "FMT-RESULT-1", "a result does not decode"),
    ("result.mark-size", E, "FMT-RESULT-2", "a mark has bytes after numpmid"),
    ("result.valfmt", E, "FMT-RESULT-4", "valfmt is not INSITU, DPTR or SPTR"),
    ("result.dptr", E, "FMT-VALUE-2", "a value pointer does not point at a value block"),
    ("result.vlen", E, "FMT-VALUE-4", "a value block's vlen is below 4 or runs past the record"),
    ("result.blocks", E, "FMT-VALUE-3", "value blocks leave a gap, overlap, or do not fill the record"),
    ("result.time-order", E, "FMT-RESULT-5", "a result is earlier than the one before it"),
    ("result.before-start", W, "FMT-RESULT-5", "a result is earlier than the archive start"),
    ("value.undescribed", E, "FMT-RESULT-7", "values for a pmID with no descriptor"),
    ("value.valfmt", E, "FMT-VALUE-1", "value storage does not suit the type (libpcp cannot extract it)"),
    ("value.insitu-float", W, "FMT-VALUE-8", "legacy INSITU float"),
    ("value.valfmt-change", W, "FMT-VALUE-8", "a metric's valfmt changes between results"),
    ("value.vtype", E, "FMT-VALUE-6", "value block type differs from the descriptor's type"),
    ("value.vtype-legacy", W, "FMT-VALUE-6", "value block type 0 (legacy, not byte-swapped)"),
    ("value.vlen", E, "FMT-VALUE-5", "value block payload size is wrong for its type"),
    ("value.string-nul", W, "FMT-VALUE-7", "a string value has no NUL terminator"),
    ("value.singular-inst", W, "FMT-RESULT-6", "a metric without indom uses an instance other than PM_IN_NULL"),
    ("value.unknown-inst", W, "FMT-INDOM-5", "an instance not in the instance domain at that time"),
    ("value.no-indom", W, "FMT-INDOM-5", "no instance domain record is in force for these values"),
    ("value.duplicate-inst", W, "FMT-RESULT-3", "an instance appears twice in one value set"),
    ("value.numval-code", W, "FMT-RESULT-3", "a negative numval is not a plausible error code"),
    ("value.nosupport", W, "FMT-RESULT-7", "values for a metric of type NOSUPPORT"),
    ("value.counter-decrease", W, "FMT-RESULT-7", "a counter decreased (wrap or reset) between marks"),
    ("event.structure", E, "FMT-EVENT-2", "an event array does not fit its value block"),
    ("event.missed", W, "FMT-EVENT-4", "a MISSED event record has other flag bits"),
    ("event.param-len", E, "FMT-EVENT-6", "an event parameter length does not suit its type"),
    # index
    ("index.partial", E, "FMT-INDEX-1", "a partial index entry at the end (libpcp ignores it)"),
    ("index.empty", E, "FMT-INDEX-8", ".index holds no entry (libpcp cannot open the archive)"),
    ("index.vol", E, "FMT-INDEX-4", "negative volume number in an index entry"),
    ("index.vol-missing", W, "FMT-INDEX-4", "an index entry names a volume that does not exist"),
    ("index.offset", W, "FMT-INDEX-4", "an index offset lies before the label end or past the file end"),
    ("index.time-order", W, "FMT-INDEX-5", "index timestamps go backwards"),
    ("index.vol-order", W, "FMT-INDEX-5", "index volume numbers go backwards"),
    ("index.offset-order", W, "FMT-INDEX-5", "index offsets go backwards within a volume"),
    ("index.before-start", W, "FMT-INDEX-4", "an index timestamp is before the archive start"),
    ("index.boundary", E, "FMT-INDEX-3", "an index offset is not a record boundary"),
    ("index.invariant", W, "FMT-INDEX-6", "a record before an indexed offset is later than the entry"),
    ("volume.switch-unindexed", I, "FMT-VOL-1", "a volume's first record has no index entry"),
    # archive sets: the rules across members (spec/sets.md)
    ("set.empty", E, "SET-FORM-1", "a set directory holds no archive"),
    ("set.single", I, "SET-FORM-3", "a set of one archive is read as a single archive"),
    ("set.duplicate", W, "SET-FORM-4", "an archive is named twice in a set (libpcp reads it once)"),
    ("set.zst-member", W, "SET-FORM-2", "a .zst member is left out by PCP before 6.3.2"),
    ("set.member-unreadable", E, "SET-MEMBER-1", "a member cannot be opened (PCP 6 refuses the set)"),
    ("set.member-damaged", E, "SET-MEMBER-3", "a member has a record libpcp cannot read"),
    ("set.host", E, "SET-FORM-5", "members of different hosts (PM_ERR_LOGHOST)"),
    ("set.same-start", E, "SET-FORM-4", "two members start at the same time (PM_ERR_LOGOVERLAP)"),
    ("set.desc", E, "SET-META-2", "a metric's descriptor differs between members (PM_ERR_LOGCHANGE*)"),
    ("set.overlap", E, "SET-REPLAY-5", "a member starts before the one before it ends"),
    ("set.name-pmid", E, "SET-META-4", "a name is bound to different pmIDs in different members"),
    ("set.pmid-names", E, "SET-META-4", "a pmID has different names in different members"),
    ("set.hidden", E, "SET-REPLAY-2", "records a replay of the set never delivers (before or after a seam's mark)"),
    ("set.timezone", W, "SET-FORM-5", "members in different timezones (the first member's is used)"),
    ("set.text", W, "SET-META-3", "help text differs between members"),
    ("set.versions", I, "SET-FORM-6", "members of both archive versions"),
]

#: MUST clauses of spec/archive-format.md that no rule cites, and why.
UNCHECKED_CLAUSES = {
    "FMT-CONV-4": "a duty of readers (no alignment assumed in .meta), not a property of archives",
    "FMT-CONV-8": "stated again as FMT-INDOM-2, checked by indom.inst-negative",
    "FMT-INDEX-7": "a duty of readers (no index density assumed)",
    "FMT-VER-2": "a duty of readers (accept both versions)",
}

RULES: dict[str, Rule] = {code: Rule(code, sev, clause, summary) for code, sev, clause, summary in _TABLE}


def rule(code: str) -> Rule:
    return RULES[code]


# The MMV validator's rules live beside it (pcpconform/check/mmv/rules.py, spec/mmv.md).
from pcpconform.check.mmv.rules import MMV_TABLE  # noqa: E402 (a table of plain data)

RULES.update({code: Rule(code, Severity(sev), clause, summary) for code, sev, clause, summary in MMV_TABLE})
