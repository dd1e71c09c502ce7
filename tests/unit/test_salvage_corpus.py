"""Salvage on the whole corpus: valid archives come out whole, every one-fault archive comes
out checking clean with nothing invented, or (where nothing can be typed or read) not at all."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from pcpconform.check.rules import RULES
from pcpconform.salvage import salvage_archive
from pcpconform.salvage.measure import archive_values, invented_values
from pcpconform.salvage.salvage import Provenance

ROOT = Path(__file__).resolve().parents[2]
CASES = ROOT / "corpus" / "cases"

#: invalid cases from which no archive can be made, and why (SALVAGE-RUN-2)
NOTHING_TO_SALVAGE = {
    "file-empty-meta": "no .meta holding a record",
    "file-missing-meta": "no .meta holding a record",
    "meta-no-desc": "no metric descriptor",
    "file-missing-volume": "no data volume",
    "file-empty-volume0": "no result",      # the only volume holds only its label
    "file-read": "no result",               # the only volume's gzip magic is damaged
}
#: fuzz findings whose only descriptor or only result is the damage
FUZZ_NOTHING = {"fuzz-pmdumplog-crash-02f296157d-v2", "fuzz-pmdumplog-crash-151caa3134-v2",
                "fuzz-pmdumplog-crash-b89dbf09bc-v2", "fuzz-pmdumplog-crash-fbfe840d7e-v3"}


def _archive_cases(kind: str) -> list[Path]:
    out = []
    for path in sorted((CASES / kind).glob("*/case.json")):
        case = json.loads(path.read_text())
        if case.get("format", "archive") == "archive":
            out.append(path.parent / case["archive"])
    return out


def _digest(base: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(base.parent.iterdir())
            if p.name.startswith(base.name + ".")}


@pytest.mark.parametrize("base", _archive_cases("valid"), ids=lambda b: b.parent.name)
def test_a_valid_archive_comes_out_whole(base: Path, tmp_path: Path) -> None:
    report = salvage_archive(base, tmp_path / "out")
    assert report.exit_status == 0, [i.text() for i in report.items]
    assert not report.lost and report.out_errors == 0
    values = archive_values(base)
    assert archive_values(tmp_path / "out") == values
    assert report.values_in == report.values_out == sum(1 for _ in values) or len(values) < report.values_out


@pytest.mark.parametrize("base", _archive_cases("invalid"), ids=lambda b: b.parent.name)
def test_a_damaged_archive_comes_out_clean_and_invents_nothing(base: Path, tmp_path: Path) -> None:
    case = base.parent.name
    fault = case.rsplit("-", 1)[0]
    before = _digest(base)
    if fault == "file-no-archive":
        with pytest.raises(Exception, match="no such archive"):
            salvage_archive(base, tmp_path / "out")
        return
    provenance: list[Provenance] = []
    report = salvage_archive(base, tmp_path / "out", provenance=provenance)
    assert _digest(base) == before                         # IN is never written (SALVAGE-RUN-1)
    assert {i.code for i in report.items} <= set(RULES)    # codes shared with check
    if fault in NOTHING_TO_SALVAGE or case in FUZZ_NOTHING:
        assert report.failure is not None and report.exit_status == 2
        assert not list(tmp_path.iterdir())
        return
    assert report.failure is None, report.failure
    assert report.out_errors == 0, report.out_codes
    assert report.exit_status in (0, 1)
    assert invented_values(base, tmp_path / "out", provenance) == []
    assert report.records_out == len(provenance)


def test_a_lost_value_is_counted_where_it_was(tmp_path: Path) -> None:
    base = CASES / "invalid" / "desc-type-v3" / "a"
    report = salvage_archive(base, tmp_path / "out")
    lost = [i for i in report.items if i.code == "desc.type"]
    assert report.exit_status == 1 and lost
    assert sum(i.values for i in lost) == report.values_lost > 0
    values = next(i for i in lost if i.values)
    assert values.metric and "hinv.ncpu" in values.metric and values.first is not None
    assert values.start is not None and values.end is not None and values.file == "a.0"


def test_the_invention_check_can_fail(tmp_path: Path) -> None:
    base = CASES / "valid" / "example-v2" / "a"
    provenance: list[Provenance] = []
    salvage_archive(base, tmp_path / "out", provenance=provenance)
    data = bytearray((tmp_path / "out.0").read_bytes())
    # the first result's first INSITU value word, one more than it was
    at = provenance[0].out_offset + 16 + 8 + 4 + 4
    data[at + 3] ^= 1
    (tmp_path / "out.0").write_bytes(bytes(data))
    assert any("not a value of" in p for p in invented_values(base, tmp_path / "out", provenance))
