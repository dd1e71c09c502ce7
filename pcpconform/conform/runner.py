"""Running the corpus against an implementation under test (spec/conformance.md).

    report = run_conformance("corpus", "python3 my_adapter.py", suites=("validator",))
    report.exit_status   # 0 every case run passed, 1 a case did not

The cases of each chosen suite are *units*: a case of the validator, reader or writer
suite, or one interp or derive expectation of a case (``CASE/ENTRY``). Each unit runs on a
private copy of the case's files in a temporary directory of its own (CONF-RUN-1), with a
per-unit timeout, in the one-shot form (a process per unit) or the persistent form (one
process per worker, CONF-PERSIST-*); units run on ``jobs`` threads, or on the workers of
a Dask cluster (``dask``: the same results, in the same order). After each unit the
runner checks that the implementation changed neither its input nor anything beside its
directory nor the case in the corpus (CONF-ISO-1).
"""

from __future__ import annotations

import contextlib
import fnmatch
import io
import json
import os
import queue
import shutil
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pcpconform.cluster import Cluster, worker_problem
from pcpconform.conform.isolation import WORK_DIR, input_digests, isolation_problem, stat_tree
from pcpconform.conform.manifest import Case, ManifestError, load_corpus
from pcpconform.conform.persistent import Reply, Session
from pcpconform.conform.protocol import (
    MMV_SUITES,
    OPTIONS_ENV,
    SUITES,
    Capabilities,
    Outcome,
    ProtocolViolation,
    command_argv,
    invoke,
    parse_capabilities,
)
from pcpconform.conform.verdicts import (
    FAILING,
    CaseResult,
    Verdict,
    grade_derive,
    grade_interp,
    grade_reader,
    grade_validator,
    grade_writer,
    isolation_failure,
)
from pcpconform.errors import UsageError
from pcpconform.io.setform import log_base_name
from pcpconform.version import __version__

__all__ = ["ConformReport", "Sessions", "Unit", "select_units", "select_cases", "skip_reason", "run_unit", "run_case",
           "expected_mmv_dump",
           "query_capabilities", "run_conformance", "DEFAULT_TIMEOUT", "WORK_DIR", "REQUEST_FILE"]

DEFAULT_TIMEOUT = 60.0
#: the request file of an interp or derive unit, in its private directory
REQUEST_FILE = "request.json"
#: what a writer writes, in its private directory
WRITTEN = "written"
#: the directory in ``work`` holding an archive set's members (CONF-SET-1)
SET_DIR = "set"

Progress = Callable[["CaseResult"], None]


@dataclass
class ConformReport:
    """Every unit's result, in suite then corpus order, and what the implementation said
    it is."""

    capabilities: Capabilities
    results: list[CaseResult] = field(default_factory=list)
    form: str = "one-shot"
    seconds: float = 0.0
    corpus: str = ""

    def counts(self, suite: str | None = None) -> dict[str, int]:
        """Verdict -> how many units got it (every verdict listed, zero or not)."""
        got = Counter(r.verdict for r in self.results if suite is None or r.suite == suite)
        return {v.value: got.get(v, 0) for v in Verdict}

    @property
    def suites(self) -> list[str]:
        return list(dict.fromkeys(r.suite for r in self.results))

    @property
    def ok(self) -> bool:
        return not any(r.verdict in FAILING for r in self.results)

    @property
    def exit_status(self) -> int:
        return 0 if self.ok else 1

    def as_json(self) -> dict[str, Any]:
        return {"implementation": self.capabilities.as_json(), "ok": self.ok,
                "run_info": {"kit": __version__, "form": self.form, "corpus": self.corpus,
                             "seconds": round(self.seconds, 3)},
                "summary": {s: self.counts(s) for s in self.suites}, "total": self.counts(),
                "results": [r.as_json() for r in self.results]}


@dataclass(frozen=True)
class Unit:
    """One thing to run: a case of a suite, and for interp and derive one expectation of it."""

    suite: str
    case: Case
    name: str
    entry: dict[str, Any] | None = None


def _is_archive(case: Case) -> bool:
    """An archive or archive-set case: not the MMV suites'."""
    return bool(case.data.get("format", "archive") in ("archive", "set"))


