"""MMV files written by other writers, from PCP's QA suite (Debian's pcp-testsuite, installed
on the host: /var/lib/pcp/testsuite/mmv): Java Parfait's ``large-parfait`` and
``KeyboardReader`` and Python ``pcp.mmv``'s ``pytest``, as each referee's MMV PMDA serves
them against the kit's model of it (``pcpconform.mmv.pmda``), its dump and its check.

Their writers' processes are long gone, so their PROCESS flag is cleared first (the PMDA
would drop them, MMV-CHK-WATCH-3); the files are otherwise as the suite ships them. Parfait's
large file holds ``spacex.indexer.entity_changes.doc`` and, below it,
``spacex.indexer.entity_changes.doc.content``: the PMDA exports only the first (MMV-ID-3),
which the check reports as an error (mmv.metric-name-prefix), and an item of 1024, which it
does not export (mmv.metric-item).
"""

from __future__ import annotations

import lzma
from pathlib import Path

import pytest

from pcpconform.check.mmv import check_mmv_file
from pcpconform.check.rules import Severity
from pcpconform.dump.mmv_jsonl import mmv_records
from pcpconform.mmv import parse_mmv
from pcpconform.mmv.model import FLAG_PROCESS
from pcpconform.mmv.pmda import pmda_export
from pcpconform.mmv.pmns import CONTROL_NAMES, CONTROL_NAMES_PCP7
from tests.differential.libpcp.mmv_pmda import observe
from tests.differential.libpcp.referees import Referee

pytestmark = [pytest.mark.libpcp]

QA = Path("/var/lib/pcp/testsuite/mmv")
#: QA file -> the name it gets in the test's MMV directory (a PMNS name component)
FILES = {"large-parfait": "large_parfait", "KeyboardReader": "KeyboardReader", "pytest": "pytest"}


@pytest.fixture(scope="module")
def qa_files() -> dict[str, bytes]:
    out = {}
    for name, as_name in FILES.items():
        path = QA / f"{name}.xz"
        if not path.is_file():
            pytest.skip(f"{path}: PCP's QA MMV files are not installed (pcp-testsuite)")
        data = bytearray(lzma.decompress(path.read_bytes()))
        flags = int.from_bytes(data[28:32], "little") & ~FLAG_PROCESS
        data[28:32] = flags.to_bytes(4, "little")
        out[as_name] = bytes(data)
    return out


def test_the_pmda_serves_them_as_the_model_says(referee: Referee, qa_files: dict[str, bytes]) -> None:
    profile = {"pcp-6.0.3": "pcp-6.0", "pcp-6.3": "pcp-6.3", "pcp-7": "pcp-7"}[referee.name]
    export = pmda_export(sorted((n, parse_mmv(d, n)) for n, d in qa_files.items()), profile)
    view = observe(referee, qa_files, descs=["mmv.spacex.indexer.entity_changes.doc.content",
                                             "mmv.spacex.indexer.entity_changes.doc"]).pmda
    assert not view.run.crashed
    control = set(CONTROL_NAMES + (CONTROL_NAMES_PCP7 if profile == "pcp-7" else ()))
    assert sorted(view.names) == sorted(set(export.names) | control), referee.name
    assert len(export.names) > 200
    assert view.descs["mmv.spacex.indexer.entity_changes.doc.content"] == "Unknown metric name"
    assert not isinstance(view.descs["mmv.spacex.indexer.entity_changes.doc"], str)


def test_the_check_and_the_dump_say_so(qa_files: dict[str, bytes], tmp_path: Path) -> None:
    path = tmp_path / "large_parfait"
    path.write_bytes(qa_files["large_parfait"])
    report = check_mmv_file(path)
    errors = sorted((d.code, d.field) for d in report.diagnostics if d.severity == Severity.ERROR)
    assert errors == [("mmv.metric-item", "metrics[253].item"), ("mmv.metric-name-prefix", "metrics[176].name")]
    records, problems = mmv_records(qa_files["large_parfait"], "large_parfait")
    assert not [p for p in problems if p["severity"] == "error"]
    hidden = [r["pcp_name"] for r in records if r["kind"] == "metric" and not r["exported"]]
    # the name below another's, and the metric of item 1024
    assert hidden == ["mmv.spacex.indexer.entity_changes.doc.content",
                      "mmv.spacex.packages.request.circuitbreaker.fallback"]
    for name in ("KeyboardReader", "pytest"):
        other = tmp_path / name
        other.write_bytes(qa_files[name])
        assert not check_mmv_file(other).errors
