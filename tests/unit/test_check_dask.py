"""``check --dask ADDRESS``: the same work on a Dask cluster gives the local run's report
byte for byte (text, json, sarif; exit status; text streamed in input order), and a cluster
that cannot be used is one clean line and exit status 2."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pcpconform import cluster as cluster_module
from pcpconform.check.diagnostics import Report
from pcpconform.check.runner import default_check, run_checks
from pcpconform.cli import main
from pcpconform.cluster import worker_problem
from pcpconform.errors import UsageError
from pcpconform.version import __version__

distributed = pytest.importorskip("distributed")

CASES = Path(__file__).resolve().parents[2] / "corpus" / "cases"
#: valid and invalid archives of both versions, a compressed one, and MMV files
CHOSEN = ("valid/compress-gz-v2", "valid/quirk-nosupport-sem0-v3", "invalid/desc-conflict-v2",
          "invalid/desc-conflict-v3", "invalid/mmv-cluster-v1", "invalid/mmv-header-short-v1")


@pytest.fixture(scope="module")
def scheduler() -> Iterator[str]:
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                  dashboard_address=None) as cluster:
        yield cluster.scheduler_address


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("many")
    for name in CHOSEN:
        shutil.copytree(CASES / name, root / name.replace("/", "-"))
    return root


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(["check", *argv])
    out, err = capsys.readouterr()
    return status, out, err


def _untimed(text: str) -> str:
    """Without the per-archive seconds of the json form (two local runs differ there too)."""
    return re.sub(r'"seconds": [0-9.e-]+', '"seconds": 0', text)


@pytest.mark.parametrize("form", ["text", "json", "sarif"])
def test_the_cluster_gives_the_local_report(capsys: pytest.CaptureFixture[str], scheduler: str, tree: Path,
                                            form: str) -> None:
    local = _run(capsys, "--format", form, str(tree))
    remote = _run(capsys, "--format", form, "--dask", scheduler, str(tree))
    assert local[0] == 1 and "desc.conflict" in local[1] and "mmv." in local[1]
    assert (remote[0], _untimed(remote[1]), remote[2]) == (local[0], _untimed(local[1]), local[2])


def test_an_archive_of_errors_and_one_without(capsys: pytest.CaptureFixture[str], scheduler: str,
                                              tree: Path) -> None:
    valid = str(tree / "valid-compress-gz-v2" / "a")
    assert _run(capsys, "--dask", scheduler, valid)[0] == 0
    assert _run(capsys, "--dask", scheduler, "--strict", str(tree / "valid-quirk-nosupport-sem0-v3"))[0] == 1


def slow_first(base: Path, max_diagnostics: int | None) -> Report:
    """The real checker, slowed down for the first archive so that it finishes last."""
    if "compress-gz" in str(base):
        time.sleep(0.5)
    return default_check(base, max_diagnostics)


def test_reports_stream_in_input_order(scheduler: str, tree: Path) -> None:
    bases = [tree / "valid-compress-gz-v2" / "a", tree / "invalid-desc-conflict-v2" / "a",
             tree / "invalid-desc-conflict-v3" / "a"]
    seen: list[tuple[str, float]] = []
    results = run_checks(bases, check=slow_first, dask=scheduler,
                         on_report=lambda r: seen.append((r.archive, time.monotonic())))
    assert [r.archive for r in results] == [a for a, _ in seen] == [str(b) for b in bases]
    assert not results.crashes


def test_a_worker_that_cannot_see_the_files_says_so(scheduler: str, tmp_path: Path) -> None:
    results = run_checks([tmp_path / "gone" / "a"], dask=scheduler)
    assert not results and "does not see" in results.crashes[0].reason


def test_what_a_worker_must_share() -> None:
    here = Path(__file__)
    assert worker_problem(__version__, "/", [here]) is None
    assert "runs pcpconform" in (worker_problem("0.0.0-other", "/", [here]) or "")
    assert "give absolute paths" in (worker_problem(__version__, "/elsewhere",
                                                    [Path("a/b")]) or "")


@pytest.mark.parametrize("address", ["tcp://127.0.0.1:1", " "])
def test_a_bad_address_is_one_line_and_status_2(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
                                                tree: Path, address: str) -> None:
    monkeypatch.setattr(cluster_module, "CONNECT_TIMEOUT", 0.5)     # nothing listens there
    status, out, err = _run(capsys, "-q", "--dask", address, str(tree))
    assert (status, out) == (2, "")
    assert len(err.splitlines()) == 1 and err.startswith("pcpconform check: --dask")


@pytest.mark.parametrize("address", ["bogus://nowhere", "tcp://host:port"])
def test_a_malformed_address_leaves_nothing_behind(tree: Path, address: str) -> None:
    # a Client that fails half-started hangs and prints a traceback at interpreter exit
    done = subprocess.run([sys.executable, "-c", "import sys; from pcpconform.cli import main; sys.exit(main())",
                           "check", "-q", "--dask", address, str(tree)],
                          capture_output=True, text=True, timeout=60, check=False)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.startswith(f"pcpconform check: --dask {address}: cannot reach the scheduler: ")
    assert len(done.stderr.splitlines()) == 1


def test_without_dask_the_extra_is_named(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
                                         tree: Path) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)     # as if not installed
    status, out, err = _run(capsys, "-q", "--dask", "tcp://127.0.0.1:8786", str(tree))
    assert (status, out) == (2, "")
    assert err == ("pcpconform check: pcpconform check --dask needs distributed: install pcpconform[dask] "
                   "(pip install 'pcpconform[dask]')\n")


def test_worker_processes_give_the_local_report(capsys: pytest.CaptureFixture[str], tree: Path) -> None:
    # checker, paths and reports cross process boundaries (pickled) as on a real cluster
    local = _run(capsys, "--format", "json", str(tree))
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                  dashboard_address=":0") as cluster:      # any free port
        remote = _run(capsys, "--format", "json", "--dask", cluster.scheduler_address, str(tree))
    assert (remote[0], _untimed(remote[1])) == (local[0], _untimed(local[1]))


def slow(base: Path, max_diagnostics: int | None) -> Report:
    time.sleep(0.3)
    return default_check(base, max_diagnostics)


def test_a_scheduler_lost_midway_is_a_usage_error(tree: Path) -> None:
    cluster = distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=":0")
    threading.Timer(0.8, cluster.close).start()
    with pytest.raises(UsageError, match="the cluster stopped the work"):
        run_checks([tree / "invalid-desc-conflict-v2" / "a"] * 10, check=slow, dask=cluster.scheduler_address)
