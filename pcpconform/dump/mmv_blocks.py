"""The large sections of an MMV dump made by columns: values, string slots, instances.

A file at the PMDA's limits holds tens of thousands of values and string slots; made one
dict at a time and encoded by ``json``, their lines cost microseconds each. Here a section's
rows are read as arrays and every line is formatted from columns with C-level string
operations into a :class:`Block` of consecutive lines, for the JSON Lines dump and for the
text listing alike. A row the columns cannot make exactly as the per-entry walk of
``mmv_jsonl`` makes it (a pointer that names no entry, a slot with no NUL or with bytes after
its NUL, a positive ELAPSED extra, an unknown type) is left to that walk, which makes it and
its problem lines; every such row is counted in :data:`ROW_FALLBACKS`. The two paths give
the same lines (tests/property/test_mmv_dump_blocks.py).
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import cached_property
from itertools import repeat
from json.encoder import encode_basestring_ascii
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from pcpconform.dump.escape import PLAIN, escape_bytes
from pcpconform.dump.mmv_kernel import VALUE_LINES, KernelReason, kernel_interleave, kernel_string_lines, same_lines
from pcpconform.dump.mmv_slots import SLOT_ENDS, SLOT_TEXTS, STRING_CLEAN, slot_text
from pcpconform.fastpath import PathStats, register
from pcpconform.mmv.model import (
    FLAG_SENTINEL,
    MMV_TYPES,
    TYPE_DOUBLE,
    TYPE_ELAPSED,
    TYPE_FLOAT,
    TYPE_I32,
    TYPE_I64,
    TYPE_NOSUPPORT,
    TYPE_STRING,
    TYPE_U32,
    TYPE_U64,
    is_singular,
)
from pcpconform.mmv.schema import STRING_SIZE, VALUE_SIZE

if TYPE_CHECKING:
    from pcpconform.dump.mmv_fields import MetricAt

__all__ = ["Block", "ROW_FALLBACKS", "STRING_LINES", "INTERLEAVE", "value_rows", "string_rows",
           "reference_string_lines", "reference_interleave", "instance_rows", "instance_table",
           "InstanceTable", "interleave_rows", "int_column", "uint_column", "slot_text", "slot_ends", "blocks_and_rows"]

#: value rows per call of the value lines' fast path
_KERNEL_ROWS = 2048
#: string slots per call of the string lines' fast path
_KERNEL_SLOTS = 1024
#: rows of a section left to the per-entry walk, by section
ROW_FALLBACKS: Counter[str] = Counter()

_VALUE = np.dtype([("atom", "V8"), ("extra", "<i8"), ("metric", "<u8"), ("instance", "<u8")])
_INT_VIEWS = {TYPE_I32: "<i4", TYPE_U32: "<u4", TYPE_I64: "<i8", TYPE_U64: "<u8",
              TYPE_ELAPSED: "<i8"}
_PLAIN_OR_NUL = PLAIN + b"\0"
_TOKENS = {TYPE_NOSUPPORT: "nosupport", TYPE_I32: "32", TYPE_U32: "u32", TYPE_I64: "64",
           TYPE_U64: "u64", TYPE_FLOAT: "float", TYPE_DOUBLE: "double", TYPE_STRING: "string",
           TYPE_ELAPSED: "elapsed"}


def _js(text: str | None) -> str:
    """A JSON string (or null) as the dump's encoder writes it (the text is already ASCII)."""
    return "null" if text is None else encode_basestring_ascii(text)


def escape_all(texts: Sequence[bytes]) -> list[str]:
    """escape_bytes of each text; texts with nothing to escape (the common case) in one go."""
    blob = b"\0".join(texts)
    if not blob.translate(None, _PLAIN_OR_NUL):
        return blob.decode("ascii").split("\0") if texts else []
    return list(map(escape_bytes, texts))


def slot_ends(data: bytes, offsets: Any, stats: PathStats) -> Any:
    """``mmv_slots.SLOT_ENDS``: where each offset's slot has its NUL (-1: none; -2: no slot)."""
    return SLOT_ENDS(stats, data, offsets)


