"""PCP identifiers, enumerations and units as typed values with PCP's readable forms.

pmID ``60.0.4``, pmInDom ``60.1``, pmUnits ``Kbyte / sec`` and the archive timestamp are
small immutable types; the schemas parse into them and build from them, so every other
module works with values that print the way PCP tools print them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import IntEnum
from functools import total_ordering

__all__ = [
    "PM_ID_NULL", "PM_INDOM_NULL", "PM_IN_NULL",
    "PmID", "PmInDom", "PmUnits", "Timestamp",
    "PmType", "PmSem", "LabelType", "TextType", "ValFmt",
]

PM_ID_NULL = 0xFFFFFFFF
PM_INDOM_NULL = 0xFFFFFFFF
PM_IN_NULL = -1


class PmType(IntEnum):
    """pmDesc.type (``PM_TYPE_*``)."""

    NOSUPPORT = -1
    I32 = 0
    U32 = 1
    I64 = 2
    U64 = 3
    FLOAT = 4
    DOUBLE = 5
    STRING = 6
    AGGREGATE = 7
    AGGREGATE_STATIC = 8
    EVENT = 9
    HIGHRES_EVENT = 10
    UNKNOWN = 255

    @property
    def token(self) -> str:
        """The short name used by fixtures and the JSON Lines dump (``u64``, ``double``)."""
        return _TYPE_TOKENS[self]

    @classmethod
    def from_token(cls, token: str | int) -> PmType:
        if isinstance(token, int):
            return cls(token)
        key = str(token).strip().lower()
        for member, name in _TYPE_TOKENS.items():
            if name == key:
                return member
        raise ValueError(f"unknown metric type {token!r}")


_TYPE_TOKENS = {
    PmType.NOSUPPORT: "nosupport", PmType.I32: "32", PmType.U32: "u32", PmType.I64: "64",
    PmType.U64: "u64", PmType.FLOAT: "float", PmType.DOUBLE: "double",
    PmType.STRING: "string", PmType.AGGREGATE: "aggregate",
    PmType.AGGREGATE_STATIC: "aggregate_static", PmType.EVENT: "event",
    PmType.HIGHRES_EVENT: "highres_event", PmType.UNKNOWN: "unknown",
}

# pmdumplog's words for each type ("Data Type: 64-bit unsigned int").
TYPE_DESCRIPTIONS = {
    PmType.NOSUPPORT: "Not Supported", PmType.I32: "32-bit int",
    PmType.U32: "32-bit unsigned int", PmType.I64: "64-bit int",
    PmType.U64: "64-bit unsigned int", PmType.FLOAT: "float", PmType.DOUBLE: "double",
    PmType.STRING: "string", PmType.AGGREGATE: "aggregate",
    PmType.AGGREGATE_STATIC: "static aggregate", PmType.EVENT: "event record array",
    PmType.HIGHRES_EVENT: "highres event record array", PmType.UNKNOWN: "unknown",
}


class PmSem(IntEnum):
    """pmDesc.sem (``PM_SEM_*``)."""

    COUNTER = 1
    INSTANT = 3
    DISCRETE = 4

    @classmethod
    def from_token(cls, token: str | int) -> PmSem:
        if isinstance(token, int):
            return cls(token)
        return cls[str(token).strip().upper()]


class ValFmt(IntEnum):
    """pmValueSet.valfmt: where each pmValue's value lives."""

    INSITU = 0
    DPTR = 1
    SPTR = 2


class LabelType(IntEnum):
    """Label-set record type (``PM_LABEL_*``); the ident it names depends on it."""

    CONTEXT = 1
    DOMAIN = 2
    INDOM = 4
    CLUSTER = 8
    ITEM = 16
    INSTANCES = 32

    @classmethod
    def from_token(cls, token: str | int) -> LabelType:
        if isinstance(token, int):
            return cls(token)
        return cls[str(token).strip().upper()]


PM_LABEL_COMPOUND = 0x40
PM_LABEL_OPTIONAL = 0x80


class TextType:
    """Help-text record type bits (``PM_TEXT_*``)."""

    ONELINE = 1
    HELP = 2
    PMID = 4
    INDOM = 8


def _split_dotted(text: str, parts: int) -> list[int]:
    fields = text.strip().split(".")
    if len(fields) != parts or not all(re.fullmatch(r"\d+", f) for f in fields):
        raise ValueError(f"{text!r} is not {parts} dot-separated decimal numbers")
    return [int(f) for f in fields]


