"""Diagnostics people can act on: metric names and times, grouped repeats in text (every
occurrence in JSON), one index.vol-missing per volume, codes named by their meanings,
negative times printed correctly, text streamed archive by archive."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from pcpconform.check import output
from pcpconform.check.describe import sem_text, stamp_text
from pcpconform.check.diagnostics import Report
from pcpconform.check.engine import check_archive
from pcpconform.check.runner import run_checks
from pcpconform.cli import main
from pcpconform.corpusgen.invalid import ArchiveEdit
from pcpconform.fixtures import bundled_fixture
from pcpconform.fixtures.fixture import load_fixture
from pcpconform.fixtures.generate import generate_archive
from pcpconform.format.pmtypes import Timestamp


def _archive(base: Path, version: int = 3) -> Path:
    generate_archive(load_fixture(bundled_fixture("example")), base, version=version)
    return base


def _edited(tmp_path: Path, edit: object, version: int = 3) -> Path:
    ed = ArchiveEdit(_archive(tmp_path / "orig" / "a", version))
    edit(ed)  # type: ignore[operator]
    ed.save(tmp_path / "case" / "a")
    return tmp_path / "case" / "a"


def test_stamp_text_prints_negative_and_odd_times() -> None:
    assert stamp_text(Timestamp(-3, 999_996_000)) == "-2.000004000"
    assert stamp_text(Timestamp(5, 1)) == "5.000000001"
    assert stamp_text(Timestamp(10, -5000)) == "sec 10, nsec -5000"
    assert sem_text(0) == "0 (no PCP semantics)" and sem_text(3) == "instant (3)"


def test_desc_sem_names_metric_and_meanings(tmp_path: Path) -> None:
    def edit(ed: ArchiveEdit) -> None:
        i = ed.desc("kernel.all.load")
        rec = ed.meta(i)
        rec.body.sem = 0
        ed.put_meta(i, rec)

    report = check_archive(_edited(tmp_path, edit))
    d = next(d for d in report.diagnostics if d.code == "desc.sem")
    assert d.severity.value == "warning"
    assert d.metric == "kernel.all.load"
    assert d.message == ("60.2.0 (kernel.all.load): semantics 0 is not counter (1), instant (3) "
                         "or discrete (4)")


def test_value_diagnostics_carry_metric_and_time(tmp_path: Path) -> None:
    def edit(ed: ArchiveEdit) -> None:     # every result: disk.dev.read_bytes has instance 9
        for i, (_, length) in enumerate(ed.records("0"), 1):
            if length == ed.s.mark_size:
                continue
            res = ed.result(i)
            vs = next((v for v in res.vsets if v.pmid == int(ed.meta(ed.desc("disk.dev.read_bytes")).body.pmid)),
                      None)
            if vs is not None:
                vs.values[0] = (9, vs.values[0][1])
                ed.put_result(i, res)

    report = check_archive(_edited(tmp_path, edit))
    unknown = [d for d in report.diagnostics if d.code == "value.unknown-inst"]
    assert unknown
    for d in unknown:
        assert d.metric == "disk.dev.read_bytes"
        assert d.time is not None and d.time.startswith("2026-11-21 08:") and d.time.endswith("Z")
        assert "disk.dev.read_bytes" in d.message
    assert "(at 2026-11-21 08:" in output.render_text([report])


def test_vol_missing_once_per_volume(tmp_path: Path) -> None:
    def edit(ed: ArchiveEdit) -> None:
        for n in range(1, len(ed.entries()) + 1):
            e = ed.entry(n)
            e.vol = 7
            ed.put_entry(n, e)

    report = check_archive(_edited(tmp_path, edit))
    missing = [d for d in report.diagnostics if d.code == "index.vol-missing"]
    assert len(missing) == 1
    assert "volume 7 does not exist; 3 index entries name it" in missing[0].message


def _repeated(n: int) -> Report:
    report = Report("arch")
    for k in range(n):
        report.add("value.unknown-inst", "arch.0", f"60.0.4 (disk.dev.read_bytes): instance {k} is not "
                   "in indom 60.1 at that time", record=k + 1, offset=100 * k, field="result.vset[0].vlist",
                   metric="disk.dev.read_bytes", time=f"2026-11-21 08:00:{k:02d}.000000000Z")
    report.add("desc.sem", "arch.meta", "semantics 0", record=2)
    return report


def test_text_groups_repeats_json_keeps_all() -> None:
    report = _repeated(10)
    lines = output.render_text([report]).splitlines()
    assert len([ln for ln in lines if "value.unknown-inst" in ln]) == output.GROUP_SHOWN + 1
    group = next(ln for ln in lines if "more like the above" in ln)
    assert "7 more" in group and "for disk.dev.read_bytes" in group
    assert "records 4..10" in group and "08:00:03.000000000Z to 2026-11-21 08:00:09.000000000Z" in group
    assert lines[-2].startswith("arch: arch.meta[record 2]: warning desc.sem")
    doc = json.loads(output.render_json([report]))
    assert len(doc["archives"][0]["diagnostics"]) == 11
    assert doc["archives"][0]["diagnostics"][0]["metric"] == "disk.dev.read_bytes"
    sarif = output.sarif_log([report])
    assert len(sarif["runs"][0]["results"]) == 11
    # up to GROUP_SHOWN, nothing is folded
    assert "more like the above" not in output.render_text([_repeated(output.GROUP_SHOWN)])


_written: list[str] = []


def _check_after_previous_written(base: Path, max_diagnostics: int | None) -> Report:
    _written.append(_stream.getvalue())
    return Report(str(base))


_stream = io.StringIO()


def test_text_streams_archive_by_archive(tmp_path: Path) -> None:
    text = output.TextStream(_stream)
    bases = [tmp_path / n for n in ("a", "b", "c")]
    results = run_checks(bases, 1, None, False, check=_check_after_previous_written, on_report=text.report)
    text.finish(results)
    assert _written[0] == ""
    assert f"{bases[0]}: clean" in _written[1] and f"{bases[1]}: clean" in _written[2]
    assert _stream.getvalue().index("Summary") > _stream.getvalue().index(f"{bases[2]}: clean")


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_cli_text_in_input_order(tmp_path: Path, capsys: pytest.CaptureFixture[str], jobs: str) -> None:
    bases = [_archive(tmp_path / n) for n in ("b1", "a2", "c3")]
    assert main(["check", "-j", jobs, *map(str, bases)]) == 0
    out = capsys.readouterr().out
    order = [out.index(f"{b}: clean") for b in sorted(bases, key=lambda p: p.name)]
    assert order == sorted(order) and out.index("Summary") > order[-1]


def test_strict_fails_on_warnings(tmp_path: Path) -> None:
    def edit(ed: ArchiveEdit) -> None:
        i = ed.desc("kernel.all.load")
        rec = ed.meta(i)
        rec.body.sem = 0
        ed.put_meta(i, rec)

    base = _edited(tmp_path, edit)
    assert main(["check", "-q", str(base)]) == 0
    assert main(["check", "-q", "--strict", str(base)]) == 1
    assert main(["check", "-q", "--warnings-as-errors", str(base)]) == 1
