"""Salvage expectations in the corpus (spec/salvage.md): for chosen invalid cases, and for
damaged archives made only for salvage, the archive ``pcpconform salvage`` writes from the
case's archive (``salvage.meta``, ``salvage.index``, ``salvage.N``), its report
(``salvage.json``, SALVAGE-REPORT-2, with the input and output named by their base names)
and its exit status, as ``expected.salvage``. A salvage under test conforms when its output
holds the values of the expected output (the bytes may differ where a rule leaves a choice:
none does today) and it reports the same losses.
"""

from __future__ import annotations

import json
import shutil
import struct
import tempfile
from pathlib import Path
from typing import Any

from pcpconform.check.engine import check_archive
from pcpconform.check.rules import RULES, Severity
from pcpconform.conform.casefile import BASE, Files, Made, case_data, dir_files
from pcpconform.fixtures import bundled_fixture
from pcpconform.fixtures.fixture import load_fixture
from pcpconform.fixtures.generate import generate_archive
from pcpconform.salvage import salvage_archive
from pcpconform.salvage.report import SalvageReport
from pcpconform.version import __version__

__all__ = ["SALVAGED", "OUT", "REPORT", "salvage_only_cases", "attach_salvage", "salvage_expectation",
           "ALWAYS"]

#: the output's base name and the report's file in a case directory
OUT = "salvage"
REPORT = "salvage.json"
#: clauses every salvage expectation exercises
ALWAYS = ("SALVAGE-RUN-1", "SALVAGE-FILE-1", "SALVAGE-RUN-2", "SALVAGE-NOINV-1", "SALVAGE-REPORT-1", "SALVAGE-REPORT-2",
          "SALVAGE-VERIFY-1", "SALVAGE-INDEX-1")
#: invalid cases given a salvage expectation: one per decision of spec/salvage.md
SALVAGED = (
    "frame-truncated-v2", "frame-trailer-v2", "frame-length-v2", "frame-stray-bytes-v2", "frame-align-v2",
    "label-magic-v2", "label-mismatch-v2", "label-features-v3", "desc-type-v2", "desc-conflict-v2",
    "desc-length-v2", "desc-no-numnames-v2", "meta-tail-v2", "meta-decode-v2", "indom-inst-negative-v2",
    "indom-delta-change-v3", "indom-delta-no-full-v3", "labelset-json-v2", "text-nul-v2",
    "result-time-order-v2", "result-before-start-v2", "result-dptr-v2", "result-blocks-v2", "value-vtype-v2",
    "value-undescribed-v2", "event-structure-v2", "index-partial-v2", "file-missing-index-v2", "file-name-v2",
    "file-missing-meta-v2", "time-fraction-result-v2", "time-fraction-meta-v2",
)


def _records(data: bytes, start: int) -> list[tuple[int, int]]:
    out, pos = [], start
    while pos + 8 <= len(data):
        length = struct.unpack_from(">I", data, pos)[0]
        if length < 8:
            break
        out.append((pos, length))
        pos += length
    return out


def _example(where: Path, version: int) -> Path:
    base = where / BASE
    where.mkdir(parents=True)
    generate_archive(load_fixture(bundled_fixture("example")), base, version=version)
    return base


def _garbage_mid_volume(base: Path) -> None:
    vol = base.with_suffix(".0")
    data = vol.read_bytes()
    start, length = _records(data, 132 if data[7] == 2 else 808)[2]
    vol.write_bytes(data[:start + length] + b"\x00\x00\x00\x05garbage" + data[start + length:])


def _record_between_damage(base: Path) -> None:
    vol = base.with_suffix(".0")
    data = bytearray(vol.read_bytes())
    recs = _records(bytes(data), 132 if data[7] == 2 else 808)
    for k in (1, 3):      # the leading lengths of the second and fourth results, the third between
        pos, _ = recs[k]
        data[pos + 2] ^= 0x40
    vol.write_bytes(bytes(data))


def _zero_tail(base: Path) -> None:
    """What a full disk leaves: the last result's bytes zeroed, and zeros after it."""
    vol = base.with_suffix(".0")
    data = vol.read_bytes()
    pos, _ = _records(data, 132 if data[7] == 2 else 808)[-1]
    vol.write_bytes(data[:pos] + bytes(4096))


