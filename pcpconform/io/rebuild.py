"""Rebuild: parse every record of an archive with the schemas and build it again.

The parsed form keeps every byte (label padding, value-block padding, string tables, tails
libpcp tolerates), so for any archive libpcp reads the rebuilt files are identical to the
inputs; compressed inputs are written decompressed.

Results are rebuilt by the registered fast path ``rebuild.result``: one the bulk decoder reads
as canonical (``DecodedResult.canonical``) is built again by the bulk encoder from the
decoded values (encode.py); a record that does not come back identical that way, and every
other record, is declined to the construct schemas. Either way the bytes written are the
record's own, checked.
"""

from __future__ import annotations

import enum
import os
from pathlib import Path

from pcpconform.errors import FormatError
from pcpconform.fastpath import Declined, PathStats, register
from pcpconform.format.schema import TYPE_DESC, structs
from pcpconform.io.bulk import DecodeReason, decode_fast
from pcpconform.io.encode import EncodeReason, encode_fast
from pcpconform.io.files import ArchiveFiles, find_archive
from pcpconform.io.reader import Component, RawRecord, parse_payload

__all__ = ["rebuild_component", "rebuild_archive", "component_suffix"]


def component_suffix(files: ArchiveFiles, path: Path) -> str:
    if path == files.meta:
        return "meta"
    if path == files.index:
        return "index"
    for vol, p in files.volumes.items():
        if p == path:
            return str(vol)
    raise ValueError(path)


def _check_same(record: RawRecord, built: bytes, what: str) -> None:
    if built != record.data:
        at = next((i for i, (a, b) in enumerate(zip(built, record.data)) if a != b),
                  min(len(built), len(record.data)))
        raise FormatError(f"{what} does not rebuild to its own bytes (first difference at +{at})",
                          record.location(what, record.offset + at), "rebuild.mismatch")


def rebuild_component(path: Path, kind: str, out,  # type: ignore[no-untyped-def]
                      types: dict[int, int] | None = None, stats: PathStats | None = None) -> int:
    """Parse and rebuild one file into the binary stream ``out``; returns records written.
    ``types`` (pmID -> pmDesc type, from .meta) lets results take the bulk path, counted in
    ``stats``."""
    stats = PathStats() if stats is None else stats
    with Component(path) as comp:
        s = structs(comp.version)
        label = s.label_record.build(comp.label)
        _check_same(comp.label_record, label, "label")
        out.write(label)
        count = 1
        if kind == "index":
            for _, _, entry in comp.index_entries():
                out.write(s.index_entry.build(entry))
                count += 1
            out.write(b"".join(comp.trailing))
            return count
        record_schema, payload_schema, what = (
            (s.meta_record, s.meta, "meta") if kind == "meta" else
            (s.result_record, s.result, "result"))
        for record in comp.records(kind):
            if types is not None and kind == "volume":
                built = REBUILD(stats, record, comp.version, types)
            else:
                built = record_schema.build(parse_payload(payload_schema, record, what))
            _check_same(record, built, what)
            out.write(built)
            count += 1
        out.write(b"".join(comp.trailing))  # stray end bytes libpcp ignores
        return count


class RebuildReason(enum.Enum):
    """Why a result is rebuilt by the schemas rather than from its bulk-decoded values."""

    NOT_ITS_BYTES = "the writer's layout of its values is not the record"


def rebuild_schema(record: RawRecord, version: int, types: dict[int, int]) -> bytes:
    """A result parsed and built again by the construct schemas: the reference."""
    s = structs(version)
    built: bytes = s.result_record.build(parse_payload(s.result, record, "result"))
    return built


def rebuild_bulk(record: RawRecord, version: int, types: dict[int, int]) -> bytes:
    """A canonical result built again from its bulk-decoded values, when that gives its own
    bytes (anything else is declined)."""
    built = encode_fast(version, decode_fast(record, version, types), types)
    if built != record.data:
        raise Declined(RebuildReason.NOT_ITS_BYTES)
    return built


REBUILD = register("rebuild.result", reference=rebuild_schema, fast=rebuild_bulk,
                   reasons=(DecodeReason, EncodeReason, RebuildReason), inputs="result-record")


def _desc_types(files: ArchiveFiles) -> dict[int, int] | None:
    """pmID -> type from every descriptor of .meta (the first wins, as in Archive); None
    when .meta cannot be read (results then take the schema path, which reports)."""
    if files.meta is None:
        return None
    types: dict[int, int] = {}
    try:
        with Component(files.meta) as meta:
            schema = structs(meta.version).meta
            for record in meta.records("meta"):
                parsed = parse_payload(schema, record, "meta")
                if parsed.type == TYPE_DESC:
                    types.setdefault(int(parsed.body.pmid), parsed.body.type)
    except FormatError:
        return None
    return types


def rebuild_archive(in_base: str | os.PathLike[str], out_base: str | os.PathLike[str], *,
                    bulk: bool = True, stats: PathStats | None = None) -> dict[str, int]:
    """Rebuild every file of an archive under a new base name; returns records per file.
    ``bulk=False`` builds every record with the schemas (the reference for the tests);
    ``stats`` counts what the bulk path did."""
    stats = PathStats() if stats is None else stats
    files = find_archive(in_base)
    types = _desc_types(files) if bulk else None
    out_base = Path(out_base)
    if out_base.parent and not out_base.parent.exists():
        out_base.parent.mkdir(parents=True)
    counts: dict[str, int] = {}
    for path in files.all_paths():
        suffix = component_suffix(files, path)
        kind = suffix if suffix in ("meta", "index") else "volume"
        target = out_base.with_name(f"{out_base.name}.{suffix}")
        tmp = target.with_name(target.name + ".partial")
        try:
            with open(tmp, "wb") as out:
                counts[target.name] = rebuild_component(path, kind, out, types, stats)
            os.replace(tmp, target)
        finally:
            if tmp.exists():
                tmp.unlink()
    return counts
