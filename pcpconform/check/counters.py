"""Each counter metric's last instances and values, as the counter rule leaves them (FMT-VALUE).

The reference path keeps, per pmID, the tuples of its last value set. A per-process archive
has hundreds of counter value sets in every result, each with hundreds of instances that
come and go: made into tuples and compared one value set at a time, they were a third of
``check``'s time. The records path (records.py) instead keeps a whole result's counters
as one ``CounterBatch`` of columns (laid out once per result layout, ``CounterLayout``),
compares the next result's columns with the batches holding their pmIDs' last values in a
few array operations, and makes a pmID's tuples only when the reference path asks for them.
Results of different metric groups alternate (pmlogger logs each group at its own
interval), so several batches live side by side: each pmID is owned by the newest batch
that has it.

What any path reads is the same: ``get`` answers from the pmID's owning batch, else from
the tuples; a write by the reference or column path replaces that pmID's entry with tuples
and ends its batch's ownership of it, so no two places hold a last value for one pmID.
"""

from __future__ import annotations

import operator
from typing import Any

__all__ = ["CounterLayout", "CounterBatch", "CounterHistory"]

Entry = tuple[tuple[int, ...], tuple[Any, ...]]


class CounterLayout:
    """Where a layout's counter value sets are (made once per layout, records.py): per
    type group its value sets' pmIDs, their numbers of values and each value's pmID in the
    high word of a key; per pmID its group and the span of its values there."""

    __slots__ = ("groups", "pmids", "where")

    def __init__(self) -> None:
        #: per group: (ptype, pmIDs, numbers of values, per value pmID << 32, extra)
        self.groups: list[tuple[int, list[int], Any, Any, Any]] = []
        self.pmids: list[int] = []
        #: per pmID: (its group, the first and last + 1 of its values there)
        self.where: dict[int, tuple[int, int, int]] = {}

    def add(self, ptype: int, pmids: list[int], counts: list[int], extra: Any = None) -> None:
        """A group of value sets of one type, in the record's order; ``extra``: what the
        caller needs to read the group's values."""
        import numpy as np

        g = len(self.groups)
        at = 0
        for pmid, n in zip(pmids, counts):
            self.where[pmid] = (g, at, at + n)
            at += n
        high = np.repeat(np.asarray(pmids, dtype=np.uint64), counts) << np.uint64(32)
        self.groups.append((ptype, pmids, np.asarray(counts, dtype=np.int64), high, extra))
        self.pmids += pmids


class CounterBatch:
    """One result's counter value sets as columns of its layout's groups (values of one
    dtype per group): per group its instances and values in the record's order, its keys
    (pmID << 32 | instance), and the keys sorted with the values in that order."""

    __slots__ = ("columns", "layout", "seen")

    def __init__(self, layout: CounterLayout, seen: bytes) -> None:
        self.layout = layout
        #: the whole record's instance column as bytes: a batch of the same layout and the
        #: same ``seen`` has the same instances in every group
        self.seen = seen
        #: per group: (insts, values, keys, sorted keys, values in key order or None until
        #: asked for, that order)
        self.columns: list[tuple[Any, Any, Any, Any, Any, Any]] = []

    def add(self, insts: Any, values: Any, like: CounterBatch | None = None) -> None:
        """The next group's instances (None: ``like``'s, the same) and values. ``like``: a
        batch of the same layout (the one holding these pmIDs' last values); where this
        group's instances are its group's, its keys and their order are taken from it,
        not sorted again."""
        import numpy as np

        g = len(self.columns)
        if like is not None:
            was = like.columns[g]
            if insts is None or np.array_equal(insts, was[0]):
                self.columns.append((was[0], values, was[2], was[3], None, was[5]))
                return
        high = self.layout.groups[g][3]
        keys = high | insts.astype(np.uint32).astype(np.uint64)
        order = np.argsort(keys, kind="stable")
        self.columns.append((insts, values, keys, keys[order], values[order], order))

    def sorted_values(self, g: int) -> Any:
        """Group ``g``'s values in the order of its sorted keys."""
        insts, values, keys, sorted_keys, in_order, order = self.columns[g]
        if in_order is None:
            in_order = values[order]
            self.columns[g] = (insts, values, keys, sorted_keys, in_order, order)
        return in_order

    def entry(self, pmid: int) -> Entry:
        """The tuples the reference path would have kept for ``pmid``."""
        g, lo, hi = self.layout.where[pmid]
        insts, values = self.columns[g][:2]
        return tuple(insts[lo:hi].tolist()), tuple(values[lo:hi].tolist())

    def lower_than(self, prev: CounterBatch, held: list[bool] | None) -> bool:
        """Whether any value of the pmIDs ``held`` flags (in ``layout.pmids`` order; None:
        all) is below the value of the same pmID and instance in ``prev``, which holds their
        last values. A pmID's type is its descriptor's in every batch, so the groups of one
        type are compared."""
        import numpy as np

        if held is None and prev.layout is self.layout:
            # the same layout: a group whose keys are the held group's (add's ``like``) is
            # compared value by value in the record's order, keys being unique (no metric
            # twice, no instance twice: declined before the counter rule)
            same = [mine[2] is theirs[2] for mine, theirs in zip(self.columns, prev.columns)]
            if all(same):
                return any((mine[1] < theirs[1]).any() for mine, theirs in zip(self.columns, prev.columns))
        kinds = {group[0]: g for g, group in enumerate(prev.layout.groups)}
        start = 0
        for (ptype, group, counts, _, _), (_, values, keys, _, _, _) in zip(self.layout.groups, self.columns):
            flags = None if held is None else held[start:start + len(group)]
            start += len(group)
            g = kinds.get(ptype)
            if g is None or not len(prev.columns[g][3]):
                continue
            old_keys, old_values = prev.columns[g][3], prev.sorted_values(g)
            if flags is not None:
                if not any(flags):
                    continue
                if not all(flags):
                    ours = np.repeat(np.array(flags, dtype=bool), counts)
                    keys, values = keys[ours], values[ours]
            at = np.minimum(old_keys.searchsorted(keys), len(old_keys) - 1)
            matched = old_keys[at] == keys
            if (values[matched] < old_values[at[matched]]).any():
                return True
        return False


