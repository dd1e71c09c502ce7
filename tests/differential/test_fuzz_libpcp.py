"""The fuzzer's promoted findings (corpus/cases/invalid/fuzz-*) against each real libpcp:
the reproducer does to that version's tool what docs/findings.md says (measured table in
tests/data/fuzz_targets/replays.json), run both as the referees run tools and through the
fuzzer's own target runner (--chroot for 6.3 and 7), deterministically."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest

from pcpconform.fuzz.archive_edit import read_archive
from pcpconform.fuzz.engine import job_files
from pcpconform.fuzz.oracles import classify
from pcpconform.fuzz.targets import Target
from tests.differential.libpcp.referees import Referee

ROOT = Path(__file__).resolve().parents[2]
TABLE = json.loads((ROOT / "tests" / "data" / "fuzz_targets" / "replays.json").read_text())
CASES = sorted(TABLE)


def _outcome(returncode: int | None) -> str:
    if returncode is None:
        return "timeout"
    if returncode < 0:
        return signal.Signals(-returncode).name
    if returncode > 128:
        return signal.Signals(returncode - 128).name
    return f"exit {returncode}"


def test_every_promoted_finding_has_a_measured_row() -> None:
    promoted = sorted(p.name for p in (ROOT / "corpus" / "cases" / "invalid").glob("fuzz-*"))
    assert promoted == CASES and CASES


@pytest.mark.parametrize("case", CASES)
def test_the_reproducer_does_what_was_measured(referee: Referee, case: str) -> None:
    row = TABLE[case]
    base = ROOT / "corpus" / "cases" / "invalid" / case / "a"
    argv = [base if word == "{archive}" else word for word in row["argv"]]
    first = referee.on_archive(argv, base, timeout=60)
    again = referee.on_archive(argv, base, timeout=60)
    assert _outcome(first.returncode) == row[referee.name] == _outcome(again.returncode)
    # the fuzzer's own runner (a private directory, limits, a chroot for 6.3 and 7) agrees
    target = Target(tuple(row["argv"]), timeout=60, memory_mb=1024, chroot=referee.root)
    files, names = job_files("archive", read_archive(base))
    run = target.run(files, names)
    assert _outcome(run.returncode) == row[referee.name]
    verdict = classify(run, target)
    assert (verdict is not None and verdict.kind == "crash") == (row[referee.name].startswith("SIG"))
