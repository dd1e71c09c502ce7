"""Faults of timestamps, results, values and event arrays (FMT-TIME, FMT-RESULT,
FMT-VALUE, FMT-EVENT).
"""

from __future__ import annotations

import struct
from collections.abc import Callable

from pcpconform.corpusgen.invalid.edit import ArchiveEdit, Block, Result, shifted, ts_bytes
from pcpconform.corpusgen.invalid.registry import Mutation, case
from pcpconform.format.pmtypes import PmID
from pcpconform.format.schema import (
    event_array,
)

# -- times -----------------------------------------------------------------------------------

@case("time-fraction", "the first index entry's fraction of a second is 1.5 s "
      "(usec 1500000 / nsec 1500000000)", ["time.fraction"])
def _(ed: ArchiveEdit) -> None:
    at = ed.entry_offset(1)
    if ed.version == 2:
        ed.poke("index", at + 4, "i", 1_500_000)
    else:
        ed.poke("index", at + 8, "i", 1_500_000_000)


@case("time-fraction-meta", "the first indom record's nanoseconds are 1000000000 (v3) / "
      "microseconds 1000000 (v2)", ["time.fraction"])
def _(ed: ArchiveEdit) -> None:
    offset, _ = ed.records("meta")[ed.find_meta("indom") - 1]
    if ed.version == 2:
        ed.poke("meta", offset + 12, "i", 1_000_000)
    else:
        ed.poke("meta", offset + 16, "i", 1_000_000_000)


@case("time-fraction-result", "the second result's fraction of a second is negative",
      ["time.fraction"])
def _(ed: ArchiveEdit) -> None:
    offset, _ = ed.records("0")[1]
    ed.poke("0", offset + (8 if ed.version == 2 else 12), "i", -5000)


# -- results ---------------------------------------------------------------------------------

def _edit_result(i: int, fn: Callable[[ArchiveEdit, Result], None]) -> Mutation:
    def mutate(ed: ArchiveEdit) -> None:
        res = ed.result(i)
        fn(ed, res)
        ed.put_result(i, res)
    return mutate


@case("result-decode", "the first result's numpmid is 1000, far more value sets than it holds",
      ["result.decode"])
def _(ed: ArchiveEdit) -> None:
    offset, _ = ed.records("0")[0]
    ed.poke("0", offset + ed.s.result_header_size - 4, "i", 1000)


@case("result-mark-size", "a mark record carries an empty value block (vtype 0, vlen 4) after numpmid",
      ["result.mark-size"])
def _(ed: ArchiveEdit) -> None:
    i = next(k for k, (_, length) in enumerate(ed.records("0"), 1) if length == ed.s.mark_size)
    res = ed.result(i)
    res.extra = struct.pack(">I", 4)
    ed.put_result(i, res)


@case("result-valfmt", "the valfmt of the second result's first value set is 7", ["result.valfmt"])
def _(ed: ArchiveEdit) -> None:
    offset, _ = ed.records("0")[1]
    ed.poke("0", offset + ed.s.result_header_size + 8, "I", 7)


@case("result-dptr", "the value pointer of kernel.uname.release in the first result points past "
      "the record (its block, the last, is removed)", ["result.dptr"])
def _(ed: ArchiveEdit) -> None:
    res = ed.result(1)
    vs = ed.vset(res, "60.12.0")
    vs.values = [(inst, 4096) for inst, _ in vs.values]
    ed.put_result(1, res)


@case("result-dptr-mid", "the first value pointer of the second result points one word into its "
      "block (the words there read as a block of vlen 0; the real block is orphaned)",
      ["result.dptr", "result.vlen", "result.blocks"])
def _(ed: ArchiveEdit) -> None:
    offset, _ = ed.records("0")[1]
    at = offset + ed.s.result_header_size + 12 + 4
    ed.poke("0", at, "I", ed.peek("0", at, "I") + 1)


@case("result-vlen", "the vlen of the last value block of the first result runs 8 bytes past the "
      "record (the block does not decode and then counts as missing)",
      ["result.vlen", "result.decode", "result.blocks"])
def _(ed: ArchiveEdit) -> None:
    res = ed.result(1)
    vs = ed.vset(res, "60.12.0")
    _, b = vs.values[0]
    offset, length = ed.records("0")[0]
    head = offset + length - 4 - len(b.vbuf) - len(b.pad) - 4
    assert ed.peek("0", head, "I") & 0xFFFFFF == 4 + len(b.vbuf)
    ed.poke("0", head, "I", (b.vtype << 24) | (4 + len(b.vbuf) + 8))