class Block:
    """Consecutive lines of one section, made by columns: as JSON Lines, as the text
    listing's lines, or as the dicts the walk makes (decoded from the JSON). ``jsonl`` and
    ``text`` give chunks of lines joined by newlines, without a final one."""

    def __init__(self, kind: str, count: int, jsonl: Callable[[], Iterable[str]],
                 text: Callable[[], Iterable[str]], source: tuple[Any, ...] = ()) -> None:
        self.kind = kind
        self.count = count
        self._jsonl, self._text = jsonl, text
        self.source = source        # the arguments of the block's kernel: a value block's
        # (values, lo, hi), a string block's (data, base, lo, hi)

    def jsonl(self) -> Iterable[str]:
        return self._jsonl()

    def text(self) -> Iterable[str]:
        return self._text()

    def records(self) -> Iterator[dict[str, Any]]:
        for chunk in self._jsonl():
            for line in chunk.split("\n"):
                yield json.loads(line)


def _runs(clean: Sequence[bool]) -> Iterator[tuple[int, int, bool]]:
    """(start, stop, clean) of the maximal runs of equal flags."""
    if not len(clean):
        return
    flags = np.asarray(clean, bool)
    cuts = (np.nonzero(flags[1:] != flags[:-1])[0] + 1).tolist()
    for start, stop in zip([0, *cuts], [*cuts, len(flags)]):
        yield start, stop, bool(flags[start])


def _interleaved(pieces: Sequence[str | Sequence[str]], rows: int) -> str:
    """Lines made of ``pieces``, each a text every line shares or a column of one text per
    line, joined by newlines: one join over every piece (cheaper than a format per line)."""
    width = len(pieces)
    parts: list[str] = [""] * (width * rows)
    for k, piece in enumerate(pieces):
        parts[k::width] = [piece] * rows if isinstance(piece, str) else piece
    last = pieces[-1]
    assert isinstance(last, str) and last.endswith("\n"), "each line ends with a newline"
    if rows:
        parts[-1] = last[:-1]           # the last line's newline is the writer's
    return "".join(parts)


#: a piece of ``interleave``'s lines: a text every line shares, a column of one text per
#: line, or ("i" | "u", int64 | uint64 column) or ("j", texts or None) as ``reference_interleave`` says
Piece = Any


def reference_interleave(rows: int, pieces: tuple[Piece, ...]) -> list[str]:
    """``rows`` lines made of ``pieces`` (the reference of ``dump.mmv-interleave``): a str
    the same on every line, a list of one str per line, ("i", column of int64) or ("u",
    column of uint64) one integer per line in decimal, ("j", list of str or None) one text
    per line as a JSON string (null for None); the last piece a str ending the line."""
    columns: list[str | Sequence[str]] = []
    for piece in pieces:
        if isinstance(piece, tuple):
            kind, column = piece
            columns.append(list(map(_js, column)) if kind == "j" else
                           list(map(str, np.frombuffer(column, "<i8" if kind == "i" else "<u8").tolist())))
        else:
            columns.append(piece)
    return [_interleaved(columns, rows)]


INTERLEAVE = register("dump.mmv-interleave", reference=reference_interleave, fast=kernel_interleave,
                      reasons=KernelReason, inputs="mmv-interleave", same=same_lines)


def interleave_rows(stats: PathStats, rows: int, pieces: tuple[Piece, ...]) -> list[str]:
    """``INTERLEAVE``'s lines as a list of one text per row (the pieces end each row with a
    newline, and hold none)."""
    return "\n".join(INTERLEAVE(stats, rows, pieces)).split("\n") if rows else []


def int_column(column: Any) -> tuple[str, Any]:
    """An integer column as ``interleave`` reads it, signed."""
    return "i", np.ascontiguousarray(column, np.int64)


def uint_column(column: Any) -> tuple[str, Any]:
    """An integer column as ``interleave`` reads it, unsigned 64-bit."""
    return "u", np.ascontiguousarray(column, np.uint64)


# -- values -----------------------------------------------------------------------------
def _c_float(real: float) -> str:
    if math.isnan(real):
        return "-nan" if math.copysign(1.0, real) < 0 else "nan"
    return f"{real:f}"


#: the tagged value of DUMP-MMV-TYPED around the value's text, by type (else an integer's)
_VALUE_PARTS = {TYPE_FLOAT: ('{"type":"float","value":"0x', '"}'),
                TYPE_DOUBLE: ('{"type":"double","value":"0x', '"}'),
                TYPE_STRING: ('{"type":"string","value":', "}"), TYPE_NOSUPPORT: ("null", "")}


