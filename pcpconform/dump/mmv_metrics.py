"""The metrics section of an MMV dump read once and made by rows of plain fields.

A file at the PMDA's limits has 1023 metrics; made one dict at a time (a parsed entry, its
name and help slots, the namespace check, ``json``) each cost tens of microseconds. Here the
section is unpacked in one pass (``struct.iter_unpack``) and its slots read once: the table
gives the walk what a value line repeats of its metric, and a :class:`Block` of the lines of
each run of clean metrics, in both formats (its JSON Lines made of the table's columns by
``dump.mmv-interleave``). A metric with a problem, or whose name or help
slot has no NUL (or, in version 1, bytes after it), is left to the walk's per-entry
``metric`` and counted in ``ROW_FALLBACKS``; the two give the same lines
(tests/property/test_mmv_dump_blocks.py).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache, cached_property
from typing import Any

import numpy as np

from pcpconform.dump.escape import escape_bytes
from pcpconform.dump.mmv_blocks import (
    INTERLEAVE,
    ROW_FALLBACKS,
    Block,
    escape_all,
    int_column,
    interleave_rows,
    slot_ends,
    uint_column,
)
from pcpconform.dump.mmv_fields import (
    TYPE_DESCRIPTIONS,
    TYPE_TOKENS,
    json_string,
    layouts,
    sem_token,
    unit_fields,
    units_text,
)
from pcpconform.dump.mmv_slots import SLOT_TEXTS
from pcpconform.fastpath import PathStats
from pcpconform.mmv.columns import entry_dtype
from pcpconform.mmv.model import MMV_TYPES, decode_text, encode_text, exported_name, is_singular
from pcpconform.mmv.schema import TOC_METRICS, mmv_structs

__all__ = ["MetricTable"]

_SEM_TEXT = {1: "counter", 3: "instant", 4: "discrete"}


@cache
def _units_json(word: int) -> str:
    return ",".join(f'"{k}":{v}' for k, v in unit_fields(word).items())


@cache
def _kind_json(mtype: int, semantics: int, dimension: int) -> str:
    """The members of a metric line from type to units, shared by metrics alike."""
    return (f'"type":{mtype},"type_name":"{TYPE_TOKENS.get(mtype, f"type-{mtype}")}",'
            f'"semantics":{semantics},"sem":"{sem_token(semantics)}",'
            f'"dimension":"0x{dimension:08x}","units":{{{_units_json(dimension)}}}')


@cache
def _kind_text(mtype: int, semantics: int, padding: int, dimension: int) -> str:
    """The listing's type and units lines."""
    return (f"       type={TYPE_DESCRIPTIONS.get(mtype, '?')} (0x{mtype & 0xFFFFFFFF:x}),"
            f" sem={_SEM_TEXT.get(semantics, '?')} (0x{semantics & 0xFFFFFFFF:x}), pad=0x{padding:x}\n"
            f"       units={units_text(f'0x{dimension:08x}')}\n")