@case("result-blocks", "in the first result both disk values point at the same value block; the "
      "other block is unreferenced", ["result.blocks"])
def _(ed: ArchiveEdit) -> None:
    offset, _ = ed.records("0")[0]
    at = offset + ed.s.result_header_size + 12
    # vlist[0] = (inst, index) at +12, vlist[1] at +20: point the second at the first's block
    ed.poke("0", at + 12, "I", ed.peek("0", at + 4, "I"))


@case("result-blocks-tail", "the first result has 12 zero bytes after its last value block",
      ["result.blocks"])
def _(ed: ArchiveEdit) -> None:
    res = ed.result(1)
    res.extra = struct.pack(">I", 12) + b"\0" * 8
    ed.put_result(1, res)


@case("result-time-order", "the third result's timestamp is 5 s before the second's",
      ["result.time-order"])
def _(ed: ArchiveEdit) -> None:
    third = ed.records("0")[2][0]
    stamp = ts_bytes(ed.version, shifted(ed.result(2).timestamp, -5))
    ed.files["0"][third + 4:third + 4 + len(stamp)] = stamp


@case("result-before-start", "the first result's timestamp is 1 s before the archive start",
      ["result.before-start"])
def _(ed: ArchiveEdit) -> None:
    offset, _ = ed.records("0")[0]
    stamp = ts_bytes(ed.version, shifted(ed.label("0").start, -1))
    ed.files["0"][offset + 4:offset + 4 + len(stamp)] = stamp


# -- values ----------------------------------------------------------------------------------

def _insitu(pmid: str) -> Callable[[ArchiveEdit, Result], None]:
    def fn(ed: ArchiveEdit, res: Result) -> None:
        vs = ed.vset(res, pmid)
        vs.valfmt = 0
        vs.values = [(inst, int.from_bytes(b.vbuf[:4], "big")) for inst, b in vs.values]
    return fn


def _payload(pmid: str, vbuf: Callable[[bytes], bytes], k: int = 0) -> Callable[[ArchiveEdit, Result], None]:
    def fn(ed: ArchiveEdit, res: Result) -> None:
        vs = ed.vset(res, pmid)
        inst, b = vs.values[k]
        vs.values[k] = (inst, Block(b.vtype, vbuf(b.vbuf)))
    return fn


def _vtype(pmid: str, vtype: int) -> Callable[[ArchiveEdit, Result], None]:
    def fn(ed: ArchiveEdit, res: Result) -> None:
        vs = ed.vset(res, pmid)
        inst, b = vs.values[0]
        vs.values[0] = (inst, Block(vtype, b.vbuf, b.pad))
    return fn


def _inst(pmid: str, k: int, inst: int) -> Callable[[ArchiveEdit, Result], None]:
    def fn(ed: ArchiveEdit, res: Result) -> None:
        vs = ed.vset(res, pmid)
        vs.values[k] = (inst, vs.values[k][1])
    return fn


def _numval(pmid: str, numval: int) -> Callable[[ArchiveEdit, Result], None]:
    def fn(ed: ArchiveEdit, res: Result) -> None:
        vs = ed.vset(res, pmid)
        vs.numval, vs.valfmt, vs.values = numval, None, []
    return fn


def _pmid(old: str, new: str) -> Callable[[ArchiveEdit, Result], None]:
    def fn(ed: ArchiveEdit, res: Result) -> None:
        ed.vset(res, old).pmid = int(PmID(new))
    return fn


case("value-valfmt", "network.interface.speed (double) is stored INSITU in the first result",
     ["value.valfmt"])(_edit_result(1, _insitu("60.3.0")))
case("value-vtype", "mem.util.used (type 64) has a U64 value block in the second result",
     ["value.vtype"])(_edit_result(2, _vtype("60.1.2", 3)))
case("value-vtype-legacy", "mem.util.used has a value block of type 0 in the second result",
     ["value.vtype-legacy"])(_edit_result(2, _vtype("60.1.2", 0)))
case("value-vlen", "network.interface.speed (double) has a 4-byte payload in the first result",
     ["value.vlen"])(_edit_result(1, _payload("60.3.0", lambda b: b[:4])))