def _entries(case: Case, suite: str) -> list[tuple[str, dict[str, Any]]]:
    """(unit name, expectation) for the case's interp or derive entries; an entry id shared
    by two entries of the case gets its rule set or profile appended."""
    entries = list(case.data["expected"].get(suite, ()))
    ids = Counter(str(e["id"]) for e in entries)
    out = []
    for e in entries:
        suffix = f"@{e.get('rules') or e.get('profile')}" if ids[str(e["id"])] > 1 else ""
        out.append((f"{case.id}/{e['id']}{suffix}", e))
    return out


def _units_of(case: Case, suite: str) -> list[Unit]:
    if _is_archive(case) == (suite in MMV_SUITES):     # MMV cases are the MMV suites' alone
        return []
    expected = case.data["expected"]
    if suite == "mmv-validator":
        return [Unit(suite, case, case.id)]
    if suite == "mmv-reader":       # a file with errors reads as no one's answer (CONF-MMV-2)
        return [Unit(suite, case, case.id)] if expected["verdict"] != "errors" else []
    if suite == "mmv-writer":       # a case with a fixture and its export (CONF-MMVW-1)
        return [Unit(suite, case, case.id)] if case.data.get("fixture") and expected.get("export") else []
    if suite == "validator":
        return [Unit(suite, case, case.id)]
    if suite == "reader":
        return [Unit(suite, case, case.id)] if case.kind == "valid" and expected.get("dump") else []
    if suite == "writer":
        return [Unit(suite, case, case.id)] if case.data.get("fixture") and expected.get("dump") else []
    return [Unit(suite, case, name, entry) for name, entry in _entries(case, suite)]


def select_units(cases: Sequence[Case], suites: Sequence[str], globs: Sequence[str] = ()) -> list[Unit]:
    """The units of each chosen suite whose name or case id matches a glob."""
    for suite in suites:
        if suite not in SUITES:
            raise UsageError(f"unknown suite {suite!r} (known: {', '.join(SUITES)})")
    chosen = [u for s in dict.fromkeys(suites) for c in cases for u in _units_of(c, s)
              if not globs or any(fnmatch.fnmatchcase(u.name, g) or fnmatch.fnmatchcase(c.id, g) for g in globs)]
    if not chosen:
        raise UsageError(f"no case of suite {', '.join(suites)} matches {' or '.join(globs) or '*'}")
    return chosen


def select_cases(cases: Sequence[Case], suites: Sequence[str],
                 globs: Sequence[str] = ()) -> list[tuple[str, Case]]:
    """(suite, case) of each unit of :func:`select_units`."""
    return [(u.suite, u.case) for u in select_units(cases, suites, globs)]


def skip_reason(unit: Unit | Case, suite: str | None, caps: Capabilities) -> str | None:
    """Why the implementation cannot take the unit (CONF-CAP-2), or None."""
    if isinstance(unit, Case):
        assert suite is not None
        unit = Unit(suite, unit, unit.id)
    suite, case = unit.suite, unit.case
    if suite not in caps.suites:
        return f"the implementation does not offer the {suite} suite"
    if suite == "mmv-writer":       # any version from the one the content needs (CONF-MMVW-3)
        least = min(case.data["mmv_versions"])
        if not any(v >= least for v in caps.mmv_versions):
            return f"the implementation does not write MMV version {least} or later"
    elif suite in MMV_SUITES:
        missing = [v for v in case.data["mmv_versions"] if v not in caps.mmv_versions]
        if missing:
            return f"the implementation does not read MMV version {', '.join(map(str, missing))}"
    else:
        missing = [v for v in case.data["archive_versions"] if v not in caps.archive_versions]
        if missing:
            return f"the implementation does not read archive version {', '.join(map(str, missing))}"
    # a tag the implementation names alone, or as SUITE/TAG for one suite (CONF-CAP-1)
    tags = [t for t in case.data.get("tags", ()) if t in caps.unsupported or f"{suite}/{t}" in caps.unsupported]
    if tags:
        return f"the implementation does not handle {', '.join(tags)}"
    options = [o for o in case.data.get("check_options", {}) if o not in caps.options]
    if suite == "validator" and options:
        return f"the implementation does not take the option {', '.join(options)}"
    entry = unit.entry or {}
    if suite == "interp" and caps.rules and entry["rules"] not in caps.rules:
        return f"the implementation does not answer under the {entry['rules']} rules"
    if suite == "derive" and caps.profiles and entry["profile"] not in caps.profiles:
        return f"the implementation does not answer under the {entry['profile']} profile"
    return None


