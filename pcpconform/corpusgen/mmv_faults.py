"""The MMV invalid corpus: one-fault edits of valid files written by pcpconform.mmv.writer.

Each fault is applied to the base file of each version it names; ``build_mmv_cases`` writes
``mmv-<fault>-v<N>/`` holding ``f.mmv`` and a ``case.json`` in the corpus case format (the
MMV fields ``format``, ``file`` and ``mmv_versions`` in place of ``archive`` and
``archive_versions``). A fault's ``errors`` are exactly the error codes the validator reports;
its ``warnings`` are reported at least.
"""

from __future__ import annotations

import hashlib
import json
import struct
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pcpconform.check.mmv.rules import MMV_TABLE
from pcpconform.mmv.model import (
    FLAG_PROCESS,
    LABEL_CLUSTER,
    LABEL_INDOM,
    LABEL_INSTANCES,
    LABEL_ITEM,
    LABEL_OPTIONAL,
    SEM_COUNTER,
    SEM_DISCRETE,
    SEM_INSTANT,
    TYPE_DOUBLE,
    TYPE_ELAPSED,
    TYPE_STRING,
    TYPE_U32,
    TYPE_U64,
    Indom,
    Instance,
    Label,
    Metric,
    MmvFile,
    Value,
)
from pcpconform.mmv.schema import (
    HEADER_SIZE,
    INDOM_SIZE,
    LABEL_SIZE,
    TOC_INDOMS,
    TOC_INSTANCES,
    TOC_LABELS,
    TOC_METRICS,
    TOC_SIZE,
    TOC_STRINGS,
    TOC_VALUES,
    VALUE_SIZE,
    mmv_structs,
)
from pcpconform.mmv.writer import build_mmv
from pcpconform.version import __version__

__all__ = ["MmvFault", "FAULTS", "UNCOVERED", "base_model", "base_file", "Layout",
           "build_mmv_cases", "case_files"]

CASE_FILE = "f.mmv"
GENERATION = 0x6B021344_00021C7B
BYTES = 0x10000000                  # pmUnits word of "byte"
USEC = 0x01001000                   # dimTime 1, scaleTime 1 (usec)
LONG_NAME = "long." + "m" * 67      # 72 bytes: a version 2 name
_CLAUSE = {code: clause for code, _sev, clause, _summary in MMV_TABLE}
_SEVERITY = {code: sev for code, sev, _clause, _summary in MMV_TABLE}


def base_model(version: int, *, labels: int = 4) -> MmvFile:
    """The valid content every fault edits: two indoms, a metric of each kind, help text,
    and (version 3) labels of each type; the validator reports nothing on it."""
    tools = Indom(61, (Instance(1, "Anvils"), Instance(2, "Rockets")), "tools", "things in the shed")
    rooms = Indom(62, (Instance(7, "kitchen" if version == 1 else "kitchen-" + "k" * 70),))
    metrics = (
        Metric("bytes", 1, TYPE_U64, SEM_COUNTER, BYTES, values=(Value.of(TYPE_U64, 2**40),),
               shorttext="bytes moved", helptext="bytes moved since start"),
        Metric("text", 2, TYPE_STRING, SEM_INSTANT, values=(Value(None, bytes(8), 0, "hello"),)),
        Metric("elapsed", 3, TYPE_ELAPSED, SEM_COUNTER, USEC,
               values=(Value.of(TYPE_ELAPSED, 1000, extra=-5000000),)),
        Metric("per.tool", 4, TYPE_U32, SEM_INSTANT, indom=61,
               values=(Value.of(TYPE_U32, 7, 1), Value.of(TYPE_U32, 9, 2))),
        Metric("per.room" if version == 1 else LONG_NAME, 5, TYPE_DOUBLE, SEM_DISCRETE, indom=62,
               values=(Value.of(TYPE_DOUBLE, 21.5, 7),)),
    )
    lbs: tuple[Label, ...] = ()
    if version == 3:
        kinds = [Label(LABEL_CLUSTER, 42, -1, '{"app":"anvil"}'),
                 Label(LABEL_ITEM, 4, -1, '{"unit":"tools"}'),
                 Label(LABEL_INDOM | LABEL_OPTIONAL, 61, -1, '{"shed":true}'),
                 Label(LABEL_INSTANCES, 61, 1, '{"heavy":1}')]
        lbs = tuple(kinds[n] if n < len(kinds) else Label(LABEL_CLUSTER, 42, -1, f'{{"l{n}":{n}}}')
                    for n in range(labels))
    return MmvFile(version, GENERATION, GENERATION, 0, 4242, 42, (tools, rooms), metrics, lbs)


