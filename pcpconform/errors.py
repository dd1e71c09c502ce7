"""The error hierarchy: one root, two kinds of failure, and what the oracles refuse.

``FormatError`` says an input archive breaks the format, with the location a person needs
to find it: file, record index (0 is the label), byte offset of the record and of the
failing field, and the field path. ``UsageError`` says the request itself cannot be met
(no such archive, bad arguments, an invalid fixture). The CLI maps them to exit status 1
and 2. The derived-metric errors carry what libpcp reports for an expression (its syntax
and semantic diagnostics, pmParseUnitsStr and pmConvScale failures).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["PcpConformError", "FormatError", "UsageError", "Location", "FixtureError", "UnitsError",
           "UnitsAbort", "ConvScaleError", "DeriveSyntaxError", "DeriveSemanticError"]


@dataclass(frozen=True)
class Location:
    """Where in an archive something was found."""

    file: str
    record: int | None = None
    offset: int | None = None
    field: str | None = None

    def parts(self, field_word: str = "field ") -> list[str]:
        """The known parts after the file: record, offset, field."""
        parts = []
        if self.record is not None:
            parts.append(f"record {self.record}")
        if self.offset is not None:
            parts.append(f"offset {self.offset}")
        if self.field:
            parts.append(f"{field_word}{self.field}")
        return parts

    def __str__(self) -> str:
        return ", ".join([self.file, *self.parts()])


class PcpConformError(Exception):
    """Root of every error pcpconform raises on purpose."""

    exit_status = 1


class FormatError(PcpConformError, ValueError):
    """The input is not a well-formed PCP archive at ``location``."""

    exit_status = 1

    def __init__(self, message: str, location: Location, code: str = "format") -> None:
        super().__init__(f"{location}: {message}")
        self.message = message
        self.location = location
        self.code = code


class UsageError(PcpConformError):
    """The request cannot be carried out (missing files, bad arguments)."""

    exit_status = 2


class FixtureError(UsageError):
    """A fixture file is not valid; the message names the offending entry."""


class UnitsError(PcpConformError, ValueError):
    """pmParseUnitsStr() rejects a units string; ``message`` is libpcp's text."""

    def __init__(self, message: str):
        self.message = message
        super().__init__(message)


class UnitsAbort(UnitsError):
    """libpcp fails an assertion (and aborts) instead of returning an error."""


class ConvScaleError(PcpConformError, ValueError):
    """pmConvScale failed with ``code`` (PM_ERR_CONV or PM_ERR_UNIT)."""

    def __init__(self, code: int) -> None:
        super().__init__(f"pmConvScale error {code}")
        self.code = code


class DeriveSyntaxError(PcpConformError, ValueError):
    """A syntax error as pmRegisterDerived() reports it.

    ``pos`` is libpcp's returned pointer minus the expression (a byte offset; -1 for an
    empty expression); ``message`` is pmDerivedErrStr(), "" where libpcp has none
    (``has_message`` tells the two apart). ``aborts`` marks the inputs on which libpcp does
    not return at all but kills the process (a double free for ``anon(<bad type>)``, a
    failed assertion in pmParseUnitsStr() for some time scales); ``message`` then says why.
    """

    def __init__(self, pos: int, message: str | None, aborts: bool = False):
        self.pos = pos
        self.message = message or ""
        self.has_message = message is not None
        self.aborts = aborts
        super().__init__(f"at offset {pos}: {self.message or '(no message)'}")


class DeriveSemanticError(PcpConformError):
    """libpcp refused to bind a derived metric.

    ``reason`` is libpcp's reason string, ``subject`` how it prints the failing node, and
    ``text`` the exact line libpcp writes with pmprintf, or "" when libpcp fails silently
    (an unknown operand before 7.1, an operand without metadata)."""

    def __init__(self, metric: str, reason: str, subject: str | None, *,
                 printed: bool = True) -> None:
        self.metric = metric
        self.reason = reason
        self.subject = subject
        self.printed = printed and subject is not None
        self.text = (f"Semantic error: derived metric {metric}: {subject}: {reason}"
                     if self.printed else "")
        super().__init__(self.text or f"derived metric {metric}: {reason} (not reported)")
