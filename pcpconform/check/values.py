"""Values of a decoded result against their descriptor and instance domain (FMT-VALUE).

Each rule is an object with its forms side by side: ``check``, run per value set on the
reference path (``ValueChecks.check`` calls ``VALUE_RULES`` in order; ``check_block``
calls ``BLOCK_RULES`` for each value block the field walk finds); ``columns``, its column
form, which the column engine (columns.py) calls once per learned shape (shape.py); and
for a value rule ``record``, its form over one record's columns of any shape (records.py).
A rule added to either list runs on every path (a value rule without a record form sends
every record to the reference path, counted).

Instance checks are skipped when a metric shows the same instances against the same
instance-domain state as last time, and descriptors and indom states are cached: these
checks run once per value set of every result, so they decide the validator's speed.
"""

from __future__ import annotations

import bisect
import enum
import itertools
import operator
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from pcpconform.check.describe import type_text
from pcpconform.check.events import check_events
from pcpconform.check.shape import LearnedShape, ShapeCheck
from pcpconform.check.state import Context
from pcpconform.fastpath import Declined
from pcpconform.format.pmtypes import PM_IN_NULL, PmID, PmInDom, PmType, Timestamp
from pcpconform.format.values import BLOCK_PAYLOAD_SIZE
from pcpconform.io.decoded import DecodedValueSet
from pcpconform.io.reader import RawRecord

if TYPE_CHECKING:
    from pcpconform.check.records import RecordCols

__all__ = ["ValueChecks", "check_block", "is_counter", "ValueRule", "BlockRule", "VALUE_RULES",
           "BLOCK_RULES", "ValueReason"]

# PMAPI error codes (PM_ERR_* from -12345 down, and -errno) that numval < 0 may carry
_PLAUSIBLE_ERR = range(-12345 - 8999, 0)
_SEM_COUNTER = 1
_NUMERIC = range(PmType.I32, PmType.DOUBLE + 1)   # 32, U32, 64, U64, FLOAT, DOUBLE
_lt = operator.lt


def is_counter(info: tuple[int, int, int | None]) -> bool:
    """Whether a metric's (type, sem, indom) calls for the counter check."""
    return info[1] == _SEM_COUNTER and info[0] in _NUMERIC


class ValueReason(enum.Enum):
    """Why a record of a learned shape goes to the reference path (a rule's column form)."""

    INDOM = "another instance-domain state is in force"
    COUNTER = "a counter decreased, or its instances changed"
    COUNTER_TWICE = "a counter twice in one record"
    COUNTER_COLUMN = "a counter stored in a way the shape holds no column of"
    STRING = "a string value without its NUL"
    EVENTS = "an event array"
    NO_RECORD_FORM = "a value rule without a record form"
    NUMVAL = "numval not a PMAPI error code, or an error code of an undescribed metric"
    UNDESCRIBED = "values of a metric without a descriptor, or of a NOSUPPORT one"
    VALFMT_CHANGE = "a metric's valfmt changed"
    INSTANCES = "an instance twice, or not in the instance domain in force"


class VsetAt:
    """Where a value set is, for findings: its file, record, offset and field path (made
    only when a rule reports something)."""

    __slots__ = ("k", "pmid", "rec")

    def __init__(self, rec: RawRecord, k: int, pmid: int) -> None:
        self.rec = rec
        self.k = k
        self.pmid = pmid

    @property
    def file(self) -> str:
        return self.rec.file

    @property
    def where(self) -> dict[str, Any]:
        return {"record": self.rec.index, "offset": self.rec.offset, "pmid": self.pmid}

    @property
    def fld(self) -> str:
        return f"result.vset[{self.k}]"


class ValueRule:
    """A rule over one value set: ``check`` (reference) and ``columns`` (column form)."""

    codes: tuple[str, ...] = ()

    def check(self, vc: ValueChecks, at: VsetAt, vs: DecodedValueSet, stamp: Timestamp) -> bool:
        """Report what this value set breaks; False when later rules must skip it."""
        return True

    def columns(self, vc: ValueChecks, shape: LearnedShape) -> ShapeCheck | None:
        """What to check on each later record of ``shape`` (None: its fixed bytes decide)."""
        return None

    def record(self, vc: ValueChecks, rc: RecordCols) -> Callable[[], None] | None:
        """On one record's columns: ``Declined`` where ``check`` might report something on
        any of its value sets, else the state ``check`` would leave, to commit (or None)."""
        raise Declined(ValueReason.NO_RECORD_FORM)


