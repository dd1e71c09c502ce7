"""Derived metrics on both sides: pcpconform.oracles.derive and a referee's libpcp.

``compare(referee, profile, base, texts, schedule)`` registers ``texts`` as d.e0, d.e1, ...
in one libpcp process (pm_derive.py), looks up their descriptors and replays the archive
in PM_MODE_INTERP, and does the same with the oracle. Exclusions come from what libpcp did
in this run, never from a label the oracle puts on an input:

* expressions whose evaluation kills libpcp are found by bisection (crashes.isolate) and
  left out; ``Comparison.crashes`` names them, and ``crash_explanations`` says which named
  deviation (DERIVE-DEV-*, or a parser abort DERIVE-SYN-7/-10) the oracle found for them;
* libpcp is run three times, in different heap states (HEAPS: glibc's MALLOC_PERTURB_
  filling fresh and freed memory with different bytes, and the default allocator, with
  ASLR moving everything): a value that differs between the runs came from memory libpcp
  never wrote. Only there may the oracle's UNPREDICTABLE stand
  in for a value; everywhere else the values must be equal, bit for bit.
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pcpconform.errors import DeriveSemanticError, DeriveSyntaxError
from pcpconform.format.pmtypes import Timestamp
from pcpconform.io.archive import Archive
from pcpconform.oracles.derive.bind import Bound, bind
from pcpconform.oracles.derive.evaluate import CRASHES, EMULATABLE, UNPREDICTABLE, Evaluator
from pcpconform.oracles.derive.parser import parse
from pcpconform.oracles.derive.profiles import Profile
from pcpconform.oracles.interp.replay import DEVIATIONS as INTERP_DEVIATIONS
from tests.differential.libpcp import derive_eval_bridge as dbridge
from tests.differential.libpcp.compare import libpcp_encoding
from tests.differential.libpcp.crashes import Crash, isolate
from tests.differential.libpcp.referees import Referee

__all__ = ["Outcome", "Comparison", "compare", "mismatches", "values", "name_of",
           "crash_explanations"]

#: the heap states libpcp runs in: two different fill bytes for glibc's malloc (man mallopt,
#: M_PERTURB) with the per-thread cache off (its chunks skip the fill, and tcache_get zeroes
#: their second word), glibc's defaults, and every chunk mapped on its own (other layouts:
#: reads beyond the end of a list see other chunk headers)
HEAPS: tuple[dict[str, str], ...] = (
    {"MALLOC_PERTURB_": "85", "GLIBC_TUNABLES": "glibc.malloc.tcache_count=0"},
    {"MALLOC_PERTURB_": "170", "GLIBC_TUNABLES": "glibc.malloc.tcache_count=0"},
    {},
    {"GLIBC_TUNABLES": "glibc.malloc.mmap_threshold=0"},
)


def name_of(k: int) -> str:
    return f"d.e{k}"


@dataclass
class Outcome:
    """One expression on one side: a descriptor, an error text, or a syntax error."""

    desc: tuple[int, int, str | None, int] | None = None
    error: str | None = None          # libpcp's printed line ("" when silent)
    syntax: bool = False


@dataclass
class Comparison:
    texts: list[str]
    alive: list[int] = field(default_factory=list)       # indices libpcp survived
    crashes: list[Crash[int]] = field(default_factory=list)
    ours: dict[str, Outcome] = field(default_factory=dict)
    theirs: dict[str, Outcome] = field(default_factory=dict)
    bound: list[Bound] = field(default_factory=list)
    values_ours: list[dict[str, Any]] = field(default_factory=list)     # emulated
    values_intended: list[dict[str, Any]] = field(default_factory=list)
    deviations: list[dict[str, set[str]]] = field(default_factory=list)
    values_theirs: list[dict[str, Any]] = field(default_factory=list)
    values_again: list[list[dict[str, Any]]] = field(default_factory=list)  # per other heap
    eol_ours: list[bool] = field(default_factory=list)
    eol_theirs: list[bool] = field(default_factory=list)
    uninitialised: int = 0             # libpcp values shown to come from uninitialised memory


def _our_outcome(text: str, name: str, archive: Archive,
                 profile: Profile) -> tuple[Outcome, Bound | None]:
    try:
        tree = parse(text, profile)
    except DeriveSyntaxError:
        return Outcome(syntax=True), None
    try:
        b = bind(tree, name, archive, profile)
    except DeriveSemanticError as exc:
        return Outcome(error=exc.text), None
    d = b.desc
    return Outcome(desc=(int(d.type), int(d.sem), None if d.indom.is_null else str(d.indom),
                         d.units.to_word())), b


def _their_outcome(reply: dict[str, Any], name: str) -> Outcome:
    if reply["register"].get(name) is not None:
        return Outcome(syntax=True)
    d = reply["descs"][name]
    if "error" in d:
        return Outcome(error=d["stderr"].rstrip("\n"))
    return Outcome(desc=(d["type"], d["sem"], d["indom"], d["units"]))


def _encode(pairs: list[tuple[Any, Any]], ptype: int) -> list[list[Any]]:
    return [[inst, "?" if value is UNPREDICTABLE else libpcp_encoding(value, ptype)]
            for inst, value in pairs]


def _request(texts: list[str], indices: list[int],
             schedule: tuple[Timestamp, int, int] | None) -> dict[str, Any]:
    request: dict[str, Any] = {"derived": [[name_of(k), texts[k]] for k in indices]}
    if schedule is not None:
        start, step, count = schedule
        request["schedule"] = {"start": [start.sec, start.nsec], "delta": step, "count": count}
    return request


def compare(referee: Referee, profile: Profile, base: Path, texts: list[str],
            schedule: tuple[Timestamp, int, int] | None = None, archive: Archive | None = None) -> Comparison:
    """Bind and replay ``texts`` (names d.e0, d.e1, ...) on both sides; ``archive`` is what
    the oracle reads when it is not ``base`` itself (an archive set's view)."""
    cmp = Comparison(texts)

    def run(indices: list[int], heap: dict[str, str] = HEAPS[0]) -> dict[str, Any]:
        return dbridge.pm_derive(referee, _request(texts, indices, schedule), base, env=heap)

    reply, cmp.alive, cmp.crashes = isolate(run, list(range(len(texts))))
    archive = archive if archive is not None else Archive(base)
    for k in cmp.alive:
        cmp.ours[name_of(k)], b = _our_outcome(texts[k], name_of(k), archive, profile)
        if b is not None:
            cmp.bound.append(b)
        cmp.theirs[name_of(k)] = _their_outcome(reply, name_of(k))
    if schedule is None:
        return cmp
    others = [run(cmp.alive, heap) for heap in HEAPS[1:]]
    types = {b.name: b.desc.type for b in cmp.bound}
    emulated = Evaluator(archive, cmp.bound, profile, emulate=EMULATABLE,
                         interp_emulate=INTERP_DEVIATIONS).schedule(*schedule)
    # the derived metrics' intended behaviour over libpcp's own interpolation (INTERP-DEV-*)
    intended = Evaluator(archive, cmp.bound, profile,
                         interp_emulate=INTERP_DEVIATIONS).schedule(*schedule)
    for mine, plain in zip(emulated, intended):
        cmp.eol_ours.append(mine.eol)
        cmp.values_ours.append({n: _encode(v, types[n]) for n, v in mine.values.items()})
        cmp.values_intended.append({n: _encode(v, types[n]) for n, v in plain.values.items()})
        cmp.deviations.append(plain.deviations)
    for s in reply["samples"]:
        cmp.eol_theirs.append(s["eol"])
        cmp.values_theirs.append({n: v["values"] for n, v in s["values"].items()})
    for other in others:
        cmp.values_again.append([{n: v["values"] for n, v in s["values"].items()}
                                 for s in other["samples"]])
    return cmp


def crash_explanations(cmp: Comparison, referee: Referee, profile: Profile, base: Path,
                       schedule: tuple[Timestamp, int, int] | None) -> dict[str, set[str]]:
    """Per expression that killed libpcp: the named deviations the oracle records for it
    (evaluated alone, over the same schedule), "aborts" when the parser says libpcp aborts
    on the text (DERIVE-SYN-7, -10), or nothing: an unexplained crash (a finding)."""
    archive = Archive(base)
    out: dict[str, set[str]] = {}
    for crash in cmp.crashes:
        for k in crash.items:
            text, reasons = cmp.texts[k], set()
            try:
                b = bind(parse(text, profile), name_of(k), archive, profile)
            except DeriveSyntaxError as exc:
                reasons |= {"aborts"} if exc.aborts else set()
                out[text] = reasons
                continue
            except DeriveSemanticError:
                out[text] = reasons
                continue
            if schedule is not None:
                for s in Evaluator(archive, [b], profile,
                                   interp_emulate=INTERP_DEVIATIONS).schedule(*schedule):
                    for hits in s.deviations.values():
                        reasons |= hits & CRASHES
            out[text] = reasons
    return out


def _values_differ(ours: list[list[Any]], runs: list[list[list[Any]]], cmp: Comparison) -> bool:
    """Whether ``ours`` differs from libpcp's values (``runs``: the same fetch in each heap
    state). Where the runs disagree, libpcp demonstrably read memory it never wrote in this
    run: that instance or value is not compared (and is counted), whatever the oracle says
    of it; everything the runs agree on must equal the oracle's value exactly, so the
    oracle's UNPREDICTABLE ("?") excuses nothing there."""
    theirs = runs[0]
    if all(r == theirs for r in runs):
        return ours != theirs
    if any(len(r) != len(theirs) for r in runs):      # the very instance list is garbage
        cmp.uninitialised += 1
        return False
    if len(ours) != len(theirs):
        return True
    for k, (i, v) in enumerate(ours):
        insts = {r[k][0] for r in runs}
        vals = {json.dumps(r[k][1]) for r in runs}
        cmp.uninitialised += len(insts) > 1 or len(vals) > 1
        if len(insts) == 1 and i != theirs[k][0]:
            return True
        if len(vals) == 1 and v != theirs[k][1]:
            return True
    return False


def mismatches(cmp: Comparison) -> list[str]:
    """Every difference between the two sides, as readable lines."""
    out = []
    for k in cmp.alive:
        n = name_of(k)
        if cmp.ours[n] != cmp.theirs[n]:
            out.append(f"{cmp.texts[k]!r}: ours {cmp.ours[n]} libpcp {cmp.theirs[n]}")
    if cmp.eol_ours != cmp.eol_theirs and cmp.eol_theirs:
        out.append(f"end of log: ours {cmp.eol_ours} libpcp {cmp.eol_theirs}")
        return out
    for b in cmp.bound:
        if cmp.theirs[b.name].desc is None:
            continue
        text = cmp.texts[int(b.name[3:])]
        for f, (mine, plain, theirs) in enumerate(zip(
                cmp.values_ours, cmp.values_intended, cmp.values_theirs)):
            if cmp.eol_ours[f]:
                continue
            got = theirs.get(b.name, [])
            runs = [got] + [other[f].get(b.name, []) for other in cmp.values_again]
            if _values_differ(mine.get(b.name, []), runs, cmp):
                out.append(f"{text!r} fetch {f}: ours {mine.get(b.name)} libpcp {got}"
                           + ("" if all(r == got for r in runs) else f" (other heaps: {runs[1:]})"))
            hit = cmp.deviations[f].get(b.name)
            if plain.get(b.name, []) != got and not hit:
                out.append(f"{text!r} fetch {f}: intended {plain.get(b.name)} differs from "
                           f"libpcp {got} with no deviation recorded")
    return out


def values(cmp: Comparison, k: int, side: str = "theirs") -> list[Any]:
    """Per fetch, libpcp's (or our) values of expression k, decoded to numbers."""
    rows = cmp.values_theirs if side == "theirs" else cmp.values_ours
    out = []
    for row in rows:
        pairs = row.get(name_of(k), [])
        out.append([[i, _decode(v)] for i, v in pairs] if pairs else None)
    return out


def _decode(v: Any) -> Any:
    if isinstance(v, str) and v.startswith("f64:"):
        return struct.unpack(">d", bytes.fromhex(v[4:]))[0]
    if isinstance(v, str) and v.startswith("f32:"):
        return struct.unpack(">f", bytes.fromhex(v[4:]))[0]
    return v
