"""Hypothesis strategies for MMV files: their content (``mmv_contents``) and their bytes
(``mmv_files``, laid out by ``build_mmv`` as libpcp_mmv lays them out).

``mmv_contents(version)`` draws an ``MmvFile`` that version can hold: names that fit it
(v1: under 64 bytes), labels only in version 3. Without a version the content is drawn
first and gets the version libpcp_mmv would choose for it (MMV-WRITE-VERSION-1). With
``exportable=True`` everything drawn is something the MMV PMDA exports (MMV-ID-2): items
distinct and at most 1023, names of letters, digits, ``_`` and ``.`` none of which lies
below another (MMV-ID-3), a non-zero cluster,
semantics 1, 3 or 4. Values are stored as libpcp_mmv stores them (typed, upper bytes zero,
a string's length in its atom) unless ``raw_atoms=True`` draws any 8 bytes.

Requires hypothesis (the ``strategies`` extra).
"""

from __future__ import annotations

import dataclasses
import struct
from typing import TYPE_CHECKING, Any

from pcpconform.extra import require
from pcpconform.mmv.model import (
    LABEL_CLUSTER,
    LABEL_INDOM,
    LABEL_INSTANCES,
    LABEL_ITEM,
    LABEL_OPTIONAL,
    MMV_TYPES,
    PM_IN_NULL,
    TYPE_DOUBLE,
    TYPE_ELAPSED,
    TYPE_FLOAT,
    TYPE_I32,
    TYPE_I64,
    TYPE_NOSUPPORT,
    TYPE_STRING,
    TYPE_U32,
    TYPE_U64,
    Indom,
    Instance,
    Label,
    Metric,
    MmvFile,
    Value,
    encode_text,
)
from pcpconform.mmv.writer import build_mmv, select_version

if TYPE_CHECKING:
    from hypothesis import strategies as st
else:  # without hypothesis, say which extra provides it
    st = require("hypothesis.strategies", "strategies", "pcpconform.extra.mmv_strategies")

__all__ = ["mmv_contents", "mmv_files", "mmv_text", "mmv_values", "all_leaves"]

_INT_RANGES = {TYPE_I32: (-(2**31), 2**31 - 1), TYPE_U32: (0, 2**32 - 1),
               TYPE_I64: (-(2**63), 2**63 - 1), TYPE_U64: (0, 2**64 - 1),
               TYPE_ELAPSED: (-(2**63), 2**63 - 1)}
_PMNS_FIRST = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
_PMNS_REST = _PMNS_FIRST + "0123456789_"


def mmv_text(max_bytes: int, min_size: int = 0) -> st.SearchStrategy[str]:
    """Text without NUL whose UTF-8 form is under max_bytes (a name, help or string slot)."""
    chars = st.characters(blacklist_characters="\0", codec="utf-8")   # no NUL, no surrogate
    return st.text(chars, min_size=min_size, max_size=max_bytes // 4).filter(
        lambda t: len(encode_text(t)) < max_bytes)


def _pmns_name(max_bytes: int) -> st.SearchStrategy[str]:
    part = st.builds(lambda a, b: a + b, st.sampled_from(_PMNS_FIRST),
                     st.text(_PMNS_REST, max_size=8))
    return st.lists(part, min_size=1, max_size=3).map(".".join).filter(
        lambda n: len(n) < max_bytes)


def all_leaves(names: list[str]) -> bool:
    """No name lies below another, and none is the PMDA's own control namespace (MMV-ID-3)."""
    taken = set(names)
    return not any(n.split(".")[0] == "control" or any(
        ".".join(n.split(".")[:k]) in taken for k in range(1, n.count(".") + 1)) for n in names)


@st.composite
def mmv_values(draw: Any, mtype: int, instance: int | None = None,
               raw_atoms: bool = False) -> Value:
    """One value of an MMV type, as libpcp_mmv (or, with raw_atoms, anything) stores it."""
    if mtype == TYPE_STRING:
        text = draw(mmv_text(256))
        atom = (draw(st.binary(min_size=8, max_size=8)) if raw_atoms
                else struct.pack("<q", len(encode_text(text))))
        return Value(instance, atom, 0, text)
    if raw_atoms:
        return Value(instance, draw(st.binary(min_size=8, max_size=8)),
                     draw(st.integers(-(2**63), 2**63 - 1)))
    if mtype in _INT_RANGES:
        extra = draw(st.integers(-(2**62), 0)) if mtype == TYPE_ELAPSED else 0
        return Value.of(mtype, draw(st.integers(*_INT_RANGES[mtype])), instance, extra)
    if mtype == TYPE_FLOAT:
        return Value.of(mtype, draw(st.floats(width=32)), instance)
    if mtype == TYPE_DOUBLE:
        return Value.of(mtype, draw(st.floats()), instance)
    return Value(instance)          # NOSUPPORT: the zeroed word libpcp_mmv leaves


