"""The metadata of an archive set, merged as libpcp merges its members' ``.meta`` files.

libpcp loads every member's metadata into one context when the set is opened, member by
member in namelist order (SET-META-1): descriptors must agree (the first disagreement, in
the order type, semantics, instance domain, units, refuses the whole set with
PM_ERR_LOGCHANGE*), names accumulate (a name already bound to another pmID keeps its
first binding; PCP 6.0 finds no name under a node only later members make: SET-META-4),
instance domains and label sets are merged by time (identical records counted once; of two
records with one time, the one loaded last is in force), and help text is replaced by each
member that has its own (SET-META-3).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from pcpconform.errors import Location
from pcpconform.format.pmtypes import PmID, PmType, Timestamp
from pcpconform.format.schema import TYPE_DESC
from pcpconform.io.archive import Archive, Desc, InDomRecord, LabelRecord, _Metadata
from pcpconform.io.setform import SetError

__all__ = ["DESC_FIELDS", "check_descs", "desc_conflict", "extract_error", "findable_names",
           "instances_as_loaded", "merge_metadata"]

#: what libpcp compares, in its order, and the error it gives for each (__pmLogAddDesc)
DESC_FIELDS = (("type", "PM_ERR_LOGCHANGETYPE"), ("sem", "PM_ERR_LOGCHANGESEM"),
               ("indom", "PM_ERR_LOGCHANGEINDOM"), ("units", "PM_ERR_LOGCHANGEUNITS"))


#: the types pmExtractValue reads from an INSITU value's word
_INSITU_TYPES = frozenset({PmType.I32, PmType.U32, PmType.FLOAT})


def extract_error(valfmt: int, recorded: int, described: int) -> str | None:
    """The PMAPI error pmExtractValue gives for a value a member recorded as type
    ``recorded`` (its block's vtype; the word of an INSITU value) when the set's descriptor
    says ``described`` (SET-META-6), or None when it reads the value."""
    if recorded == described:
        return None
    if valfmt == 0:                         # PM_VAL_INSITU: the word is read as the 32-bit type
        return None if described in _INSITU_TYPES else "PM_ERR_CONV"
    return "PM_ERR_CONV"                    # a block whose vtype is not the descriptor's


def desc_conflict(old: Desc, new: Desc) -> tuple[str, str] | None:
    """(field, libpcp error) of the first way ``new`` disagrees with ``old``, or None."""
    for name, error in DESC_FIELDS:
        if getattr(old, name) != getattr(new, name):
            return name, error
    return None


def desc_location(archive: Archive, pmid: int) -> Location:
    """Where ``archive``'s descriptor of ``pmid`` is (its .meta record)."""
    for m in archive.meta_records():
        if m.type == TYPE_DESC and int(m.body.pmid) == pmid:
            return m.record.location("desc.pmid")
    assert archive.files.meta is not None
    return Location(archive.files.meta.name)


def check_descs(seen: dict[int, tuple[Desc, Archive]], member: Archive) -> None:
    """Add ``member``'s descriptors to ``seen`` (pmID -> first descriptor, its member);
    FormatError (code ``set.desc``) at the first that disagrees with one seen before."""
    for pmid, desc in member.metadata.descs.items():
        got = seen.get(pmid)
        if got is None:
            seen[pmid] = (desc, member)
            continue
        old, owner = got
        clash = desc_conflict(old, desc)
        if clash is not None:
            field, error = clash
            name = (old.names or desc.names or (str(PmID(pmid)),))[0]
            raise SetError(
                f"{field} of {name} differs from {owner.files.base.name}'s ({getattr(old, field)} "
                f"here {getattr(desc, field)}): libpcp refuses the set ({error})",
                desc_location(member, pmid), "set.desc", error)


def merge_metadata(loaded: Sequence[Archive], by_time: Sequence[Archive], profile: str) -> _Metadata:
    """The set's metadata: ``loaded`` are the members whose metadata libpcp keeps, in
    namelist order, ``by_time`` every member in time order (their descriptors agree:
    ``check_descs``)."""
    md = _Metadata()
    indoms: dict[int, list[tuple[int, int, InDomRecord]]] = {}
    # PCP 6.0 reopens the first member in time once all are loaded: its records of a time
    # are in force over the others' of that time (SET-META-5)
    reopened = by_time[0] if profile == "pcp-6.0" and by_time else None
    labels: list[tuple[int, int, LabelRecord]] = []
    for n, member in enumerate(loaded):
        mine = member.metadata
        for pmid, desc in mine.descs.items():
            old = md.descs.get(pmid)
            if old is None:
                md.descs[pmid] = desc
            else:
                merged = tuple(dict.fromkeys(old.names + desc.names))
                if merged != old.names:
                    md.descs[pmid] = Desc(old.pmid, old.type, old.indom, old.sem, old.units, merged)
            for name in desc.names:
                md.names.setdefault(name, pmid)      # the first binding wins
        rank = len(loaded) if member is reopened else n
        for key, history in mine.indoms.items():
            for rec in history:
                indoms.setdefault(key, []).append((rec.timestamp.total_nsec(), rank, rec))
        labels.extend((rec.timestamp.total_nsec(), n, rec) for rec in mine.labels)
        if profile != "pcp-6.0":
            md.text.update(mine.text)                # each member's text replaces
    if profile == "pcp-6.0":
        # every member in turn, then the first in time again (it is reopened: SET-META-3)
        for member in [*loaded, *by_time[:1]]:
            md.text.update(member.metadata.text)
    for pmid, desc in md.descs.items():
        # a name bound to another pmID by an earlier member is not this one's
        bound = tuple(n for n in desc.names if md.names.get(n) == pmid)
        if bound != desc.names:
            md.descs[pmid] = Desc(desc.pmid, desc.type, desc.indom, desc.sem, desc.units, bound)
    if profile == "pcp-6.0" and loaded:
        md.names = findable_names(md.names, loaded[0])
    for key, entries in indoms.items():
        md.indoms[key] = _dedup(sorted(entries, key=lambda e: (e[0], e[1])))
    md.labels = _dedup_labels([rec for _, _, rec in sorted(labels, key=lambda e: (e[0], e[1]))])
    return md


def findable_names(names: dict[str, int], first: Archive) -> dict[str, int]:
    """The names of ``names`` a PCP 6.0 context finds (pmLookupName, pmTraversePMNS): those
    whose every inner node (``a`` and ``a.b`` of ``a.b.c``) the first member in namelist
    order made. PCP 6.0's PMNS leaves each node a later member adds inside the tree marked
    as hidden (SET-META-4); the metric stays known by pmID, names included (pmNameAll)."""
    made = {node for name in first.metadata.names for node in (*_inner_nodes(name), name)}
    return {name: pmid for name, pmid in names.items() if all(n in made for n in _inner_nodes(name))}


def instances_as_loaded(members: Sequence[Archive], indom: int, at: Timestamp,
                        loads: Sequence[int]) -> dict[int, str] | None:
    """The instances PCP 6.0's pmGetInDom gives at ``at`` (None: no record of ``indom`` yet)
    when the context has loaded ``members`` (in time order) in the order ``loads`` (indices
    into ``members``, a member reloaded each time the context switches to it). Each load
    puts the member's records at the head of their time slots, so of the members' records
    at the latest time at or before ``at`` the one of the member loaded last is in force
    (SET-META-5); of one member's records at one time, its last."""
    slot: Timestamp | None = None
    for m in members:
        for rec in m.metadata.indoms.get(indom, []):
            if rec.timestamp <= at and (slot is None or rec.timestamp > slot):
                slot = rec.timestamp
    if slot is None:
        return None
    latest = {k: n for n, k in enumerate(loads)}
    best: tuple[int, InDomRecord] | None = None
    for k, m in enumerate(members):
        mine = [rec for rec in m.metadata.indoms.get(indom, []) if rec.timestamp == slot]
        if mine and (best is None or latest.get(k, -1) >= best[0]):
            best = (latest.get(k, -1), mine[-1])
    assert best is not None
    return dict(best[1].instances)


def _inner_nodes(name: str) -> list[str]:
    return [name[:i] for i, ch in enumerate(name) if ch == "."]


def _dedup(entries: list[tuple[int, int, InDomRecord]]) -> list[InDomRecord]:
    """Instance domain records in (time, load) order, a record identical to another of the
    same time counted once, where it was loaded last (that one is in force at the time)."""
    out: list[InDomRecord] = []
    for _, group in itertools.groupby(entries, key=lambda e: e[0]):
        kept: list[InDomRecord] = []
        seen: set[tuple[tuple[int, str], ...]] = set()
        for _, _, rec in reversed(list(group)):
            key = tuple(sorted(rec.instances.items()))
            if key not in seen:
                seen.add(key)
                kept.append(rec)
        out.extend(reversed(kept))
    return out


def _dedup_labels(records: list[LabelRecord]) -> list[LabelRecord]:
    out: list[LabelRecord] = []
    seen: set[tuple[int, int, int, str]] = set()
    for rec in records:
        key = (rec.timestamp.total_nsec(), rec.type, rec.ident, repr(rec.sets))
        if key not in seen:
            seen.add(key)
            out.append(rec)
    return out