def _cut_xz(base: Path) -> None:
    import lzma

    vol = base.with_suffix(".0")
    packed = lzma.compress(vol.read_bytes(), format=lzma.FORMAT_XZ, preset=0)
    vol.unlink()
    base.with_name(BASE + ".0.xz").write_bytes(packed[:len(packed) * 2 // 3])


def _zero_length_files(base: Path) -> None:
    base.with_suffix(".index").write_bytes(b"")
    base.with_name(BASE + ".1").write_bytes(b"")


def _singular_several(base: Path) -> None:
    """disk.dev.read_bytes's descriptor says no instance domain; its results hold two values."""
    meta = base.with_suffix(".meta")
    data = bytearray(meta.read_bytes())
    for pos, _ in _records(bytes(data), 132 if data[7] == 2 else 808):
        if struct.unpack_from(">iI", data, pos + 4) == (1, (60 << 22) | 4):
            struct.pack_into(">I", data, pos + 16, 0xFFFFFFFF)
    meta.write_bytes(bytes(data))


def _label_starts(base: Path) -> None:
    """Every label's start has 1000000 microseconds: no label gives a time."""
    for part in ("meta", "index", "0"):
        path = base.with_suffix("." + part)
        data = bytearray(path.read_bytes())
        struct.pack_into(">i", data, 16, 1000000)
        path.write_bytes(bytes(data))


#: damaged archives made only for salvage: (id, title, version, damage)
_ONLY = (
    ("salvage-garbage-mid-volume-v3", "11 bytes of garbage inserted after the third result of `a.0` "
     "(the results after it no longer aligned)", 3, _garbage_mid_volume),
    ("salvage-record-between-damage-v2", "the leading lengths of the second and fourth results of `a.0` "
     "damaged; the third, between them, intact", 2, _record_between_damage),
    ("salvage-zero-tail-v2", "the last result of `a.0` zeroed and 4096 zero bytes after it, as a full disk "
     "leaves a volume", 2, _zero_tail),
    ("salvage-cut-xz-v2", "`a.0` compressed with xz and cut to two thirds of its compressed bytes", 2, _cut_xz),
    ("salvage-zero-length-v2", "`a.index` and a volume `a.1` of zero length", 2, _zero_length_files),
    ("salvage-singular-several-v2", "disk.dev.read_bytes's descriptor says it has no instance domain; its "
     "results hold two values", 2, _singular_several),
    ("salvage-label-starts-v2", "every label's start has 1000000 microseconds", 2, _label_starts),
)


def salvage_only_cases(tmp: Path) -> list[Made]:
    """The damaged archives made only for salvage, as invalid cases (their validator codes
    as the check finds them)."""
    out = []
    for cid, title, version, damage in _ONLY:
        base = _example(tmp / "salvage-only" / cid, version)
        damage(base)
        report = check_archive(base)
        errors = sorted({d.code for d in report.diagnostics if d.severity == Severity.ERROR})
        others = sorted(report.codes() - set(errors))
        clauses = list(dict.fromkeys(RULES[c].clause for c in errors + others))
        origin = {"writer": "pcpconform.corpusgen.salvage_cases", "version": __version__,
                  "source": "pcpconform/fixtures/bundled/example.yaml"}
        expected = {"verdict": "errors" if errors else "warnings" if others else "clean",
                    "error_codes": errors, "warning_codes": others, "dump": None}
        data = case_data(cid, "invalid", title, [f"area:{(errors or others or ['file'])[0].split('.')[0]}",
                                                  f"fault:{cid.rsplit('-', 1)[0]}", "fixture:example"],
                         clauses or ["FMT-FRAME-1"], version, origin, expected)
        out.append(Made(data, dir_files(base.parent)))
    return out


def report_json(report: SalvageReport) -> bytes:
    """The report as a case stores it: input and output by their base names."""
    doc: dict[str, Any] = report.to_json()
    doc["input"] = BASE
    if doc["output"] is not None:
        doc["output"] = OUT
    items = doc.pop("items")
    lines = [json.dumps(doc, sort_keys=True)[:-1] + ', "items": [']
    lines += [" " + json.dumps(item, sort_keys=True) + ("," if k < len(items) - 1 else "")
              for k, item in enumerate(items)]
    return ("\n".join(lines) + "]}\n").encode("utf-8")


def salvage_expectation(case_dir: Path) -> tuple[Files, dict[str, Any], list[str]]:
    """Salvage a case's archive: the files to add, ``expected.salvage`` and the clauses."""
    with tempfile.TemporaryDirectory(prefix="pcpconform-salvage-case-") as name:
        work = Path(name)
        shutil.copytree(case_dir, work / "in")
        report = salvage_archive(work / "in" / BASE, work / "out" / OUT)
        files: Files = {REPORT: report_json(report)}
        if report.failure is None:
            files.update(dir_files(work / "out"))
    clauses = list(dict.fromkeys([*ALWAYS, *(i.clause for i in report.items)]))
    expected = {"archive": None if report.failure else OUT, "report": REPORT, "exit": report.exit_status}
    return files, expected, clauses


def attach_salvage(made: list[Made], where: dict[str, Path]) -> None:
    """Give the cases of SALVAGED and the salvage-only cases their salvage expectation;
    ``where`` maps a case id to a directory holding its files."""
    for case in made:
        if case.id not in SALVAGED and not case.id.startswith("salvage-"):
            continue
        files, expected, clauses = salvage_expectation(where[case.id])
        case.files.update(files)
        case.data["expected"]["salvage"] = expected
        case.data["tags"] = [*case.data["tags"], "salvage"]
        case.data["clauses"] = list(dict.fromkeys([*case.data["clauses"], *clauses]))