def query_capabilities(argv: Sequence[str], timeout: float) -> Capabilities:
    """``CMD --capabilities`` (CONF-CAP-1); UsageError if the command cannot say."""
    with tempfile.TemporaryDirectory(prefix="pcpconform-conform-", ignore_cleanup_errors=True) as tmp:
        try:
            outcome = invoke([*argv, "--capabilities"], Path(tmp), timeout)
        except OSError as exc:
            raise UsageError(f"cannot run {argv[0]}: {exc.strerror or exc}") from None
    if outcome.returncode != 0:
        what = "timed out" if outcome.returncode is None else f"exited with status {outcome.returncode}"
        tail = outcome.stderr_tail(200)
        raise UsageError(f"{argv[0]} --capabilities {what}" + (f": {tail}" if tail else ""))
    try:
        return parse_capabilities(outcome.stdout)
    except ProtocolViolation as exc:
        raise UsageError(str(exc)) from None


# -- a unit's private directory ------------------------------------------------------------


def _private_copy(unit: Unit, work: Path) -> Path:
    """Copy the case's files the unit needs (never its expected outputs) into ``work``;
    the archive's base name there. An archive set's members go into ``work/set``, and the
    set is that directory, or its members joined with commas (CONF-SET-1)."""
    case, entry = unit.case, unit.entry or {}
    expected = case.data["expected"]
    outputs = {expected.get("dump"), expected.get("export")} | {
        e.get(k) for s in ("interp", "derive") for e in expected.get(s, ()) for k in ("result", "libpcp_result")}
    fixture = case.data.get("fixture")
    members = set(case.data["set"]["members"]) if case.format == "set" else set()
    if members:
        (work / SET_DIR).mkdir()
    for name in case.data["files"]:
        # a writer gets its fixture alone: the archive it is to write is the answer
        if name in outputs or (name == fixture) != (unit.suite in ("writer", "mmv-writer")):
            continue
        if unit.suite == "derive" and name.endswith(".conf") and name != entry.get("config"):
            continue
        if (case.path / name).is_file():
            found = log_base_name(name)
            inside = members and found is not None and found[0] in members
            shutil.copyfile(case.path / name, work / SET_DIR / name if inside else work / name)
    if members:
        listed = case.data["set"].get("list")
        return Path(",".join(str(work / SET_DIR / m) for m in listed)) if listed else work / SET_DIR
    return work / str(case.data["file" if unit.suite in MMV_SUITES else "archive"])


def _args(unit: Unit, work: Path, base: Path) -> list[str]:
    """The words after ``CMD`` for this unit (CONF-RUN-1, CONF-WRITE-1, CONF-INTERP-1,
    CONF-DERIVE-1); an interp or derive unit's request goes into a file beside the archive."""
    if unit.suite == "mmv-writer":   # the fixture, and the file to write under the case's name
        return ["mmv-writer", str(work / str(unit.case.data["fixture"])), str(base)]
    if unit.suite in ("validator", "reader", *MMV_SUITES):
        return [unit.suite, str(base)]
    if unit.suite == "writer":
        return ["writer", str(work / str(unit.case.data["fixture"])), str(work / WRITTEN),
                str(unit.case.data["archive_versions"][0])]
    entry = unit.entry or {}
    request: dict[str, Any] = {"schedule": entry["schedule"]}
    if unit.suite == "interp":
        request["rules"] = entry["rules"]
    else:
        request["profile"], request["config"] = entry["profile"], str(work / str(entry["config"]))
    (work / REQUEST_FILE).write_text(json.dumps(request, indent=1) + "\n", encoding="utf-8")
    return [unit.suite, str(base), str(work / REQUEST_FILE)]


# -- running -------------------------------------------------------------------------------


def _expected_json(case: Case, name: str | None) -> Any:
    return None if name is None else json.loads((case.path / name).read_text(encoding="utf-8"))


