"""Declarative construct schemas of the MMV on-disk structures, versions 1, 2 and 3.

Integers are in the writer's host byte order, with no marker in the file; every known
writer is little-endian (x86-64), so the schemas are little-endian. Offsets are absolute
byte offsets from the start of the file. Names and strings are kept as raw bytes: the reader
decodes them, so that a rebuild loses nothing.
"""

from __future__ import annotations

from functools import cache

from construct import Bytes, Construct, Int32sl, Int32ul, Int64sl, Int64ul

from pcpconform.format.schema.common import DocStruct

__all__ = [
    "MMV_MAGIC", "MMV_VERSIONS", "MMV_NAMEMAX", "MMV_STRINGMAX", "MMV_LABELMAX",
    "TOC_INDOMS", "TOC_INSTANCES", "TOC_METRICS", "TOC_VALUES", "TOC_STRINGS", "TOC_LABELS",
    "TOC_NAMES", "HEADER_SIZE", "TOC_SIZE", "INDOM_SIZE", "VALUE_SIZE", "STRING_SIZE",
    "LABEL_SIZE", "MmvStructs", "mmv_structs",
]

MMV_MAGIC = b"MMV\0"
MMV_VERSIONS = (1, 2, 3)
MMV_NAMEMAX = 64        # inline v1 names: at most 63 bytes and a NUL
MMV_STRINGMAX = 256     # one string slot
MMV_LABELMAX = 244      # a label's JSON text, NUL included

TOC_INDOMS = 1
TOC_INSTANCES = 2
TOC_METRICS = 3
TOC_VALUES = 4
TOC_STRINGS = 5
TOC_LABELS = 6
TOC_NAMES = {TOC_INDOMS: "indoms", TOC_INSTANCES: "instances", TOC_METRICS: "metrics",
             TOC_VALUES: "values", TOC_STRINGS: "strings", TOC_LABELS: "labels"}

HEADER_SIZE = 40
TOC_SIZE = 16
INDOM_SIZE = 32
VALUE_SIZE = 32
STRING_SIZE = MMV_STRINGMAX
LABEL_SIZE = 12 + MMV_LABELMAX


def header() -> Construct:
    """mmv_disk_header_t: the same 40 bytes in every version."""
    return DocStruct(
        "magic" / Bytes(4) * 'tag, "MMV\\0"',
        "version" / Int32sl * "1, 2 or 3 (mmv(5) still says 1 or 2)",
        "g1" / Int64ul * "generation, written first; libpcp_mmv: tv_sec << 32 | tv_usec",
        "g2" / Int64ul * "generation, 0 while the file is built, set to g1 last",
        "tocs" / Int32sl * "number of TOC entries, at least 2",
        "flags" / Int32ul * "0x1 NOPREFIX, 0x2 PROCESS, 0x4 SENTINEL",
        "process" / Int32sl * "writer's PID (acted on only with PROCESS)",
        "cluster" / Int32sl * "preferred PMID cluster, 0..4095; 0 lets the PMDA choose",
    )


def toc_entry() -> Construct:
    """mmv_disk_toc_t: one section of the file."""
    return DocStruct(
        "type" / Int32sl * "section: 1 indoms, 2 instances, 3 metrics, 4 values, 5 strings,"
                           " 6 labels (v3)",
        "count" / Int32sl * "number of entries in the section",
        "offset" / Int64ul * "offset of the section's first entry",
    )


def indom_entry() -> Construct:
    """mmv_disk_indom_t: the same 32 bytes in every version."""
    return DocStruct(
        "serial" / Int32ul * "instance domain serial, unique in the file, not 0",
        "count" / Int32ul * "number of instances",
        "offset" / Int64ul * "offset of the first of its instance entries",
        "shorttext" / Int64ul * "offset of the one-line help string slot, 0 for none",
        "helptext" / Int64ul * "offset of the long help string slot, 0 for none",
    )


