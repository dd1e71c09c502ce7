"""Parse an MMV file into an MmvFile; every defect is a FormatError with file, offset, field.

Sections are found through the TOC. As in pmdammv, instances are reached through each
indom's offset and count, and values through their metric and instance back-pointers, which
must point at entries of those sections. Unlike pmdammv, every offset is bounds-checked
before it is followed (the PMDA follows some unchecked: spec/mmv.md).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from construct import ConstructError

from pcpconform.errors import FormatError, Location
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
    MMV_MAGIC,
    MMV_VERSIONS,
    STRING_SIZE,
    TOC_INDOMS,
    TOC_LABELS,
    TOC_METRICS,
    TOC_NAMES,
    TOC_SIZE,
    TOC_VALUES,
    MmvStructs,
    mmv_structs,
)

__all__ = ["parse_mmv", "read_mmv"]


def read_mmv(path: str | Path) -> MmvFile:
    """Parse the MMV file at path."""
    return parse_mmv(Path(path).read_bytes(), str(path))


def parse_mmv(data: bytes, file: str = "<mmv>") -> MmvFile:
    """Parse MMV bytes; ``file`` names them in errors."""
    return _Reader(data, file).parse()


class _Reader:
    def __init__(self, data: bytes, file: str) -> None:
        self.data = data
        self.file = file

    def fail(self, message: str, offset: int, field: str, code: str = "mmv.format") -> FormatError:
        return FormatError(message, Location(self.file, None, offset, field), code)

    def entry(self, schema: Any, offset: int, size: int, field: str) -> Any:
        if offset < 0 or offset + size > len(self.data):
            raise self.fail(f"{size}-byte entry at offset {offset} runs past the end of the"
                            f" file ({len(self.data)} bytes)", offset, field)
        try:
            return schema.parse(self.data[offset:offset + size])
        except ConstructError as exc:  # fixed-size entries within bounds: not expected
            raise self.fail(str(exc), offset, field) from None

    def string(self, offset: int, field: str, *, optional: bool = False) -> str | None:
        """The text of the string slot at offset (0: none, where the field allows it)."""
        if offset == 0 and optional:
            return None
        if offset < HEADER_SIZE or offset + STRING_SIZE > len(self.data):
            raise self.fail(f"string offset {offset} is not a 256-byte slot inside the file",
                            offset, field)
        return self.inline(self.data[offset:offset + STRING_SIZE], offset, field)

    def inline(self, raw: bytes, offset: int, field: str) -> str:
        end = raw.find(b"\0")
        if end < 0:
            raise self.fail(f"no NUL within the {len(raw)}-byte field", offset, field)
        return decode_text(raw[:end])

    def parse(self) -> MmvFile:
        data = self.data
        if len(data) < HEADER_SIZE:
            raise self.fail(f"file of {len(data)} bytes is shorter than the 40-byte header",
                            0, "header")
        hdr = mmv_structs(1).header.parse(data[:HEADER_SIZE])
        if hdr.magic != MMV_MAGIC:
            raise self.fail(f"magic {hdr.magic!r} is not 'MMV\\0'", 0, "header.magic")
        if hdr.version not in MMV_VERSIONS:
            raise self.fail(f"version {hdr.version} is not 1, 2 or 3", 4, "header.version")
        if hdr.g1 != hdr.g2:
            raise self.fail(f"generation words differ (g1 {hdr.g1:#x}, g2 {hdr.g2:#x}): the file"
                            " is being rewritten", 16, "header.g2", "mmv.rewriting")
        if hdr.g1 == 0:
            raise self.fail("generation 0: the file has not been initialised", 8, "header.g1",
                            "mmv.rewriting")
        if hdr.tocs < 2:
            raise self.fail(f"{hdr.tocs} TOC entries, fewer than 2", 24, "header.tocs")
        if not 0 <= hdr.cluster <= 4095:
            raise self.fail(f"cluster {hdr.cluster} is outside 0..4095", 36, "header.cluster")
        s = mmv_structs(hdr.version)
        toc: dict[int, tuple[int, int, int]] = {}  # type -> (count, offset, toc entry offset)
        for t in range(hdr.tocs):
            where = HEADER_SIZE + TOC_SIZE * t
            e = self.entry(s.toc, where, TOC_SIZE, f"toc[{t}]")
            if e.type not in TOC_NAMES or (e.type == TOC_LABELS and hdr.version < 3):
                raise self.fail(f"section type {e.type} is not known in version {hdr.version}",
                                where, f"toc[{t}].type")
            if e.type in toc:
                raise self.fail(f"second {TOC_NAMES[e.type]} section", where, f"toc[{t}].type")
            if e.count < 0:
                raise self.fail(f"negative count {e.count}", where + 4, f"toc[{t}].count")
            size = s.sizes[e.type]
            if e.offset + size * e.count > len(data):
                raise self.fail(f"{TOC_NAMES[e.type]} section ({e.count} x {size} bytes at"
                                f" {e.offset}) runs past the end of the file", where + 8,
                                f"toc[{t}].offset")
            toc[e.type] = (e.count, e.offset, where)
        for needed in (TOC_METRICS, TOC_VALUES):
            if needed not in toc:
                raise self.fail(f"no {TOC_NAMES[needed]} section", HEADER_SIZE, "toc")
        indoms, inst_at = self.indoms(s, toc.get(TOC_INDOMS))
        metrics, metric_at = self.metrics(s, toc[TOC_METRICS], indoms)
        values = self.values(s, toc[TOC_VALUES], metrics, metric_at, inst_at)
        metrics = [Metric(m.name, m.item, m.type, m.semantics, m.dimension, m.indom, m.shorttext,
                          m.helptext, tuple(values.get(n, ()))) for n, m in enumerate(metrics)]
        labels = self.labels(s, toc.get(TOC_LABELS))
        return MmvFile(hdr.version, hdr.g1, hdr.g2, hdr.flags, hdr.process, hdr.cluster,
                       tuple(indoms), tuple(metrics), tuple(labels))

    def indoms(self, s: MmvStructs, sect: tuple[int, int, int] | None
               ) -> tuple[list[Indom], dict[int, tuple[int, int]]]:
        """The indoms, and each instance entry's offset -> (indom serial, internal id)."""
        out: list[Indom] = []
        inst_at: dict[int, tuple[int, int]] = {}
        count, base, _ = sect or (0, 0, 0)
        for n in range(count):
            where = base + 32 * n
            f = f"indoms[{n}]"
            d = self.entry(s.indom, where, 32, f)
            if d.serial in (0, 0xFFFFFFFF) or any(x.serial == d.serial for x in out):
                raise self.fail(f"serial {d.serial} is 0, -1 or repeated", where, f + ".serial")
            if d.offset + s.instance_size * d.count > len(self.data):
                raise self.fail(f"{d.count} instances at {d.offset} run past the end of the file",
                                where + 8, f + ".offset")
            insts = []
            for k in range(d.count):
                at = d.offset + s.instance_size * k
                fi = f"{f}.instances[{k}]"
                i = self.entry(s.instance, at, s.instance_size, fi)
                if i.indom != where:
                    raise self.fail(f"indom back-pointer {i.indom} is not its indom's offset"
                                    f" {where}", at, fi + ".indom")
                name = (self.inline(i.external, at + 16, fi + ".external") if s.version == 1
                        else self.string(i.external, fi + ".external"))
                assert name is not None
                insts.append(Instance(i.internal, name))
                inst_at[at] = (d.serial, i.internal)
            out.append(Indom(d.serial, tuple(insts),
                             self.string(d.shorttext, f + ".shorttext", optional=True),
                             self.string(d.helptext, f + ".helptext", optional=True)))
        return out, inst_at

    def metrics(self, s: MmvStructs, sect: tuple[int, int, int], indoms: list[Indom]
                ) -> tuple[list[Metric], dict[int, int]]:
        out: list[Metric] = []
        metric_at: dict[int, int] = {}
        count, base, _ = sect
        serials = {d.serial for d in indoms}
        for n in range(count):
            where = base + s.metric_size * n
            f = f"metrics[{n}]"
            m = self.entry(s.metric, where, s.metric_size, f)
            name = (self.inline(m.name, where, f + ".name") if s.version == 1
                    else self.string(m.name, f + ".name"))
            assert name is not None
            if not name:
                raise self.fail("empty metric name", where, f + ".name")
            if m.type not in MMV_TYPES:
                raise self.fail(f"type {m.type} is not an MMV type", where, f + ".type")
            if not is_singular(m.indom) and (m.indom & 0xFFFFFFFF) not in serials:
                raise self.fail(f"indom {m.indom} is not declared", where, f + ".indom")
            metric_at[where] = n
            out.append(Metric(name, m.item, m.type, m.semantics, m.dimension, m.indom,
                              self.string(m.shorttext, f + ".shorttext", optional=True),
                              self.string(m.helptext, f + ".helptext", optional=True)))
        return out, metric_at

    def values(self, s: MmvStructs, sect: tuple[int, int, int], metrics: list[Metric],
               metric_at: dict[int, int], inst_at: dict[int, tuple[int, int]]
               ) -> dict[int, list[Value]]:
        out: dict[int, list[Value]] = {}
        count, base, _ = sect
        for n in range(count):
            where = base + 32 * n
            f = f"values[{n}]"
            v = self.entry(s.value, where, 32, f)
            if v.metric not in metric_at:
                raise self.fail(f"metric back-pointer {v.metric} is not a metric entry",
                                where + 16, f + ".metric")
            k = metric_at[v.metric]
            m = metrics[k]
            instance: int | None = None
            if is_singular(m.indom):
                if v.instance != 0:
                    raise self.fail("a singular metric's value points at an instance",
                                    where + 24, f + ".instance")
            else:
                owner = inst_at.get(v.instance)
                if owner is None or owner[0] != (m.indom & 0xFFFFFFFF):
                    raise self.fail(f"instance back-pointer {v.instance} is not an instance of"
                                    f" indom {m.indom}", where + 24, f + ".instance")
                instance = owner[1]
            if m.type == TYPE_STRING:
                value = Value(instance, v.value, 0, self.string(v.extra, f + ".extra"))
            else:
                value = Value(instance, v.value, v.extra)
            out.setdefault(k, []).append(value)
        return out

    def labels(self, s: MmvStructs, sect: tuple[int, int, int] | None) -> list[Label]:
        out: list[Label] = []
        count, base, _ = sect or (0, 0, 0)
        for n in range(count):
            where = base + 256 * n
            f = f"labels[{n}]"
            lb = self.entry(s.label, where, 256, f)
            out.append(Label(lb.flags, lb.identity, lb.internal,
                             self.inline(lb.payload, where + 12, f + ".payload")))
        return out
