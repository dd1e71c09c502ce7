"""The ``mmv-writer`` suite (spec/conformance.md, CONF-MMVW-*): MMV writers graded on what
the MMV PMDA would export from the file they write.

The corpus holds one case per MMV fixture of ``corpus/fixtures/mmv/`` (``mmv_writer_cases``):
the fixture, the file the kit writes from it (as libpcp_mmv lays it out), and
``export.json``, the PMDA's export of that file (``pcpconform.mmv.pmda``). An implementation
gets the fixture and a file name; ``grade_mmv_writer`` validates what it wrote with the MMV
checker, reads it and compares its export with the case's: names, PMIDs, descriptors,
instance domains, values, help texts and labels, the header's cluster and flags. What the
format leaves to the writer (the layout, the order of entries and string slots, the
version where more than one holds the content, generations, the process id, bytes the
readers do not read) is not in the export, so it is not graded.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from pcpconform.check.rules import RULES, Severity
from pcpconform.conform.casefile import Made, declared_clauses
from pcpconform.conform.compare import json_difference
from pcpconform.conform.manifest import Case
from pcpconform.conform.protocol import Outcome
from pcpconform.conform.verdicts import CaseResult, Verdict, abnormal_result, protocol_result
from pcpconform.errors import PcpConformError
from pcpconform.mmv.model import MmvFile
from pcpconform.version import __version__

__all__ = ["MMV_FIXTURES", "EXPORT", "export_document", "mmv_writer_cases", "grade_mmv_writer",
           "case_file_name", "clause_of"]

#: the MMV fixtures' directory, relative to the corpus
MMV_FIXTURES = Path("fixtures") / "mmv"
#: the expected export's file name in a case
EXPORT = "export.json"
_ALWAYS = ("CONF-MMVW-1", "CONF-MMVW-2", "MMV-ID-1", "MMV-ID-2", "MMV-ID-3", "GEN-MMV-WRITE")
_TYPE_TAGS = {-1: "nosupport", 0: "32", 1: "u32", 2: "64", 3: "u64", 4: "float", 5: "double",
              6: "string", 9: "elapsed"}


def case_file_name(stem: str) -> str:
    """The MMV file's name for a fixture: a PMNS name component (the PMDA's prefix)."""
    return stem.replace("-", "_")


def export_document(path: Path) -> dict[str, Any]:
    """What the PMDA of PCP 7 exports from the file alone in its directory, with its header's
    cluster and flags (CONF-MMVW-2); PcpConformError when the file cannot be read."""
    from pcpconform.dump.mmv_fields import flag_names
    from pcpconform.mmv.pmda import pmda_export
    from pcpconform.mmv.reader import read_mmv

    mmv = read_mmv(path)
    doc = pmda_export([(path.name, mmv)]).as_json()
    labels = sorted(doc.pop("labels"), key=lambda x: json.dumps(x, sort_keys=True))
    for label in labels:
        label.pop("file")
    return {"cluster": mmv.cluster, "flags": flag_names(mmv.flags), "indoms": doc["indoms"],
            "metrics": doc["metrics"], "labels": labels}


def _tags(mmv: MmvFile, stem: str) -> list[str]:
    from pcpconform.dump.mmv_fields import flag_names

    tags = ["mmv", "writer", "origin:pcpconform", f"fixture:mmv-{stem}"]
    tags += [f"type:{_TYPE_TAGS[t]}" for t in sorted({m.type for m in mmv.metrics}) if t in _TYPE_TAGS]
    tags += [f"flag:{f}" for f in flag_names(mmv.flags)]
    if mmv.labels:
        tags.append("labels")
    if any(m.shorttext is not None or m.helptext is not None for m in mmv.metrics) or \
            any(d.shorttext is not None or d.helptext is not None for d in mmv.indoms):
        tags.append("help")
    return tags


def mmv_writer_cases(corpus: Path) -> list[Made]:
    """One valid MMV case per fixture of corpus/fixtures/mmv: the fixture, the file the kit
    writes from it and the PMDA's export of that file."""
    from pcpconform.check.mmv import check_mmv_file
    from pcpconform.fixtures.mmv import load_mmv_fixture
    from pcpconform.mmv.writer import build_mmv

    out = []
    for fixture in sorted((corpus / MMV_FIXTURES).glob("*.yaml")):
        content = load_mmv_fixture(fixture)
        name = case_file_name(fixture.stem)
        data = build_mmv(content)
        with tempfile.TemporaryDirectory(prefix="pcpconform-mmv-") as tmp:
            path = Path(tmp) / name
            path.write_bytes(data)
            report = check_mmv_file(path)
            export = export_document(path)
        errors = sorted({d.code for d in report.diagnostics if d.severity == Severity.ERROR})
        if errors:
            raise PcpConformError(f"{fixture}: the kit's own file has errors: {', '.join(errors)}")
        warnings = sorted(report.codes() - set(errors))
        clauses = list(_ALWAYS) + declared_clauses(fixture.read_bytes())
        clauses += [RULES[c].clause for c in warnings if RULES[c].clause]
        case = {"id": f"mmv-{fixture.stem}",
                "title": f"the MMV fixture {fixture.name} as libpcp_mmv writes it, and what the PMDA exports",
                "kind": "valid", "format": "mmv", "tags": _tags(content, fixture.stem),
                "clauses": list(dict.fromkeys(clauses)), "file": name,
                "mmv_versions": [content.version], "fixture": fixture.name,
                "origin": {"writer": "pcpconform generate", "version": __version__,
                           "source": f"corpus/{MMV_FIXTURES.as_posix()}/{fixture.name}"},
                "files": {},
                "expected": {"verdict": "warnings" if warnings else "clean", "error_codes": [],
                             "warning_codes": warnings, "dump": None, "export": EXPORT}}
        out.append(Made(case, {name: data, fixture.name: fixture.read_bytes(),
                               EXPORT: (json.dumps(export, indent=1) + "\n").encode("utf-8")}))
    return out