def _find(keys: Any, values: Any) -> tuple[Any, Any]:
    """Each value's index in the sorted uint64 keys (clipped), and whether it is there. Keys
    evenly spaced (the entries of one section, the common case) are found by division."""
    n = len(keys)
    step = int(keys[1] - keys[0]) if n > 1 else 0
    if step and bool(np.all(np.diff(keys) == step)):
        rel = values - keys[0]                  # below the first key: wraps, past the last
        pos = rel // np.uint64(step)
        # clipped below n, so the same bits as intp (a view: a cast from uint64 checks each)
        return (np.minimum(pos, np.uint64(n - 1)).view(np.intp),
                (rel == pos * np.uint64(step)) & (pos < np.uint64(n)))
    pos = np.searchsorted(keys, values).clip(0, n - 1)
    return pos, keys[pos] == values


class _Values:
    """The values section as columns; lines are made a run of one metric at a time, from a
    format that holds what the run shares (its metric, type and instance domain)."""

    def __init__(self, data: bytes, base: int, count: int, flags: int,
                 metric_at: dict[int, MetricAt], inst_at: dict[int, tuple[int, str | None]],
                 stats: PathStats) -> None:
        self.data, self.base, self.count, self.stats = data, base, count, stats
        self.sentinel = bool(flags & FLAG_SENTINEL)
        table = np.frombuffer(data, _VALUE, count, base if count else 0)
        self.moff, self.ioff, self.extra = table["metric"], table["instance"], table["extra"]
        self.atoms = np.frombuffer(data, np.uint8, count * VALUE_SIZE, base if count else 0
                                   ).reshape(count, VALUE_SIZE)[:, :8]
        offsets = sorted(metric_at)
        self.metrics = [metric_at[o] for o in offsets]
        if offsets and count:
            self.pos, known = _find(np.array(offsets, np.uint64), self.moff)
        else:
            self.pos = np.zeros(count, np.intp)
            known = np.zeros(count, bool)
        # what each row needs of its metric, per metric first (1023 at most), then by row
        metric_types = np.array([m.type for m in self.metrics] or [0], np.int64)
        types = metric_types[self.pos]
        singular = np.array([is_singular(m.indom) for m in self.metrics] or [True])[self.pos]
        typed = np.isin(metric_types, MMV_TYPES)[self.pos]
        instances = np.fromiter(inst_at, np.uint64, len(inst_at))
        if len(instances) > 1 and not bool(np.all(instances[1:] > instances[:-1])):
            instances.sort()                   # in entry order, sorted already (one section)
        self.inst_keys = instances
        if len(instances):
            has_instance = _find(instances, self.ioff)[1]
        else:
            has_instance = np.zeros(count, bool)
        clean = (known & typed & np.where(singular, self.ioff == 0, has_instance)
                 & ~((types == TYPE_ELAPSED) & (self.extra > 0)))
        rows = np.nonzero(clean & (types == TYPE_STRING))[0]
        ends = slot_ends(data, self.extra[rows], stats)
        clean[rows[ends < 0]] = False          # no slot in the file, or no NUL in it
        self._string_slots = (rows[ends >= 0], ends[ends >= 0])
        self._strings: dict[int, bytes] | None = None
        self.clean = clean
        self.inst_at = inst_at
        self._hex: list[str] | None = None
        self._inst: tuple[dict[int, str], dict[int, str], dict[int, str]] | None = None
        self._columns: dict[str, Any] | None = None
        self._kernel_metrics: dict[bool, list[tuple[int, bool, str, str, str]]] = {}

    @property
    def strings(self) -> dict[int, bytes]:
        """By row, the text of each clean STRING row."""
        if self._strings is None:
            rows, ends = self._string_slots
            starts = self.extra[rows].tolist()
            self._strings = dict(zip(rows.tolist(), map(self.data.__getitem__,
                                                        map(slice, starts, (ends + self.extra[rows]).tolist()))))
        return self._strings

    @cached_property
    def positions(self) -> Any:
        """Each row's index into ``metrics``, as intp."""
        return np.ascontiguousarray(self.pos, np.intp)

    @cached_property
    def metric_columns(self) -> list[tuple[int, bool, str, str, str]]:
        """Per metric, what the kernel writes of it: type, singular, the value line's
        members from name to pmid, the listing's head and name."""
        return [(m.type, is_singular(m.indom), m.json_part, f"  [{m.item}/", m.text_name)
                for m in self.metrics]

    def kernel_metrics(self, text: bool) -> list[tuple[int, bool, str, str, str]]:
        """``metric_columns`` as one format's kernel reads them: the listing reads not the
        JSON members, JSON Lines not the listing's head and name ("" stands in for them)."""
        made = self._kernel_metrics.get(text)
        if made is None:
            made = self._kernel_metrics[text] = [
                (m.type, is_singular(m.indom), "", f"  [{m.item}/", m.text_name) if text else
                (m.type, is_singular(m.indom), m.json_part, "", "") for m in self.metrics]
        return made

    @cached_property
    def _instance_entries(self) -> tuple[Any, list[str | None]]:
        """Per instance offset (sorted), the id (an int64 column) and the name."""
        if not len(self.inst_keys):
            return np.zeros(0, np.int64), []
        ids, names = zip(*map(self.inst_at.__getitem__, self.inst_keys.tolist()))
        return np.array(ids, np.int64), list(names)

    @cached_property
    def _instance_json(self) -> list[str]:
        """The names as JSON strings (or null), made by ``dump.mmv-interleave`` at once."""
        names = self._instance_entries[1]
        return interleave_rows(self.stats, len(names), (("j", names), "\n"))

    @cached_property
    def _instance_text(self) -> list[str]:
        return [f'[{i} or "{n or "?"}"]' for i, n in map(self.inst_at.__getitem__, self.inst_keys.tolist())]

    @property
    def instance_columns(self) -> tuple[bytes, Any, list[str], list[str]]:
        """The instance entries' offsets (sorted, as uint64 bytes), and per offset the id
        (int64), the name as JSON and the listing's part."""
        return (self._inst_key_bytes, self._instance_entries[0], self._instance_json,
                self._instance_text)

    def kernel_instances(self, text: bool) -> tuple[bytes, Any, list[str], list[str]]:
        """``instance_columns`` as one format's kernel reads them: the listing reads only
        the listing's parts, JSON Lines only the ids and names, so the other lists are not
        made (the same list, of the right length, stands in for them, and no ids)."""
        if text:
            texts = self._instance_text
            return self._inst_key_bytes, b"", texts, texts
        return self._inst_key_bytes, self._instance_entries[0], self._instance_json, self._instance_json

    @cached_property
    def _inst_key_bytes(self) -> bytes:
        return bytes(self.inst_keys.tobytes())

    def hexes(self) -> list[str]:
        if self._hex is None:
            self._hex = np.ascontiguousarray(self.atoms).tobytes().hex(" ", 8).split(" ") \
                if self.count else []
        return self._hex

    def instances(self) -> tuple[dict[int, str], dict[int, str], dict[int, str]]:
        """By instance offset: the id and the name as JSON, and the listing's part."""
        if self._inst is None:
            ids = {at: str(i) for at, (i, _) in self.inst_at.items()}
            names = {at: _js(n) for at, (_, n) in self.inst_at.items()}
            texts = {at: f'[{i} or "{n or "?"}"]' for at, (i, n) in self.inst_at.items()}
            self._inst = ids, names, texts
        return self._inst

    def runs(self, lo: int, hi: int) -> Iterator[tuple[int, int, MetricAt]]:
        """The rows lo..hi cut where the metric changes."""
        cuts = (np.nonzero(np.diff(self.pos[lo:hi]))[0] + 1 + lo).tolist()
        for a, b in zip([lo, *cuts], [*cuts, hi]):
            yield a, b, self.metrics[int(self.pos[a])]

    def columns(self) -> dict[str, Any]:
        """Every clean row's value (the text inside its tagged value, and the listing's
        ``= ...``), its sentinel member, and the texts of its offsets; made once, by type."""
        if self._columns is not None:
            return self._columns
        count = self.count
        inner: list[str] = [""] * count
        shown: list[str] = [""] * count
        empty: list[bool] = [False] * count
        types = np.array([m.type for m in self.metrics] or [0], np.int64)[self.pos]
        clean = self.clean
        for mtype in set(np.unique(types[clean]).tolist()):
            rows = np.nonzero(clean & (types == mtype))[0]
            self._typed(int(mtype), rows, inner, shown, empty)
        if self.sentinel:
            shown = [" = (no value: sentinel)" if e else t for e, t in zip(empty, shown)]
        texts = self.instances()[2]
        ioffs = self.ioff.tolist()
        self._columns = {
            "inner": inner, "shown": shown,
            "sentinel": [',"sentinel":true' if e else "" for e in empty] if self.sentinel else None,
            "offset": list(map(str, range(self.base, self.base + VALUE_SIZE * count, VALUE_SIZE))),
            "ioff": ioffs, "inst_text": list(map(texts.get, ioffs, repeat(""))),
        }
        return self._columns

    def _typed(self, mtype: int, rows: Any, inner: list[str], shown: list[str],
               empty: list[bool]) -> None:
        where = rows.tolist()
        if mtype in _INT_VIEWS:
            texts = list(map(str, self.atoms[rows].copy().view(_INT_VIEWS[mtype])[:, 0].tolist()))
            if mtype == TYPE_ELAPSED:
                shows = [f" = {t} (value={t}/extra={e})" for t, e in zip(texts, self.extra[rows].tolist())]
            else:
                shows = list(map(" = ".__add__, texts))
            blanks = (self.atoms[rows] == 0xFF).all(axis=1).tolist() if self.sentinel else None
        elif mtype in (TYPE_FLOAT, TYPE_DOUBLE):
            width = 4 if mtype == TYPE_FLOAT else 8
            raw = self.atoms[rows][:, :width]
            numbers = raw.copy().view("<f4" if width == 4 else "<f8")[:, 0]
            texts = raw[:, ::-1].tobytes().hex(" ", width).split(" ")
            shows = list(map(" = {:f}".format, numbers.tolist()))
            nans = np.isnan(numbers)
            for k in np.nonzero(nans)[0].tolist():      # printf keeps a NaN's sign
                shows[k] = " = " + _c_float(float(numbers[k]))
            blanks = nans.tolist() if self.sentinel else None
        elif mtype == TYPE_STRING:
            escaped = escape_all([self.strings[n] for n in where])
            texts = list(map(_js, escaped))
            shows = [f' = "{t}"' for t in escaped]
            blanks = [not self.strings[n] for n in where] if self.sentinel else None
        else:                                          # NOSUPPORT: no value
            texts = [""] * len(where)
            shows = [f" Unknown type {_TOKENS[mtype]}"] * len(where)
            blanks = None
        for k, n in enumerate(where):
            inner[n], shown[n] = texts[k], shows[k]
        if blanks is not None:
            for k, n in enumerate(where):
                empty[n] = blanks[k]

    def jsonl(self, lo: int, hi: int) -> list[str]:
        out: list[str] = []
        hexes = self.hexes()
        ids, names, _ = self.instances()
        c = self.columns()
        for a, b, m in self.runs(lo, hi):
            ioffs = c["ioff"][a:b]
            extras = list(map(str, self.extra[a:b].tolist()))
            singular = is_singular(m.indom)
            tok = _TOKENS[m.type]
            head, tail = _VALUE_PARTS.get(m.type, ('{"type":"' + tok + '","value":"', '"}'))
            pieces: list[str | Sequence[str]] = [
                '{"kind":"value","index":', list(map(str, range(a, b))), ',"offset":', c["offset"][a:b],
                f',"metric_offset":{int(self.moff[a])},"instance_offset":', list(map(str, ioffs)),
                ',"atom":"', hexes[a:b], '","extra":"', extras, '",' + m.json_part + ',"instance":',
                "null" if singular else list(map(ids.__getitem__, ioffs)), ',"instance_name":',
                "null" if singular else list(map(names.__getitem__, ioffs))]
            if m.type == TYPE_STRING:
                pieces += [',"string_offset":', extras]
            pieces += [f',"type":"{tok}","value":{head}', c["inner"][a:b], tail]
            if c["sentinel"] is not None:
                pieces.append(c["sentinel"][a:b])
            pieces.append("}\n")
            out.append(_interleaved(pieces, b - a))
        return out

    def text(self, lo: int, hi: int) -> list[str]:
        out: list[str] = []
        c = self.columns()
        for a, b, m in self.runs(lo, hi):
            pieces: list[str | Sequence[str]] = [f"  [{m.item}/", c["offset"][a:b], f"] {m.text_name}"]
            if not is_singular(m.indom):
                pieces.append(c["inst_text"][a:b])
            pieces += [c["shown"][a:b], "\n"]
            out.append(_interleaved(pieces, b - a))
        return out


