"""The error hierarchy: one root, two kinds of failure.

``FormatError`` says an input archive breaks the format, with the location a person needs
to find it: file, record index (0 is the label), byte offset of the record and of the
failing field, and the field path. ``UsageError`` says the request itself cannot be met
(no such archive, bad arguments). The CLI maps them to exit status 1 and 2.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["PcpConformError", "FormatError", "UsageError", "Location"]


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
