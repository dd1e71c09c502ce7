"""Each oracle of the fuzzer fires on a target with a planted defect (tests/data/fuzz_targets),
and stays quiet on the valid input."""

from __future__ import annotations

import struct
import sys
from pathlib import Path

import pytest

from pcpconform.corpusgen.invalid.edit import ArchiveEdit
from pcpconform.fuzz import targets
from pcpconform.fuzz.archive_edit import archive_files, editor
from pcpconform.fuzz.engine import job_files
from pcpconform.fuzz.oracles import Job, Observation, classify, observe, stderr_signature
from pcpconform.fuzz.seeds import archive_seeds
from pcpconform.fuzz.targets import RunResult, Target, execute, target_from_impl, target_from_template

TARGETS = Path(__file__).resolve().parents[1] / "data" / "fuzz_targets"
PY = f"{sys.executable} -S"


def _seed(name: str = "example-v2") -> dict[str, bytes]:
    return dict(dict(archive_seeds())[name])


def _with_desc(field: str, value: int, name: str = "example-v2") -> dict[str, bytes]:
    ed = editor(_seed(name))
    i = ed.find_meta("desc")
    rec = ed.meta(i)
    rec.body[field] = value
    ed.put_meta(i, rec)
    return {k: bytes(v) for k, v in ed.files.items()}


def _observe(target: Target, parts: dict[str, bytes]) -> Observation:
    files, names = job_files("archive", parts)
    return observe(Job(target, "archive", files, names))


def test_crash_oracle_fires_on_the_field_value_only() -> None:
    target = target_from_template(f"{PY} {TARGETS}/segv_on_sem.py {{archive}}", timeout=30)
    assert _observe(target, _seed()).verdict is None
    verdict = _observe(target, _with_desc("sem", 0)).verdict
    assert verdict is not None and (verdict.kind, verdict.detail) == ("crash", "SIGSEGV")


def test_hang_oracle_fires_at_the_timeout() -> None:
    target = target_from_template(f"{PY} {TARGETS}/hang_on_type.py {{archive}}", timeout=3)
    obs = _observe(target, _with_desc("type", 42))
    assert obs.verdict is not None and obs.verdict.kind == "hang"
    assert obs.returncode is None and obs.seconds < 15


