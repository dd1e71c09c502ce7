"""One case as the build makes it: its ``case.json`` content and its files, in memory."""

from __future__ import annotations

import hashlib
import io
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pcpconform.dump.jsonl import write_jsonl
from pcpconform.dump.setdump import write_set_jsonl
from pcpconform.io.archive import Archive
from pcpconform.io.archiveset import ArchiveSet
from pcpconform.io.setform import is_set_source

__all__ = ["Files", "Made", "BASE", "DUMP", "FIXTURE", "sha256", "dir_files", "dump_bytes",
           "case_json", "case_data", "declared_clauses", "finish"]

Files = dict[str, bytes]
#: the archive's base name and the expected dump's file name in every archive case
BASE = "a"
DUMP = "dump.jsonl"
FIXTURE = "fixture.yaml"


@dataclass
class Made:
    """A case the build made: ``data`` becomes case.json (its ``files`` member is filled in
    from ``files`` when the case is written)."""

    data: dict[str, Any]
    files: Files = field(default_factory=dict)

    @property
    def id(self) -> str:
        return str(self.data["id"])


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def dir_files(path: Path) -> Files:
    return {p.name: p.read_bytes() for p in sorted(path.iterdir()) if p.is_file()}


def dump_bytes(base: Path) -> bytes:
    """The canonical JSON Lines dump of an archive (spec/dump-jsonl.md), or of an archive
    set (spec/sets.md SET-CLI-2, under the pcp-6.3 profile)."""
    out = io.StringIO()
    if is_set_source(base):
        write_set_jsonl(ArchiveSet(base), out)
    else:
        write_jsonl(Archive(base), out)
    return out.getvalue().encode("utf-8")


def case_json(data: dict[str, Any]) -> bytes:
    return (json.dumps(data, indent=1, ensure_ascii=True) + "\n").encode("ascii")


def case_data(cid: str, kind: str, title: str, tags: list[str], clauses: list[str],
              version: int, origin: dict[str, str], expected: dict[str, Any], *,
              options: dict[str, Any] | None = None, fixture: str | None = None) -> dict[str, Any]:
    """case.json of an archive case, members in the schema's order (files come later)."""
    data: dict[str, Any] = {
        "id": cid, "title": title, "kind": kind, "tags": tags, "clauses": clauses,
        "archive_versions": [version], "archive": BASE,
    }
    if fixture is not None:
        data["fixture"] = fixture
    data["origin"] = origin
    if options:
        data["check_options"] = dict(options)
    data["files"] = {}
    data["expected"] = expected
    return data


def declared_clauses(text: bytes) -> list[str]:
    """The clauses a fixture or configuration file declares in ``# clauses: ...`` comments:
    what the file was written to exercise beyond what the build finds by itself."""
    out = []
    for line in text.decode("utf-8", "replace").splitlines():
        if line.startswith("# clauses:"):
            out += line.split(":", 1)[1].split()
    return out


def finish(made: Made) -> bytes:
    """case.json with the checksums of the case's files."""
    made.data["files"] = {name: sha256(content) for name, content in sorted(made.files.items())}
    return case_json(made.data)
