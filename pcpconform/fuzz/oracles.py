"""What a run of the target means: crash, hang, memory blow-up, a differential finding, or
nothing; and the feedback key that decides whether a mutant is kept for further mutation.

The kit's own judgement of the same bytes (the validator's codes, or its dump for a reader
adapter) is computed here too: where the validator is the judge, a finding says so.
"""

from __future__ import annotations

import json
import re
import signal
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from pcpconform.fuzz.targets import RunResult, Target

__all__ = ["Job", "Observation", "Verdict", "observe", "classify", "stderr_signature", "kit_judgement",
           "ALLOC_FAILURE"]

#: what a program prints when an allocation fails under the address-space limit
#: (not ENOMEM reported as an error message: that is a refused allocation, handled)
ALLOC_FAILURE = re.compile(rb"out of memory|memoryerror|bad_alloc|malloc\(\) failed|not enough memory", re.I)
_NUMBERS = re.compile(r"0x[0-9a-f]+|\d+", re.I)
_PATHS = re.compile(r"(/[^\s:'\"]+)+")
_SPACES = re.compile(r"\s+")


@dataclass(frozen=True)
class Job:
    """One mutant to run: its files, which placeholder names which file, how it was made."""

    target: Target
    kind: str                               # archive, mmv or config
    files: Mapping[str, bytes]
    names: Mapping[str, str]
    notes: tuple[str, ...] = ()
    differential: bool = False


@dataclass(frozen=True)
class Verdict:
    """A finding's kind and what makes it distinct (before backtraces refine crashes)."""

    kind: str       # crash, hang, memory, misread, accepts-invalid, rejects-valid, kit-internal,
    #                 unreadable-output
    detail: str
    judge: str = "target"                   # who says it is wrong: the target's own behaviour, or the kit
    evidence: str = ""                      # the particulars of this instance (not part of the signature)


@dataclass(frozen=True)
class Observation:
    returncode: int | None
    stderr: bytes
    stdout_head: bytes
    seconds: float
    maxrss_kb: int
    codes: tuple[str, ...]                  # the kit validator's codes for the same bytes
    kit_errors: bool
    stderr_sig: str
    verdict: Verdict | None
    diagnostics: tuple[dict[str, object], ...] = field(default=())

    @property
    def feedback(self) -> tuple[object, ...]:
        status = "timeout" if self.returncode is None else self.returncode
        return (status, self.codes, self.stderr_sig)


def stderr_signature(stderr: bytes, lines: int = 1) -> str:
    """Standard error with numbers and paths stripped: the last few distinct lines (what
    a program says just before it stops)."""
    out: list[str] = []
    for line in reversed(stderr.decode("utf-8", "replace").splitlines()):
        line = _SPACES.sub(" ", _NUMBERS.sub("N", _PATHS.sub("PATH", line))).strip()
        if line and line not in out:
            out.append(line[:160])
        if len(out) >= lines:
            break
    return " | ".join(out)


def classify(run: RunResult, target: Target) -> Verdict | None:
    """Crash, hang or memory blow-up from the run alone."""
    if run.timed_out:
        return Verdict("hang", f"no exit within {target.timeout:g}s")
    # a peak no higher than the one inherited from this process says nothing of the child
    # (its address-space limit still turns a real blow-up into an allocation failure)
    over = run.maxrss_kb >= target.memory_mb * 1024 * 0.9 and run.maxrss_kb > run.inherited_kb + 4096
    if over or ALLOC_FAILURE.search(run.stderr):
        return Verdict("memory", f"peak {run.maxrss_kb // 1024} MB under a {target.memory_mb} MB limit")
    code = run.returncode
    if b"Traceback (most recent call last)" in run.stderr:
        # a Python target's uncaught exception: its own crash, whatever the exit status
        last = run.stderr.decode("utf-8", "replace").strip().splitlines()[-1]
        return Verdict("crash", f"Python traceback: {_NUMBERS.sub('N', last.split(':')[0])}")
    if code is not None and code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return Verdict("crash", name)
    if code is not None and code >= 128 + 1 and code - 128 in (signal.SIGSEGV, signal.SIGABRT, signal.SIGBUS,
                                                                signal.SIGFPE, signal.SIGILL):
        return Verdict("crash", signal.Signals(code - 128).name)      # a shell-like wrapper's report
    return None


def kit_judgement(kind: str, files: Mapping[str, bytes], names: Mapping[str, str],
                  want_dump: bool = False) -> tuple[tuple[str, ...], bool, tuple[dict[str, object], ...], str | None]:
    """The kit's reading of the same bytes: validator codes, whether any is an error, the
    diagnostics, and (for a reader adapter) its JSON Lines dump, or None if it refuses."""
    if kind == "config":
        return _config_judgement(files[names["config"]])
    from pcpconform.check.engine import check_archive
    from pcpconform.check.mmv.engine import check_mmv_file
    from pcpconform.check.rules import Severity

    with tempfile.TemporaryDirectory(prefix="pcpconform-fuzz-kit-") as tmp:
        for name, data in files.items():
            (Path(tmp) / name).write_bytes(data)
        path = Path(tmp) / names["mmv" if kind == "mmv" else "archive"]
        report = check_mmv_file(path) if kind == "mmv" else check_archive(path)
        diags = tuple(d.to_json() for d in report.diagnostics[:50])
        codes = tuple(sorted({d.code for d in report.diagnostics}))
        errors = any(d.severity == Severity.ERROR for d in report.diagnostics)
        dump = _kit_dump(path) if want_dump else None
    return codes, errors, diags, dump


