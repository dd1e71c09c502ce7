"""Result records of any shape as columns, by a compiled kernel (``_resultcols.c``).

Archives whose results never repeat a layout (per-process metrics: instances come and go)
cost the bulk decoder a Python object or more per value set. The kernel reads a whole run
of records in one call into numpy columns: per value set its record, pmID, numval and
valfmt; per value its instance, value word, and for a DPTR/SPTR value its block's byte
offset, vtype and vlen. It reads only records with the writer's layout (value blocks back
to back in value order, no event arrays) and gives every other record a typed status
(``KernelReason``), which its caller counts and decodes by the reference.

The registered pair ``bulk.columns`` holds the kernel to the schema decoder: the results a
run decodes to, built from the columns (``decode_run_columns``), equal the schema's, record
by record; a run with a record the kernel does not read is declined with that record's
reason. Where the kernel is not built, every run is declined with ``NOT_BUILT``, counted.
"""

from __future__ import annotations

import enum
import functools
from array import array
from itertools import accumulate
from typing import Any

from pcpconform.fastpath import Declined, import_kernel, register
from pcpconform.format.pmtypes import PmType
from pcpconform.format.schema import RESULT_HEADER_SIZE
from pcpconform.format.values import decode_block, decode_insitu
from pcpconform.io.bulk import DecodeReason, decode_result_schema
from pcpconform.io.decoded import DecodedResult, DecodedValueSet, result_head
from pcpconform.io.reader import RawRecord

__all__ = ["KernelReason", "KERNEL_ERROR", "ResultArrays", "result_arrays", "joined", "run_columns",
           "run_arrays", "filled_text", "decode_run_columns",
           "decode_run_schema", "COLUMNS"]

_kernel, KERNEL_ERROR = import_kernel("pcpconform.io._resultcols")


class KernelReason(enum.Enum):
    """Why the kernel does not read a record (its status; 0 is read) or a run."""

    NOT_BUILT = "the compiled kernel pcpconform.io._resultcols is not built or does not import"
    # what the bulk decoder declines, the kernel too (numbered in its order in _resultcols.c)
    SHORT = DecodeReason.SHORT.value
    NUMPMID = DecodeReason.NUMPMID.value
    VSETS = DecodeReason.VSETS.value
    VALFMT = DecodeReason.VALFMT.value
    BLOCK_OUTSIDE = DecodeReason.BLOCK_OUTSIDE.value
    BLOCK_VLEN = DecodeReason.BLOCK_VLEN.value
    EVENTS = DecodeReason.EVENTS.value
    ORDER = "value blocks not back to back in the order of their values"
    COVERAGE = "value blocks do not end at the trailer"
    TAIL = DecodeReason.TAIL.value


#: the kernel's status codes, in its order (0: read)
STATUS: tuple[KernelReason, ...] = tuple(KernelReason)


class ResultArrays:
    """The columns of a run of records (numpy arrays, native order): ``status`` per record
    (0 read, else the index of its ``KernelReason``), ``rec_vset`` (records + 1: where
    each record's value sets start), then per value set ``pmid``, ``numval``, ``valfmt``
    (-1 where numval <= 0) and ``vset_val`` (value sets + 1: where its values start), and
    per value ``inst``, ``word``, ``vtype`` (-1 INSITU), ``vlen`` and ``boff`` (the block's
    offset from the record's length word, -1 INSITU), and per record ``odd`` (1 where a block
    is not as the writer makes it: its size, a string's NUL, the "~" padding). Declined
    records have no rows."""

    __slots__ = ("boff", "inst", "numval", "odd", "pmid", "rec_vset", "status", "valfmt", "vlen", "vset_val",
                 "vtype", "word")

    def __init__(self, raw: tuple[bytes, ...]) -> None:
        import numpy as np

        (self.status, self.rec_vset, self.pmid, self.numval, self.valfmt, self.vset_val, self.inst,
         self.word, self.vtype, self.vlen, self.boff, self.odd) = map(np.frombuffer, raw, _dtypes())


@functools.cache
def _dtypes() -> tuple[Any, ...]:
    """The columns' numpy dtypes, in ``ResultArrays``' order (made once: a record at a time
    is the records path's rate)."""
    import numpy as np

    return tuple(map(np.dtype, ("i1", "i8", "u4", "i4", "i4", "i8", "i4", "u4", "i4", "i4", "i8", "i1")))