def value_rows(data: bytes, base: int, count: int, flags: int,
               metric_at: dict[int, MetricAt], inst_at: dict[int, tuple[int, str | None]],
               stats: PathStats) -> tuple[Any, Callable[[int, int], Block]]:
    """Which rows of the values section the columns make, and a maker of the block of rows
    lo..hi (all of them clean), whose lines the compiled kernel makes where it can
    (``dump.mmv-values``, counted in ``stats``)."""
    values = _Values(data, base, count, flags, metric_at, inst_at, stats)
    ROW_FALLBACKS["values"] += int(np.count_nonzero(~values.clean))

    def lines(lo: int, hi: int, fmt: str) -> Iterator[str]:
        # 2048 rows (under a megabyte of lines) a call: the lines are written as they are
        # made, so memory stays flat
        for a in range(lo, hi, _KERNEL_ROWS):
            yield from VALUE_LINES(stats, values, a, min(a + _KERNEL_ROWS, hi), fmt)

    def block(lo: int, hi: int) -> Block:
        return Block("value", hi - lo, lambda: lines(lo, hi, "jsonl"), lambda: lines(lo, hi, "text"),
                     (values, lo, hi))
    return values.clean, block


# -- string slots -----------------------------------------------------------------------
def reference_string_lines(data: bytes, base: int, lo: int, hi: int, fmt: str) -> list[str]:
    """The lines of the string slots lo..hi (each with a NUL) made by columns, in chunks of
    lines joined by newlines without a final one; ``fmt`` is jsonl or text."""
    starts = range(base + STRING_SIZE * lo, base + STRING_SIZE * hi, STRING_SIZE)
    ends = list(map(data.find, repeat(b"\0"), starts, [s + STRING_SIZE for s in starts]))
    if -1 in ends:
        raise ValueError(f"slot {lo + ends.index(-1)} has no NUL")
    texts = escape_all(list(map(data.__getitem__, map(slice, starts, ends))))
    at = list(map(str, starts))
    if fmt == "jsonl":
        return [_interleaved(['{"kind":"string","index":', list(map(str, range(lo, hi))),
                              ',"offset":', at, ',"text":', list(map(_js, texts)), "}\n"], hi - lo)]
    return [_interleaved(["  [", list(map(str, range(lo + 1, hi + 1))), "/", at, "] ", texts, "\n"],
                         hi - lo)]


