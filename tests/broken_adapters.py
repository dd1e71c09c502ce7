"""Deliberately broken conformance adapters for the runner's tests: the kit's own adapter
with ``perturb(suite, args, text) -> text or (text, exit status)`` applied to every answer."""

from __future__ import annotations

import sys
from pathlib import Path

_WRAPPER = '''
import io, json, sys
from pcpconform.conform.adapters import kit
real = kit.answer
def answer(suite, args, out, options):
    buf = io.StringIO()
    status = real(suite, args, buf, options)
    text = perturb(suite, args, buf.getvalue())
    text, status = text if isinstance(text, tuple) else (text, status)
    out.write(text)
    return status
kit.answer = answer
'''


def broken_adapter(tmp_path: Path, perturb: str) -> str:
    """The command of an adapter whose answers pass through ``perturb`` (Python source
    defining it)."""
    script = tmp_path / "broken.py"
    script.write_text(_WRAPPER + perturb + "\nsys.exit(kit.main())\n", encoding="utf-8")
    return f"{sys.executable} {script}"
