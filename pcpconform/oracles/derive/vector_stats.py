"""What the vectorised evaluation of derived metrics did: how many metric-fetches it
evaluated, and why it left the others to the per-fetch evaluator (without numpy, so the
evaluator imports it before it starts vectorising)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from enum import StrEnum

__all__ = ["Reason", "RowReason", "VectorStats"]


class Reason(StrEnum):
    """Why a metric-fetch went to the per-fetch evaluator."""

    DISABLED = "vectorising turned off"
    HISTORY = "delta()/rate() keep a previous sample"
    NODE = "node kind evaluated per fetch"
    NAME = "name unknown, nested or not numeric"
    CONSTANT_INDOM = "constant with an instance domain"
    MIXED_TYPES = "operand types the result type does not promote from"
    ZERO_DIVISOR = "scale divisor wrapped to 0"
    SHORT_RUN = "instance lists change within a few fetches"
    VALUES = "operand values outside their type"


class RowReason(StrEnum):
    """Why a fetch's CSV rows were made from its sample rather than from columns
    (``csv_rows.csv_columns``)."""

    FETCHED = "a metric evaluated per fetch, or end of log"
    PARTIAL = "a column without a value for every instance the rows list"
    QUOTED = "a field that needs quoting"


@dataclass
class VectorStats:
    """Metric-fetches evaluated here, and those left to the per-fetch evaluator by reason;
    fetches whose CSV rows were written from columns, and the others by reason."""

    vectorised: int = 0
    fallbacks: Counter[Reason] = field(default_factory=Counter)
    csv_columns: int = 0
    csv_rows: Counter[RowReason] = field(default_factory=Counter)