class NumvalRule(ValueRule):
    codes = ("value.numval-code",)

    def check(self, vc: ValueChecks, at: VsetAt, vs: DecodedValueSet, stamp: Timestamp) -> bool:
        if vs.numval > 0:
            return True
        if vs.numval < 0 and vs.numval not in _PLAUSIBLE_ERR:
            vc.ctx.add("value.numval-code", at.file, f"{vc.ctx.metric(vs.pmid)}: numval {vs.numval} is not a "
                       "PMAPI error code", pmid=vs.pmid, record=at.where["record"], offset=at.where["offset"],
                       field=f"{at.fld}.numval")
        # an error code of an undescribed metric is still reported as undescribed
        return vs.numval < 0 and vc.desc_info(vs.pmid) is None

    def record(self, vc: ValueChecks, rc: RecordCols) -> Callable[[], None] | None:
        rules = rc.plan.rules           # numvals and descriptors are the layout's
        if "numval" not in rules:
            rules["numval"] = all(rc.numvals[k] in _PLAUSIBLE_ERR and rc.infos[k] is not None
                                  for k in (rc.a.numval < 0).nonzero()[0].tolist())
        if not rules["numval"]:
            raise Declined(ValueReason.NUMVAL)
        return None


class DescriptorRule(ValueRule):
    codes = ("value.undescribed", "value.nosupport")

    def check(self, vc: ValueChecks, at: VsetAt, vs: DecodedValueSet, stamp: Timestamp) -> bool:
        info = vc.desc_info(vs.pmid)
        if info is None:
            vc.ctx.add("value.undescribed", at.file, f"pmID {PmID(vs.pmid)} has no descriptor (libpcp cannot "
                       "name or type its values)", field=at.fld + ".pmid", **at.where)
            return False
        if info[0] == PmType.NOSUPPORT:
            vc.ctx.add("value.nosupport", at.file, f"values for NOSUPPORT metric {vc.ctx.metric(vs.pmid)}",
                       field=at.fld, **at.where)
        return True

    def record(self, vc: ValueChecks, rc: RecordCols) -> Callable[[], None] | None:
        rules = rc.plan.rules           # the layout's value sets and their descriptors
        if "descriptor" not in rules:
            infos = rc.infos
            rules["descriptor"] = all(infos[k] is not None and infos[k][0] != PmType.NOSUPPORT  # type: ignore[index]
                                      for k in rc.positive)
        if not rules["descriptor"]:
            raise Declined(ValueReason.UNDESCRIBED)
        return None


class ValfmtChangeRule(ValueRule):
    """The first valfmt a metric is seen with is kept (state that never changes after)."""

    codes = ("value.valfmt-change",)

    def check(self, vc: ValueChecks, at: VsetAt, vs: DecodedValueSet, stamp: Timestamp) -> bool:
        assert vs.valfmt is not None   # numval > 0 here
        prev = vc.ctx.st.valfmts.setdefault(vs.pmid, vs.valfmt)
        if prev != vs.valfmt:
            vc.ctx.add("value.valfmt-change", at.file, f"{vc.ctx.metric(vs.pmid)}: valfmt {vs.valfmt}, "
                       f"earlier {prev}", field=at.fld + ".valfmt", **at.where)
        return True

    def record(self, vc: ValueChecks, rc: RecordCols) -> Callable[[], None] | None:
        rules = rc.plan.rules
        if rules.get("valfmt"):         # a result of this layout kept every valfmt before:
            return None                 # each pmID's first valfmt is set, and never changes
        valfmts = vc.ctx.st.valfmts
        first: dict[int, int] = {}
        for k in rc.positive:          # each pmID once (records.py declines a pmID twice)
            pmid, valfmt = rc.pmids[k], rc.valfmts[k]
            prev = valfmts.get(pmid)
            if prev is None:
                first[pmid] = valfmt
            elif prev != valfmt:
                raise Declined(ValueReason.VALFMT_CHANGE)
        rules["valfmt"] = not first
        return (lambda: valfmts.update(first)) if first else None


