"""check on archive sets: the rules across members (spec/sets.md, spec/validator.md), the
set cases of the corpus, --set and directories of one host's archives."""

from __future__ import annotations

import json
import lzma
import shutil
from pathlib import Path

import pytest

from pcpconform.check.inputs import expand
from pcpconform.check.rules import Severity
from pcpconform.check.sets import check_set
from pcpconform.cli import main
from pcpconform.corpusgen.invalid.sets import SET_CASES, SetCase, build_set_case
from tests.setmembers import T, member


@pytest.mark.parametrize("case", SET_CASES, ids=[c.name for c in SET_CASES])
def test_set_cases_report_their_codes(tmp_path: Path, case: SetCase) -> None:
    report = check_set(build_set_case(case, tmp_path / case.name))
    errors = {d.code for d in report.diagnostics if d.severity == Severity.ERROR}
    others = {d.code for d in report.diagnostics if d.severity != Severity.ERROR}
    assert errors == set(case.errors) and set(case.warnings) <= others
    for d in report.diagnostics:        # located: a member file, and where known its record
        assert d.file and "Traceback" not in d.message


def test_name_bound_to_two_pmids_and_zst_member(tmp_path: Path) -> None:
    member(tmp_path / "m1", T)
    member(tmp_path / "m2", T + 100)
    meta = tmp_path / "m2.meta"
    data = bytearray(meta.read_bytes())
    at = data.index(b"t.instant")
    data[at:at + 9] = b"t.counter"      # t.counter now names 60.0.2 in m2 (60.0.1 in m1)
    meta.write_bytes(bytes(data))
    codes = {d.code for d in check_set(tmp_path).diagnostics}
    assert "set.name-pmid" in codes
    member(tmp_path / "z" / "m1", T)
    member(tmp_path / "z" / "m2", T + 100)
    for f in (tmp_path / "z").glob("m2.*"):
        f.with_name(f.name + ".zst").write_bytes(f.read_bytes())   # not zstd: only the name counts
        f.unlink()
    assert "set.zst-member" in {d.code for d in check_set(tmp_path / "z").diagnostics}


def test_check_set_cli_checks_members_then_the_set(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    case = next(c for c in SET_CASES if c.name == "set-overlap")
    build_set_case(case, tmp_path / "host")
    assert main(["check", "--set", "-q", "--format", "json", str(tmp_path / "host")]) == 1
    reports = json.loads(capsys.readouterr().out)["archives"]
    names = [r["archive"] for r in reports]
    assert names[-1] == str(tmp_path / "host") and len(names) == 4
    assert {d["code"] for d in reports[-1]["diagnostics"]} == {"set.overlap", "set.hidden"}
    assert main(["check", "--set", str(tmp_path / "nothing")]) == 2


def test_directory_of_one_hosts_archives_is_a_set_by_default(tmp_path: Path) -> None:
    member(tmp_path / "host" / "20260101", T)
    member(tmp_path / "host" / "20260102", T + 100)
    member(tmp_path / "other" / "a", T)
    member(tmp_path / "other" / "b", T + 100, host="h2")       # two hosts: ambiguous
    found = expand([str(tmp_path)])
    assert found.sets == [tmp_path / "host"]
    assert found.targets[-1] == tmp_path / "host"
    # copies of one archive (one start time) are no series: no set
    shutil.copytree(tmp_path / "host", tmp_path / "copies")
    for f in (tmp_path / "copies").glob("20260102.*"):
        f.unlink()
    for f in (tmp_path / "copies").glob("20260101.*"):
        shutil.copy(f, f.with_name(f.name.replace("20260101", "20260109")))
    assert expand([str(tmp_path / "copies")]).sets == []


def test_a_compressed_member_is_a_member(tmp_path: Path) -> None:
    member(tmp_path / "m1", T)
    member(tmp_path / "m2", T + 100)
    vol = tmp_path / "m2.0"
    vol.with_name("m2.0.xz").write_bytes(lzma.compress(vol.read_bytes()))
    vol.unlink()
    assert check_set(tmp_path).diagnostics == []


def test_dump_of_a_set_marks_members_and_seams(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    case = next(c for c in SET_CASES if c.name == "set-touch")
    build_set_case(case, tmp_path / "s")
    assert main(["dump", "--format", "jsonl", str(tmp_path / "s")]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    kinds = [obj["kind"] for obj in lines if obj["kind"] in ("set", "member", "seam")]
    assert kinds == ["set", "member", "seam", "member", "seam", "member"]
    seam = next(obj for obj in lines if obj["kind"] == "seam")
    assert len(seam["hidden_forward"]) == 1 and seam["overlap"] is False
    end = seam["end"]["sec"] * 10**9 + seam["end"]["nsec"]
    assert divmod(end + 1_000_000, 10**9) == (seam["forward_mark"]["sec"], seam["forward_mark"]["nsec"])
    assert main(["dump", str(tmp_path / "s")]) == 0
    text = capsys.readouterr().out
    assert text.count("== member") == 3 and "never delivered reading forwards" in text


def test_a_set_with_no_member(tmp_path: Path) -> None:
    (tmp_path / "none").mkdir()
    report = check_set(tmp_path / "none")
    assert [d.code for d in report.diagnostics] == ["set.empty"]