class CounterHistory:
    """Per counter pmID, its last (instances, values): held by the records-path batch that
    last had the pmID (``owner``), else as tuples."""

    __slots__ = ("_last", "owner")

    def __init__(self) -> None:
        self._last: dict[int, Entry] = {}
        #: per pmID, the batch holding its last values (batches of results of different
        #: metrics, as pmlogger's groups of different intervals write them, live side by side)
        self.owner: dict[int, CounterBatch] = {}

    def get(self, pmid: int) -> Entry | None:
        batch = self.owner.get(pmid)
        if batch is not None:
            return batch.entry(pmid)
        return self._last.get(pmid)

    def __setitem__(self, pmid: int, entry: Entry) -> None:
        self.owner.pop(pmid, None)
        self._last[pmid] = entry

    def update(self, entries: list[tuple[int, Entry]]) -> None:
        for pmid, _ in entries:
            self.owner.pop(pmid, None)
        self._last.update(entries)

    def lower(self, batch: CounterBatch, owners: list[CounterBatch | None]) -> bool:
        """Whether any value of ``batch`` is below the last value of its pmID and
        instance. ``owners``: each pmID's holding batch, in ``layout.pmids`` order; a pmID
        with none is compared with its tuples in Python (``TypeError`` where a value is
        of another type), the others by columns, each holding batch once."""
        for pmid, held in zip(batch.layout.pmids, owners):
            last = None if held is not None else self._last.get(pmid)
            if last is None:
                continue
            insts, now = batch.entry(pmid)
            if last[0] == insts:
                if any(map(operator.lt, now, last[1])):
                    return True
            else:
                old = dict(zip(*last))
                if any(v < old[i] for i, v in zip(insts, now) if i in old):
                    return True
        ids = list(map(id, owners))
        for mine in set(ids) - {id(None)}:
            held = owners[ids.index(mine)]
            assert held is not None
            if batch.lower_than(held, list(map(mine.__eq__, ids))):
                return True
        return False

    def commit(self, batch: CounterBatch) -> None:
        """``batch`` holds the last values of its pmIDs."""
        pmids = batch.layout.pmids
        self.owner.update(dict.fromkeys(pmids, batch))
        last = self._last
        if last:
            for pmid in last.keys() & pmids:
                del last[pmid]

    def renew(self, held: CounterBatch, batch: CounterBatch) -> None:
        """``batch`` holds the last values of its pmIDs, all of which ``held``, a batch of
        the same layout, holds now: ``held`` takes its columns and the instances they were
        read with (no pmID changes hands)."""
        assert held.layout is batch.layout
        held.columns = batch.columns
        held.seen = batch.seen

    def clear(self) -> None:
        """Forget every counter (a gap: counters restart)."""
        self._last.clear()
        self.owner.clear()
