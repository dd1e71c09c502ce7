"""Findings: a signature per distinct defect (signal and the top frames of a backtrace
where gdb can give one, else the kind and the normalised standard error), and the findings
directory, one subdirectory per signature holding the reproducer and what was seen."""

from __future__ import annotations

import base64
import hashlib
import json
import re
import shlex
import shutil
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from pcpconform.fuzz.oracles import Observation, Verdict
from pcpconform.fuzz.targets import Target

__all__ = ["Finding", "backtrace_frames", "signature_of", "write_finding", "load_finding", "load_findings",
           "FINDING_FILE", "INPUT_DIR"]

FINDING_FILE = "finding.json"
INPUT_DIR = "input"
_FRAME = re.compile(r"^#\d+\s+(?:(0x[0-9a-f]+) in )?([A-Za-z_][\w:~<>]*|\?\?)\s*\(", re.M)
#: frames of the C library's abort and heap-check path: the defect is below them
_LIBC = re.compile(r"^(__|_int_|raise$|abort$|malloc_printerr$|pthread_kill|\?\?$|_IO_|__GI_)")


@dataclass
class Finding:
    """One distinct defect and its (shrunk) reproducer."""

    id: str
    signature: str
    kind: str
    detail: str
    judge: str
    evidence: str
    command: str
    target_version: str
    input_kind: str
    names: dict[str, str]
    files: dict[str, bytes]
    notes: list[str]
    returncode: int | None
    stderr: str
    stdout_head: str
    codes: list[str]
    diagnostics: list[dict[str, Any]] = field(default_factory=list)
    frames: list[str] = field(default_factory=list)
    backtrace: str = ""
    seed: int = 0
    run: int = 0
    original_size: int = 0
    hits: int = 1

    @property
    def size(self) -> int:
        return sum(len(v) for v in self.files.values())


def backtrace_frames(target: Target, files: Mapping[str, bytes], names: Mapping[str, str]) -> tuple[list[str], str]:
    """The top frames (function names, C library abort path skipped) of the crash under
    ``gdb -batch``; nothing when gdb is missing or the target runs in a chroot."""
    gdb = shutil.which("gdb")
    if gdb is None or target.chroot is not None or target.impl:
        return [], ""
    wrapper = [gdb, "-batch", "-nx", "-q", "-ex", "set pagination off", "-ex", "set startup-with-shell off",
               "-ex", "run", "-ex", "bt 20", "--args"]
    run = target.run(files, names, wrapper=wrapper, timeout=max(60.0, target.timeout * 4))
    text = run.stdout.decode("utf-8", "replace")
    if "received signal" not in text:
        return [], text[-4000:]
    bt = text[text.index("received signal"):]
    # a stripped binary has no names: gdb runs it without address randomisation, so the
    # address itself is stable for one build
    frames = [f"??@{addr}" if name == "??" else name for addr, name in _FRAME.findall(bt)
              if name == "??" or not _LIBC.match(name)]
    return frames[:3], bt[:4000]


def signature_of(verdict: Verdict, obs: Observation, frames: list[str]) -> str:
    """What makes a finding distinct: kind, signal and frames for a crash with a backtrace,
    else kind, detail and the normalised standard error."""
    if verdict.kind == "crash" and frames:
        return f"crash {verdict.detail} in {' < '.join(frames)}"
    if verdict.kind == "crash":
        return f"crash {verdict.detail} [{obs.stderr_sig}]"
    if verdict.kind in ("hang", "memory"):
        return f"{verdict.kind} [{obs.stderr_sig}]"
    return f"{verdict.kind} {verdict.detail}"


def finding_id(signature: str) -> str:
    return "f-" + hashlib.sha256(signature.encode()).hexdigest()[:10]


def _filled_command(target: Target, names: Mapping[str, str]) -> str:
    where = {"dir": f"{INPUT_DIR}", **{k: f"{INPUT_DIR}/{v}" for k, v in names.items()}}
    words = [re.sub(r"\{(archive|dir|mmv|config)\}", lambda m: where.get(m.group(1), m.group(0)), w)
             for w in target.argv]
    if target.chroot is not None:
        words = ["chroot", str(target.chroot), *words, "  # with input/ copied under ROOT/tmp"]
    return shlex.join(words)


def write_finding(root: Path, finding: Finding, target: Target) -> Path:
    """Write (or rewrite) a finding's directory: the input files, the command, the target's
    version and output, the validator's diagnostics, and finding.json."""
    where = root / finding.id
    if where.exists():
        shutil.rmtree(where)
    (where / INPUT_DIR).mkdir(parents=True)
    for name, data in finding.files.items():
        (where / INPUT_DIR / name).write_bytes(data)
    (where / "command.txt").write_text(_filled_command(target, finding.names) + "\n")
    (where / "target-version.txt").write_text(finding.target_version + "\n")
    (where / "stderr.txt").write_text(finding.stderr)
    (where / "stdout-head.txt").write_text(finding.stdout_head)
    (where / "diagnostics.json").write_text(json.dumps(finding.diagnostics, indent=1) + "\n")
    if finding.backtrace:
        (where / "backtrace.txt").write_text(finding.backtrace)
    meta = asdict(finding)
    meta["files"] = {k: base64.b64encode(v).decode() for k, v in finding.files.items()}
    meta["target"] = {"argv": list(target.argv), "chroot": str(target.chroot) if target.chroot else None,
                      "impl": target.impl, "timeout": target.timeout, "memory_mb": target.memory_mb}
    (where / FINDING_FILE).write_text(json.dumps(meta, indent=1, sort_keys=True) + "\n")
    return where


def load_finding(path: Path) -> tuple[Finding, Target]:
    meta = json.loads((path / FINDING_FILE).read_text())
    t = meta.pop("target")
    meta["files"] = {k: base64.b64decode(v) for k, v in meta["files"].items()}
    target = Target(tuple(t["argv"]), t["timeout"], t["memory_mb"], Path(t["chroot"]) if t["chroot"] else None,
                    t["impl"])
    return Finding(**meta), target


def load_findings(root: Path) -> dict[str, Finding]:
    """Every finding already in a findings directory, by signature."""
    out: dict[str, Finding] = {}
    if root.is_dir():
        for sub in sorted(root.iterdir()):
            if (sub / FINDING_FILE).is_file():
                try:
                    finding, _ = load_finding(sub)
                except (ValueError, KeyError, TypeError):
                    continue
                out[finding.signature] = finding
    return out