STRING_LINES = register("dump.mmv-strings", reference=reference_string_lines, fast=kernel_string_lines,
                        reasons=KernelReason, inputs="mmv-strings", same=same_lines)


def string_rows(data: bytes, base: int, count: int, stats: PathStats
                ) -> tuple[Any, Callable[[int, int], Block]]:
    """The strings section: a slot is clean when it has a NUL and only zeros after it; the
    lines of a run of clean slots are made by ``dump.mmv-strings`` (counted in ``stats``)."""
    clean = STRING_CLEAN(stats, data, base, count) if count else np.zeros(0, bool)
    ROW_FALLBACKS["strings"] += int(np.count_nonzero(~clean))

    def lines(lo: int, hi: int, fmt: str) -> Iterator[str]:
        for a in range(lo, hi, _KERNEL_SLOTS):
            yield from STRING_LINES(stats, data, base, a, min(a + _KERNEL_SLOTS, hi), fmt)

    def block(lo: int, hi: int) -> Block:
        return Block("string", hi - lo, lambda: lines(lo, hi, "jsonl"), lambda: lines(lo, hi, "text"),
                     (data, base, lo, hi))

    return clean, block


# -- instances --------------------------------------------------------------------------
_INSTANCE = {1: np.dtype([("indom", "<u8"), ("padding", "<u4"), ("internal", "<i4"), ("external", "V64")]),
             2: np.dtype([("indom", "<u8"), ("padding", "<u4"), ("internal", "<i4"), ("external", "<u8")])}


