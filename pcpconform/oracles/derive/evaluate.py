"""Evaluation of bound derived metrics over an archive replay, as libpcp's eval_expr does.

An ``Evaluator`` owns an interpolation ``Replay`` of every operand metric and, per fetch,
walks each bound expression bottom up with C arithmetic (integer wrap-around, float32 for
FLOAT, division in double), the instance order libpcp's INTERP results use, and per-node
state for delta()/rate(), min()/max(), [inst] and matchinst(). The rules are
spec/derive.md DERIVE-EVAL-*.

Where libpcp is defective (spec/derive.md DERIVE-DEV-*), the evaluator gives the intended
value, records the deviation's name in ``DerivedSample.deviations``, and reproduces
libpcp's behaviour instead for the names given in ``emulate`` where that is possible;
values libpcp takes from uninitialised memory are then ``UNPREDICTABLE``.
"""

from __future__ import annotations

import bisect
import ctypes
import ctypes.util
import math
import re
import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pcpconform.format.cnum import INTEGER_TYPES, NUMERIC_TYPES, f32, int_to_f32, long_double_seconds, wrap, wrap_type
from pcpconform.format.pmtypes import PM_IN_NULL, PmID, PmInDom, PmSem, PmType, Timestamp
from pcpconform.format.values import F32
from pcpconform.io.archive import Archive
from pcpconform.oracles.derive.bind import Bound, BoundNode, promote
from pcpconform.oracles.derive.profiles import Profile
from pcpconform.oracles.derive.units import ConvScaleError, conv_scale
from pcpconform.oracles.interp.replay import NoValue, Replay, Sample

__all__ = ["Evaluator", "DerivedSample", "DerivedView", "Unpredictable", "UNPREDICTABLE", "DEVIATIONS",
           "EMULATABLE", "instance_order", "derived_pmid"]

#: libpcp defects the evaluator knows (spec/derive.md DERIVE-DEV-n)
DEVIATIONS = {
    "minmax-empty": "DERIVE-DEV-1: min()/max() of no values repeat an old or uninitialised value",
    "not-wide": "DERIVE-DEV-2: !x of a 64-bit, FLOAT or DOUBLE x is a U32 read as x's type",
    "ternary-positional": "DERIVE-DEV-3: ?: pairs guard and branches by position",
    "no-history": "DERIVE-DEV-4: delta()/rate() of x[inst] or defined() never have values",
    "lookup-time": "DERIVE-DEV-5: instance names are looked up at the context's origin",
    "scalar-empty": "DERIVE-DEV-6: 6.0.3 crashes on scalar() of no values",
    "instselect-expr": "DERIVE-DEV-7: 6.0.3 crashes on (expr)[inst]",
    "instant-history": "DERIVE-DEV-8: delta()/rate() of instant() double-frees",
    "string-values": "DERIVE-DEV-11: !, ?: and scalar() of strings corrupt libpcp's heap",
    "matchinst-history": "DERIVE-DEV-12: delta()/rate() of matchinst() see uninitialised entries",
}
#: the deviations whose libpcp behaviour the evaluator can reproduce
EMULATABLE = frozenset({"minmax-empty", "not-wide", "ternary-positional", "no-history",
                        "lookup-time", "matchinst-history"})

_REL = frozenset({"LT", "LEQ", "EQ", "GEQ", "GT", "NEQ"})
_BOOL = frozenset({"AND", "OR"})
PM_ERR_INDOM_LOG = -12379


class Unpredictable:
    """A value (or instance) libpcp takes from uninitialised memory."""

    _instance: Unpredictable | None = None

    def __new__(cls) -> Unpredictable:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "UNPREDICTABLE"


UNPREDICTABLE = Unpredictable()


def derived_pmid(k: int) -> PmID:
    """The pmID libpcp gives the k-th (from 0) globally registered derived metric."""
    return PmID.from_parts(511, 0, k + 1)


# -- C arithmetic ----------------------------------------------------------------------

def _as_double(value: Any, ptype: int) -> float:
    return float(value)


def _as_float(value: Any, ptype: int) -> float:
    if ptype in INTEGER_TYPES:
        return int_to_f32(int(value))
    return f32(float(value))


def _ieee_div(x: float, y: float) -> float:
    """x / y as IEEE arithmetic gives it (Python raises for a zero divisor)."""
    if y != 0 or math.isnan(y):
        try:
            return x / y
        except OverflowError:
            return math.copysign(math.inf, x) * math.copysign(1.0, y)
    if math.isnan(x):
        return x                    # a NaN operand propagates as it is
    if x == 0:
        return _DEFAULT_NAN         # 0/0: x86's default NaN has the sign bit set
    return math.copysign(math.inf, x) * math.copysign(1.0, y)


#: the NaN an x86-64 invalid operation produces (bits fff8000000000000), as libpcp gets it
_DEFAULT_NAN = struct.unpack(">d", bytes.fromhex("fff8000000000000"))[0]


def _compare(op: str, a: Any, b: Any) -> int:
    return int({"LT": a < b, "LEQ": a <= b, "EQ": a == b, "GEQ": a >= b, "GT": a > b,
                "NEQ": a != b, "AND": a != 0 and b != 0, "OR": a != 0 or b != 0}[op])


