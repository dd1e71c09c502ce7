"""``conform --dask ADDRESS``: the units run on a Dask cluster and the report is the local
run's (text and json, timings aside; exit status), in both forms, also for an implementation
that fails; the workers' persistent processes are stopped at the end."""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from pcpconform.cli import main
from pcpconform.conform import runner as conform_runner
from tests.broken_adapters import broken_adapter

distributed = pytest.importorskip("distributed")

CORPUS = str(Path(__file__).resolve().parents[2] / "corpus")
#: valid and invalid archives, an MMV case, interp and derive expectations
CASES = ("example-v3", "desc-conflict-v2", "compress-gz-v2", "mmv-cluster-v1")
SUITES = ("validator", "reader", "mmv-validator", "interp")


@pytest.fixture(scope="module")
def scheduler() -> Iterator[str]:
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                  dashboard_address=None) as cluster:
        yield cluster.scheduler_address


def _conform(capsys: pytest.CaptureFixture[str], impl: str, *argv: str,
             suites: tuple[str, ...] = SUITES) -> tuple[int, str, str]:
    args = ["conform", "--impl", impl, "--corpus", CORPUS, "-v"]
    for case in CASES:
        args += ["--cases", case]
    for suite in suites:
        args += ["--suite", suite]
    status = main([*args, *argv])
    out, err = capsys.readouterr()
    return status, out, err


def _untimed(text: str) -> str:
    """Without the seconds each unit and the run took (two local runs differ there too)."""
    return re.sub(r'"seconds": [0-9.e-]+|, [0-9.]+ s\)', "<seconds>", text)


# the one-shot form starts a process per unit: fewer units keep it quick
@pytest.mark.parametrize(("form", "fmt", "suites"), [("--persistent", "text", SUITES), ("--persistent", "json", SUITES),
                                                     ("--one-shot", "json", ("validator", "mmv-validator"))])
def test_the_cluster_gives_the_local_report(capsys: pytest.CaptureFixture[str], scheduler: str,
                                            form: str, fmt: str, suites: tuple[str, ...]) -> None:
    local = _conform(capsys, "builtin:pcpconform", form, "--format", fmt, suites=suites)
    remote = _conform(capsys, "builtin:pcpconform", form, "--format", fmt, "--dask", scheduler, suites=suites)
    assert local[0] == 0 and "mmv-cluster-v1" in local[1] and "desc-conflict-v2" in local[1]
    assert (remote[0], _untimed(remote[1]), remote[2]) == (local[0], _untimed(local[1]), local[2])
    assert conform_runner._WORKER_SESSIONS == {}     # every worker's processes stopped


def test_a_failing_implementation_fails_alike(capsys: pytest.CaptureFixture[str], scheduler: str,
                                              tmp_path: Path) -> None:
    impl = broken_adapter(tmp_path, "def perturb(suite, args, text):\n"     # the dump's last record lost
                                    "    return text.rsplit('\\n', 2)[0] + '\\n' if suite == 'reader' else text\n")
    local = _conform(capsys, impl, "--format", "json")
    remote = _conform(capsys, impl, "--format", "json", "--dask", scheduler)
    assert local[0] == 1 and '"fail"' in local[1]
    assert (remote[0], _untimed(remote[1])) == (local[0], _untimed(local[1]))


@pytest.mark.parametrize("address", ["bogus://nowhere", " "])
def test_a_bad_address_is_one_line_and_status_2(capsys: pytest.CaptureFixture[str], address: str) -> None:
    status, out, err = _conform(capsys, "builtin:pcpconform", "--dask", address)
    assert (status, out) == (2, "")
    assert len(err.splitlines()) == 1 and err.startswith("pcpconform conform: --dask")


def test_without_dask_the_extra_is_named(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)     # as if not installed
    status, out, err = _conform(capsys, "builtin:pcpconform", "--dask", "tcp://127.0.0.1:8786")
    assert (status, out) == (2, "")
    assert err == ("pcpconform conform: pcpconform conform --dask needs distributed: install pcpconform[dask] "
                   "(pip install 'pcpconform[dask]')\n")


def test_not_with_the_matrix(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["conform", "--matrix", "--dask", "tcp://127.0.0.1:8786"]) == 2
    assert "--matrix" in capsys.readouterr().err


def test_worker_processes_give_the_local_report(capsys: pytest.CaptureFixture[str]) -> None:
    # units, cases and capabilities cross process boundaries (pickled) as on a real cluster
    local = _conform(capsys, "builtin:pcpconform", "--format", "json", suites=("validator", "mmv-validator"))
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                  dashboard_address=":0") as cluster:      # any free port
        remote = _conform(capsys, "builtin:pcpconform", "--format", "json", "--dask", cluster.scheduler_address,
                          suites=("validator", "mmv-validator"))
    assert (remote[0], _untimed(remote[1])) == (local[0], _untimed(local[1]))


def test_a_worker_of_another_version_stops_the_run(capsys: pytest.CaptureFixture[str], scheduler: str,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(conform_runner, "__version__", "0.0.0-other")     # as the submitting side sees it
    status, out, err = _conform(capsys, "builtin:pcpconform", "--dask", scheduler, suites=("validator",))
    assert (status, out) == (2, "")
    assert len(err.splitlines()) == 1 and "runs pcpconform" in err and "not 0.0.0-other" in err
