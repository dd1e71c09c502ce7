"""Faults of .meta records: types, descriptors, units, instance domains, label sets and
help text (FMT-META, FMT-DESC, FMT-UNITS, FMT-INDOM, FMT-LABELSET, FMT-TEXT).
"""

from __future__ import annotations

import dataclasses
import struct
from collections.abc import Callable
from typing import Any

from construct import Container, ListContainer

from pcpconform.corpusgen.invalid.edit import ArchiveEdit, shifted
from pcpconform.corpusgen.invalid.registry import Mutation, case
from pcpconform.format.pmtypes import PmID, PmInDom
from pcpconform.format.schema import (
    TYPE_INDOM,
    TYPE_INDOM_DELTA,
    TYPE_INDOM_V2,
    structs,
)

# -- .meta -----------------------------------------------------------------------------------

@case("meta-decode", "an 8-byte record (no type tag) is inserted after the first descriptor",
      ["meta.decode"])
def _(ed: ArchiveEdit) -> None:
    ed.insert("meta", 2, struct.pack(">II", 8, 8))


@case("desc-length", "the descriptor of hinv.ncpu claims 7 names but holds one",
      ["desc.length", "value.undescribed"])
def _(ed: ArchiveEdit) -> None:
    offset, _ = ed.records("meta")[ed.desc("hinv.ncpu") - 1]
    ed.poke("meta", offset + 28, "i", 7)


@case("meta-tag", "a help-text record's type tag is 9", ["meta.tag"])
def _(ed: ArchiveEdit) -> None:
    offset, _ = ed.records("meta")[ed.find_meta("text") - 1]
    ed.poke("meta", offset + 4, "i", 9)


@case("meta-tag-version", "the first instance domain is written as the other version's record "
      "(tag 5 with T3 in v2, tag 2 with T2 in v3)", ["meta.tag-version"])
def _(ed: ArchiveEdit) -> None:
    i = ed.find_meta("indom")
    rec = ed.meta(i)
    other = 3 if ed.version == 2 else 2
    data = structs(other).meta_record.build(Container(
        type=TYPE_INDOM if other == 3 else TYPE_INDOM_V2, body=rec.body))
    ed.replace("meta", i, data)


@case("meta-no-desc", "every descriptor record is removed from `.meta`",
      ["meta.no-desc", "value.undescribed", "indom.undescribed", "text.undescribed"])
def _(ed: ArchiveEdit) -> None:
    while True:
        try:
            i = ed.find_meta("desc")
        except IndexError:
            return
        ed.remove("meta", i)


def _add_tail(ed: ArchiveEdit, i: int) -> None:
    """Four zero bytes after the last field of .meta record i."""
    rec = ed.meta(i)
    rec.body.tail = b"\0\0\0\0"
    ed.put_meta(i, rec)


@case("meta-tail", "4 zero bytes are added after the names of hinv.ncpu's descriptor", ["meta.tail"])
def _(ed: ArchiveEdit) -> None:
    _add_tail(ed, ed.desc("hinv.ncpu"))


@case("desc-no-numnames", "hinv.ncpu's descriptor is cut to 32 bytes: no numnames word",
      ["desc.no-numnames", "value.undescribed"])
def _(ed: ArchiveEdit) -> None:
    i = ed.desc("hinv.ncpu")
    _, data = ed.record("meta", i)
    payload = data[4:28]
    word = struct.pack(">I", len(payload) + 8)
    ed.replace("meta", i, word + payload + word)


@case("indom-length", "the first indom record claims 3 instances but holds 2",
      ["indom.length", "value.no-indom"])
def _(ed: ArchiveEdit) -> None:
    offset, _ = ed.records("meta")[ed.find_meta("indom") - 1]
    ed.poke("meta", offset + (20 if ed.version == 2 else 24), "i", 40)


@case("labelset-length", "4 zero bytes are added after the context label set", ["labelset.length"])
def _(ed: ArchiveEdit) -> None:
    _add_tail(ed, ed.find_meta("label"))


@case("labelset-length-nsets", "the context label record claims 3 label sets but holds 1",
      ["labelset.length"])
def _(ed: ArchiveEdit) -> None:
    offset, _ = ed.records("meta")[ed.find_meta("label") - 1]
    at = offset + 8 + (8 if ed.version == 2 else 12) + 8
    assert ed.peek("meta", at, "i") == 1
    ed.poke("meta", at, "i", 3)


@case("meta-time-order", "the context label set's timestamp is 20 s after the start, later than "
      "the instance domain record that follows it", ["meta.time-order", "index.invariant"])
def _(ed: ArchiveEdit) -> None:
    i = ed.find_meta("label")
    rec = ed.meta(i)
    rec.body.timestamp = shifted(rec.body.timestamp, 20)
    ed.put_meta(i, rec)


@case("meta-time-range", "the first instance domain's timestamp is 5 s before the archive start",
      ["meta.time-range"])
def _(ed: ArchiveEdit) -> None:
    i = ed.find_meta("indom")
    rec = ed.meta(i)
    rec.body.timestamp = shifted(rec.body.timestamp, -5)
    ed.put_meta(i, rec)


