"""What the command-line arguments of ``check`` name: archives, MMV files, and the problems.

An argument is an archive base name, any file of an archive (``B.meta``, ``B.index``,
``B.0``, compressed ``B.0.xz`` ...), an MMV file, or a directory. A directory stands for the
archives and MMV files below it, recognised by content, not by name: an archive component
must start with a PCP label (length word, then the magic 0x50052600 | version), an MMV file
with ``MMV\\0``; every other file is skipped and counted. Symbolic links to directories are
not followed (no loops), pseudo file systems (/proc, /sys, /dev) are not entered, and files
too short to hold a label are not opened.

A file the operating system will not let us read (permission denied, not a regular file,
I/O error) is a problem of the request, not a defect of an archive: it is reported as one
line naming the file and the OS's reason, and that archive is not checked (exit status 2).
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
import struct
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pcpconform.check.mmv.magic import is_mmv_file
from pcpconform.io.archive import Archive
from pcpconform.io.files import COMPRESSION_SUFFIXES, base_name_of, open_component, strip_compression
from pcpconform.io.setform import namelist

__all__ = ["Inputs", "expand", "component_files", "is_archive_component", "os_problem",
           "archive_problems", "set_directories"]

# Any component of an archive, with or without one compression suffix (one match per
# directory entry). Volume numbers are any digits here, not only canonical ones: the
# checker reports a non-canonical one (file.name).
_SUFFIXES = "|".join(map(re.escape, COMPRESSION_SUFFIXES))
_ANY_COMPONENT = re.compile(rf"^(?P<base>.+)\.(?:meta|index|[0-9]+)(?:{_SUFFIXES})?$")
#: the label magic without its version byte (PM_LOG_MAGIC)
_LABEL_MAGIC = 0x50052600
#: a label's length word and magic: a shorter file cannot be an archive component
_HEAD = 8


@dataclass
class Inputs:
    """The archive base names and MMV files to check, and what could not be used."""

    bases: list[Path] = field(default_factory=list)
    mmv: list[Path] = field(default_factory=list)
    #: directories scanned for MMV files: each is checked as the MMV PMDA loads it
    mmv_dirs: set[Path] = field(default_factory=set)
    problems: list[str] = field(default_factory=list)
    skipped: int = 0            # files in scanned directories that are neither
    #: archive sets (a directory, or members joined with commas) checked across members
    sets: list[Path] = field(default_factory=list)

    @property
    def targets(self) -> list[Path]:
        """Everything to check, sorted as the reports are printed: archives and MMV files,
        then each set (its members are among the archives)."""
        return sorted(self.bases + self.mmv, key=lambda p: (str(p.parent), p.name)) + self.sets


def component_base(name: str) -> str | None:
    """The base name if ``name`` is a file name of an archive component, else None."""
    m = _ANY_COMPONENT.match(name)
    return m.group("base") if m else None


def _part_key(path: Path) -> tuple[int, int, str]:
    plain, _ = strip_compression(path.name)
    part = plain.rsplit(".", 1)[-1]
    if part == "meta":
        return (0, 0, path.name)
    if part == "index":
        return (1, 0, path.name)
    return (2, int(part), path.name)


class _Listings:
    """Each directory's entries named like archive components, by base name: a directory is
    listed once per request, however many of its archives the arguments name."""

    def __init__(self) -> None:
        self._by_directory: dict[Path, dict[str, list[str]]] = {}

    def entries(self, base: Path) -> list[Path]:
        """Every directory entry named like a component of ``base``, whatever its file type."""
        directory = base.parent
        by_base = self._by_directory.get(directory)
        if by_base is None:
            by_base = self._by_directory[directory] = {}
            try:
                names = os.listdir(directory)
            except OSError:
                names = []
            for name in names:
                named = component_base(name)
                if named is not None:
                    by_base.setdefault(named, []).append(name)
        return [directory / e for e in by_base.get(base.name, ())]


def _entries(base: Path) -> list[Path]:
    """Every directory entry named like a component of ``base``, whatever its file type."""
    return _Listings().entries(base)


def component_files(base: str | os.PathLike[str]) -> list[Path]:
    """Every file of the archive ``base`` that exists, compressed copies and non-canonical
    volume names included: .meta first, then .index, then volumes in numeric order."""
    return sorted((p for p in _entries(Path(base)) if p.is_file()), key=_part_key)


def os_problem(path: Path) -> str | None:
    """Why the OS will not let us read ``path`` (one line naming it), or None."""
    try:
        st = os.stat(path)
        if stat.S_ISDIR(st.st_mode):
            return f"{path}: {os.strerror(errno.EISDIR)}"
        if not stat.S_ISREG(st.st_mode):
            return f"{path}: not a regular file"
        # O_NONBLOCK: a FIFO swapped in after the stat must not hang us
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        try:
            os.read(fd, 1)
        finally:
            os.close(fd)
    except OSError as exc:
        return f"{path}: {exc.strerror or os.strerror(exc.errno or errno.EIO)}"
    return None


def archive_problems(base: Path, listings: _Listings | None = None) -> list[str]:
    """The OS's objections to the files of archive ``base``."""
    entries = (listings or _Listings()).entries(base)
    return [p for p in (os_problem(e) for e in sorted(entries, key=_part_key)) if p]


def _head(path: Path) -> bytes:
    stream = open_component(path)
    try:
        return bytes(stream.read(_HEAD))
    finally:
        stream.close()


