"""The three real libpcps every differential test runs against, behind one interface.

* ``pcp-6.0.3``: Debian bookworm's PCP on the host (.ci/install-pcp.sh);
* ``pcp-6.3``: Debian trixie's PCP in a debootstrap chroot (.ci/install-pcp-chroot.sh trixie);
* ``pcp-7``: Debian sid's PCP in a chroot (.ci/install-pcp-chroot.sh sid).

A ``Referee`` runs a Python script under that PCP's ``/usr/bin/python3`` (the bindings only
import there) or one of its tools, on files given by path. For a chroot the script and the
files are copied into a fresh directory under ``ROOT/tmp``, path arguments are rewritten to
point there, and files the command writes there are copied back (``outputs``). Nothing here
imports PCP. ``available()`` probes once; in CI a missing referee fails the run
(tests/conftest.py), it is never skipped.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Referee", "REFEREES", "BY_NAME", "LibpcpError", "archive_files", "TIMEOUT"]

TIMEOUT = int(__import__("os").environ.get("PCPCONFORM_REFEREE_TIMEOUT", "120"))
_CHROOT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
_PROBE = "from pcp import pmi, pmapi; import cpmapi, cpmi"


class LibpcpError(RuntimeError):
    """A script or PCP tool run by a referee failed (``returncode`` < 0: killed by a signal)."""

    def __init__(self, what: str, proc: subprocess.CompletedProcess[str]):
        self.proc = proc
        self.returncode = proc.returncode
        self.stderr = proc.stderr
        super().__init__(f"{what} failed with exit status {proc.returncode}\n"
                         f"--- stderr ---\n{proc.stderr}")


def archive_files(base: os.PathLike[str] | str) -> list[Path]:
    """The files of archive ``base``: ``base.0``, ``base.meta``, ``base.index``, ... (any suffix)."""
    base = Path(base)
    prefix = base.name + "."
    return sorted(p for p in base.parent.iterdir() if p.name.startswith(prefix) and p.is_file())


@dataclass(frozen=True)
class Referee:
    """One real libpcp: where it lives and which pcpconform rule sets model it."""

    name: str               # test id: "pcp-6.0.3", "pcp-6.3", "pcp-7"
    suite: str              # Debian release it comes from
    root: Path | None       # chroot directory; None for the host
    interp_rules: str       # pcpconform interp rule set that models it
    derive_profile: str     # pcpconform derive profile that models it
    version_prefix: str     # what ``pmdumplog --version`` must start with
    set_profile: str        # pcpconform archive-set profile that models it (spec/sets.md)

    @property
    def system_python(self) -> str:
        return os.environ.get("PCPCONFORM_SYSTEM_PYTHON", "/usr/bin/python3") if self.root is None \
            else "/usr/bin/python3"

    @functools.cached_property
    def _available(self) -> bool:
        if self.root is None:
            if not os.path.exists(self.system_python) or shutil.which("pmdumplog") is None:
                return False
        elif not (self.root / "usr/bin/pmdumplog").exists() or shutil.which("chroot") is None:
            return False
        try:
            proc = self._run([self.system_python, "-E", "-s", "-c", _PROBE], env=None, timeout=60)
        except (OSError, subprocess.SubprocessError):
            return False
        return proc.returncode == 0

    def available(self) -> bool:
        return self._available

    def why_missing(self) -> str:
        if self.root is None:
            return "Debian's PCP is not installed on the host (bash .ci/install-pcp.sh)"
        return f"no {self.suite} PCP chroot at {self.root} (bash .ci/install-pcp-chroot.sh {self.suite})"

    @functools.cached_property
    def version(self) -> str:
        """The PCP version as ``pmdumplog --version`` reports it, e.g. "6.3.8"."""
        proc = self.tool(["pmdumplog", "--version"])
        m = re.search(r"version\s+(\S+)", proc.stdout + proc.stderr)
        if m is None:
            raise LibpcpError(f"pmdumplog --version ({self.name})", proc)
        return m.group(1)

    # -- running ------------------------------------------------------------------------
    def _argv(self, argv: Sequence[str], env: Mapping[str, str] | None) -> list[str]:
        if self.root is None:
            return list(argv)
        envs = {"PATH": _CHROOT_PATH, "LANG": "C.UTF-8", "HOME": "/root"}
        envs.update({k: str(v) for k, v in (env or {}).items()})
        return ["chroot", str(self.root), "/usr/bin/env", "-i",
                *(f"{k}={v}" for k, v in envs.items()), *argv]

    def _run(self, argv: Sequence[str], *, env: Mapping[str, str] | None,
             timeout: float) -> subprocess.CompletedProcess[str]:
        host_env = None
        if self.root is None:
            host_env = dict(os.environ)
            host_env.update({k: str(v) for k, v in (env or {}).items()})
        # tools echo archive bytes (names, labels) that need not be UTF-8
        return subprocess.run(self._argv(argv, env), capture_output=True, text=True, errors="replace",
                              env=host_env, timeout=timeout)

    def run(self, argv: Sequence[str | os.PathLike[str]], *, files: Sequence[Path] = (),
            outputs: Sequence[Path] = (), env: Mapping[str, str] | None = None,
            timeout: float = TIMEOUT, dirs: Sequence[Path] = ()) -> subprocess.CompletedProcess[str]:
        """Run ``argv`` (a tool, or an interpreter and its script) under this libpcp.

        Arguments given as ``os.PathLike`` are paths: on the host they pass as they are; for
        a chroot each must name one of ``files`` (copied in by base name, which must be
        distinct), an archive base name beside them, one of ``dirs`` (directories copied in
        whole, by name: archive sets) or an archive base name in one of them, or one of
        ``outputs`` (files the command writes, or archive base names whose files it writes),
        copied back afterwards.
        """
        if self.root is None:
            return self._run([str(a) for a in argv], env=env, timeout=timeout)
        files = [Path(f) for f in files]
        copied = {Path(d).resolve(): Path(d).name for d in dirs}
        if len(set(copied.values())) != len(copied):
            raise ValueError(f"directories to copy into the chroot share a name: {list(dirs)}")
        names = [f.name for f in files]
        if len(set(names)) != len(names):
            raise ValueError(f"files to copy into the chroot share a base name: {names}")
        host_dir = Path(tempfile.mkdtemp(prefix="pcpconform-", dir=self.root / "tmp"))
        inner = "/tmp/" + host_dir.name
        try:
            os.chmod(host_dir, 0o755)
            for f in files:
                shutil.copy2(f, host_dir / f.name)
            for d, name in copied.items():
                shutil.copytree(d, host_dir / name, symlinks=True)
            parents = {f.resolve().parent for f in files}
            out_paths = {Path(o).resolve(): Path(o) for o in outputs}
            inner_argv = []
            for a in argv:
                if not isinstance(a, os.PathLike):
                    inner_argv.append(str(a))
                    continue
                p = Path(a).resolve()
                if p in copied or p.parent in copied:
                    inner_argv.append(f"{inner}/{copied[p]}" if p in copied else
                                      f"{inner}/{copied[p.parent]}/{p.name}")
                    continue
                if p in out_paths or p.parent in parents or p in {f.resolve() for f in files}:
                    inner_argv.append(f"{inner}/{p.name}")
                    continue
                raise ValueError(f"path argument {a} is not among the files copied into the chroot")
            proc = self._run(inner_argv, env=env, timeout=timeout)
            for out in out_paths.values():
                for produced in host_dir.iterdir():
                    if produced.name == out.name or produced.name.startswith(out.name + "."):
                        shutil.copy2(produced, out.parent / produced.name)
            return proc
        finally:
            shutil.rmtree(host_dir, ignore_errors=True)

    def python(self, script: Path, *args: str | os.PathLike[str], files: Sequence[Path] = (),
               outputs: Sequence[Path] = (), env: Mapping[str, str] | None = None,
               timeout: float = TIMEOUT, dirs: Sequence[Path] = ()) -> subprocess.CompletedProcess[str]:
        """``script ARGS`` under this PCP's system Python (-E -s: nothing of the venv)."""
        return self.run([self.system_python, "-E", "-s", Path(script), *args],
                        files=[*files, Path(script)], outputs=outputs, env=env, timeout=timeout, dirs=dirs)

    def tool(self, argv: Sequence[str | os.PathLike[str]], *, files: Sequence[Path] = (),
             outputs: Sequence[Path] = (), timeout: float = TIMEOUT,
             dirs: Sequence[Path] = ()) -> subprocess.CompletedProcess[str]:
        """A PCP tool (``pmdumplog``, ``pmlogcheck`` ...) on the given files."""
        return self.run(argv, files=files, outputs=outputs, timeout=timeout, dirs=dirs)

    def on_archive(self, argv: Sequence[str | os.PathLike[str]], base: os.PathLike[str] | str,
                   timeout: float = TIMEOUT) -> subprocess.CompletedProcess[str]:
        """A tool whose arguments name archive ``base`` (given as a Path in ``argv``)."""
        return self.tool(argv, files=archive_files(base), timeout=timeout)


_ROOT = Path(os.environ.get("PCPCONFORM_CHROOTS", "/opt/pcpconform"))

REFEREES: tuple[Referee, ...] = (
    Referee("pcp-6.0.3", "bookworm", None, "pcp-6.0", "pcp-6.0", "6.0.", "pcp-6.0"),
    Referee("pcp-6.3", "trixie", _ROOT / "trixie", "pcp-6.3", "pcp-6.3", "6.3.", "pcp-6.3"),
    Referee("pcp-7", "sid", _ROOT / "sid", "pcp-6.3", "pcp-7", "7.", "pcp-7"),
)
BY_NAME = {r.name: r for r in REFEREES}
