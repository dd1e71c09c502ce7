"""``pcpconform dump``: every record of an archive, or every entry of an MMV file, as JSON
Lines or as text (pmdumplog-like for archives, mmvdump-like for MMV files)."""

from __future__ import annotations

import argparse

from pcpconform.cli.output import opened_output

__all__ = ["add_arguments", "run"]

#: an MMV file's first four bytes (mmv.schema.MMV_MAGIC, which a test compares this with):
#: the MMV modules, numpy among their imports, are loaded only for MMV files, and the
#: archive modules only for archives
MMV_MAGIC = b"MMV\0"


def is_mmv(path: str) -> bool:
    """True when the file at path starts with the MMV magic (False when unreadable: the
    archive's own open then reports why)."""
    try:
        with open(path, "rb") as f:
            return f.read(4) == MMV_MAGIC
    except OSError:
        return False


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("archive", help="archive base name, or any file of the archive, or an MMV file; a "
                   "directory or a comma-separated list is an archive set, dumped member by member "
                   "with the seams between them (spec/sets.md SET-CLI-2)")
    p.add_argument("--rules", choices=("pcp-6.0", "pcp-6.3", "pcp-7"), default="pcp-6.3",
                   help="for an archive set: the PCP version whose set behaviour to follow")
    p.add_argument("--format", choices=("text", "jsonl"), default="text")
    p.add_argument("-o", "--output", help="write to this file instead of standard output")
    p.add_argument("--utc", action="store_true",
                   help="text times in UTC instead of the archive's timezone")


def run(args: argparse.Namespace) -> int:
    if is_mmv(args.archive):    # "MMV\0" at offset 0; --utc has no times to act on there
        from pcpconform.dump.mmv import dump_mmv
        with opened_output(args.output) as out:
            dump_mmv(args.archive, out, args.format)
        return 0
    from pcpconform.cli.heap import pad_heap
    from pcpconform.cli.sources import open_input
    from pcpconform.dump.jsonl import write_jsonl
    from pcpconform.dump.text import write_text
    from pcpconform.io.archive import Archive
    from pcpconform.io.archiveset import ArchiveSet
    from pcpconform.io.setform import is_set_source

    pad_heap()          # each chunk of records reuses the pages the chunk before freed
    if is_set_source(args.archive):
        from pcpconform.dump.setdump import write_set_jsonl, write_set_text  # sets only
        members = open_input(args.archive, args.rules, "dump")
        assert isinstance(members, ArchiveSet)
        with opened_output(args.output) as out:
            if args.format == "jsonl":
                write_set_jsonl(members, out)
            else:
                write_set_text(members, out, utc=args.utc)
        return 0
    archive = Archive(args.archive)
    with opened_output(args.output) as out:
        if args.format == "jsonl":
            write_jsonl(archive, out)
        else:
            write_text(archive, out, utc=args.utc)
    return 0