def bin_op(rtype: int, op: str, a: Any, ltype: int, lmul: int, ldiv: int, b: Any,
           btype: int, rmul: int, rdiv: int) -> Any:
    """libpcp's bin_op: promote both operands to ``rtype`` and apply ``op`` there."""
    if a is UNPREDICTABLE or b is UNPREDICTABLE:
        return UNPREDICTABLE
    if rtype in INTEGER_TYPES:
        # 32-bit results read the operands' union as is; wider ones convert
        left, right = wrap_type(int(a), rtype), wrap_type(int(b), rtype)
        if op in _REL or op in _BOOL:
            return _compare(op, left, right)
        value = {"PLUS": left + right, "MINUS": left - right, "STAR": left * right}[op]
        return wrap_type(value, rtype)
    if rtype == PmType.FLOAT:
        left, right = _as_float(a, ltype), _as_float(b, btype)
        if op in _REL or op in _BOOL:
            return _compare(op, left, right)
        return f32({"PLUS": left + right, "MINUS": left - right, "STAR": left * right}[op])
    left = (_as_double(a, ltype) / float(ldiv) if ldiv else _ieee_div(_as_double(a, ltype), 0.0)) \
        * float(lmul)
    right = (_as_double(b, btype) / float(rdiv) if rdiv else _ieee_div(_as_double(b, btype), 0.0)) \
        * float(rmul)
    if op in _REL or op in _BOOL:
        return _compare(op, left, right)
    if op == "SLASH":
        return 0.0 if left == 0 else _ieee_div(left, right)
    return {"PLUS": left + right, "MINUS": left - right, "STAR": left * right}[op]


def _typed(value: Any, ptype: int) -> Any:
    """The Python value the interp oracle uses for a value of ``ptype``."""
    if value is UNPREDICTABLE:
        return value
    if ptype == PmType.FLOAT:
        return value if isinstance(value, F32) else F32(float(value))
    if ptype == PmType.DOUBLE:
        return float(value)
    if ptype in INTEGER_TYPES:
        return int(value)
    return value


def timespec_seconds(sec: int, nsec: int) -> float:
    """libpcp's pmtimespecToReal: sec + (long double) nsec / 1e9, returned as double."""
    return long_double_seconds(sec, nsec)


def _timespec_sub(a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int]:
    """pmtimespecDec: one borrow, so a result may keep nsec == 1e9."""
    sec, nsec = a[0] - b[0], a[1] - b[1]
    if nsec < 0:
        nsec += 1_000_000_000
        sec -= 1
    return sec, nsec


def _origin_add(origin: tuple[int, int], delta: tuple[int, int]) -> tuple[int, int]:
    """__pmLogFetchInterp's origin update: it normalises only nsec > 1e9 (not == 1e9)."""
    sec, nsec = origin[0] + delta[0], origin[1] + delta[1]
    while nsec > 1_000_000_000:
        sec, nsec = sec + 1, nsec - 1_000_000_000
    while nsec < 0:
        sec, nsec = sec - 1, nsec + 1_000_000_000
    return sec, nsec


# -- instance order and instance-domain lookups -----------------------------------------

def instance_order(archive: Archive, indom: PmInDom) -> list[int]:
    """The order of a metric's instances in libpcp's INTERP results: the archive's
    instances (newest instance-domain record first) walked through a hash table of as many
    buckets as instances, each bucket newest-insert first (DERIVE-EVAL-3)."""
    if indom.is_null:
        return [PM_IN_NULL]
    seen: dict[int, None] = {}
    for rec in reversed(archive.indom_history(indom)):
        for inst in rec.instances:
            seen.setdefault(inst, None)
    listed = list(seen)
    n = len(listed)
    buckets: list[list[int]] = [[] for _ in range(n)]
    for inst in listed:
        buckets[(inst & 0xFFFFFFFF) % n].insert(0, inst)
    return [inst for bucket in buckets for inst in bucket]


class _InDoms:
    """Instance-domain records in force at a (possibly unnormalised) libpcp timestamp."""

    def __init__(self, archive: Archive) -> None:
        self.archive = archive
        self.cache: dict[int, tuple[list[tuple[int, int]], list[dict[int, str]]]] = {}

    def at(self, indom: PmInDom, when: tuple[int, int]) -> dict[int, str] | None:
        if int(indom) not in self.cache:
            history = self.archive.indom_history(indom)
            self.cache[int(indom)] = ([(r.timestamp.sec, r.timestamp.nsec) for r in history],
                                      [r.instances for r in history])
        stamps, records = self.cache[int(indom)]
        pos = bisect.bisect_right(stamps, when)
        return records[pos - 1] if pos else None

    def lookup(self, indom: PmInDom, when: tuple[int, int], name: str) -> int | None:
        """pmLookupInDom: a full name, else the first name whose text before its first
        space is a prefix of ``name`` (libpcp compares only that many characters)."""
        insts = self.at(indom, when)
        if insts is None:
            return None
        for inst, iname in insts.items():
            if iname == name:
                return inst
        for inst, iname in insts.items():
            if " " in iname:
                head = iname.split(" ", 1)[0]
                if name[:len(head)] == head and (len(name) >= len(head)):
                    return inst
        return None

    def name(self, indom: PmInDom, when: tuple[int, int], inst: int) -> str | None:
        insts = self.at(indom, when)
        return None if insts is None else insts.get(inst)


# -- POSIX extended regular expressions -------------------------------------------------

