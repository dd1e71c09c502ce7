"""Salvage, one decision at a time (spec/salvage.md), and its command."""

from __future__ import annotations

import json
import lzma
import shutil
import struct
from pathlib import Path

import pytest

from pcpconform.cli import main
from pcpconform.errors import UsageError
from pcpconform.fixtures import bundled_fixture
from pcpconform.fixtures.fixture import load_fixture
from pcpconform.fixtures.generate import generate_archive
from pcpconform.salvage import salvage_archive
from pcpconform.salvage.measure import archive_values, invented_values
from pcpconform.salvage.salvage import Provenance

LABEL = {2: 132, 3: 808}


@pytest.fixture(params=[2, 3])
def archive(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    base = tmp_path / "in" / "a"
    base.parent.mkdir()
    generate_archive(load_fixture(bundled_fixture("example")), base, version=request.param)
    return base


def _records(data: bytes, start: int) -> list[tuple[int, int]]:
    out, pos = [], start
    while pos + 4 <= len(data):
        length = struct.unpack_from(">I", data, pos)[0]
        out.append((pos, length))
        pos += length
    return out


def _version(base: Path) -> int:
    return base.with_suffix(".meta").read_bytes()[7]


def _salvage(base: Path, out: Path) -> tuple[object, list[Provenance]]:
    provenance: list[Provenance] = []
    report = salvage_archive(base, out, provenance=provenance)
    assert report.failure is None and report.out_errors == 0, (report.failure, report.out_codes)
    assert invented_values(base, out, provenance) == []
    return report, provenance


def test_garbage_mid_volume_is_skipped_to_the_next_proven_record(archive: Path, tmp_path: Path) -> None:
    """SALVAGE-FRAME-2: 7 bytes inserted after the second result (no longer aligned)."""
    vol = archive.with_suffix(".0")
    data = vol.read_bytes()
    recs = _records(data, LABEL[_version(archive)])
    at = recs[1][0] + recs[1][1]
    vol.write_bytes(data[:at] + b"\x00\x00\x01\x7f\xff\xee\x03" + data[at:])
    report, _ = _salvage(archive, tmp_path / "out")
    gap = next(i for i in report.items if i.code == "frame.length" or i.code == "frame.truncated"
               or i.code == "frame.trailer")
    assert (gap.start, gap.end) == (at, at + 7) and gap.clause == "SALVAGE-FRAME-2"
    assert report.values_lost == 0 and report.records_out == len(recs)


def test_a_damaged_length_loses_one_record(archive: Path, tmp_path: Path) -> None:
    vol = archive.with_suffix(".0")
    data = bytearray(vol.read_bytes())
    recs = _records(bytes(data), LABEL[_version(archive)])
    pos, length = recs[2]
    struct.pack_into(">I", data, pos, length + 40)
    vol.write_bytes(bytes(data))
    report, _ = _salvage(archive, tmp_path / "out")
    assert report.records_out == len(recs) - 1
    assert sum(i.end - i.start for i in report.items if i.code.startswith("frame.")) == length


def test_a_cut_compressed_volume_keeps_what_decompresses(archive: Path, tmp_path: Path) -> None:
    """SALVAGE-FILE-4."""
    vol = archive.with_suffix(".0")
    packed = lzma.compress(vol.read_bytes(), format=lzma.FORMAT_XZ)
    vol.unlink()
    archive.with_name("a.0.xz").write_bytes(packed[:len(packed) * 3 // 4])
    report, _ = _salvage(archive, tmp_path / "out")
    assert any(i.code == "file.read" and i.clause == "SALVAGE-FILE-4" for i in report.items)
    assert report.exit_status == 1 and report.records_out >= 1


def test_results_out_of_order_are_put_in_order(archive: Path, tmp_path: Path) -> None:
    """SALVAGE-ORDER-1: two results swapped."""
    vol = archive.with_suffix(".0")
    data = vol.read_bytes()
    recs = _records(data, LABEL[_version(archive)])
    (a, la), (b, lb) = recs[1], recs[2]
    vol.write_bytes(data[:a] + data[b:b + lb] + data[a:a + la] + data[b + lb:])
    report, _ = _salvage(archive, tmp_path / "out")
    assert [i.action for i in report.items if i.code == "result.time-order"] == ["reordered"]
    assert report.exit_status == 0
    original = tmp_path / "orig" / "a"
    original.parent.mkdir()
    generate_archive(load_fixture(bundled_fixture("example")), original, version=_version(archive))
    assert archive_values(tmp_path / "out") == archive_values(original)


def test_a_damaged_label_is_repaired_from_the_others(archive: Path, tmp_path: Path) -> None:
    """SALVAGE-LABEL-1: the volume's magic and pid damaged."""
    vol = archive.with_suffix(".0")
    data = bytearray(vol.read_bytes())
    data[4:12] = b"\xde\xad\xbe\xef\x00\x00\x00\x09"
    vol.write_bytes(bytes(data))
    report, _ = _salvage(archive, tmp_path / "out")
    assert [(i.code, i.action) for i in report.items] == [("label.magic", "repaired")]
    assert report.exit_status == 0
    assert (tmp_path / "out.0").read_bytes()[LABEL[_version(archive)]:] == bytes(data[LABEL[_version(archive)]:])


def test_a_missing_index_is_rebuilt(archive: Path, tmp_path: Path) -> None:
    index = archive.with_suffix(".index")
    before = index.read_bytes()
    index.unlink()
    report, _ = _salvage(archive, tmp_path / "out")
    assert [(i.code, i.action) for i in report.items] == [("file.missing-index", "rebuilt")]
    assert (tmp_path / "out.index").read_bytes() == before   # as libpcp_import wrote it


def test_the_input_is_never_overwritten(archive: Path) -> None:
    with pytest.raises(UsageError, match="never touches its input"):
        salvage_archive(archive, archive)
    with pytest.raises(UsageError, match="never touches its input"):
        salvage_archive(archive.with_suffix(".0"), archive.parent / "a")


def test_an_existing_output_needs_force(archive: Path, tmp_path: Path) -> None:
    salvage_archive(archive, tmp_path / "out")
    with pytest.raises(UsageError, match="--force"):
        salvage_archive(archive, tmp_path / "out")
    assert salvage_archive(archive, tmp_path / "out", force=True).exit_status == 0


def test_nothing_is_left_under_the_output_name_when_nothing_can_be_made(archive: Path, tmp_path: Path) -> None:
    archive.with_suffix(".meta").unlink()
    report = salvage_archive(archive, tmp_path / "out")
    assert report.failure and report.exit_status == 2
    assert not list(tmp_path.glob("out*")) and not list(tmp_path.glob(".out*"))


def test_the_command_reports_in_json_and_text(archive: Path, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    data = archive.with_suffix(".0").read_bytes()
    archive.with_suffix(".0").write_bytes(data[:-10])
    assert main(["salvage", str(archive), str(tmp_path / "out"), "--format", "json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["exit"] == 1 and doc["lost"] and doc["check"]["errors"] == 0
    assert doc["summary"]["bytes_lost"] > 0
    item = doc["items"][0]
    assert {"code", "action", "clause", "file", "bytes", "time", "records", "values"} <= set(item)
    assert main(["salvage", str(archive), str(tmp_path / "out2")]) == 1
    text = capsys.readouterr().out
    assert "frame.truncated" in text and "exit 1: something was lost" in text
    assert main(["salvage", str(tmp_path / "nothing"), str(tmp_path / "out3")]) == 2


def test_a_valid_archive_is_copied_byte_for_byte(archive: Path, tmp_path: Path) -> None:
    _salvage(archive, tmp_path / "out")
    for part in ("meta", "0", "index"):
        assert (tmp_path / f"out.{part}").read_bytes() == archive.with_suffix(f".{part}").read_bytes(), part
    shutil.rmtree(tmp_path / "in")


@pytest.mark.parametrize("base", ["corpus/cases/valid/types-v2/a", "corpus/cases/valid/events-v3/a",
                                  "corpus/cases/valid/pmlogger-v3/a"])
def test_results_written_again_take_the_bulk_encoder_and_match_the_schema(base: str) -> None:
    """SALVAGE-RESULT-3: every result walked and written again is what the schema builds,
    and the bulk encoder builds it (no silent fallback)."""
    from pcpconform.fastpath import PathStats
    from pcpconform.io.archive import Archive
    from pcpconform.salvage import results

    root = Path(__file__).resolve().parents[2]
    a = Archive(root / base)
    types = {int(d.pmid): d.type for d in a.descs()}
    stats = PathStats()
    walked = 0
    for _, rec in a.volume_records():
        out = results.walk_result(rec.data, a.version, results.Described(types), stats)
        assert out is not None and out.record == rec.data   # libpcp wrote it: written again, the same bytes
        walked += out.values_out > 0
    assert walked and stats.answered["bulk.encode"] == walked
    assert not stats.reasons("bulk.encode")


def test_a_canonical_result_is_kept_as_it_is_and_counted(tmp_path: Path) -> None:
    """``salvage.result``: every result of a valid archive is kept by the fast path (a mark
    alone is walked), each counted once."""
    from pcpconform.salvage.results import KeepReason

    report = salvage_archive(Path(__file__).resolve().parents[2] / "corpus/cases/valid/pmlogger-v3/a",
                             tmp_path / "out")
    kept, declined = report.paths.answered["salvage.result"], report.paths.reasons("salvage.result")
    assert kept > 0 and set(declined) <= {KeepReason.MARK}
    assert kept + sum(declined.values()) == report.records_out


def test_a_label_is_the_version_its_length_words_say_when_its_magic_disagrees(tmp_path: Path) -> None:
    """SALVAGE-LABEL-1: .meta's and .index's magic say version 2, every length word 808."""
    base = tmp_path / "in" / "a"
    base.parent.mkdir()
    generate_archive(load_fixture(bundled_fixture("example")), base, version=3)
    for part in ("meta", "index"):
        path = base.with_suffix(f".{part}")
        data = bytearray(path.read_bytes())
        data[7] = 2
        path.write_bytes(bytes(data))
    report, _ = _salvage(base, tmp_path / "out")
    assert report.version == 3 and report.exit_status == 0 and report.records_out == 6


def test_a_result_far_in_the_future_is_kept_in_order(tmp_path: Path) -> None:
    """A time past what 64-bit nanoseconds hold (version 3 seconds can say it) is a time all
    the same: every libpcp reads it."""
    archive = tmp_path / "in" / "a"
    archive.parent.mkdir()
    generate_archive(load_fixture(bundled_fixture("example")), archive, version=3)
    vol = archive.with_suffix(".0")
    data = bytearray(vol.read_bytes())
    pos, _ = _records(bytes(data), 808)[1]
    struct.pack_into(">I", data, pos + 8, 1000)          # the high word of its seconds
    vol.write_bytes(bytes(data))
    report, provenance = _salvage(archive, tmp_path / "out")
    assert report.records_out == 6 and report.values_lost == 0
    assert provenance[-1].in_offset == pos              # the latest, so the last
