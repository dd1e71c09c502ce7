"""The verdict on one case (spec/conformance.md, CONF-VERDICT-1): grading what the
implementation did against the case's expected output, with the smallest useful difference
(a validator's verdict and codes; a reader's first differing line and field path) and the
clauses the case cites.
"""

from __future__ import annotations

import io
import json
import signal
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

from pcpconform.check.engine import check_archive
from pcpconform.check.rules import RULES, Severity
from pcpconform.conform.compare import (
    Difference,
    WriterLatitude,
    compare_derive,
    compare_dump_content,
    compare_interp,
    json_difference,
)
from pcpconform.conform.manifest import Case
from pcpconform.conform.protocol import Outcome, ProtocolViolation, parse_document, parse_validator
from pcpconform.dump.jsonl import write_jsonl
from pcpconform.errors import PcpConformError
from pcpconform.io.archive import Archive

__all__ = ["Verdict", "CaseResult", "FAILING", "grade_validator", "grade_reader", "grade_writer",
           "grade_interp", "grade_derive", "isolation_failure", "first_difference", "abnormal_result",
           "protocol_result"]


class Verdict(str, Enum):  # noqa: UP042 (StrEnum would change str() of a verdict)
    PASS = "pass"
    FAIL = "fail"
    SKIP = "skip"
    CRASH = "crash"
    TIMEOUT = "timeout"
    PROTOCOL_ERROR = "protocol-error"


#: the verdicts that make a run fail (exit status 1)
FAILING = frozenset({Verdict.FAIL, Verdict.CRASH, Verdict.TIMEOUT, Verdict.PROTOCOL_ERROR})


