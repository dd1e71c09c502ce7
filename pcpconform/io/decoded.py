"""Decoded results: a pmResult's time and value sets, as every decoder gives them.

The construct schema, the bulk decoder and the encoder (bulk.py, encode.py) all speak in
these; ``result_head`` reads a result's time and numpmid as they all do.
"""

from __future__ import annotations

import struct
from typing import Any

from pcpconform.format.pmtypes import Timestamp
from pcpconform.format.schema.common import TimestampT3, TimevalT2
from pcpconform.format.schema.visit import struct_format
from pcpconform.io.reader import RawRecord

__all__ = ["DecodedValueSet", "DecodedResult", "result_head", "RESULT_HEAD"]

#: a result's header after its length word: the timestamp (v2 timeval, v3 64-bit seconds
#: in two words then nanoseconds) and numpmid
RESULT_HEAD = {2: struct.Struct(">" + struct_format(TimevalT2) + "i"),
               3: struct.Struct(">" + struct_format(TimestampT3) + "i")}


def result_head(data: bytes, version: int) -> tuple[Timestamp, int]:
    """A result record's timestamp and numpmid, read from the header after its length word."""
    if version == 2:
        sec, usec, numpmid = RESULT_HEAD[2].unpack_from(data, 4)
        return Timestamp(sec, usec * 1000), numpmid
    lo, hi, nsec, numpmid = RESULT_HEAD[3].unpack_from(data, 4)
    return Timestamp.from_t3(lo, hi, nsec), numpmid


class DecodedValueSet:
    """One metric's values in a result: (instance, typed value) pairs.

    The bulk decoder keeps instances and values as two tuples and pairs them only when
    ``values`` is first read, since checks that work per column never need the pairs.
    """

    __slots__ = ("_columns", "_values", "numval", "pmid", "valfmt")

    def __init__(self, pmid: int, numval: int, valfmt: int | None,
                 values: list[tuple[int, Any]] | None = None,
                 columns: tuple[tuple[int, ...], tuple[Any, ...]] | None = None) -> None:
        self.pmid = pmid
        self.numval = numval
        self.valfmt = valfmt
        self._values = values
        self._columns = columns

    @property
    def values(self) -> list[tuple[int, Any]]:
        if self._values is None:
            self._values = list(zip(*self._columns)) if self._columns else []
        return self._values

    @property
    def columns(self) -> tuple[tuple[int, ...], tuple[Any, ...]]:
        """(instances, values) as two tuples."""
        if self._columns is None:
            vals = self._values or []
            self._columns = (tuple(i for i, _ in vals), tuple(v for _, v in vals))
        return self._columns

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, DecodedValueSet) and self.pmid == other.pmid
                and self.numval == other.numval and self.valfmt == other.valfmt
                and _same_values(self.values, other.values))

    def __repr__(self) -> str:
        return f"DecodedValueSet({self.pmid}, {self.numval}, {self.valfmt}, {self.values!r})"


def _same_values(a: list[tuple[int, Any]], b: list[tuple[int, Any]]) -> bool:
    # NaN != NaN, so compare floats by their representation
    return len(a) == len(b) and all(
        x[0] == y[0] and (x[1] == y[1] or repr(x[1]) == repr(y[1])) for x, y in zip(a, b))


class DecodedResult:
    """A decoded pmResult: timestamp and value sets; a mark has none."""

    __slots__ = ("canonical", "record", "timestamp", "vsets")

    def __init__(self, timestamp: Timestamp, vsets: list[DecodedValueSet],
                 record: RawRecord | None = None, canonical: bool = False) -> None:
        self.timestamp = timestamp
        self.vsets = vsets
        self.record = record
        # True when the record is exactly what writer.layout_result makes of these values
        # (valfmt by type, blocks in value order with the descriptor's type, "~" padding)
        self.canonical = canonical

    @property
    def is_mark(self) -> bool:
        return not self.vsets

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, DecodedResult) and self.timestamp == other.timestamp
                and self.vsets == other.vsets)

    def __repr__(self) -> str:
        return f"DecodedResult({self.timestamp}, {self.vsets!r})"

