import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

# CI runs a fixed set of examples (reproducible verdicts); locally hypothesis explores
settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")

from tests.differential.guards import referee_problems  # noqa: E402 (after the profile)
from tests.differential.libpcp.referees import REFEREES  # noqa: E402


def pytest_sessionstart(session: pytest.Session) -> None:
    # In CI every reference must be there: a differential suite that skips proves nothing.
    if not os.environ.get("CI"):
        return
    problems = referee_problems(REFEREES)
    if problems:
        raise pytest.UsageError("CI run without its reference libpcps: " + "; ".join(problems))


#: a small archive for the command-line tests: a U64 counter and a DOUBLE instant over three
#: CPUs (one with a space in its name), 10 s apart, one counter going down
CPU = {
    "archive": {"version": 3, "hostname": "h", "timezone": "UTC", "interval": 10},
    "metrics": [
        {"name": "cpu.busy", "pmid": "245.0.10", "type": "u64", "sem": "counter",
         "units": "count", "indom": "245.1"},
        {"name": "cpu.temp", "pmid": "245.0.11", "type": "double", "sem": "instant",
         "indom": "245.1"},
    ],
    "indoms": [{"indom": "245.1", "instances": {"cpu0": 0, "cpu1 socket0": 1, "cpu2": 2}}],
    "samples": [
        {"time": 1700000000, "values": {"cpu.busy": {"cpu0": 100, "cpu1 socket0": 5000, "cpu2": 7},
                                "cpu.temp": {"cpu0": 40.5, "cpu1 socket0": 41.0, "cpu2": 39.0}}},
        {"values": {"cpu.busy": {"cpu0": 400, "cpu1 socket0": 5200, "cpu2": 7},
                    "cpu.temp": {"cpu0": 42.0, "cpu1 socket0": 41.5, "cpu2": 39.0}}},
        {"values": {"cpu.busy": {"cpu0": 1000, "cpu1 socket0": 5100, "cpu2": 9},
                    "cpu.temp": {"cpu0": 44.0, "cpu1 socket0": 43.0, "cpu2": 38.0}}},
        {"values": {"cpu.busy": {"cpu0": 1300, "cpu1 socket0": 5900, "cpu2": 11},
                    "cpu.temp": {"cpu0": 41.0, "cpu1 socket0": 40.0, "cpu2": 37.0}}},
    ],
}


@pytest.fixture(scope="session")
def cpu(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from pcpconform.fixtures.fixture import parse_fixture
    from pcpconform.fixtures.generate import generate_archive

    base = tmp_path_factory.mktemp("cpu") / "c"
    generate_archive(parse_fixture(CPU), base)
    return base


@pytest.fixture
def host_pcp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> object:
    """``host_pcp("6.3.8")`` makes ``--rules auto`` and the default's note (INTERP-CLI-8)
    see that PCP installed here (a pcp.conf of its own), whatever this host has."""
    def install(version: str) -> Path:
        conf = tmp_path / f"pcp-{version}.conf"
        conf.write_text(f"PCP_SYSCONF_DIR=/etc/pcp\nPCP_VERSION={version}\n")
        monkeypatch.setenv("PCP_CONF", str(conf))
        return conf
    return install


@pytest.fixture
def default_host_pcp(host_pcp: Any) -> None:
    """A host PCP that replays by the default rules, so that no note is printed."""
    host_pcp("6.3.8")
