"""Words for the numbers in diagnostics: timestamps, semantics, types, metrics.

A diagnostic names what a code means (``semantics 0 is not counter (1), instant (3) or
discrete (4)``) and prints times exactly, whatever the fraction holds: a negative time
reads ``-2.000004000``, an out-of-range fraction shows its fields.
"""

from __future__ import annotations

from pcpconform.format.pmtypes import PmID, Timestamp

__all__ = ["SEMANTICS", "TYPES", "sem_text", "type_text", "stamp_text", "metric_text"]

#: PM_SEM_* values and their names
SEMANTICS = {1: "counter", 3: "instant", 4: "discrete"}
#: PM_TYPE_* values and their names
TYPES = {-1: "NOSUPPORT", 0: "32", 1: "U32", 2: "64", 3: "U64", 4: "FLOAT", 5: "DOUBLE",
         6: "STRING", 7: "AGGREGATE", 8: "AGGREGATE_STATIC", 9: "EVENT", 10: "HIGHRES_EVENT"}


def sem_text(sem: int) -> str:
    """``instant (3)``, or ``0 (no PCP semantics)``."""
    return f"{SEMANTICS[sem]} ({sem})" if sem in SEMANTICS else f"{sem} (no PCP semantics)"


def type_text(ptype: int) -> str:
    """``U64 (3)``, or ``42 (no PCP type)``."""
    return f"{TYPES[ptype]} ({ptype})" if ptype in TYPES else f"{ptype} (no PCP type)"


def stamp_text(ts: Timestamp) -> str:
    """Seconds since the epoch with nine decimals; the fields when the fraction is out of
    range (a sign on the fraction of a second means nothing on its own)."""
    if 0 <= ts.nsec < 1_000_000_000:
        total = ts.sec * 1_000_000_000 + ts.nsec
        sign = "-" if total < 0 else ""
        sec, frac = divmod(abs(total), 1_000_000_000)
        return f"{sign}{sec}.{frac:09d}"
    return f"sec {ts.sec}, nsec {ts.nsec}"


def metric_text(pmid: int, name: str | None) -> str:
    """``60.0.4 (disk.dev.read_bytes)``, or the pmID alone when it has no name."""
    return f"{PmID(pmid)} ({name})" if name else str(PmID(pmid))
