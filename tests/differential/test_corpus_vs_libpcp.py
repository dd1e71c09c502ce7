"""The corpus's expected outputs against each referee libpcp, so that a third party can use
them without one: every case's verdict against that version's pmlogcheck, every valid
archive as libpcp reads it, every interpolation expectation against PM_MODE_INTERP under
the matching rule set, every derived-metric expectation against the matching profile.

Where libpcp answers differently the difference must be named: a deviation of
spec/implementations.md (``pcpconform.conform.matrix.explain``) for verdicts and reads, the
case's own ``deviations`` (INTERP-DEV-*, DERIVE-DEV-*, whose ``libpcp_result`` is then what
libpcp must return) for replays.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from pcpconform.conform.manifest import Case, load_corpus
from pcpconform.conform.matrix import explain
from pcpconform.dump.undump import unescape_bytes
from pcpconform.format.pmtypes import PmID, PmType
from pcpconform.io.archive import Archive
from pcpconform.oracles.derive.config import ANON, Registry, read_config
from pcpconform.oracles.derive.profiles import profile as get_profile
from tests.differential.libpcp import bridge
from tests.differential.libpcp.compare import our_view, reader_differences
from tests.differential.libpcp.derive_eval_bridge import pm_derive
from tests.differential.libpcp.interp_bridge import pm_interp
from tests.differential.libpcp.referees import LibpcpError, Referee

pytestmark = pytest.mark.libpcp

CORPUS = Path(__file__).resolve().parents[2] / "corpus"
CASES = load_corpus(CORPUS)
ARCHIVES = [c for c in CASES if c.format == "archive"]
VALID = [c for c in ARCHIVES if c.kind == "valid"]


def _impl(referee: Referee) -> str:
    """The referee's name as the conformance matrix names its adapter."""
    return "lib" + referee.name


# -- verdicts -----------------------------------------------------------------------------

def _pmlogcheck_all(referee: Referee, cases: list[Case]) -> dict[str, int]:
    """pmlogcheck's exit status on every case's archive (128 + signal when killed), in one
    run of a shell loop under the referee (a process per case costs seconds per referee)."""
    scratch = Path(tempfile.mkdtemp(prefix="pcpconform-corpus-", dir=(referee.root / "tmp") if referee.root else None))
    try:
        os.chmod(scratch, 0o755)
        for case in cases:
            shutil.copytree(case.path, scratch / case.id, ignore=shutil.ignore_patterns("*.json", "*.jsonl",
                                                                                       "*.yaml", "*.conf"))
        inner = f"/tmp/{scratch.name}" if referee.root else str(scratch)
        # eight at a time: a pmlogcheck is mostly process start-up
        loop = (f"cd {inner} && ls | xargs -P 8 -I{{}} sh -c "
                "'pmlogcheck {}/a >/dev/null 2>&1; echo \"{} $?\"'")
        proc = referee.run(["sh", "-c", loop], timeout=600)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    statuses = dict(line.rsplit(" ", 1) for line in proc.stdout.splitlines() if " " in line)
    return {cid: int(code) for cid, code in statuses.items()}


def test_verdicts_agree_with_pmlogcheck_or_are_named(referee: Referee) -> None:
    """pmlogcheck accepts (exit 0) exactly the cases whose expected verdict is not errors,
    but for the deviations spec/implementations.md names."""
    cases = [c for c in ARCHIVES if "check_options" not in c.data]   # no option for pmlogcheck
    statuses = _pmlogcheck_all(referee, cases)
    assert len(statuses) == len(cases)
    unexplained, explained = [], 0
    for case in cases:
        status = statuses[case.id]
        accepts = status == 0
        if accepts == (case.expected["verdict"] != "errors"):
            continue
        verdict = "crash" if status > 128 else "fail"
        if explain(_impl(referee), "validator", case.id, verdict) is not None:
            explained += 1
            continue
        unexplained.append(f"{case.id}: expected {case.expected['verdict']}, pmlogcheck exits {status}")
    assert unexplained == [], f"{referee.name}: unnamed disagreements:\n" + "\n".join(unexplained)


# -- reading ------------------------------------------------------------------------------

