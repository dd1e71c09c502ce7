"""Differential tests: every one runs against each real libpcp (``referee`` fixture).

Locally a missing referee skips its tests with the command that installs it; in CI (CI set)
nothing here may skip: the session refuses to start without all three referees
(tests/conftest.py), and any skip of a differential test is turned into a failure.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.differential.guards import skip_is_failure
from tests.differential.libpcp import pmlogger
from tests.differential.libpcp.referees import REFEREES, Referee

CI = bool(os.environ.get("CI"))


@pytest.fixture(params=REFEREES, ids=[r.name for r in REFEREES])
def referee(request: pytest.FixtureRequest) -> Referee:
    """Each reference libpcp in turn."""
    ref: Referee = request.param
    if not ref.available():
        if CI:
            pytest.fail(f"{ref.name}: {ref.why_missing()}")
        pytest.skip(f"{ref.name}: {ref.why_missing()}")
    return ref


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):  # type: ignore[no-untyped-def]
    outcome = yield
    report = outcome.get_result()
    if report.skipped and skip_is_failure(str(item.path), ci=CI):
        report.outcome = "failed"
        report.longrepr = f"a differential test may not skip in CI: {report.longrepr}"


@pytest.fixture(scope="session")
def pmlogger_archives(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Real archives recorded by the host's pmlogger from a pmcd started for the session:
    v2, v3, a multi-volume v3 and a v2 with logged derived metrics."""
    if not pmlogger.available():
        if CI:
            pytest.fail("pmlogger archives cannot be recorded here (needs root and pmlogger)")
        pytest.skip("needs root and pmlogger")
    root = tmp_path_factory.mktemp("pmlogger")
    session = pmlogger.PmcdSession()
    session.start(root)
    try:
        return {
            "v2": pmlogger.record_with(session, root, root / "v2" / "a", version=2),
            "v3": pmlogger.record_with(session, root, root / "v3" / "a", version=3),
            "v3-multivolume": pmlogger.record_with(session, root, root / "mv" / "a", version=3, samples=40,
                                                   volume_size="40k"),
            "v2-derived": pmlogger.record_with(session, root, root / "dv" / "a", version=2, samples=3,
                                               derived=True),
        }
    finally:
        session.stop()