def expected_mmv_dump(case: Case) -> bytes:
    """The mmv-reader answer to an MMV case: the kit's dump of its file (CONF-MMV-2; the
    corpus holds no MMV dumps, and the kit's MMV reader is itself tested against libpcp's
    PMDA by tests/differential)."""
    from pcpconform.dump.mmv import dump_mmv_bytes  # numpy: only for MMV units

    name = str(case.data["file"])
    out = io.StringIO(newline="\n")
    dump_mmv_bytes((case.path / name).read_bytes(), name, out)
    return out.getvalue().encode("utf-8")


def _semantics(case: Case) -> dict[str, str]:
    """pmid -> semantics name, from the case's expected dump (to name an interp clause)."""
    dump = case.data["expected"].get("dump")
    if not dump:
        return {}
    out = {}
    for line in (case.path / str(dump)).read_text(encoding="utf-8").splitlines():
        if '"kind":"desc"' in line:
            d = json.loads(line)
            out[str(d["pmid"])] = str(d["sem"])
    return out


def _grade(unit: Unit, outcome: Outcome, timeout: float, work: Path) -> CaseResult:
    case, entry = unit.case, unit.entry or {}
    if unit.suite == "validator":
        return grade_validator(case, outcome, timeout)
    if unit.suite == "reader":
        return grade_reader(case, outcome, timeout, (case.path / str(case.expected["dump"])).read_bytes())
    if unit.suite == "mmv-validator":
        return grade_validator(case, outcome, timeout, unit.suite)
    if unit.suite == "mmv-reader":
        return grade_reader(case, outcome, timeout, expected_mmv_dump(case), unit.suite)
    if unit.suite == "mmv-writer":
        from pcpconform.conform.mmv_writer import grade_mmv_writer

        return grade_mmv_writer(case, outcome, timeout, work / str(case.data["file"]),
                                _expected_json(case, case.expected["export"]))
    if unit.suite == "writer":
        return grade_writer(case, outcome, timeout, work / WRITTEN,
                            (case.path / str(case.expected["dump"])).read_bytes())
    sems = _semantics(case)
    expected = _expected_json(case, entry.get("result"))
    libpcp = _expected_json(case, entry.get("libpcp_result"))
    if unit.suite == "interp":
        others = {str(e["rules"]): _expected_json(case, e["result"]) for e in case.data["expected"]["interp"]
                  if e["schedule"] == entry["schedule"] and e["rules"] != entry["rules"]}
        return grade_interp(case, unit.name, outcome, timeout, expected, libpcp, sems, others)
    return grade_derive(case, unit.name, outcome, timeout, expected, libpcp, list(entry["diagnostics"]), sems,
                        str(work))


class Sessions:
    """The persistent processes: one per worker thread, each in a directory of its own."""

    def __init__(self, argv: Sequence[str], root: Path, timeout: float) -> None:
        self.argv, self.root, self.timeout = list(argv), root, timeout
        self.idle: queue.Queue[Session] = queue.Queue()
        self.all: list[Session] = []
        self.lock = threading.Lock()
        self.seq = 0

    def first(self) -> Capabilities:
        """Start one process and return what its handshake says (CONF-PERSIST-2)."""
        session = self._new()
        try:
            caps = session.start()
        except (ProtocolViolation, OSError) as exc:
            session.kill()
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            raise UsageError(f"cannot start {self.argv[0]} {' '.join(self.argv[1:])} --persistent: {why}") from None
        self.idle.put(session)
        return caps

    def _new(self) -> Session:
        with self.lock:
            where = self.root / f"session-{len(self.all)}"
            where.mkdir()
            session = Session(self.argv, where, start_timeout=self.timeout)
            self.all.append(session)
            return session

    @contextlib.contextmanager
    def one(self) -> Iterator[Session]:
        try:
            session = self.idle.get_nowait()
        except queue.Empty:
            session = self._new()
        try:
            yield session
        finally:
            self.idle.put(session)

    def next_seq(self) -> int:
        with self.lock:
            self.seq += 1
            return self.seq

    def stop(self) -> None:
        for session in self.all:
            session.stop()