class MetricTable:
    """A metrics section's entries that lie inside the file, with the texts of their name
    and help slots as the walk reads them (None: no slot in the file; the flag: no NUL in
    it, or bytes after the NUL of a version 1 name). ``file_name`` and ``flags``: the
    file's, which its metrics' exported names are made of; ``pmid``: the pmID the PMDA
    gives an item of the file (or None)."""

    def __init__(self, data: bytes, version: int, base: int, count: int, stats: PathStats,
                 file_name: str, flags: int, pmid: Callable[[int], str | None]) -> None:
        self.file_name, self.flags, self.stats, self.pmid = file_name, flags, stats, pmid
        layout = layouts(version)[TOC_METRICS]
        size = layout.struct.size
        self.version, self.base, self.size = version, base, size
        make = layout.tuple._make
        self.entries: list[Any] = [make(row) for row in layout.struct.iter_unpack(
            data[base:base + size * count])] if count else []
        # the same entries as a numpy table, whose integer columns the lines are made of
        self.columns = np.frombuffer(data, entry_dtype(mmv_structs(version).metric), count, base if count else 0)
        self.names: list[tuple[bytes | None, bool]]
        # every slot offset read at once (``slot_ends``: -2 no slot in the file, -1 no NUL)
        offsets = [e.shorttext for e in self.entries] + [e.helptext for e in self.entries]
        if version != 1:
            offsets += [e.name for e in self.entries]
        # unsigned offsets: one past 2^63 becomes negative, no slot, as it is none
        starts = np.array(offsets, np.uint64).view(np.int64)
        ends = slot_ends(data, starts, stats) if offsets else np.zeros(0, np.int64)
        texts: list[tuple[bytes | None, bool]] = list(zip(SLOT_TEXTS(stats, data, starts), (ends == -1).tolist()))
        n = len(self.entries)
        self.short = [t if at else (None, False) for at, t in zip(offsets[:n], texts[:n])]
        self.long = [t if at else (None, False) for at, t in zip(offsets[n:2 * n], texts[n:2 * n])]
        if version == 1:
            self.names = []
            for e in self.entries:
                text, nul, rest = e.name.partition(b"\0")
                self.names.append((text, not nul or bool(rest.strip(b"\0"))))
        else:
            self.names = texts[2 * n:]
        raw = [t for t, _ in self.names]
        named = [t for t in raw if t is not None]
        self.escaped: list[str | None] = list(escape_all(named)) if len(named) == len(raw) else \
            [None if t is None else escape_bytes(t) for t in raw]

    @cached_property
    def exported(self) -> list[str | None]:
        """The names the PMDA exports the metrics under (made when first read: only JSON
        Lines show them)."""
        return [None if t is None else exported_name(self.file_name, decode_text(t), self.flags)
                for t, _ in self.names]

    @cached_property
    def pcp_names(self) -> list[str | None]:
        """``exported``, escaped: the prefix escaped and the name as escaped already (the
        escapes are byte by byte)."""
        prefix = escape_bytes(encode_text(exported_name(self.file_name, "", self.flags)))
        return [None if x is None else prefix + x for x in self.escaped]

    @cached_property
    def pmids(self) -> list[str | None]:
        """Each metric's pmID as the PMDA gives it (or None)."""
        return [self.pmid(e.item) for e in self.entries]

    @cached_property
    def json_parts(self) -> list[str]:
        """Each metric's members of a value line, from name to pmid (``MetricAt.json_part``),
        all made at once."""
        return interleave_rows(self.stats, len(self.entries), (
            '"name":', ("j", self.escaped), ',"item":', int_column(self.columns["item"]), ',"pcp_name":',
            ("j", self.pcp_names), ',"pmid":', ("j", self.pmids), "\n"))

    def naming(self, n: int) -> tuple[str | None, str | None, str]:
        """Metric n's exported name (escaped), pmID and value-line members (``MetricAt``'s,
        when first read)."""
        return self.pcp_names[n], self.pmids[n], self.json_parts[n]

    @cached_property
    def help_texts(self) -> tuple[list[str | None], list[str | None]]:
        """The short and long help texts escaped (None: no slot), all in one go."""
        out: list[list[str | None]] = []
        for slots in (self.short, self.long):
            raw = [t for t, _ in slots]
            there = [t for t in raw if t is not None]
            escaped = iter(escape_all(there))
            out.append([None if t is None else next(escaped) for t in raw])
        return out[0], out[1]

    def clean(self) -> list[bool]:
        """The metrics whose lines the rows make: no problem line, no extra member."""
        return self._clean

    @cached_property
    def _clean(self) -> list[bool]:
        return [name is not None and name != b"" and not odd and e.type in MMV_TYPES
                and (not e.shorttext or (short is not None and not s_odd))
                and (not e.helptext or (long is not None and not l_odd))
                for e, (name, odd), (short, s_odd), (long, l_odd)
                in zip(self.entries, self.names, self.short, self.long)]

    def rows(self, pcp_indom: Callable[[int], str | None],
             place: Callable[[list[bytes | None], list[int], list[int], list[str | None]], list[bool]]
             ) -> Callable[[int, int], Block]:
        """A maker of the block of the clean metrics lo..hi; ``place`` puts metrics' names
        (and their ``exported`` names) into the walk's namespace (in entry order, as the
        walk's own ``metric`` does), saying which are exported."""
        clean = self.clean()
        ROW_FALLBACKS["metrics"] += clean.count(False)
        indoms: dict[int, str] = {}

        def pcp_indom_json(indom: int) -> str:
            made = indoms.get(indom)
            if made is None:
                made = indoms[indom] = "null" if is_singular(indom) else json_string(pcp_indom(indom & 0xFFFFFFFF))
            return made

        def block(lo: int, hi: int) -> Block:
            placed: list[bool] = []
            rows = self.columns[lo:hi]

            def exported() -> list[bool]:
                # placed when the JSON Lines are first made, not before: the listing never
                # shows them, and a block is taken before the walk goes on, so the names go
                # into the namespace in entry order all the same
                if len(placed) < hi - lo:
                    placed[:] = place([t for t, _ in self.names[lo:hi]], rows["item"].tolist(),
                                      rows["type"].tolist(), self.exported[lo:hi])
                return placed

            def jsonl() -> list[str]:
                shorts, longs = self.help_texts
                flags = exported()
                named: list[Any] = [',"name":', ("j", self.escaped[lo:hi])]
                if self.version != 1:
                    named = [',"name_offset":', uint_column(rows["name"])] + named
                pcp_indoms = list(map(pcp_indom_json, rows["indom"].tolist()))
                kinds = list(map(_kind_json, rows["type"].tolist(), rows["semantics"].tolist(),
                                 rows["dimension"].tolist()))
                return INTERLEAVE(self.stats, hi - lo, (
                    '{"kind":"metric","index":', int_column(np.arange(lo, hi)), ',"offset":',
                    int_column(np.arange(self.base + self.size * lo, self.base + self.size * hi, self.size)), *named,
                    ',"item":', int_column(rows["item"]), ",",
                    kinds,
                    ',"indom":', int_column(rows["indom"]), ',"padding":', int_column(rows["padding"]),
                    ',"shorttext_offset":', uint_column(rows["shorttext"]),
                    ',"shorttext":', ("j", shorts[lo:hi]),
                    ',"helptext_offset":', uint_column(rows["helptext"]),
                    ',"helptext":', ("j", longs[lo:hi]), ',"pcp_name":', ("j", self.pcp_names[lo:hi]),
                    ',"pmid":', ("j", self.pmids[lo:hi]), ',"pcp_indom":', pcp_indoms,
                    ',"exported":', ["true" if f else "false" for f in flags], "}\n"))

            def text() -> list[str]:
                lines = []
                shorts, longs = self.help_texts
                for n in range(lo, hi):
                    e = self.entries[n]
                    short, long = shorts[n], longs[n]
                    lines.append(
                        f"  [{e.item}/{self.base + self.size * n}] {self.escaped[n]}\n"
                        f"{_kind_text(e.type, e.semantics, e.padding, e.dimension)}"
                        f"{'       (no indom)' if is_singular(e.indom) else f'       indom={e.indom}'}\n"
                        + ("       (no shorttext)\n" if not e.shorttext else
                           f"       shorttext={short if short is not None else '?'}\n")
                        + ("       (no helptext)" if not e.helptext else
                           f"       helptext={long if long is not None else '?'}"))
                return ["\n".join(lines)]
            return Block("metric", hi - lo, jsonl, text)
        return block