def base_file(version: int, *, labels: int = 4) -> bytes:
    return build_mmv(base_model(version, labels=labels))


class Layout:
    """Where the entries of a file the writer laid out are (from its TOC)."""

    def __init__(self, data: bytes | bytearray) -> None:
        self.version = struct.unpack_from("<i", data, 4)[0]
        self.s = mmv_structs(self.version)
        tocs = struct.unpack_from("<i", data, 24)[0]
        self.toc: dict[int, tuple[int, int, int]] = {}      # type -> (toc index, count, offset)
        for t in range(tocs):
            kind, count, offset = struct.unpack_from("<iiQ", data, HEADER_SIZE + TOC_SIZE * t)
            self.toc[kind] = (t, count, offset)

    def toc_entry(self, kind: int) -> int:
        return HEADER_SIZE + TOC_SIZE * self.toc[kind][0]

    def indom(self, n: int) -> int:
        return self.toc[TOC_INDOMS][2] + INDOM_SIZE * n

    def instance(self, n: int) -> int:
        return self.toc[TOC_INSTANCES][2] + self.s.instance_size * n

    def metric(self, n: int) -> int:
        return self.toc[TOC_METRICS][2] + self.s.metric_size * n

    def metric_field(self, n: int, name: str) -> int:
        """Offset of a metric field after the name (item, type, semantics, ...)."""
        after = {"item": 0, "type": 4, "semantics": 8, "dimension": 12, "indom": 16,
                 "shorttext": 24, "helptext": 32}[name]
        return self.metric(n) + (64 if self.version == 1 else 8) + after

    def value(self, n: int) -> int:
        return self.toc[TOC_VALUES][2] + VALUE_SIZE * n

    def label(self, n: int) -> int:
        return self.toc[TOC_LABELS][2] + LABEL_SIZE * n


Edit = Callable[[bytearray, Layout], bytes | bytearray | None]


def _put(fmt: str, offset: int, value: Any) -> Edit:
    def edit(data: bytearray, lay: Layout) -> None:
        struct.pack_into(fmt, data, offset, value)
    return edit


def _at(where: Callable[[Layout], int], fmt: str, value: Any | Callable[[bytearray, Layout], Any]) -> Edit:
    def edit(data: bytearray, lay: Layout) -> None:
        v = value(data, lay) if callable(value) else value
        struct.pack_into(fmt, data, where(lay), v)
    return edit


@dataclass(frozen=True)
class MmvFault:
    name: str
    title: str
    edit: Edit
    errors: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    versions: tuple[int, ...] = (1, 2, 3)
    labels: int = 4                 # labels in the version 3 base file

    @property
    def codes(self) -> list[str]:
        return [*self.errors, *self.warnings]


def _truncate(size: int) -> Edit:
    return lambda data, lay: data[:size]


def _fill_name(data: bytearray, lay: Layout) -> None:
    """metrics[0]'s name with no NUL: its 64 inline bytes (v1) or its 256-byte slot."""
    if lay.version == 1:
        data[lay.metric(0):lay.metric(0) + 64] = b"a" * 64
    else:
        (at,) = struct.unpack_from("<Q", data, lay.metric(0))
        data[at:at + 256] = b"a" * 256


def _fill_slot(field: Callable[[Layout], int], fill: bytes) -> Edit:
    """Fill the 256-byte string slot whose offset is the word at ``field(lay)`` with no NUL."""
    def edit(data: bytearray, lay: Layout) -> None:
        (at,) = struct.unpack_from("<Q", data, field(lay))
        data[at:at + 256] = fill * 256
    return edit


def _fill_label(data: bytearray, lay: Layout) -> None:
    at = lay.label(0) + 12
    data[at:at + 244] = b"{" * 244


