"""MMV sections as numpy columns: entry dtypes derived from the schemas, string slots checked
in bulk, and values kept as columns until a metric's values are read.

A file at the PMDA's limits holds 10^5 values; building a Python object for each costs more
than reading the file. The reader's column path checks whole sections with array operations
and leaves each metric's values as a ``ValueRun``; whatever a check flags sends it back to
the per-entry path, which names the error. Every such return is counted in ``FALLBACKS`` by
its reason, so a test can tell when the column path is silently not taken.
"""

from __future__ import annotations

import enum
import gc
import struct
from collections import Counter
from functools import cache
from itertools import repeat
from operator import add
from typing import Any

import numpy as np
import numpy.typing as npt
from construct import Bytes, Construct, FormatField

from pcpconform.fastpath import Declined, PathStats, import_kernel, register
from pcpconform.mmv.model import Value, ValueSource
from pcpconform.mmv.schema import HEADER_SIZE, STRING_SIZE, VALUE_SIZE

__all__ = ["Fallback", "FALLBACKS", "Flagged", "entry_dtype", "entry_struct", "entries", "slot_ends",
           "inline_ends", "decode_slots", "ValueColumns", "ValueRun", "KernelReason", "KERNEL_ERROR",
           "VALUE_RUN", "reference_value_run", "kernel_value_run"]

_kernel, KERNEL_ERROR = import_kernel("pcpconform.mmv._mmvcols")

# struct format codes of the schemas' integer fields, as numpy type codes
_NUMPY_CODES = {"b": "i1", "B": "u1", "h": "i2", "H": "u2", "i": "i4", "I": "u4", "l": "i4",
                "L": "u4", "q": "i8", "Q": "u8", "f": "f4", "d": "f8"}


class Fallback(enum.Enum):
    """Why a file was handed back to the per-entry path."""

    INDOM = "an indom or instance entry failed a column check"
    METRIC = "a metric entry failed a column check"
    VALUE = "a value entry failed a column check"


#: how often each reason sent a file back to the per-entry path (in this process)
FALLBACKS: Counter[Fallback] = Counter()


class Flagged(Exception):
    """A column check found something the per-entry path must look at."""

    def __init__(self, reason: Fallback) -> None:
        super().__init__(reason.value)
        self.reason = reason


def _fields(schema: Construct) -> list[tuple[str, str | int]]:
    """A fixed-size schema's fields in order: name, and its struct code (integers, all
    little-endian) or its length (byte strings)."""
    out: list[tuple[str, str | int]] = []
    for sc in schema.subcons:
        inner = sc
        while not isinstance(inner, (FormatField, Bytes)):
            inner = inner.subcon         # Renamed, documented or not
        if isinstance(inner, Bytes):
            out.append((sc.name, int(inner.length)))
        elif inner.fmtstr[0] == "<":
            out.append((sc.name, inner.fmtstr[1:]))
        else:
            raise ValueError(f"field {sc.name} is not little-endian")
    return out


@cache
def entry_dtype(schema: Construct) -> np.dtype[np.void]:
    """The numpy structured dtype of a fixed-size schema: its fields' names, offsets and sizes
    as the schema declares them; integers little-endian, byte strings raw ("V")."""
    fields = _fields(schema)
    formats = [f"V{f}" if isinstance(f, int) else "<" + _NUMPY_CODES[f] for _, f in fields]
    dtype = np.dtype({"names": [name for name, _ in fields], "formats": formats})
    if dtype.itemsize != schema.sizeof():
        raise ValueError(f"fields of {dtype.itemsize} bytes in a {schema.sizeof()}-byte entry")
    return dtype


@cache
def entry_struct(schema: Construct) -> struct.Struct:
    """The same layout as a struct format, for reading entries one at a time."""
    layout = struct.Struct("<" + "".join(f"{f}s" if isinstance(f, int) else f
                                         for _, f in _fields(schema)))
    if layout.size != schema.sizeof():
        raise ValueError(f"fields of {layout.size} bytes in a {schema.sizeof()}-byte entry")
    return layout


def entries(data: bytes, schema: Construct, offset: int, count: int) -> npt.NDArray[np.void]:
    """count entries of schema from offset (the caller has checked they lie inside data)."""
    dtype = entry_dtype(schema)
    if count == 0:
        return np.zeros(0, dtype)
    return np.frombuffer(data, dtype, count, offset)


def slot_ends(data: bytes, offsets: list[int]) -> list[int] | None:
    """Where the text of each string slot ends (its NUL); None when an offset is not a whole
    slot after the header, or its 256 bytes hold no NUL (the per-entry path says which)."""
    if not offsets:
        return []
    if min(offsets) < HEADER_SIZE or max(offsets) > len(data) - STRING_SIZE:
        return None
    ends = list(map(data.find, repeat(b"\0"), offsets, map(add, offsets, repeat(STRING_SIZE))))
    return None if -1 in ends else ends


def inline_ends(raw: npt.NDArray[Any]) -> list[int] | None:
    """The length of each inline name of a "V" column (its first NUL); None when one has none."""
    if len(raw) == 0:
        return []
    nul = raw.view(np.uint8).reshape(len(raw), raw.dtype.itemsize) == 0
    if not nul.any(axis=1).all():
        return None
    ends: list[int] = nul.argmax(axis=1).tolist()
    return ends


