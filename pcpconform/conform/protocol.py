"""How the runner talks to an implementation under test (spec/conformance.md): running its
command with an argv list (never a shell) in a directory, with a timeout, and reading what
it prints (the capabilities, a validator's verdict).

A run of the command is an :class:`Outcome`; nothing here raises for a misbehaving
implementation except :func:`parse_capabilities` and :func:`parse_validator`, whose
:class:`ProtocolViolation` the caller turns into a verdict or a usage error.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pcpconform.errors import UsageError

__all__ = ["SUITES", "MMV_SUITES", "OPTIONS_ENV", "PROTOCOL_VERSION", "Capabilities", "Outcome", "ProtocolViolation",
           "capabilities_from", "command_argv", "invoke", "parse_capabilities", "parse_validator", "parse_document"]

#: the suites an implementation may offer (CONF-SUITE-1)
SUITES = ("validator", "reader", "writer", "interp", "derive", "mmv-validator", "mmv-reader", "mmv-writer")
#: the suites whose cases are MMV files, not archives (CONF-MMV-1)
MMV_SUITES = ("mmv-validator", "mmv-reader", "mmv-writer")
#: the version of the persistent protocol (CONF-PERSIST-1)
PROTOCOL_VERSION = 1
#: the environment variable holding a case's validator options as JSON (CONF-OPT-1)
OPTIONS_ENV = "PCPCONFORM_CHECK_OPTIONS"


class ProtocolViolation(ValueError):
    """What an implementation printed does not follow the protocol (one line says why)."""


@dataclass(frozen=True)
class Capabilities:
    """What ``CMD --capabilities`` says the implementation offers (CONF-CAP-1)."""

    name: str
    version: str
    suites: tuple[str, ...]
    archive_versions: tuple[int, ...]
    options: tuple[str, ...] = ()
    #: the interpolation rule sets (interp suite) and derive profiles (derive suite) it answers
    rules: tuple[str, ...] = ()
    profiles: tuple[str, ...] = ()
    #: it also speaks the persistent form (CONF-PERSIST-1)
    persistent: bool = False
    #: case tags (record kinds, value types, compressions of corpus/README.md) it does not handle
    unsupported: tuple[str, ...] = ()
    #: the MMV file versions its MMV suites read (CONF-MMV-1; absent: 1, 2 and 3)
    mmv_versions: tuple[int, ...] = (1, 2, 3)

    def as_json(self) -> dict[str, Any]:
        return {"name": self.name, "version": self.version, "suites": list(self.suites),
                "archive_versions": list(self.archive_versions), "options": list(self.options),
                "rules": list(self.rules), "profiles": list(self.profiles), "persistent": self.persistent,
                "unsupported": list(self.unsupported), "mmv_versions": list(self.mmv_versions)}


@dataclass(frozen=True)
class Outcome:
    """One run of the command: its exit status (negative: killed by that signal; None: the
    runner killed it at the timeout), what it printed and how long it took."""

    returncode: int | None
    stdout: bytes
    stderr: bytes
    seconds: float

    @property
    def timed_out(self) -> bool:
        return self.returncode is None

    def stderr_tail(self, limit: int = 400) -> str:
        text = self.stderr.decode("utf-8", "replace").strip()
        return text if len(text) <= limit else "..." + text[-limit:]


def command_argv(impl: str) -> list[str]:
    """The implementation's command as an argv list (shlex rules, no shell involved), its
    relative paths made absolute."""
    try:
        argv = shlex.split(impl)
    except ValueError as exc:
        raise UsageError(f"--impl {impl!r}: {exc}") from None
    if not argv:
        raise UsageError("--impl: an empty command")
    # the command runs in each case's private directory: a relative path naming an existing
    # file or directory here is made absolute first (CONF-RUN-1)
    return [str(Path(w).absolute()) if "/" in w and not w.startswith("/") and Path(w).exists() else w
            for w in argv]


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def invoke(argv: Sequence[str], cwd: Path, timeout: float,
           env: Mapping[str, str] | None = None) -> Outcome:
    """Run ``argv`` in ``cwd`` in a session of its own, its standard input empty; at the
    timeout its whole process group is killed. OSError if it cannot be started at all."""
    started = time.monotonic()
    proc = subprocess.Popen(list(argv), cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True,
                            env=dict(env) if env is not None else None)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc.pid)
        try:
            out, err = proc.communicate(timeout=5)
        except subprocess.TimeoutExpired:  # a descendant left the group and holds the pipes
            proc.kill()
            out, err = b"", b""
        proc.wait()
        return Outcome(None, out or b"", err or b"", time.monotonic() - started)
    _kill_group(proc.pid)  # whatever it left running in its group
    return Outcome(proc.returncode, out, err, time.monotonic() - started)


def _one_object(stdout: bytes, what: str) -> dict[str, Any]:
    try:
        text = stdout.decode("utf-8")
    except UnicodeDecodeError:
        raise ProtocolViolation(f"{what}: standard output is not UTF-8") from None
    if not text.strip():
        raise ProtocolViolation(f"{what}: nothing on standard output")
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ProtocolViolation(f"{what}: standard output is not one JSON object ({exc.msg} at line "
                                f"{exc.lineno} column {exc.colno}): {text.strip()[:60]!r}") from None
    if not isinstance(value, dict):
        raise ProtocolViolation(f"{what}: standard output is JSON but not an object: {text.strip()[:60]!r}")
    return value


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def capabilities_from(data: dict[str, Any], what: str = "--capabilities") -> Capabilities:
    """The capabilities in a JSON object (CONF-CAP-1, CONF-PERSIST-2); ProtocolViolation if
    it does not follow the protocol."""
    for key in ("name", "version"):
        if not isinstance(data.get(key), str):
            raise ProtocolViolation(f"{what}: {key!r} must be a string")
    suites = data.get("suites")
    if not _strings(suites):
        raise ProtocolViolation(f"{what}: 'suites' must be a list of strings")
    versions = data.get("archive_versions")
    if not (isinstance(versions, list) and all(type(v) is int for v in versions)):
        raise ProtocolViolation(f"{what}: 'archive_versions' must be a list of integers")
    mmv = data.get("mmv_versions", [1, 2, 3])
    if not (isinstance(mmv, list) and all(type(v) is int for v in mmv)):
        raise ProtocolViolation(f"{what}: 'mmv_versions' must be a list of integers")
    lists = {}
    for key in ("options", "rules", "profiles", "unsupported"):
        lists[key] = data.get(key, [])
        if not _strings(lists[key]):
            raise ProtocolViolation(f"{what}: {key!r} must be a list of strings")
    persistent = data.get("persistent", False)
    if not isinstance(persistent, bool):
        raise ProtocolViolation(f"{what}: 'persistent' must be true or false")
    return Capabilities(data["name"], data["version"], tuple(suites or ()), tuple(versions or ()),
                        tuple(lists["options"]), tuple(lists["rules"]), tuple(lists["profiles"]), persistent,
                        tuple(lists["unsupported"]), tuple(mmv))


def parse_capabilities(stdout: bytes) -> Capabilities:
    """The capabilities object (CONF-CAP-1); ProtocolViolation if it does not follow it."""
    return capabilities_from(_one_object(stdout, "--capabilities"))


def parse_validator(stdout: bytes) -> tuple[bool, list[str] | None]:
    """A validator's answer (CONF-VAL-1): whether the archive is valid, and its codes when
    it gives them; ProtocolViolation if the output does not follow the protocol."""
    data = _one_object(stdout, "validator")
    valid = data.get("valid")
    if not isinstance(valid, bool):
        raise ProtocolViolation("validator: 'valid' must be true or false")
    codes = data.get("codes")
    if codes is not None and not _strings(codes):
        raise ProtocolViolation("validator: 'codes' must be a list of strings")
    return valid, codes


def parse_document(stdout: bytes, suite: str) -> dict[str, Any]:
    """An interp or derive answer: one JSON object (CONF-INTERP-1, CONF-DERIVE-1)."""
    return _one_object(stdout, suite)
