"""Finding an archive's files by name (FMT-FILE, FMT-COMPRESS-3)."""

from __future__ import annotations

import os
from pathlib import Path

from pcpconform.check.state import Context
from pcpconform.io.files import base_name_of, strip_compression

__all__ = ["ArchiveFiles", "discover"]

#: (.meta, .index, {volume number: path}); None where the file is missing
ArchiveFiles = tuple[Path | None, Path | None, dict[int, Path]]


def discover(ctx: Context) -> ArchiveFiles | None:
    """The files of the archive ``ctx.base`` names; None (reported) when there are none."""
    base = base_name_of(ctx.base)
    ctx.base = base
    ctx.report.archive = str(base)
    directory = base.parent if str(base.parent) else Path(".")
    name = base.name
    try:
        entries = sorted(os.listdir(directory))
    except OSError as exc:
        ctx.add("file.no-archive", name, f"cannot list {directory}: {exc.strerror}")
        return None
    found: dict[str, list[Path]] = {}
    for entry in entries:
        if not entry.startswith(name + "."):
            continue
        plain, _ = strip_compression(entry[len(name) + 1:])
        if plain in ("meta", "index") or plain.isdigit():
            if plain.isdigit() and plain != str(int(plain)):
                ctx.add("file.name", entry, f"volume number {plain!r} is not canonical "
                        f"decimal; libpcp opens {name}.{int(plain)} instead")
                continue
            found.setdefault(plain, []).append(directory / entry)
    if not found:
        ctx.add("file.no-archive", name, f"no {name}.meta, {name}.index or {name}.N here")
        return None
    for part, paths in found.items():
        if len(paths) > 1:
            code = "file.duplicate-volume" if part.isdigit() else "file.duplicate"
            ctx.add(code, paths[0].name, "several copies: " + ", ".join(p.name for p in paths))
    # of several copies, libpcp opens the uncompressed one first
    pick = {part: sorted(paths, key=lambda p: (bool(strip_compression(p.name)[1]), p.name))[0]
            for part, paths in found.items()}
    meta, index = pick.get("meta"), pick.get("index")
    volumes = {int(p): path for p, path in pick.items() if p.isdigit()}
    if meta is None:
        ctx.add("file.missing-meta", f"{name}.meta", "the archive has no .meta file")
    if not volumes:
        ctx.add("file.missing-volume", f"{name}.0", "the archive has no data volume")
    if index is None:
        ctx.add("file.missing-index", f"{name}.index", "no temporal index (allowed, but readers cannot seek)")
    return meta, index, volumes
