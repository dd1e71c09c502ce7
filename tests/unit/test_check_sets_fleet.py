"""``check --set`` over many hosts' directories (a fleet): ``-j N`` and ``--dask`` give the
report one process gives (spec/sets.md SET-CLI-3)."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from pcpconform.cli import main

CASES = Path(__file__).resolve().parents[2] / "corpus" / "cases"
#: hosts: clean sets, one with a gap, one refused, one with a damaged member
HOSTS = ("valid/set-gaps", "valid/set-versions", "invalid/set-overlap", "invalid/set-damaged",
         "invalid/set-host", "valid/set-split")


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    root = tmp_path_factory.mktemp("fleet")
    out = []
    for name in HOSTS:
        host = root / name.split("/")[1].replace("set-", "host-")
        host.mkdir()
        for f in (CASES / name).iterdir():
            if ".meta" in f.name or ".index" in f.name or re.search(r"\.[0-9]+$", f.name):
                shutil.copy(f, host / f.name)
        out.append(str(host))
    return out


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(["check", "--set", *argv])
    out, err = capsys.readouterr()
    return status, re.sub(r'"seconds": [0-9.e-]+|time="[0-9.]+"', "<seconds>", out), err


@pytest.mark.parametrize("form", ["text", "json", "sarif"])
def test_jobs_give_the_one_process_report(capsys: pytest.CaptureFixture[str], fleet: list[str], form: str) -> None:
    one = _run(capsys, "--format", form, *fleet)
    assert one[0] == 1 and "set.overlap" in one[1] and "set.member-damaged" in one[1] and "set.host" in one[1]
    assert _run(capsys, "--format", form, "-j", "2", *fleet) == one


@pytest.fixture(scope="module")
def scheduler() -> Iterator[str]:
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                  dashboard_address=None) as cluster:
        yield cluster.scheduler_address


def test_a_dask_cluster_gives_the_one_process_report(capsys: pytest.CaptureFixture[str], fleet: list[str],
                                                     scheduler: str) -> None:
    one = _run(capsys, "--format", "json", *fleet)
    assert _run(capsys, "--format", "json", "--dask", scheduler, *fleet) == one