@dataclass
class CaseResult:
    """One case of one suite: its verdict, why (one line), the clauses at stake and, for a
    failure, what was expected and what the implementation gave."""

    case: str
    suite: str
    verdict: Verdict
    detail: str = ""
    clauses: list[str] = field(default_factory=list)
    expected: Any = None
    got: Any = None
    line: int | None = None
    path: str | None = None
    seconds: float = 0.0
    stderr: str = ""

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"case": self.case, "suite": self.suite, "verdict": self.verdict.value,
                               "detail": self.detail, "clauses": self.clauses,
                               "seconds": round(self.seconds, 3)}
        for key in ("expected", "got", "line", "path"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        if self.stderr and self.verdict != Verdict.PASS:
            out["stderr"] = self.stderr
        return out


def _abnormal(case: Case, suite: str, outcome: Outcome, timeout: float,
              name: str | None = None) -> CaseResult | None:
    """The verdict when the command did not end by itself (CONF-RUN-3), else None."""
    if outcome.returncode is None:
        return CaseResult(name or case.id, suite, Verdict.TIMEOUT, f"killed after the {timeout:g} s timeout",
                          list(case.data["clauses"]), seconds=outcome.seconds, stderr=outcome.stderr_tail())
    if outcome.returncode < 0:
        try:
            signame = signal.Signals(-outcome.returncode).name
        except ValueError:
            signame = f"signal {-outcome.returncode}"
        return CaseResult(name or case.id, suite, Verdict.CRASH, f"killed by {signame}", list(case.data["clauses"]),
                          seconds=outcome.seconds, stderr=outcome.stderr_tail())
    return None


def _protocol(case: Case, suite: str, outcome: Outcome, why: str, name: str | None = None) -> CaseResult:
    return CaseResult(name or case.id, suite, Verdict.PROTOCOL_ERROR, why, [], seconds=outcome.seconds,
                      stderr=outcome.stderr_tail())


#: for suites graded in modules of their own (conform/mmv_writer.py)
abnormal_result = _abnormal
protocol_result = _protocol


def _code_differences(case: Case, codes: list[str]) -> list[str]:
    expected = case.expected
    unknown = sorted({c for c in codes if c not in RULES})
    if unknown:
        return [f"codes not in spec/validator.md: {', '.join(unknown)}"]
    errors = {c for c in codes if RULES[c].severity == Severity.ERROR}
    others = set(codes) - errors
    want = set(expected["error_codes"])
    out = []
    if errors != want:
        missing, extra = sorted(want - errors), sorted(errors - want)
        out += [f"error codes not reported: {', '.join(missing)}"] if missing else []
        out += [f"error codes reported but not expected: {', '.join(extra)}"] if extra else []
    missing = sorted(set(expected["warning_codes"]) - others)
    out += [f"warning codes not reported: {', '.join(missing)}"] if missing else []
    return out


def _clauses_of(codes: list[str], case: Case) -> list[str]:
    """The clauses of the codes at stake, in order, else the case's own."""
    out = [RULES[c].clause for c in codes if c in RULES and RULES[c].clause]
    return list(dict.fromkeys(out)) or list(case.data["clauses"])


def grade_validator(case: Case, outcome: Outcome, timeout: float, suite: str = "validator") -> CaseResult:
    """A validator's answer on one case (CONF-VAL-1, CONF-VAL-2; an MMV file's: CONF-MMV-1)."""
    abnormal = _abnormal(case, suite, outcome, timeout)
    if abnormal is not None:
        return abnormal
    if outcome.returncode not in (0, 1):
        return _protocol(case, suite, outcome, f"exit status {outcome.returncode} (0 or 1 expected)")
    try:
        valid, codes = parse_validator(outcome.stdout)
    except ProtocolViolation as exc:
        return _protocol(case, suite, outcome, str(exc))
    if outcome.returncode == 1 and valid:
        return _protocol(case, suite, outcome, "exit status 1 with \"valid\": true")
    expected = case.expected
    want_valid = expected["verdict"] != "errors"
    result = CaseResult(case.id, suite, Verdict.PASS, "", list(case.data["clauses"]),
                        seconds=outcome.seconds, stderr=outcome.stderr_tail())
    wanted = {"valid": want_valid, "error_codes": expected["error_codes"]}
    gave: dict[str, Any] = {"valid": valid} if codes is None else {"valid": valid, "codes": codes}
    what = "archive" if suite == "validator" else "MMV file"
    if valid != want_valid:
        if want_valid:
            why = f"a valid {what} (verdict {expected['verdict']}) was rejected"
            result.clauses = _clauses_of(codes or [], case) if codes else list(case.data["clauses"])
        else:
            why = f"an invalid {what} was accepted (expected error codes: {', '.join(expected['error_codes'])})"
            result.clauses = _clauses_of(expected["error_codes"], case)
        result.verdict, result.detail, result.expected, result.got = Verdict.FAIL, why, wanted, gave
        return result
    problems = _code_differences(case, codes) if codes is not None else []
    if problems:
        result.verdict, result.detail = Verdict.FAIL, "; ".join(problems)
        result.expected, result.got = dict(wanted, warning_codes=expected["warning_codes"]), gave
        result.clauses = _clauses_of(sorted(set(expected["error_codes"]) ^ set(codes or [])), case)
    return result


#: the first place where two JSON values differ (compare.json_difference)
first_difference = json_difference


def _dump_clauses(case: Case, kind: Any) -> list[str]:
    """The case's DUMP- clauses about lines of ``kind`` (else all its DUMP- clauses)."""
    dump = [c for c in case.data["clauses"] if c.startswith("DUMP-")]
    areas = {"result": ("RESULT", "VAL", "EVENT", "RAW"), "dump": ("FILE",)}.get(
        str(kind), (str(kind).upper(),))
    if case.data.get("format") == "mmv":    # an MMV file's dump: the clauses of the format, not of its checks
        return ["CONF-MMV-2", *(c for c in case.data["clauses"] if c.startswith("MMV-") and "-CHK-" not in c)]
    return [c for c in dump if c.split("-")[1] in areas] or dump


def grade_reader(case: Case, outcome: Outcome, timeout: float, expected: bytes,
                 suite: str = "reader") -> CaseResult:
    """A reader's dump of one case against the expected dump, byte for byte (CONF-READ-1; an
    MMV file's: CONF-MMV-2)."""
    abnormal = _abnormal(case, suite, outcome, timeout)
    if abnormal is not None:
        return abnormal
    if outcome.returncode != 0:
        return _protocol(case, suite, outcome, f"exit status {outcome.returncode} on a valid "
                         f"{'archive' if suite == 'reader' else 'MMV file'} (0 expected)")
    result = CaseResult(case.id, suite, Verdict.PASS, "", [], seconds=outcome.seconds,
                        stderr=outcome.stderr_tail())
    if outcome.stdout == expected:
        return result
    try:
        text = outcome.stdout.decode("utf-8")
    except UnicodeDecodeError:
        return _protocol(case, suite, outcome, "standard output is not UTF-8")
    want_lines, got_lines = expected.decode("utf-8").split("\n"), text.split("\n")
    result.verdict = Verdict.FAIL
    for number, (want, got) in enumerate(zip(want_lines, got_lines), start=1):
        if want == got:
            continue
        try:
            got_value = json.loads(got)
        except json.JSONDecodeError:
            if not got.strip() and number == len(got_lines):
                break
            return _protocol(case, suite, outcome, f"line {number} is not JSON: {got[:60]!r}")
        want_value = json.loads(want) if want else None
        kind = want_value.get("kind") if isinstance(want_value, dict) else None
        result.line, result.clauses = number, _dump_clauses(case, kind)
        diff = first_difference(want_value, got_value)
        if diff is None:
            result.detail = f"line {number} ({kind}): the same values, not the canonical bytes"
            result.expected, result.got = want, got
        else:
            result.path, result.expected, result.got = diff
            result.detail = (f"line {number} ({kind}), field {diff[0]}: expected {json.dumps(diff[1])}, "
                             f"got {json.dumps(diff[2])}")
        return result
    number = min(len(want_lines), len(got_lines))
    result.line, result.clauses = number, _dump_clauses(case, "dump")
    if text.rstrip("\n") == expected.decode("utf-8").rstrip("\n"):
        result.detail = "the dump does not end with exactly one newline"
    elif len(got_lines) < len(want_lines):
        result.detail = f"the dump ends after {number - 1} lines, {len(want_lines) - 1} expected"
    else:
        result.detail = f"{len(got_lines) - len(want_lines)} lines more than the {len(want_lines) - 1} expected"
    return result


def _failed(name: str, suite: str, outcome: Outcome, diff: Difference) -> CaseResult:
    return CaseResult(name, suite, Verdict.FAIL, diff.detail, diff.clauses, diff.expected, diff.got,
                      path=diff.path, seconds=outcome.seconds, stderr=outcome.stderr_tail())


def grade_writer(case: Case, outcome: Outcome, timeout: float, written: Path, expected: bytes) -> CaseResult:
    """A writer's archive (CONF-WRITE-1): written, valid for the kit's validator, and read
    back by the kit's reader to the case's expected dump; when the dump differs only in
    the layout (offsets, index entries), the content must be the same."""
    abnormal = _abnormal(case, "writer", outcome, timeout)
    if abnormal is not None:
        return abnormal
    if outcome.returncode != 0:
        return _protocol(case, "writer", outcome, f"exit status {outcome.returncode} (0 expected)")
    result = CaseResult(case.id, "writer", Verdict.PASS, "", [], seconds=outcome.seconds,
                        stderr=outcome.stderr_tail())
    if not written.with_name(written.name + ".meta").is_file():
        result.verdict, result.clauses = Verdict.FAIL, ["GEN-FILES"]
        result.detail = f"no archive written at {written.name}"
        return result
    report = check_archive(written)
    errors = sorted({d.code for d in report.diagnostics if d.severity == Severity.ERROR})
    if errors:
        result.verdict, result.clauses = Verdict.FAIL, _clauses_of(errors, case)
        result.detail = f"the written archive is invalid: {', '.join(errors)}"
        result.expected, result.got = {"error_codes": []}, {"error_codes": errors}
        return result
    buffer = io.StringIO()
    try:
        write_jsonl(Archive(written), buffer)
    except PcpConformError as exc:
        result.verdict, result.detail, result.clauses = Verdict.FAIL, f"the written archive cannot be read: {exc}", []
        return result
    dump = buffer.getvalue().encode("utf-8")
    if dump == expected:
        return result
    want = [json.loads(line) for line in expected.decode("utf-8").splitlines()]
    got = [json.loads(line) for line in dump.decode("utf-8").splitlines()]
    diff = compare_dump_content(want, got, WriterLatitude.of_fixture(case.path / str(case.data["fixture"])))
    if diff is None:
        result.detail = "the same content as the expected archive, in another layout"
        return result
    return _failed(case.id, "writer", outcome, diff)


def _document(case: Case, suite: str, outcome: Outcome, timeout: float, name: str) -> dict[str, Any] | CaseResult:
    abnormal = _abnormal(case, suite, outcome, timeout, name)
    if abnormal is not None:
        return abnormal
    if outcome.returncode != 0:
        return _protocol(case, suite, outcome, f"exit status {outcome.returncode} (0 expected)", name)
    try:
        return parse_document(outcome.stdout, suite)
    except ProtocolViolation as exc:
        return _protocol(case, suite, outcome, str(exc), name)


def grade_interp(case: Case, name: str, outcome: Outcome, timeout: float, expected: dict[str, Any],
                 libpcp: dict[str, Any] | None, sems: dict[str, str],
                 others: dict[str, dict[str, Any]]) -> CaseResult:
    """An interp answer (CONF-INTERP-1): the rules' result, or libpcp's with its named
    deviations; ``others`` holds the results of the same schedule under the other rule
    sets, to say when the answer is theirs."""
    doc = _document(case, "interp", outcome, timeout, name)
    if isinstance(doc, CaseResult):
        return doc
    diff = compare_interp(expected, doc, sems)
    result = CaseResult(name, "interp", Verdict.PASS, "", [], seconds=outcome.seconds, stderr=outcome.stderr_tail())
    if diff is None:
        return result
    if libpcp is not None and compare_interp(libpcp, doc, sems) is None:
        result.detail = "libpcp's answer, with its deviations"
        return result
    for rules, other in others.items():
        if compare_interp(other, dict(doc, rules=other.get("rules")), sems) is None:
            diff.detail = f"the answer of the {rules} rules, asked for {expected.get('rules')}: {diff.detail}"
            diff.clauses = ["INTERP-VER-1", *[c for c in diff.clauses if c != "INTERP-VER-1"]]
            break
    return _failed(name, "interp", outcome, diff)


def grade_derive(case: Case, name: str, outcome: Outcome, timeout: float, expected: dict[str, Any] | None,
                 libpcp: dict[str, Any] | None, diagnostics: list[str], sems: dict[str, str],
                 private: str = "") -> CaseResult:
    """A derive answer (CONF-DERIVE-1): diagnostics, descriptors and values of the profile;
    ``private``, the unit's private directory, is taken out of the diagnostics."""
    doc = _document(case, "derive", outcome, timeout, name)
    if isinstance(doc, CaseResult):
        return doc
    if private and isinstance(doc.get("diagnostics"), list):
        # the config file is named by its path in the private directory: compare its name
        doc["diagnostics"] = [d.replace(private.rstrip("/") + "/", "") if isinstance(d, str) else d
                              for d in doc["diagnostics"]]
    diff = compare_derive(expected, diagnostics, doc, sems)
    result = CaseResult(name, "derive", Verdict.PASS, "", [], seconds=outcome.seconds, stderr=outcome.stderr_tail())
    if diff is None:
        return result
    if libpcp is not None and compare_derive(libpcp, diagnostics, doc, sems) is None:
        result.detail = "libpcp's answer, with its deviations"
        return result
    return _failed(name, "derive", outcome, diff)


def isolation_failure(result: CaseResult, why: str) -> CaseResult:
    """The implementation changed its input or wrote outside its directory (CONF-ISO-1):
    whatever it answered, the case fails."""
    result.verdict, result.clauses = Verdict.FAIL, ["CONF-ISO-1"]
    result.detail = why + (f" (and its answer: {result.detail})" if result.detail else "")
    return result