class InstanceRule(ValueRule):
    """Instances against the metric's instance domain in force at the record's time; on a
    shape, only whether the same indom states are still in force."""

    codes = ("value.duplicate-inst", "value.singular-inst", "value.no-indom", "value.unknown-inst")

    def check(self, vc: ValueChecks, at: VsetAt, vs: DecodedValueSet, stamp: Timestamp) -> bool:
        _, _, indom = vc.desc_info(vs.pmid) or (0, 0, None)
        insts = vs.columns[0]
        members = None if indom is None else vc.members(indom, stamp.total_nsec())
        good = vc.insts_ok.get(vs.pmid)
        if good is None or good[1] is not members or good[0] != insts:
            self._instances(vc, at, vs.pmid, indom, insts, members)
        # else: the same instances were checked against the same indom state before
        return True

    @staticmethod
    def _instances(vc: ValueChecks, at: VsetAt, pmid: int, indom: int | None,
                   insts: tuple[int, ...], members: frozenset[int] | None) -> None:
        ctx, f, fld, where = vc.ctx, at.file, at.fld, at.where
        inst_set = set(insts)
        ok = True
        if len(inst_set) != len(insts):
            ok = False
            ctx.add("value.duplicate-inst", f, f"{ctx.metric(pmid)}: an instance appears twice", field=fld, **where)
        if indom is None:
            if inst_set != {PM_IN_NULL}:
                ok = False
                ctx.add("value.singular-inst", f, f"{ctx.metric(pmid)} has no indom but instance {insts[0]}",
                        field=fld + ".vlist", **where)
        elif members is None:
            ok = False
            ctx.add("value.no-indom", f, f"no record of indom {PmInDom(indom)} is in force yet",
                    field=fld, **where)
        elif not inst_set <= members:
            ok = False
            ctx.add("value.unknown-inst", f, f"{ctx.metric(pmid)}: instance {min(inst_set - members)} is not "
                    f"in indom {PmInDom(indom)} at that time", field=fld + ".vlist", **where)
        if ok:
            vc.insts_ok[pmid] = (insts, members)

    def columns(self, vc: ValueChecks, shape: LearnedShape) -> ShapeCheck | None:
        since, until = -(1 << 127), 1 << 127
        for vs in shape.vsets:
            if vs.indom is not None:
                span = vc.members_span(vs.indom, shape.ns)
                assert span is not None     # the shape's record was clean
                since, until = max(since, span[0]), min(until, span[1])

        def in_force(data: bytes, ns: int) -> None:
            if not since <= ns < until:
                raise Declined(ValueReason.INDOM)
        return in_force

    def record(self, vc: ValueChecks, rc: RecordCols) -> Callable[[], None] | None:
        import numpy as np

        inst = rc.a.inst
        rules = rc.plan.rules
        seen = rc.seen
        clean = rules.get("instance-clean")     # the layout's last clean instances, and the sets then in force
        if clean is not None and clean[1] == seen and all(
                map(operator.is_, clean[0], [vc.members(i, rc.ns) for i in rules["instance"][2]])):
            return None
        vset = rc.vset_of_value
        rising = (inst[1:] > inst[:-1]) | (vset[1:] != vset[:-1])
        if not rising.all():           # unsorted somewhere: look for a repeat in a sorted copy
            order = np.lexsort((inst, vset))
            si, sv = inst[order], vset[order]
            if ((si[1:] == si[:-1]) & (sv[1:] == sv[:-1])).any():
                raise Declined(ValueReason.INSTANCES)
        layout = rules.get("instance")
        if layout is None:              # once per layout: each value's indom
            indoms = np.full(len(rc.pmids), -1, dtype=np.int64)     # -1: no indom
            named = set()
            for k in rc.positive:
                indom = rc.infos[k][2]      # type: ignore[index]   # described: DescriptorRule
                if indom is not None:
                    indoms[k] = indom
                    named.add(indom)
            value_indom = indoms[vset]
            singular = value_indom < 0
            layout = rules["instance"] = (
                value_indom, singular, sorted(named),
                value_indom[~singular].astype(np.uint64) << np.uint64(32))
        value_indom, singular, distinct, high = layout
        if (inst[singular] != PM_IN_NULL).any():
            raise Declined(ValueReason.INSTANCES)
        in_force: list[Any] = []
        if distinct:
            for indom in distinct:
                members = vc.members(indom, rc.ns)
                if members is None:
                    raise Declined(ValueReason.INSTANCES)
                in_force.append(members)
            made = rules.get("allowed")     # the layout's last: while the same sets are in force
            if made is not None and all(map(operator.is_, made[0], in_force)):
                allowed = made[1]
            else:                       # each part sorted, indom in the high word
                allowed = np.concatenate([vc.member_keys(i, m) for i, m in zip(distinct, in_force)])
                rules["allowed"] = (in_force, allowed)
            keys = high | inst[~singular].astype(np.uint32).astype(np.uint64)
            at = np.minimum(allowed.searchsorted(keys), max(len(allowed) - 1, 0))
            if not len(allowed) or (allowed[at] != keys).any():
                raise Declined(ValueReason.INSTANCES)
        rules["instance-clean"] = (in_force, seen)
        return None      # insts_ok is a cache of the reference path's: left as it is


