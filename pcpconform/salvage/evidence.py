"""Which of a metric's conflicting descriptors its values are stored as (SALVAGE-META-3).

Only when two descriptors of one pmID disagree are the volumes read for this: every value
set of such a metric votes for the descriptors its storage suits (the valfmt its type calls
for, value blocks of its type, one value without an instance for a singular metric, values
with instances otherwise) and against the others. The descriptor with most votes is kept;
on a tie, the first, as libpcp keeps it.
"""

from __future__ import annotations

import struct
from typing import Any

from pcpconform.format.pmtypes import PM_IN_NULL, PmType
from pcpconform.format.schema import LABEL_SIZE, RESULT_HEADER_SIZE, block_offset
from pcpconform.io.writer import valfmt_for
from pcpconform.salvage.framing import Frame, frames
from pcpconform.salvage.sources import Source

__all__ = ["choose_descriptors"]

_VSET = struct.Struct(">Ii")
_PAIR = struct.Struct(">iI")
_WORD = struct.Struct(">I")
_INSITU = 0


VSets = list[tuple[int, int, int, list[tuple[int, int]]]]


def _vsets(data: bytes, version: int, wanted: dict[int, list[Any]]) -> VSets | None:
    """(pmID, numval, valfmt, pairs) of the value sets of wanted metrics; None if the value
    sets do not fit the record."""
    pos = RESULT_HEADER_SIZE[version]
    end = len(data) - 4
    if pos > end:
        return None
    numpmid = _WORD.unpack_from(data, pos - 4)[0]
    if numpmid * 8 > end - pos:
        return None
    out: VSets = []
    for _ in range(numpmid):
        if pos + 8 > end:
            return None
        pmid, numval = _VSET.unpack_from(data, pos)
        pos += 8
        if numval <= 0:
            continue
        if pos + 4 + 8 * numval > end:
            return None
        if pmid in wanted:
            valfmt = _WORD.unpack_from(data, pos)[0]
            out.append((pmid, numval, valfmt, [_PAIR.unpack_from(data, pos + 4 + 8 * j) for j in range(numval)]))
        pos += 4 + 8 * numval
    return out


def _vote(desc: Any, numval: int, valfmt: int, pairs: list[tuple[int, int]], data: bytes) -> int:
    dtype = int(desc.type)
    want = valfmt_for(dtype)
    score = 1 if (valfmt == want or (valfmt == _INSITU and dtype == PmType.FLOAT)
                  or (valfmt != _INSITU and want != _INSITU)) else -1
    if valfmt != _INSITU:
        off = block_offset(pairs[0][1])
        if off >= 0 and off + 4 <= len(data) - 4:
            vtype = _WORD.unpack_from(data, off)[0] >> 24
            score += 1 if vtype == dtype else 0 if vtype == 0 else -1
    singular = desc.indom.is_null
    insts = {inst for inst, _ in pairs}
    if singular:
        score += 1 if numval == 1 and insts == {PM_IN_NULL} else -1
    else:
        score += -1 if PM_IN_NULL in insts else 1
    return score


def choose_descriptors(volumes: list[Source], version: int, variants: dict[int, list[Any]]) -> dict[int, int]:
    """pmID -> the index of the variant its values vote for."""
    scores = {pmid: [0] * len(v) for pmid, v in variants.items()}

    def decode(data: bytes) -> Any:
        return _vsets(data, version, variants)

    for source in volumes:
        if source.size <= LABEL_SIZE[version]:
            continue
        for got in frames(source, LABEL_SIZE[version], min_len=8, aligned=True, stray_below=4,
                          decode=decode, proven=lambda v: v is not None, undecodable="result.decode"):
            if not isinstance(got, Frame) or got.decoded is None:
                continue
            for pmid, numval, valfmt, pairs in got.decoded:
                for k, desc in enumerate(variants[pmid]):
                    scores[pmid][k] += _vote(desc, numval, valfmt, pairs, got.data)
    return {pmid: max(range(len(s)), key=lambda k: (s[k], -k)) for pmid, s in scores.items()}
