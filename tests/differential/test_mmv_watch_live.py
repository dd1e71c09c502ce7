"""``check --watch`` on a live writer: libpcp_mmv (PCP 6.0.3, the host's) writing a file by a
plan (libpcp/mmv_live.py) while the watcher samples it every 100 ms: a planted half-written
counter, a rewrite in progress, a new generation, a file removed, a writer gone, a metric
that never changes, each reported as MMV-CHK-WATCH-* says; a writer ticking normally draws
none of the errors."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from pcpconform.check.mmv.watch import watch_mmv
from pcpconform.check.rules import Severity
from tests.cli import run_cli
from tests.differential.libpcp.referees import BY_NAME

pytestmark = [pytest.mark.libpcp]

WRITER = Path(__file__).parent / "libpcp" / "mmv_live.py"
HOST = BY_NAME["pcp-6.0.3"]


def _writer(path: Path, *steps: str) -> subprocess.Popen[str]:
    if not HOST.available():
        pytest.skip(HOST.why_missing())
    proc = subprocess.Popen([HOST.system_python, "-E", "-s", str(WRITER), str(path), *steps],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready", proc.stderr
    return proc


def _codes(reports: list, severity: Severity | None = None) -> dict[str, int]:
    out: dict[str, int] = {}
    for r in reports:
        for d in r.diagnostics:
            if severity is None or d.severity == severity:
                out[d.code] = out.get(d.code, 0) + 1
    return out


def test_torn_rewritten_and_removed(tmp_path: Path) -> None:
    live = tmp_path / "app"
    proc = _writer(live, "tick", "torn", "tick", "rewrite", "tick", "delete", "tick")
    try:
        reports = watch_mmv(tmp_path, interval=0.1, duration=11.0)
    finally:
        proc.wait(timeout=60)
    codes = _codes(reports)
    assert codes.get("mmv.watch-torn") == 1, codes
    assert "mmv.watch-counter-regress" not in codes
    assert codes.get("mmv.watch-rewriting", 0) >= 1 and codes.get("mmv.watch-generation") == 1
    assert codes.get("mmv.watch-file-gone") == 1
    (report,) = reports
    torn = next(d for d in report.diagnostics if d.code == "mmv.watch-torn")
    assert torn.metric == "mmv.app.bytes" and torn.time and "half written" in torn.message
    static = [d.metric for d in report.diagnostics if d.code == "mmv.watch-static"]
    assert static == ["mmv.app.steady"]


def test_a_normal_writer_and_one_that_is_gone(tmp_path: Path) -> None:
    live = tmp_path / "app"
    proc = _writer(live, "tick", "tick", "tick")
    reports = watch_mmv(live, interval=0.2, duration=5.0)
    proc.wait(timeout=60)
    assert not _codes(reports, Severity.ERROR) and not _codes(reports, Severity.WARNING), _codes(reports)
    # the writer has exited and left its file behind (PROCESS flag): the PMDA drops it
    codes = _codes(watch_mmv(live, interval=0.05, count=3))
    assert codes.get("mmv.watch-process-gone") == 1, codes


def test_the_command(tmp_path: Path) -> None:
    live = tmp_path / "app"
    proc = _writer(live, "torn", "tick")
    try:
        status, out, err = run_cli("check", "--watch", str(live), "--interval", "100ms", "--time", "4s")
    finally:
        proc.wait(timeout=60)
    assert status == 1 and "error mmv.watch-torn" in out, (out, err)
    status, _, err = run_cli("check", "--watch", str(live), str(live))
    assert status == 2 and "one MMV file or one directory" in err
