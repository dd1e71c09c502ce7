"""Differential: a fixture written by libpcp_import (pmi) and by ``generate`` is the same bytes."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from pcpconform.archive import Archive
from pcpconform.fixture import load_fixture
from pcpconform.generate import generate_archive
from tests.conftest import needs_libpcp
from tests.libpcp import bridge
from tests.libpcp.convert import fixture_to_pmi

ROOT = Path(__file__).resolve().parent.parent
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
