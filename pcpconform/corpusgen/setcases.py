"""The archive-set cases of the corpus (``format: set``, corpus/README.md): the sets of
``pcpconform.corpusgen.invalid.sets.SET_CASES`` with their expected verdicts and codes (the
members' own and the rules across them), the dump of every set libpcp replays, and replays
and derived metrics across its seams under each rule set and profile.

A case's members lie flat in its directory (libpcp's scan of that directory finds exactly
them); ``set.members`` names them in time order and ``set.list``, when the case is a
comma-separated list, in the order the list gives them.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from pcpconform.check.rules import RULES, Severity
from pcpconform.check.sets import check_set_and_members
from pcpconform.conform.casefile import Made, case_data, dir_files, dump_bytes
from pcpconform.conform.expected import Schedule, derive_outcome, interp_outcome, replay_source
from pcpconform.corpusgen.invalid.sets import SET_CASES, SetCase, build_set_case
from pcpconform.corpusgen.plans import record_entry
from pcpconform.format.pmtypes import Timestamp
from pcpconform.io.archive import Archive
from pcpconform.io.archiveset import ArchiveSet
from pcpconform.io.setform import namelist
from pcpconform.version import __version__

__all__ = ["set_cases"]

INTERP_RULES = ("pcp-6.0", "pcp-6.3")
DERIVE_PROFILES = ("pcp-6.0", "pcp-6.3", "pcp-7")
METRICS = ("seed.counter", "seed.instant", "seed.discrete")
DERIVED = ("seed.rate", "seed.sum", "seed.ratio", "seed.minus", "seed.cmp", "seed.scaled")
CONFIG = "seed.conf"
#: the cases whose replays and derived metrics are recorded (the corpus stays small: the
#: random differential test covers the rest)
REPLAYED = ("set-gaps", "set-touch", "set-touch-1ms", "set-list")
DERIVED_ON = ("set-gaps",)


def _schedules(s: ArchiveSet, metrics: tuple[str, ...] = METRICS) -> list[tuple[str, Schedule]]:
    """Forwards from before the first member to past the last, and backwards over the same,
    at a step that lands between records and on none of the seams' marks."""
    end = s.end()
    assert end is not None
    lo, hi = s.start.total_nsec(), end.total_nsec()
    count = 24
    step = (hi - lo + 5_000_000_000) // (count - 2) + 1_000_003
    return [("fwd", Schedule(Timestamp.from_nsec(lo - 3_000_000_000), step, count, metrics)),
            ("back", Schedule(Timestamp.from_nsec(hi + 2_100_000_000), -step, count, metrics))]


def _case(case: SetCase, tmp: Path, corpus: Path) -> Made:
    directory = tmp / case.name
    source = build_set_case(case, directory)
    files = dir_files(directory)
    members = sorted({Path(n).name for n in namelist(directory)}, key=lambda n: (_start(directory / n), n))
    report = check_set_and_members(source)
    errors = sorted({d.code for d in report.diagnostics if d.severity == Severity.ERROR})
    others = sorted({d.code for d in report.diagnostics} - set(errors))
    kind = "invalid" if errors else "valid"
    verdict = "errors" if errors else "warnings" if others else "clean"
    versions = sorted({_version(directory / n) for n in members})
    tags = ["set", "fixture:interp-seed", "origin:pcpconform-generate"] + (
        [f"area:{(errors or others)[0].split('.')[0]}"] if errors or others else [])
    if others and not errors:
        tags.append("quirk")            # libpcp reads the set, and it is odd
    clauses = list(dict.fromkeys([*case.clauses, *(RULES[c].clause for c in errors + others)]))
    expected: dict[str, Any] = {"verdict": verdict, "error_codes": errors, "warning_codes": others,
                                "dump": None}
    origin = {"writer": "pcpconform.corpusgen.invalid.sets", "version": __version__,
              "source": "pcpconform/fixtures/bundled/interp-seed.yaml"}
    data = case_data(case.name, kind, case.title, tags, clauses, versions[0], origin, expected)
    del data["archive"]
    data["archive_versions"] = versions
    data["format"] = "set"
    data["set"] = {"members": members}
    if case.order is not None:
        data["set"]["list"] = [Path(p).name for p in source.split(",")]
    made = Made(data, dict(files))
    if kind == "valid":
        expected["dump"] = "dump.jsonl"
        made.files["dump.jsonl"] = dump_bytes(Path(source))
    if case.replays and case.name in REPLAYED:   # libpcp replays the set (hidden records too)
        _replays(made, source, corpus, derive=case.name in DERIVED_ON)
    return made


