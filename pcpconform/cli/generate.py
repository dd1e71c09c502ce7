"""``pcpconform generate``: write the archive a fixture file describes, as libpcp_import does,
or the MMV file an MMV fixture describes, as libpcp_mmv does."""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

from pcpconform.errors import UsageError
from pcpconform.fixtures.fixture import load_fixture
from pcpconform.fixtures.generate import generate_archive
from pcpconform.fixtures.mmv import generate_mmv, is_mmv_fixture, parse_mmv_fixture, read_yaml

__all__ = ["add_arguments", "run"]


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("fixture", help="fixture file (YAML, see spec/fixtures.md)")
    p.add_argument("-o", "--output", required=True,
                   help="base name of the archive to write, or the MMV file to write")
    p.add_argument("--mkdir", action="store_true",
                   help="create the output's directory if it does not exist")
    p.add_argument("--archive-version", type=int, choices=(2, 3),
                   help="override the fixture's archive version")
    p.add_argument("--mmv-version", type=int, choices=(1, 2, 3),
                   help="override an MMV fixture's version")
    p.add_argument("-q", "--quiet", action="store_true")


def _output_directory(output: str, mkdir: bool) -> None:
    """A missing directory is a usage error unless --mkdir (a typo must not scatter files)."""
    parent = Path(output).parent
    if parent.is_dir():
        return
    if parent.exists():
        raise UsageError(f"{output}: {parent} is not a directory")
    if not mkdir:
        raise UsageError(f"{output}: directory {parent} does not exist (--mkdir creates it)")
    parent.mkdir(parents=True)


def run(args: argparse.Namespace) -> int:
    doc = read_yaml(args.fixture)
    if is_mmv_fixture(doc):
        content = parse_mmv_fixture(doc, args.fixture)
        if args.mmv_version is not None:
            content = dataclasses.replace(content, version=args.mmv_version)
        _output_directory(args.output, args.mkdir)
        summary = generate_mmv(content, args.output)
    else:
        fixture = load_fixture(args.fixture)
        _output_directory(args.output, args.mkdir)
        summary = generate_archive(fixture, args.output, version=args.archive_version)
    if not args.quiet:
        print(summary)
    return 0
