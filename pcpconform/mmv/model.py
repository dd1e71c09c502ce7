"""What an MMV file holds, independent of its layout, and the PCP identity the PMDA gives it.

Offsets do not appear here: the reader resolves them and the writer lays them out again.
Raw bytes stay where a typed view would lose some (a value's pmAtomValue word); text is
decoded as UTF-8 with surrogateescape, so any byte string survives a round trip.
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from pcpconform.format.pmtypes import PmID, PmInDom, PmUnits
from pcpconform.mmv.pmns import PmdaNamespace

__all__ = [
    "MMV_DOMAIN", "FLAG_NOPREFIX", "FLAG_PROCESS", "FLAG_SENTINEL", "TYPE_NOSUPPORT",
    "TYPE_I32", "TYPE_U32", "TYPE_I64", "TYPE_U64", "TYPE_FLOAT", "TYPE_DOUBLE", "TYPE_STRING",
    "TYPE_ELAPSED", "MMV_TYPES", "SEM_COUNTER", "SEM_INSTANT", "SEM_DISCRETE",
    "LABEL_INDOM", "LABEL_CLUSTER", "LABEL_ITEM", "LABEL_INSTANCES", "LABEL_OPTIONAL",
    "PM_IN_NULL", "Instance", "Indom", "Value", "ValueSource", "Metric", "Label", "MmvFile",
    "is_singular",
    "encode_text", "decode_text", "exported_name", "exported_pmid", "exported_indom", "pmda_name_ok",
    "Exported", "exported_metrics",
]

MMV_DOMAIN = 70  # the MMV PMDA's domain number

FLAG_NOPREFIX = 0x1
FLAG_PROCESS = 0x2
FLAG_SENTINEL = 0x4

TYPE_NOSUPPORT = -1
TYPE_I32 = 0
TYPE_U32 = 1
TYPE_I64 = 2
TYPE_U64 = 3
TYPE_FLOAT = 4
TYPE_DOUBLE = 5
TYPE_STRING = 6
TYPE_ELAPSED = 9
#: the codes libpcp_mmv writes and the PMDA serves (7 and 8 pass the writer's range check
#: but are no MMV type: the PMDA has no case for them)
MMV_TYPES = (TYPE_NOSUPPORT, TYPE_I32, TYPE_U32, TYPE_I64, TYPE_U64, TYPE_FLOAT, TYPE_DOUBLE,
             TYPE_STRING, TYPE_ELAPSED)

SEM_COUNTER = 1
SEM_INSTANT = 3
SEM_DISCRETE = 4

LABEL_INDOM = 0x4
LABEL_CLUSTER = 0x8
LABEL_ITEM = 0x10
LABEL_INSTANCES = 0x20
LABEL_OPTIONAL = 0x80
PM_IN_NULL = -1

#: the PMDA's character rule for a whole exported name (verify_metric_name, C locale)
_PMDA_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_.]*")


def pmda_name_ok(name: str) -> bool:
    """verify_metric_name's character rule (isalpha/isalnum in the C locale: ASCII only)."""
    return _PMDA_NAME.fullmatch(name) is not None
_ATOM_FORMATS = {TYPE_I32: "<i", TYPE_U32: "<I", TYPE_I64: "<q", TYPE_U64: "<Q",
                 TYPE_FLOAT: "<f", TYPE_DOUBLE: "<d", TYPE_ELAPSED: "<q"}


def encode_text(text: str) -> bytes:
    """A name or string as stored: UTF-8, undecodable bytes restored (surrogateescape)."""
    return text.encode("utf-8", "surrogateescape")


def decode_text(raw: bytes) -> str:
    """The text of a stored name or string (bytes up to, not including, the NUL)."""
    return raw.decode("utf-8", "surrogateescape")


def is_singular(indom: int) -> bool:
    """A metric indom of 0 or -1 (0xffffffff) means no instance domain (mmv_singular)."""
    return indom in (0, -1)


@dataclass(frozen=True)
class Instance:
    internal: int
    name: str


@dataclass(frozen=True)
class Indom:
    serial: int
    instances: tuple[Instance, ...] = ()
    shorttext: str | None = None
    helptext: str | None = None


class Value(NamedTuple):
    """One value: of a singular metric (instance None) or of one instance (its internal id).

    A named tuple rather than a frozen dataclass: a file holds up to 10^5 or more values,
    and the reader builds them with the C-level ``Value._make``."""

    instance: int | None = None
    atom: bytes = bytes(8)         # the pmAtomValue word as stored
    extra: int = 0
    string: str | None = None      # a STRING metric's slot text, None for other types

    def typed(self, mmv_type: int) -> int | float | str | None:
        """The value as the metric's type reads it (ELAPSED: the accumulated microseconds;
        NOSUPPORT: None)."""
        if mmv_type == TYPE_STRING:
            return self.string
        fmt = _ATOM_FORMATS.get(mmv_type)
        if fmt is None:
            return None
        value: int | float = struct.unpack_from(fmt, self.atom)[0]
        return value

    @staticmethod
    def of(mmv_type: int, value: int | float, instance: int | None = None,
           extra: int = 0) -> Value:
        """A value of a numeric type stored as libpcp_mmv stores it (upper bytes zero)."""
        fmt = _ATOM_FORMATS[mmv_type]
        raw = struct.pack(fmt, value)
        return Value(instance, raw + bytes(8 - len(raw)), extra)