class _PosixRegex:
    """regcomp(REG_EXTENDED|REG_NOSUB)/regexec through the C library when there is one
    (glibc here, as for libpcp); else Python's re after translating the POSIX bracket
    classes, which differs in corner cases (spec/derive.md DERIVE-EVAL-15)."""

    _libc: Any = None
    _CLASSES = {"alpha": "a-zA-Z", "digit": "0-9", "alnum": "0-9a-zA-Z", "upper": "A-Z",
                "lower": "a-z", "space": r" \t\n\r\f\v", "blank": r" \t",
                "punct": r"!-/:-@\[-`{-~", "xdigit": "0-9A-Fa-f", "print": r" -~",
                "graph": r"!-~", "cntrl": r"\x00-\x1f\x7f"}

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self.buf: Any = None
        self.compiled: re.Pattern[str] | None = None
        libc = self._load()
        if libc is not None:
            buf = ctypes.create_string_buffer(256)       # sizeof(regex_t) is 64 on glibc
            if libc.regcomp(buf, pattern.encode("utf-8", "surrogateescape"), 1 | 8) == 0:
                self.buf = buf
            return
        try:
            self.compiled = re.compile(self._translate(pattern))
        except re.error:
            self.compiled = None

    @classmethod
    def _load(cls) -> Any:
        if cls._libc is None:
            try:
                cls._libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
                cls._libc.regcomp.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
                cls._libc.regexec.argtypes = [ctypes.c_void_p, ctypes.c_char_p,
                                              ctypes.c_size_t, ctypes.c_void_p, ctypes.c_int]
            except (OSError, AttributeError):
                cls._libc = False
        return cls._libc or None

    @classmethod
    def _translate(cls, pattern: str) -> str:
        out = re.sub(r"\[:(\w+):\]", lambda m: cls._CLASSES.get(m.group(1), m.group(0)),
                     pattern)
        return out

    def search(self, text: str) -> bool:
        if self.buf is not None:
            return self._libc.regexec(self.buf, text.encode("utf-8", "surrogateescape"),
                                      0, None, 0) == 0
        return bool(self.compiled and self.compiled.search(text))


# -- per-node state ----------------------------------------------------------------------

@dataclass
class _State:
    numval: int = 0
    ivlist: list[tuple[Any, Any]] = field(default_factory=list)
    last_numval: int = 0
    last_ivlist: list[tuple[Any, Any]] = field(default_factory=list)
    stamp: tuple[int, int] = (0, 0)
    last_stamp: tuple[int, int] = (0, 0)
    ever: bool = False                      # ivlist allocated (aggregates, constants)
    matches: dict[int, list[Any]] = field(default_factory=dict)  # inst -> [match, used, contested]
    used: int = 0
    exact_inst: int | None = None
    exact_contested: bool = False


@dataclass
class DerivedSample:
    """One fetch: per derived metric, the (instance, value) pairs in libpcp's order."""

    time: Timestamp
    eol: bool = False
    values: dict[str, list[tuple[Any, Any]]] = field(default_factory=dict)
    errors: dict[str, int] = field(default_factory=dict)
    deviations: dict[str, set[str]] = field(default_factory=dict)
    #: emulation only: metrics whose very instance list depends on uninitialised memory
    unknown: set[str] = field(default_factory=set)


