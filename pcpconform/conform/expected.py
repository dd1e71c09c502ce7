"""The interpolation and derived-metric expectations of a case, computed by the kit's
oracles: one replay (``expected.interp``) or one configuration file replayed
(``expected.derive``) per entry, as corpus/README.md specifies them.

A plan names a schedule as PCP tools take it (``start`` relative to the archive, an
interval, a count); ``resolve_schedule`` turns it into the absolute schedule a case
records. Each result is computed twice: under the rules, and with every named libpcp
deviation emulated; when they differ, the deviations that make the difference are named
and the libpcp-like document is kept beside the rules' one.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pcpconform.format.pmtypes import PmID, Timestamp
from pcpconform.io.archive import Archive
from pcpconform.io.archiveset import open_source
from pcpconform.oracles.derive.bind import Bound
from pcpconform.oracles.derive.config import Registry, read_config
from pcpconform.oracles.derive.document import derive_document_json
from pcpconform.oracles.derive.evaluate import (
    EMULATABLE,
    Evaluator,
    Unpredictable,
)
from pcpconform.oracles.derive.profiles import profile as get_profile
from pcpconform.oracles.derive.session import bind_wanted, registered
from pcpconform.oracles.interp.replay import DEVIATIONS as INTERP_DEVIATIONS
from pcpconform.oracles.interp.replay import NoValue, interpolate
from pcpconform.oracles.interp.report import samples_json
from pcpconform.oracles.interp.schedule import parse_interval, parse_when

__all__ = ["Schedule", "Outcome", "resolve_schedule", "interp_document", "interp_outcome",
           "derive_document", "derive_outcome", "document_bytes", "replay_source"]


@dataclass(frozen=True)
class Schedule:
    """Fetch k of ``samples`` is at ``start + k * interval_nsec``, for ``metrics``."""

    start: Timestamp
    interval_nsec: int
    samples: int
    metrics: tuple[str, ...]

    def as_json(self) -> dict[str, Any]:
        return {"start": {"sec": self.start.sec, "nsec": self.start.nsec},
                "interval_nsec": self.interval_nsec, "samples": self.samples,
                "metrics": list(self.metrics)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Schedule:
        return cls(Timestamp(int(data["start"]["sec"]), int(data["start"]["nsec"])),
                   int(data["interval_nsec"]), int(data["samples"]), tuple(data["metrics"]))


def replay_source(base: str | Path, profile: str, interval_nsec: int) -> Archive:
    """What a replay of ``base`` reads: the archive, or the archive set (a directory or a
    comma-separated list) under the set profile of the rules or derive profile ``profile``
    (the names are the same, SET-VER-1), in the schedule's direction (SET-REPLAY-1, -3)."""
    return open_source(base, profile=profile, direction=1 if interval_nsec >= 0 else -1)


def resolve_schedule(archive: Archive, start: str, interval: str, samples: int,
                     metrics: Sequence[str]) -> Schedule:
    """A plan's schedule made absolute: ``start`` as PCP's -S takes it (``+5s`` from the
    archive's first record, ``-5s`` back from its last)."""
    first, last = archive.start, _last_record(archive)
    return Schedule(parse_when(start, "start", first, last), parse_interval(interval, "interval"),
                    samples, tuple(metrics))


def _last_record(archive: Archive) -> Timestamp:
    last = archive.start
    for result in archive.results():
        last = result.timestamp
    return last


@dataclass
class Outcome:
    """One entry's documents: the rules' and, when libpcp departs from them on this
    schedule, the one with the named deviations applied."""

    result: dict[str, Any] | None
    deviations: list[str] = field(default_factory=list)
    libpcp_result: dict[str, Any] | None = None
    diagnostics: list[str] = field(default_factory=list)


def document_bytes(doc: dict[str, Any]) -> bytes:
    """A document as the case stores it: compact JSON, one line."""
    return (json.dumps(doc, separators=(",", ":"), ensure_ascii=True) + "\n").encode("ascii")


def interp_document(archive: Archive, schedule: Schedule, rules: str,
                    emulate: Iterable[str] = ()) -> dict[str, Any]:
    """The INTERP-FMT-1 document of a replay."""
    emulated = tuple(sorted(emulate))
    samples = interpolate(archive, list(schedule.metrics), schedule.start, schedule.interval_nsec,
                          schedule.samples, rules=rules, emulate=emulated)
    return samples_json(archive, samples, rules, emulate=emulated)