def test_valid_archives_read_alike(referee: Referee) -> None:
    """Every valid archive reads the same in libpcp as in the kit (whose dump is the case's
    expected dump: the sanity check holds them equal)."""
    impl = _impl(referee)

    def read(case: Case) -> str | None:
        try:
            theirs = bridge.pm_read(referee, case.base)
        except LibpcpError:
            if explain(impl, "reader", case.id, "protocol-error") is None:
                return f"{case.id}: {referee.name} cannot read it"
            return None
        diffs = reader_differences(_extractable(theirs, case), our_view(case.base))
        if diffs and explain(impl, "reader", case.id, "fail") is None:
            return f"{case.id}: " + "; ".join(d[:300] for d in diffs[:3])
        return None
    with ThreadPoolExecutor(8) as pool:
        problems = [p for p in pool.map(read, VALID) if p]
    assert problems == [], f"{referee.name}:\n" + "\n".join(problems)


def _extractable(theirs: dict[str, Any], case: Case) -> dict[str, Any]:
    """libpcp's reading with static aggregates put back: pm_read.py extracts values with
    pmExtractValue, which refuses PM_TYPE_AGGREGATE_STATIC (PM_ERR_CONV) in every version;
    their bytes are not compared through the PMAPI here (the dump holds them)."""
    archive = Archive(case.base)
    static = {str(PmID(int(d.pmid))) for d in archive.descs() if d.type == PmType.AGGREGATE_STATIC}
    if not static:
        return theirs
    ours = our_view(case.base)
    for mine, result in zip(ours["results"], theirs["results"]):
        for pmid in static & result["values"].keys():
            if all(v == "error:PM_ERR_CONV" for _, v in result["values"][pmid]["values"]):
                result["values"][pmid] = mine["values"].get(pmid, result["values"][pmid])
    return theirs


# -- tagged values as pm_read.py encodes them ----------------------------------------------

def _encoded(value: dict[str, Any]) -> Any:
    kind = value["type"]
    if kind in ("event", "highres_event"):
        return "event"
    text = str(value["value"])
    if kind == "float":
        return f"f32:{text[2:]}"
    if kind == "double":
        return f"f64:{text[2:]}"
    if kind == "string":
        return "str:" + unescape_bytes(text).split(b"\0", 1)[0].hex()
    if kind in ("aggregate", "aggregate_static"):
        return "agg:" + unescape_bytes(text).hex()
    return int(text)


def _expected_view(doc: dict[str, Any], names: bool = False) -> list[dict[str, Any]]:
    """Per sample: time, end of log, and per metric its [inst, VALUE] pairs (sorted); a
    value the oracle calls unpredictable is left out, and so is a metric that has one."""
    out = []
    for s in doc["samples"]:
        values = {}
        for m in s["metrics"]:
            if any("unpredictable" in (i.get("reason") or "") for i in m["instances"]):
                continue
            key = m["name"] if names else m["pmid"]
            values[key] = sorted([i["inst"], _encoded(i["value"])] for i in m["instances"]
                                 if i["value"] is not None)
        out.append({"time": [s["time"]["sec"], s["time"]["nsec"]], "eol": s["eol"], "values": values})
    return out


def _libpcp_view(samples: list[dict[str, Any]], keys: list[str], expected: list[dict[str, Any]]) -> list[Any]:
    out = []
    for s, want in zip(samples, expected):
        values = {}
        if not s["eol"]:
            for k in keys:
                if k in want["values"]:
                    got = s["values"].get(k)
                    values[k] = sorted(got["values"]) if got and got["numval"] > 0 else []
        out.append({"time": s["time"], "eol": s["eol"], "values": values})
    return out


def _entries(kind: str, key: str, value: str) -> list[tuple[Case, dict[str, Any]]]:
    return [(c, e) for c in VALID for e in c.expected.get(kind, []) if e[key] == value]


# -- interpolation ------------------------------------------------------------------------

def test_interp_expectations_are_what_libpcp_replays(referee: Referee) -> None:
    entries = _entries("interp", "rules", referee.interp_rules)
    assert entries

    def replay(item: tuple[Case, dict[str, Any]]) -> str | None:
        case, entry = item
        doc = json.loads((case.path / (entry.get("libpcp_result") or entry["result"])).read_text("utf-8"))
        sched = entry["schedule"]
        archive = Archive(case.base)
        pmids = [str(PmID(int(archive.desc(m).pmid))) for m in sched["metrics"]]
        got = pm_interp(referee, case.base, sched["start"]["sec"], sched["start"]["nsec"],
                        sched["interval_nsec"], sched["samples"], pmids)
        want = _expected_view(doc)
        if _libpcp_view(got["samples"], pmids, want) != want:
            return f"{case.id} {entry['id']} ({entry['rules']})"
        return None
    with ThreadPoolExecutor(8) as pool:
        problems = [p for p in pool.map(replay, entries) if p]
    assert problems == [], f"{referee.name} replays differently: {problems}"


