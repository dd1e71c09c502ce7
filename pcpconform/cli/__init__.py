"""The ``pcpconform`` command: one module per subcommand, imported only when it runs.

Exit status: 0 success, 1 the input is bad (a FormatError, or findings a command reports as
failures), 2 the request could not be carried out (usage, missing or unreadable files).
No input ever ends in a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

# numpy's OpenBLAS starts a thread per CPU when numpy is imported, and they spin: about
# 0.15 s of CPU for every command, though the kit does no linear algebra. Set before any
# subcommand imports numpy; a value the user set is kept.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from pcpconform.errors import PcpConformError
from pcpconform.version import __version__

__all__ = ["main", "console_main", "build_parser", "COMMANDS"]

#: subcommand -> (module under pcpconform.cli, one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "generate": ("generate", "write an archive described by a fixture file"),
    "dump": ("dump", "dump every record of an archive"),
    "undump": ("undump", "write the archive a JSON Lines dump describes"),
    "rebuild": ("rebuild", "parse every record and build it again"),
    "check": ("check", "validate archives and report every problem found"),
    "salvage": ("salvage", "rescue a damaged archive into a new one every libpcp reads"),
    "interp": ("interp", "replay metrics at any times as libpcp's PM_MODE_INTERP does"),
    "derive": ("derive", "evaluate derived-metric expressions over an archive as libpcp does"),
    "corpus": ("corpus", "build the conformance corpus data from the kit, or check it"),
    "conform": ("conform", "run the conformance corpus against an implementation under test"),
    "fuzz": ("fuzz", "fuzz a command with mutants of archives, MMV files or derived configs"),
}


def _chosen(argv: Sequence[str]) -> str | None:
    """The subcommand named on the command line, if any (the first non-option word)."""
    for word in argv:
        if not word.startswith("-"):
            return word if word in COMMANDS else None
    return None


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The argument parser; only the chosen subcommand's module is imported (with no
    ``argv``, every one), so a command pays for nothing it does not use."""
    parser = argparse.ArgumentParser(
        prog="pcpconform",
        description="Format specification and conformance kit for PCP archives.")
    parser.add_argument("--version", action="version", version=f"pcpconform {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    chosen = _chosen(argv) if argv is not None else None
    for name, (module, summary) in COMMANDS.items():
        p = sub.add_parser(name, help=summary, description=summary)
        if argv is None or name == chosen:
            command = importlib.import_module(f"pcpconform.cli.{module}")
            command.add_arguments(p)
            p.set_defaults(func=command.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except PcpConformError as exc:
        print(f"pcpconform {args.command}: {exc}", file=sys.stderr)
        return exc.exit_status
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        return 130
    except OSError as exc:
        what = f"{exc.filename}: " if exc.filename else ""
        print(f"pcpconform {args.command}: {what}{exc.strerror or exc}", file=sys.stderr)
        return 2


def console_main() -> None:
    """The installed command: ``main``, then the exit handlers, the output flushed, and an
    exit without the interpreter's teardown. Freeing every object a command made (numpy,
    the schemas, the archive's columns) one by one costs ~25 ms of CPU, a tenth of a small
    archive's whole check; the process's memory goes back to the system at once anyway.
    With a thread still running, the exit is Python's own (it joins them)."""
    import atexit
    import contextlib
    import threading

    status = main()
    if threading.active_count() > 1:
        sys.exit(status)
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):     # a closed pipe: nothing more to say
            stream.flush()
    os._exit(status)


if __name__ == "__main__":  # pragma: no cover
    console_main()