def _from_reply(unit: Unit, reply: Reply, timeout: float, work: Path) -> CaseResult:
    clauses = list(unit.case.data["clauses"])
    if reply.skipped is not None:
        return CaseResult(unit.name, unit.suite, Verdict.SKIP, f"skipped by the implementation: {reply.skipped}",
                          seconds=reply.seconds)
    if reply.crashed is not None:
        return CaseResult(unit.name, unit.suite, Verdict.CRASH, reply.crashed, clauses, seconds=reply.seconds,
                          stderr=reply.stderr)
    if reply.timed_out:
        return CaseResult(unit.name, unit.suite, Verdict.TIMEOUT, f"killed after the {timeout:g} s timeout",
                          clauses, seconds=reply.seconds, stderr=reply.stderr)
    if reply.violation is not None or reply.outcome is None:
        return CaseResult(unit.name, unit.suite, Verdict.PROTOCOL_ERROR, reply.violation or "no answer",
                          ["CONF-PERSIST-3"], seconds=reply.seconds, stderr=reply.stderr)
    answer = reply.outcome
    stderr = (answer.stderr.decode("utf-8", "replace") + "\n" + reply.stderr).strip().encode("utf-8")
    return _grade(unit, Outcome(answer.returncode, answer.stdout, stderr, reply.seconds), timeout, work)


def run_unit(argv: Sequence[str], unit: Unit, caps: Capabilities, timeout: float, *,
             sessions: Sessions | None = None, seq: int | None = None) -> CaseResult:
    """One unit: skipped, or run on a private copy and graded (CONF-RUN-1..3, CONF-ISO-1).
    ``seq`` is the persistent request's number (default: the next of ``sessions``)."""
    why = skip_reason(unit, None, caps)
    if why is not None:
        return CaseResult(unit.name, unit.suite, Verdict.SKIP, why)
    try:
        return _run_unit(argv, unit, caps, timeout, sessions, seq)
    except (OSError, json.JSONDecodeError) as exc:   # the corpus, not the implementation
        raise ManifestError(f"{unit.case.path}: cannot read the case's files: {exc}") from None


def _run_unit(argv: Sequence[str], unit: Unit, caps: Capabilities, timeout: float,
              sessions: Sessions | None, seq: int | None) -> CaseResult:
    options = unit.case.data.get("check_options") if unit.suite == "validator" else None
    with tempfile.TemporaryDirectory(prefix="pcpconform-conform-", ignore_cleanup_errors=True) as tmp:
        home = Path(tmp)
        work = home / WORK_DIR
        work.mkdir()
        base = _private_copy(unit, work)
        args = _args(unit, work, base)
        before, case_stat = input_digests(work), stat_tree(unit.case.path)
        if sessions is None:
            env = dict(os.environ)
            if options:
                env[OPTIONS_ENV] = json.dumps(options, sort_keys=True)
            try:
                outcome = invoke([*argv, *args], work, timeout, env)
            except OSError as exc:
                return CaseResult(unit.name, unit.suite, Verdict.CRASH, f"cannot run {argv[0]}: {exc.strerror or exc}")
            result = _grade(unit, outcome, timeout, work)
        else:
            request = {"cmd": "run", "seq": seq or sessions.next_seq(), "case": unit.name, "suite": unit.suite,
                       "dir": str(work), "args": args[1:], "options": options or {}}
            with sessions.one() as session:
                reply = session.run(request, timeout)
            result = _from_reply(unit, reply, timeout, work)
        problem = isolation_problem(unit.case.path, home, work, before, case_stat)
    return result if problem is None else isolation_failure(result, problem)


def run_case(argv: Sequence[str], case: Case, suite: str, caps: Capabilities, timeout: float) -> CaseResult:
    """One case of the validator, reader or writer suite in the one-shot form."""
    return run_unit(argv, Unit(suite, case, case.id), caps, timeout)


# -- on a Dask cluster ----------------------------------------------------------------------

#: each worker process's persistent sessions, by run (one run's processes serve its units)
_WORKER_SESSIONS: dict[str, Sessions] = {}
_WORKER_LOCK = threading.Lock()


def _worker_sessions(run: str, argv: Sequence[str], timeout: float) -> Sessions:
    with _WORKER_LOCK:
        found = _WORKER_SESSIONS.get(run)
        if found is None:
            root = Path(tempfile.mkdtemp(prefix="pcpconform-sessions-"))
            found = _WORKER_SESSIONS[run] = Sessions(argv, root, timeout)
        return found


