"""The referees themselves: the expected PCP, a clean way in and out, and one document.

Each referee runs scripts and tools on copies of the given files and removes its temporary
directory afterwards; pm_read.py gives the same document for the bundled example under all
three (NAMED_DIFFERENCES lists where they are allowed to differ: nowhere, as measured).
"""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Any

import pytest

from pcpconform.fixtures import bundled_fixture
from pcpconform.fixtures.fixture import load_fixture
from pcpconform.fixtures.generate import generate_archive
from tests.differential.libpcp import bridge
from tests.differential.libpcp.referees import BY_NAME, Referee, archive_files

pytestmark = pytest.mark.libpcp

#: the PCP each referee stands for
EXPECTED_VERSION = {"pcp-6.0.3": r"6\.0\.3", "pcp-6.3": r"6\.3\.\d+", "pcp-7": r"7\.\d+\.\d+"}

#: keys of pm_read.py's document in which a referee may differ from 6.0.3 (none measured)
NAMED_DIFFERENCES: dict[str, set[str]] = {"pcp-6.0.3": set(), "pcp-6.3": set(), "pcp-7": set()}


def test_version_is_the_expected_one(referee: Referee) -> None:
    assert re.fullmatch(EXPECTED_VERSION[referee.name], referee.version), referee.version
    assert referee.version.startswith(referee.version_prefix)


def _gone(referee: Referee, inner: str) -> bool:
    """Whether the directory a run used (``inner``, as the command saw it) is removed; on the
    host nothing is copied, so there is none. Other sessions' directories may come and go."""
    if referee.root is None:
        return True
    assert inner.startswith("/tmp/pcpconform-"), inner
    return not (referee.root / inner.lstrip("/")).parent.exists() and not (
        referee.root / inner.lstrip("/")).exists()


def test_python_rewrites_paths_copies_outputs_and_cleans_up(referee: Referee, tmp_path: Path) -> None:
    data = tmp_path / "payload.txt"
    data.write_text("hello from the host\n", encoding="utf-8")
    out = tmp_path / "answer.txt"
    script = tmp_path / "show.py"
    script.write_text(
        "import os, sys\n"
        "print(sys.argv[1])\n"
        "print(open(sys.argv[1]).read(), end='')\n"
        "print(sys.argv[2])\n"
        "open(sys.argv[3], 'w').write('written inside')\n", encoding="utf-8")
    proc = referee.python(script, data, "plain-arg", out, files=[data], outputs=[out])
    assert proc.returncode == 0, proc.stderr
    inner, text, plain = proc.stdout.splitlines()
    if referee.root is None:
        assert inner == str(data)
    else:
        assert inner.startswith("/tmp/pcpconform-") and inner.endswith("/payload.txt")
    assert text == "hello from the host"
    assert plain == "plain-arg"
    assert out.read_text() == "written inside"
    assert _gone(referee, inner)


def test_a_path_not_copied_in_is_refused_in_a_chroot(referee: Referee, tmp_path: Path) -> None:
    missing = tmp_path / "elsewhere" / "x"
    if referee.root is None:        # the host sees every path as it is
        assert referee.tool(["ls", missing]).returncode != 0
        return
    with pytest.raises(ValueError, match="not among the files"):
        referee.tool(["ls", missing], files=[])


def test_tool_runs_on_an_archive_and_cleans_up(referee: Referee, tmp_path: Path) -> None:
    base = tmp_path / "ex"
    generate_archive(load_fixture(bundled_fixture("example")), base)
    proc = referee.tool(["pmdumplog", "-l", base], files=archive_files(base))
    assert proc.returncode == 0, proc.stderr
    assert "web01.example.com" in proc.stdout
    where = referee.tool(["echo", base], files=archive_files(base)).stdout.strip()
    assert where.endswith("/ex") and _gone(referee, where if referee.root else "")
    # a failing script leaves nothing behind either
    bad = tmp_path / "fail.py"
    bad.write_text("import os, sys\nprint(os.path.abspath(__file__))\nsys.exit(7)\n", encoding="utf-8")
    failed = referee.python(bad)
    assert failed.returncode == 7
    assert _gone(referee, failed.stdout.strip() if referee.root else "")


@functools.cache
def _example(version: int) -> Path:
    import tempfile

    base = Path(tempfile.mkdtemp(prefix="pcpconform-referees-")) / "ex"
    generate_archive(load_fixture(bundled_fixture("example")), base, version=version)
    return base


@functools.cache
def _host_doc(version: int) -> dict[str, Any]:
    return bridge.pm_read(BY_NAME["pcp-6.0.3"], _example(version))


@pytest.mark.parametrize("version", [2, 3])
def test_pm_read_of_the_example_is_one_document(referee: Referee, version: int) -> None:
    doc = bridge.pm_read(referee, _example(version))
    host = _host_doc(version)
    assert doc["results"] and doc["text"] and doc["labels"]
    differing = {k for k in set(doc) | set(host) if doc.get(k) != host.get(k)}
    assert differing == NAMED_DIFFERENCES[referee.name], {k: (doc.get(k), host.get(k)) for k in differing}
