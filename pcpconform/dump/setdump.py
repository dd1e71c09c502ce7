"""The dump of an archive set (SET-CLI-2): its members in forward replay order, each marked,
and the seams between them, as JSON Lines or as text.

JSON Lines: the dump header; a ``set`` object (the profile, each member's position, base
name, label start, end and version, the members libpcp 7 leaves out); then per
member a ``member`` object followed by that member's own records exactly as
``pcpconform dump`` writes a single archive (spec/dump-jsonl.md, header left out); between
two members a ``seam`` object: the virtual marks of both reading directions (the forward
one's nanoseconds as libpcp reports them, SET-REPLAY-1), whether the members overlap, and
the records a replay never delivers there (``hidden_forward`` of the later member,
``hidden_backward`` of the earlier one: file, record index, byte offset and time).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

from pcpconform.dump.jsonl import HEADER, dump_lines
from pcpconform.dump.text import when_text, write_text
from pcpconform.errors import FormatError
from pcpconform.format.pmtypes import Timestamp
from pcpconform.io.archiveset import ArchiveSet, Member, Seam
from pcpconform.io.decoded import result_head

__all__ = ["set_lines", "write_set_jsonl", "write_set_text"]


def _stamp(ts: Timestamp | None) -> dict[str, int] | None:
    return None if ts is None else {"sec": ts.sec, "nsec": ts.nsec}


def _records(m: Member) -> Iterator[dict[str, Any]]:
    """Each record of a member: file, record index, offset, time (headers only)."""
    version = m.archive.version
    for _, record in m.archive.volume_records():
        if len(record.data) >= 20:
            yield {"file": record.file, "record": record.index, "offset": record.offset,
                   "time": result_head(record.data, version)[0]}


def _hidden(s: ArchiveSet, seam: Seam) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    before, after = s.members[seam.before], s.members[seam.before + 1]
    forward: list[dict[str, Any]] = []
    if seam.forward_mark is not None and not seam.overlap:
        for rec in _records(after):
            if not rec["time"] < seam.forward_mark:
                break
            forward.append(rec)
    backward = [rec for rec in _records(before) if rec["time"] > seam.backward_mark]
    return forward, backward


def _why(exc: Exception) -> str:
    """A member's open failure without the directory it lies in."""
    if isinstance(exc, FormatError):
        return f"{Path(exc.location.file).name}: {exc.message}"
    return str(exc).rsplit("/", 1)[-1]


def _seam_obj(s: ArchiveSet, seam: Seam) -> dict[str, Any]:
    forward, backward = _hidden(s, seam)
    mark = seam.forward_mark
    reported = None if mark is None else (
        {"sec": mark.sec - 1, "nsec": seam.forward_mark_nsec} if seam.forward_mark_nsec == 1_000_000_000
        else _stamp(mark))
    return {"kind": "seam", "after": seam.before, "end": _stamp(seam.end), "next_start": _stamp(seam.start),
            "forward_mark": reported, "backward_mark": _stamp(seam.backward_mark), "overlap": seam.overlap,
            "hidden_forward": [{**r, "time": _stamp(r["time"])} for r in forward],
            "hidden_backward": [{**r, "time": _stamp(r["time"])} for r in backward]}


def set_lines(s: ArchiveSet) -> Iterator[str]:
    """The JSON Lines dump of a set, line by line (without newlines)."""
    def line(obj: dict[str, Any]) -> str:
        return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)

    yield line(HEADER)
    yield line({"kind": "set", "profile": s.profile,
                "members": [{"position": m.position, "name": Path(m.name).name, "start": _stamp(m.start),
                             "end": _stamp(m.end()), "version": m.archive.version} for m in s.members],
                "skipped": [{"name": Path(name).name, "error": _why(exc)} for name, exc in s.skipped]})
    seams = s.seams()
    for m in s.members:
        if m.position:
            yield line(_seam_obj(s, seams[m.position - 1]))
        yield line({"kind": "member", "position": m.position, "name": Path(m.name).name})
        lines = dump_lines(m.archive)
        next(lines)                     # the member's header: the set has one
        yield from lines


def write_set_jsonl(s: ArchiveSet, out: TextIO) -> None:
    for text in set_lines(s):
        out.write(text + "\n")


def write_set_text(s: ArchiveSet, out: TextIO, *, utc: bool = False) -> None:
    """Each member's pmdumplog-style listing under a heading, the seams between them."""
    out.write(f"Archive set {s.source}: {len(s.members)} members (profile {s.profile})\n")
    for name, exc in s.skipped:
        out.write(f"    left out (libpcp 7): {name}: {exc}\n")
    seams = s.seams()
    for m in s.members:
        if m.position:
            at = seams[m.position - 1]
            seam = _seam_obj(s, at)
            out.write(f"\n== seam: {s.members[m.position - 1].name} -> {m.name}")
            out.write(" (overlap: libpcp's replay stops here)\n" if seam["overlap"] else "\n")
            if at.forward_mark is not None:
                fm = seam["forward_mark"]
                out.write(f"<mark> reading forwards at {when_text(at.forward_mark)} "
                          f"(libpcp: {fm['sec']}.{fm['nsec']:09d})\n")
            bm = seam["backward_mark"]
            out.write(f"<mark> reading backwards at {when_text(Timestamp(bm['sec'], bm['nsec']))}\n")
            for which, recs in (("forwards", seam["hidden_forward"]), ("backwards", seam["hidden_backward"])):
                for r in recs:
                    when = when_text(Timestamp(r["time"]["sec"], r["time"]["nsec"]))
                    out.write(f"never delivered reading {which}: {r['file']} record {r['record']} "
                              f"(offset {r['offset']}) at {when}\n")
        out.write(f"\n== member {m.position + 1} of {len(s.members)}: {m.name}\n\n")
        write_text(m.archive, out, utc=utc)
