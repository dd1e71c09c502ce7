"""interp --format csv written as joined strings gives the bytes csv.writer gives: on every
valid corpus archive, and on names and values that need quoting (commas, quotes, line
breaks), no values, floats of both widths and end of log."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from pcpconform.fixtures.fixture import parse_fixture
from pcpconform.fixtures.generate import generate_archive
from pcpconform.format.pmtypes import PmID, Timestamp
from pcpconform.format.values import F32
from pcpconform.io.archive import Archive
from pcpconform.oracles.interp import report
from pcpconform.oracles.interp.model import NoValue, Sample
from pcpconform.oracles.interp.replay import Replay
from pcpconform.oracles.interp.report import _Rows, _shown, write_csv
from pcpconform.oracles.interp.schedule import rate_convert

ROOT = Path(__file__).resolve().parents[2]
VALID = ROOT / "corpus" / "cases" / "valid"
ARCHIVES = sorted(p.parent / "a" for p in VALID.glob("*/a.meta*")
                  if not p.parent.name.startswith("compress"))


def reference_csv(archive: Archive, samples: Iterable[Sample], out: io.StringIO, rate: bool = False) -> None:
    """The CSV as csv.writer writes it, row by row (what write_csv must equal)."""
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["time", "metric", "pmid", "inst", "instance", "value", "reason"])
    rows_of = _Rows(archive, rate)
    for s in samples:
        when = f"{s.time.sec}.{s.time.nsec:09d}"
        if s.eol:
            w.writerow([when, "", "", "", "", "", "end of log"])
            continue
        for pmid, name, _desc, vtype, rows in rows_of(s):
            ptext = rows_of.metric(pmid)[3]
            for inst, iname, v in rows:
                if isinstance(v, NoValue):
                    w.writerow([when, name, ptext, inst, iname or "", "", v.reason])
                else:
                    w.writerow([when, name, ptext, inst, iname or "", _shown(v, vtype), ""])


def _both(a: Archive, samples: list[Sample], rate: bool = False) -> tuple[str, str]:
    fast, slow = io.StringIO(), io.StringIO()
    write_csv(a, samples, fast, rate=rate)
    reference_csv(a, samples, slow, rate)
    return fast.getvalue(), slow.getvalue()


@pytest.mark.parametrize("base", ARCHIVES, ids=lambda p: p.parent.name)
def test_csv_is_what_csv_writer_writes(base: Path) -> None:
    a = Archive(base)
    pmids = [int(d.pmid) for d in a.descs()]
    end = max((r.timestamp.total_nsec() for r in a.results()), default=a.start.total_nsec())
    step = max((end - a.start.total_nsec()) // 13, 1)
    samples = Replay(a, pmids).schedule(Timestamp.from_nsec(a.start.total_nsec() - step), step, 17)
    fast, slow = _both(a, samples)
    assert fast == slow


def test_fields_that_need_quoting(tmp_path: Path) -> None:
    doc: dict[str, Any] = {
        "archive": {"version": 3, "hostname": "h", "timezone": "UTC"},
        "metrics": [{"name": "s.text", "pmid": "245.0.1", "type": "string", "sem": "instant", "indom": "245.1"},
                    {"name": "f.load", "pmid": "245.0.2", "type": "float", "sem": "instant", "indom": "245.1"},
                    {"name": "d.rate", "pmid": "245.0.3", "type": "double", "sem": "counter"},
                    {"name": "u.count", "pmid": "245.0.4", "type": "u64", "sem": "counter", "indom": "245.1"}],
        "indoms": [{"indom": "245.1", "instances": {"a,b": 1, 'say "hi"': 2, "plain": 3, "line\nbreak": 4}}],
        "samples": [{"time": 1700000000, "values": {
                        "s.text": {"a,b": 'x,"y"', 'say "hi"': "ok", "plain": "cr\rlf\n", "line\nbreak": ""},
                        "f.load": {"a,b": 1.5, "plain": 0.1}, "d.rate": 1.0, "u.count": {"plain": 5}}},
                    {"time": 1700000010, "values": {
                        "s.text": {"plain": "fine"}, "f.load": {"plain": 2.5, "line\nbreak": 3.25},
                        "d.rate": 1e300, "u.count": {"plain": 2**63, "a,b": 7}}},
                    {"mark": True},
                    {"time": 1700000100, "values": {"d.rate": 5.0, "u.count": {"plain": 2**63 + 9}}}]}
    base = tmp_path / "q"
    generate_archive(parse_fixture(doc), base)
    a = Archive(base)
    pmids = [int(d.pmid) for d in a.descs()]
    for rate in (False, True):
        samples = Replay(a, pmids).schedule(Timestamp(1_699_999_999), 3 * 10**9, 40)
        if rate:
            samples = list(rate_convert(samples, {p: a.desc(p) for p in pmids}))
        fast, slow = _both(a, samples, rate)
        assert fast == slow
        assert '"a,b"' in fast and '"say ""hi"""' in fast and "end of log" in fast


@pytest.mark.parametrize("kept", [8 << 20, 0], ids=["templates-kept", "templates-remade"])
def test_bulk_rows_keep_order_percent_signs_and_mixed_values(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            kept: int) -> None:
    """A metric's rows written as one format: instances given out of order are sorted, a
    ``%`` in a name is written as it is, and a sample with a no-value or a bool row is
    written row by row; all as csv.writer writes them, whether templates are kept or made
    again at every sample (as when churn passes the limit)."""
    monkeypatch.setattr(report, "_TEMPLATE_CHARS", kept)
    doc: dict[str, Any] = {
        "archive": {"version": 3, "hostname": "h", "timezone": "UTC"},
        "metrics": [{"name": "p.pct", "pmid": "245.0.1", "type": "double", "sem": "instant", "indom": "245.1"},
                    {"name": "p.f", "pmid": "245.0.2", "type": "float", "sem": "instant", "indom": "245.1"}],
        "indoms": [{"indom": "245.1", "instances": {"50%s": 1, "%d%%": 2, "plain": 3}}],
        "samples": [{"time": 1700000000, "values": {"p.pct": {"plain": 0.5, "50%s": 1.0, "%d%%": 2.0},
                                                     "p.f": {"plain": 1.5}}}]}
    base = tmp_path / "p"
    generate_archive(parse_fixture(doc), base)
    a = Archive(base)
    f32 = F32(0.1)
    when = Timestamp(1_700_000_000)
    samples = [Sample(when, values={int(PmID("245.0.1")): {3: 0.1, 1: 2, 2: 1e300},
                                    int(PmID("245.0.2")): {1: f32, 3: f32}}),
               Sample(Timestamp(1_700_000_001), values={int(PmID("245.0.1")): {3: 0.1, 1: 2, 2: 1e300}}),
               Sample(Timestamp(1_700_000_002), values={int(PmID("245.0.1")): {1: NoValue("mark"), 3: True}}),
               Sample(Timestamp(1_700_000_003), eol=True)]
    fast, slow = _both(a, samples)
    assert fast == slow
    assert ",50%s,2," in fast and ",%d%%,1e+300," in fast and ",plain,0.1," in fast
