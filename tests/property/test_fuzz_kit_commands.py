"""A short fixed-seed campaign against the kit's own commands: no traceback, signal, hang or
memory blow-up on any mutant (the fuzzer's crash oracle counts a Python traceback)."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest

from pcpconform.fuzz.campaign import Campaign, Options
from pcpconform.fuzz.targets import target_from_template

KIT = f"{shlex.quote(sys.executable)} -c 'from pcpconform.cli import main; raise SystemExit(main())'"
COMMANDS = {
    "check": "check {archive}",
    "dump": "dump --format jsonl {archive}",
    "rebuild": "rebuild {archive} {dir}/out",
    "interp": "interp {archive} disk.dev.read_bytes kernel.all.load --samples 4 --format json",
    "derive": "derive {archive} --define 'd.x = rate(disk.dev.read_bytes) * 2' --samples 4 --format json",
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_no_kit_command_crashes_hangs_or_blows_up(command: str, tmp_path: Path) -> None:
    target = target_from_template(f"{KIT} {COMMANDS[command]}", timeout=60, memory_mb=2048)
    summary = Campaign(Options(target, tmp_path, seed=13, runs=6, shrink_runs=0)).run()
    bad = [f"{f.signature}: {f.stderr[-300:]}" for f in summary.findings if f.kind in ("crash", "hang", "memory")]
    assert bad == []
    assert summary.runs == 6