def is_archive_component(path: Path) -> bool:
    """Whether ``path`` (a regular file) starts with a PCP archive label (any version)."""
    try:
        head = _head(path)
    except Exception:  # any failure to decompress means: not an archive
        return False
    if len(head) < _HEAD:
        return False
    magic: int = struct.unpack(">II", head)[1]
    return magic & 0xFFFFFF00 == _LABEL_MAGIC


def _pseudo_devices() -> set[int]:
    devices = set()
    for where in ("/proc", "/sys", "/dev"):
        with contextlib.suppress(OSError):
            devices.add(os.stat(where).st_dev)
    return devices


def _scan(root: Path, found: Inputs) -> int:
    """Add the archives and MMV files below ``root``; returns how many were found."""
    pseudo = _pseudo_devices()
    before = len(found.bases) + len(found.mmv)
    bases: set[Path] = set()
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        kept = []
        for d in sorted(dirnames):
            try:
                if os.stat(here / d, follow_symlinks=False).st_dev not in pseudo:
                    kept.append(d)
            except OSError:
                pass
        dirnames[:] = kept
        for name in sorted(filenames):
            path = here / name
            try:
                st = os.stat(path)   # follows a link to a file; a loop raises ELOOP
            except OSError:
                found.skipped += 1
                continue
            if not stat.S_ISREG(st.st_mode) or st.st_size < _HEAD:
                found.skipped += 1
                continue
            base = component_base(name)
            if base is not None and (here / base in bases or is_archive_component(path)):
                bases.add(here / base)
            elif is_mmv_file(path):
                found.mmv.append(path)
                found.mmv_dirs.add(Path(os.path.normpath(here)))
            else:
                found.skipped += 1
    found.bases.extend(sorted(bases))
    return len(found.bases) + len(found.mmv) - before


def expand(args: Sequence[str], *, sets: bool = False) -> Inputs:
    """The archives and MMV files that ``args`` name, deduplicated (two spellings of one path
    count once) and sorted, with one problem line per argument that names nothing to check
    and per file the OS will not let us read. With ``sets`` every argument is one archive
    set (a directory or a comma-separated list: its members are checked, and the set);
    without, a directory found to hold two or more archives of one host, and nothing else
    that is an archive, is also checked as a set (``set_directories``)."""
    if sets:
        return _expand_sets(args)
    found = Inputs()
    listings = _Listings()
    for arg in args:
        path = Path(arg)
        if path.is_dir():
            if not _scan(path, found):
                found.problems.append(f"{arg}: no archive found")
        elif path.exists() or path.is_symlink():
            problem = os_problem(path)
            if problem is not None and component_base(path.name) is None:
                found.problems.append(problem)
            elif problem is None and is_mmv_file(path):
                found.mmv.append(path)
            else:
                base = base_name_of(path)
                if base == path:
                    # not a canonical component name: maybe B.01, or a base name that is a file
                    b = component_base(path.name)
                    if b is not None:
                        base = path.with_name(b)
                if listings.entries(base):
                    found.bases.append(base)
                else:
                    found.problems.append(f"{arg}: not a file of a PCP archive or an MMV file")
        elif listings.entries(path):
            found.bases.append(path)
        else:
            found.problems.append(f"{arg}: no such file, directory or archive")
    found.bases = _unique(found.bases)
    found.mmv = _unique(found.mmv)
    found.sets = set_directories(found.bases, found.mmv)
    readable = []
    for base in found.bases:
        problems = archive_problems(base, listings)
        found.problems.extend(problems)
        if not problems:
            readable.append(base)
    found.bases = readable
    return found


def _unique(paths: list[Path]) -> list[Path]:
    chosen: dict[Path, Path] = {}
    for p in paths:
        shown = Path(os.path.normpath(p))
        chosen.setdefault(shown.resolve(), shown)
    return sorted(chosen.values(), key=lambda p: (str(p.parent), p.name))


def _expand_sets(args: Sequence[str]) -> Inputs:
    found = Inputs()
    listings = _Listings()
    for arg in args:
        names = namelist(arg)
        if not names:
            found.problems.append(f"{arg}: no archive in the directory (no .meta file)")
            continue
        members = [Path(n) for n in names if listings.entries(Path(n))]
        if not members:
            found.problems.append(f"{arg}: no such directory or archive")
            continue
        found.bases.extend(m for m in members if m not in found.bases)
        found.sets.append(Path(arg))
    found.bases = _unique(found.bases)
    for base in list(found.bases):
        problems = archive_problems(base, listings)
        found.problems.extend(problems)
        if problems:
            found.bases.remove(base)
    return found


def set_directories(bases: Sequence[Path], mmv: Sequence[Path]) -> list[Path]:
    """The directories that unambiguously hold one host's archive set: two or more of the
    archives found, every one that libpcp's directory scan finds (by its .meta), no MMV
    file, one hostname and a start time of its own for each in their labels (copies of one
    archive are not a series)."""
    by_dir: dict[Path, list[Path]] = {}
    for base in bases:
        by_dir.setdefault(base.parent, []).append(base)
    out = []
    for directory, found in sorted(by_dir.items()):
        if len(found) < 2 or any(m.parent == directory for m in mmv):
            continue
        if sorted(Path(n) for n in namelist(directory)) != sorted(found):
            continue
        hosts: set[str | None] = set()
        starts = set()
        for base in found:
            try:
                archive = Archive(base)
                hosts.add(archive.hostname)
                starts.add(archive.start)
            except Exception:   # a member that cannot be read: the set is not unambiguous
                hosts.add(None)
        if len(hosts) == 1 and None not in hosts and len(starts) == len(found):
            out.append(directory)
    return out
