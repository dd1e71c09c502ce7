"""Diagnostics and per-archive reports."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from pcpconform.check.rules import RULES, Severity
from pcpconform.errors import Location
from pcpconform.fastpath import PathStats

__all__ = ["Diagnostic", "Report", "DiagnosticLimit", "OsFailure"]


@dataclass(frozen=True)
class Diagnostic:
    """One finding: what (code), how bad, where (file, record, byte offset, field), why;
    and, where known, the metric it is about (its name from the archive's PMNS, else its
    pmID) and the record's time (in the archive's timezone)."""

    code: str
    severity: Severity
    file: str
    record: int | None
    offset: int | None
    field: str | None
    message: str
    clause: str
    metric: str | None = None
    time: str | None = None

    def to_json(self) -> dict[str, Any]:
        obj = asdict(self)
        obj["severity"] = self.severity.value
        return obj

    def location(self) -> str:
        """``FILE[record R, offset O, field F]`` with the parts that are known."""
        parts = Location(self.file, self.record, self.offset, self.field).parts(field_word="")
        return self.file + (f"[{', '.join(parts)}]" if parts else "")


class DiagnosticLimit(Exception):
    """Raised inside a check when --max-diagnostics is reached."""


class OsFailure(Exception):
    """Raised inside a check when the OS will not let us read a file (``Report.os_error``):
    a problem of the request (exit 2), not a defect of the archive."""


@dataclass
class Report:
    """All diagnostics for one archive."""

    archive: str
    diagnostics: list[Diagnostic] = field(default_factory=list)
    max_diagnostics: int | None = None
    truncated: bool = False
    seconds: float = 0.0
    bytes_checked: int = 0
    #: "FILE: reason" when the OS would not let the check read a file; nothing else counts
    os_error: str | None = None
    #: what the fast paths did: results checked on a learned shape (``check.columns``,
    #: check/columns.py) and those it declined by reason, records the bulk decoder read
    paths: PathStats = field(default_factory=PathStats)

    def add(self, code: str, file: str, message: str, *, record: int | None = None,
            offset: int | None = None, field: str | None = None, metric: str | None = None,
            time: str | None = None) -> None:
        r = RULES[code]
        self.diagnostics.append(Diagnostic(code, r.severity, file, record, offset, field,
                                           message, r.clause, metric, time))
        if self.max_diagnostics is not None and len(self.diagnostics) >= self.max_diagnostics:
            self.truncated = True
            raise DiagnosticLimit

    def count(self, severity: Severity) -> int:
        return sum(1 for d in self.diagnostics if d.severity == severity)

    @property
    def errors(self) -> int:
        return self.count(Severity.ERROR)

    @property
    def warnings(self) -> int:
        return self.count(Severity.WARNING)

    def codes(self) -> set[str]:
        return {d.code for d in self.diagnostics}

    def to_json(self) -> dict[str, Any]:
        return {"archive": self.archive, "errors": self.errors, "warnings": self.warnings,
                "infos": self.count(Severity.INFO), "truncated": self.truncated,
                "bytes": self.bytes_checked, "seconds": round(self.seconds, 6),
                "diagnostics": [d.to_json() for d in self.diagnostics]}