class ValueSource:
    """Values not made yet: the reader leaves a metric's values as columns of the file
    (``pcpconform.mmv.columns``) and makes the tuple of ``Value`` the first time it is read."""

    def materialize(self) -> tuple[Value, ...]:
        raise NotImplementedError


class _Values:
    """``Metric.values``: always read as what was given, except that a ValueSource is made
    into its tuple of values on first reading (and kept), so equality, hashing, repr and
    every user see the same tuple whichever way the metric was built."""

    def __get__(self, obj: object | None, owner: Any = None) -> tuple[Value, ...]:
        if obj is None:
            return ()        # the dataclass reads the default this way
        held = obj.__dict__["values"]
        if isinstance(held, ValueSource):
            held = held.materialize()
            obj.__dict__["values"] = held
        made: tuple[Value, ...] = held
        return made

    def __set__(self, obj: object, value: tuple[Value, ...] | ValueSource) -> None:
        obj.__dict__["values"] = value     # only __init__ gets here: Metric is frozen

    def source(self, obj: object) -> ValueSource | None:
        """The columns behind obj's values while they are not made yet."""
        held = obj.__dict__.get("values")
        return held if isinstance(held, ValueSource) else None


@dataclass(frozen=True)
class Metric:
    name: str
    item: int
    type: int
    semantics: int = SEM_COUNTER
    dimension: int = 0             # pmUnits word as stored
    indom: int = 0                 # serial; 0 or -1: singular
    shorttext: str | None = None
    helptext: str | None = None
    values: _Values = _Values()

    @property
    def units(self) -> PmUnits:
        return PmUnits.from_word(self.dimension)

    @property
    def value_source(self) -> ValueSource | None:
        """The columns the values will be made from, None once made (or when given as a tuple)."""
        return _VALUES.source(self)


_VALUES: _Values = Metric.__dict__["values"]


@dataclass(frozen=True)
class Label:
    flags: int
    identity: int
    internal: int
    payload: str                   # the JSON text up to its NUL


@dataclass(frozen=True)
class MmvFile:
    version: int
    g1: int
    g2: int
    flags: int = 0
    process: int = 0
    cluster: int = 0
    indoms: tuple[Indom, ...] = ()
    metrics: tuple[Metric, ...] = ()
    labels: tuple[Label, ...] = field(default=())

    def indom(self, serial: int) -> Indom | None:
        return next((d for d in self.indoms if d.serial == serial), None)


def exported_name(file_name: str, metric_name: str, flags: int) -> str:
    """The PMNS name the PMDA gives a metric: mmv.<file>.<name>, or mmv.<name> with NOPREFIX."""
    if flags & FLAG_NOPREFIX:
        return f"mmv.{metric_name}"
    return f"mmv.{file_name}.{metric_name}"


def exported_pmid(cluster: int, item: int) -> PmID:
    """PMID 70.cluster.item (cluster: the header's, or the one the PMDA chose for 0)."""
    return PmID.from_parts(MMV_DOMAIN, cluster, item)


def exported_indom(cluster: int, serial: int) -> PmInDom:
    """InDom 70.((cluster << 11) | serial); serials of 2048 and more collide across files."""
    return PmInDom((MMV_DOMAIN << 22) | (((cluster << 11) | serial) & 0x3FFFFF))


@dataclass(frozen=True)
class Exported:
    """A metric as the MMV PMDA exports it."""

    name: str
    pmid: PmID
    indom: PmInDom         # PM_INDOM_NULL for a singular metric
    metric: Metric


def exported_metrics(mmv: MmvFile, file_name: str, cluster: int | None = None) -> list[Exported]:
    """The metrics the PMDA exports by name from a file named file_name, alone in its
    directory, in file order.

    ``cluster`` is the one the PMDA uses for the file: the header's unless it is 0 (then
    the PMDA chooses; pass its choice). As the PMDA does, it skips a name that is empty or
    breaks its character rule, an item above 1023 or repeated (the first of a repeated item
    wins), and a name its namespace refuses or hides (MMV-ID-3)."""
    use = mmv.cluster if cluster is None else cluster
    names = PmdaNamespace()
    seen: set[int] = set()
    out = []
    for m in mmv.metrics:
        item_ok = m.item <= 1023 and m.item not in seen
        seen.add(m.item)
        name = exported_name(file_name, m.name, mmv.flags)
        if not (m.name and item_ok and pmda_name_ok(name)) or not names.add(name).exported:
            continue
        indom = PmInDom(None) if is_singular(m.indom) else exported_indom(use, m.indom)
        out.append(Exported(name, exported_pmid(use, m.item), indom, m))
    return out
