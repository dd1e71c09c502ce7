"""The CI guards fire: a missing referee stops the run, a skipped differential test fails."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

from tests.differential.guards import referee_problems, skip_is_failure
from tests.differential.libpcp.referees import REFEREES

ROOT = Path(__file__).resolve().parents[2]


def test_a_missing_chroot_is_a_problem(tmp_path: Path) -> None:
    ghost = replace(REFEREES[1], root=tmp_path / "no-such-chroot")
    problems = referee_problems([ghost])
    assert len(problems) == 1 and "install-pcp-chroot.sh trixie" in problems[0]


def test_a_referee_of_the_wrong_version_is_a_problem() -> None:
    host = REFEREES[0]
    if not host.available():        # nothing to misname without the host's PCP
        assert referee_problems([host])
        return
    wrong = replace(host, version_prefix="99.")
    assert referee_problems([wrong]) == [f"{host.name}: found PCP {host.version}, expected 99.x"]


def test_skips_fail_only_for_differential_tests_in_ci() -> None:
    assert skip_is_failure("/w/tests/differential/test_x.py", ci=True)
    assert not skip_is_failure("/w/tests/differential/test_x.py", ci=False)
    assert not skip_is_failure("/w/tests/unit/test_x.py", ci=True)


def test_a_skipping_differential_test_fails_the_run_in_ci(tmp_path: Path) -> None:
    """End to end: a differential test that calls pytest.skip fails when CI is set."""
    probe = ROOT / "tests" / "differential" / "test_zz_skip_probe.py"
    probe.write_text("import pytest\n\ndef test_skips():\n    pytest.skip('no reason')\n",
                     encoding="utf-8")
    try:
        env = {k: v for k, v in os.environ.items() if k != "CI"}
        run = lambda extra: subprocess.run(  # noqa: E731
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(probe)],
            cwd=ROOT, capture_output=True, text=True, timeout=120, env={**env, **extra})
        local, ci = run({}), run({"CI": "true"})
    finally:
        probe.unlink()
    assert local.returncode == 0 and "1 skipped" in local.stdout, local.stdout + local.stderr
    if referee_problems(REFEREES):      # the session guard stops the run before any test
        assert ci.returncode != 0 and "CI run without its reference libpcps" in ci.stderr, ci.stdout + ci.stderr
    else:
        assert ci.returncode == 1 and "1 failed" in ci.stdout, ci.stdout + ci.stderr
        assert "a differential test may not skip in CI" in ci.stdout
