"""The text dump's kernel (``dump.text-run``) fills each layout's ``%`` template itself: the
template's ``%%`` escapes, names that are not ASCII or not UTF-8, and strings with ``%`` in
them come out as ``template % values`` and the record-by-record reference give them."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pcpconform.dump.text import RUN_PATH, ResultLines, reference_vsets, run_text_kernel, run_text_records
from pcpconform.fastpath import Declined, PathStats
from pcpconform.fixtures.fixture import load_fixture
from pcpconform.fixtures.generate import generate_archive
from pcpconform.format.timezone import UTC_ZONE
from pcpconform.io.archive import Archive
from pcpconform.io.bulk import decode_result
from pcpconform.io.reader import RawRecord
from pcpconform.io.result_kernel import KernelReason

FIXTURE = """
archive: {version: VERSION, hostname: h, timezone: UTC, pid: 1, interval: 1}
metrics:
  - {name: disk.dev.pct, pmid: 60.0.1, type: u32, sem: instant, indom: 60.1, units: none}
  - {name: kernel.uname.release, pmid: 60.12.0, type: string, sem: discrete}
  - {name: disk.dev.label, pmid: 60.12.1, type: string, sem: discrete, indom: 60.1}
indoms:
  - indom: 60.1
    instances: {"50%s": 0, "a%%s": 1, "100%": 2, "caf\\u00e9": 3, "%": 4, "%%": 5, "s%": 6}
samples:
  - time: 2026-11-21T08:00:00Z
    values:
      disk.dev.pct: {"50%s": 1, "a%%s": 2, "100%": 3, "caf\\u00e9": 4, "%": 5, "%%": 6, "s%": 7}
      kernel.uname.release: "%s %% %d \\u00e9"
      disk.dev.label: {"50%s": "%s", "a%%s": "%%s", "100%": "%", "caf\\u00e9": "\\u00e9%s"}
  - values:
      disk.dev.pct: {"50%s": 8, "caf\\u00e9": 9}
  - mark: true
  - values:
      disk.dev.pct: {"%": 10, "%%": 11, "s%": 12}
      kernel.uname.release: "%"
"""


@pytest.mark.parametrize("version", [2, 3])
@pytest.mark.parametrize("utf8", [True, False])
def test_kernel_text_is_the_references(tmp_path: Path, version: int, utf8: bool) -> None:
    (tmp_path / "f.yaml").write_text(FIXTURE.replace("VERSION", str(version)))
    base = tmp_path / "a"
    generate_archive(load_fixture(tmp_path / "f.yaml"), base)
    if not utf8:        # "café" with bytes that are not UTF-8, of the same length
        meta = Path(f"{base}.meta")
        raw = meta.read_bytes()
        assert b"\xc3\xa9" in raw
        meta.write_bytes(raw.replace(b"\xc3\xa9", b"\xff\xfe"))
    archive = Archive(base)
    records = [record for _, record in archive.volume_records()]
    assert len(records) == 4
    fast = run_text_kernel(ResultLines(archive, UTC_ZONE, PathStats()), records)
    assert fast == run_text_records(ResultLines(archive, UTC_ZONE, PathStats()), records)
    assert ('inst [0 or "50%s"]' in fast and 'inst [1 or "a%%s"]' in fast and '"%s %% %d \\xc3\\xa9"' in fast)
    assert ('inst [3 or "café"]' in fast) if utf8 else ('inst [3 or "caf\udcff\udcfe"]' in fast)


EVENTS = """
archive: {version: 3, hostname: h, timezone: UTC}
metrics:
  - {name: ev.records, pmid: 62.0.1, type: event, sem: instant}
  - {name: ev.param.u32, pmid: 62.0.3, type: u32, sem: instant}
samples:
  - time: 1700000000
    values: {ev.param.u32: 1}
  - values:
      ev.records:
        - {time: 1699999999.5, flags: 1, params: [{pmid: 62.0.3, type: u32, value: 42}]}
  - values: {ev.param.u32: 2}
  - values:
      ev.records:
        - {time: 1700000002.5, flags: 1, params: [{pmid: 62.0.3, type: u32, value: 43}]}
"""


def test_records_the_kernel_does_not_read_are_the_references_in_place(tmp_path: Path) -> None:
    (tmp_path / "f.yaml").write_text(EVENTS)
    base = tmp_path / "a"
    generate_archive(load_fixture(tmp_path / "f.yaml"), base)
    archive = Archive(base)
    records = [record for _, record in archive.volume_records()]
    for run in (records, records[:2], records[1:], records[1:3]):
        stats = PathStats()
        fast = run_text_kernel(ResultLines(archive, UTC_ZONE, stats), run)
        assert fast == run_text_records(ResultLines(archive, UTC_ZONE, PathStats()), run)
        unread = sum(1 for r in run if r in (records[1], records[3]))
        assert stats.reasons(RUN_PATH) == {KernelReason.EVENTS: unread}
    with pytest.raises(Declined):           # nothing the kernel reads: the whole run declined
        run_text_kernel(ResultLines(archive, UTC_ZONE, PathStats()), [records[1], records[3]])


QA = Path(os.environ.get("PCPCONFORM_QA_ARCHIVES", "/var/lib/pcp/testsuite/archives"))


@pytest.mark.parametrize("name", ["20130706", "pcp-zeroconf"])
def test_a_domain_written_again_unchanged_keeps_its_lines(name: str) -> None:
    """PCP's QA archives whose pmlogger wrote instance domains again unchanged (15 of
    20130706's 17 rewrites, 24 of pcp-zeroconf's 77): every run's text is the reference's,
    with the templates made under the first record of each stretch kept."""
    if not Path(f"{QA / name}.index").exists():
        if os.environ.get("CI") == "true":
            pytest.fail(f"{QA / name} is missing (CI installs PCP's QA archives)")
        pytest.skip(f"{QA / name} is not installed")
    archive = Archive(QA / name)
    histories = archive.metadata.indoms.values()
    assert any(h[p].instances == h[p - 1].instances for h in histories for p in range(1, len(h)))
    records = [record for _, record in archive.volume_records()]
    lines = ResultLines(archive, UTC_ZONE, PathStats())        # one for all runs, as write_text
    for lo in range(0, len(records), 16):
        run = records[lo:lo + 16]
        assert run_text_kernel(lines, run) == "".join(_independent(archive, record) for record in run)
    assert any(ids != list(range(len(ids))) for ids in lines.contents.values())


def _independent(archive: Archive, record: RawRecord) -> str:
    """A record's text by ``reference_vsets``, whose instance names are the archive's own
    lookup at the result's time (no template, no cache of ``ResultLines``)."""
    res = decode_result(record, archive.version, {p: d.type for p, d in archive.metadata.descs.items()},
                        PathStats())
    when = UTC_ZONE.when(res.timestamp)
    if res.is_mark:
        return f"[{len(record.data)} bytes]\n{when}  <mark>\n\n"
    n = len(res.vsets)
    return (f"[{len(record.data)} bytes]\n{when} {n} metric{'s' if n != 1 else ''}\n"
            f"{reference_vsets(archive, res)}\n")
