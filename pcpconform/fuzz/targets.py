"""Running a target command on one mutant: argv templates with placeholders, no shell, a
private directory, a timeout, an address-space limit, and (for a chroot) the files copied
under ``ROOT/tmp``."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import re
import resource
import shlex
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pcpconform.conform.protocol import command_argv
from pcpconform.errors import UsageError

__all__ = ["Target", "RunResult", "PLACEHOLDERS", "target_from_template", "target_from_impl"]

#: what a template may name: the mutant archive's base path, its directory, an MMV file, a config,
#: and the base path of an archive the command writes (checked by the validator after the run)
PLACEHOLDERS = ("archive", "dir", "mmv", "config", "out")
#: the base name ``{out}`` stands for in a run's directory
OUT_BASE = "out"
_CHROOT_ENV = ("PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
               "LANG=C.UTF-8", "HOME=/root")
_PLACEHOLDER = re.compile(r"\{(archive|dir|mmv|config|out)\}")
_OUTPUT_LIMIT = 1 << 20     # bytes of stdout/stderr kept per run


@dataclass(frozen=True)
class RunResult:
    """One run: exit status (negative: the signal that killed it; None: killed at the
    timeout), output, wall time and the peak resident size the kernel reported."""

    returncode: int | None
    stdout: bytes
    stderr: bytes
    seconds: float
    maxrss_kb: int = 0
    #: for a target that writes an archive at ``{out}``: the validator's error codes for
    #: it (empty: it checks clean), or None when the run wrote no archive there
    output_errors: tuple[str, ...] | None = None
    #: the peak resident size (kB) the child inherited at its start: Linux reports the
    #: spawning process's peak as the child's own until the child exceeds it
    inherited_kb: int = 0

    @property
    def timed_out(self) -> bool:
        return self.returncode is None


@dataclass(frozen=True)
class Target:
    """A command to run on each mutant.

    ``argv`` holds placeholders ``{archive}``, ``{dir}``, ``{mmv}``, ``{config}``; ``impl``
    marks a conformance adapter (run as ``CMD reader ARCHIVE``, its dump compared with the
    kit's); ``chroot`` runs it inside that root with the files copied under ``ROOT/tmp``."""

    argv: tuple[str, ...]
    timeout: float = 10.0
    memory_mb: int = 1024
    chroot: Path | None = None
    impl: bool = False
    env: Mapping[str, str] = field(default_factory=dict)

    @property
    def needs(self) -> set[str]:
        return {m.group(1) for w in self.argv for m in _PLACEHOLDER.finditer(w)}

    @property
    def command(self) -> str:
        words = list(self.argv)
        if self.chroot is not None:
            words = ["chroot", str(self.chroot), *words]
        return shlex.join(words)

    def version(self) -> str:
        """What the target says its version is (``TOOL --version``; for a PCP tool that has
        no such option, ``pminfo --version`` of the same installation), best effort."""
        probes = [[self.argv[0], "--capabilities"]] if self.impl else [[self.argv[0], "--version"],
                                                                        ["pminfo", "--version"]]
        for probe in probes:
            words = probe if self.chroot is None else ["chroot", str(self.chroot), *probe]
            try:
                proc = subprocess.run(words, capture_output=True, timeout=10, stdin=subprocess.DEVNULL)
            except (OSError, subprocess.SubprocessError):
                continue
            text = (proc.stdout + proc.stderr).decode("utf-8", "replace").strip()
            if proc.returncode == 0 and text and re.search(r"\d+\.\d+", text):
                return text.splitlines()[0][:200]
        return "unknown"

    def run(self, files: Mapping[str, bytes], names: Mapping[str, str],
            wrapper: Sequence[str] = (), timeout: float | None = None) -> RunResult:
        """Write ``files`` (name -> bytes) into a private directory, fill the placeholders
        from ``names`` (placeholder -> file or base name in it) and run the command (behind
        ``wrapper``, e.g. a debugger, when given)."""
        parent = None if self.chroot is None else self.chroot / "tmp"
        work = Path(tempfile.mkdtemp(prefix="pcpconform-fuzz-", dir=parent))
        try:
            os.chmod(work, 0o755)
            for name, data in files.items():
                (work / name).write_bytes(data)
            inner = work if self.chroot is None else Path("/tmp") / work.name
            where = {"dir": str(inner), "out": str(inner / OUT_BASE), **{k: str(inner / v) for k, v in names.items()}}
            argv = [_PLACEHOLDER.sub(lambda m: where.get(m.group(1), m.group(0)), w) for w in self.argv]
            if self.chroot is not None:
                argv = ["chroot", str(self.chroot), "/usr/bin/env", "-i", *_CHROOT_ENV,
                        *(f"{k}={v}" for k, v in self.env.items()), *argv]
            env = None if self.chroot is not None else {**os.environ, **self.env}
            result = execute([*wrapper, *argv], work, timeout or self.timeout, self.memory_mb, env)
            if "out" in self.needs:
                result = dataclasses.replace(result, output_errors=_output_errors(work / OUT_BASE))
            return result
        finally:
            shutil.rmtree(work, ignore_errors=True)


def _output_errors(base: Path) -> tuple[str, ...] | None:
    """The validator's error codes for the archive a run wrote at ``base`` (None: none)."""
    if not any(p.name.startswith(base.name + ".") for p in base.parent.iterdir()):
        return None
    from pcpconform.check.engine import check_archive
    from pcpconform.check.rules import Severity

    report = check_archive(base)
    return tuple(sorted({d.code for d in report.diagnostics if d.severity == Severity.ERROR}))


def _limits(memory_mb: int) -> None:
    # runs in the child between fork and exec: an address-space cap and no core files
    resource.setrlimit(resource.RLIMIT_AS, (memory_mb << 20, memory_mb << 20))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


#: util-linux prlimit sets the same limits and execs the command: without a function to
#: run between fork and exec, the child is spawned with vfork, which costs the same however
#: large the campaign's process has grown (a fork copies its page tables: tens of ms)
_PRLIMIT = shutil.which("prlimit")


def _limited(argv: Sequence[str], memory_mb: int) -> tuple[list[str], Callable[[], None] | None]:
    """The command under the memory and core limits, and the function (if any) Popen must
    run in the child to set them."""
    if _PRLIMIT is None:
        return list(argv), lambda: _limits(memory_mb)
    return [_PRLIMIT, f"--as={memory_mb << 20}", "--core=0", "--", *argv], None


def execute(argv: Sequence[str], cwd: Path, timeout: float, memory_mb: int,
            env: Mapping[str, str] | None = None) -> RunResult:
    """Run ``argv`` in a session of its own; at the timeout its process group is killed.
    The output goes to files (no pipe to drain), the status and rusage come from wait4."""
    out_path, err_path = cwd / ".stdout", cwd / ".stderr"
    inherited = _peak_rss_kb()
    started = time.monotonic()
    command, preexec = _limited(argv, memory_mb)
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        proc = subprocess.Popen(command, cwd=cwd, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                start_new_session=True, env=dict(env) if env is not None else None,
                                preexec_fn=preexec)
    killed = threading.Event()

    def kill() -> None:
        killed.set()
        _kill_group(proc.pid)

    timer = threading.Timer(timeout, kill)
    timer.start()
    try:
        _, status, usage = os.wait4(proc.pid, 0)
    finally:
        timer.cancel()
    proc.returncode = os.waitstatus_to_exitcode(status)   # Popen must not wait again
    _kill_group(proc.pid)       # whatever it left running in its group
    seconds = time.monotonic() - started
    code: int | None = None if killed.is_set() else proc.returncode
    return RunResult(code, _read(out_path), _read(err_path), seconds, int(usage.ru_maxrss),
                     inherited_kb=inherited)


def _peak_rss_kb() -> int:
    """This process's peak resident size (VmHWM, kB): what a child it spawns reports as its
    own ru_maxrss (the address space it starts in, or shares until exec, is this one's)."""
    try:
        with open("/proc/self/status", "rb") as f:
            for line in f:
                if line.startswith(b"VmHWM:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


def _read(path: Path) -> bytes:
    with open(path, "rb") as f:
        return f.read(_OUTPUT_LIMIT)


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def target_from_template(template: str, *, timeout: float = 10.0, memory_mb: int = 1024,
                         chroot: str | None = None) -> Target:
    """``--target 'pmdumplog -a {archive}'``: shlex words, no shell."""
    try:
        words = shlex.split(template)
    except ValueError as exc:
        raise UsageError(f"--target {template!r}: {exc}") from None
    if not words:
        raise UsageError("--target: an empty command")
    if not any(_PLACEHOLDER.search(w) for w in words):
        raise UsageError(f"--target {template!r}: name the input with {{archive}}, {{dir}}, {{mmv}} or {{config}}")
    if not any(re.search(r"\{(archive|dir|mmv|config)\}", w) for w in words):
        raise UsageError(f"--target {template!r}: {{out}} names what it writes; name its input too")
    root = _root(chroot)
    if root is None:
        words = command_argv(shlex.join(words))
    return Target(tuple(words), timeout, memory_mb, root)


def target_from_impl(impl: str, *, timeout: float = 10.0, memory_mb: int = 1024) -> Target:
    """``--impl CMD``: a conformance reader adapter (spec/conformance.md CONF-READ-1)."""
    return Target((*command_argv(impl), "reader", "{archive}"), timeout, memory_mb, None, impl=True)


def _root(chroot: str | None) -> Path | None:
    if chroot is None:
        return None
    root = Path(chroot)
    if not (root / "tmp").is_dir():
        raise UsageError(f"--chroot {chroot}: no such root (it needs a tmp directory)")
    return root
