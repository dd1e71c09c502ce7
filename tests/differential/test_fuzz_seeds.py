"""The fuzzer's seeds are valid archives, extreme ones included: the kit's validator finds
nothing and every referee's pmlogcheck and pmdumplog read them, so what the campaign finds
comes from its mutations, not from its starting points."""

from __future__ import annotations

from pathlib import Path

from pcpconform.check.engine import check_archive
from pcpconform.fixtures.fixture import parse_fixture
from pcpconform.fixtures.generate import generate_archive
from pcpconform.fuzz.seeds import archive_seeds, extreme_fixtures
from tests.differential.libpcp.referees import Referee


def test_extreme_seeds_are_among_the_seeds() -> None:
    names = [name for name, _ in archive_seeds()]
    assert set(extreme_fixtures()) <= set(names)
    assert names[0] == "example-v2"      # the config campaigns replay against this one


def test_extreme_seeds_are_valid_for_every_libpcp(referee: Referee, tmp_path: Path) -> None:
    for name, doc in extreme_fixtures().items():
        base = tmp_path / name / "a"
        base.parent.mkdir()
        generate_archive(parse_fixture(doc, source=name), base)
        report = check_archive(base)
        assert not report.diagnostics, (name, [d.code for d in report.diagnostics])
        for tool in (["pmlogcheck"], ["pmdumplog", "-a"]):
            proc = referee.on_archive([*tool, base], base)
            assert proc.returncode == 0, (name, tool, proc.stdout[-500:], proc.stderr[-500:])


def test_mmv_seeds_cover_every_version(tmp_path: Path) -> None:
    from pcpconform.check.mmv import check_mmv_file
    from pcpconform.fuzz.seeds import mmv_seeds

    seeds = dict(mmv_seeds())
    assert sorted(seeds) == ["mmv-example-v1", "mmv-example-v2", "mmv-example-v3"]
    for name, data in seeds.items():
        assert int.from_bytes(data[4:8], "little") == int(name[-1])
        path = tmp_path / f"seed{name[-1]}"     # the file name becomes part of metric names
        path.write_bytes(data)
        assert check_mmv_file(path).errors == 0, name