@st.composite
def mmv_contents(draw: Any, version: int | None = None, *, exportable: bool = False,
                 raw_atoms: bool = False, max_indoms: int = 3, max_instances: int = 3,
                 max_metrics: int = 5, max_labels: int = 4) -> MmvFile:
    """An MmvFile that ``version`` (1, 2, 3; None: the one libpcp_mmv chooses) holds."""
    name_limit = 64 if version == 1 else 256
    any_text = st.none() | mmv_text(256)
    serials = draw(st.lists(st.integers(1, 2**22 - 1 if exportable else 2**32 - 2),
                            max_size=max_indoms, unique=True))
    indoms = []
    for serial in serials:
        ids = draw(st.lists(st.integers(-(2**31), 2**31 - 1), max_size=max_instances,
                            unique=exportable))
        names = draw(st.lists(mmv_text(name_limit, 1), min_size=len(ids), max_size=len(ids),
                              unique=exportable))
        indoms.append(Indom(serial, tuple(Instance(i, n) for i, n in zip(ids, names)),
                            draw(any_text), draw(any_text)))
    types = [t for t in MMV_TYPES if not exportable or t != TYPE_NOSUPPORT]
    nmetrics = draw(st.integers(0, max_metrics))
    items = draw(st.lists(st.integers(0, 1023) if exportable else st.integers(0, 2**32 - 1),
                          min_size=nmetrics, max_size=nmetrics, unique=exportable))
    names = draw(st.lists(_pmns_name(name_limit) if exportable else mmv_text(name_limit, 1),
                          min_size=nmetrics, max_size=nmetrics, unique=exportable)
                 .filter(lambda ns: not exportable or all_leaves(ns)))
    metrics = []
    for item, name in zip(items, names):
        mtype = draw(st.sampled_from(types))
        serial = draw(st.sampled_from([0, -1, *serials]))
        owners: list[int | None] = [None]
        if serial not in (0, -1):
            owners = [i.internal for d in indoms if d.serial == serial for i in d.instances]
        indom = serial - 2**32 if serial >= 2**31 else serial   # the entry's field is an int32
        values = tuple(draw(mmv_values(mtype, owner, raw_atoms)) for owner in owners)
        sem = draw(st.sampled_from([1, 3, 4]) if exportable else st.integers(-(2**31), 2**31 - 1))
        dimension = draw(st.integers(0, 2**32 - 1).map(lambda w: w & ~0xFF) if exportable
                         else st.integers(0, 2**32 - 1))
        metrics.append(Metric(name, item, mtype, sem, dimension, indom, draw(any_text),
                              draw(any_text), values))
    labels: list[Label] = []
    if version in (None, 3):
        cluster_label = st.builds(lambda: (LABEL_CLUSTER, 0, PM_IN_NULL))
        kinds = [cluster_label]
        if indoms:
            kinds.append(st.sampled_from(serials).map(lambda s: (LABEL_INDOM, s, PM_IN_NULL)))
            pairs = [(d.serial, i.internal) for d in indoms for i in d.instances]
            if pairs:
                kinds.append(st.sampled_from(pairs).map(lambda p: (LABEL_INSTANCES, *p)))
        if metrics:
            kinds.append(st.sampled_from(items).map(lambda i: (LABEL_ITEM, i, PM_IN_NULL)))
        for _ in range(draw(st.integers(0, max_labels))):
            flags, identity, internal = draw(st.one_of(kinds))
            flags |= LABEL_OPTIONAL if draw(st.booleans()) else 0
            key = draw(_pmns_name(32).map(lambda n: n.replace(".", "_")))
            value = draw(st.integers(-1000, 1000).map(str) | mmv_text(32).map(
                lambda t: '"' + "".join(c for c in t if c.isalnum()) + '"'))
            labels.append(Label(flags, identity & 0xFFFFFFFF, internal,
                                '{"' + key + '":' + value + "}"))
    gen = draw(st.integers(1, 2**64 - 1))
    cluster = draw(st.integers(1 if exportable else 0, 4095))
    labels = [dataclasses.replace(lb, identity=cluster) if lb.flags & ~LABEL_OPTIONAL
              == LABEL_CLUSTER else lb for lb in labels]
    content = MmvFile(version or 1, gen, gen, draw(st.integers(0, 7)),
                      draw(st.integers(-(2**31), 2**31 - 1)), cluster, tuple(indoms),
                      tuple(metrics), tuple(labels))
    if version is None:
        content = dataclasses.replace(content, version=select_version(content))
    return content


@st.composite
def mmv_files(draw: Any, /, version: int | None = None, **kwargs: Any) -> bytes:
    """The bytes of a drawn MMV file (``mmv_contents`` arguments), as build_mmv lays them out."""
    return build_mmv(draw(mmv_contents(version, **kwargs)))