@pytest.mark.parametrize("prlimit", [True, False], ids=["prlimit", "preexec"])
def test_memory_oracle_fires_under_the_limit(prlimit: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    if not prlimit:     # without util-linux prlimit the child sets its limits itself
        monkeypatch.setattr(targets, "_PRLIMIT", None)
    target = target_from_template(f"{PY} {TARGETS}/alloc_on_numinst.py {{archive}}", timeout=30, memory_mb=256)
    ed = editor(_seed())
    i = ed.find_meta("indom")
    offset, _ = ed.records("meta")[i - 1]
    ed.poke("meta", offset + 8 + 12, "i", 100000)       # numinst: far more than the record holds
    obs = _observe(target, {k: bytes(v) for k, v in ed.files.items()})
    assert obs.verdict is not None and obs.verdict.kind == "memory", obs


def test_misread_oracle_compares_a_reader_adapter_with_the_kit() -> None:
    target = target_from_impl(f"{sys.executable} {TARGETS}/misread_double.py", timeout=60)
    assert _observe(target, _seed()).verdict is None          # 117.1875 is a float too
    ed = editor(_seed())
    res = ed.result(1)
    vs = ed.vset(res, "60.3.0")
    block = vs.values[0][1]
    block.vbuf = struct.pack(">d", 117.1)       # not a float: the adapter rounds it
    ed.put_result(1, res)
    obs = _observe(target, {k: bytes(v) for k, v in ed.files.items()})
    assert obs.verdict is not None and obs.verdict.kind == "misread", obs
    assert obs.verdict.judge == "kit reader" and "/vsets/N/values/N/value" in obs.verdict.detail


def test_a_python_traceback_is_a_crash() -> None:
    run = RunResult(1, b"", b'Traceback (most recent call last):\n  File "x", line 3\nKeyError: 7\n', 0.1)
    verdict = classify(run, Target(("x",)))
    assert verdict is not None and verdict.kind == "crash" and "KeyError" in verdict.detail


def test_enomem_reported_as_an_error_is_not_a_blow_up() -> None:
    run = RunResult(1, b"", b"pmlogcheck: cannot open archive: Cannot allocate memory\n", 0.1, 2000)
    assert classify(run, Target(("x",))) is None


def test_a_peak_inherited_from_the_spawning_process_is_not_a_blow_up() -> None:
    """Linux reports the spawner's peak as a child's ru_maxrss: only a peak above it is the
    child's own."""
    limit_kb = Target(("x",)).memory_mb * 1024
    inherited = RunResult(0, b"", b"", 0.1, limit_kb, inherited_kb=limit_kb)
    own = RunResult(0, b"", b"", 0.1, limit_kb, inherited_kb=100_000)
    assert classify(inherited, Target(("x",))) is None
    verdict = classify(own, Target(("x",)))
    assert verdict is not None and verdict.kind == "memory"


def test_a_child_inherits_its_spawners_peak(tmp_path: Path) -> None:
    """The run records the peak a child starts with, at least this process's current size."""
    run = execute(["true"], tmp_path, 30, 2048)
    assert run.returncode == 0 and run.inherited_kb > 0 and run.maxrss_kb <= run.inherited_kb + 4096


def test_differential_oracle_says_the_validator_is_the_judge() -> None:
    # `cat` accepts anything silently: the kit's validator calls a bad type an error
    target = target_from_template("cat {archive}.meta", timeout=30)
    files, names = job_files("archive", _with_desc("type", 42))
    obs = observe(Job(target, "archive", files, names, differential=True))
    assert obs.verdict is not None and obs.verdict.kind == "accepts-invalid"
    assert obs.verdict.judge == "kit validator" and "desc.type" in obs.verdict.detail


def test_stderr_signature_strips_numbers_and_paths() -> None:
    a = stderr_signature(b"/tmp/x1/a.0:[08:00:20.000] 60.1.2: pmLookupDesc failed\n")
    b = stderr_signature(b"/tmp/other/a.0:[09:10:21.500] 61.0.7: pmLookupDesc failed\n")
    assert a == b and "PATH" in a and "60" not in a


@pytest.mark.parametrize("template", ["", "pmdumplog -a", "'unbalanced {archive}"])
def test_bad_templates_are_usage_errors(template: str) -> None:
    from pcpconform.errors import UsageError

    with pytest.raises(UsageError):
        target_from_template(template)


def test_archive_files_are_named_by_the_base() -> None:
    assert sorted(archive_files({"meta": b"m", "0": b"v"})) == ["a.0", "a.meta"]
    assert isinstance(editor(_seed()), ArchiveEdit)


def test_the_kits_own_internal_error_is_a_finding(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bug in the kit's validator (planted here: any exception inside a check) is a
    finding against the judge itself, not a silent pass."""
    import pcpconform.check.engine as engine

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("planted")

    monkeypatch.setattr(engine, "check_crossfile", broken)
    files = archive_files(_seed())
    obs = observe(Job(target_from_template("cat {archive}.meta"), "archive", files, {"archive": "a"}))
    assert "check.internal" in obs.codes
    assert obs.verdict is not None and obs.verdict.kind == "kit-internal"


def test_unreadable_output_oracle_checks_what_the_target_writes() -> None:
    target = target_from_template(f"{PY} {TARGETS}/copy_to_out.py {{archive}} {{out}}", timeout=30)
    assert "out" in target.needs
    assert _observe(target, _seed()).verdict is None
    verdict = _observe(target, _with_desc("type", 42)).verdict
    assert verdict is not None and verdict.kind == "unreadable-output" and "desc.type" in verdict.detail


def test_salvage_as_a_target_writes_what_the_validator_accepts() -> None:
    """`pcpconform fuzz --target 'pcpconform salvage {archive} {out}'` (spec/salvage.md)."""
    salvage = "import sys; from pcpconform.cli import main; sys.exit(main())"
    target = target_from_template(f"{sys.executable} -c '{salvage}' salvage {{archive}} {{out}}", timeout=60)
    obs = _observe(target, _with_desc("type", 42))
    assert obs.verdict is None and obs.returncode == 1, obs
    assert b"exit 1: something was lost" in obs.stdout_head


def test_a_template_naming_only_its_output_is_a_usage_error() -> None:
    with pytest.raises(Exception, match="name its input too"):
        target_from_template("cp x {out}")
