"""What the commands that read archives take as their source: an archive, or an archive
set (a directory or a comma-separated list, spec/sets.md), with the set's notes on stderr."""

from __future__ import annotations

import sys

from pcpconform.io.archive import Archive
from pcpconform.io.archiveset import ArchiveSet, open_source
from pcpconform.io.setform import set_profile_for
from pcpconform.oracles.interp.installed import installed_pcp

__all__ = ["open_input", "set_profile", "set_notes"]


def set_profile(requested: str, rules: str) -> str:
    """The set behaviour for ``--rules requested`` (resolved to ``rules``): ``auto`` takes
    the installed PCP's; pcp-7 is PCP 7.1.4 and later (SET-VER-1)."""
    if requested == "auto":
        found = installed_pcp()
        if found is not None:
            return set_profile_for(found.version)
    return "pcp-7" if requested == "pcp-7" or rules == "pcp-7" else rules


def open_input(name: str, profile: str, command: str) -> Archive:
    """The archive or set ``name`` names; a set's left-out members noted on stderr."""
    source = open_source(name, profile=profile)
    if isinstance(source, ArchiveSet):
        for member, exc in source.skipped:
            print(f"pcpconform {command}: warning: {member}: left out of the set as libpcp 7 leaves "
                  f"it out ({exc})", file=sys.stderr)
    return source


def set_notes(source: Archive, command: str) -> None:
    """What a set's replay left out while reading (SET-MEMBER-3), on stderr."""
    if isinstance(source, ArchiveSet):
        for member, exc in source.dropped:
            print(f"pcpconform {command}: warning: {member}: read up to the damaged record at "
                  f"{exc.location} ({exc.message}), then left out as libpcp 7 leaves it", file=sys.stderr)