def _slack(data: bytearray, lay: Layout) -> None:
    at = lay.label(0) + 12
    end = data.index(b"\0", at)
    data[end + 1:end + 9] = b"\x7f\x7f\x00\x00\x10\x20\x30\x40"


def _label_text(text: str) -> Edit:
    def edit(data: bytearray, lay: Layout) -> None:
        at = lay.label(0) + 12
        raw = text.encode()
        data[at:at + 244] = raw + bytes(244 - len(raw))
    return edit


def _metric_name(name: str) -> Edit:
    """Rename metrics[0]: inline in v1, in its string slot in v2/v3."""
    def edit(data: bytearray, lay: Layout) -> None:
        raw = name.encode()
        if lay.version == 1:
            at = lay.metric(0)
            data[at:at + 64] = raw + bytes(64 - len(raw))
        else:
            (at,) = struct.unpack_from("<Q", data, lay.metric(0))
            data[at:at + 256] = raw + bytes(256 - len(raw))
    return edit


def _both(*edits: Edit) -> Edit:
    def edit(data: bytearray, lay: Layout) -> None:
        for e in edits:
            e(data, lay)
    return edit


def _last_section_grows(data: bytearray, lay: Layout) -> None:
    kind = TOC_LABELS if TOC_LABELS in lay.toc else TOC_STRINGS
    struct.pack_into("<i", data, lay.toc_entry(kind) + 4, lay.toc[kind][1] + 1)


def _drop_values(data: bytearray, lay: Layout) -> None:
    at = lay.toc_entry(TOC_VALUES)
    data[at:at + TOC_SIZE] = data[at + TOC_SIZE:at + 2 * TOC_SIZE]
    struct.pack_into("<i", data, 24, len(lay.toc) - 1)


def _string_slot_at_end(data: bytearray, lay: Layout) -> None:
    # reference defect 1: the PMDA's check (offset + 4 <= size) passes, 256 bytes are copied
    struct.pack_into("<q", data, lay.value(1) + 8, len(data) - 8)


def _swap_value_instance(data: bytearray, lay: Layout) -> None:
    # per.tool's first value points at rooms' instance (an instance, of the wrong indom)
    struct.pack_into("<Q", data, lay.value(3) + 24, lay.instance(2))


