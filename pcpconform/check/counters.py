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

    __slots__ = ("columns", "layout")

    def __init__(self, layout: CounterLayout) -> None:
        self.layout = layout
        #: per group: (insts, values, keys, sorted keys, values in key order)
        self.columns: list[tuple[Any, Any, Any, Any, Any]] = []

    def add(self, insts: Any, values: Any) -> None:
        """The next group's instances and values."""
        import numpy as np

        high = self.layout.groups[len(self.columns)][3]
        keys = high | insts.astype(np.uint32).astype(np.uint64)
        order = np.argsort(keys, kind="stable")
        self.columns.append((insts, values, keys, keys[order], values[order]))

    def entry(self, pmid: int) -> Entry:
        """The tuples the reference path would have kept for ``pmid``."""
        g, lo, hi = self.layout.where[pmid]
        insts, values, _, _, _ = self.columns[g]
        return tuple(insts[lo:hi].tolist()), tuple(values[lo:hi].tolist())

    def lower_than(self, prev: CounterBatch, held: list[bool] | None) -> bool:
        """Whether any value of the pmIDs ``held`` flags (in ``layout.pmids`` order; None:
        all) is below the value of the same pmID and instance in ``prev``, which holds their
        last values. A pmID's type is its descriptor's in every batch, so the groups of one
        type are compared."""
        import numpy as np

        kinds = {group[0]: columns for group, columns in zip(prev.layout.groups, prev.columns)}
        start = 0
        for (ptype, group, counts, _, _), (_, values, keys, _, _) in zip(self.layout.groups, self.columns):
            flags = None if held is None else held[start:start + len(group)]
            start += len(group)
            old = kinds.get(ptype)
            if old is None or not len(old[3]):
                continue
            old_keys, old_values = old[3], old[4]
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

    def tuples(self, pmid: int) -> Entry | None:
        """The last entry of a pmID no batch holds."""
        return self._last.get(pmid)

    def __setitem__(self, pmid: int, entry: Entry) -> None:
        self.owner.pop(pmid, None)
        self._last[pmid] = entry

    def update(self, entries: list[tuple[int, Entry]]) -> None:
        for pmid, _ in entries:
            self.owner.pop(pmid, None)
        self._last.update(entries)

    def commit(self, batch: CounterBatch) -> None:
        """``batch`` holds the last values of its pmIDs."""
        pmids = batch.layout.pmids
        self.owner.update(dict.fromkeys(pmids, batch))
        last = self._last
        if last:
            for pmid in last.keys() & pmids:
                del last[pmid]

    def clear(self) -> None:
        """Forget every counter (a gap: counters restart)."""
        self._last.clear()
        self.owner.clear()