def instance_entry(version: int) -> Construct:
    """mmv_disk_instance_t (v1, 80 bytes) or mmv_disk_instance2_t (v2/v3, 24 bytes)."""
    external = (Bytes(MMV_NAMEMAX) * "external name, NUL-terminated and NUL-padded"
                if version == 1 else Int64ul * "offset of the external name's string slot")
    return DocStruct(
        "indom" / Int64ul * "offset of its indom entry",
        "padding" / Int32ul * "zero",
        "internal" / Int32sl * "internal instance identifier",
        "external" / external,
    )


def metric_entry(version: int) -> Construct:
    """mmv_disk_metric_t (v1, 104 bytes) or mmv_disk_metric2_t (v2/v3, 48 bytes)."""
    name = (Bytes(MMV_NAMEMAX) * "metric name, NUL-terminated and NUL-padded"
            if version == 1 else Int64ul * "offset of the name's string slot")
    return DocStruct(
        "name" / name,
        "item" / Int32ul * "PMID item, 0..1023, unique in the file",
        "type" / Int32sl * "MMV_TYPE_*: -1 NOSUPPORT, 0..6 as PM_TYPE_*, 9 ELAPSED",
        "semantics" / Int32sl * "1 counter, 3 instant, 4 discrete (0 is read as counter)",
        "dimension" / Int32ul * "pmUnits bit-field word, dimSpace in the top 4 bits",
        "indom" / Int32sl * "serial of its instance domain; 0 or -1 for a singular metric",
        "padding" / Int32ul * "zero",
        "shorttext" / Int64ul * "offset of the one-line help string slot, 0 for none",
        "helptext" / Int64ul * "offset of the long help string slot, 0 for none",
    )


def value_entry() -> Construct:
    """mmv_disk_value_t: the same 32 bytes in every version."""
    return DocStruct(
        "value" / Bytes(8) * "pmAtomValue, read by the metric's type (a STRING's holds its"
                             " length, cosmetic)",
        "extra" / Int64sl * "STRING: offset of the value's string slot; ELAPSED: minus the"
                            " start time in microseconds while an interval is open",
        "metric" / Int64ul * "offset of its metric entry",
        "instance" / Int64ul * "offset of its instance entry, 0 for a singular metric",
    )


def string_slot() -> Construct:
    """mmv_disk_string_t: one NUL-terminated string in 256 bytes."""
    return DocStruct(
        "payload" / Bytes(MMV_STRINGMAX) * "NUL-terminated text, NUL-padded",
    )


def label_entry() -> Construct:
    """mmv_disk_label_t (v3 only): one name/value pair as JSON."""
    return DocStruct(
        "flags" / Int32ul * "0x4 INDOM, 0x8 CLUSTER, 0x10 ITEM, 0x20 INSTANCES; | 0x80 OPTIONAL",
        "identity" / Int32ul * "indom serial, cluster or item, by the label's type",
        "internal" / Int32sl * "internal instance identifier, or PM_IN_NULL (-1)",
        "payload" / Bytes(MMV_LABELMAX) * '{"name":value}, NUL-terminated; libpcp_mmv leaves'
                                          " the bytes after the NUL uninitialised",
    )


class MmvStructs:
    """Every MMV structure of one version, and their sizes."""

    def __init__(self, version: int) -> None:
        if version not in MMV_VERSIONS:
            raise ValueError(f"MMV version {version} is not 1, 2 or 3")
        self.version = version
        self.header: Construct = header()
        self.toc: Construct = toc_entry()
        self.indom: Construct = indom_entry()
        self.instance: Construct = instance_entry(version)
        self.metric: Construct = metric_entry(version)
        self.value: Construct = value_entry()
        self.string: Construct = string_slot()
        self.label: Construct | None = label_entry() if version >= 3 else None
        self.instance_size = 80 if version == 1 else 24
        self.metric_size = 104 if version == 1 else 48
        self.sizes = {TOC_INDOMS: INDOM_SIZE, TOC_INSTANCES: self.instance_size,
                      TOC_METRICS: self.metric_size, TOC_VALUES: VALUE_SIZE,
                      TOC_STRINGS: STRING_SIZE, TOC_LABELS: LABEL_SIZE}


@cache
def mmv_structs(version: int) -> MmvStructs:
    """The shared MmvStructs of a version (schemas are immutable, so one is enough)."""
    return MmvStructs(version)
