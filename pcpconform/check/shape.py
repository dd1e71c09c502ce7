"""What a rule's column form is given: the shape of a clean result, learned once.

A result rule states two forms side by side (values.py, times.py): its per-record check,
run on the reference path (results.py), and its column form, ``columns(shape)``, called by
the column engine (columns.py) once per learned shape. The shape is a record the reference
path has just checked and found clean; every later record of that shape has the same bytes
but for its timestamp and its values. The column form returns what must still be checked
on each such record (a ``ShapeCheck``), or None when the shape's fixed bytes decide the
rule; it raises ``Declined`` with its reason for a shape it cannot check on columns.

A ``ShapeCheck`` is called with a later record's bytes and time (ns): it raises
``Declined`` where the rule might report something (the record then goes to the reference
path, nothing changed), else returns what to commit to the checker's state once every
rule has passed (or None).
"""

from __future__ import annotations

import itertools
import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pcpconform.format.pmtypes import PmType
from pcpconform.format.values import F32, decode_block, decode_insitu

__all__ = ["VsetShape", "LearnedShape", "ShapeCheck"]

#: a rule's per-record column check: (record bytes, time ns) -> what to commit, or None
ShapeCheck = Callable[[bytes, int], Callable[[], None] | None]

#: block payload formats of the fixed-size numeric types (FLOAT: its bits)
_BLOCK_CODE: dict[int, str] = {PmType.I64: "q", PmType.U64: "Q", PmType.DOUBLE: "d", PmType.FLOAT: "I"}


@dataclass(frozen=True)
class VsetShape:
    """One value set of a learned shape: where its values lie and what its metric is."""

    k: int                                   # its place among the record's value sets
    pmid: int
    numval: int
    valfmt: int
    insts: tuple[int, ...]
    ptype: int                               # the descriptor's type, semantics, indom
    sem: int
    indom: int | None
    vlist: int                               # byte offset of its first pmValue
    blocks: tuple[tuple[int, int, int], ...]  # DPTR/SPTR: each value's (offset, vlen, vtype)

    def reader(self) -> Callable[[bytes], tuple[Any, ...]]:
        """A function giving this value set's values from a record of the shape, as the
        bulk decoder types them."""
        if self.valfmt == 0:
            code = "i" if self.ptype == PmType.I32 else "I"
            words = struct.Struct(">" + ("4x" + code) * self.numval)
            at, ptype = self.vlist, self.ptype
            if ptype in (PmType.I32, PmType.U32):
                return lambda data: words.unpack_from(data, at)
            return lambda data: tuple(decode_insitu(w, ptype) for w in words.unpack_from(data, at))
        blocks = self.blocks
        code = _BLOCK_CODE.get(blocks[0][2], "")
        if code and all(vtype == blocks[0][2] and vlen == 4 + struct.calcsize(code)
                        for _, vlen, vtype in blocks) and all(b[0] > a[0] for a, b in itertools.pairwise(blocks)):
            parts, at = [], blocks[0][0]
            for off, vlen, _ in blocks:     # fixed sizes are whole words: no padding
                parts.append(f"{off - at + 4}x{code}")
                at = off + vlen
            fmt = struct.Struct(">" + "".join(parts))
            first = blocks[0][0]
            if blocks[0][2] == PmType.FLOAT:
                floats = struct.Struct(fmt.format.replace("I", "f"))
                return lambda data: tuple(map(F32, floats.unpack_from(data, first), fmt.unpack_from(data, first)))
            return lambda data: fmt.unpack_from(data, first)
        return lambda data: tuple(decode_block(vtype, data[off + 4:off + vlen]) for off, vlen, vtype in blocks)


@dataclass(frozen=True)
class LearnedShape:
    """A clean record's value sets (every one with values, described, without events)."""

    version: int
    data: bytes
    ns: int                                  # its time
    vsets: tuple[VsetShape, ...]
