"""The column pass of the MMV checks: sections checked with array operations.

A file at the PMDA's limits holds 10^5 value entries; checking each in Python costs ten
times what mmvdump takes to read the file. The per-entry checks stay the reference: the
value entries a column check flags, an indom whose instances hold anything flagged, and a
metrics section with a flagged string slot are checked entry by entry, so codes, offsets,
fields, messages and their order do not change; each time that happens its reason is counted
in ``FALLBACKS``, so a test can tell when the column pass is silently not taken.
``MmvContext.columns`` False turns the pass off (the reference for tests).
"""

from __future__ import annotations

import enum
from collections import Counter
from itertools import repeat
from operator import add
from typing import NamedTuple

import numpy as np
import numpy.typing as npt
from construct import Construct

from pcpconform.check.mmv.context import IndomFact, MmvContext, Section, SlotBatch
from pcpconform.mmv.columns import entry_dtype
from pcpconform.mmv.model import TYPE_ELAPSED, TYPE_STRING
from pcpconform.mmv.schema import STRING_SIZE

__all__ = ["CheckFallback", "FALLBACKS", "section_table", "slots_ok", "slot_texts",
           "slots_found", "inline_texts", "instance_columns", "ValueKeys", "ValueFlags",
           "value_columns"]


class CheckFallback(enum.Enum):
    """Why entries were checked one by one."""

    VALUES = "the values section needs the per-entry checks"
    VALUE_ENTRIES = "value entries need the per-entry checks (counted one by one)"
    INSTANCES = "an instance entry of an indom needs the per-entry checks"
    METRICS = "the metrics section needs the per-entry checks"


#: how often each reason sent entries to the per-entry checks (in this process; value
#: entries one by one, the others once per section or indom)
FALLBACKS: Counter[CheckFallback] = Counter()


def section_table(ctx: MmvContext, schema: Construct, offset: int, count: int
                  ) -> npt.NDArray[np.void]:
    """count entries from offset, copied (no array may keep the file's map open)."""
    dtype = entry_dtype(schema)
    if count <= 0:
        return np.zeros(0, dtype)
    return np.frombuffer(bytes(ctx.data[offset:offset + dtype.itemsize * count]), dtype)


def slots_ok(ctx: MmvContext, offsets: list[int]) -> bool:
    """Whether every offset is a whole string slot after the TOC with a NUL in its 256 bytes
    (what MmvContext.slot accepts without a finding)."""
    return slot_texts(ctx, offsets, decode=False) is not None


def slot_texts(ctx: MmvContext, offsets: list[int], *, decode: bool = True) -> list[str] | None:
    """The texts of string slots, or None when one is not what MmvContext.slot accepts
    without a finding (a whole slot after the TOC, a NUL in its 256 bytes)."""
    if not offsets:
        return []
    if min(offsets) < ctx.toc_end or max(offsets) + STRING_SIZE > ctx.size:
        return None
    data = ctx.data
    ends = list(map(data.find, repeat(b"\0"), offsets, map(add, offsets, repeat(STRING_SIZE))))
    if -1 in ends:
        return None
    if not decode:
        return []
    return [data[at:end].decode("utf-8", "surrogateescape") for at, end in zip(offsets, ends)]


def inline_texts(raw: npt.NDArray[np.void]) -> list[str] | None:
    """The texts of inline (v1) names of a "V" column, or None when one has no NUL."""
    if len(raw) == 0:
        return []
    rows = np.ascontiguousarray(raw).view(np.uint8).reshape(len(raw), raw.dtype.itemsize)
    nul = rows == 0
    if not nul.any(axis=1).all():
        return None
    ends: list[int] = nul.argmax(axis=1).tolist()
    return [bytes(r[:end]).decode("utf-8", "surrogateescape") for r, end in zip(rows, ends)]


def instance_columns(ctx: MmvContext, d: IndomFact, first: int, count: int, f: str) -> bool:
    """Check an indom's instance entries (inside the file) by columns and record them as
    the per-entry checks do; False when one needs those checks (nothing recorded then)."""
    assert ctx.structs is not None
    size = ctx.structs.instance_size
    table = section_table(ctx, ctx.structs.instance, first, count)
    internals = table["internal"]
    if (table["indom"] != d.offset).any() or (internals < 0).any():
        return False
    external = table["external"]
    if ctx.version == 1:
        names = inline_texts(external)
    else:
        offsets = external.astype(np.int64)
        names = slot_texts(ctx, offsets.tolist())
    if names is None or "" in names or len(set(names)) != count:
        return False
    ids: list[int] = internals.tolist()
    held = dict(zip(ids, names))
    if len(held) != count:
        return False
    d.instances.update(held)
    ats = range(first, first + size * count, size)
    ctx.instance_at.update(zip(ats, zip(repeat(d.serial), ids)))
    if ctx.version > 1 and count:
        rows = np.arange(count, dtype=np.int64)
        ctx.slots.append(SlotBatch(offsets, rows, (f + ".instances[{}].external",), None,
                                   d.index, first + size * rows + 16))
    return True


class ValueKeys:
    """The (metric index, instance) of every value, as the per-entry checks collect them:
    each once, and every instance one of its metric's indom."""

    NONE = -(1 << 40)        # below every int32 instance id: a singular value

    def __init__(self, which: npt.NDArray[np.int64], instances: npt.NDArray[np.int64],
                 nmetrics: int) -> None:
        self.which, self.instances = which, instances
        self.counts: list[int] = np.bincount(which, minlength=nmetrics).tolist()
        self._sets: dict[int, set[int | None]] = {}

    def __contains__(self, key: object) -> bool:
        assert isinstance(key, tuple)
        index: int = key[0]
        instance: int | None = key[1]
        if index not in self._sets:
            ids = self.instances[self.which == index].tolist()
            self._sets[index] = {None if i == self.NONE else i for i in ids}
        return instance in self._sets[index]

    @classmethod
    def empty(cls, nmetrics: int) -> ValueKeys:
        return cls(np.zeros(0, np.int64), np.zeros(0, np.int64), nmetrics)


