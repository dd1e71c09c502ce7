"""The fields of MMV dump lines: type, flag and label names, units, tagged values, the
fixed-size layouts of the entries, and what a value line repeats of its metric (shared by
``mmv_jsonl``'s walk and ``mmv_blocks``' columns)."""

from __future__ import annotations

import json
import re
import struct
from collections import namedtuple
from collections.abc import Callable
from functools import cache
from json.encoder import encode_basestring_ascii
from typing import Any, NamedTuple

from construct import Bytes, FormatField, Renamed

from pcpconform.dump.escape import escape_bytes
from pcpconform.format.pmtypes import PmSem, PmUnits
from pcpconform.mmv.model import (
    FLAG_NOPREFIX,
    FLAG_PROCESS,
    FLAG_SENTINEL,
    LABEL_CLUSTER,
    LABEL_INDOM,
    LABEL_INSTANCES,
    LABEL_ITEM,
    LABEL_OPTIONAL,
    TYPE_DOUBLE,
    TYPE_ELAPSED,
    TYPE_FLOAT,
    TYPE_I32,
    TYPE_I64,
    TYPE_NOSUPPORT,
    TYPE_STRING,
    TYPE_U32,
    TYPE_U64,
)
from pcpconform.mmv.schema import (
    TOC_INDOMS,
    TOC_INSTANCES,
    TOC_LABELS,
    TOC_METRICS,
    TOC_STRINGS,
    TOC_VALUES,
    mmv_structs,
)

__all__ = ["TYPE_TOKENS", "TYPE_DESCRIPTIONS", "FLAG_NAMES", "LABEL_TYPE_NAMES", "NAME_CHARS",
           "ENCODE", "MetricAt", "Layout", "flag_names", "label_type_name", "sem_token", "unit_fields",
           "units_text", "json_string", "only_name_chars", "put_text", "typed_mmv_value", "is_sentinel", "layouts"]

# every text is escaped to ASCII (DUMP-MMV-ESC), so the C encoder's ASCII path is exact
ENCODE = json.JSONEncoder(separators=(",", ":")).encode

#: value type tokens, as the archive dump names PCP types (DUMP-MMV-METRIC)
TYPE_TOKENS = {TYPE_NOSUPPORT: "nosupport", TYPE_I32: "32", TYPE_U32: "u32", TYPE_I64: "64",
               TYPE_U64: "u64", TYPE_FLOAT: "float", TYPE_DOUBLE: "double",
               TYPE_STRING: "string", TYPE_ELAPSED: "elapsed"}
FLAG_NAMES = ((FLAG_NOPREFIX, "noprefix"), (FLAG_PROCESS, "process"), (FLAG_SENTINEL, "sentinel"))
LABEL_TYPE_NAMES = {LABEL_INDOM: "indom", LABEL_CLUSTER: "cluster", LABEL_ITEM: "item",
                    LABEL_INSTANCES: "instances"}
_INT_FORMATS = {TYPE_I32: "<i", TYPE_U32: "<I", TYPE_I64: "<q", TYPE_U64: "<Q",
                TYPE_ELAPSED: "<q"}
#: mmvdump's names of the MMV types (the text listing's)
TYPE_DESCRIPTIONS = {0: "32-bit int", 1: "32-bit unsigned int", 2: "64-bit int",
                     3: "64-bit unsigned int", 4: "float", 5: "double", 6: "string",
                     9: "elapsed"}
# the PMDA's name check: after the first (alphabetic) character, these only
NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.")
#: a name of NAME_CHARS only (a match, not a set per name)
only_name_chars = re.compile(r"[a-zA-Z0-9_.]*\Z").match


def json_string(text: str | None) -> str:
    """A JSON string (or null) as ``ENCODE`` writes it (the text is already ASCII)."""
    return "null" if text is None else encode_basestring_ascii(text)


def flag_names(flags: int) -> list[str]:
    names = [name for bit, name in FLAG_NAMES if flags & bit]
    rest = flags & ~(FLAG_NOPREFIX | FLAG_PROCESS | FLAG_SENTINEL)
    return names + ([f"unknown-0x{rest:x}"] if rest else [])


def label_type_name(flags: int) -> str:
    return LABEL_TYPE_NAMES.get(flags & ~LABEL_OPTIONAL, f"type-0x{flags & ~LABEL_OPTIONAL:x}")


@cache
def sem_token(sem: int) -> str:
    try:
        return PmSem(sem).name.lower()
    except ValueError:
        return f"sem-{sem}"


def unit_fields(word: int) -> dict[str, int]:
    return dict(_unit_fields(word))      # a copy: the caller's line owns it


