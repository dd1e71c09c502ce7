"""``pcpconform corpus``: build the corpus data from the kit, or check it (corpus/README.md)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pcpconform.corpusgen.build import write_corpus
from pcpconform.corpusgen.sanity import sanity

__all__ = ["add_arguments", "run"]


def add_arguments(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="action", required=True, metavar="ACTION")
    check = sub.add_parser("check", help="check the corpus: manifest, clauses, files, expected outputs",
                           description="Check the corpus: every case follows the schema, cites known "
                                       "clauses, has its files with their checksums, and gets its "
                                       "expected outputs from the kit. Exit 0 clean, 1 problems, "
                                       "2 the corpus cannot be read.")
    check.add_argument("corpus", nargs="?", default="corpus", metavar="CORPUS_DIR",
                       help="the corpus directory (default: corpus)")
    check.add_argument("--spec", metavar="DIR",
                       help="the spec chapters to take clause IDs from (default: CORPUS_DIR/../spec)")
    check.add_argument("--reproduce", action="store_true",
                       help="also build the corpus from the kit and compare it byte for byte")
    check.add_argument("--coverage", action="store_true",
                       help="list the clauses of spec/ that no valid or no invalid case cites, "
                            "with the reason coverage-exceptions.json gives")
    build = sub.add_parser("build", help="(re)write CORPUS_DIR/cases from the kit",
                           description="Write the golden and the one-fault archives, their "
                                       "expected outputs and case.json files under CORPUS_DIR/cases.")
    build.add_argument("corpus", nargs="?", default="corpus", metavar="CORPUS_DIR",
                       help="the corpus directory (default: corpus)")


def run(args: argparse.Namespace) -> int:
    if args.action == "build":
        files = write_corpus(args.corpus)
        cases = sum(1 for rel in files if rel.endswith("/case.json"))
        print(f"{cases} cases, {len(files)} files, {sum(map(len, files.values()))} bytes "
              f"in {Path(args.corpus) / 'cases'}", file=sys.stderr)
        return 0
    result = sanity(args.corpus, args.spec, reproduce=args.reproduce)
    for line in result.problems:
        print(line)
    if args.coverage:
        for line in result.coverage.listing():
            print(line)
    kinds = {k: sum(1 for c in result.cases if c.kind == k) for k in ("valid", "invalid")}
    summary = f"{len(result.cases)} cases ({kinds['valid']} valid, {kinds['invalid']} invalid)"
    for line in result.coverage.summary():
        print(line, file=sys.stderr)
    if result.problems:
        print(f"{summary}: {len(result.problems)} problems", file=sys.stderr)
        return 1
    print(f"{summary}: clean", file=sys.stderr)
    return 0