class CounterRule(ValueRule):
    """A counter's values against its previous values (same instances: compared in C)."""

    codes = ("value.counter-decrease",)

    def check(self, vc: ValueChecks, at: VsetAt, vs: DecodedValueSet, stamp: Timestamp) -> bool:
        info = vc.desc_info(vs.pmid)
        if info is None or not is_counter(info):
            return True
        insts, values = vs.columns
        counters = vc.ctx.st.counters
        pmid = vs.pmid
        last = counters.get(pmid)
        counters[pmid] = (insts, values)
        if last is None:
            return True
        if last[0] == insts:   # the usual case: same instances, compare in C
            try:
                if not any(map(_lt, values, last[1])):
                    return True
            except TypeError:   # a value stored as another type (value.vtype): pairwise below
                pass
            pairs: Iterable[tuple[int, Any, Any]] = zip(insts, last[1], values)
        else:
            old = dict(zip(*last))
            pairs = ((i, old[i], v) for i, v in zip(insts, values) if i in old)
        for inst, was, now in pairs:
            try:
                lower = now < was
            except TypeError:   # not comparable: the block's type is not the descriptor's
                continue
            if lower:
                vc.ctx.add("value.counter-decrease", at.file, f"{vc.ctx.metric(pmid)}[{inst}] counter went "
                           f"from {was} to {now}", field=at.fld, **at.where)
        return True

    def columns(self, vc: ValueChecks, shape: LearnedShape) -> ShapeCheck | None:
        columns: list[tuple[int, tuple[int, ...], Callable[[bytes], tuple[Any, ...]]]] = []
        counted: set[int] = set()
        for vs in shape.vsets:
            if not is_counter((vs.ptype, vs.sem, vs.indom)):
                continue
            if vs.pmid in counted:
                raise Declined(ValueReason.COUNTER_TWICE)   # compared with itself in the record
            counted.add(vs.pmid)
            if vs.valfmt != 0 and any(b <= a for a, b in itertools.pairwise(off for off, _, _ in vs.blocks)):
                raise Declined(ValueReason.COUNTER_COLUMN)
            columns.append((vs.pmid, vs.insts, vs.reader()))
        if not columns:
            return None
        counters = vc.ctx.st.counters

        def no_decrease(data: bytes, ns: int) -> Callable[[], None]:
            updates = []
            for pmid, insts, read in columns:
                now = read(data)
                last = counters.get(pmid)
                if last is not None:
                    if last[0] != insts:
                        raise Declined(ValueReason.COUNTER)
                    try:
                        if any(map(_lt, now, last[1])):
                            raise Declined(ValueReason.COUNTER)
                    except TypeError:   # the last values were of another type (value.vtype)
                        raise Declined(ValueReason.COUNTER) from None
                updates.append((pmid, (insts, now)))
            return lambda: counters.update(updates)
        return no_decrease

    def record(self, vc: ValueChecks, rc: RecordCols) -> Callable[[], None] | None:
        rules = rc.plan.rules
        if "counter" not in rules:      # once per layout: its counter value sets by type
            infos = rc.infos
            ks = [k for k in rc.positive if infos[k][1] == _SEM_COUNTER and infos[k][0] in _NUMERIC]  # type: ignore[index]
            try:
                rules["counter"] = rc.counter_layout(ks) if ks else None
            except Declined as declined:
                rules["counter"] = declined
        layout = rules["counter"]
        if layout is None:
            return None
        if isinstance(layout, Declined):
            raise layout
        history = vc.ctx.st.counters
        owners = list(map(history.owner.get, layout.pmids))
        first = owners[0]
        if first is not None and owners.count(first) == len(owners):   # one batch holds them all
            owner = first
            batch = rc.counter_batch(layout, owner if owner.layout is layout else None)
            if batch.lower_than(owner, None):
                raise Declined(ValueReason.COUNTER)
            if owner.layout is layout:
                return lambda: history.renew(owner, batch)
            return lambda: history.commit(batch)
        batch = rc.counter_batch(layout)
        try:
            if history.lower(batch, owners):
                raise Declined(ValueReason.COUNTER)
        except TypeError:   # a last value of another type (value.vtype)
            raise Declined(ValueReason.COUNTER) from None
        return lambda: history.commit(batch)


