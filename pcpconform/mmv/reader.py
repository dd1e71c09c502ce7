"""Parse an MMV file into an MmvFile; every defect is a FormatError with file, offset, field.

Sections are found through the TOC. As in pmdammv, instances are reached through each
indom's offset and count, and values through their metric and instance back-pointers, which
must point at entries of those sections. Unlike pmdammv, every offset is bounds-checked
before it is followed (the PMDA follows some unchecked: spec/mmv.md).

Two paths share the header and TOC checks: the column path (``_ColumnReader``: whole sections
as numpy arrays, values left as columns until read) and the per-entry path (``_Reader``),
which takes over, and names the error, for any file the column path flags.
"""

from __future__ import annotations

import gc
import struct
from collections import Counter
from collections.abc import Callable
from itertools import compress, islice, pairwise, repeat
from operator import itemgetter, le
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from pcpconform.errors import FormatError, Location
from pcpconform.fastpath import PathStats
from pcpconform.mmv.columns import (
    FALLBACKS,
    Fallback,
    Flagged,
    ValueColumns,
    ValueRun,
    decode_slots,
    entries,
    entry_struct,
    inline_ends,
    slot_ends,
)
from pcpconform.mmv.model import (
    MMV_TYPES,
    TYPE_STRING,
    Indom,
    Instance,
    Label,
    Metric,
    MmvFile,
    Value,
    decode_text,
    is_singular,
)
from pcpconform.mmv.schema import (
    HEADER_SIZE,
    INDOM_SIZE,
    LABEL_SIZE,
    MMV_MAGIC,
    MMV_VERSIONS,
    STRING_SIZE,
    TOC_INDOMS,
    TOC_LABELS,
    TOC_METRICS,
    TOC_NAMES,
    TOC_SIZE,
    TOC_VALUES,
    VALUE_SIZE,
    MmvStructs,
    mmv_structs,
)

__all__ = ["parse_mmv", "read_mmv"]

# The entries of schema.py as struct formats (derived from the schemas): construct parses
# one entry in tens of microseconds, struct whole sections at once
_HEADER = entry_struct(mmv_structs(1).header)
_TOC = entry_struct(mmv_structs(1).toc)
_INDOM = entry_struct(mmv_structs(1).indom)
_ATOM = struct.Struct("8s")                # values (value extra metric instance): by columns


def read_mmv(path: str | Path, *, stats: PathStats | None = None) -> MmvFile:
    """Parse the MMV file at path (``stats``: as ``parse_mmv``)."""
    return parse_mmv(Path(path).read_bytes(), str(path), stats=stats)


def parse_mmv(data: bytes, file: str = "<mmv>", *, columns: bool = True,
              stats: PathStats | None = None) -> MmvFile:
    """Parse MMV bytes; ``file`` names them in errors.

    The column path (``columns=True``) checks sections with array operations and leaves the
    values as columns until read; a file it flags is parsed again entry by entry, which
    raises the error (and is counted in ``pcpconform.mmv.columns.FALLBACKS``).
    ``columns=False`` takes the per-entry path only, the reference of the column path.
    ``stats`` counts how the values were made when read (``columns.VALUE_RUN``)."""
    # a large file makes 10^5 tuples at once, which the cyclic collector would scan over
    # and over; they hold no cycles
    enabled = gc.isenabled()
    gc.disable()
    try:
        if columns:
            try:
                return _ColumnReader(bytes(data), file, stats).parse()
            except Flagged as flagged:
                FALLBACKS[flagged.reason] += 1
        return _Reader(data, file).parse()
    finally:
        if enabled:
            gc.enable()


class _Head(NamedTuple):
    version: int
    g1: int
    g2: int
    flags: int
    process: int
    cluster: int
    toc: dict[int, tuple[int, int, int]]  # type -> (count, offset, toc entry offset)