def _stop_worker_sessions(run: str) -> None:
    """At the end of a run, on every worker: stop its processes (CONF-PERSIST-5)."""
    with _WORKER_LOCK:
        sessions = _WORKER_SESSIONS.pop(run, None)
    if sessions is not None:
        sessions.stop()
        shutil.rmtree(sessions.root, ignore_errors=True)


def _remote_unit(argv: Sequence[str], unit: Unit, caps: Capabilities, timeout: float, run: str | None,
                 seq: int, version: str, cwd: str) -> CaseResult:
    """:func:`run_unit` on a Dask worker, in the persistent form when ``run`` names the run."""
    problem = worker_problem(version, cwd, [unit.case.path / "case.json"])
    if problem is not None:
        raise UsageError(problem)
    sessions = _worker_sessions(run, argv, timeout) if run is not None else None
    return run_unit(argv, unit, caps, timeout, sessions=sessions, seq=seq)


def _run_on_cluster(cluster: Cluster, argv: Sequence[str], units: Sequence[Unit], caps: Capabilities,
                    timeout: float, persistent: bool, progress: Progress | None) -> list[CaseResult]:
    """Every unit on the cluster; the results in unit order, as a local run gives them."""
    run = uuid.uuid4().hex if persistent else None
    calls = [(argv, unit, caps, timeout, run, k + 1, __version__, os.getcwd()) for k, unit in enumerate(units)]
    results: list[CaseResult | None] = [None] * len(units)
    try:
        for i, got in cluster.completed(_remote_unit, calls):
            unit = units[i]
            result = got if isinstance(got, CaseResult) else \
                CaseResult(unit.name, unit.suite, Verdict.CRASH, f"the Dask worker running it died ({got})")
            results[i] = result
            if progress is not None:
                progress(result)
    finally:
        if run is not None:
            cluster.on_every_worker(_stop_worker_sessions, run)
    return [r for r in results if r is not None]


def run_conformance(corpus: str | Path, impl: str, *, suites: Sequence[str] = SUITES,
                    globs: Sequence[str] = (), timeout: float = DEFAULT_TIMEOUT, jobs: int = 1,
                    persistent: bool | None = None, progress: Progress | None = None,
                    on_start: Callable[[int], None] | None = None,
                    dask: str | Cluster | None = None) -> ConformReport:
    """Run the chosen units of ``corpus`` against the command ``impl`` (split by shell rules,
    run without a shell). ``persistent``: True the persistent form, False the one-shot form,
    None the persistent form when the capabilities offer it. ``dask``: the address of a Dask
    scheduler (or a connected Cluster) to run the units on instead of ``jobs`` threads; the
    workers need the corpus and the implementation at the same paths. UsageError (exit 2)
    when nothing can be run."""
    if timeout <= 0:
        raise UsageError("--timeout must be positive")
    if jobs < 1:
        raise UsageError("-j must be at least 1")
    started = time.monotonic()
    argv = command_argv(impl)
    units = select_units(load_corpus(corpus), suites, globs)
    with tempfile.TemporaryDirectory(prefix="pcpconform-sessions-", ignore_cleanup_errors=True) as tmp:
        sessions: Sessions | None = None
        if persistent is None or persistent is False:
            caps = query_capabilities(argv, timeout)
            if persistent is None and caps.persistent:
                persistent = True
        if persistent:
            sessions = Sessions(argv, Path(tmp), timeout)
            caps = sessions.first()
        if on_start is not None:
            on_start(len(units))
        if dask is not None:     # the handshake above gave the capabilities; workers start their own
            if sessions is not None:
                sessions.stop()
            with contextlib.ExitStack() as stack:
                cluster = dask if isinstance(dask, Cluster) else stack.enter_context(Cluster(dask))
                results = _run_on_cluster(cluster, argv, units, caps, timeout, bool(persistent), progress)
            return ConformReport(caps, results, "persistent" if persistent else "one-shot",
                                 time.monotonic() - started, str(corpus))

        def one(unit: Unit) -> CaseResult:
            result = run_unit(argv, unit, caps, timeout, sessions=sessions)
            if progress is not None:
                progress(result)
            return result

        try:
            with ThreadPoolExecutor(max_workers=jobs) as pool:
                results = list(pool.map(one, units))
        finally:
            if sessions is not None:
                sessions.stop()
    return ConformReport(caps, results, "persistent" if sessions is not None else "one-shot",
                         time.monotonic() - started, str(corpus))
