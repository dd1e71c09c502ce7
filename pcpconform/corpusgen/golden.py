"""The valid cases: archives the kit writes from the fixtures of ``corpus/fixtures/``, the
same archives with compressed components, and archives other writers made (libpcp's pmi,
pmlogger, pmlogrewrite, pmlogextract), committed once under ``corpus/sources/`` and copied
into their cases as they are.

Each case carries its archive, its canonical dump and, for a fixture case, the fixture
(``fixture.yaml``: a writer under test writes it). Tags and clauses come from what the
dump shows (``features``); the verdict is the validator's, which must be clean for the
kit's own archives.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

from pcpconform.check.engine import check_archive
from pcpconform.check.rules import Severity
from pcpconform.conform.casefile import (
    BASE,
    DUMP,
    FIXTURE,
    Files,
    Made,
    case_data,
    declared_clauses,
    dir_files,
    dump_bytes,
)
from pcpconform.conform.manifest import ManifestError
from pcpconform.corpusgen.compress import COMPRESSORS
from pcpconform.corpusgen.features import archive_features
from pcpconform.errors import PcpConformError
from pcpconform.fixtures.fixture import load_fixture
from pcpconform.fixtures.generate import generate_archive
from pcpconform.version import __version__

__all__ = ["FIXTURES", "SOURCES", "SOURCE_FILE", "fixture_cases", "compressed_cases", "source_cases",
           "mmv_cases", "quirk_cases", "expected_verdict"]

FIXTURES = "fixtures"
SOURCES = "sources"
SOURCE_FILE = "source.json"

_GEN_CLAUSES = ("GEN-FILES", "GEN-LABEL", "GEN-DESC", "GEN-RESULT", "GEN-INDEX", "GEN-END",
                "FIX-DOC-1", "FIX-KEYS-1", "FIX-TIME-1", "FIX-ARCH-1", "FIX-METRIC-1",
                "FIX-SAMPLE-1", "FIX-SAMPLE-2", "FIX-SAMPLE-3", "FIX-VALUE-1")
#: a feature of the archive -> the generation and fixture clauses writing it exercises
_GEN_BY_FEATURE = {
    "indoms": ("GEN-INDOM", "GEN-INST", "FIX-INDOM-1"),
    "help": ("GEN-TEXT",), "labels": ("GEN-LABELSET", "FIX-LABEL-1", "FIX-LABEL-2"),
    "marks": ("GEN-MARK",), "multi-volume": ("GEN-VOL",), "events": ("FIX-EVENT-1",),
}
#: each compression suffix -> the component it is applied to, the archive version, the id
_COMPRESSED = (
    (".xz", ("meta", "index", "0"), 3, "compress-xz-v3"),
    (".lzma", ("0",), 3, "compress-lzma-v3"),
    (".bz2", ("meta", "0"), 3, "compress-bz2-v3"),
    (".bz", ("0",), 2, "compress-bz-v2"),
    (".gz", ("meta", "index", "0"), 2, "compress-gz-v2"),
    (".z", ("0",), 3, "compress-z-v3"),
    (".Z", ("index",), 2, "compress-lzw-v2"),
    (".zst", ("meta", "0"), 3, "compress-zst-v3"),
)


def expected_verdict(base: Path) -> dict[str, Any]:
    """What the validator says of a readable archive: verdict and codes."""
    report = check_archive(base)
    errors = sorted({d.code for d in report.diagnostics if d.severity == Severity.ERROR})
    others = sorted(report.codes() - set(errors))
    verdict = "errors" if errors else "warnings" if others else "clean"
    return {"verdict": verdict, "error_codes": errors, "warning_codes": others, "dump": DUMP}


def _archive_case(cid: str, title: str, where: Path, origin: dict[str, str], *,
                  tags: list[str], clauses: list[str], extra: Files | None = None,
                  fixture: str | None = None) -> Made:
    files = dir_files(where)
    dump = dump_bytes(where / BASE)
    files[DUMP] = dump
    files.update(extra or {})
    feats = archive_features(dump)
    expected = expected_verdict(where / BASE)
    data = case_data(cid, "valid", title, list(dict.fromkeys(tags + feats.tags())),
                     list(dict.fromkeys(feats.clauses() + clauses)), feats.version, origin,
                     expected, fixture=fixture)
    return Made(data, files)


def _fixture_versions(path: Path) -> tuple[int, ...]:
    """Both archive versions, unless the fixture asks for what only version 3 has."""
    fixture = load_fixture(path)
    return (3,) if fixture.indom_records == "delta" else (2, 3)


def fixture_cases(corpus: Path, tmp: Path) -> list[Made]:
    """Every fixture of corpus/fixtures written as an archive of each version."""
    out = []
    for path in sorted((corpus / FIXTURES).glob("*.yaml")):
        source = path.stem
        text = path.read_bytes()
        for version in _fixture_versions(path):
            where = tmp / f"golden-{source}-v{version}"
            where.mkdir()
            generate_archive(load_fixture(path), where / BASE, version=version)
            feats = archive_features(dump_bytes(where / BASE))
            gen = list(_GEN_CLAUSES) + declared_clauses(text)
            for name, clauses in _GEN_BY_FEATURE.items():
                if name in feats.found:
                    gen += clauses
            if "delta-indom" in feats.found:
                gen.append("FIX-ARCH-1")
            origin = {"writer": "pcpconform generate", "version": __version__,
                      "source": f"corpus/fixtures/{path.name}"}
            out.append(_archive_case(
                f"{source}-v{version}", f"the fixture {path.name} written as a version {version} archive",
                where, origin, tags=[f"fixture:{source}", "origin:pcpconform", "writer"], clauses=gen,
                extra={FIXTURE: text}, fixture=FIXTURE))
    return out


def compressed_cases(corpus: Path, tmp: Path) -> list[Made]:
    """The example fixture's archive with components compressed, one case per suffix."""
    path = corpus / FIXTURES / "example.yaml"
    out = []
    for suffix, parts, version, cid in _COMPRESSED:
        plain = tmp / f"plain-{cid}"
        plain.mkdir()
        generate_archive(load_fixture(path), plain / BASE, version=version)
        where = tmp / cid
        where.mkdir()
        for f in plain.iterdir():
            part = f.name.split(".", 1)[1]
            if part in parts:
                (where / f"{f.name}{suffix}").write_bytes(COMPRESSORS[suffix](f.read_bytes()))
            else:
                shutil.copy2(f, where / f.name)
        tag = "lzw" if suffix == ".Z" else suffix[1:]
        origin = {"writer": "pcpconform generate", "version": __version__,
                  "source": f"corpus/fixtures/{path.name}, compressed ({suffix})"}
        clauses = ["FMT-COMPRESS-1", "FMT-COMPRESS-2", "FMT-COMPRESS-3", "FMT-COMPRESS-4", "DUMP-LOC-3",
                   "DUMP-LOSSLESS-3"]
        out.append(_archive_case(
            cid, f"example.yaml as a version {version} archive with {', '.join(parts)} compressed as {suffix}",
            where, origin, tags=["fixture:example", "origin:pcpconform", f"compress:{tag}"],
            clauses=clauses))
    return out