class _Reader:
    def __init__(self, data: bytes, file: str, stats: PathStats | None = None) -> None:
        self.data = data
        self.file = file
        self.stats = stats

    def fail(self, message: str, offset: int, field: str, code: str = "mmv.format") -> FormatError:
        return FormatError(message, Location(self.file, None, offset, field), code)

    def entry(self, fmt: struct.Struct, offset: int, field: str) -> tuple[Any, ...]:
        if offset < 0 or offset + fmt.size > len(self.data):
            raise self.fail(f"{fmt.size}-byte entry at offset {offset} runs past the end of"
                            f" the file ({len(self.data)} bytes)", offset, field)
        return fmt.unpack_from(self.data, offset)

    def entries(self, fmt: struct.Struct, offset: int, count: int) -> Any:
        """count entries from offset (the caller has checked they lie inside the file)."""
        return fmt.iter_unpack(memoryview(self.data)[offset:offset + fmt.size * count])

    def string(self, offset: int, field: str, *, optional: bool = False) -> str | None:
        """The text of the string slot at offset (0: none, where the field allows it)."""
        if offset == 0 and optional:
            return None
        return self.slot(offset, field)

    def slot(self, offset: int, field: str) -> str:
        """The text of a string slot that must be there (names, STRING values)."""
        data = self.data
        if offset < HEADER_SIZE or offset + STRING_SIZE > len(data):
            raise self.fail(f"string offset {offset} is not a 256-byte slot inside the file",
                            offset, field)
        end = data.find(b"\0", offset, offset + STRING_SIZE)
        if end < 0:
            raise self.fail(f"no NUL within the {STRING_SIZE}-byte field", offset, field)
        return decode_text(data[offset:end])

    def slots(self, offsets: list[int], field: Callable[[int], str]) -> list[str]:
        """The texts of many string slots that must be there (slot() for each, batched;
        ``field(i)`` names the field of the i-th)."""
        data = self.data
        last = len(data) - STRING_SIZE
        ends = [data.find(b"\0", at, at + STRING_SIZE) if HEADER_SIZE <= at <= last else -1
                for at in offsets]
        if -1 in ends:
            n = ends.index(-1)
            self.slot(offsets[n], field(n))    # raises, naming the field
        return [data[at:end].decode("utf-8", "surrogateescape") for at, end in zip(offsets, ends)]

    def inline(self, raw: bytes, offset: int, field: str) -> str:
        end = raw.find(b"\0")
        if end < 0:
            raise self.fail(f"no NUL within the {len(raw)}-byte field", offset, field)
        return decode_text(raw[:end])

    def parse(self) -> MmvFile:
        h = self.head()
        s = mmv_structs(h.version)
        indoms, inst_at = self.indoms(s, h.toc.get(TOC_INDOMS))
        metrics, metric_at = self.metrics(s, h.toc[TOC_METRICS], indoms)
        values = self.values(h.toc[TOC_VALUES], metrics, metric_at, inst_at)
        metrics = [Metric(m.name, m.item, m.type, m.semantics, m.dimension, m.indom, m.shorttext,
                          m.helptext, vals) for m, vals in zip(metrics, values)]
        labels = self.labels(h.toc.get(TOC_LABELS))
        return MmvFile(h.version, h.g1, h.g2, h.flags, h.process, h.cluster,
                       tuple(indoms), tuple(metrics), tuple(labels))

    def head(self) -> _Head:
        """The header and the TOC, checked (both paths share this)."""
        data = self.data
        if len(data) < HEADER_SIZE:
            raise self.fail(f"file of {len(data)} bytes is shorter than the 40-byte header",
                            0, "header")
        magic, version, g1, g2, tocs, flags, process, cluster = _HEADER.unpack_from(data)
        if magic != MMV_MAGIC:
            raise self.fail(f"magic {magic!r} is not 'MMV\\0'", 0, "header.magic")
        if version not in MMV_VERSIONS:
            raise self.fail(f"version {version} is not 1, 2 or 3", 4, "header.version")
        if g1 != g2:
            raise self.fail(f"generation words differ (g1 {g1:#x}, g2 {g2:#x}): the file"
                            " is being rewritten", 16, "header.g2", "mmv.rewriting")
        if g1 == 0:
            raise self.fail("generation 0: the file has not been initialised", 8, "header.g1",
                            "mmv.rewriting")
        if tocs < 2:
            raise self.fail(f"{tocs} TOC entries, fewer than 2", 24, "header.tocs")
        if not 0 <= cluster <= 4095:
            raise self.fail(f"cluster {cluster} is outside 0..4095", 36, "header.cluster")
        s = mmv_structs(version)
        toc: dict[int, tuple[int, int, int]] = {}  # type -> (count, offset, toc entry offset)
        for t in range(tocs):
            where = HEADER_SIZE + TOC_SIZE * t
            kind, count, offset = self.entry(_TOC, where, f"toc[{t}]")
            if kind not in TOC_NAMES or (kind == TOC_LABELS and version < 3):
                raise self.fail(f"section type {kind} is not known in version {version}",
                                where, f"toc[{t}].type")
            if kind in toc:
                raise self.fail(f"second {TOC_NAMES[kind]} section", where, f"toc[{t}].type")
            if count < 0:
                raise self.fail(f"negative count {count}", where + 4, f"toc[{t}].count")
            size = s.sizes[kind]
            if offset + size * count > len(data):
                raise self.fail(f"{TOC_NAMES[kind]} section ({count} x {size} bytes at"
                                f" {offset}) runs past the end of the file", where + 8,
                                f"toc[{t}].offset")
            toc[kind] = (count, offset, where)
        for needed in (TOC_METRICS, TOC_VALUES):
            if needed not in toc:
                raise self.fail(f"no {TOC_NAMES[needed]} section", HEADER_SIZE, "toc")
        return _Head(version, g1, g2, flags, process, cluster, toc)

    def indoms(self, s: MmvStructs, sect: tuple[int, int, int] | None
               ) -> tuple[list[Indom], dict[int, tuple[int, int]]]:
        """The indoms, and each instance entry's offset -> (indom serial, internal id)."""
        out: list[Indom] = []
        inst_at: dict[int, tuple[int, int]] = {}
        count, base, _ = sect or (0, 0, 0)
        size = s.instance_size
        fmt = entry_struct(s.instance)
        serials: set[int] = set()
        for n, (serial, icount, first, short, long) in enumerate(
                self.entries(_INDOM, base, count)):
            where = base + INDOM_SIZE * n
            f = f"indoms[{n}]"
            if serial in (0, 0xFFFFFFFF) or serial in serials:
                raise self.fail(f"serial {serial} is 0, -1 or repeated", where, f + ".serial")
            serials.add(serial)
            if first + size * icount > len(self.data):
                raise self.fail(f"{icount} instances at {first} run past the end of the file",
                                where + 8, f + ".offset")
            entries = list(self.entries(fmt, first, icount))
            for k, entry in enumerate(entries):
                if entry[0] != where:
                    raise self.fail(f"indom back-pointer {entry[0]} is not its indom's offset"
                                    f" {where}", first + size * k, f"{f}.instances[{k}].indom")
            internals = [e[2] for e in entries]
            if s.version == 1:
                names = [self.inline(e[3], first + size * k + 16, f"{f}.instances[{k}].external")
                         for k, e in enumerate(entries)]
            else:
                names = self.slots([e[3] for e in entries],
                                   (f + ".instances[{}].external").format)
            insts = tuple(map(Instance, internals, names))
            inst_at.update(zip(range(first, first + size * icount, size),
                               zip(repeat(serial), internals)))
            out.append(Indom(serial, insts,
                             self.string(short, f + ".shorttext", optional=True),
                             self.string(long, f + ".helptext", optional=True)))
        return out, inst_at

    def metrics(self, s: MmvStructs, sect: tuple[int, int, int], indoms: list[Indom]
                ) -> tuple[list[Metric], dict[int, int]]:
        out: list[Metric] = []
        metric_at: dict[int, int] = {}
        count, base, _ = sect
        serials = {d.serial for d in indoms}
        for n, (raw_name, item, mtype, sem, dim, indom, _pad, short, long) in enumerate(
                self.entries(entry_struct(s.metric), base, count)):
            where = base + s.metric_size * n
            f = f"metrics[{n}]"
            name = (self.inline(raw_name, where, f + ".name") if s.version == 1
                    else self.slot(raw_name, f + ".name"))
            if not name:
                raise self.fail("empty metric name", where, f + ".name")
            if mtype not in MMV_TYPES:
                raise self.fail(f"type {mtype} is not an MMV type", where, f + ".type")
            if not is_singular(indom) and (indom & 0xFFFFFFFF) not in serials:
                raise self.fail(f"indom {indom} is not declared", where, f + ".indom")
            metric_at[where] = n
            out.append(Metric(name, item, mtype, sem, dim, indom,
                              self.string(short, f + ".shorttext", optional=True),
                              self.string(long, f + ".helptext", optional=True)))
        return out, metric_at

    def values(self, sect: tuple[int, int, int], metrics: list[Metric],
               metric_at: dict[int, int], inst_at: dict[int, tuple[int, int]]
               ) -> list[tuple[Value, ...]]:
        """Each metric's values, in file order.

        The hot part of a large file, decoded by columns: the section's 64-bit words read
        through one memoryview, back-pointers resolved by dict lookups mapped over them,
        values built by ``tuple.__new__`` mapped over the columns; Python loops only where
        something is wrong, or over STRING values."""
        count, base, _ = sect
        if count == 0:
            return [() for _ in metrics]
        end = base + VALUE_SIZE * count
        raw = memoryview(self.data)[base:end]
        words = raw.cast("Q")
        metric_offsets = words[2::4].tolist()
        instance_offsets = words[3::4].tolist()
        extras = raw.cast("q")[1::4].tolist()
        atoms = list(map(itemgetter(0), _ATOM.iter_unpack(bytes(words[0::4]))))
        which = list(map(metric_at.get, metric_offsets))
        if None in which:
            n = which.index(None)
            raise self.fail(f"metric back-pointer {metric_offsets[n]} is not a metric entry",
                            base + VALUE_SIZE * n + 16, f"values[{n}].metric")
        # each value's instance must be one of its metric's indom (None: singular, offset 0)
        wanted = [None if is_singular(m.indom) else m.indom & 0xFFFFFFFF for m in metrics]
        expected = list(map(wanted.__getitem__, which))  # type: ignore[arg-type]
        serial_at: dict[int, int | None] = {at: o[0] for at, o in inst_at.items()}
        serial_at[0] = None
        found = list(map(serial_at.get, instance_offsets, repeat(-1)))
        if found != expected:
            n = next(n for n, (f, e) in enumerate(zip(found, expected)) if f != e)
            m = metrics[which[n]]  # type: ignore[index]
            if is_singular(m.indom):
                raise self.fail("a singular metric's value points at an instance",
                                base + VALUE_SIZE * n + 24, f"values[{n}].instance")
            raise self.fail(f"instance back-pointer {instance_offsets[n]} is not an instance"
                            f" of indom {m.indom}", base + VALUE_SIZE * n + 24,
                            f"values[{n}].instance")
        internal_at: dict[int, int | None] = {at: o[1] for at, o in inst_at.items()}
        internal_at[0] = None
        instances = list(map(internal_at.__getitem__, instance_offsets))
        strings: list[str | None] = [None] * count
        is_string = [m.type == TYPE_STRING for m in metrics]
        at_string = list(compress(range(count), map(is_string.__getitem__, which)))  # type: ignore[arg-type]
        texts = self.slots([extras[n] for n in at_string],
                           lambda i: f"values[{at_string[i]}].extra")
        for n, text in zip(at_string, texts):
            strings[n] = text
            extras[n] = 0
        made = list(map(tuple.__new__, repeat(Value), zip(instances, atoms, extras, strings)))
        return self.grouped(which, made, len(metrics))  # type: ignore[arg-type]

    @staticmethod
    def grouped(which: list[int], made: list[Value], nmetrics: int) -> list[tuple[Value, ...]]:
        """Values by metric: by slices when they come metric by metric in metric order,
        as libpcp_mmv lays them out, else one by one."""
        if all(map(le, which, islice(which, 1, None))):
            counts = Counter(which)
            out: list[tuple[Value, ...]] = []
            at = 0
            for k in range(nmetrics):
                out.append(tuple(made[at:at + counts[k]]))
                at += counts[k]
            return out
        lists: list[list[Value]] = [[] for _ in range(nmetrics)]
        for k, value in zip(which, made):
            lists[k].append(value)
        return [tuple(v) for v in lists]

    def labels(self, sect: tuple[int, int, int] | None) -> list[Label]:
        out: list[Label] = []
        label = mmv_structs(3).label
        assert label is not None
        count, base, _ = sect or (0, 0, 0)
        for n, (flags, identity, internal, payload) in enumerate(
                self.entries(entry_struct(label), base, count)):
            where = base + LABEL_SIZE * n
            out.append(Label(flags, identity, internal,
                             self.inline(payload, where + 12, f"labels[{n}].payload")))
        return out