FAULTS: tuple[MmvFault, ...] = (
    MmvFault("header-short", "the file is cut to 30 bytes", _truncate(30), ("mmv.header-short",)),
    MmvFault("magic", "the magic is MMX", _put("4s", 0, b"MMX\0"), ("mmv.magic",)),
    MmvFault("version", "the version is 4", _put("<i", 4, 4), ("mmv.version",)),
    MmvFault("rewriting", "g2 is 0: the writer has not finished", _put("<Q", 16, 0),
             ("mmv.rewriting",)),
    MmvFault("generation-zero", "g1 and g2 are 0: never initialised",
             _both(_put("<Q", 8, 0), _put("<Q", 16, 0)), ("mmv.rewriting",)),
    MmvFault("tocs-one", "the header says 1 TOC entry", _put("<i", 24, 1), ("mmv.tocs",)),
    MmvFault("tocs-past-eof", "the header says 100000 TOC entries", _put("<i", 24, 100000),
             ("mmv.tocs",)),
    MmvFault("cluster", "the cluster is 5000", _put("<i", 36, 5000), ("mmv.cluster",)),
    MmvFault("flags", "an unknown flag bit 0x100 is set", _put("<I", 28, 0x100), (),
             ("mmv.flags",), versions=(1,)),
    MmvFault("process", "the PROCESS flag is set with PID 0",
             _both(_put("<I", 28, FLAG_PROCESS), _put("<i", 32, 0)), (), ("mmv.process",),
             versions=(1,)),
    MmvFault("toc-type", "the strings TOC entry has type 7",
             _at(lambda lay: lay.toc_entry(TOC_STRINGS), "<i", 7), ("mmv.toc-type",),
             ("mmv.toc-crosscheck",)),
    MmvFault("toc-duplicate", "the strings TOC entry says values",
             _at(lambda lay: lay.toc_entry(TOC_STRINGS), "<i", TOC_VALUES), ("mmv.toc-duplicate",),
             ("mmv.toc-crosscheck",)),
    MmvFault("toc-count", "the values TOC count is -1",
             _at(lambda lay: lay.toc_entry(TOC_VALUES) + 4, "<i", -1), ("mmv.toc-count",),
             ("mmv.value-missing",)),
    MmvFault("toc-count-ignored", "the instances TOC count is -1 (a section the PMDA ignores)",
             _at(lambda lay: lay.toc_entry(TOC_INSTANCES) + 4, "<i", -1), (),
             ("mmv.toc-crosscheck",), versions=(1,)),
    MmvFault("toc-bounds", "the last section counts one entry more than the file holds",
             _last_section_grows, ("mmv.toc-bounds",)),
    MmvFault("toc-overlap", "the instances section is said to start where the metrics do",
             _at(lambda lay: lay.toc_entry(TOC_INSTANCES) + 8, "<Q",
                 lambda data, lay: lay.toc[TOC_METRICS][2]), ("mmv.toc-overlap",),
             ("mmv.toc-crosscheck",)),
    MmvFault("toc-limit", "256 labels, one more than the PMDA reads",
             lambda data, lay: None, ("mmv.toc-limit",), versions=(3,), labels=256),
    MmvFault("toc-missing", "the values TOC entry is dropped (the strings entry moves up)",
             _drop_values, (), ("mmv.toc-missing",), versions=(1,)),
    MmvFault("toc-empty", "the strings TOC count is 0",
             _at(lambda lay: lay.toc_entry(TOC_STRINGS) + 4, "<i", 0), (),
             ("mmv.toc-empty", "mmv.toc-crosscheck")),
    MmvFault("indom-serial", "indom and metric serial 62 become 2^22",
             _both(_at(lambda lay: lay.indom(1), "<I", 1 << 22),
                   _at(lambda lay: lay.metric_field(4, "indom"), "<i", 1 << 22)),
             ("mmv.indom-serial",)),
    MmvFault("indom-duplicate", "indom and metric serial 62 become 61",
             _both(_at(lambda lay: lay.indom(1), "<I", 61),
                   _at(lambda lay: lay.metric_field(4, "indom"), "<i", 61)),
             ("mmv.indom-duplicate",)),
    MmvFault("indom-collision", "indom and metric serial 62 become 4157, InDom 70.86077 in"
             " cluster 42 as serial 61",
             _both(_at(lambda lay: lay.indom(1), "<I", 4157),
                   _at(lambda lay: lay.metric_field(4, "indom"), "<i", 4157)),
             ("mmv.indom-collision",), ("mmv.indom-wide-serial",)),
    MmvFault("indom-bounds", "indom 61 says 100000 instances",
             _at(lambda lay: lay.indom(0) + 4, "<I", 100000), ("mmv.indom-bounds",)),
    MmvFault("instance-name-offset", "an instance name offset is 2^40 (the PMDA crashes)",
             _at(lambda lay: lay.instance(0) + 16, "<Q", 1 << 40), ("mmv.instance-name-offset",),
             versions=(2, 3)),
    MmvFault("instance-indom", "an instance's indom back-pointer names the other indom",
             _at(lambda lay: lay.instance(0), "<Q", lambda data, lay: lay.indom(1)), (),
             ("mmv.instance-indom",)),
    MmvFault("instance-indom-bounds", "an instance's indom back-pointer is 2^32",
             _at(lambda lay: lay.instance(0), "<Q", 1 << 32), ("mmv.instance-indom-bounds",)),
    MmvFault("instance-duplicate", "the second instance of indom 61 takes the first's id",
             _at(lambda lay: lay.instance(1) + 12, "<i", 1), (),
             ("mmv.instance-duplicate", "mmv.value-duplicate"), versions=(1,)),
    MmvFault("instance-empty-name", "an instance name is empty",
             lambda data, lay: data.__setitem__(slice(lay.instance(0) + 16, lay.instance(0) + 80),
                                                bytes(64)), (), ("mmv.instance-empty-name",),
             versions=(1,)),
    MmvFault("metric-singular", "the metric of indom 62 says it is singular",
             _at(lambda lay: lay.metric_field(4, "indom"), "<i", 0), (),
             ("mmv.indom-unused", "mmv.value-singular-instance"), versions=(1,)),
    MmvFault("instance-negative", "an instance id is -5", _at(lambda lay: lay.instance(2) + 12,
             "<i", -5), (), ("mmv.instance-negative",), versions=(1,)),
    MmvFault("name-nul", "a metric name fills its field (64 bytes inline, or its 256-byte"
             " slot) with no NUL", _fill_name, ("mmv.name-nul",)),
    MmvFault("metric-name", "a metric is renamed bad-name", _metric_name("bad-name"),
             ("mmv.metric-name",)),
    MmvFault("metric-name-pmns", "a metric is renamed 9tatus (the PMDA's rule passes it)",
             _metric_name("9tatus"), (), ("mmv.metric-name-pmns",)),
    MmvFault("metric-name-duplicate", "a metric is renamed text, the name of another",
             _metric_name("text"), ("mmv.metric-name-duplicate",)),
    MmvFault("metric-name-prefix", "a metric is renamed text.all, below the name of another",
             _metric_name("text.all"), ("mmv.metric-name-prefix",)),
    MmvFault("metric-name-offset", "a metric name offset is 0",
             _at(lambda lay: lay.metric(0), "<Q", 0), ("mmv.metric-name-offset",), versions=(2, 3)),
    MmvFault("metric-item", "an item is 2000", _at(lambda lay: lay.metric_field(0, "item"), "<I",
             2000), ("mmv.metric-item",)),
    MmvFault("metric-item-duplicate", "the text metric gets item 1, the bytes metric's",
             _at(lambda lay: lay.metric_field(1, "item"), "<I", 1), ("mmv.metric-item-duplicate",)),
    MmvFault("metric-type", "a type is 7 (AGGREGATE, no MMV type)",
             _at(lambda lay: lay.metric_field(0, "type"), "<i", 7), ("mmv.metric-type",)),
    MmvFault("metric-semantics", "semantics are 2",
             _at(lambda lay: lay.metric_field(0, "semantics"), "<i", 2), (),
             ("mmv.metric-semantics",), versions=(1,)),
    MmvFault("semantics-zero", "semantics are 0 (units kept)",
             _at(lambda lay: lay.metric_field(0, "semantics"), "<i", 0), (), ("mmv.semantics-zero",),
             versions=(1,)),
    MmvFault("units-missing", "semantics 0 and no units, as pcp.mmv of PCP 6.0 writes",
             _both(_at(lambda lay: lay.metric_field(0, "semantics"), "<i", 0),
                   _at(lambda lay: lay.metric_field(0, "dimension"), "<I", 0)), (),
             ("mmv.semantics-zero", "mmv.units-missing"), versions=(1,)),
    MmvFault("metric-units", "scaleSpace 9 in a units word",
             _at(lambda lay: lay.metric_field(0, "dimension"), "<I", 0x10090000), (),
             ("mmv.metric-units",), versions=(1,)),
    MmvFault("metric-indom", "per.tool refers to indom 99",
             _at(lambda lay: lay.metric_field(3, "indom"), "<i", 99), ("mmv.metric-indom",)),
    MmvFault("elapsed-desc", "the ELAPSED metric says instant",
             _at(lambda lay: lay.metric_field(2, "semantics"), "<i", SEM_INSTANT), (),
             ("mmv.elapsed-desc",), versions=(1,)),
    MmvFault("help-offset", "a short help offset is the file size",
             _at(lambda lay: lay.metric_field(0, "shorttext"), "<Q", lambda data, lay: len(data)),
             ("mmv.help-offset",)),
    MmvFault("value-metric", "a value's metric back-pointer is 12345",
             _at(lambda lay: lay.value(0) + 16, "<Q", 12345), ("mmv.value-metric",),
             ("mmv.value-missing",)),
    MmvFault("value-instance", "a per.tool value points at an instance of the other indom",
             _swap_value_instance, ("mmv.value-instance",), ("mmv.value-missing",)),
    MmvFault("value-duplicate", "the second per.tool value points at the first's instance",
             _at(lambda lay: lay.value(4) + 24, "<Q", lambda data, lay: lay.instance(0)), (),
             ("mmv.value-duplicate", "mmv.value-missing")),
    MmvFault("string-value-offset", "a string value's slot starts 8 bytes before the end",
             _string_slot_at_end, ("mmv.string-value-offset",)),
    MmvFault("elapsed-extra", "the ELAPSED value's extra is positive",
             _at(lambda lay: lay.value(2) + 8, "<q", 5000000), (), ("mmv.elapsed-extra",),
             versions=(1,)),
    MmvFault("string-value-nul", "a string value fills its slot with no NUL",
             _fill_slot(lambda lay: lay.value(1) + 8, b"s"), ("mmv.string-value-nul",)),
    MmvFault("help-nul", "a metric's one-line help fills its slot with no NUL",
             _fill_slot(lambda lay: lay.metric_field(0, "shorttext"), b"h"), (), ("mmv.string-nul",),
             versions=(1,)),
    MmvFault("label-nul", "a label payload fills its 244 bytes with no NUL", _fill_label,
             ("mmv.label-nul",), versions=(3,)),
    MmvFault("label-slack", "heap bytes after a label's NUL, as libpcp_mmv leaves them", _slack,
             (), ("mmv.label-slack",), versions=(3,)),
    MmvFault("label-json", "a label payload is not JSON", _label_text('{"app":'), (),
             ("mmv.label-json",), versions=(3,)),
    MmvFault("label-name", "a label name starts with a digit", _label_text('{"9app":1}'), (),
             ("mmv.label-name",), versions=(3,)),
    MmvFault("label-flags", "a label has no type bit", _at(lambda lay: lay.label(0), "<I", 0), (),
             ("mmv.label-flags",), versions=(3,)),
    MmvFault("label-identity", "an item label names item 999",
             _at(lambda lay: lay.label(1) + 4, "<I", 999), (), ("mmv.label-identity",),
             versions=(3,)),
)