def _source(path: Path) -> dict[str, Any]:
    try:
        data = json.loads((path / SOURCE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ManifestError(f"{path / SOURCE_FILE}: cannot read: {exc}") from None
    if not isinstance(data, dict) or not {"title", "origin", "tags", "clauses"} <= data.keys():
        raise ManifestError(f"{path / SOURCE_FILE}: needs title, origin, tags and clauses")
    return data


def source_cases(corpus: Path) -> list[Made]:
    """The archives committed under corpus/sources/<id>/ (other writers'), as they are."""
    out: list[Made] = []
    root = corpus / SOURCES
    if not root.is_dir():
        return out
    for path in sorted(p for p in root.iterdir() if p.is_dir()):
        meta = _source(path)
        if meta.get("format") == "set":
            continue                # an archive set: pcpconform.corpusgen.setcases
        try:
            made = _archive_case(path.name, meta["title"], path, dict(meta["origin"]),
                                 tags=list(meta["tags"]), clauses=list(meta["clauses"]))
        except PcpConformError as exc:
            raise ManifestError(f"{path}: the committed archive cannot be read: {exc}") from None
        made.files.pop(SOURCE_FILE, None)
        out.append(made)
    return out


#: what a well-formed MMV file exercises by obeying it: its layout, what libpcp_mmv writes,
#: the PMDA's identity rules and every rule of the MMV checker
_MMV_CLAUSES = ("MMV-CONV-1", "MMV-CONV-2", "MMV-HDR-1", "MMV-HDR-2", "MMV-HDR-3", "MMV-TOC-1",
                "MMV-SEC-1", "MMV-SEC-2", "MMV-VAL-1", "MMV-WRITE-VERSION-1", "MMV-WRITE-ORDER-1",
                "MMV-WRITE-ORDER-2", "MMV-ID-1", "MMV-ID-2", "MMV-ID-3")
_MMV_V3 = ("MMV-WRITE-LABEL-SLACK",)
MMV_FILE = "f.mmv"


def mmv_cases(spec_clauses: list[str]) -> list[Made]:
    """The MMV checker's valid base file of each version, as valid cases; ``spec_clauses``
    are the MMV-CHK-* clauses the file obeys."""
    from pcpconform.check import mmv as checker
    from pcpconform.corpusgen import mmv_faults as module
    out = []
    with tempfile.TemporaryDirectory(prefix="pcpconform-mmv-") as tmp:
        for version in (1, 2, 3):
            content = module.base_file(version)
            path = Path(tmp) / f"v{version}.mmv"
            path.write_bytes(content)
            report = checker.check_mmv_file(path)
            errors = sorted({d.code for d in report.diagnostics if d.severity == Severity.ERROR})
            others = sorted(report.codes() - set(errors))
            verdict = "errors" if errors else "warnings" if others else "clean"
            clauses = list(_MMV_CLAUSES) + (list(_MMV_V3) if version == 3 else []) + spec_clauses
            data = {"id": f"mmv-base-v{version}", "title": f"a well-formed version {version} MMV file "
                    "as libpcp_mmv lays it out (the file the MMV one-fault cases edit)",
                    "kind": "valid", "format": "mmv", "tags": ["mmv", "origin:pcpconform"],
                    "clauses": clauses, "file": MMV_FILE, "mmv_versions": [version],
                    "origin": {"writer": "pcpconform.mmv.writer", "version": __version__,
                               "source": "pcpconform.corpusgen.mmv_faults.base_model"},
                    "files": {},
                    "expected": {"verdict": verdict, "error_codes": errors, "warning_codes": others,
                                 "dump": None}}
            out.append(Made(data, {MMV_FILE: content}))
    return out


def quirk_cases(tmp: Path) -> list[Made]:
    """The readable but odd archives of the one-fault builder's QUIRKS registry, as valid
    cases whose verdict is the validator's warnings."""
    from pcpconform.corpusgen import invalid as module
    out = []
    for q in getattr(module, "QUIRKS", ()):
        for version in q.versions:
            cid = f"quirk-{q.name}-v{version}"
            where = tmp / cid
            module.build_quirk(q, version, where / BASE)
            for hidden in where.glob(".*"):
                hidden.unlink()
            origin = {"writer": "pcpconform.corpusgen.invalid (quirks)", "version": __version__,
                      "source": f"pcpconform/fixtures/bundled/{q.source}.yaml"}
            out.append(_archive_case(cid, f"quirk: {q.title}", where, origin,
                                     tags=["quirk", "origin:pcpconform", f"fixture:{q.source}"],
                                     clauses=list(q.clauses)))
    return out
