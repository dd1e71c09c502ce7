"""A result's time against the previous result's and the archive start (FMT-RESULT-5, FMT-TIME-3).

Like the value rules (values.py), the time rule states its two forms side by side: ``check``
on the reference path (results.py), ``columns`` on a learned shape (columns.py, shape.py).
"""

from __future__ import annotations

import enum
import struct
from collections.abc import Callable

from pcpconform.check.describe import stamp_text
from pcpconform.check.shape import LearnedShape, ShapeCheck
from pcpconform.check.state import Context
from pcpconform.fastpath import Declined
from pcpconform.format.pmtypes import Timestamp
from pcpconform.io.decoded import RESULT_HEAD
from pcpconform.io.reader import RawRecord

__all__ = ["TimeRule", "TimeReason", "RECORD_RULES"]

_STAMP_AT = 4                            # a result's timestamp follows its length word
_NSEC = 1_000_000_000
#: the timestamp words of a result header (v2: sec, usec; v3: sec low, sec high, nsec)
_STAMP = {v: struct.Struct(head.format[:-1]) for v, head in RESULT_HEAD.items()}


class TimeReason(enum.Enum):
    """Why a record of a learned shape goes to the reference path."""

    FRACTION = "fraction of a second out of range"
    ORDER = "earlier than the previous result"
    BEFORE_START = "before the archive start"


class TimeRule:
    """time.fraction, result.time-order, result.before-start; keeps the latest time."""

    codes = ("time.fraction", "result.time-order", "result.before-start")

    def check(self, ctx: Context, rec: RawRecord, stamp: Timestamp, version: int) -> None:
        st, f, i = ctx.st, rec.file, rec.index
        ns = stamp.total_nsec()
        ctx.time(stamp, f, i, rec.offset + _STAMP_AT, "result.timestamp", version)
        if st.last_result is not None and ns < st.last_result:
            ctx.add("result.time-order", f, f"timestamp {stamp_text(stamp)} is earlier than the previous "
                    f"result's {stamp_text(Timestamp.from_nsec(st.last_result))} (pmFetch and pmdumplog skip "
                    "this result)", record=i, offset=rec.offset + _STAMP_AT, field="result.timestamp")
        if st.start is not None and stamp < st.start:
            ctx.add("result.before-start", f, f"timestamp {stamp_text(stamp)} is before the archive start "
                    f"{stamp_text(st.start)}", record=i, offset=rec.offset + _STAMP_AT, field="result.timestamp")
        st.last_result = ns if st.last_result is None else max(ns, st.last_result)

    def columns(self, ctx: Context, shape: LearnedShape) -> ShapeCheck | None:
        st = ctx.st
        stamp = _STAMP[shape.version]
        v3 = shape.version == 3
        start = None if st.start is None else st.start.total_nsec()

        def in_order(data: bytes, ns: int) -> Callable[[], None]:
            fraction = stamp.unpack_from(data, _STAMP_AT)[-1]
            if not 0 <= fraction < (_NSEC if v3 else 1_000_000):
                raise Declined(TimeReason.FRACTION)
            if st.last_result is not None and ns < st.last_result:
                raise Declined(TimeReason.ORDER)
            if start is not None and ns < start:
                raise Declined(TimeReason.BEFORE_START)

            def commit() -> None:
                st.last_result = ns
            return commit
        return in_order


#: the rules over a whole result, in the order the reference path applies them
RECORD_RULES = [TimeRule()]