def decode_slots(data: bytes, offsets: list[int], ends: list[int]) -> list[str]:
    """The texts of string slots whose ends slot_ends found."""
    return [data[at:end].decode("utf-8", "surrogateescape") for at, end in zip(offsets, ends)]


class ValueColumns:
    """The values section as columns, one row per value entry: what each Value is made of.

    The section's entries start at ``base`` of ``data`` (``VALUE_SIZE`` bytes each: the
    atom, then the extra). Rows of STRING values hold their slot's start and end in
    ``string_at``/``string_end``. The file's bytes stay referenced until every metric's
    values are made; ``stats`` counts how each run was made (``VALUE_RUN``). The reference
    turns the columns into Python lists once, which every later run slices."""

    def __init__(self, data: bytes, base: int, atoms: npt.NDArray[Any], extras: npt.NDArray[np.int64],
                 internals: npt.NDArray[np.int64], string_at: npt.NDArray[np.int64],
                 string_end: npt.NDArray[np.int64], stats: PathStats | None = None) -> None:
        self.data = data
        self.base = base
        self.atoms = atoms              # "V8": the pmAtomValue words as stored
        self.extras = extras
        # int64 and contiguous, as the kernel reads them
        self.internals = np.ascontiguousarray(internals, np.int64)   # each value's instance id
        self.string_at = np.ascontiguousarray(string_at, np.int64)
        self.string_end = np.ascontiguousarray(string_end, np.int64)
        self.stats = PathStats() if stats is None else stats
        self._lists: tuple[list[bytes], list[int], list[int]] | None = None

    def lists(self) -> tuple[list[bytes], list[int], list[int]]:
        """atoms, extras and internals as Python lists (made once)."""
        if self._lists is None:
            raw = np.ascontiguousarray(self.atoms).tobytes()
            self._lists = ([raw[k:k + 8] for k in range(0, len(raw), 8)],
                           self.extras.tolist(), self.internals.tolist())
        return self._lists


class ValueRun(ValueSource):
    """One metric's values: rows of a ValueColumns (a slice when the file lays them out
    metric by metric, as libpcp_mmv does, else their indices in file order)."""

    __slots__ = ("columns", "rows", "singular", "string")

    def __init__(self, columns: ValueColumns, rows: slice | npt.NDArray[np.intp], singular: bool,
                 string: bool) -> None:
        self.columns = columns
        self.rows = rows
        self.singular = singular        # instance None for every value
        self.string = string            # a STRING metric: text from the slot, extra 0

    def materialize(self) -> tuple[Value, ...]:
        # as in parse_mmv: many tuples at once, no cycles for the collector to find
        enabled = gc.isenabled()
        gc.disable()
        try:
            return self._make()
        finally:
            if enabled:
                gc.enable()

    def _make(self) -> tuple[Value, ...]:
        return VALUE_RUN(self.columns.stats, self)


class KernelReason(enum.Enum):
    NOT_BUILT = "the compiled kernel pcpconform.mmv._mmvcols is not built or does not import"
    OUTSIDE = "a row or a string slot lies outside the columns given"


def reference_value_run(run: ValueRun) -> tuple[Value, ...]:
    """A run's Values made in Python from the columns' lists (the reference)."""
    c, rows = run.columns, run.rows
    atoms, extras, internals = (_pick(column, rows) for column in c.lists())
    instances: Any = repeat(None) if run.singular else internals
    if run.string:
        strings: Any = decode_slots(c.data, c.string_at[rows].tolist(), c.string_end[rows].tolist())
        extras = repeat(0)  # type: ignore[assignment]
    else:
        strings = repeat(None)
    return tuple(map(tuple.__new__, repeat(Value), zip(instances, atoms, extras, strings)))


def kernel_value_run(run: ValueRun) -> tuple[Value, ...]:
    """``reference_value_run`` by the compiled kernel, from the file's bytes."""
    if _kernel is None:
        raise Declined(KernelReason.NOT_BUILT)
    c, rows = run.columns, run.rows
    listed: Any
    if isinstance(rows, slice):
        lo, hi, listed = rows.start, rows.stop, b""
    else:
        lo, hi, listed = 0, 0, np.ascontiguousarray(rows, np.int64)
    made: tuple[Value, ...] | None = _kernel.value_run(
        Value, c.data, c.base, VALUE_SIZE, lo, hi, listed, c.internals, c.string_at, c.string_end,
        run.singular, run.string)
    if made is None:
        raise Declined(KernelReason.OUTSIDE)
    return made


def _same_values(a: tuple[Value, ...], b: tuple[Value, ...]) -> bool:
    """Equal, of the same types member by member (a Value, bytes, int, str or None), and
    hashed alike (a tuple made in C keeps no stale hash)."""
    return a == b and all(type(x) is type(y) and list(map(type, x)) == list(map(type, y)) and hash(x) == hash(y)
                          for x, y in zip(a, b))


VALUE_RUN = register("mmv.value-run", reference=reference_value_run, fast=kernel_value_run,
                     reasons=KernelReason, inputs="mmv-value-run", same=_same_values)


def _pick(column: list[Any], rows: slice | npt.NDArray[np.intp]) -> list[Any]:
    if isinstance(rows, slice):
        return column[rows]
    return [column[k] for k in rows.tolist()]
