"""The lossless JSON Lines dump of an MMV file (spec/dump-mmv-jsonl.md).

One object per header, TOC entry, indom, instance, metric, value, string slot and label, in
TOC order and, within a section, in entry order; each with its byte offset and, for
metrics and values, the identity the MMV PMDA gives it. Unlike ``read_mmv``, which stops at
the first defect, the walk goes on past what it cannot read: each defect is a ``problem``
line, and what does not depend on it is still dumped (DUMP-MMV-DAMAGE).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator
from itertools import repeat
from typing import Any, TextIO

from pcpconform.dump.escape import escape_bytes
from pcpconform.dump.mmv_blocks import (
    Block,
    blocks_and_rows,
    instance_rows,
    instance_table,
    string_rows,
    value_rows,
)
from pcpconform.dump.mmv_fields import (
    ENCODE,
    FLAG_NAMES,
    LABEL_TYPE_NAMES,
    TYPE_TOKENS,
    MetricAt,
    flag_names,
    is_sentinel,
    label_type_name,
    layouts,
    only_name_chars,
    put_text,
    sem_token,
    typed_mmv_value,
    unit_fields,
)
from pcpconform.dump.mmv_metrics import MetricTable
from pcpconform.fastpath import PathStats
from pcpconform.mmv.model import (
    FLAG_SENTINEL,
    LABEL_OPTIONAL,
    MMV_TYPES,
    TYPE_ELAPSED,
    TYPE_STRING,
    decode_text,
    encode_text,
    exported_indom,
    exported_name,
    is_singular,
)
from pcpconform.mmv.pmns import PmdaNamespace
from pcpconform.mmv.schema import (
    HEADER_SIZE,
    MMV_MAGIC,
    MMV_VERSIONS,
    STRING_SIZE,
    TOC_INDOMS,
    TOC_INSTANCES,
    TOC_LABELS,
    TOC_METRICS,
    TOC_NAMES,
    TOC_SIZE,
    TOC_STRINGS,
    TOC_VALUES,
    MmvStructs,
    mmv_structs,
)

__all__ = ["MMV_DUMP_HEADER", "mmv_records", "iter_mmv_records", "iter_mmv_lines", "mmv_dump_lines",
           "write_mmv_jsonl", "TYPE_TOKENS", "FLAG_NAMES", "LABEL_TYPE_NAMES", "flag_names", "label_type_name"]

MMV_DUMP_FORMAT_VERSION = 1
MMV_DUMP_HEADER = {"kind": "dump", "format": "pcpconform-mmv-jsonl",
                   "format_version": MMV_DUMP_FORMAT_VERSION}


def pmid_text(cluster: int, item: int) -> str | None:
    """The PMID the PMDA gives item of a file of this cluster (none above item 1023 or with
    a cluster out of range)."""
    ok = item <= 1023 and 0 <= cluster <= 4095
    return f"70.{cluster}.{item}" if ok else None


class _Walk:
    """One pass over the bytes; ``problems`` collects the defects met."""

    def __init__(self, data: bytes, file_name: str, *, blocks: bool = True,
                 stats: PathStats | None = None) -> None:
        self.data = data
        self.file_name = file_name
        self.blocks = blocks             # False: every entry one by one (the reference)
        self.stats = PathStats() if stats is None else stats   # what the value kernel did
        self.instance_tables: dict[tuple[int, int], Any] = {}   # (base, entries) -> instance_table
        self.metric_tables: dict[tuple[int, int], MetricTable] = {}
        self.problems: list[dict[str, Any]] = []
        self.cluster = 0
        self.flags = 0
        self.names = PmdaNamespace()     # the file's names as the PMDA inserts them, alone

    def problem(self, offset: int, field: str, message: str, code: str = "mmv.format",
                index: int | None = None, clause: str = "MMV-SEC-2",
                severity: str = "error") -> dict[str, Any]:
        obj = {"kind": "problem", "index": index, "offset": offset, "field": field,
               "code": code, "severity": severity, "clause": clause, "message": message}
        self.problems.append(obj)
        return obj

    def pcp_name(self, name: bytes) -> str:
        """The escaped name the PMDA exports a metric of this name under."""
        return escape_bytes(encode_text(exported_name(self.file_name, decode_text(name),
                                                      self.flags)))

    def pmid(self, item: int) -> str | None:
        """The PMID the PMDA gives item (none above 1023 or with a cluster out of range)."""
        return pmid_text(self.cluster, item)

    def pcp_indom(self, serial: int) -> str | None:
        """The InDom the PMDA gives serial (none while the cluster is out of range)."""
        return str(exported_indom(self.cluster, serial)) if 0 <= self.cluster <= 4095 else None

    def inside(self, offset: int, size: int) -> bool:
        return offset >= 0 and offset + size <= len(self.data)

    def slot(self, offset: int) -> bytes | None:
        """The text of the string slot at offset as the PMDA serves it (up to its NUL, at
        most 255 bytes), or None when it is not a slot in the file."""
        if offset < HEADER_SIZE or not self.inside(offset, STRING_SIZE):
            return None
        end = self.data.find(b"\0", offset, offset + STRING_SIZE)
        return self.data[offset:offset + STRING_SIZE - 1 if end < 0 else end]

    def unterminated(self, obj: dict[str, Any], key: str, offset: int) -> None:
        """``<key>_unterminated`` when the slot at offset has no NUL (the PMDA drops its
        256th byte)."""
        if self.data.find(b"\0", offset, offset + STRING_SIZE) < 0:
            obj[f"{key}_unterminated"] = True

    def help(self, obj: dict[str, Any], entry: Any, f: str, at: int) -> Iterator[dict[str, Any]]:
        for key in ("shorttext", "helptext"):
            off = getattr(entry, key)
            obj[f"{key}_offset"] = off
            if off == 0:
                obj[key] = None
                continue
            text = self.slot(off)
            obj[key] = None if text is None else escape_bytes(text)
            if text is not None and len(text) == STRING_SIZE - 1:
                self.unterminated(obj, key, off)
            if text is None:
                yield self.problem(at, f"{f}.{key}", f"{key} offset {off} is not a 256-byte"
                                   " slot inside the file")

    # -- the walk ------------------------------------------------------------------------
    def records(self) -> Iterator[dict[str, Any] | Block]:
        data = self.data
        if len(data) < HEADER_SIZE:
            yield self.problem(0, "header", f"file of {len(data)} bytes is shorter than the"
                               " 40-byte header", clause="MMV-HDR-1")
            return
        hdr = layouts(1)["header"].unpack(data, 0)
        self.cluster, self.flags = hdr.cluster, hdr.flags
        yield {"kind": "header", "offset": 0, "file": escape_bytes(self.file_name.encode(
                   "utf-8", "surrogateescape")),
               "magic": escape_bytes(hdr.magic), "version": hdr.version, "g1": str(hdr.g1),
               "g2": str(hdr.g2), "tocs": hdr.tocs, "flags": hdr.flags,
               "flag_names": flag_names(hdr.flags), "process": hdr.process,
               "cluster": hdr.cluster}
        if hdr.magic != MMV_MAGIC:
            yield self.problem(0, "header.magic", f"magic {hdr.magic!r} is not 'MMV\\0'", clause="MMV-HDR-1")
            return
        if hdr.version not in MMV_VERSIONS:
            yield self.problem(4, "header.version", f"version {hdr.version} is not 1, 2 or 3",
                               clause="MMV-HDR-1")
            return
        if hdr.g1 != hdr.g2:
            yield self.problem(16, "header.g2", f"generation words differ (g1 {hdr.g1},"
                               f" g2 {hdr.g2}): the file is being rewritten", "mmv.rewriting",
                               clause="MMV-HDR-2")
        elif hdr.g1 == 0:
            yield self.problem(8, "header.g1", "generation 0: the file has not been"
                               " initialised", "mmv.rewriting", clause="MMV-HDR-2")
        if hdr.tocs < 2:
            yield self.problem(24, "header.tocs", f"{hdr.tocs} TOC entries, fewer than 2",
                               clause="MMV-HDR-3")
        if not 0 <= hdr.cluster <= 4095:
            yield self.problem(36, "header.cluster", f"cluster {hdr.cluster} is outside 0..4095",
                               clause="MMV-HDR-3")
        s = mmv_structs(hdr.version)
        toc = []
        fits = (len(data) - HEADER_SIZE) // TOC_SIZE
        for t in range(max(hdr.tocs, 0)):
            where = HEADER_SIZE + TOC_SIZE * t
            if t >= fits:
                yield self.problem(where, f"toc[{t}]", f"{hdr.tocs} TOC entries do not fit"
                                   f" the file ({len(data)} bytes)", index=t, clause="MMV-HDR-3")
                break
            e = layouts(1)["toc"].unpack(data, where)
            section = TOC_NAMES.get(e.type)
            if e.type == TOC_LABELS and hdr.version < 3:
                section = None
            yield {"kind": "toc", "index": t, "offset": where, "type": e.type,
                   "section": section, "count": e.count, "section_offset": e.offset}
            if section is None:
                yield self.problem(where, f"toc[{t}].type", f"section type {e.type} is not"
                                   f" known in version {hdr.version}", index=t,
                                   clause="MMV-TOC-1")
            elif e.count < 0:
                yield self.problem(where + 4, f"toc[{t}].count", f"negative count {e.count}",
                                   index=t, clause="MMV-TOC-1")
            else:
                toc.append((t, e.type, e.count, e.offset))
        kinds = [k for _, k, _, _ in toc]
        for needed in (TOC_METRICS, TOC_VALUES):
            if needed not in kinds:
                yield self.problem(HEADER_SIZE, "toc", f"no {TOC_NAMES[needed]} section",
                                   clause="MMV-TOC-1")
        yield from self.sections(s, toc)

    def entries(self, s: MmvStructs, kind: int, count: int, base: int, *, report: bool = True
                ) -> Iterator[tuple[int, int, Any] | dict[str, Any]]:
        """(index, offset, parsed entry) of a section, then a problem where it leaves the
        file (noted in ``problems`` only when ``report``)."""
        size = s.sizes[kind]
        name = TOC_NAMES[kind]
        layout = layouts(s.version)[kind]
        for n in range(count):
            at = base + size * n
            if not self.inside(at, size):
                yield self.past_end(name, count, size, base, n) if report else {}
                return
            yield n, at, layout.unpack(self.data, at)

    def past_end(self, name: str, count: int, size: int, base: int, n: int) -> dict[str, Any]:
        """The problem of a section's entry n, the first that leaves the file."""
        return self.problem(base + size * n, f"{name}[{n}]", f"{name} section ({count} x {size}"
                            f" bytes at {base}) runs past the end of the file", index=n,
                            clause="MMV-TOC-1")

    def sections(self, s: MmvStructs, toc: list[tuple[int, int, int, int]]
                 ) -> Iterator[dict[str, Any] | Block]:
        # first the entries values and instances point at, so every line can name its owner
        indom_at: dict[int, int] = {}              # indom entry offset -> serial
        inst_at: dict[int, tuple[int, str | None]] = {}  # instance offset -> internal, name
        metric_at: dict[int, MetricAt] = {}
        for _, kind, count, base in toc:
            if kind == TOC_INSTANCES:
                fit = self.fitting(s, kind, count, base)
                table = instance_table(self.data, s.version, base, fit, self.stats)
                self.instance_tables[(base, fit)] = table
                entry_at = range(base, base + s.instance_size * fit, s.instance_size)
                named = table.escaped if None not in table.texts else \
                    [None if t is None else e for t, e in zip(table.texts, table.escaped)]
                inst_at.update(zip(entry_at, zip(table.internals, named)))
                continue
            if kind == TOC_METRICS:
                fit = self.fitting(s, kind, count, base)
                # the pmID rule by the cluster, not the walk's method: the table is kept by
                # the walk, and a bound method would make a cycle that holds the file's bytes
                pmid = functools.partial(pmid_text, self.cluster)
                metrics = self.metric_tables[(base, fit)] = MetricTable(self.data, s.version, base, fit, self.stats,
                                                                        self.file_name, self.flags, pmid)
                fields = metrics.columns
                metric_at.update(zip(range(base, base + metrics.size * fit, metrics.size), map(
                    MetricAt._make, zip(metrics.escaped, fields["item"].tolist(), fields["type"].tolist(),
                                        fields["indom"].tolist(), range(fit), repeat(metrics.naming)))))
                continue
            if kind != TOC_INDOMS:
                continue
            for e in self.entries(s, kind, count, base, report=False):
                if isinstance(e, dict):
                    break
                _, at, entry = e
                indom_at[at] = entry.serial
        seen_items: set[int] = set()
        for _, kind, count, base in toc:
            if self.blocks and kind in (TOC_VALUES, TOC_STRINGS, TOC_INSTANCES, TOC_METRICS):
                yield from self.block_section(s, kind, count, base, indom_at, inst_at, metric_at,
                                              seen_items)
                continue
            for e in self.entries(s, kind, count, base):
                if isinstance(e, dict):
                    yield e
                    break
                n, at, entry = e
                if kind == TOC_INDOMS:
                    yield from self.indom(n, at, entry)
                elif kind == TOC_INSTANCES:
                    yield from self.instance(s, n, at, entry, indom_at)
                elif kind == TOC_METRICS:
                    yield from self.metric(s, n, at, entry, seen_items)
                elif kind == TOC_VALUES:
                    yield from self.value(n, at, entry, metric_at, inst_at)
                elif kind == TOC_STRINGS:
                    yield self.string(n, at, entry)
                else:
                    yield self.label(n, at, entry)

    def fitting(self, s: MmvStructs, kind: int, count: int, base: int) -> int:
        """How many of a section's entries lie inside the file (the walk stops at the first
        that does not)."""
        return max(0, min(count, (len(self.data) - base) // s.sizes[kind]))

    def block_section(self, s: MmvStructs, kind: int, count: int, base: int,
                      indom_at: dict[int, int], inst_at: dict[int, tuple[int, str | None]],
                      metric_at: dict[int, MetricAt], seen_items: set[int]
                      ) -> Iterator[dict[str, Any] | Block]:
        """A values, strings, instances or metrics section as blocks of lines made by
        columns or rows, and the rows they leave to the per-entry walk (mmv_blocks,
        mmv_metrics)."""
        fit = self.fitting(s, kind, count, base)
        if kind == TOC_METRICS:
            metrics = self.metric_tables[(base, fit)]
            clean = metrics.clean()
            block = metrics.rows(self.pcp_indom, functools.partial(self.place_all, seen=seen_items))
        elif kind == TOC_VALUES:
            clean, block = value_rows(self.data, base, fit, self.flags, metric_at, inst_at,
                                      self.stats)
        elif kind == TOC_STRINGS:
            clean, block = string_rows(self.data, base, fit, self.stats)
        else:
            clean, block = instance_rows(self.data, s.version, base, fit, indom_at, self.pcp_indom,
                                         self.stats, self.instance_tables.get((base, fit)))
        layout = layouts(s.version)[kind]
        size = s.sizes[kind]
        for part in blocks_and_rows(clean, block):
            if isinstance(part, Block):
                yield part
                continue
            at = base + size * part
            entry = layout.unpack(self.data, at)
            if kind == TOC_VALUES:
                yield from self.value(part, at, entry, metric_at, inst_at)
            elif kind == TOC_STRINGS:
                yield self.string(part, at, entry)
            elif kind == TOC_METRICS:
                yield from self.metric(s, part, at, entry, seen_items)
            else:
                yield from self.instance(s, part, at, entry, indom_at)
        if fit < count:
            yield self.past_end(TOC_NAMES[kind], count, size, base, fit)

    def string(self, n: int, at: int, entry: Any) -> dict[str, Any]:
        obj: dict[str, Any] = {"kind": "string", "index": n, "offset": at}
        put_text(entry.payload, obj, "text")
        return obj

    def indom(self, n: int, at: int, d: Any) -> Iterator[dict[str, Any]]:
        f = f"indoms[{n}]"
        obj: dict[str, Any] = {"kind": "indom", "index": n, "offset": at, "serial": d.serial,
                               "count": d.count, "instances_offset": d.offset}
        problems = list(self.help(obj, d, f, at))
        obj["pcp_indom"] = self.pcp_indom(d.serial)
        yield obj
        if d.serial in (0, 0xFFFFFFFF):
            yield self.problem(at, f + ".serial", f"serial {d.serial} means no indom", index=n,
                               clause="MMV-VAL-1")
        yield from problems

    def instance(self, s: MmvStructs, n: int, at: int, i: Any, indom_at: dict[int, int]
                 ) -> Iterator[dict[str, Any]]:
        f = f"instances[{n}]"
        serial = indom_at.get(i.indom)
        obj: dict[str, Any] = {"kind": "instance", "index": n, "offset": at,
                               "indom_offset": i.indom, "padding": i.padding,
                               "internal": i.internal}
        problems = []
        if s.version == 1:
            put_text(i.external, obj, "name")
        else:
            obj["name_offset"] = i.external
            name = self.slot(i.external)
            obj["name"] = None if name is None else escape_bytes(name)
            if name is not None and len(name) == STRING_SIZE - 1:
                self.unterminated(obj, "name", i.external)
            if name is None:
                problems.append(self.problem(at + 16, f + ".external", f"name offset"
                                             f" {i.external} is not a 256-byte slot inside"
                                             " the file", index=n))
        obj["serial"] = serial
        obj["pcp_indom"] = None if serial is None else self.pcp_indom(serial)
        yield obj
        if serial is None:
            yield self.problem(at, f + ".indom", f"indom back-pointer {i.indom} is not an"
                               " indom entry", index=n)
        yield from problems

    def metric(self, s: MmvStructs, n: int, at: int, m: Any, seen: set[int]
               ) -> Iterator[dict[str, Any]]:
        f = f"metrics[{n}]"
        obj: dict[str, Any] = {"kind": "metric", "index": n, "offset": at}
        problems = []
        if s.version == 1:
            put_text(m.name, obj, "name")
            name: bytes | None = m.name.partition(b"\0")[0]
        else:
            obj["name_offset"] = m.name
            name = self.slot(m.name)
            obj["name"] = None if name is None else escape_bytes(name)
            if name is not None and len(name) == STRING_SIZE - 1:
                self.unterminated(obj, "name", m.name)
            if name is None:
                problems.append(self.problem(at, f + ".name", f"name offset {m.name} is not a"
                                             " 256-byte slot inside the file", index=n))
        obj.update({"item": m.item, "type": m.type,
                    "type_name": TYPE_TOKENS.get(m.type, f"type-{m.type}"),
                    "semantics": m.semantics, "sem": sem_token(m.semantics),
                    "dimension": f"0x{m.dimension:08x}", "units": unit_fields(m.dimension),
                    "indom": m.indom, "padding": m.padding})
        problems += self.help(obj, m, f, at)
        obj["pcp_name"] = None if name is None else self.pcp_name(name)
        obj["pmid"] = self.pmid(m.item)
        obj["pcp_indom"] = None if is_singular(m.indom) else self.pcp_indom(m.indom & 0xFFFFFFFF)
        obj["exported"] = self.place(name, m.item, m.type, seen)
        yield obj
        if name == b"":
            problems.append(self.problem(at, f + ".name", "empty metric name", index=n))
        if m.type not in MMV_TYPES:
            problems.append(self.problem(at + (68 if s.version == 1 else 12), f + ".type",
                                         f"type {m.type} is not an MMV type", index=n,
                                         clause="MMV-VAL-1"))
        yield from problems

    def place(self, name: bytes | None, item: int, mtype: int, seen: set[int],
              pcp_name: str | None = None) -> bool:
        """Whether the PMDA exports a metric of this name, item and type, the metrics before
        it placed (``seen``: their items); the name goes into the namespace as the PMDA
        inserts it: a metric whose name and item pass, whatever its type. ``pcp_name``: the
        name's ``exported_name``, where the caller has it."""
        return self.place_all([name], [item], [mtype], [pcp_name], seen)[0]

    def place_all(self, names: list[bytes | None], items: list[int], types: list[int],
                  pcp_names: list[str | None], seen: set[int]) -> list[bool]:
        """``place`` of each metric in turn (a metrics section's clean run at once)."""
        ok_cluster = 0 <= self.cluster <= 4095
        add = self.names.add
        known = [x for x in pcp_names if x is not None]
        # the names' characters checked at once where all pass (the common case)
        all_pass = len(known) == len(pcp_names) and only_name_chars("".join(known)) is not None
        out = []
        for name, item, mtype, pcp_name in zip(names, items, types, pcp_names):
            ok_item = ok_cluster and item <= 1023
            if pcp_name is None and name is not None:
                pcp_name = exported_name(self.file_name, decode_text(name), self.flags)
            placed = (ok_item and item not in seen and pcp_name is not None and bool(name)
                      and (all_pass or only_name_chars(pcp_name) is not None) and add(pcp_name).exported)
            if ok_item:
                seen.add(item)
            out.append(bool(placed) and mtype in MMV_TYPES)
        return out

    def value(self, n: int, at: int, v: Any, metric_at: dict[int, MetricAt],
              inst_at: dict[int, tuple[int, str | None]]) -> Iterator[dict[str, Any]]:
        f = f"values[{n}]"
        m = metric_at.get(v.metric)
        obj: dict[str, Any] = {"kind": "value", "index": n, "offset": at,
                               "metric_offset": v.metric, "instance_offset": v.instance,
                               "atom": v.value.hex(), "extra": str(v.extra)}
        problems = []
        if m is None:
            problems.append(self.problem(at + 16, f + ".metric", f"metric back-pointer"
                                         f" {v.metric} is not a metric entry", index=n))
            obj.update({"name": None, "item": None, "pcp_name": None, "pmid": None,
                        "instance": None, "instance_name": None, "type": None, "value": None})
            yield obj
            yield from problems
            return
        obj["name"] = m.name
        obj["item"] = m.item
        obj["pcp_name"] = m.pcp_name
        obj["pmid"] = m.pmid
        inst = None if is_singular(m.indom) else inst_at.get(v.instance)
        obj["instance"] = None if inst is None else inst[0]
        obj["instance_name"] = None if inst is None else inst[1]
        if inst is None and not is_singular(m.indom):
            problems.append(self.problem(at + 24, f + ".instance", f"instance back-pointer"
                                         f" {v.instance} is not an instance entry", index=n))
        elif is_singular(m.indom) and v.instance != 0:
            problems.append(self.problem(at + 24, f + ".instance", "a singular metric's"
                                         " value points at an instance", index=n))
        text = None
        if m.type == TYPE_STRING:
            obj["string_offset"] = v.extra
            text = self.slot(v.extra)
            if text is None:
                problems.append(self.problem(at + 8, f + ".extra", f"string offset {v.extra} is"
                                             " not a 256-byte slot inside the file", index=n))
        obj["type"] = TYPE_TOKENS.get(m.type, f"type-{m.type}")
        obj["value"] = typed_mmv_value(m.type, v.value, text)
        if text is not None and len(text) == STRING_SIZE - 1:
            self.unterminated(obj, "value", v.extra)
        if self.flags & FLAG_SENTINEL and is_sentinel(m.type, v.value, text):
            obj["sentinel"] = True
        if m.type == TYPE_ELAPSED and v.extra > 0:
            problems.append(self.problem(at + 8, f + ".extra", f"ELAPSED extra {v.extra} is"
                                         " positive (an open interval's is negative)", index=n,
                                         clause="MMV-VAL-1", severity="warning"))
        yield obj
        yield from problems

    def label(self, n: int, at: int, lb: Any) -> dict[str, Any]:
        obj: dict[str, Any] = {"kind": "label", "index": n, "offset": at, "flags": lb.flags,
                               "type_name": label_type_name(lb.flags),
                               "optional": bool(lb.flags & LABEL_OPTIONAL),
                               "identity": lb.identity, "internal": lb.internal}
        put_text(lb.payload, obj, "payload")
        return obj


def iter_mmv_lines(data: bytes, file_name: str, *, blocks: bool = True, stats: PathStats | None = None
                   ) -> tuple[Iterator[dict[str, Any] | Block], list[dict[str, Any]]]:
    """The dump of ``data`` as it is made: lines, and blocks of lines the columns made
    (``blocks=False``: every line made by the per-entry walk), and the list the problems
    among them are added to meanwhile; ``stats`` counts what the value kernel did. A
    metrics block places its names in the PMDA's namespace when its JSON Lines are first
    made: make them, if at all, before drawing the next line."""
    walk = _Walk(data, file_name, blocks=blocks, stats=stats)
    return walk.records(), walk.problems


def iter_mmv_records(data: bytes, file_name: str
                     ) -> tuple[Iterator[dict[str, Any]], list[dict[str, Any]]]:
    """The lines of the dump of ``data`` (a file called ``file_name`` in the MMV directory)
    as they are made, and the list the problems among them are added to meanwhile."""
    lines, problems = iter_mmv_lines(data, file_name)

    def records() -> Iterator[dict[str, Any]]:
        for obj in lines:
            if isinstance(obj, Block):
                yield from obj.records()
            else:
                yield obj
    return records(), problems


def mmv_records(data: bytes, file_name: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Every line of the dump of ``data``, and the problems among them."""
    lines, problems = iter_mmv_records(data, file_name)
    return list(lines), problems




def mmv_dump_lines(records: Iterable[dict[str, Any] | Block]) -> Iterator[str]:
    """The JSON Lines, without newlines, format header first."""
    yield ENCODE(MMV_DUMP_HEADER)
    for obj in records:
        if isinstance(obj, Block):
            yield from obj.jsonl()
        else:
            yield ENCODE(obj)


def write_mmv_jsonl(records: Iterable[dict[str, Any] | Block], out: TextIO) -> None:
    # line by line and chunk by chunk: one join of a whole dump copies megabytes twice more
    write = out.write
    for line in mmv_dump_lines(records):
        write(line)
        write("\n")
