"""What ``pcpconform check`` checks: directory scans by content, MMV dispatch, and the OS
failures that are exit 2 with one clean line (CHECK-EXIT-1)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pcpconform.check.inputs import expand, is_archive_component
from pcpconform.cli import main
from pcpconform.fixtures import bundled_fixture
from pcpconform.fixtures.fixture import load_fixture
from pcpconform.fixtures.generate import generate_archive
from pcpconform.mmv.schema import MMV_MAGIC

CaptureFixture = pytest.CaptureFixture[str]


def _archive(base: Path) -> Path:
    base.parent.mkdir(parents=True, exist_ok=True)
    generate_archive(load_fixture(bundled_fixture("example")), base, version=3)
    return base


def _clutter(root: Path, n: int = 300) -> None:
    """An /etc-like directory: files named like volumes, rotated logs, a shared library, a
    symbolic link loop, a FIFO."""
    root.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        (root / f"conf{i}.{i % 7}").write_text("key = value\n" * 3)
    (root / "x.1").write_bytes(b"\0" * 64)
    (root / "pmlogger.log.1").write_text("pmlogger: started\n" * 10)
    (root / "libfoo.so.1").write_bytes(b"\x7fELF" + b"\0" * 4096)
    (root / "short.meta").write_bytes(b"\0\0")
    sub = root / "sub"
    sub.mkdir()
    (sub / "loop").symlink_to(sub)
    (sub / "self.0").symlink_to(sub / "self.0")
    os.mkfifo(root / "fifo.0")


def test_etc_like_directory_has_no_archive(tmp_path: Path, capsys: CaptureFixture) -> None:
    _clutter(tmp_path / "etc")
    started = time.perf_counter()
    found = expand([str(tmp_path / "etc")])
    assert time.perf_counter() - started < 5
    assert found.bases == [] and found.mmv == []
    assert found.problems == [f"{tmp_path / 'etc'}: no archive found"]
    assert found.skipped >= 300
    assert main(["check", str(tmp_path / "etc")]) == 2
    err = capsys.readouterr().err
    assert "no archive found" in err and "skipped" in err and "Traceback" not in err


def test_archives_among_other_files_are_found(tmp_path: Path, capsys: CaptureFixture) -> None:
    _clutter(tmp_path / "log", n=20)
    base = _archive(tmp_path / "log" / "pmlogger" / "20240101.00.10")
    found = expand([str(tmp_path / "log")])
    assert found.bases == [base] and found.problems == []
    assert main(["check", "-q", str(tmp_path / "log")]) == 0


def test_label_sniffing(tmp_path: Path) -> None:
    base = _archive(tmp_path / "a")
    for part in ("meta", "index", "0"):
        assert is_archive_component(base.with_name(f"a.{part}"))
    (tmp_path / "b.0").write_bytes(b"\0\0\0\x84PCP!" + b"\0" * 200)
    assert not is_archive_component(tmp_path / "b.0")


def test_mmv_files_are_dispatched(tmp_path: Path) -> None:
    (tmp_path / "mmv").mkdir()
    mmv = tmp_path / "mmv" / "app"
    mmv.write_bytes(MMV_MAGIC + b"\0" * 60)   # an MMV file, a broken one
    found = expand([str(tmp_path / "mmv")])
    assert found.mmv == [mmv] and found.bases == []
    assert expand([str(mmv)]).mmv == [mmv]
    assert main(["check", "-q", "--format", "json", str(mmv)]) == 1


def test_meta_that_is_a_directory_is_exit_2(tmp_path: Path, capsys: CaptureFixture) -> None:
    base = _archive(tmp_path / "a")
    meta = base.with_name("a.meta")
    meta.unlink()
    meta.mkdir()
    assert main(["check", str(base)]) == 2
    captured = capsys.readouterr()
    assert captured.err.strip() == f"pcpconform check: {meta}: Is a directory"
    assert captured.out == ""


def test_fifo_volume_is_exit_2(tmp_path: Path, capsys: CaptureFixture) -> None:
    base = _archive(tmp_path / "a")
    vol = base.with_name("a.0")
    vol.unlink()
    os.mkfifo(vol)
    assert main(["check", str(base)]) == 2
    assert capsys.readouterr().err.strip() == f"pcpconform check: {vol}: not a regular file"


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to drop to another user")
def test_permission_denied_is_exit_2(tmp_path_factory: pytest.TempPathFactory) -> None:
    # as root every file is readable: drop to nobody in a child
    where = Path(tmp_path_factory.mktemp("perm", numbered=True))
    os.chmod(where, 0o755)
    for parent in where.parents:
        if parent.stat().st_mode & 0o005 != 0o005:
            os.chmod(parent, parent.stat().st_mode | 0o005)
    base = _archive(where / "a")
    os.chmod(where, 0o755)
    base.with_name("a.meta").chmod(0o000)
    # everything imported first (shutil: argparse imports it to format help; locale: its
    # messages go through gettext): the interpreter's own files need not be readable by nobody
    code = ("import os, shutil, locale, sys; from pcpconform.cli import main; import pcpconform.cli.check; "
            "import pcpconform.check.engine, pcpconform.check.output; "
            "os.setgid(65534); os.setuid(65534); sys.exit(main(['check', sys.argv[1]]))")
    proc = subprocess.run([sys.executable, "-c", code, str(base)], capture_output=True, text=True,
                          cwd=Path(__file__).resolve().parents[2], timeout=60)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip() == f"pcpconform check: {base.with_name('a.meta')}: Permission denied"
    assert "Errno" not in proc.stderr + proc.stdout


def test_io_error_while_reading_is_exit_2(tmp_path: Path, capsys: CaptureFixture,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """An I/O error in the middle of a volume (the reader says "[Errno 5] ...") stops that
    archive's check: one line with the OS's words, no diagnostics, exit 2."""
    from pcpconform.errors import FormatError, Location
    from pcpconform.io.reader import Component

    base = _archive(tmp_path / "a")

    def framed(self: Component, framing: object) -> object:
        raise FormatError("cannot read: [Errno 5] Input/output error", Location(self.name), "file.read")
        yield  # a generator, as the real one is

    monkeypatch.setattr(Component, "framed", framed)     # every framing of a component reads through it
    assert main(["check", str(base)]) == 2
    captured = capsys.readouterr()
    assert captured.err.strip().splitlines()[0] == f"pcpconform check: {tmp_path / 'a.meta'}: Input/output error"
    assert "Errno" not in captured.err + captured.out
    assert "error" not in captured.out.replace("Input/output error", "")
