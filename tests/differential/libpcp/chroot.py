"""Bridge from the project venv to Debian trixie's libpcp (PCP 6.3.x) in a chroot.

.ci/install-pcp-trixie.sh debootstraps trixie into ``TRIXIE_ROOT`` and installs
pcp, python3-pcp and libpcp-import1 there. Scripts run under the chroot's
/usr/bin/python3, so they must only see files inside the chroot:
``run_python`` copies the script and the given files into a fresh directory
under ``TRIXIE_ROOT/tmp``, rewrites path arguments to point there, runs
``chroot TRIXIE_ROOT /usr/bin/python3 ...`` and removes the directory.

* ``pm_read_trixie(base)`` -- tests/differential/libpcp/pm_read.py on archive ``base``,
  same JSON layout as ``bridge.pm_read`` (the host's 6.0.3); a small wrapper
  turns 6.3's str from pmLookupText back into the bytes pm_read.py expects.
* ``pcp_version()`` -- the chroot's PCP version, e.g. "6.3.8".

chroot(2) needs root; ``HAVE_TRIXIE`` is False when the chroot is missing,
incomplete, or cannot be entered. Nothing here imports PCP.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path

from . import bridge

__all__ = ["TRIXIE_ROOT", "HAVE_TRIXIE", "pcp_version", "run_python", "pm_read_trixie"]

#: root of the trixie chroot (.ci/install-pcp-trixie.sh's DIR)
TRIXIE_ROOT = Path(os.environ.get("PCPCONFORM_TRIXIE_ROOT", "/opt/pcpconform/trixie"))

TIMEOUT = 120
CHROOT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def _chroot_cmd(*argv: str, env: Mapping[str, str] | None = None) -> list[str]:
    # a clean environment: nothing of the venv or the host's PCP_* leaks in
    envs = {"PATH": CHROOT_PATH, "LANG": "C.UTF-8", "HOME": "/root"}
    if env:
        envs.update({k: str(v) for k, v in env.items()})
    return ["chroot", str(TRIXIE_ROOT), "/usr/bin/env", "-i",
            *(f"{k}={v}" for k, v in envs.items()), *argv]


def _probe() -> bool:
    if not (TRIXIE_ROOT / "usr/bin/pmdumplog").exists():
        return False
    if not (TRIXIE_ROOT / "usr/bin/python3").exists() or shutil.which("chroot") is None:
        return False
    try:
        proc = subprocess.run(
            _chroot_cmd("/usr/bin/python3", "-E", "-s", "-c",
                        "from pcp import pmi, pmapi; import cpmapi, cpmi"),
            capture_output=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return False
    return proc.returncode == 0


HAVE_TRIXIE: bool = _probe()


@functools.cache
def pcp_version() -> str:
    """The chroot's PCP version as ``pmdumplog --version`` reports it, e.g. "6.3.8"."""
    proc = subprocess.run(_chroot_cmd("/usr/bin/pmdumplog", "--version"),
                          capture_output=True, text=True, timeout=TIMEOUT)
    m = re.search(r"version\s+(\S+)", proc.stdout + proc.stderr)
    if m is None:
        raise bridge.LibpcpError("pmdumplog --version in the trixie chroot", proc)
    return m.group(1)