# -- descriptors and units -------------------------------------------------------------------

def _edit_desc(name: str, **changes: Any) -> Mutation:
    def mutate(ed: ArchiveEdit) -> None:
        i = ed.desc(name)
        rec = ed.meta(i)
        for key, value in changes.items():
            if key == "units":
                value = dataclasses.replace(rec.body.units, **value)
            rec.body[key] = value
        ed.put_meta(i, rec)
    return mutate


case("desc-type", "hinv.ncpu's descriptor type is 42", ["desc.type"])(_edit_desc("hinv.ncpu", type=42))
case("desc-sem", "kernel.all.load's descriptor semantics is 2 (the retired PM_SEM_COUNTER 2)",
     ["desc.sem"])(_edit_desc("kernel.all.load", sem=2))
case("desc-no-name", "hinv.ncpu's descriptor has no names", ["desc.no-name"])(
    _edit_desc("hinv.ncpu", names=ListContainer()))
case("desc-name", "hinv.ncpu's descriptor has one empty name", ["desc.name"])(
    _edit_desc("hinv.ncpu", names=ListContainer([b""])))
case("desc-name-long", "hinv.ncpu's descriptor has a 4096-byte name", ["desc.name"])(
    _edit_desc("hinv.ncpu", names=ListContainer([b"x" * 4096])))
case("desc-name-syntax", "hinv.ncpu's descriptor is named `hinv..ncpu`", ["desc.name-syntax"])(
    _edit_desc("hinv.ncpu", names=ListContainer([b"hinv..ncpu"])))
case("desc-name-reused", "hinv.ncpu's descriptor is named `kernel.all.load`, a name already bound",
     ["desc.name-reused"])(_edit_desc("hinv.ncpu", names=ListContainer([b"kernel.all.load"])))
case("desc-indom-domain", "disk.dev.read_bytes (domain 60) has indom 61.1",
     ["desc.indom-domain", "indom.undescribed", "value.no-indom"])(
    _edit_desc("disk.dev.read_bytes", indom=PmInDom("61.1")))
case("units-scale", "disk.dev.read_bytes has scaleSpace 9 (above PM_SPACE_EBYTE)", ["units.scale"])(
    _edit_desc("disk.dev.read_bytes", units={"scaleSpace": 9}))
case("units-scale-time", "network.interface.speed has dimTime -1 and scaleTime 6 (above PM_TIME_DAY)",
     ["units.scale"])(_edit_desc("network.interface.speed", units={"scaleTime": 6}))
case("units-dim", "mem.util.used has dimTime 3", ["units.dim"])(
    _edit_desc("mem.util.used", units={"dimTime": 3}))
case("units-scale-without-dim", "hinv.ncpu has scaleTime 2 with dimTime 0",
     ["units.scale-without-dim"])(_edit_desc("hinv.ncpu", units={"scaleTime": 2}))
case("units-extra", "mem.util.used has extraUnit 7 in the low byte", ["units.extra"])(
    _edit_desc("mem.util.used", units={"extraUnit": 7, "extraScale": 1}))
case("value-nosupport", "hinv.ncpu's descriptor type is -1 (NOSUPPORT) but it has values",
     ["value.nosupport"])(_edit_desc("hinv.ncpu", type=-1))


@case("desc-conflict", "a second descriptor of kernel.all.load with discrete semantics is appended",
      ["desc.conflict"])
def _(ed: ArchiveEdit) -> None:
    rec = ed.meta(ed.desc("kernel.all.load"))
    rec.body.sem = 4
    ed.insert("meta", len(ed.records("meta")) + 1, ed.s.meta_record.build(rec))


# -- instance domains ------------------------------------------------------------------------

def _edit_indom(fn: Callable[[Container], None], nth: int = 0) -> Mutation:
    def mutate(ed: ArchiveEdit) -> None:
        i = ed.find_meta("indom", nth=nth)
        rec = ed.meta(i)
        fn(rec.body)
        ed.put_meta(i, rec)
    return mutate


def _set(path: str, k: int, value: Any) -> Callable[[Container], None]:
    def fn(body: Container) -> None:
        body[path][k] = value
    return fn


def _unsort(body: Container) -> None:
    body.instlist = ListContainer(reversed(body.instlist))
    body.offsets = ListContainer(reversed(body.offsets))


def _rename(k: int, name: bytes) -> Callable[[Container], None]:
    def fn(body: Container) -> None:
        names = [n for n in body.names]
        names[k] = name
        table, offsets = b"", []
        for n in names:
            offsets.append(len(table))
            table += n + b"\0"
        body.offsets, body.strtab = ListContainer(offsets), table
    return fn


def _empty(body: Container) -> None:
    body.numinst, body.instlist, body.offsets, body.strtab = 0, ListContainer(), ListContainer(), b""


case("indom-inst-negative", "the first instance of the first indom record has id -5",
     ["indom.inst-negative", "value.unknown-inst"])(_edit_indom(_set("instlist", 0, -5)))
case("indom-offset", "a name offset of the first indom record is 100, past its string table",
     ["indom.offset", "value.unknown-inst"])(_edit_indom(_set("offsets", 1, 100)))
