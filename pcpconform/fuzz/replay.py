"""Replaying a finding: its reproducer run again, its signature compared."""

from __future__ import annotations

from pathlib import Path

from pcpconform.errors import UsageError
from pcpconform.fuzz.findings import FINDING_FILE, backtrace_frames, load_finding, signature_of
from pcpconform.fuzz.oracles import Job, observe

__all__ = ["replay"]


def replay(path: Path) -> tuple[bool, str]:
    """(still the same signature, one line saying what happened)."""
    if not (path / FINDING_FILE).is_file():
        raise UsageError(f"{path}: not a finding directory (no {FINDING_FILE})")
    finding, target = load_finding(path)
    obs = observe(Job(target, finding.input_kind, finding.files, finding.names, (),
                      finding.judge == "kit validator"))
    if obs.verdict is None:
        return False, f"{finding.id}: no longer reproduces (exit {obs.returncode})"
    frames = backtrace_frames(target, finding.files, finding.names)[0] if obs.verdict.kind == "crash" else []
    signature = signature_of(obs.verdict, obs, frames)
    same = signature == finding.signature
    return same, f"{finding.id}: {'reproduces' if same else 'differs'}: {signature}"