class PmID(int):
    """A metric identifier: domain (9 bits), cluster (12), item (10), flag (1)."""

    __slots__ = ()

    def __new__(cls, value: int | str) -> PmID:
        if isinstance(value, str) and value.strip().upper() == "PM_ID_NULL":    # what str() gives
            return super().__new__(cls, PM_ID_NULL)
        if isinstance(value, str) and value.strip().lower().startswith("0x"):
            value = int(value, 16)
        if isinstance(value, str):
            domain, cluster, item = _split_dotted(value, 3)
            return cls.from_parts(domain, cluster, item)
        return super().__new__(cls, int(value) & 0xFFFFFFFF)

    @classmethod
    def from_parts(cls, domain: int, cluster: int, item: int) -> PmID:
        if not (0 <= domain < 512 and 0 <= cluster < 4096 and 0 <= item < 1024):
            raise ValueError(f"pmID part out of range: {domain}.{cluster}.{item}")
        return cls((domain << 22) | (cluster << 10) | item)

    @property
    def domain(self) -> int:
        return (self >> 22) & 0x1FF

    @property
    def cluster(self) -> int:
        return (self >> 10) & 0xFFF

    @property
    def item(self) -> int:
        return self & 0x3FF

    def __str__(self) -> str:
        if self == PM_ID_NULL:
            return "PM_ID_NULL"
        if self & 0x80000000:  # the flag bit has no dotted form; hex keeps every bit
            return f"0x{int(self):08x}"
        return f"{self.domain}.{self.cluster}.{self.item}"

    def __repr__(self) -> str:
        return f"PmID('{self}')"


class PmInDom(int):
    """An instance-domain identifier: domain (9 bits), serial (22), flag (1)."""

    __slots__ = ()

    def __new__(cls, value: int | str | None) -> PmInDom:
        if value is None:
            return super().__new__(cls, PM_INDOM_NULL)
        if isinstance(value, str):
            if value.strip().upper() == "PM_INDOM_NULL":
                return super().__new__(cls, PM_INDOM_NULL)
            if value.strip().lower().startswith("0x"):
                return super().__new__(cls, int(value, 16) & 0xFFFFFFFF)
            domain, serial = _split_dotted(value, 2)
            if not (0 <= domain < 512 and 0 <= serial < (1 << 22)):
                raise ValueError(f"pmInDom part out of range: {value}")
            return super().__new__(cls, (domain << 22) | serial)
        return super().__new__(cls, int(value) & 0xFFFFFFFF)

    @property
    def is_null(self) -> bool:
        return self == PM_INDOM_NULL

    @property
    def domain(self) -> int:
        return (self >> 22) & 0x1FF

    @property
    def serial(self) -> int:
        return self & 0x3FFFFF

    def __str__(self) -> str:
        if self.is_null:
            return "PM_INDOM_NULL"
        if self & 0x80000000:
            return f"0x{int(self):08x}"
        return f"{self.domain}.{self.serial}"

    def __repr__(self) -> str:
        return f"PmInDom('{self}')"


_SPACE_NAMES = ["byte", "Kbyte", "Mbyte", "Gbyte", "Tbyte", "Pbyte", "Ebyte", "Zbyte", "Ybyte"]
_TIME_NAMES = ["nanosec", "microsec", "millisec", "sec", "min", "hour"]
_TIME_WORDS = {"nsec": 0, "nanosec": 0, "usec": 1, "microsec": 1, "msec": 2, "millisec": 2,
               "sec": 3, "min": 4, "hour": 5}


def _count_scale(scale: int) -> str:
    if scale == 0:
        return ""
    return " x 10" if scale == 1 else f" x 10^{scale}"


