"""Record real archives with pmlogger from a pmcd started for the test session.

Needs root and Debian's PCP. The PMNS is built if missing and pmcd is started if no pmcd
answers; whatever this module started, it stops. A pmcd it did not start may stop at any
time (another test session on the host owns it): ``record_with`` starts one then and
records again.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

PMCD = Path("/usr/lib/pcp/bin/pmcd")
PMNS = Path("/var/lib/pcp/pmns")

CONFIG = """\
log mandatory on 100 msec {
    kernel.all.load
    kernel.all.cpu
    kernel.percpu.cpu
    mem.util
    disk.dev
    network.interface
    kernel.uname
    hinv
    proc.nprocs
    filesys
    pmcd.pmlogger
}
"""


def _pmcd_answers() -> bool:
    proc = subprocess.run(["pminfo", "-f", "hinv.ncpu"], capture_output=True, timeout=30)
    return proc.returncode == 0


def available() -> bool:
    return os.geteuid() == 0 and PMCD.exists() and shutil.which("pmlogger") is not None


class PmcdSession:
    """A pmcd for the duration of a test session."""

    def __init__(self) -> None:
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, logdir: Path) -> None:
        """Make sure a pmcd answers: one already running (another session's, say), or one
        started here."""
        if not (PMNS / "root").exists():
            subprocess.run(["./Rebuild", "-u"], cwd=PMNS, capture_output=True, timeout=120, check=True)
        if _pmcd_answers():
            return
        if self.proc is not None and self.proc.poll() is None:
            self.stop()                 # ours, but no longer answering
        self.proc = subprocess.Popen([str(PMCD), "-f", "-l", str(logdir / "pmcd.log")],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                     start_new_session=True, cwd=logdir)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if _pmcd_answers():
                return
            time.sleep(0.5)
        raise RuntimeError(f"pmcd did not answer; see {logdir / 'pmcd.log'}")

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()


def record_with(session: PmcdSession, logdir: Path, base: Path, *, version: int, samples: int = 30,
                volume_size: str | None = None, derived: bool = False) -> Path:
    """``record`` from a pmcd ``session`` makes sure of first. A pmcd this session did not
    start can stop while pmlogger runs (another test session sharing the host stops its
    own): pmlogger then cannot connect, and the recording is made again once, from a pmcd
    started here."""
    def recorded() -> Path:
        session.start(logdir)
        return record(base, version=version, samples=samples, volume_size=volume_size, derived=derived)
    try:
        return recorded()
    except subprocess.CalledProcessError:
        if _pmcd_answers():
            raise                       # pmlogger failed for another reason
    for stale in base.parent.glob(f"{base.name}.*"):
        stale.unlink()
    return recorded()


def record(base: Path, *, version: int, samples: int = 30, volume_size: str | None = None,
           derived: bool = False) -> Path:
    """Run pmlogger for ``samples`` samples (100 ms apart) into archive ``base``.

    With ``derived``, the system's derived metrics are logged too (domain 511 pmIDs with
    indoms of another domain); 6.0.3's pmlogger then dumps every result to its log, which
    is slow, so keep such runs short.
    """
    base.parent.mkdir(parents=True, exist_ok=True)
    config = base.parent / "pmlogger.config"
    config.write_text(CONFIG)
    argv = ["pmlogger", "-c", str(config), "-s", str(samples), "-V", str(version),
            "-l", str(base.parent / f"{base.name}.log")]
    if volume_size:
        argv += ["-v", volume_size]
    env = dict(os.environ)
    if not derived:
        env["PCP_DERIVED_CONFIG"] = ""
    subprocess.run([*argv, str(base)], capture_output=True, timeout=300, check=True, env=env)
    return base
