"""Running the corpus against an implementation under test (spec/conformance.md).

    report = run_conformance("corpus", "python3 my_adapter.py", suites=("validator",))
    report.exit_status   # 0 every case run passed, 1 a case did not

The implementation is asked for its capabilities once, then each case of each chosen suite
runs on a private copy of the case's archive files in a temporary directory of its own
(CONF-RUN-1), with a per-case timeout; cases run on ``jobs`` threads.
"""

from __future__ import annotations

import fnmatch
import json
import os
import shutil
import tempfile
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pcpconform.conform.manifest import Case, load_corpus
from pcpconform.conform.protocol import (
    OPTIONS_ENV,
    SUITES,
    Capabilities,
    ProtocolViolation,
    command_argv,
    invoke,
    parse_capabilities,
)
from pcpconform.conform.verdicts import FAILING, CaseResult, Verdict, grade_reader, grade_validator
from pcpconform.errors import UsageError

__all__ = ["ConformReport", "select_cases", "skip_reason", "run_case", "query_capabilities",
           "run_conformance", "DEFAULT_TIMEOUT"]

DEFAULT_TIMEOUT = 60.0


@dataclass
class ConformReport:
    """Every case's result, in suite then corpus order, and what the implementation said
    it is."""

    capabilities: Capabilities
    results: list[CaseResult] = field(default_factory=list)

    def counts(self, suite: str | None = None) -> dict[str, int]:
        """Verdict -> how many cases got it (every verdict listed, zero or not)."""
        got = Counter(r.verdict for r in self.results if suite is None or r.suite == suite)
        return {v.value: got.get(v, 0) for v in Verdict}

    @property
    def ok(self) -> bool:
        return not any(r.verdict in FAILING for r in self.results)

    @property
    def exit_status(self) -> int:
        return 0 if self.ok else 1

    def as_json(self) -> dict[str, Any]:
        suites = list(dict.fromkeys(r.suite for r in self.results))
        return {"implementation": self.capabilities.as_json(), "ok": self.ok,
                "summary": {s: self.counts(s) for s in suites}, "total": self.counts(),
                "results": [r.as_json() for r in self.results]}


def _in_suite(case: Case, suite: str) -> bool:
    """Every case is a validator case; a valid case with an expected dump is a reader case."""
    return suite == "validator" or (case.kind == "valid" and case.expected["dump"] is not None)


def select_cases(cases: Sequence[Case], suites: Sequence[str],
                 globs: Sequence[str] = ()) -> list[tuple[str, Case]]:
    """(suite, case) for each chosen suite and each case of it whose id matches a glob."""
    for suite in suites:
        if suite not in SUITES:
            raise UsageError(f"unknown suite {suite!r} (known: {', '.join(SUITES)})")
    chosen = [(s, c) for s in dict.fromkeys(suites) for c in cases
              if _in_suite(c, s) and (not globs or any(fnmatch.fnmatchcase(c.id, g) for g in globs))]
    if not chosen:
        raise UsageError(f"no case of suite {', '.join(suites)} matches {' or '.join(globs) or '*'}")
    return chosen


def skip_reason(case: Case, suite: str, caps: Capabilities) -> str | None:
    """Why the implementation cannot take the case (CONF-CAP-2), or None."""
    if suite not in caps.suites:
        return f"the implementation does not offer the {suite} suite"
    missing = [v for v in case.data["archive_versions"] if v not in caps.archive_versions]
    if missing:
        return f"the implementation does not read archive version {', '.join(map(str, missing))}"
    options = [o for o in case.data.get("check_options", {}) if o not in caps.options]
    if suite == "validator" and options:
        return f"the implementation does not take the option {', '.join(options)}"
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


def _private_copy(case: Case, where: Path) -> Path:
    """Copy the case's archive files (not its expected outputs) into ``where``."""
    dump = case.expected["dump"]
    for name in case.data["files"]:
        if name != dump and (case.path / name).is_file():
            shutil.copyfile(case.path / name, where / name)
    return where / str(case.data["archive"])


def run_case(argv: Sequence[str], case: Case, suite: str, caps: Capabilities, timeout: float) -> CaseResult:
    """One case of one suite: skipped, or run on a private copy and graded (CONF-RUN-1..3)."""
    why = skip_reason(case, suite, caps)
    if why is not None:
        return CaseResult(case.id, suite, Verdict.SKIP, why)
    env = dict(os.environ)
    options = case.data.get("check_options")
    if suite == "validator" and options:
        env[OPTIONS_ENV] = json.dumps(options, sort_keys=True)
    with tempfile.TemporaryDirectory(prefix="pcpconform-conform-", ignore_cleanup_errors=True) as tmp:
        work = Path(tmp) / case.id
        work.mkdir()
        base = _private_copy(case, work)
        try:
            outcome = invoke([*argv, suite, str(base)], work, timeout, env)
        except OSError as exc:
            return CaseResult(case.id, suite, Verdict.CRASH, f"cannot run {argv[0]}: {exc.strerror or exc}")
    if suite == "validator":
        return grade_validator(case, outcome, timeout)
    expected = (case.path / str(case.expected["dump"])).read_bytes()
    return grade_reader(case, outcome, timeout, expected)


def run_conformance(corpus: str | Path, impl: str, *, suites: Sequence[str] = SUITES,
                    globs: Sequence[str] = (), timeout: float = DEFAULT_TIMEOUT, jobs: int = 1) -> ConformReport:
    """Run the chosen cases of ``corpus`` against the command ``impl`` (split by shell rules,
    run without a shell). UsageError (exit 2) when nothing can be run."""
    if timeout <= 0:
        raise UsageError("--timeout must be positive")
    if jobs < 1:
        raise UsageError("-j must be at least 1")
    argv = command_argv(impl)
    chosen = select_cases(load_corpus(corpus), suites, globs)
    caps = query_capabilities(argv, timeout)
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        results = list(pool.map(lambda sc: run_case(argv, sc[1], sc[0], caps, timeout), chosen))
    return ConformReport(caps, results)