def _named(compute: Any, every: Sequence[str]) -> tuple[Any, list[str], dict[str, Any] | None]:
    """The rules' document, the deviations (of ``every``) that change it, and the document
    with them applied (None when none does)."""
    rules_doc = compute(())
    all_doc = compute(tuple(every))
    if _values(all_doc) == _values(rules_doc):
        return rules_doc, [], None
    named = [d for d in every if _values(compute((d,))) != _values(rules_doc)]
    libpcp = compute(tuple(named))
    if _values(libpcp) != _values(all_doc):
        named, libpcp = list(every), all_doc
    return rules_doc, named, libpcp


def _values(doc: dict[str, Any] | None) -> Any:
    """A document without the members that say how it was made (``emulate``)."""
    if doc is None:
        return None
    return {k: v for k, v in doc.items() if k != "emulate"}


def interp_outcome(archive: Archive, schedule: Schedule, rules: str) -> Outcome:
    def compute(emulate: tuple[str, ...]) -> dict[str, Any]:
        return interp_document(archive, schedule, rules, emulate)
    doc, named, libpcp = _named(compute, sorted(INTERP_DEVIATIONS))
    return Outcome(doc, named, libpcp)


# -- derived metrics ----------------------------------------------------------------------

@dataclass
class _Bound:
    bounds: list[Bound]
    pmids: dict[str, PmID]
    diagnostics: list[str]


def _bind_config(archive: Archive, config: bytes, fname: str, profile: str,
                 wanted: Sequence[str]) -> _Bound:
    """Register ``config`` as pmLoadDerivedConfig does and bind ``wanted`` (all when empty)
    in order, with the lines libpcp prints (as ``pcpconform derive`` does)."""
    prof = get_profile(profile)
    registry = Registry(prof)
    res = read_config(config, prof, fname, registry)
    defs = registered(registry)
    binding = bind_wanted(defs, wanted, archive, prof)
    messages = list(res.diagnostics) + binding.messages
    messages += [f"{name}: not a registered derived metric" for name in binding.unknown]
    pmids = defs.by_name()
    return _Bound(binding.bounds, {b.name: PmID(int(pmids[b.name].pmid)) for b in binding.bounds}, messages)


def derive_document(archive: Archive, config: bytes, fname: str, schedule: Schedule, profile: str,
                    emulate: Iterable[str] = ()) -> tuple[dict[str, Any] | None, list[str]]:
    """The DERIVE-CLI-1 document (None when nothing binds) and libpcp's lines."""
    bound = _bind_config(archive, config, fname, profile, list(schedule.metrics))
    if not bound.bounds:
        return None, bound.diagnostics
    wanted = set(emulate)
    ev = Evaluator(archive, bound.bounds, get_profile(profile), emulate=wanted & EMULATABLE,
                   interp_emulate=wanted & INTERP_DEVIATIONS.keys())
    ev.pmids = dict(bound.pmids)
    derived = ev.schedule(schedule.start, schedule.interval_nsec, schedule.samples)
    samples = []
    for ds in derived:
        s = ev.interp_sample(ds)
        for insts in s.values.values():
            for inst, v in insts.items():
                if isinstance(v, Unpredictable):
                    insts[inst] = NoValue("unpredictable (libpcp reads uninitialised memory)")
        samples.append(s)
    doc = derive_document_json(ev, bound.bounds, samples, derived, profile, emulate=tuple(sorted(wanted)))
    return doc, bound.diagnostics


def _touched(doc: dict[str, Any] | None) -> set[str]:
    """The derived-metric deviations a document's values touched (its per-metric lists)."""
    return {d for s in (doc or {}).get("samples", ()) for m in s["metrics"] for d in m.get("deviations", ())}


def derive_outcome(archive: Archive, config: bytes, fname: str, schedule: Schedule,
                   profile: str) -> Outcome:
    first, lines = derive_document(archive, config, fname, schedule, profile)

    def compute(emulate: tuple[str, ...]) -> dict[str, Any] | None:
        if not emulate:
            return first
        return derive_document(archive, config, fname, schedule, profile, emulate)[0]
    # only a deviation the values touched, or one of the operands' replay, can change them
    every = sorted((_touched(first) & EMULATABLE) | INTERP_DEVIATIONS.keys())
    doc, named, libpcp = _named(compute, every)
    return Outcome(doc, named, libpcp, list(lines))