class _ColumnReader(_Reader):
    """The column path: the same checks as _Reader, on whole sections at once. It raises
    Flagged wherever _Reader might raise (conservatively: a flag costs only a second parse),
    so a file it returns is one _Reader returns equal."""

    def parse(self) -> MmvFile:
        h = self.head()
        s = mmv_structs(h.version)
        indoms, instances = self.indom_columns(s, h.toc.get(TOC_INDOMS))
        metrics = self.metric_columns(s, h.toc[TOC_METRICS], {d.serial for d in indoms})
        runs = self.value_columns(s, h.toc[TOC_VALUES], metrics, instances)
        made = tuple(Metric(*fields, run) for fields, run in zip(metrics.fields, runs))
        labels = self.labels(h.toc.get(TOC_LABELS))
        return MmvFile(h.version, h.g1, h.g2, h.flags, h.process, h.cluster,
                       tuple(indoms), made, tuple(labels))

    def texts(self, offsets: list[int], reason: Fallback) -> list[str]:
        ends = slot_ends(self.data, offsets)
        if ends is None:
            raise Flagged(reason)
        return decode_slots(self.data, offsets, ends)

    def help_texts(self, offsets: list[int], reason: Fallback) -> list[str | None]:
        """Optional string slots (offset 0: none)."""
        given = [at for at in offsets if at]
        texts = iter(self.texts(given, reason))
        return [next(texts) if at else None for at in offsets]

    def inline_texts(self, raw: npt.NDArray[Any], reason: Fallback) -> list[str]:
        raw = np.ascontiguousarray(raw)
        ends = inline_ends(raw)
        if ends is None:
            raise Flagged(reason)
        return [bytes(r)[:end].decode("utf-8", "surrogateescape") for r, end in zip(raw, ends)]

    def indom_columns(self, s: MmvStructs, sect: tuple[int, int, int] | None
                      ) -> tuple[list[Indom], _Instances]:
        count, base, _ = sect or (0, 0, 0)
        table = entries(self.data, s.indom, base, count)
        size = s.instance_size
        out: list[Indom] = []
        serials: set[int] = set()
        offsets: list[npt.NDArray[np.int64]] = []
        owners: list[int] = []
        internals: list[npt.NDArray[np.int64]] = []
        shorts = self.help_texts(table["shorttext"].tolist(), Fallback.INDOM)
        longs = self.help_texts(table["helptext"].tolist(), Fallback.INDOM)
        for n, (serial, icount, first) in enumerate(zip(table["serial"].tolist(),
                                                        table["count"].tolist(),
                                                        table["offset"].tolist())):
            where = base + INDOM_SIZE * n
            if serial in (0, 0xFFFFFFFF) or serial in serials \
                    or first + size * icount > len(self.data):
                raise Flagged(Fallback.INDOM)
            serials.add(serial)
            inst = entries(self.data, s.instance, first, icount)
            if (inst["indom"] != where).any():
                raise Flagged(Fallback.INDOM)
            ids = inst["internal"].astype(np.int64)
            if s.version == 1:
                names = self.inline_texts(inst["external"], Fallback.INDOM)
            else:
                names = self.texts(inst["external"].tolist(), Fallback.INDOM)
            out.append(Indom(serial, tuple(map(Instance, ids.tolist(), names)),
                             shorts[n], longs[n]))
            offsets.append(np.arange(first, first + size * icount, size, dtype=np.int64))
            owners.append(serial)
            internals.append(ids)
        return out, _Instances(offsets, owners, internals)

    def metric_columns(self, s: MmvStructs, sect: tuple[int, int, int], serials: set[int]
                       ) -> _Metrics:
        count, base, _ = sect
        table = entries(self.data, s.metric, base, count)
        if s.version == 1:
            names = self.inline_texts(table["name"], Fallback.METRIC)
        else:
            names = self.texts(table["name"].tolist(), Fallback.METRIC)
        mtypes = table["type"]
        indoms = table["indom"]
        singular = (indoms == 0) | (indoms == -1)
        declared = np.isin(indoms.view(np.uint32), np.fromiter(serials, np.uint32, len(serials)))
        if "" in names or not np.isin(mtypes, MMV_TYPES).all() or not (singular | declared).all():
            raise Flagged(Fallback.METRIC)
        fields: list[_MetricFields] = list(zip(names, table["item"].tolist(), mtypes.tolist(),
                          table["semantics"].tolist(), table["dimension"].tolist(),
                          indoms.tolist(),
                          self.help_texts(table["shorttext"].tolist(), Fallback.METRIC),
                          self.help_texts(table["helptext"].tolist(), Fallback.METRIC)))
        return _Metrics(base, s.metric_size, fields, singular,
                        indoms.view(np.uint32).astype(np.int64), mtypes == TYPE_STRING)

    def value_columns(self, s: MmvStructs, sect: tuple[int, int, int], metrics: _Metrics,
                      instances: _Instances) -> list[tuple[Value, ...] | ValueRun]:
        """Each metric's values as a run of the section's rows."""
        count, base, _ = sect
        nmetrics = len(metrics.fields)
        if count == 0:
            return [() for _ in range(nmetrics)]
        table = entries(self.data, s.value, base, count)
        # the metric back-pointer: an entry of the metrics section
        moff = table["metric"]
        first = metrics.base
        inside = (moff >= first) & (moff < first + metrics.size * nmetrics)
        if not inside.all() or ((moff - first) % metrics.size).any():
            raise Flagged(Fallback.VALUE)
        which = ((moff - first) // metrics.size).astype(np.intp)
        # the instance back-pointer: 0 for a singular metric, else an instance of its indom
        ioff = table["instance"].astype(np.int64)    # above 2^63: negative, no instance
        singular = metrics.singular[which]
        if ioff[singular].any():
            raise Flagged(Fallback.VALUE)
        known, serial_at, internal_at = instances.by_offset()
        pos = np.searchsorted(known, ioff).clip(0, max(len(known) - 1, 0))
        if len(known):
            found = (known[pos] == ioff) & (serial_at[pos] == metrics.serials[which])
        else:
            found = np.zeros(count, bool)
        if not (found | singular).all():
            raise Flagged(Fallback.VALUE)
        internals = internal_at[pos] if len(known) else np.zeros(count, np.int64)
        # a STRING value's slot
        extras = table["extra"]
        is_string = metrics.string[which]
        string_at = np.zeros(count, np.int64)
        string_end = np.zeros(count, np.int64)
        if is_string.any():
            at = extras[is_string].tolist()
            ends = slot_ends(self.data, at)
            if ends is None:
                raise Flagged(Fallback.VALUE)
            string_at[is_string] = at
            string_end[is_string] = ends
        columns = ValueColumns(self.data, base, table["value"], extras, internals, string_at,
                               string_end, self.stats)
        # rows by metric: slices when laid out metric by metric, else indices in file order
        ordered = bool((which[1:] >= which[:-1]).all())
        order = None if ordered else np.argsort(which, kind="stable")
        bounds = np.searchsorted(which if order is None else which[order],
                                 np.arange(nmetrics + 1)).tolist()
        runs: list[tuple[Value, ...] | ValueRun] = []
        for k, (lo, hi) in enumerate(pairwise(bounds)):
            if lo == hi:
                runs.append(())
                continue
            rows = slice(lo, hi) if order is None else order[lo:hi]
            runs.append(ValueRun(columns, rows, bool(metrics.singular[k]), bool(metrics.string[k])))
        return runs


class _Instances:
    """Every instance entry the indoms reach: its offset, its indom's serial, its internal id."""

    def __init__(self, offsets: list[npt.NDArray[np.int64]], owners: list[int],
                 internals: list[npt.NDArray[np.int64]]) -> None:
        self.offsets, self.owners, self.internals = offsets, owners, internals

    def by_offset(self) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64],
                                 npt.NDArray[np.int64]]:
        """Sorted offsets, and the serial and internal id at each; where indoms share an entry
        the last one's wins (the per-entry path keeps them in a dict); offset 0 is no
        instance (a value's 0 means singular)."""
        if not self.offsets:
            empty = np.zeros(0, np.int64)
            return empty, empty, empty
        offsets = np.concatenate(self.offsets)
        serials = np.repeat(np.array(self.owners, np.int64), [len(o) for o in self.offsets])
        internals = np.concatenate(self.internals)
        last = len(offsets) - 1 - np.unique(offsets[::-1], return_index=True)[1]
        last = last[offsets[last] != 0]
        return offsets[last], serials[last], internals[last]


# name item type semantics dimension indom shorttext helptext
_MetricFields = tuple[str, int, int, int, int, int, str | None, str | None]


class _Metrics(NamedTuple):
    base: int                                  # offset of the metrics section
    size: int                                  # of one metric entry
    fields: list[_MetricFields]                # Metric's fields but its values
    singular: npt.NDArray[np.bool_]
    serials: npt.NDArray[np.int64]             # the indom as unsigned
    string: npt.NDArray[np.bool_]
