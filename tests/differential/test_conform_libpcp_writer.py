"""The libpcp adapters' writer suite under each referee (IMPL-WRITE-1): libpcp_import writes the
fixture, the kit reads it back, and CONF-WRITE-2 grades it. What each referee's pmi writes
of the example passes exactly with the latitude the fixture leaves (PCP 7 needs both its
zoneinfo and its delta records absorbed, 6.x neither); a pid the fixture gives, and
instances it removes, are what the matrix's IMPL-WRITE-2 and IMPL-WRITE-3 say.
(tests/differential/test_conform_libpcp.py checks the verdicts of a subset of writer units.)
"""

from __future__ import annotations

import dataclasses
import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from pcpconform.conform.adapters.libpcp import __file__ as libpcp_adapter
from pcpconform.conform.compare import WriterLatitude, compare_dump_content
from pcpconform.dump.jsonl import write_jsonl
from pcpconform.io.archive import Archive
from tests.differential.libpcp.referees import Referee

pytestmark = [pytest.mark.libpcp]

ROOT = Path(__file__).resolve().parents[2]
VALID = ROOT / "corpus/cases/valid"
ADAPTER = {"pcp-6.0.3": "libpcp-6.0.3", "pcp-6.3": "libpcp-6.3", "pcp-7": "libpcp-7"}


def _write(referee: Referee, fixture: Path, out: Path, version: int) -> subprocess.CompletedProcess[str]:
    """The adapter's one-shot writer, as the runner calls it (CONF-WRITE-1)."""
    return subprocess.run([sys.executable, libpcp_adapter, "--target", ADAPTER[referee.name], "writer",
                           str(fixture), str(out), str(version)], capture_output=True, text=True, timeout=120)


def _dump(base: Path) -> list[dict[str, Any]]:
    buffer = io.StringIO()
    write_jsonl(Archive(base), buffer)
    return [json.loads(line) for line in buffer.getvalue().splitlines()]


def _expected(case: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (VALID / case / "dump.jsonl").read_text(encoding="utf-8").splitlines()]


def _without_pid(case: str, tmp: Path) -> Path:
    doc = yaml.safe_load((VALID / case / "fixture.yaml").read_text(encoding="utf-8"))
    doc["archive"].pop("pid", None)
    path = tmp / "fixture.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")     # value order is write order
    return path


@pytest.mark.parametrize("version", [2, 3])
def test_pmi_writes_the_example_as_asked_within_the_latitude(referee: Referee, tmp_path: Path,
                                                             version: int) -> None:
    fixture = _without_pid(f"example-v{version}", tmp_path)
    written = tmp_path / "written"
    proc = _write(referee, fixture, written, version)
    assert proc.returncode == 0, proc.stderr
    got, want = _dump(written), _expected(f"example-v{version}")
    latitude = WriterLatitude.of_fixture(fixture)
    assert latitude == WriterLatitude(frozenset({"pid", "zoneinfo"}), True)
    assert compare_dump_content(want, got, latitude) is None
    # the pid is libpcp_import's own: graded, it fails (IMPL-WRITE-2)
    pid = compare_dump_content(want, got, dataclasses.replace(latitude, label=frozenset({"zoneinfo"})))
    assert pid is not None and pid.path == "/pid" and pid.clauses == ["GEN-LABEL"]
    # FMT-PMI-1 and FMT-PMI-2: PCP 7's zoneinfo and delta records need the latitude, 6.x's do not
    seven = referee.version.startswith("7.")
    zone = compare_dump_content(want, got, dataclasses.replace(latitude, label=frozenset({"pid"})))
    form = compare_dump_content(want, got, dataclasses.replace(latitude, indom_form=False))
    if seven and version == 3:
        assert zone is not None and zone.path == "/zoneinfo"
        assert form is not None and form.clauses == ["GEN-INDOM"]
    else:
        assert zone is None and form is None


def test_pmi_cannot_remove_instances(referee: Referee, tmp_path: Path) -> None:
    """IMPL-WRITE-3 measured: the domain pmi writes only grows, one record of it, and every
    value is the fixture's."""
    fixture = _without_pid("lifetimes-v3", tmp_path)
    written = tmp_path / "written"
    assert _write(referee, fixture, written, 3).returncode == 0
    got, want = _dump(written), _expected("lifetimes-v3")
    assert sum(o["kind"] == "indom" for o in want) > 1
    indoms = [o for o in got if o["kind"] == "indom"]
    assert len(indoms) == 1 and len(indoms[0]["instances"]) == 17
    results = [(o["timestamp"], o["vsets"]) for o in got if o["kind"] == "result"]
    assert results == [(o["timestamp"], o["vsets"]) for o in want if o["kind"] == "result"]
    diff = compare_dump_content(want, got, WriterLatitude.of_fixture(fixture))
    assert diff is not None and diff.clauses == ["GEN-INDOM"]


def test_what_pmi_cannot_write_is_refused_in_one_line(referee: Referee, tmp_path: Path) -> None:
    """Run directly (the runner skips such units, CONF-CAP-2): events and aggregates, and a
    volume switch, end with a status and one line, and nothing written."""
    for case, status, said in (("events-v3", 3, "cannot write values of type aggregate, event"),
                               ("multi-volume-v3", 1, "cannot switch volumes")):
        proc = _write(referee, VALID / case / "fixture.yaml", tmp_path / case, 3)
        assert proc.returncode == status and said in proc.stderr, proc.stderr
        assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
        assert not list(tmp_path.glob(f"{case}.*"))
