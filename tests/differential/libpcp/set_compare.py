"""The kit's side of an archive set, in the form pm_set.py reads it (set_bridge.set_read),
and the differences between the two.

``kit_document(name, profile)`` opens the set as ``ArchiveSet`` does under ``profile``:
``{"open_error": PM_ERR_...}`` when the kit refuses the set, else compare.our_view's
document of the set with ``error`` (the PMAPI error the kit's forward pass ends with, the
results before it kept), ``text_at_open`` and ``text`` (help text when opened and after the
forward pass: PCP 6.0 reloads each member's text as the pass reaches it, SET-META-3).
"""

from __future__ import annotations

from typing import Any

from pcpconform.errors import FormatError, UsageError
from pcpconform.format.pmtypes import PmID, PmInDom, TextType, Timestamp
from pcpconform.io.archiveset import ArchiveSet, libpcp_error
from pcpconform.io.setmeta import extract_error, instances_as_loaded
from tests.differential.libpcp.compare import our_view, reader_differences, result_views

__all__ = ["kit_document", "set_differences"]


def _text(md_text: dict[tuple[int, int], str]) -> dict[str, str]:
    out = {}
    for (kind, ident), body in md_text.items():
        target = "indom" if kind & TextType.INDOM else "pmid"
        ident_s = str(PmInDom(ident)) if target == "indom" else str(PmID(ident))
        cls = "oneline" if kind & TextType.ONELINE else "help"
        out[f"{target}:{ident_s}:{cls}"] = body
    return out


def kit_document(name: str, profile: str) -> dict[str, Any]:
    try:
        s = ArchiveSet(name, profile=profile)
    except (FormatError, UsageError) as exc:
        return {"open_error": libpcp_error(exc), "why": str(exc)}
    if s.end() is None:
        # pm_set.py asks pmGetArchiveEnd first: it fails when the last member holds no
        # record libpcp can read
        return {"open_error": "PM_ERR_LOGREC", "why": "the last member holds no readable record"}
    results: list[dict[str, Any]] = []
    error = None
    reached = len(s.members)
    try:
        result_views(s, s.results(), results)
    except FormatError as exc:
        error = libpcp_error(exc)
        reached = _members_reached(s, exc)
    if profile == "pcp-7":
        _unconvertible(s, results)
    doc = our_view(s.files.base, s, results)
    doc["end"] = [s.end().sec, s.end().nsec] if s.end() is not None else doc["end"]
    doc["error"] = error
    doc["text_at_open"] = doc["text"]
    doc["names_at_open"] = {name: str(PmID(pmid)) for name, pmid in s.metadata.names.items()}
    if profile == "pcp-6.0":
        doc["indoms"] = _indoms_as_reloaded(s, results)
        # the pass reopened every member it reached, in time order (SET-META-3)
        after = dict(s.metadata.text)
        for m in s.members[:reached]:
            after.update(m.archive.metadata.text)
        doc["text"] = _text(after)
    return doc


def _unconvertible(s: ArchiveSet, results: list[dict[str, Any]]) -> None:
    """pm_read.py extracts each value by the set's descriptor: a value a member recorded as
    another type (one whose metadata libpcp lost, SET-MEMBER-2) is the error that gives
    (SET-META-6)."""
    for res, k in zip(results, s.result_members()):
        member = s.members[k].archive.metadata.descs
        for key, view in res["values"].items():
            pmid = int(PmID(key))
            if "nodesc" in view or pmid not in member:
                continue
            error = extract_error(view["valfmt"] or 0, member[pmid].type, s.desc(pmid).type)
            if error is not None:
                view["values"] = [[inst, f"error:{error}"] for inst, _ in view["values"]]


def _indoms_as_reloaded(s: ArchiveSet, results: list[dict[str, Any]]) -> dict[str, list[Any]]:
    """pm_read.py's pmGetInDom after each result of the forward pass, as PCP 6.0 answers it
    (SET-META-5): the set's open loads the members, pmGetArchiveEnd loads the last member
    and then the first again, and the pass loads each member it switches to."""
    archives = [m.archive for m in s.members]
    loads = [*s.open_loads(), len(archives) - 1, 0]
    out: dict[str, list[Any]] = {}
    indoms = sorted({int(d.indom) for d in s.descs() if not d.indom.is_null})
    last: dict[int, dict[str, str]] = {}
    for res, k in zip(results, s.result_members()):
        if k != loads[-1]:
            loads.append(k)
        at = Timestamp(res["time"][0], res["time"][1])
        for indom in indoms:
            got = instances_as_loaded(archives, indom, at, loads)
            if got is None:
                continue
            snap = {str(i): n for i, n in sorted(got.items())}
            if snap != last.get(indom):
                out.setdefault(str(PmInDom(indom)), []).append([res["time"], snap])
                last[indom] = snap
    return out


def _members_reached(s: ArchiveSet, exc: FormatError) -> int:
    """How many members the forward pass opened before ``exc`` stopped it: those up to the
    one after an overlapping seam (the switch is made, then fails), or up to the damaged one."""
    if exc.code == "set.overlap":
        seam = next(seam for seam in s.seams() if seam.overlap)
        return seam.before + 2
    for k, m in enumerate(s.members):
        if exc.location.file in {p.name for p in m.archive.files.all_paths()}:
            return k + 1
    return len(s.members)


def set_differences(theirs: dict[str, Any], ours: dict[str, Any]) -> list[str]:
    """Every difference between libpcp's reading of a set and the kit's."""
    if "open_error" in theirs or "open_error" in ours:
        if theirs.get("open_error") != ours.get("open_error"):
            return [f"opening: libpcp {theirs.get('open_error')}, ours {ours.get('open_error')} "
                    f"({ours.get('why', '')})"]
        return []
    out = reader_differences(theirs, ours)
    if theirs["error"] != ours["error"]:
        out.append(f"forward pass ends: libpcp {theirs['error']}, ours {ours['error']}")
    if theirs["names_at_open"] != ours["names_at_open"]:
        out.append(f"names found at open: libpcp {theirs['names_at_open']}, ours {ours['names_at_open']}")
    if theirs["text_at_open"] != {k: v for k, v in ours["text_at_open"].items()
                                  if k.rsplit(":", 1)[0] in _asked(theirs, named=True)}:
        out.append(f"help text at open: libpcp {theirs['text_at_open']}, ours {ours['text_at_open']}")
    return out


def _asked(theirs: dict[str, Any], named: bool = False) -> set[str]:
    """What pm_set.py looked help text up for: metrics (those it found by name right after
    opening, when it looks up then), and their instance domains."""
    at_open = set(theirs["names_at_open"].values())
    metrics = {p: d for p, d in theirs["metrics"].items() if p in at_open or not named}
    return {f"pmid:{p}" for p in metrics} | {f"indom:{d['indom']}" for d in metrics.values() if d["indom"]}