case("indom-deleted-in-full", "a name offset of the first (full) indom record is -1",
     ["indom.deleted-in-full", "value.unknown-inst"])(_edit_indom(_set("offsets", 1, -1)))
case("indom-unsorted", "the instances of the first v3 indom record are in descending order",
     ["indom.unsorted"], versions=(3,))(_edit_indom(_unsort))
case("indom-duplicate-id", "both instances of the first indom record have id 0",
     ["indom.duplicate-id", "value.unknown-inst"])(_edit_indom(_set("instlist", 1, 0)))
case("indom-duplicate-name", "both instances of the first indom record are named `sda`",
     ["indom.duplicate-name"])(_edit_indom(_rename(1, b"sda")))
case("indom-empty-name", "the second instance of the first indom record has an empty name",
     ["indom.empty-name"])(_edit_indom(_rename(1, b"")))
case("indom-empty", "the first indom record has no instances",
     ["indom.empty", "value.no-indom"])(_edit_indom(_empty))


@case("indom-delta-no-full", "the first v3 indom record's tag is 6 (delta) instead of 5",
      ["indom.delta-no-full"], versions=(3,))
def _(ed: ArchiveEdit) -> None:
    offset, _ = ed.records("meta")[ed.find_meta("indom") - 1]
    ed.poke("meta", offset + 4, "i", TYPE_INDOM_DELTA)


@case("indom-delta-change", "a delta record 20 s after the start deletes absent instance 7 and "
      "re-adds present instance 0", ["indom.delta-change"], versions=(3,))
def _(ed: ArchiveEdit) -> None:
    rec = ed.meta(ed.find_meta("indom"))
    body = Container(timestamp=shifted(rec.body.timestamp, 20), indom=rec.body.indom, numinst=2,
                     instlist=ListContainer([0, 7]), offsets=ListContainer([0, -1]), strtab=b"sda\0")
    ed.insert("meta", len(ed.records("meta")) + 1, ed.build_meta(TYPE_INDOM_DELTA, body))


@case("indom-undescribed", "an instance domain 60.9 that no descriptor uses is appended",
      ["indom.undescribed"])
def _(ed: ArchiveEdit) -> None:
    rec = ed.meta(ed.find_meta("indom", nth=-1))
    rec.body.indom = PmInDom("60.9")
    ed.insert("meta", len(ed.records("meta")) + 1, ed.s.meta_record.build(rec))


# -- label sets and help text ----------------------------------------------------------------

def _edit_meta(kind: str, fn: Callable[[Container], None]) -> Mutation:
    def mutate(ed: ArchiveEdit) -> None:
        i = ed.find_meta(kind)
        rec = ed.meta(i)
        fn(rec.body)
        ed.put_meta(i, rec)
    return mutate


def _labels_nsets(body: Container) -> None:
    body.sets = ListContainer([body.sets[0], body.sets[0]])
    body.nsets = 2


def _labels_json(body: Container) -> None:
    s = body.sets[0]
    s.json = b"[" + s.json[1:]


def _labels_nlabels(body: Container) -> None:
    s = body.sets[0]
    s.labels = ListContainer(s.labels[:1])
    s.nlabels = 1


def _labels_span(body: Container) -> None:
    body.sets[0].labels[0].name = 200


def _labels_unsorted(body: Container) -> None:
    s = body.sets[0]
    s.labels = ListContainer(reversed(s.labels))


def _field(name: str, value: Any) -> Callable[[Container], None]:
    def fn(body: Container) -> None:
        body[name] = value
    return fn


case("labelset-type", "the context label set's type is 3", ["labelset.type"])(
    _edit_meta("label", _field("type", 3)))
case("labelset-ident", "the context label set's ident is 5 instead of PM_IN_NULL",
     ["labelset.ident"])(_edit_meta("label", _field("ident", 5)))
case("labelset-nsets", "the context label record holds two label sets", ["labelset.nsets"])(
    _edit_meta("label", _labels_nsets))
case("labelset-json", "the context label set's JSON starts with `[` (not an object)",
     ["labelset.json"])(_edit_meta("label", _labels_json))
case("labelset-nlabels", "the context label set lists 1 label for a JSON object of 2 members",
     ["labelset.nlabels"])(_edit_meta("label", _labels_nlabels))
case("labelset-span", "the first label's name offset is 200, past the end of the JSON",
     ["labelset.span"])(_edit_meta("label", _labels_span))
case("labelset-name", "the context label set lists its labels in reverse name order",
     ["labelset.name"])(_edit_meta("label", _labels_unsorted))
case("text-type", "a help text's type is 7 (both ONELINE and HELP)", ["text.type"])(
    _edit_meta("text", _field("type", 7)))
case("text-nul", "a help text loses its terminating NUL", ["text.nul"])(
    _edit_meta("text", lambda body: body.__setitem__("text", body.text.rstrip(b"\0"))))
case("text-undescribed", "a metric help text names pmID 60.0.99, which has no descriptor",
     ["text.undescribed"])(_edit_meta("text", _field("ident", int(PmID("60.0.99")))))
