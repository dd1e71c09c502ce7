"""What the checks of one MMV file share: its bytes, where findings go, and the facts earlier
checks leave for later ones (sections, indoms, instances, metrics, string slots)."""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from functools import cache
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt
from construct import Construct

from pcpconform.check.diagnostics import Report
from pcpconform.mmv.schema import STRING_SIZE, MmvStructs

__all__ = ["Section", "IndomFact", "MetricFact", "SlotBatch", "MmvContext"]


@dataclass(frozen=True)
class Section:
    """One TOC entry as the checks use it (count 0 when negative)."""

    toc: int            # index in the TOC
    type: int
    count: int
    offset: int
    entry_size: int

    @property
    def end(self) -> int:
        return self.offset + self.count * self.entry_size

    def fitting(self, size: int) -> int:
        """How many of its entries lie wholly inside a file of ``size`` bytes."""
        if self.offset >= size:
            return 0
        return min(self.count, (size - self.offset) // self.entry_size)


@dataclass
class IndomFact:
    index: int
    offset: int
    serial: int
    instances: dict[int, str | None] = field(default_factory=dict)   # internal -> name
    readable: bool = True  # False: its instances lie outside the file (reported once)


@dataclass
class MetricFact:
    index: int
    offset: int
    name: str | None       # None: unreadable
    exported: str | None   # the PMNS name, None when the PMDA does not export the metric
    item: int
    type: int
    semantics: int
    dimension: int
    indom: int             # serial as stored (unsigned)
    candidate: str | None = None  # the name the PMDA inserts (its name and item pass)


class SlotBatch(NamedTuple):
    """String slots the column pass reached, in the order the per-entry checks reach them:
    what MmvContext.slot records for each, as arrays (slot k: field
    ``fields[kinds[k]].format(rows[k])``, record ``record`` or, when None, ``rows[k]``)."""

    offsets: npt.NDArray[np.int64]
    rows: npt.NDArray[np.int64]
    fields: tuple[str, ...]
    kinds: npt.NDArray[np.int64] | None     # None: every slot of fields[0]
    record: int | None
    wheres: npt.NDArray[np.int64]

    def entry(self, k: int) -> tuple[int, str, int | None, int]:
        row = int(self.rows[k])
        fmt = self.fields[0 if self.kinds is None else int(self.kinds[k])]
        return (int(self.offsets[k]), fmt.format(row),
                row if self.record is None else self.record, int(self.wheres[k]))


class MmvContext:
    """One MMV file under check."""

    def __init__(self, data: Any, path: str, name: str, report: Report, cluster: int) -> None:
        self.data = data            # bytes or an mmap
        self.size = len(data)
        self.file = path
        self.name = name            # the file's name in its directory (the PMDA's prefix)
        self.report = report
        self.cluster = cluster      # the PMID cluster the PMDA uses for the file
        self.requested_cluster = 0  # the header's (0: the PMDA chooses)
        self.version = 0
        self.flags = 0
        self.toc_end = 0            # end of the header and the TOC
        self.structs: MmvStructs | None = None
        self.sections: dict[int, Section] = {}
        self.extra_sections: list[Section] = []   # repeats of sections the PMDA ignores
        self.misplaced: set[int] = set()   # TOC indices of sections reported as misplaced
        self.indoms: list[IndomFact] = []
        self.instance_at: dict[int, tuple[int, int]] = {}   # offset -> (serial, internal)
        self.metrics: list[MetricFact] = []
        self.metric_at: dict[int, MetricFact] = {}
        # slot, field, record, field offset; or many of them from the column pass
        self.slots: list[tuple[int, str, int | None, int] | SlotBatch] = []
        self.columns = True         # False: every entry checked one by one (columns.py)

    def add(self, code: str, message: str, *, record: int | None = None,
            offset: int | None = None, field: str | None = None) -> None:
        self.report.add(code, self.file, message, record=record, offset=offset, field=field)

    def parse(self, schema: Construct, offset: int, size: int) -> Any:
        """The entry at offset (the caller has checked that it lies inside the file)."""
        fast = _compiled(schema)
        if fast is None:
            return schema.parse(bytes(self.data[offset:offset + size]))
        layout, names = fast
        return Entry(zip(names, layout.unpack_from(self.data, offset)))

    def slot(self, offset: int, *, code: str, nul_code: str, fld: str, record: int | None,
             where: int, optional: bool = False) -> str | None:
        """The text of the 256-byte string slot at ``offset``, named by the field at ``where``;
        None (reported under ``code``) when it is not a whole slot after the TOC. A slot
        without a NUL is reported under ``nul_code`` and read as readers read it (255 bytes)."""
        if offset == 0 and optional:
            return None
        if offset < self.toc_end or offset + STRING_SIZE > self.size:
            self.add(code, f"string offset {offset} is not a 256-byte slot after the TOC and inside"
                     f" the file ({self.size} bytes)", record=record, offset=where, field=fld)
            return None
        self.slots.append((offset, fld, record, where))
        raw = bytes(self.data[offset:offset + STRING_SIZE])
        end = raw.find(b"\0")
        if end < 0:
            self.add(nul_code, f"the string slot at {offset} has no NUL in its 256 bytes",
                     record=record, offset=offset, field=fld)
            end = STRING_SIZE - 1
        return raw[:end].decode("utf-8", "surrogateescape")


class Entry(dict[str, Any]):
    """A parsed entry: its fields by the schema's names, as items or attributes."""

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


@cache
def _compiled(schema: Construct) -> tuple[struct.Struct, tuple[str, ...]] | None:
    """The schema as one struct format (its fields are fixed-size integers and byte strings),
    or None: entries are parsed by the thousand, construct's parse is slow for that."""
    fmt, names = "<", []
    for sc in getattr(schema, "subcons", ()):
        inner = sc
        while not hasattr(inner, "fmtstr") and type(inner).__name__ != "Bytes":
            inner = getattr(inner, "subcon", None)
            if inner is None:
                return None
        if hasattr(inner, "fmtstr"):
            if not inner.fmtstr.startswith("<"):
                return None
            fmt += inner.fmtstr[1:]
        elif isinstance(getattr(inner, "length", None), int):
            fmt += f"{inner.length}s"
        else:
            return None
        names.append(sc.name)
    layout = struct.Struct(fmt)
    return (layout, tuple(names)) if names and layout.size == schema.sizeof() else None