#: the value-set rules, in the order the reference path applies them (the instance rule's
#: record form declines an instance twice before the counter rule's compares by keys)
VALUE_RULES: list[ValueRule] = [NumvalRule(), DescriptorRule(), ValfmtChangeRule(), InstanceRule(), CounterRule()]


class ValueChecks:
    """The value checks of one archive, with what they cache between results."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self._dinfo: dict[int, tuple[int, int, int | None]] = {}
        self._members_cache: dict[int, tuple[int, int, frozenset[int]]] = {}
        self._member_keys: dict[int, tuple[frozenset[int], Any]] = {}
        #: pmid -> the instances last found good, and the indom state they were checked against
        self.insts_ok: dict[int, tuple[tuple[int, ...], frozenset[int] | None]] = {}

    def desc_info(self, pmid: int) -> tuple[int, int, int | None] | None:
        """(type, sem, indom or None) of a pmID, cached: Container attribute access is slow."""
        info = self._dinfo.get(pmid)
        if info is None:
            desc = self.ctx.st.descs.get(pmid)
            if desc is None:
                return None
            info = self._dinfo[pmid] = (desc.type, desc.sem, None if desc.indom.is_null else int(desc.indom))
        return info

    def members(self, indom: int, ns: int) -> frozenset[int] | None:
        """Instances of an indom in force at time ns (None: no record yet)."""
        hit = self._members_cache.get(indom)
        if hit is not None and hit[0] <= ns < hit[1]:
            return hit[2]
        history = self.ctx.st.indoms.get(indom)
        if not history:
            return None
        stamps = self.ctx.st.indom_stamps[indom]
        pos = bisect.bisect_right(stamps, ns)
        if not pos:
            return None
        until = stamps[pos] if pos < len(stamps) else 1 << 127
        self._members_cache[indom] = (stamps[pos - 1], until, history[pos - 1][1])
        return history[pos - 1][1]

    def member_keys(self, indom: int, members: frozenset[int]) -> Any:
        """``members`` as a sorted numpy uint64 array of indom << 32 | instance (kept while
        the same set is in force): what records.py looks instances up in."""
        hit = self._member_keys.get(indom)
        if hit is None or hit[0] is not members:
            import numpy as np

            insts = np.fromiter(members, dtype=np.int64, count=len(members)) & 0xFFFFFFFF
            insts.sort()
            keys = np.uint64(indom) << np.uint64(32) | insts.astype(np.uint64)
            hit = self._member_keys[indom] = (members, keys)
        return hit[1]

    def desc_infos(self, pmids: list[int]) -> list[tuple[int, int, int | None] | None]:
        """``desc_info`` of each of ``pmids``."""
        infos = list(map(self._dinfo.get, pmids))
        if None in infos:
            infos = list(map(self.desc_info, pmids))
        return infos

    def members_span(self, indom: int, ns: int) -> tuple[int, int] | None:
        """The times [from, until) over which ``members(indom, ns)`` gives the same set."""
        if self.members(indom, ns) is None:
            return None
        since, until, _ = self._members_cache[indom]
        return since, until

    def check(self, rec: RawRecord, k: int, vs: DecodedValueSet, stamp: Timestamp) -> None:
        """Check value set ``k`` of a result decoded from ``rec``: every rule of
        ``VALUE_RULES`` in order, until one says the rest do not apply."""
        at = VsetAt(rec, k, vs.pmid)
        for rule in VALUE_RULES:
            if not rule.check(self, at, vs, stamp):
                return

    def record(self, rc: RecordCols) -> list[Callable[[], None]]:
        """The record form of every value rule on one record's columns: what to commit
        once the record is done; ``Declined`` when a rule might report something."""
        commits = [rule.record(self, rc) for rule in VALUE_RULES]
        return [commit for commit in commits if commit is not None]

    def columns(self, shape: LearnedShape) -> list[ShapeCheck]:
        """The column forms of every value and block rule for ``shape``; ``Declined`` when a
        rule cannot check it on columns."""
        checks = [rule.columns(self, shape) for rule in BLOCK_RULES]
        checks += [rule.columns(self, shape) for rule in VALUE_RULES]
        return [check for check in checks if check is not None]


class BlockRule:
    """A rule over one value block (its type and payload against the descriptor's type):
    ``check`` on the field walk's path, ``columns`` on a learned shape."""

    codes: tuple[str, ...] = ()

    def check(self, ctx: Context, f: str, where: dict[str, Any], fld: str, pmid: int, dtype: int, vtype: int,
              payload: bytes) -> bool:
        """Report what this block breaks; False when later rules must skip it."""
        return True

    def columns(self, vc: ValueChecks, shape: LearnedShape) -> ShapeCheck | None:
        return None


class BlockTypeRule(BlockRule):
    codes = ("value.vtype-legacy", "value.vtype")

    def check(self, ctx: Context, f: str, where: dict[str, Any], fld: str, pmid: int, dtype: int, vtype: int,
              payload: bytes) -> bool:
        if vtype == 0:
            ctx.add("value.vtype-legacy", f, f"{ctx.metric(pmid)}: value block type 0", field=fld, **where)
            return False
        if vtype != dtype:
            ctx.add("value.vtype", f, f"{ctx.metric(pmid)}: block type {type_text(vtype)}, "
                    f"descriptor type {type_text(dtype)}", field=fld, **where)
            return False
        return True


class BlockSizeRule(BlockRule):
    codes = ("value.vlen",)

    def check(self, ctx: Context, f: str, where: dict[str, Any], fld: str, pmid: int, dtype: int, vtype: int,
              payload: bytes) -> bool:
        size = BLOCK_PAYLOAD_SIZE.get(vtype)  # type: ignore[call-overload]
        if size is not None and len(payload) != size:
            ctx.add("value.vlen", f, f"{ctx.metric(pmid)}: {len(payload)}-byte payload for a "
                    f"{PmType(vtype).token}", field=fld, **where)
        return True


class StringNulRule(BlockRule):
    """A string's last payload byte: on a shape, the one byte of each string that varies."""

    codes = ("value.string-nul",)

    def check(self, ctx: Context, f: str, where: dict[str, Any], fld: str, pmid: int, dtype: int, vtype: int,
              payload: bytes) -> bool:
        if vtype == PmType.STRING and not payload.endswith(b"\0"):
            ctx.add("value.string-nul", f, f"{ctx.metric(pmid)}: string without NUL", field=fld, **where)
        return True

    def columns(self, vc: ValueChecks, shape: LearnedShape) -> ShapeCheck | None:
        nuls = tuple(off + vlen - 1 for vs in shape.vsets for off, vlen, vtype in vs.blocks
                     if vtype == PmType.STRING)
        if not nuls:
            return None

        def terminated(data: bytes, ns: int) -> None:
            for at in nuls:
                if data[at]:
                    raise Declined(ValueReason.STRING)
        return terminated


class EventRule(BlockRule):
    codes = ("event.structure", "event.missed", "event.param-len")

    def check(self, ctx: Context, f: str, where: dict[str, Any], fld: str, pmid: int, dtype: int, vtype: int,
              payload: bytes) -> bool:
        if vtype in (PmType.EVENT, PmType.HIGHRES_EVENT):
            check_events(ctx, f, where, fld, vtype == PmType.HIGHRES_EVENT, payload)
        return True

    def columns(self, vc: ValueChecks, shape: LearnedShape) -> ShapeCheck | None:
        if any(vtype in (PmType.EVENT, PmType.HIGHRES_EVENT) for vs in shape.vsets for _, _, vtype in vs.blocks):
            raise Declined(ValueReason.EVENTS)      # their payloads vary in length and content
        return None


#: the value-block rules, in the order the field walk applies them
BLOCK_RULES: list[BlockRule] = [BlockTypeRule(), BlockSizeRule(), StringNulRule(), EventRule()]


def check_block(ctx: Context, f: str, where: dict[str, Any], fld: str, pmid: int, dtype: int, vtype: int,
                payload: bytes) -> None:
    """A value block's type and payload against the descriptor's type: every rule of
    ``BLOCK_RULES`` in order, until one says the rest do not apply."""
    where = {**where, "pmid": pmid}
    for rule in BLOCK_RULES:
        if not rule.check(ctx, f, where, fld, pmid, dtype, vtype, payload):
            return
