"""Running the ``pcpconform`` command in-process, for the command-line tests."""

from __future__ import annotations

import io
from contextlib import redirect_stderr, redirect_stdout

from pcpconform.cli import main


def run_cli(*argv: str) -> tuple[int, str, str]:
    """``pcpconform ARGV...``: exit status, standard output, standard error."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        status = main(list(argv))
    return status, out.getvalue(), err.getvalue()