#: codes no one-file case of this corpus carries, and why
UNCOVERED = {
    "mmv.read": "an unreadable file is no file to ship",
    "mmv.cluster-collision": "needs two files in one directory",
    "mmv.cluster-shared": "needs two files in one directory",
    **{f"mmv.watch-{what}": "needs a live writer (check --watch)" for what in (
        "rewriting", "generation", "torn", "counter-regress", "file-appeared", "file-gone", "process-gone",
        "metrics-changed", "static")},
    "mmv.toc-version": "a labels section in a version 1 or 2 file is no edit of one field",
}


def case_files(fault: MmvFault, version: int) -> bytes:
    """The bytes of one case's file."""
    data = bytearray(base_file(version, labels=fault.labels))
    out = fault.edit(data, Layout(data))
    return bytes(data if out is None else out)


def _case_json(fault: MmvFault, version: int, digest: str) -> dict[str, Any]:
    codes = fault.codes
    errors = [c for c in codes if _SEVERITY[c] == "error"]
    warnings = [c for c in codes if c not in errors]
    return {
        "id": f"mmv-{fault.name}-v{version}",
        "title": fault.title,
        "kind": "invalid",
        "tags": [f"area:{codes[0].split('.')[0]}", f"fault:mmv-{fault.name}", "fixture:mmv-base"],
        "clauses": list(dict.fromkeys(_CLAUSE[c] for c in errors + warnings)),
        "format": "mmv",
        "file": CASE_FILE,
        "mmv_versions": [version],
        "origin": {"writer": "pcpconform.corpusgen.mmv_faults", "version": __version__,
                   "source": "pcpconform.corpusgen.mmv_faults.base_model"},
        "files": {CASE_FILE: digest},
        "expected": {"verdict": "errors" if errors else "warnings", "error_codes": errors,
                     "warning_codes": warnings, "dump": None},
    }


def build_mmv_cases(out_dir: Path) -> list[Path]:
    """Write every case as ``out_dir/mmv-<fault>-v<N>/{f.mmv,case.json}``; their directories."""
    out = []
    for fault in FAULTS:
        for version in fault.versions:
            data = case_files(fault, version)
            case = _case_json(fault, version, hashlib.sha256(data).hexdigest())
            where = Path(out_dir) / case["id"]
            where.mkdir(parents=True, exist_ok=True)
            (where / CASE_FILE).write_bytes(data)
            (where / "case.json").write_bytes(
                (json.dumps(case, indent=1, ensure_ascii=True) + "\n").encode("ascii"))
            out.append(where)
    return out