class InstanceTable(NamedTuple):
    """An instances section's entries as the walk reads them."""

    indoms: list[int]                 # each entry's indom offset
    paddings: list[int]
    internals: list[int]
    offsets: list[int]                # its name's offset (v2/v3; 0 in v1)
    texts: list[bytes | None]         # its name as the PMDA serves it (None: no slot in the file)
    unterminated: list[bool]          # the name has no NUL
    trailing: list[bool]              # bytes after the NUL (v1: inline names)
    escaped: list[str]                # the name escaped ("" for none)
    columns: Any                      # the entries as a numpy table (fields as ``_INSTANCE``)


def instance_table(data: bytes, version: int, base: int, count: int, stats: PathStats) -> InstanceTable:
    """An instances section's entries (count of them at base)."""
    table = np.frombuffer(data, _INSTANCE[1 if version == 1 else 2], count, base if count else 0)
    lists = table["indom"].tolist(), table["padding"].tolist(), table["internal"].tolist()
    texts: list[bytes | None]
    if version == 1:
        texts, unterminated, trailing = [], [], []
        for raw in map(bytes, table["external"].tolist()):
            inline, nul, rest = raw.partition(b"\0")
            texts.append(inline)
            unterminated.append(not nul)
            trailing.append(bool(rest.strip(b"\0")))
        offsets = [0] * count
    else:
        starts = table["external"].astype(np.int64)
        offsets = table["external"].tolist()
        texts = SLOT_TEXTS(stats, data, starts)     # by columns: slot_text
        found = slot_ends(data, starts, stats)
        unterminated = [False] * count if bool(np.all(found != -1)) else (found == -1).tolist()
        trailing = [False] * count
    named: list[bytes] = texts if None not in texts else [t or b"" for t in texts]  # type: ignore[assignment]
    return InstanceTable(*lists, offsets, texts, unterminated, trailing, escape_all(named), table)


