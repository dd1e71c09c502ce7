"""The documentation builds without warnings (the spec chapters included)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_sphinx_builds_docs_without_warnings(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "sphinx", "-W", "-q", "-b", "html",
                           str(ROOT / "docs"), str(tmp_path / "html")],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "html" / "spec" / "archive-format.html").read_text().count("FMT-FRAME-1") >= 1