def run_python(script: os.PathLike | str, *args: os.PathLike | str,
               files: list[Path] | tuple[Path, ...] = (),
               env: Mapping[str, str] | None = None,
               timeout: float = TIMEOUT) -> subprocess.CompletedProcess:
    """Run ``script ARGS`` under the chroot's /usr/bin/python3 (-E -s).

    ``script`` and every file of ``files`` are copied (by base name, which must
    be distinct) into a fresh ``TRIXIE_ROOT/tmp/pcpconform-XXXX``. An argument
    given as a path (``os.PathLike``) that names a copied file, or whose parent
    is the parent of a copied file (an archive base name), is rewritten to the
    same name in that directory; ``str`` arguments pass unchanged. Output is
    captured as text; the exit status is not checked. The directory is removed
    afterwards.
    """
    script = Path(script)
    files = [Path(f) for f in files]
    names = [f.name for f in files] + [script.name]
    if len(set(names)) != len(names):
        raise ValueError(f"files to copy into the chroot share a base name: {names}")
    tmp_root = TRIXIE_ROOT / "tmp"
    host_dir = Path(tempfile.mkdtemp(prefix="pcpconform-", dir=tmp_root))
    inner = "/tmp/" + host_dir.name
    try:
        os.chmod(host_dir, 0o755)
        for f in (*files, script):
            shutil.copy2(f, host_dir / f.name)
        parents = {f.resolve().parent for f in files}
        argv = []
        for a in args:
            if isinstance(a, os.PathLike):
                p = Path(a)
                if p.resolve().parent in parents or p.resolve() in {f.resolve() for f in files}:
                    argv.append(f"{inner}/{p.name}")
                    continue
                raise ValueError(f"path argument {p} is not among the files copied into the chroot")
            argv.append(str(a))
        return subprocess.run(
            _chroot_cmd("/usr/bin/python3", "-E", "-s", f"{inner}/{script.name}", *argv, env=env),
            capture_output=True, text=True, timeout=timeout)
    finally:
        shutil.rmtree(host_dir, ignore_errors=True)


def archive_files(base: os.PathLike | str) -> list[Path]:
    """The files of archive ``base``: ``base.0``, ``base.meta``, ``base.index``, ... (any suffix)."""
    base = Path(base)
    prefix = base.name + "."
    return sorted(p for p in base.parent.iterdir()
                  if p.name.startswith(prefix) and p.is_file())


# PCP 6.3's python bindings return pmLookupText as str (decoded); 6.0.3 returns bytes,
# which pm_read.py decodes itself. This wrapper gives pm_read.py the 6.0.3 behaviour, then
# runs it unchanged as __main__ (same directory, same argv).
_PM_READ_COMPAT = """\
import os, runpy, sys
os.environ["PCP_DERIVED_CONFIG"] = ""
from pcp import pmapi
_lookup_text = pmapi.pmContext.pmLookupText
def pmLookupText(self, *args, **kwargs):
    text = _lookup_text(self, *args, **kwargs)
    return text.encode("utf-8") if isinstance(text, str) else text
pmapi.pmContext.pmLookupText = pmLookupText
script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pm_read.py")
sys.argv = [script] + sys.argv[1:]
runpy.run_path(script, run_name="__main__")
"""


def pm_read_trixie(base: os.PathLike | str, env: Mapping[str, str] | None = None) -> dict:
    """``bridge.pm_read`` through trixie's libpcp: tests/differential/libpcp/pm_read.py in the chroot."""
    base = Path(base)
    files = archive_files(base)
    if not files:
        raise FileNotFoundError(f"no archive files for base {base}")
    with tempfile.TemporaryDirectory(prefix="pcpconform-compat-") as d:
        wrapper = Path(d) / "pm_read_compat.py"
        wrapper.write_text(_PM_READ_COMPAT, encoding="utf-8")
        proc = run_python(wrapper, base, files=[*files, bridge.PM_READ], env=env)
    if proc.returncode != 0:
        raise bridge.LibpcpError(f"pm_read.py {base} (trixie chroot)", proc)
    return json.loads(proc.stdout)


def pm_interp_trixie(base: os.PathLike | str, start_sec: int, start_nsec: int, delta_nsec: int,
                     count: int, pmids: list[str]) -> dict:
    """``bridge.pm_interp`` through trixie's libpcp (pm_interp.py in the chroot)."""
    base = Path(base)
    proc = run_python(bridge.PM_INTERP, base, str(start_sec), str(start_nsec), str(delta_nsec),
                      str(count), *pmids, files=[*archive_files(base), bridge.PM_READ])
    if proc.returncode != 0:
        raise bridge.LibpcpError(f"pm_interp.py {base} (trixie chroot)", proc)
    return json.loads(proc.stdout)