def result_arrays(records: list[RawRecord], version: int) -> ResultArrays:
    """The kernel's columns of ``records`` (``Declined`` with NOT_BUILT where it is not built)."""
    return run_arrays(*joined(records), version)


def joined(records: list[RawRecord]) -> tuple[bytes, array[int]]:
    """The records' bytes end to end, and where each starts (int64, records + 1)."""
    datas = [r.data for r in records]
    return b"".join(datas), array("q", accumulate(map(len, datas), initial=0))


def run_columns(buf: bytes, bounds: array[int], version: int) -> tuple[bytes, ...]:
    """The kernel's columns (as ``ResultArrays`` names them, in its order, as bytes) of the
    records ``joined`` gave; ``Declined`` with NOT_BUILT where it is not built."""
    if _kernel is None:
        raise Declined(KernelReason.NOT_BUILT)
    columns: tuple[bytes, ...] = _kernel.result_columns(buf, bounds, RESULT_HEADER_SIZE[version])
    return columns


def run_arrays(buf: bytes, bounds: array[int], version: int) -> ResultArrays:
    """``run_columns`` as numpy arrays."""
    return ResultArrays(run_columns(buf, bounds, version))


def filled_text(buf: bytes, bounds: array[int], columns: tuple[bytes, ...], types: dict[int, int],
                heads: list[str], templates: list[str]) -> str:
    """The text of the records ``run_columns`` read (every one): record ``r``'s head, then
    ``templates[r] % values`` (a ``%s`` per value, ``%%`` a '%'), printed by the kernel as
    pmdumplog prints them and as ``dump.text.printed_value`` does (numbers, strings of a
    STRING metric, other bytes as hex). ``types`` (pmID to type) reads an INSITU word and
    names a STRING metric; a pmID not in it is read as U32, as the decoders read it."""
    if _kernel is None:
        raise Declined(KernelReason.NOT_BUILT)
    (_, rec_vset, pmid, _, _, vset_val, _, word, vtype, vlen, boff, _) = columns
    text: str = _kernel.filled_text(buf, bounds, rec_vset, vset_val, word, vtype, vlen, boff, pmid, types,
                                    int(PmType.U32), heads, templates)
    return text


def decode_run_schema(records: list[RawRecord], version: int, types: dict[int, int]) -> list[DecodedResult]:
    """Each record decoded by the construct schema (the reference of ``bulk.columns``)."""
    return [decode_result_schema(r, version, types) for r in records]


def decode_run_columns(records: list[RawRecord], version: int, types: dict[int, int]) -> list[DecodedResult]:
    """``decode_run_schema`` from the kernel's columns; ``Declined`` with the reason of the
    first record the kernel does not read."""
    arrays = result_arrays(records, version)
    bad = arrays.status.nonzero()[0]
    if len(bad):
        raise Declined(STATUS[int(arrays.status[bad[0]])])
    rec_vset = arrays.rec_vset.tolist()
    vset_val = arrays.vset_val.tolist()
    pmids, numvals, valfmts = arrays.pmid.tolist(), arrays.numval.tolist(), arrays.valfmt.tolist()
    insts, words = arrays.inst.tolist(), arrays.word.tolist()
    vtypes, vlens, boffs = arrays.vtype.tolist(), arrays.vlen.tolist(), arrays.boff.tolist()
    out = []
    for r, rec in enumerate(records):
        data = rec.data
        vsets = []
        for k in range(rec_vset[r], rec_vset[r + 1]):
            lo, hi = vset_val[k], vset_val[k + 1]
            pmid, valfmt = pmids[k], valfmts[k]
            if valfmt == 0:
                ptype = types.get(pmid, PmType.U32)
                values = tuple(decode_insitu(w, ptype) for w in words[lo:hi])
            else:
                values = tuple(decode_block(vtypes[i], data[boffs[i] + 4:boffs[i] + vlens[i]]) for i in range(lo, hi))
            vsets.append(DecodedValueSet(pmid, numvals[k], None if valfmt < 0 else valfmt, None,
                                         (tuple(insts[lo:hi]), values)))
        out.append(DecodedResult(result_head(data, version)[0], vsets, rec))
    return out


COLUMNS = register("bulk.columns", reference=decode_run_schema, fast=decode_run_columns,
                   reasons=KernelReason, inputs="result-records")