def _config_judgement(text: bytes) -> tuple[tuple[str, ...], bool, tuple[dict[str, object], ...], None]:
    """The kit's reading of a derived-metric config (as pmLoadDerivedConfig under PCP 7):
    its diagnostics, numbers stripped, stand for codes in the feedback."""
    from pcpconform.oracles.derive.config import read_config
    from pcpconform.oracles.derive.profiles import profile

    try:
        result = read_config(text, profile("pcp-7"))
    except Exception as exc:     # the kit's own failure is a finding of its own kind elsewhere
        return (f"kit:{type(exc).__name__}",), True, (), None
    lines = [_NUMBERS.sub("N", line)[:80] for line in result.diagnostics if line.strip()]
    return tuple(sorted(set(lines))[:20]), bool(lines), tuple({"message": line} for line in lines[:20]), None


def _kit_dump(path: Path) -> str | None:
    from pcpconform.dump.jsonl import dump_lines
    from pcpconform.errors import PcpConformError
    from pcpconform.io.archive import Archive

    try:
        return "".join(line if line.endswith("\n") else line + "\n" for line in dump_lines(Archive(path)))
    except (PcpConformError, OSError, ValueError):
        return None


def _first_difference(kit: str, theirs: str) -> str:
    a, b = kit.splitlines(), theirs.splitlines()
    for n, (x, y) in enumerate(zip(a, b), 1):
        if x != y:
            return f"line {n}: {_json_path(x, y)}"
    return f"line {min(len(a), len(b)) + 1}: {len(a)} lines from the kit, {len(b)} from the target"


def _json_path(x: str, y: str, path: str = "") -> str:
    try:
        a, b = json.loads(x), json.loads(y)
    except ValueError:
        return "not JSON"
    return _walk(a, b, path)


def _walk(a: object, b: object, path: str) -> str:
    if isinstance(a, dict) and isinstance(b, dict):
        for k in a:
            if k not in b or a[k] != b[k]:
                return _walk(a[k], b.get(k), f"{path}/{k}")
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            if x != y:
                return _walk(x, y, f"{path}/{i}")
    return f"{path or '/'} kit {json.dumps(a)[:80]} target {json.dumps(b)[:80]}"


def observe(job: Job) -> Observation:
    """Run the target on one mutant and judge it (runs in a worker process)."""
    run = job.target.run(job.files, job.names)
    codes: tuple[str, ...] = ()
    errors = False
    diags: tuple[dict[str, object], ...] = ()
    dump = None
    codes, errors, diags, dump = kit_judgement(job.kind, job.files, job.names, want_dump=job.target.impl)
    verdict = classify(run, job.target)
    if verdict is None and run.output_errors:
        # the target wrote an archive at {out} that the validator rejects (libpcp would)
        verdict = Verdict("unreadable-output", f"the archive written at {{out}} has error {run.output_errors[0]}",
                          "kit validator", ", ".join(run.output_errors))
    if verdict is None and "check.internal" in codes:
        # the kit's own validator broke on these bytes: a finding against the judge itself
        message = next((str(d["message"]) for d in diags if d["code"] == "check.internal"), "")
        verdict = Verdict("kit-internal", _NUMBERS.sub("N", message.split(": ", 1)[-1])[:120], "kit validator")
    if verdict is None and job.target.impl and dump is not None and run.returncode == 0:
        theirs = run.stdout.decode("utf-8", "replace")
        if theirs != dump:
            where = _first_difference(dump, theirs)
            field_path = _NUMBERS.sub("N", where.split(" kit ")[0].split(": ", 1)[-1])
            verdict = Verdict("misread", f"{field_path} differs from the kit's reading", "kit reader", where)
    if verdict is None and job.differential and job.kind != "config" and run.returncode is not None:
        quiet = run.returncode == 0 and not run.stderr.strip()
        if errors and quiet:
            first = next((str(d["code"]) for d in diags if d["severity"] == "error"), codes[0] if codes else "?")
            verdict = Verdict("accepts-invalid", f"the validator reports {first}; the target exits 0 silently",
                              judge="kit validator")
        elif not errors and run.returncode != 0:
            verdict = Verdict("rejects-valid", f"exit {run.returncode}: {stderr_signature(run.stderr, 1)}",
                              judge="kit validator")
    return Observation(run.returncode, run.stderr[:4096], run.stdout[:2048], run.seconds, run.maxrss_kb,
                       codes, errors, stderr_signature(run.stderr), verdict, diags)