class Evaluator:
    """Replay ``bound`` derived metrics of ``archive`` as libpcp of ``profile`` does.

    ``rules`` picks the interpolation rules (default: the profile's name, pcp-6.0 or
    pcp-6.3, which go together); ``emulate`` names DEVIATIONS to reproduce as libpcp
    shows them instead of the intended behaviour."""

    def __init__(self, archive: Archive, bound: Sequence[Bound], profile: Profile, *,
                 rules: str | None = None, emulate: Iterable[str] = (),
                 interp_emulate: Iterable[str] = (), from_time: Timestamp | None = None) -> None:
        self.archive = archive
        self.bound = list(bound)
        self.profile = profile
        self.emulate = frozenset(emulate)
        unknown = self.emulate - EMULATABLE
        if unknown:
            raise ValueError(f"cannot emulate {', '.join(sorted(unknown))}")
        pmids: list[int] = []
        for b in self.bound:
            for pmid in b.operand_pmids():
                if pmid not in pmids:
                    pmids.append(pmid)
        # interp_emulate: the interpolation oracle's named deviations (INTERP-DEV-*) for
        # the operands, so that a comparison with a given libpcp is exact end to end
        self.replay = Replay(archive, pmids, rules=rules or profile.name, emulate=interp_emulate,
                             from_time=from_time)     # INTERP-SEEK-1 for a late forward start
        self.order = {pmid: instance_order(archive, self.replay.descs[pmid].indom)
                      for pmid in pmids}
        self.indoms = _InDoms(archive)
        self.states: dict[int, _State] = {}
        self.pmids = {b.name: derived_pmid(k) for k, b in enumerate(self.bound)}
        self._sample: Sample | None = None
        self._exact: tuple[int, int] = (0, 0)
        self._real_stamp: tuple[int, int] = (0, 0)
        self._origin_after: tuple[int, int] = (0, 0)
        self._hits: set[str] = set()
        self._unknown = False
        self._prev_hits: dict[str, tuple[set[str], bool]] = {}
        self._history = {b.name: any(n.save_last for n in b.root.walk()) for b in self.bound}

    # -- driving -------------------------------------------------------------------------
    def schedule(self, start: Timestamp, interval_nsec: int, count: int) -> list[DerivedSample]:
        """Fetch ``count`` times from ``start`` every ``interval_nsec``, with libpcp's
        timestamp arithmetic for the context origin (DERIVE-EVAL-16)."""
        sign = -1 if interval_nsec < 0 else 1
        delta = (sign * (abs(interval_nsec) // 10**9), sign * (abs(interval_nsec) % 10**9))
        origin = (start.sec, start.nsec)
        at = start.total_nsec()
        out = []
        for _ in range(count):
            after = _origin_add(origin, delta)
            out.append(self.fetch(Timestamp.from_nsec(at), stamp=origin, origin_after=after))
            origin = after
            at += interval_nsec
        return out

    def fetch(self, when: Timestamp, *, stamp: tuple[int, int] | None = None,
              origin_after: tuple[int, int] | None = None) -> DerivedSample:
        """One fetch at ``when``. ``stamp`` is the result timestamp as libpcp holds it and
        ``origin_after`` the context origin after the fetch (both default to ``when``)."""
        sample = self.replay.fetch(when)
        out = DerivedSample(when, eol=sample.eol)
        if sample.eol:                 # libpcp does not evaluate derived metrics at EOL
            return out
        self._sample = sample
        self._exact = (when.sec, when.nsec)
        self._real_stamp = stamp if stamp is not None else self._exact
        self._origin_after = origin_after if origin_after is not None else self._exact
        for b in self.bound:
            # a previous sample kept for delta()/rate() carries its deviations one fetch on
            history = self._history[b.name]
            carried = self._prev_hits.get(b.name, (set(), False)) if history else (set(), False)
            self._hits, self._unknown = set(), False
            numval = self._eval(b.root, b)
            self._prev_hits[b.name] = (set(self._hits), self._unknown)
            self._hits |= carried[0]
            if self._unknown or carried[1]:
                out.unknown.add(b.name)
            state = self._state(b.root)
            if numval < 0:
                out.errors[b.name] = numval
                out.values[b.name] = []
            else:
                pairs = state.ivlist[:numval]
                out.values[b.name] = [(i, _typed(v, b.desc.type)) for i, v in pairs]
            if self._hits:
                out.deviations[b.name] = set(self._hits)
        return out

    def interp_sample(self, derived: DerivedSample) -> Sample:
        """The fetch as an interp Sample keyed by the derived pmIDs (inst -> value)."""
        out = Sample(derived.time, eol=derived.eol)
        for name, pairs in derived.values.items():
            out.values[int(self.pmids[name])] = {inst: value for inst, value in pairs}
        return out

    # -- evaluation ----------------------------------------------------------------------
    def _state(self, node: BoundNode) -> _State:
        key = id(node)
        if key not in self.states:
            self.states[key] = _State()
        return self.states[key]

    def _at(self, libpcp_time: tuple[int, int], lookup: Any) -> tuple[Any, bool]:
        """``lookup(time)`` at the fetch time, or at the time libpcp uses when that
        answers differently and DERIVE-DEV-5 is emulated; and whether they differ."""
        intended = lookup(self._exact)
        if libpcp_time == self._exact:
            return intended, False
        theirs = lookup(libpcp_time)
        if theirs == intended:
            return intended, False
        return (theirs if self._hit("lookup-time") else intended), True

    def _hit(self, name: str) -> bool:
        """Record that deviation ``name`` arose; True if libpcp's behaviour is wanted."""
        self._hits.add(name)
        return name in self.emulate

    def _save(self, node: BoundNode, st: _State) -> None:
        """free_ivlist/save_ivlist: keep this sample as the previous one for delta()."""
        if node.save_last:
            st.last_numval, st.last_ivlist = st.numval, st.ivlist
        st.ivlist = []
        st.numval = 0

    def _eval(self, node: BoundNode, bound: Bound) -> int:
        kind = node.kind
        st = self._state(node)
        left, right = node.left, node.right
        if left is not None and kind not in ("NOVALUE", "INTEGER", "DOUBLE") and \
                (kind != "COLON" or node.bind in ("left", "both")):
            sts = self._eval(left, bound)
            if sts < 0:
                if kind == "COUNT":
                    st.numval, st.ivlist = 1, [(PM_IN_NULL, 0)]
                    return 1
                return sts
        if right is not None and (kind != "COLON" or node.bind in ("right", "both")):
            sts = self._eval(right, bound)
            if sts < 0:
                return sts
        method = getattr(self, "_eval_" + kind.lower(), None)
        if method is None:
            return self._eval_binary(node, st)
        return method(node, st)

    def _eval_name(self, node: BoundNode, st: _State) -> int:
        if node.pmid is None or node.derived is not None:
            return 0                               # not found (lazy) or a nested metric
        self._save(node, st)
        assert self._sample is not None
        values = self._sample.values.get(node.pmid, {})
        st.ivlist = [(inst, values[inst]) for inst in self.order.get(node.pmid, [])
                     if inst in values and not isinstance(values[inst], NoValue)]
        st.numval = len(st.ivlist)
        return st.numval

    def _constant(self, node: BoundNode) -> Any:
        text = node.text or "0"
        ptype = node.desc.type
        if ptype in (PmType.FLOAT, PmType.DOUBLE):
            try:
                value = float(text) if text != "." else 0.0
            except ValueError:
                value = 0.0
            return F32(f32(value)) if ptype == PmType.FLOAT else value
        digits = re.match(r"\d*", text)
        number = int(digits.group(0)) if digits and digits.group(0) else 0
        if ptype in (PmType.I32, PmType.U32):      # atoi: strtol's long truncated to int
            return wrap_type(wrap(min(number, 2**63 - 1), 32, True), ptype)
        if ptype == PmType.I64:                    # strtoll saturates
            return min(number, 2**63 - 1)
        return number if number < 2**64 else 2**64 - 1

    def _eval_integer(self, node: BoundNode, st: _State) -> int:
        if node.save_last and st.ivlist and not st.last_ivlist:
            st.last_numval, st.last_ivlist = st.numval, st.ivlist
        if node.desc.indom.is_null:
            if not st.ever:
                st.ever = True
                st.numval, st.ivlist = 1, [(PM_IN_NULL, self._constant(node))]
            return st.numval
        insts, _ = self._at(self._origin_after, lambda t: self.indoms.at(node.desc.indom, t))
        if insts is None:
            st.numval, st.ivlist = PM_ERR_INDOM_LOG, []
            return st.numval
        ids = list(insts)
        if [i for i, _ in st.ivlist] != ids or not st.ever:
            st.ever = True
            value = self._constant(node)
            st.ivlist = [(i, value) for i in ids]
            st.numval = len(ids)
        return st.numval

    _eval_double = _eval_integer

    def _eval_defined(self, node: BoundNode, st: _State) -> int:
        self._save(node, st)
        st.numval, st.ivlist = 1, [(PM_IN_NULL, 1 if node.defined else 0)]
        return 1

    def _eval_novalue(self, node: BoundNode, st: _State) -> int:
        st.numval, st.ivlist = 0, []
        return 0

    _eval_anon = _eval_novalue
    _eval_scale = _eval_novalue
    _eval_pattern = _eval_novalue
    _eval_colon = _eval_novalue

    def _no_history(self, node: BoundNode) -> bool:
        """delta()/rate() over a node that never saves a previous sample."""
        assert node.left is not None
        child = node.left
        if child.kind == "DEFINED" or (child.kind == "FILTERINST" and child.left is not None \
                and child.left.exact):
            return self._hit("no-history")
        if child.kind == "INSTANT":
            self._hit("instant-history")
        return False

    def _eval_delta(self, node: BoundNode, st: _State) -> int:
        left = node.left
        assert left is not None
        ls = self._state(left)
        st.last_stamp, st.stamp = st.stamp, self._real_stamp
        self._save(node, st)
        if self._no_history(node):
            return 0
        numval = min(ls.numval, ls.last_numval)
        if numval <= 0:
            st.numval = numval
            return numval
        prev = {inst: value for inst, value in ls.last_ivlist[:ls.last_numval]}
        ptype = left.desc.type
        out = []
        for inst, now in ls.ivlist[:ls.numval]:
            if inst not in prev:
                continue
            before = prev[inst]
            if now is UNPREDICTABLE or before is UNPREDICTABLE:
                if node.kind == "RATE" and self.profile.rate_drops_decreases \
                        and left.desc.sem == PmSem.COUNTER and ptype != PmType.I32:
                    self._unknown = True           # dropped or not: cannot tell
                out.append((inst, UNPREDICTABLE))
                continue
            if node.kind == "DELTA":
                out.append((inst, self._delta(ptype, now, before)))
                continue
            value = self._rate_diff(ptype, left.desc.sem, now, before)
            if value is None:
                continue
            sec, nsec = _timespec_sub(st.stamp, st.last_stamp)
            value = _ieee_div(value, timespec_seconds(sec, nsec))
            if left.desc.units.dimTime == 1:
                value *= _time_scale(left.desc.units.scaleTime)
            out.append((inst, value))
        st.ivlist, st.numval = out, len(out)
        return st.numval

    _eval_rate = _eval_delta

    @staticmethod
    def _delta(ptype: int, now: Any, before: Any) -> Any:
        if ptype == PmType.I32:
            return wrap(now - before, 32, True)
        if ptype == PmType.U32:
            return now - before                     # exact in the 64-bit result
        if ptype == PmType.I64:
            return wrap(now - before, 64, True)
        if ptype == PmType.U64:
            return float(now) - float(before)       # DOUBLE result
        if ptype == PmType.FLOAT:
            return F32(f32(float(now) - float(before)))
        return float(now) - float(before)

    def _rate_diff(self, ptype: int, sem: int, now: Any, before: Any) -> float | None:
        drops = self.profile.rate_drops_decreases and sem == PmSem.COUNTER
        if ptype == PmType.I32:
            return float(wrap(now - before, 32, True))
        if drops and now < before:
            return None
        if ptype == PmType.U32:
            return float(wrap(now - before, 32, False))
        if ptype == PmType.I64:
            return float(wrap(now - before, 64, True))
        if ptype == PmType.U64:
            return float(wrap(now - before, 64, False))
        if ptype == PmType.FLOAT:
            return f32(float(now) - float(before))
        return float(now) - float(before)

    def _operand(self, node: BoundNode, st: _State) -> _State | None:
        """Start a node whose result has its operand's values: save the previous result,
        take the operand's numval; the operand's state, or None when there are no values."""
        assert node.left is not None
        ls = self._state(node.left)
        self._save(node, st)
        st.numval = ls.numval
        return ls if st.numval > 0 else None

    def _eval_not(self, node: BoundNode, st: _State) -> int:
        left = node.left
        assert left is not None
        ls = self._operand(node, st)
        if ls is None:
            return st.numval
        ptype = left.desc.type
        if ptype not in NUMERIC_TYPES:
            self._hit("string-values")
            st.numval = 0
            return 0
        out = []
        for inst, value in ls.ivlist[:ls.numval]:
            truth = UNPREDICTABLE if value is UNPREDICTABLE else int(value == 0)
            if ptype in (PmType.I32, PmType.U32) or truth is UNPREDICTABLE:
                out.append((inst, truth))
            elif self._hit("not-wide"):
                out.append((inst, F32.from_bits(truth) if ptype == PmType.FLOAT
                            else UNPREDICTABLE))
            else:
                out.append((inst, truth if ptype in INTEGER_TYPES else
                            (F32(float(truth)) if ptype == PmType.FLOAT else float(truth))))
        st.ivlist = out
        return st.numval

    def _eval_neg(self, node: BoundNode, st: _State) -> int:
        left = node.left
        assert left is not None
        ls = self._operand(node, st)
        if ls is None:
            return st.numval
        ptype = left.desc.type
        out = []
        for inst, value in ls.ivlist[:ls.numval]:
            if value is UNPREDICTABLE:
                out.append((inst, value))
            elif ptype in (PmType.I32, PmType.U32):
                out.append((inst, wrap(-value, 32, True)))
            elif ptype in (PmType.I64, PmType.U64):
                out.append((inst, wrap(-value, 64, True)))
            elif ptype == PmType.FLOAT:
                out.append((inst, F32(-float(value))))
            else:
                out.append((inst, -float(value)))
        st.ivlist = out
        return st.numval

    def _eval_instant(self, node: BoundNode, st: _State) -> int:
        left = node.left
        assert left is not None
        ls = self._state(left)
        if node.save_last:
            st.last_numval, st.last_ivlist = st.numval, st.ivlist
        st.last_stamp, st.stamp = st.stamp, self._real_stamp
        st.numval = ls.numval
        st.ivlist = list(ls.ivlist) if ls.numval > 0 else []
        return st.numval

    def _eval_rescale(self, node: BoundNode, st: _State) -> int:
        left, right = node.left, node.right
        assert left is not None and right is not None
        ls = self._operand(node, st)
        if ls is None:
            return st.numval
        out = []
        for inst, value in ls.ivlist[:ls.numval]:
            if value is UNPREDICTABLE:
                out.append((inst, value))
                continue
            try:
                out.append((inst, conv_scale(node.desc.type, value, left.desc.units,
                                             right.desc.units)))
            except ConvScaleError:
                continue
        st.ivlist, st.numval = out, len(out)
        return st.numval

    def _eval_scalar(self, node: BoundNode, st: _State) -> int:
        left = node.left
        assert left is not None
        ls = self._state(left)
        self._save(node, st)
        st.numval = min(ls.numval, 1)
        if node.desc.type not in NUMERIC_TYPES:
            self._hit("string-values")
        if ls.numval > 0:
            st.ivlist = [(PM_IN_NULL, ls.ivlist[0][1])]
        elif not self.profile.instance_fixes:
            self._hit("scalar-empty")
        return st.numval

    def _eval_count(self, node: BoundNode, st: _State) -> int:
        assert node.left is not None
        ls = self._state(node.left)
        self._save(node, st)
        st.numval, st.ivlist = 1, [(PM_IN_NULL, ls.numval)]
        return 1

    def _eval_sum(self, node: BoundNode, st: _State) -> int:
        left = node.left
        assert left is not None
        ls = self._state(left)
        self._save(node, st)
        ptype = node.desc.type
        total: Any = 0 if ptype in INTEGER_TYPES else 0.0
        for _, value in ls.ivlist[:ls.numval]:
            if value is UNPREDICTABLE or total is UNPREDICTABLE:
                total = UNPREDICTABLE
            elif ptype in INTEGER_TYPES:
                total = wrap_type(total + value, ptype)
            elif ptype == PmType.FLOAT:
                total = f32(total + float(value))
            else:
                total = total + float(value)
        st.numval, st.ivlist = 1, [(PM_IN_NULL, total)]
        return 1

    def _eval_avg(self, node: BoundNode, st: _State) -> int:
        left = node.left
        assert left is not None
        ls = self._state(left)
        self._save(node, st)
        n = ls.numval
        total: Any = 0.0
        for _, value in ls.ivlist[:max(n, 0)]:
            if value is UNPREDICTABLE or total is UNPREDICTABLE:
                total = UNPREDICTABLE
                continue
            part = f32(_as_float(value, left.desc.type) / float(n))
            total = f32(total + part)
        st.numval, st.ivlist = 1, [(PM_IN_NULL, total)]
        return 1

    def _eval_min(self, node: BoundNode, st: _State) -> int:
        left = node.left
        assert left is not None
        ls = self._state(left)
        old, had = st.ivlist, st.ever
        self._save(node, st)
        st.ever = True
        best: Any = None
        for _, value in ls.ivlist[:max(ls.numval, 0)]:
            if value is UNPREDICTABLE or best is UNPREDICTABLE:
                best = UNPREDICTABLE
            elif best is None or (best > value if node.kind == "MIN" else best < value):
                best = value
        if best is not None:
            st.numval, st.ivlist = 1, [(PM_IN_NULL, best)]
            return 1
        if self._hit("minmax-empty"):
            # libpcp keeps what its list held: the previous value, or memory never
            # written (first use, or a fresh list because delta()/rate() took the old one)
            stale = old[0][1] if had and old and not node.save_last else UNPREDICTABLE
            st.numval, st.ivlist = 1, [(PM_IN_NULL, stale)]
            return 1
        st.numval = 0
        return 0

    _eval_max = _eval_min

    def _eval_filterinst(self, node: BoundNode, st: _State) -> int:
        pattern, right = node.left, node.right
        assert pattern is not None and right is not None
        rs = self._state(right)
        st.last_stamp, st.stamp = st.stamp, self._real_stamp
        if pattern.exact:
            return self._select_exact(node, st, rs, right)
        previous = st.numval
        self._save(node, st)
        regex = _regex(pattern.text or "")
        out = []
        for inst, value in rs.ivlist[:max(rs.numval, 0)]:
            entry = st.matches.get(inst)
            if entry is None:
                name, contested = self._at(self._real_stamp,
                                           lambda t: self.indoms.name(right.desc.indom, t, inst))
                if name is None:
                    match = 0
                else:
                    match = int(regex.search(name.split(" ", 1)[0]) != pattern.negate)
                entry = st.matches[inst] = [match, 0, contested]
            elif entry[2]:
                self._hit("lookup-time")         # a cached answer of the deviation
            entry[1] += 1
            if entry[0]:
                out.append((inst, value))
        st.ivlist, st.numval = out, len(out)
        if node.save_last and previous > 0 and out and self._hit("matchinst-history"):
            # libpcp appends the matches after `previous` entries it never writes
            self._unknown = True
        st.used += 1
        if st.used >= 100:                       # libpcp's REGEX_INST_COMPACT
            st.matches = {i: [m, 0, c] for i, (m, used, c) in st.matches.items() if used >= 50}
            st.used = 0
        return st.numval

    def _select_exact(self, node: BoundNode, st: _State, rs: _State,
                      right: BoundNode) -> int:
        assert node.left is not None
        if node.left.paren and not self.profile.instance_fixes:
            self._hit("instselect-expr")
        self._save(node, st)
        for inst, value in rs.ivlist[:max(rs.numval, 0)]:
            if st.exact_inst is None:
                assert node.left is not None
                text = node.left.text or ""
                found, st.exact_contested = self._at(
                    self._origin_after, lambda t: self.indoms.lookup(right.desc.indom, t, text))
                if found is None:
                    break
                st.exact_inst = found
            elif st.exact_contested:
                self._hit("lookup-time")
            if st.exact_inst == inst:
                st.ivlist, st.numval = [(inst, value)], 1
                break
        return st.numval

    def _eval_quest(self, node: BoundNode, st: _State) -> int:
        guard, colon = node.left, node.right
        assert guard is not None and colon is not None
        then, other = colon.left, colon.right
        assert then is not None and other is not None
        gs, ts, os_ = self._state(guard), self._state(then), self._state(other)
        self._save(node, st)
        if node.desc.type not in NUMERIC_TYPES:
            self._hit("string-values")
        if gs.numval <= 0:
            st.numval = gs.numval
            return st.numval
        if ts.numval <= 0 and then.kind != "NOVALUE" and colon.bind in ("left", "both"):
            st.numval = ts.numval
            return st.numval
        if os_.numval <= 0 and other.kind != "NOVALUE" and colon.bind in ("right", "both"):
            st.numval = os_.numval
            return st.numval
        if colon.bind != "both":
            chosen = ts if colon.bind == "left" else os_
            st.ivlist, st.numval = list(chosen.ivlist[:chosen.numval]), chosen.numval
            return st.numval
        pick_inst = then if not (then.desc.indom.is_null and not other.desc.indom.is_null) \
            else other
        by_position = self._positional(guard, then, other, pick_inst, gs, ts, os_)
        by_id = self._by_instance(guard, then, other, pick_inst, gs, ts, os_)
        if _key(by_position) != _key(by_id) and self._hit("ternary-positional"):
            st.ivlist, st.numval = by_position, len(by_position)
        else:
            st.ivlist, st.numval = by_id, len(by_id)
        return st.numval

    def _truth(self, ptype: int, value: Any) -> Any:
        return UNPREDICTABLE if value is UNPREDICTABLE else value != 0

    def _positional(self, guard: BoundNode, then: BoundNode, other: BoundNode,
                    pick_inst: BoundNode, gs: _State, ts: _State,
                    os_: _State) -> list[tuple[Any, Any]]:
        """libpcp's loop: entry i takes guard[i], the picked branch's [i] (or [0]) and
        pick_inst's [i] instance; a novalue() pick leaves entry i unwritten but shortens
        the list by one."""
        numval = max(ts.numval, os_.numval)
        slots: list[tuple[Any, Any] | None] = [None] * numval
        count = numval
        pick: BoundNode | None = None
        instate = self._state(pick_inst)
        for i in range(numval):
            garbage = False
            if i < gs.numval:
                truth = self._truth(guard.desc.type, gs.ivlist[i][1])
                if truth is UNPREDICTABLE:
                    if then.kind == "NOVALUE" or other.kind == "NOVALUE":
                        self._unknown = True       # dropped or not: cannot tell
                    garbage, truth = True, True
                pick = then if truth else other
            assert pick is not None
            if pick.kind == "NOVALUE":
                count -= 1
                continue
            ps = self._state(pick)
            value = ps.ivlist[i][1] if i < ps.numval else ps.ivlist[0][1]
            inst = instate.ivlist[i][0] if i < instate.numval else UNPREDICTABLE
            if inst is UNPREDICTABLE or garbage:
                value = UNPREDICTABLE
            slots[i] = (inst, value)
        return [s if s is not None else (UNPREDICTABLE, UNPREDICTABLE) for s in slots[:count]]

    def _by_instance(self, guard: BoundNode, then: BoundNode, other: BoundNode,
                     pick_inst: BoundNode, gs: _State, ts: _State,
                     os_: _State) -> list[tuple[Any, Any]]:
        """The intended ternary: per instance, the guard's value picks the branch."""
        def table(node: BoundNode, s: _State) -> dict[Any, Any] | None:
            if node.kind == "NOVALUE":
                return {}
            return None if node.desc.indom.is_null else dict(s.ivlist[:s.numval])

        tables = [(guard, gs, table(guard, gs)), (then, ts, table(then, ts)),
                  (other, os_, table(other, os_))]
        order: list[Any] = []
        first = [t for t in tables if t[0] is pick_inst] + [t for t in tables
                                                             if t[0] is not pick_inst]
        for node_, s, tab in first:
            if tab is not None and node_.kind != "NOVALUE":
                for inst, _ in s.ivlist[:s.numval]:
                    if inst not in order:
                        order.append(inst)
        if not order:
            order = [ts.ivlist[0][0] if ts.numval > 0 else
                     (os_.ivlist[0][0] if os_.numval > 0 else PM_IN_NULL)]

        def value_of(node: BoundNode, s: _State, tab: dict[Any, Any] | None, inst: Any) -> Any:
            if node.kind == "NOVALUE":
                return None
            if tab is None:
                return s.ivlist[0][1] if s.numval > 0 else None
            return tab.get(inst)

        out = []
        for inst in order:
            g = value_of(guard, gs, tables[0][2], inst)
            if g is None:
                continue
            truth = self._truth(guard.desc.type, g)
            branch = tables[1] if truth else tables[2]
            if truth is UNPREDICTABLE:
                out.append((inst, UNPREDICTABLE))
                continue
            value = value_of(branch[0], branch[1], branch[2], inst)
            if value is None:
                continue
            out.append((inst, value))
        return out

    def _eval_binary(self, node: BoundNode, st: _State) -> int:
        left, right = node.left, node.right
        assert left is not None and right is not None
        ls, rs = self._state(left), self._state(right)
        self._save(node, st)
        if ls.numval <= 0 or rs.numval <= 0:
            st.numval = 0
            return 0
        lset, rset = not left.desc.indom.is_null, not right.desc.indom.is_null
        kind = node.kind
        relational = kind in _REL or kind in _BOOL
        rtype = promote(left.desc.type, right.desc.type) if relational else node.desc.type
        out = []
        lvals, rvals = ls.ivlist[:ls.numval], rs.ivlist[:rs.numval]
        if lset and rset:
            if any(inst is UNPREDICTABLE for inst, _ in lvals + rvals):
                self._unknown = True     # which instances pair depends on uninitialised memory
            rmap = {inst: value for inst, value in rvals}
            pairs = [(inst, lv, rmap[inst]) for inst, lv in lvals if inst in rmap]
            pairs = pairs[:min(len(lvals), len(rvals))]
        elif lset:
            pairs = [(inst, lv, rvals[0][1]) for inst, lv in lvals]
        elif rset:
            pairs = [(inst, lvals[0][1], rv) for inst, rv in rvals]
        else:
            pairs = [(rvals[0][0], lvals[0][1], rvals[0][1])]
        for inst, lv, rv in pairs:
            value = bin_op(rtype, kind, lv, left.desc.type, left.mul, left.div, rv,
                           right.desc.type, right.mul, right.div)
            out.append((inst, value))
        st.ivlist, st.numval = out, len(out)
        return st.numval


def _key(pairs: list[tuple[Any, Any]]) -> list[tuple[Any, Any]]:
    """Pairs compared by the bits of their values (NaN equals itself)."""
    def bits(value: Any) -> Any:
        if isinstance(value, F32):
            return ("f32", value.bits)
        if isinstance(value, float):
            return ("f64", struct.pack(">d", value))
        return value
    return [(inst, bits(value)) for inst, value in pairs]


def _time_scale(scale_time: int) -> float:
    """rate()'s factor from a time counter's scale to seconds (computed in double)."""
    factor = 1.0
    if scale_time > 3:
        for _ in range(3, scale_time):
            factor *= 60
    else:
        for _ in range(scale_time, 3):
            factor /= 1000
    return factor


_REGEXES: dict[str, _PosixRegex] = {}


def _regex(pattern: str) -> _PosixRegex:
    if pattern not in _REGEXES:
        _REGEXES[pattern] = _PosixRegex(pattern)
    return _REGEXES[pattern]


class DerivedView:
    """An Archive stand-in for the interp report code (pcpconform.oracles.interp.report): the
    derived metrics by pmID, instance domains from the archive."""

    def __init__(self, evaluator: Evaluator) -> None:
        from pcpconform.io.archive import Desc
        self.archive = evaluator.archive
        self._descs = {int(evaluator.pmids[b.name]): Desc(
            evaluator.pmids[b.name], b.desc.type, b.desc.indom, b.desc.sem, b.desc.units,
            (b.name,)) for b in evaluator.bound}

    def desc(self, pmid: int) -> Any:
        return self._descs[int(pmid)]

    def metric_name(self, pmid: int) -> str:
        return self._descs[int(pmid)].names[0]

    def instances(self, indom: Any, at: Timestamp | None = None) -> dict[int, str]:
        return self.archive.instances(indom, at)

    def indom_history(self, indom: Any) -> list[Any]:
        return self.archive.indom_history(indom)
