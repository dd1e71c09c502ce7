"""Which archives a set source names, as libpcp's ``expandArchiveList`` finds them.

A set source is what every PCP client takes as one archive source: a comma-separated list
of names, each an archive base name or a directory, where a directory stands for every
archive in it (SET-FORM-1). The list is libpcp's *namelist*: its order is the order in
which libpcp opens the members (and, for a directory, the order in which ``readdir``
returns the ``.meta`` files, which is what ``os.listdir`` gives); the members are then put
in time order by ``pcpconform.io.archiveset``. ``open_member`` opens one name as libpcp's
``__pmLogOpen`` does, refusing what it refuses.
"""

from __future__ import annotations

import os
from pathlib import Path

from pcpconform.errors import FormatError, Location
from pcpconform.format.schema import LABEL_SIZE
from pcpconform.io.archive import Archive
from pcpconform.io.files import open_component
from pcpconform.io.reader import Component

__all__ = ["SET_PROFILES", "SetError", "compression_suffixes", "is_set_source", "log_base_name", "namelist",
           "open_member", "set_profile_for"]

#: the set behaviours of the reference libpcps: PCP 6.0.x, 6.3.x (to 7.1.3) and 7.1.4 on
#: (unreadable and damaged members dropped, SET-MEMBER-2 and SET-MEMBER-3)
SET_PROFILES = ("pcp-6.0", "pcp-6.3", "pcp-7")

class SetError(FormatError):
    """libpcp refuses the set (or cannot replay it) with the PMAPI error ``libpcp``."""

    def __init__(self, message: str, location: Location, code: str, libpcp: str) -> None:
        super().__init__(message, location, code)
        self.libpcp = libpcp


_SUFFIXES = (".xz", ".lzma", ".bz2", ".bz", ".gz", ".Z", ".z", ".zst")


def compression_suffixes(profile: str) -> tuple[str, ...]:
    """The compression suffixes libpcp strips from file names: ``.zst`` from PCP 6.3.2 on
    (SET-FORM-2, FMT-COMPRESS-2)."""
    return _SUFFIXES if profile != "pcp-6.0" else _SUFFIXES[:-1]


def log_base_name(name: str, profile: str = "pcp-7") -> tuple[str, str] | None:
    """``__pmLogBaseName``: (base, part) when ``name`` names an archive file (part "meta",
    "index" or a volume's digits, after one compression suffix is removed), else None."""
    plain = name
    for suffix in compression_suffixes(profile):
        if plain.endswith(suffix) and "." in plain[: -len(suffix)]:
            plain = plain[: -len(suffix)]
            break
    dot = plain.rfind(".")
    if dot < 0:
        return None
    part = plain[dot + 1:]
    if part in ("meta", "index"):
        return plain[:dot], part
    # strtol: optional blanks and sign, then digits to the end
    digits = part.lstrip(" \t\n\r\f\v")
    if digits[:1] in "+-":
        digits = digits[1:]
    if digits and digits.isascii() and digits.isdigit():
        return plain[:dot], part
    return None


def is_set_source(name: str | os.PathLike[str]) -> bool:
    """Whether libpcp takes ``name`` as a set: a comma-separated list or a directory."""
    text = os.fspath(name)
    return "," in text or os.path.isdir(text)


def namelist(name: str | os.PathLike[str], profile: str = "pcp-7") -> list[str]:
    """The archive names ``name`` expands to, in libpcp's order (SET-FORM-1): each
    comma-separated item that opens as a directory gives ``DIR/BASE`` for every entry
    ``BASE.meta`` (compressed or not) in ``readdir`` order; any other item is kept as it
    is. Entries that are not archive files, and subdirectories, are not looked into."""
    out: list[str] = []
    for item in os.fspath(name).split(","):
        try:
            entries = os.listdir(item) if item else None
        except OSError:
            entries = None
        if entries is None:
            out.append(item)
            continue
        for entry in entries:
            found = log_base_name(entry, profile)
            if found is not None and found[1] == "meta":
                out.append(str(Path(item) / found[0]) if found[0] else item.rstrip("/") + "/")
    return out


def set_profile_for(version: str) -> str:
    """The set behaviour of libpcp ``version`` (``version`` as "7.2.2"): PCP 7.1.4 began
    leaving unreadable and damaged members out, PCP 6.3 loads each member's metadata once."""
    parts = tuple(int(x) for x in version.split(".")[:3] if x.isdigit())
    if parts >= (7, 1, 4):
        return "pcp-7"
    return "pcp-6.3" if parts >= (6, 3, 0) else "pcp-6.0"


def open_member(name: str) -> Archive:
    """A member as libpcp's ``__pmLogOpen`` opens it: FormatError (or UsageError for
    missing files) on what makes libpcp refuse it (SET-MEMBER-1): labels that do not
    agree, a .meta, .index or first volume that holds only its label, no metric names."""
    archive = Archive(name)
    meta = archive.files.meta
    assert meta is not None
    labels = []
    for path in [archive.files.volumes[min(archive.files.volumes)],
                 *([archive.files.index] if archive.files.index is not None else []), meta]:
        with Component(path) as comp:
            labels.append((path, comp.version, comp.label))
        if _holds_only_label(path, comp.version):
            raise FormatError("the file holds only its label (PM_ERR_NODATA)", Location(path.name, 1),
                              "file.empty")
    _, version, label = labels[0]
    for path, v, other in labels[1:]:
        if v != version or other.pid != label.pid or other.hostname != label.hostname:
            raise FormatError("version, pid or hostname differ from the first volume's label (PM_ERR_LABEL)",
                              Location(path.name, 0, 0, "label"), "label.mismatch")
    if not archive.metadata.names:
        raise FormatError("the .meta names no metric (PM_ERR_NODATA)", Location(meta.name), "meta.no-desc")
    return archive


def _holds_only_label(path: Path, version: int) -> bool:
    """libpcp's test for an empty file: its size is the label's (e_loglabel.c)."""
    size = LABEL_SIZE[version]
    stream = open_component(path)
    try:
        return len(stream.read(size + 1)) == size
    finally:
        stream.close()
