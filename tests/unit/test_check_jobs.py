"""``check -j N``: several worker processes give the one-process report, byte for byte, in
every form (one summary, archives in input order), and the same exit status."""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from pathlib import Path

import pytest

from pcpconform.check.diagnostics import Report
from pcpconform.check.runner import _chunks, default_check, run_checks
from pcpconform.cli import main

CASES = Path(__file__).resolve().parents[2] / "corpus" / "cases"
#: valid and invalid archives of both versions, compressed ones, and MMV files
CHOSEN = ("valid/compress-gz-v2", "valid/compress-xz-v3", "valid/quirk-nosupport-sem0-v3",
          "invalid/desc-conflict-v2", "invalid/desc-conflict-v3", "invalid/mmv-cluster-v1",
          "invalid/mmv-header-short-v1", "invalid/desc-indom-domain-v2")


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("many")
    for name in CHOSEN:
        # the case's own archive or MMV file (a case may hold others: a salvage's output)
        case = json.loads((CASES / name / "case.json").read_text())
        into = root / name.replace("/", "-")
        into.mkdir()
        for f in (CASES / name).iterdir():
            if f.name == case.get("file") or f.name.startswith(f"{case.get('archive')}."):
                shutil.copy(f, into / f.name)
    return root


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(["check", *argv])
    out, err = capsys.readouterr()
    return status, out, err


def _untimed(text: str) -> str:
    """Without the per-archive seconds of the json and junit forms (two runs differ there)."""
    return re.sub(r'"seconds": [0-9.e-]+|time="[0-9.]+"', "<seconds>", text)


@pytest.mark.parametrize("form", ["text", "json", "sarif", "junit"])
def test_two_jobs_give_the_one_job_report(capsys: pytest.CaptureFixture[str], tree: Path, form: str) -> None:
    one = _run(capsys, "--format", form, str(tree))
    two = _run(capsys, "--format", form, "-j", "2", str(tree))
    assert one[0] == 1 and "desc.conflict" in one[1] and "mmv." in one[1]
    assert (two[0], _untimed(two[1]), two[2]) == (one[0], _untimed(one[1]), one[2])
    if form == "text":
        assert one[1].count("\nSummary\n") == 1
        assert f"archives checked       {len(CHOSEN)}" in one[1]


def test_every_cpu_gives_the_same_report(capsys: pytest.CaptureFixture[str], tree: Path) -> None:
    one = _run(capsys, "-q", str(tree))
    assert _run(capsys, "-q", "-j", "0", str(tree)) == one


def slow_first(base: Path, max_diagnostics: int | None) -> Report:
    """The real checker, slowed down for the first archive so that it finishes last."""
    if "compress-gz" in str(base):
        time.sleep(0.5)
    return default_check(base, max_diagnostics)


def test_reports_stream_in_input_order(tree: Path) -> None:
    bases = [tree / "valid-compress-gz-v2" / "a", tree / "invalid-desc-conflict-v2" / "a",
             tree / "invalid-desc-conflict-v3" / "a"]
    seen: list[str] = []
    results = run_checks(bases, jobs=2, check=slow_first, on_report=lambda r: seen.append(r.archive))
    assert [r.archive for r in results] == seen == [str(b) for b in bases]


def test_with_the_progress_bar_too(tree: Path) -> None:
    bases = [tree / "valid-compress-gz-v2" / "a", tree / "invalid-desc-conflict-v3" / "a"]
    one, two = (run_checks(bases, jobs=j, progress=True) for j in (1, 2))
    assert [r.to_json() | {"seconds": 0} for r in two] == [r.to_json() | {"seconds": 0} for r in one]
    assert len(two) == 2



def dies_on_die(base: Path, max_diagnostics: int | None) -> Report:
    """The real checker, except that the worker checking an archive named die* dies."""
    if base.name.startswith("die"):
        os._exit(3)
    return default_check(base, max_diagnostics)


def test_a_dead_worker_takes_down_only_its_archive_of_a_batch(tree: Path) -> None:
    small = [tree / "invalid-desc-conflict-v2" / "a", tree / "invalid-mmv-cluster-v1" / "f.mmv"] * 8
    bases = [*small[:13], tree / "die", *small[13:]]
    assert any(len(run) > 1 and 13 in run for run in _chunks(bases, 2))    # it shares a batch
    results = run_checks(bases, jobs=2, check=dies_on_die)
    assert [r.archive for r in results] == [str(b) for b in small]
    assert [c.archive for c in results.crashes] == [str(tree / "die")]
    assert "died" in results.crashes[0].reason


def test_batches_are_consecutive_and_end_at_the_byte_limit(tree: Path) -> None:
    big = tree / "valid-compress-gz-v2" / "a"           # compressed: a whole batch by itself
    small = tree / "invalid-desc-conflict-v2" / "a"
    bases = [small, small, big, small, *[small] * 30]
    runs = _chunks(bases, 2)
    assert [i for run in runs for i in run] == list(range(len(bases)))
    assert runs[0] == range(0, 3) and max(map(len, runs)) == len(bases) // 8
