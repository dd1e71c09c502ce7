"""The replays and derived-metric configurations the corpus records expectations for:
``corpus/plans.json`` names, per case, schedules (as PCP tools take them) and rule sets or
profiles; ``corpus/derive/*.conf`` holds the configuration files. The expected documents
are computed here by the kit's oracles (``expected``) and become files of the case.

An ``interp-*`` fixture case that the plans do not mention gets one forward and one
backward replay of all its metrics of numeric or string type, under both rule sets.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pcpconform.conform.casefile import BASE, Made, declared_clauses
from pcpconform.conform.expected import (
    Outcome,
    derive_outcome,
    document_bytes,
    interp_outcome,
    resolve_schedule,
)
from pcpconform.conform.manifest import ManifestError
from pcpconform.format.pmtypes import PmSem, PmType
from pcpconform.io.archive import Archive
from pcpconform.oracles.derive.state import DEVIATIONS as DERIVE_DEVIATIONS
from pcpconform.oracles.interp.replay import DEVIATIONS as INTERP_DEVIATIONS

__all__ = ["PLANS", "DERIVE_DIR", "load_plans", "attach_expectations"]

PLANS = "plans.json"
DERIVE_DIR = "derive"
RULES = ("pcp-6.0", "pcp-6.3")
PROFILES = ("pcp-6.0", "pcp-6.3", "pcp-7")

_INTERP_ALWAYS = ("INTERP-VER-1", "INTERP-TIME-1", "INTERP-TIME-2", "INTERP-BOUND-1",
                  "INTERP-BOUND-2", "INTERP-FMT-1", "INTERP-CLI-1", "INTERP-CLI-3")
_REASONS = {"no prior": "INTERP-EXIST-1", "no next": "INTERP-EXIST-1", "mark": "INTERP-EXIST-1",
            "not alive": "INTERP-EXIST-2", "counter across mark": "INTERP-EXIST-3"}
_DERIVE_ALWAYS = ("DERIVE-VER-1", "DERIVE-VER-2", "DERIVE-CLI-1", "DERIVE-CFG-1", "DERIVE-LEX-1",
                  "DERIVE-SYN-1", "DERIVE-BIND-1", "DERIVE-EVAL-1", "INTERP-FMT-1")
_NUMERIC = {PmType.I32, PmType.U32, PmType.I64, PmType.U64, PmType.FLOAT, PmType.DOUBLE}
_DEFAULT_SAMPLES = 13


def load_plans(corpus: Path) -> dict[str, Any]:
    path = corpus / PLANS
    if not path.is_file():
        return {"interp": [], "derive": []}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ManifestError(f"{path}: cannot read: {exc}") from None
    if not isinstance(data, dict):
        raise ManifestError(f"{path}: not a JSON object")
    return {"interp": list(data.get("interp", [])), "derive": list(data.get("derive", []))}


def _default_interp(made: Made, archive: Archive) -> list[dict[str, Any]]:
    metrics = [archive.metric_name(int(d.pmid)) for d in archive.descs()
               if d.type in _NUMERIC or d.type == PmType.STRING]
    if not metrics:
        return []
    first = archive.start.total_nsec()
    last = first
    for r in archive.results():
        last = r.timestamp.total_nsec()
    step = max((last - first) // (_DEFAULT_SAMPLES - 1) // 1_000_000, 1)
    return [{"id": "default-fwd", "start": "+0", "interval": f"{step}ms", "samples": _DEFAULT_SAMPLES,
             "metrics": metrics, "rules": list(RULES), "clauses": []},
            {"id": "default-back", "start": "-0", "interval": f"-{step}ms", "samples": _DEFAULT_SAMPLES,
             "metrics": metrics, "rules": list(RULES), "clauses": []}]


def _interp_clauses(archive: Archive, outcome: Outcome, rules: str) -> list[str]:
    out = list(_INTERP_ALWAYS)
    doc = outcome.result or {}
    sems: set[tuple[int, int]] = set()
    for s in doc.get("samples", ()):
        if s["eol"]:
            out.append("INTERP-EOL-1")
        for m in s["metrics"]:
            desc = archive.desc(m["name"])
            if not m["instances"] and desc.sem == PmSem.COUNTER and desc.type not in _NUMERIC:
                out.append("INTERP-EXIST-4")
            for inst in m["instances"]:
                if inst["value"] is None:
                    out.append(_REASONS.get(inst.get("reason", ""), "INTERP-EXIST-1"))
                else:
                    sems.add((int(desc.type), int(desc.sem)))
                    if inst["inst"] == -1:
                        out.append("INTERP-SINGULAR-1")
    for ptype, sem in sems:
        if PmType(ptype) not in _NUMERIC:
            out.append("INTERP-VAL-6")
            continue
        out.append("INTERP-VAL-1")
        if sem == PmSem.COUNTER:
            out.append("INTERP-VAL-2")
        elif rules == "pcp-6.0":
            out.append("INTERP-VAL-3")
        else:
            out.append("INTERP-VAL-4" if sem == PmSem.INSTANT else "INTERP-VAL-5")
    out += [INTERP_DEVIATIONS[d] for d in outcome.deviations if d in INTERP_DEVIATIONS]
    return out


def record_entry(made: Made, key: str, entry: dict[str, Any], outcome: Outcome, stem: str) -> dict[str, Any]:
    """Record ``outcome`` as files of the case and return the entry for case.json."""
    result = None
    if outcome.result is not None:
        result = f"{stem}.json"
        made.files[result] = document_bytes(outcome.result)
    entry["result"] = result
    if key == "derive":
        entry["diagnostics"] = outcome.diagnostics
    entry["deviations"] = outcome.deviations
    if outcome.libpcp_result is not None:
        entry["libpcp_result"] = f"{stem}-libpcp.json"
        made.files[entry["libpcp_result"]] = document_bytes(outcome.libpcp_result)
    return entry


def _plans_for(made: Made, plans: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [p for p in plans if made.id in p.get("cases", ())]


def attach_expectations(corpus: Path, made: list[Made], where: dict[str, Path]) -> None:
    """Add ``expected.interp`` and ``expected.derive`` (with their files) to the cases the
    plans name; ``where`` maps a case id to the directory holding its archive."""
    plans = load_plans(corpus)
    for case in made:
        if case.id not in where:
            continue
        archive = Archive(where[case.id] / BASE)
        interp = _plans_for(case, plans["interp"])
        if not interp and case.id.startswith("interp-") and case.id.endswith("-v3"):
            interp = _default_interp(case, archive)
        clauses: list[str] = []
        entries = []
        for plan in interp:
            schedule = resolve_schedule(archive, plan["start"], plan["interval"], int(plan["samples"]),
                                        plan["metrics"])
            for rules in plan.get("rules", RULES):
                outcome = interp_outcome(archive, schedule, rules)
                entries.append(record_entry(case, "interp", {"id": plan["id"], "schedule": schedule.as_json(),
                                                       "rules": rules}, outcome,
                                      f"interp-{plan['id']}-{rules}"))
                clauses += _interp_clauses(archive, outcome, rules) + list(plan.get("clauses", ()))
        if entries:
            case.data["expected"]["interp"] = entries
            case.data["tags"].append("interp")
        entries = []
        for plan in _plans_for(case, plans["derive"]):
            name = plan["config"]
            path = corpus / DERIVE_DIR / name
            try:
                config = path.read_bytes()
            except OSError as exc:
                raise ManifestError(f"{path}: cannot read: {exc.strerror or exc}") from None
            case.files[name] = config
            schedule = resolve_schedule(archive, plan["start"], plan["interval"], int(plan["samples"]),
                                        plan["metrics"])
            for profile in plan.get("profiles", PROFILES):
                outcome = derive_outcome(archive, config, name, schedule, profile)
                entries.append(record_entry(case, "derive", {"id": plan["id"], "config": name,
                                                       "schedule": schedule.as_json(), "profile": profile},
                                      outcome, f"derive-{plan['id']}-{profile}"))
                clauses += list(_DERIVE_ALWAYS) + declared_clauses(config)
                clauses += [DERIVE_DEVIATIONS[d].split(":", 1)[0] if d in DERIVE_DEVIATIONS
                            else INTERP_DEVIATIONS[d] for d in outcome.deviations]
                if outcome.diagnostics:
                    clauses.append("DERIVE-CLI-3")
        if entries:
            case.data["expected"]["derive"] = entries
            case.data["tags"].append("derive")
        case.data["clauses"] = list(dict.fromkeys(case.data["clauses"] + clauses))
