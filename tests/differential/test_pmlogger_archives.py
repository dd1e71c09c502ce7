"""Real archives written by the host's pmlogger (6.0.3): rebuilt byte-exactly, dumped
losslessly, checked clean, and read with the values of every referee's libpcp."""

from __future__ import annotations

from pathlib import Path

import pytest

from pcpconform.dump.jsonl import dump_lines, jsonl_records
from pcpconform.io.archive import Archive
from pcpconform.io.rebuild import rebuild_archive
from tests.differential.libpcp import bridge
from tests.differential.libpcp.compare import assert_reader_matches_libpcp
from tests.differential.libpcp.referees import Referee

pytestmark = pytest.mark.libpcp

NAMES = ["v2", "v3", "v3-multivolume", "v2-derived"]


@pytest.fixture(scope="module")
def archives(pmlogger_archives: dict[str, Path]) -> dict[str, Path]:
    return pmlogger_archives


@pytest.mark.parametrize("name", NAMES)
def test_pmlogger_archive_rebuilds_byte_exactly(archives: dict[str, Path], tmp_path: Path, name: str) -> None:
    base = archives[name]
    rebuild_archive(base, tmp_path / "rb")
    originals = sorted(p.name[len(base.name):] for p in base.parent.glob(base.name + ".*")
                       if not p.name.endswith((".log", ".config")))
    assert originals and "meta" in "".join(originals)
    for suffix in originals:
        assert Path(f"{tmp_path}/rb{suffix}").read_bytes() == Path(f"{base}{suffix}").read_bytes(), suffix


@pytest.mark.parametrize("name", NAMES)
def test_pmlogger_archive_values_equal_libpcp(referee: Referee, archives: dict[str, Path], name: str) -> None:
    doc = assert_reader_matches_libpcp(referee, archives[name])
    assert len(doc["results"]) >= 3 and doc["metrics"] and doc["indoms"]


@pytest.mark.parametrize("name", NAMES)
def test_pmlogger_archive_passes_pmlogcheck(referee: Referee, archives: dict[str, Path], name: str) -> None:
    check = bridge.pmlogcheck(referee, archives[name])
    assert check.returncode == 0 and check.stdout.strip() == "", check.stdout + check.stderr


def test_pmlogger_archive_has_what_a_real_archive_has(archives: dict[str, Path]) -> None:
    a = Archive(archives["v3-multivolume"])
    assert len(a.files.volumes) >= 2
    kinds = {o["kind"] for o in jsonl_records(a)}
    assert {"desc", "indom", "text", "labelset", "index", "result"} <= kinds
    assert a.desc("kernel.all.load").indom.is_null is False


@pytest.mark.parametrize("name", NAMES)
def test_pmlogger_archive_dump_is_lossless_and_canonical(archives: dict[str, Path], tmp_path: Path, name: str) -> None:
    from pcpconform.dump.undump import undump

    base = archives[name]
    objs = list(jsonl_records(Archive(base)))
    # pmlogger writes every result in the canonical layout: no raw bytes needed
    assert not [o for o in objs if "raw" in o]
    undump(dump_lines(Archive(base)), tmp_path / "ud")
    for p in base.parent.glob(base.name + ".*"):
        if p.suffix not in (".log", ".config"):
            assert Path(f"{tmp_path}/ud{p.name[len(base.name):]}").read_bytes() == p.read_bytes()


@pytest.mark.parametrize("name", NAMES)
def test_pmlogger_archive_checks_clean(archives: dict[str, Path], name: str) -> None:
    from pcpconform import check_archive

    report = check_archive(archives[name])
    assert report.errors == 0, [d for d in report.diagnostics if d.severity.value == "error"]

