"""Lay out an MmvFile byte for byte as libpcp_mmv's mmv_init does for the same content.

Section order: header | TOC | indoms | instances | metrics | values | strings | labels, a TOC
entry only for a section libpcp_mmv writes. String slots are allocated in libpcp_mmv's
order: instance names (v2/v3), metric names (v2/v3), STRING values, each metric's short
then long help, each indom's short then long help. The one difference: libpcp_mmv copies
all 244 payload bytes of a label from a buffer it filled only up to the NUL, so the bytes
after a label's NUL are whatever its heap held; this writer zeroes them, and files are
compared after ``mask_label_slack`` zeroes them on both sides.
"""

from __future__ import annotations

import struct
from typing import Any

from pcpconform.errors import UsageError
from pcpconform.mmv.model import TYPE_STRING, MmvFile, encode_text, is_singular
from pcpconform.mmv.schema import (
    HEADER_SIZE,
    INDOM_SIZE,
    LABEL_SIZE,
    MMV_LABELMAX,
    MMV_MAGIC,
    MMV_NAMEMAX,
    MMV_STRINGMAX,
    STRING_SIZE,
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

__all__ = ["build_mmv", "select_version", "mask_label_slack"]


def select_version(mmv: MmvFile) -> int:
    """The version libpcp_mmv's registry API writes for this content: 3 with any label,
    else 2 with any metric or instance name of 64 bytes or more, else 1."""
    if mmv.labels:
        return 3
    names = [m.name for m in mmv.metrics] + [i.name for d in mmv.indoms for i in d.instances]
    return 2 if any(len(encode_text(n)) >= MMV_NAMEMAX for n in names) else 1


def _fixed(text: str, size: int, what: str) -> bytes:
    """Text NUL-terminated and NUL-padded to size bytes, as strncpy leaves it."""
    data = encode_text(text)
    if b"\0" in data or len(data) >= size:
        raise UsageError(f"{what}: {len(data)} bytes or an embedded NUL do not fit {size} bytes")
    return data + bytes(size - len(data))


def _check(mmv: MmvFile) -> None:
    if mmv.version not in (1, 2, 3):
        raise UsageError(f"MMV version {mmv.version} is not 1, 2 or 3")
    if mmv.version < select_version(mmv):
        raise UsageError(f"content needs MMV version {select_version(mmv)}, not {mmv.version}")
    serials = [d.serial for d in mmv.indoms]
    if len(set(serials)) != len(serials) or any(is_singular(s) or s == 0xFFFFFFFF for s in serials):
        raise UsageError("indom serials must be distinct and neither 0 nor 0xffffffff")
    for m in mmv.metrics:
        if is_singular(m.indom):
            expected: list[int | None] = [None]
        else:
            indom = mmv.indom(m.indom & 0xFFFFFFFF)
            if indom is None:
                raise UsageError(f"metric {m.name!r}: no indom with serial {m.indom}")
            expected = [i.internal for i in indom.instances]
        if [v.instance for v in m.values] != expected:
            raise UsageError(f"metric {m.name!r}: values must be one per instance, in indom order")
        for v in m.values:
            if (v.string is None) != (m.type != TYPE_STRING) or len(v.atom) != 8:
                raise UsageError(f"metric {m.name!r}: a value must have an 8-byte atom and a"
                                 " string exactly when the metric is a STRING")


def build_mmv(mmv: MmvFile) -> bytes:
    """The bytes libpcp_mmv writes for this content (label slack zeroed)."""
    _check(mmv)
    v = mmv.version
    s = mmv_structs(v)
    long_names = v >= 2
    indoms, metrics, labels = mmv.indoms, mmv.metrics, mmv.labels
    ninstances = sum(len(d.instances) for d in indoms)
    nvalues = sum(len(m.values) for m in metrics)

    strings: list[bytes] = []

    def slot(text: str, what: str) -> int:
        strings.append(_fixed(text, MMV_STRINGMAX, what))
        return len(strings) - 1

    # string slots in libpcp_mmv's allocation order (indices; offsets once the size is known)
    inst_slots = [[slot(i.name, "instance name") for i in d.instances] if long_names else []
                  for d in indoms]
    name_slots = [slot(m.name, "metric name") if long_names else -1 for m in metrics]
    value_slots = [[slot(val.string or "", "string value") if m.type == TYPE_STRING else -1
                    for val in m.values] for m in metrics]

    def help_slots(items: Any) -> list[tuple[int, int]]:
        return [(-1 if x.shorttext is None else slot(x.shorttext, "short help"),
                 -1 if x.helptext is None else slot(x.helptext, "long help")) for x in items]

    metric_help = help_slots(metrics)
    indom_help = help_slots(indoms)

    tocs = 2 + (2 if indoms else 0) + (1 if strings else 0) + (1 if labels else 0)
    indoms_off = HEADER_SIZE + TOC_SIZE * tocs
    instances_off = indoms_off + INDOM_SIZE * len(indoms)
    metrics_off = instances_off + s.instance_size * ninstances
    values_off = metrics_off + s.metric_size * len(metrics)
    strings_off = values_off + VALUE_SIZE * nvalues
    labels_off = strings_off + STRING_SIZE * len(strings)

    def at(index: int) -> int:
        return 0 if index < 0 else strings_off + STRING_SIZE * index

    out = bytearray(s.header.build({
        "magic": MMV_MAGIC, "version": v, "g1": mmv.g1, "g2": mmv.g2, "tocs": tocs,
        "flags": mmv.flags, "process": mmv.process, "cluster": mmv.cluster}))
    toc = []
    if indoms:
        toc += [(TOC_INDOMS, len(indoms), indoms_off), (TOC_INSTANCES, ninstances, instances_off)]
    toc += [(TOC_METRICS, len(metrics), metrics_off), (TOC_VALUES, nvalues, values_off)]
    if strings:
        toc.append((TOC_STRINGS, len(strings), strings_off))
    if labels:
        toc.append((TOC_LABELS, len(labels), labels_off))
    for kind, count, offset in toc:
        out += s.toc.build({"type": kind, "count": count, "offset": offset})

    first_inst: dict[int, int] = {}
    where = instances_off
    for d, (short, long) in zip(indoms, indom_help):
        first_inst.setdefault(d.serial, where)
        out += s.indom.build({"serial": d.serial, "count": len(d.instances), "offset": where,
                              "shorttext": at(short), "helptext": at(long)})
        where += s.instance_size * len(d.instances)
    for n, (d, slots) in enumerate(zip(indoms, inst_slots)):
        for k, inst in enumerate(d.instances):
            external: bytes | int = (at(slots[k]) if long_names
                                     else _fixed(inst.name, MMV_NAMEMAX, "instance name"))
            out += s.instance.build({"indom": indoms_off + INDOM_SIZE * n, "padding": 0,
                                     "internal": inst.internal, "external": external})
    for m, name_slot, (short, long) in zip(metrics, name_slots, metric_help):
        name: bytes | int = at(name_slot) if long_names else _fixed(m.name, MMV_NAMEMAX, "metric name")
        out += s.metric.build({"name": name, "item": m.item, "type": m.type,
                               "semantics": m.semantics, "dimension": m.dimension,
                               "indom": m.indom, "padding": 0, "shorttext": at(short),
                               "helptext": at(long)})
    for n, (m, slots) in enumerate(zip(metrics, value_slots)):
        base = 0 if is_singular(m.indom) else first_inst[m.indom & 0xFFFFFFFF]
        for k, val in enumerate(m.values):
            out += s.value.build({
                "value": val.atom,
                "extra": at(slots[k]) if m.type == TYPE_STRING else val.extra,
                "metric": metrics_off + s.metric_size * n,
                "instance": 0 if val.instance is None else base + s.instance_size * k})
    out += b"".join(strings)
    for lb in labels:
        if s.label is None:  # _check: labels need version 3
            raise UsageError("labels need MMV version 3")
        out += s.label.build({"flags": lb.flags, "identity": lb.identity, "internal": lb.internal,
                              "payload": _fixed(lb.payload, MMV_LABELMAX, "label")})
    return bytes(out)


def mask_label_slack(data: bytes) -> bytes:
    """The file with every byte after the NUL of each label payload zeroed (the bytes
    libpcp_mmv leaves uninitialised); anything it cannot locate is left as it is."""
    if len(data) < HEADER_SIZE or data[:4] != MMV_MAGIC:
        return data
    out = bytearray(data)
    (tocs,) = struct.unpack_from("<i", data, 24)
    for t in range(max(0, min(tocs, (len(data) - HEADER_SIZE) // TOC_SIZE))):
        kind, count, offset = struct.unpack_from("<iiQ", data, HEADER_SIZE + TOC_SIZE * t)
        if kind != TOC_LABELS:
            continue
        for n in range(max(count, 0)):
            start = offset + LABEL_SIZE * n + 12
            end = start + MMV_LABELMAX
            if end > len(data):
                break
            nul = data.find(b"\0", start, end)
            if nul >= 0:
                out[nul:end] = bytes(end - nul)
    return bytes(out)
