"""``pcpconform generate``: write the archive a fixture file describes, as libpcp_import does."""

from __future__ import annotations

import argparse

from pcpconform.fixtures.fixture import load_fixture
from pcpconform.fixtures.generate import generate_archive

__all__ = ["add_arguments", "run"]


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("fixture", help="fixture file (YAML, see spec/fixtures.md)")
    p.add_argument("-o", "--output", required=True, help="base name of the archive to write")
    p.add_argument("--archive-version", type=int, choices=(2, 3),
                   help="override the fixture's archive version")
    p.add_argument("-q", "--quiet", action="store_true")


def run(args: argparse.Namespace) -> int:
    fixture = load_fixture(args.fixture)
    summary = generate_archive(fixture, args.output, version=args.archive_version)
    if not args.quiet:
        print(summary)
    return 0