@cache
def _unit_fields(word: int) -> tuple[tuple[str, int], ...]:
    u = PmUnits.from_word(word)
    return tuple((k, getattr(u, k)) for k in ("dimSpace", "dimTime", "dimCount", "scaleSpace",
                                              "scaleTime", "scaleCount"))


@cache          # a file's metrics share few units words
def units_text(dimension: str) -> str:
    """The listing's units of a dimension word given as 0x%08x."""
    text = str(PmUnits.from_word(int(dimension, 16)))
    return "" if text == "none" else text     # pmUnitsStr prints nothing for no units


def put_text(raw: bytes, obj: dict[str, Any], key: str) -> None:
    """A NUL-terminated field: its text, and its bytes after the NUL when not all zero."""
    text, nul, rest = raw.partition(b"\0")
    obj[key] = escape_bytes(text)
    if not nul:
        obj[f"{key}_unterminated"] = True
    elif rest.strip(b"\0"):
        obj[f"{key}_padding"] = escape_bytes(rest)


def typed_mmv_value(mtype: int, atom: bytes, text: bytes | None) -> dict[str, Any] | None:
    """The tagged value of DUMP-MMV-VALUE: integers as decimal strings, floats as IEEE bits."""
    if mtype == TYPE_STRING:
        return None if text is None else {"type": "string", "value": escape_bytes(text)}
    if mtype in _INT_FORMATS:
        return {"type": TYPE_TOKENS[mtype], "value": str(struct.unpack_from(_INT_FORMATS[mtype], atom)[0])}
    if mtype == TYPE_FLOAT:
        return {"type": "float", "value": "0x" + atom[3::-1].hex()}
    if mtype == TYPE_DOUBLE:
        return {"type": "double", "value": "0x" + atom[::-1].hex()}
    return None


def is_sentinel(mtype: int, atom: bytes, text: bytes | None) -> bool:
    """What the PMDA reads as "no value" under the SENTINEL flag."""
    if mtype in _INT_FORMATS:
        return atom == b"\xff" * 8
    if mtype == TYPE_FLOAT:
        return bool(struct.unpack_from("<f", atom)[0] != struct.unpack_from("<f", atom)[0])
    if mtype == TYPE_DOUBLE:
        return bool(struct.unpack_from("<d", atom)[0] != struct.unpack_from("<d", atom)[0])
    return mtype == TYPE_STRING and text == b""


class MetricAt(NamedTuple):
    """What a value line repeats of its metric, escaped once per metric; its exported name,
    pmID and value-line members are made when first read (``naming``: of the metric's
    index, all three, kept by its metrics table), as only JSON Lines show them. A named
    tuple: a file at the PMDA's limits makes 1023 of them."""

    name: str | None
    item: int
    type: int
    indom: int
    entry: int                  # its index in its metrics section
    naming: Callable[[int], tuple[str | None, str | None, str]]

    @property
    def pcp_name(self) -> str | None:
        return self.naming(self.entry)[0]

    @property
    def pmid(self) -> str | None:
        return self.naming(self.entry)[1]

    @property
    def json_part(self) -> str:
        """The members of a value line from name to pmid."""
        return self.naming(self.entry)[2]

    @property
    def text_name(self) -> str:
        """The listing's name."""
        return "?" if self.name is None else self.name


class Layout:
    """A fixed-size schema as one struct format and a named tuple of its fields, both
    derived from the construct declaration (one construct parse per entry is too slow for
    a file at the PMDA's limits)."""

    def __init__(self, schema: Any) -> None:
        fmt = "<"
        for sub in schema.subcons:
            con = sub.subcon
            while isinstance(con, Renamed):     # a field's docs may wrap it once more
                con = con.subcon
            if isinstance(con, FormatField):
                fmt += con.fmtstr.lstrip("<>=!")
            elif isinstance(con, Bytes):
                fmt += f"{con.length}s"
            else:
                raise TypeError(f"field {sub.name} of an MMV entry is not a fixed-size word")
        self.struct = struct.Struct(fmt)
        if self.struct.size != schema.sizeof():
            raise AssertionError(f"struct {fmt} does not match the schema's size")
        self.tuple: Any = namedtuple("Entry", [sub.name for sub in schema.subcons])  # type: ignore[misc]

    def unpack(self, data: bytes, at: int) -> Any:
        return self.tuple._make(self.struct.unpack_from(data, at))


@cache
def layouts(version: int) -> dict[int | str, Layout]:
    s = mmv_structs(version)
    out: dict[int | str, Layout] = {
        "header": Layout(s.header), "toc": Layout(s.toc), TOC_INDOMS: Layout(s.indom),
        TOC_INSTANCES: Layout(s.instance), TOC_METRICS: Layout(s.metric),
        TOC_VALUES: Layout(s.value), TOC_STRINGS: Layout(s.string)}
    if s.label is not None:
        out[TOC_LABELS] = Layout(s.label)
    return out