class ValueFlags(NamedTuple):
    """The column pass over the values section: the entries the per-entry checks must see,
    and, for the others, what those checks would record."""

    flagged: npt.NDArray[np.bool_]
    which: npt.NDArray[np.int64]         # its metric's index
    instances: npt.NDArray[np.int64]     # its instance's id, ValueKeys.NONE for none
    string: npt.NDArray[np.bool_]        # a STRING value whose slot is to be recorded
    extras: npt.NDArray[np.int64]

    def keys(self, nmetrics: int) -> ValueKeys:
        """The keys of a section with nothing flagged."""
        return ValueKeys(self.which, self.instances, nmetrics)


def value_columns(ctx: MmvContext, sect: Section) -> ValueFlags | None:
    """Check the values section by columns (nothing reported or recorded); None when the
    whole section needs the per-entry checks (no metrics, or repeated indom serials, whose
    instances the PMDA merges)."""
    assert ctx.structs is not None
    count = sect.fitting(ctx.size)
    table = section_table(ctx, ctx.structs.value, sect.offset, count)
    if count == 0:
        none = np.zeros(0, np.int64)
        return ValueFlags(np.zeros(0, bool), none, none, np.zeros(0, bool), none)
    if not ctx.metrics or len({d.serial for d in ctx.indoms}) != len(ctx.indoms):
        return None
    m_indom = np.array([m.indom for m in ctx.metrics], np.int64)
    m_type = np.array([m.type for m in ctx.metrics], np.int64)
    readable = {d.serial for d in ctx.indoms if d.readable}
    m_owned = np.array([m.indom in readable for m in ctx.metrics], bool)
    # the metric back-pointer: a metric entry, i.e. metrics[k] for the k it is the offset
    # of (ctx.metrics holds the section's entries in order; above 2^63 turns negative)
    first, size = ctx.metrics[0].offset, ctx.structs.metric_size
    moff = table["metric"].astype(np.int64) - first
    which = moff // size
    has_metric = (moff >= 0) & (moff % size == 0) & (which < len(ctx.metrics))
    which = np.where(has_metric, which, 0)
    indom = m_indom[which]
    singular = (indom == 0) | (indom == 0xFFFFFFFF)
    ioff = table["instance"].astype(np.int64)
    # an instance back-pointer of a readable indom: one of its instance entries
    owned = has_metric & ~singular & m_owned[which]
    instances = np.full(count, ValueKeys.NONE, np.int64)
    found = ~owned
    if owned.any() and ctx.instance_at:
        inst_offset, inst_serial, inst_internal = _instances(ctx)
        at = np.searchsorted(inst_offset, ioff).clip(0, len(inst_offset) - 1)
        hit = owned & (inst_offset[at] == ioff) & (inst_serial[at] == indom)
        found |= hit
        instances[hit] = inst_internal[at][hit]
    # entries the per-entry checks give a key (metric, instance); a repeated key is flagged
    # every time it occurs, so that the per-entry checks see all of them
    keyed = has_metric & found
    keys = which * (1 << 33) + np.where(owned, instances + (1 << 31), 1 << 32)
    flagged = ~keyed | (singular & (ioff != 0)) | _repeated(keys, keyed)
    mtype = m_type[which]
    extras = table["extra"]
    flagged |= (mtype == TYPE_ELAPSED) & (extras > 0)
    string = np.flatnonzero(keyed & (mtype == TYPE_STRING))
    flagged[string[~slots_found(ctx, extras[string])]] = True
    is_string = np.zeros(count, bool)
    is_string[string] = True
    return ValueFlags(flagged, which, instances, is_string & ~flagged, extras)


def _repeated(keys: npt.NDArray[np.int64], among: npt.NDArray[np.bool_]) -> npt.NDArray[np.bool_]:
    """Where a key of the entries ``among`` occurs more than once among them."""
    out = np.zeros(len(keys), bool)
    rows = np.flatnonzero(among)
    k = keys[rows]
    # increasing keys (values laid out metric by metric, instances in id order) are distinct
    if (k[1:] > k[:-1]).all():
        return out
    order = np.argsort(k, kind="stable")
    ordered = k[order]
    same = ordered[1:] == ordered[:-1]
    out[rows[order[1:][same]]] = True
    out[rows[order[:-1][same]]] = True
    return out


def slots_found(ctx: MmvContext, offsets: npt.NDArray[np.int64]) -> npt.NDArray[np.bool_]:
    """For each offset, whether MmvContext.slot accepts it without a finding."""
    inside = (offsets >= ctx.toc_end) & (offsets <= ctx.size - STRING_SIZE)
    at = offsets[inside].tolist()
    ends = list(map(ctx.data.find, repeat(b"\0"), at, map(add, at, repeat(STRING_SIZE))))
    ok = inside.copy()
    ok[inside] = np.array(ends, np.int64) >= 0
    return ok


def _instances(ctx: MmvContext) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64],
                                         npt.NDArray[np.int64]]:
    """ctx.instance_at as sorted columns: offset, serial, internal id."""
    at = ctx.instance_at
    offsets = np.fromiter(at.keys(), np.int64, len(at))
    owners = np.array(list(at.values()), np.int64).reshape(len(at), 2)
    order = np.argsort(offsets)
    return offsets[order], owners[order, 0], owners[order, 1]