case("value-string-nul", "kernel.uname.release loses its NUL in the first result",
     ["value.string-nul"])(_edit_result(1, _payload("60.12.0", lambda b: b.rstrip(b"\0"))))
case("value-singular-inst", "hinv.ncpu (no indom) has instance 3 in the first result",
     ["value.singular-inst"])(_edit_result(1, _inst("60.0.32", 0, 3)))
case("value-unknown-inst", "disk.dev.read_bytes has instance 9 in the second result",
     ["value.unknown-inst"])(_edit_result(2, _inst("60.0.4", 1, 9)))
case("value-duplicate-inst", "disk.dev.read_bytes lists instance 0 twice in the first result",
     ["value.duplicate-inst"])(_edit_result(1, _inst("60.0.4", 1, 0)))
case("value-numval-code", "kernel.all.load has numval -99999 (not a PMAPI error) in the second result",
     ["value.numval-code"])(_edit_result(2, _numval("60.2.0", -99999)))
case("value-undescribed", "hinv.ncpu's values in the first result carry pmID 60.0.99",
     ["value.undescribed"])(_edit_result(1, _pmid("60.0.32", "60.0.99")))
case("value-counter-decrease", "disk.dev.read_bytes[sda] drops to 1 in the third result (no mark "
     "before it)", ["value.counter-decrease"])(
    _edit_result(3, _payload("60.0.4", lambda b: (1).to_bytes(8, "big"))))


@case("value-valfmt-change", "kernel.uname.release is DPTR in the first result and SPTR in the "
      "second that has it", ["value.valfmt-change"])
def _(ed: ArchiveEdit) -> None:
    pmid = int(PmID("60.12.0"))
    seen = [i for i in range(1, len(ed.records("0")) + 1)
            if any(v.pmid == pmid for v in ed.result(i).vsets)]
    res = ed.result(seen[1])
    ed.vset(res, "60.12.0").valfmt = 2
    ed.put_result(seen[1], res)


@case("value-insitu-float", "kernel.all.load (float) is stored INSITU in every result",
      ["value.insitu-float"])
def _(ed: ArchiveEdit) -> None:
    pmid = int(PmID("60.2.0"))
    for i in range(1, len(ed.records("0")) + 1):
        res = ed.result(i)
        if any(v.pmid == pmid for v in res.vsets):
            _insitu("60.2.0")(ed, res)
            ed.put_result(i, res)


@case("value-no-indom", "the first indom record's timestamp is 5 s after the first result that "
      "uses it", ["value.no-indom"])
def _(ed: ArchiveEdit) -> None:
    i = ed.find_meta("indom")
    rec = ed.meta(i)
    rec.body.timestamp = shifted(rec.body.timestamp, 5)
    ed.put_meta(i, rec)


# -- events ----------------------------------------------------------------------------------

def _event(fn: Callable[[bytearray], None], pmid: str = "62.0.1") -> Mutation:
    def mutate(ed: ArchiveEdit) -> None:
        res = ed.result(1)
        vs = ed.vset(res, pmid)
        inst, b = vs.values[0]
        buf = bytearray(b.vbuf)
        fn(buf)
        vs.values[0] = (inst, Block(b.vtype, bytes(buf)))
        ed.put_result(1, res)
    return mutate


def _missed_flags(buf: bytearray) -> None:
    arr = event_array(False).parse(bytes(buf))
    arr.records[1].flags |= 1
    buf[:] = event_array(False).build(arr)


def _param_type(buf: bytearray) -> None:
    # nrecords(4), record 0: timestamp T2 (8), flags (4), nparams (4), param 0: pmid (4), type (1)
    assert buf[20:24] == int(PmID("62.0.3")).to_bytes(4, "big")
    buf[24] = 2   # PM_TYPE_64 with a 4-byte value


case("event-structure", "the first event array claims 5 records but holds 2", ["event.structure"],
     source="events")(_event(lambda buf: buf.__setitem__(slice(0, 4), (5).to_bytes(4, "big"))))
case("event-param-len", "an event parameter of type 64 holds 4 value bytes", ["event.param-len"],
     source="events")(_event(_param_type))
case("event-missed", "a MISSED event record also has the POINT flag", ["event.missed"],
     source="events")(_event(_missed_flags))