def instance_rows(data: bytes, version: int, base: int, count: int, indom_at: dict[int, int],
                  pcp_indom: Callable[[int], str | None], stats: PathStats, table: InstanceTable | None = None
                  ) -> tuple[list[bool], Callable[[int, int], Block]]:
    """The instances section (``table``: its ``instance_table``, when already read); the
    lines of a run of clean entries are made by ``dump.mmv-interleave`` (counted in
    ``stats``)."""
    t = table or instance_table(data, version, base, count, stats)
    serials = list(map(indom_at.get, t.indoms))
    clean = [s is not None and n is not None and not bad and not odd
             for s, n, bad, odd in zip(serials, t.texts, t.unterminated, t.trailing)]
    ROW_FALLBACKS["instances"] += clean.count(False)
    size = 80 if version == 1 else 24

    def block(lo: int, hi: int) -> Block:
        texts = t.escaped[lo:hi]
        rows = t.columns[lo:hi]
        at = int_column(np.arange(base + size * lo, base + size * hi, size))
        ids = int_column(rows["internal"])
        owner = int_column(serials[lo:hi])

        def jsonl() -> list[str]:
            named: list[Piece] = [',"name":', ("j", texts)]
            if version != 1:
                named = [',"name_offset":', uint_column(rows["external"])] + named
            pcp = {s: _js(pcp_indom(s)) for s in set(serials[lo:hi]) if s is not None}
            return INTERLEAVE(stats, hi - lo, (
                '{"kind":"instance","index":', int_column(np.arange(lo, hi)), ',"offset":', at, ',"indom_offset":',
                uint_column(rows["indom"]), ',"padding":', int_column(rows["padding"]), ',"internal":', ids, *named,
                ',"serial":', owner, ',"pcp_indom":', [pcp.get(s or 0, "null") for s in serials[lo:hi]], "}\n"))

        def text() -> list[str]:
            return INTERLEAVE(stats, hi - lo, ("  [", owner, "/", at, "] instance = [", ids, ' or "', texts, '"]\n'))
        return Block("instance", hi - lo, jsonl, text)

    return clean, block


def blocks_and_rows(clean: Sequence[bool], block: Callable[[int, int], Block]
                    ) -> Iterator[Block | int]:
    """The section in order: a Block for each clean run, the index of each other row."""
    for lo, hi, ok in _runs(clean):
        if ok:
            yield block(lo, hi)
        else:
            yield from range(lo, hi)