@dataclass(frozen=True, slots=True)
class PmUnits:
    """pmUnits: dimensions and scales of space, time and count, plus the low byte.

    The low byte was padding before PCP 7.2 and is extraUnit (5 bits) / extraScale (3 bits)
    since; it is kept whole so that no archive loses a bit.
    """

    dimSpace: int = 0
    dimTime: int = 0
    dimCount: int = 0
    scaleSpace: int = 0
    scaleTime: int = 0
    scaleCount: int = 0
    extraUnit: int = 0
    extraScale: int = 0

    def to_word(self) -> int:
        def nib(v: int) -> int:
            return v & 0xF
        return (nib(self.dimSpace) << 28 | nib(self.dimTime) << 24 | nib(self.dimCount) << 20
                | nib(self.scaleSpace) << 16 | nib(self.scaleTime) << 12
                | nib(self.scaleCount) << 8 | (self.extraUnit & 0x1F) << 3
                | (self.extraScale & 0x7))

    @classmethod
    def from_word(cls, word: int) -> PmUnits:
        def signed(v: int, bits: int) -> int:
            return v - (1 << bits) if v & (1 << (bits - 1)) else v
        return cls(
            dimSpace=signed(word >> 28 & 0xF, 4), dimTime=signed(word >> 24 & 0xF, 4),
            dimCount=signed(word >> 20 & 0xF, 4), scaleSpace=word >> 16 & 0xF,
            scaleTime=word >> 12 & 0xF, scaleCount=signed(word >> 8 & 0xF, 4),
            extraUnit=signed(word >> 3 & 0x1F, 5), extraScale=word & 0x7,
        )

    def __str__(self) -> str:
        """The form pmdumplog prints (libpcp's pmUnitsStr), ``none`` for no dimension."""
        text = self.unit_string()
        return text if text else "none"

    def unit_string(self) -> str:
        """libpcp's pmUnitsStr: positive dimensions, then ``/`` and the negative ones."""
        def word(dim: int, kind: str) -> str:
            if kind == "space":
                name = (_SPACE_NAMES[self.scaleSpace] if self.scaleSpace < len(_SPACE_NAMES)
                        else f"space-{self.scaleSpace}")
            elif kind == "time":
                name = (_TIME_NAMES[self.scaleTime] if self.scaleTime < len(_TIME_NAMES)
                        else f"time-{self.scaleTime}")
            else:
                name = "count" + _count_scale(self.scaleCount)
            return name if abs(dim) == 1 else f"{name}^{abs(dim)}"

        dims = ((self.dimSpace, "space"), (self.dimTime, "time"), (self.dimCount, "count"))
        numer = [word(d, k) for d, k in dims if d > 0]
        denom = [word(d, k) for d, k in dims if d < 0]
        if not numer and not denom:
            # a scale with no dimension still shows, as libpcp prints "x 10^N"
            return _count_scale(self.scaleCount).strip()
        text = " ".join(numer)
        if denom:
            text = (text + " / " if text else "/ ") + " ".join(denom)
        return text

    @classmethod
    def parse(cls, text: str) -> PmUnits:
        """Parse the readable form (``Kbyte / sec``, ``count``, ``none``, ``byte^2``)."""
        text = text.strip()
        if text in ("", "none"):
            return cls()
        fields = {"dimSpace": 0, "dimTime": 0, "dimCount": 0,
                  "scaleSpace": 0, "scaleTime": 0, "scaleCount": 0}
        numer, _, denom = text.partition("/")
        for side, sign in ((numer, 1), (denom, -1)):
            side = re.sub(r"count x 10\^(-?\d+)", r"count@\1", side)
            side = re.sub(r"count x 10\b", "count@1", side)
            for word in side.split():
                m = re.fullmatch(r"([A-Za-z]+)(?:@(-?\d+))?(?:\^(\d+))?", word)
                if not m:
                    raise ValueError(f"cannot read units {text!r}")
                name, count_scale, power = m.group(1), m.group(2), int(m.group(3) or 1)
                if name in _SPACE_NAMES:
                    fields["dimSpace"] += sign * power
                    fields["scaleSpace"] = _SPACE_NAMES.index(name)
                elif name in _TIME_WORDS:
                    fields["dimTime"] += sign * power
                    fields["scaleTime"] = _TIME_WORDS[name]
                elif name == "count":
                    fields["dimCount"] += sign * power
                    fields["scaleCount"] = int(count_scale or 0)
                else:
                    raise ValueError(f"unknown unit {name!r} in {text!r}")
        return cls(**fields)


@total_ordering
@dataclass(frozen=True, slots=True)
class Timestamp:
    """An archive time: seconds since the epoch and nanoseconds.

    v2 records store microseconds; they parse to ``nsec = usec * 1000`` and build back by
    integer division, so the mapping is exact in both directions.
    """

    sec: int
    nsec: int = 0

    @property
    def usec(self) -> int:
        return self.nsec // 1000

    def __lt__(self, other: Timestamp) -> bool:
        return (self.sec, self.nsec) < (other.sec, other.nsec)

    def total_nsec(self) -> int:
        return self.sec * 1_000_000_000 + self.nsec

    @classmethod
    def from_t3(cls, sec_low: int, sec_high: int, nsec: int) -> Timestamp:
        """A v3 record time: the 64-bit seconds as two unsigned words (low first), signed."""
        sec = sec_low | sec_high << 32
        return cls(sec - (1 << 64) if sec >> 63 else sec, nsec)

    @classmethod
    def from_nsec(cls, total: int) -> Timestamp:
        sec, nsec = divmod(total, 1_000_000_000)
        return cls(sec, nsec)

    def __str__(self) -> str:
        return f"{self.sec}.{self.nsec:09d}"