def clause_of(path: str) -> str:
    """The MMV clause a difference at this JSON pointer of the export breaks."""
    parts = path.strip("/").split("/")
    head = parts[0]
    if head == "cluster":
        return "MMV-ID-1"
    if head == "flags":
        return "MMV-HDR-1"
    if head == "indoms":
        return "MMV-IMPL-1"
    if head == "labels":
        return "GEN-MMV-LABEL"
    member = parts[2] if len(parts) > 2 else ""
    return {"name": "MMV-ID-2", "pmid": "MMV-ID-1", "indom": "MMV-ID-1", "type": "MMV-IMPL-2",
            "sem": "MMV-IMPL-2", "units": "MMV-IMPL-2", "oneline": "MMV-IMPL-HELP",
            "help": "MMV-IMPL-HELP", "values": "MMV-IMPL-3"}.get(member, "MMV-ID-2")


def grade_mmv_writer(case: Case, outcome: Outcome, timeout: float, written: Path,
                     expected: dict[str, Any]) -> CaseResult:
    """A writer's MMV file (CONF-MMVW-1): written, without errors for the MMV checker, and
    exporting what the case's file exports (CONF-MMVW-2)."""
    from pcpconform.check.mmv import check_mmv_file

    suite = "mmv-writer"
    abnormal = abnormal_result(case, suite, outcome, timeout)
    if abnormal is not None:
        return abnormal
    if outcome.returncode != 0:
        return protocol_result(case, suite, outcome, f"exit status {outcome.returncode} (0 expected)")
    result = CaseResult(case.id, suite, Verdict.PASS, "", [], seconds=outcome.seconds,
                        stderr=outcome.stderr_tail())
    if not written.is_file():
        result.verdict, result.clauses = Verdict.FAIL, ["CONF-MMVW-1", "GEN-MMV-WRITE"]
        result.detail = f"no MMV file written at {written.name}"
        return result
    report = check_mmv_file(written)
    errors = sorted({d.code for d in report.diagnostics if d.severity == Severity.ERROR})
    if errors:
        first = next(d for d in report.diagnostics if d.severity == Severity.ERROR)
        result.verdict = Verdict.FAIL
        result.clauses = list(dict.fromkeys(RULES[c].clause for c in errors if RULES[c].clause))
        result.detail = f"the written file is invalid: {', '.join(errors)} ({first.field}: {first.message})"
        result.expected, result.got = {"error_codes": []}, {"error_codes": errors}
        return result
    try:
        got = export_document(written)
    except PcpConformError as exc:
        result.verdict, result.clauses = Verdict.FAIL, ["MMV-SEC-2"]
        result.detail = f"the written file cannot be read: {exc}"
        return result
    diff = json_difference(expected, got)
    if diff is None:
        return result
    path, want, gave = diff
    result.verdict, result.path, result.expected, result.got = Verdict.FAIL, path, want, gave
    result.clauses = ["CONF-MMVW-2", clause_of(path)]
    result.detail = f"the PMDA would export something else at {path}" + _metric_named(expected, path)
    return result


def _metric_named(doc: dict[str, Any], path: str) -> str:
    parts = path.strip("/").split("/")
    if parts[0] == "metrics" and len(parts) > 1 and parts[1].isdigit() and int(parts[1]) < len(doc["metrics"]):
        return f" (metric {doc['metrics'][int(parts[1])]['name']})"
    return ""