# -- derived metrics ----------------------------------------------------------------------

def _definitions(config: bytes, fname: str, profile: str) -> tuple[list[list[str]], set[str]]:
    """The config's definitions as pmRegisterDerivedMetric takes them, and the names the
    kit's reader refuses at registration (syntax errors)."""
    registry = Registry(get_profile(profile))
    read_config(config, get_profile(profile), fname, registry)
    pairs, refused = [], set()
    for d in registry.metrics.values():
        if d.name in ANON:
            continue
        pairs.append([d.name, d.expr])
        if not d.registered:
            refused.add(d.name)
    return pairs, refused


def test_derive_expectations_are_what_libpcp_evaluates(referee: Referee) -> None:
    entries = _entries("derive", "profile", referee.derive_profile)
    assert entries
    problems = []
    compared = 0
    for case, entry in entries:
        config = (case.path / entry["config"]).read_bytes()
        pairs, refused = _definitions(config, entry["config"], entry["profile"])
        sched = entry["schedule"]
        answer = pm_derive(referee, {"derived": pairs, "schedule": {
            "start": [sched["start"]["sec"], sched["start"]["nsec"]], "delta": sched["interval_nsec"],
            "count": sched["samples"]}}, case.base)
        where = f"{case.id} {entry['id']} ({entry['profile']})"
        theirs_refused = {n for n, err in answer["register"].items() if err is not None}
        if theirs_refused != refused:
            problems.append(f"{where}: refused {sorted(theirs_refused)}, expected {sorted(refused)}")
        name = entry.get("libpcp_result") or entry["result"]
        doc = json.loads((case.path / name).read_text("utf-8")) if name else {"samples": [], "derived": []}
        bound = {d["name"]: d for d in doc["derived"]}
        unmasked = [n for n, d in bound.items() if not d["masked"]]
        for metric in sched["metrics"]:
            desc = answer["descs"].get(metric, {"error": "not looked up"})
            if metric in bound and bound[metric]["masked"]:
                continue            # libpcp answers with the archive's metric of that name
            if metric in bound:
                mine = bound[metric]
                if "error" in desc or (desc["type"], desc["sem"], desc["units_str"]) != \
                        (mine["type"], mine["sem"], mine["units"]):
                    problems.append(f"{where}: {metric}: libpcp {desc}, expected {mine}")
            elif "error" not in desc and metric not in refused:
                problems.append(f"{where}: {metric} binds in libpcp, not in the expectation")
            text = desc.get("stderr", "").strip()
            if text.startswith("Semantic error") and text.splitlines()[0] not in entry["diagnostics"]:
                problems.append(f"{where}: {metric}: libpcp says {text.splitlines()[0]!r}")
        want = _expected_view(doc, names=True)
        want = [{**s, "values": {n: v for n, v in s["values"].items() if n in unmasked}} for s in want]
        got = _libpcp_view(answer.get("samples", []), unmasked, want)
        compared += sum(len(v) for s in want for v in s["values"].values())
        if bound and got != want:
            problems.append(f"{where}: values differ")
    assert problems == [], f"{referee.name}:\n" + "\n".join(problems)
    assert compared > 100        # values were compared, not only descriptors


def test_the_comparison_fails_on_a_planted_difference(referee: Referee, tmp_path: Path) -> None:
    """A corrupted expectation is caught: the replay comparison is not vacuous."""
    case, entry = _entries("interp", "rules", referee.interp_rules)[0]
    doc = json.loads((case.path / entry["result"]).read_text("utf-8"))
    want = _expected_view(doc)
    sched = entry["schedule"]
    archive = Archive(case.base)
    pmids = [str(PmID(int(archive.desc(m).pmid))) for m in sched["metrics"]]
    got = _libpcp_view(pm_interp(referee, case.base, sched["start"]["sec"], sched["start"]["nsec"],
                                 sched["interval_nsec"], sched["samples"], pmids)["samples"], pmids, want)
    planted = json.loads(json.dumps(want))
    first = next(v for s in planted for v in s["values"].values() if v)
    first[0][1] = "planted"
    assert got == want and got != planted
