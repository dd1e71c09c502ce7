"""Differential: a fixture written by libpcp_import (pmi) and by ``generate`` is the same bytes."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from pcpconform.fixtures.fixture import load_fixture
from pcpconform.fixtures.generate import generate_archive
from pcpconform.io.archive import Archive
from tests.conftest import needs_libpcp
from tests.differential.libpcp import bridge
from tests.differential.libpcp.convert import fixture_to_pmi

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "corpus" / "fixtures" / "example.yaml"

pytestmark = [pytest.mark.libpcp, needs_libpcp]


def assert_same_archive(ours: Path, theirs: Path) -> None:
    for suffix in ("meta", "index", "0"):
        a = Path(f"{ours}.{suffix}").read_bytes()
        b = Path(f"{theirs}.{suffix}").read_bytes()
        if a != b:
            at = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
            raise AssertionError(f".{suffix} differs at byte {at} (ours {len(a)} bytes, "
                                 f"libpcp {len(b)} bytes): ours {a[at:at+16].hex()} libpcp {b[at:at+16].hex()}")


def write_both(fixture, tmp_path: Path, version: int, env=None) -> tuple[Path, Path]:
    theirs = tmp_path / f"pmi-v{version}"
    bridge.pmi_write(fixture_to_pmi(fixture, version), theirs, env=env)
    pid = Archive(theirs).label.pid
    ours = tmp_path / f"gen-v{version}"
    generate_archive(dataclasses.replace(fixture, pid=pid), ours, version=version)
    return ours, theirs


@pytest.mark.parametrize("version", [2, 3])
def test_example_fixture_is_byte_identical_to_pmi(tmp_path: Path, version: int) -> None:
    ours, theirs = write_both(load_fixture(EXAMPLE), tmp_path, version)
    assert_same_archive(ours, theirs)


from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pcpconform.check.engine import check_archive
from pcpconform.extra.strategies import fixtures
from pcpconform.io.rebuild import rebuild_archive
from tests.differential.libpcp.compare import assert_reader_matches_libpcp


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                   HealthCheck.too_slow])
@given(data=st.data())
def test_random_fixtures_match_pmi_bytes_and_values(tmp_path_factory, data) -> None:
    version = data.draw(st.sampled_from([2, 3]), label="version")
    fixture = data.draw(fixtures(version=version), label="fixture")
    tmp = tmp_path_factory.mktemp("gen")
    ours, theirs = write_both(fixture, tmp, version)
    assert_same_archive(ours, theirs)
    # the reader gets from libpcp's own archive exactly what libpcp reads from it
    assert_reader_matches_libpcp(theirs)
    # and the validator finds no error in what libpcp wrote (random content may earn
    # warnings: counters that go down, help text for an indom no metric uses)
    report = check_archive(theirs)
    assert report.errors == 0, report.diagnostics
    assert report.codes() <= {"value.counter-decrease", "text.undescribed", "indom.undescribed"}
    # and the archive rebuilds to the same bytes
    rebuild_archive(theirs, tmp / "rebuilt")
    assert_same_archive(tmp / "rebuilt", theirs)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                   HealthCheck.too_slow])
@given(data=st.data())
def test_generated_archives_beyond_pmi_are_read_alike_by_libpcp(tmp_path_factory, data) -> None:
    """Delta indoms, requested volume switches, NaN: libpcp reads what the fixture says."""
    fixture = data.draw(fixtures(pmi_compatible=False), label="fixture")
    base = tmp_path_factory.mktemp("beyond") / "gen"
    generate_archive(fixture, base)
    assert_reader_matches_libpcp(base)
    check = bridge.pmlogcheck(base)
    assert check.returncode == 0 and check.stdout.strip() == "", check.stdout + check.stderr
    assert check_archive(base).errors == 0


@pytest.mark.parametrize("version", [2, 3])
def test_example_passes_pmlogcheck_and_pmdumplog(tmp_path: Path, version: int) -> None:
    base = tmp_path / "ex"
    generate_archive(load_fixture(EXAMPLE), base, version=version)
    check = bridge.pmlogcheck(base)
    assert check.returncode == 0 and check.stdout.strip() == "", check.stdout
    dump = bridge.pmdumplog(base, "-a")
    assert dump.returncode == 0
    assert "disk.dev.read_bytes" in dump.stdout and "<mark>" in dump.stdout
    assert_reader_matches_libpcp(base)