def _start(base: Path) -> int:
    return Archive(base).start.total_nsec()


def _version(base: Path) -> int:
    return Archive(base).version


def _replays(made: Made, source: str, corpus: Path, *, derive: bool, metrics: tuple[str, ...] = METRICS) -> None:
    whole = ArchiveSet(source)
    interp = []
    for sid, schedule in _schedules(whole, metrics):
        for rules in INTERP_RULES:
            archive = replay_source(source, rules, schedule.interval_nsec)
            interp.append(record_entry(made, "interp", {"id": sid, "schedule": schedule.as_json(), "rules": rules},
                                 interp_outcome(archive, schedule, rules), f"interp-{sid}-{rules}"))
    made.data["expected"]["interp"] = interp
    made.data["tags"].append("interp")
    if derive:
        config = (corpus / "derive" / CONFIG).read_bytes()
        made.files[CONFIG] = config
        entries = []
        _, forward = _schedules(whole)[0]
        schedule = Schedule(forward.start, forward.interval_nsec, forward.samples, DERIVED)
        for profile in DERIVE_PROFILES:
            archive = replay_source(source, profile, schedule.interval_nsec)
            outcome = derive_outcome(archive, config, CONFIG, schedule, profile)
            entries.append(record_entry(made, "derive", {"id": "seed", "config": CONFIG, "schedule": schedule.as_json(),
                                                   "profile": profile}, outcome, f"derive-seed-{profile}"))
        made.data["expected"]["derive"] = entries
        made.data["tags"].append("derive")
    made.data["clauses"] = list(dict.fromkeys(made.data["clauses"] + ["SET-REPLAY-1", "SET-REPLAY-3", "SET-EOL-1"]))


def _source_case(path: Path) -> Made:
    """A set libpcp's tools wrote, committed under corpus/sources/set-*/ (its members flat,
    and source.json), with the verdict, the dump and replays of its first metrics."""
    meta = json.loads((path / "source.json").read_text(encoding="utf-8"))
    files = {n: c for n, c in dir_files(path).items() if n != "source.json"}
    source = str(path)
    whole = ArchiveSet(source)
    report = check_set_and_members(source)
    errors = sorted({d.code for d in report.diagnostics if d.severity == Severity.ERROR})
    others = sorted({d.code for d in report.diagnostics} - set(errors))
    kind = "invalid" if errors else "valid"
    verdict = "errors" if errors else "warnings" if others else "clean"
    tags = ["set", *meta["tags"], *(["quirk"] if others and not errors else [])]
    expected: dict[str, Any] = {"verdict": verdict, "error_codes": errors, "warning_codes": others,
                                "dump": None}
    versions = sorted({m.archive.version for m in whole.members})
    clauses = list(dict.fromkeys([*meta["clauses"], "SET-FORM-1", *(RULES[c].clause for c in errors + others)]))
    data = case_data(path.name, kind, meta["title"], tags, clauses, versions[0], dict(meta["origin"]), expected)
    del data["archive"]
    data["archive_versions"] = versions
    data["format"] = "set"
    data["set"] = {"members": [Path(m.name).name for m in whole.members]}
    made = Made(data, files)
    if kind == "valid":
        expected["dump"] = "dump.jsonl"
        made.files["dump.jsonl"] = dump_bytes(path)
        metrics = tuple(d.names[0] for d in sorted(whole.descs(), key=lambda d: int(d.pmid)) if d.names)[:3]
        _replays(made, source, path, derive=False, metrics=metrics)
    return made


def set_cases(corpus: Path) -> list[Made]:
    """Every set case, as the kit builds it now: the kit's, then libpcp's tools'."""
    with tempfile.TemporaryDirectory(prefix="pcpconform-sets-") as name:
        made = [_case(case, Path(name), corpus) for case in SET_CASES]
    root = corpus / "sources"
    for path in sorted(root.glob("set-*")) if root.is_dir() else []:
        made.append(_source_case(path))
    return made
