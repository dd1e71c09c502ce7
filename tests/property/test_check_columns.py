"""Result columns (check/columns.py) = the reference path, on random mutants: the same full
report, diagnostic for diagnostic and in the same order, whatever the fuzz engine breaks."""

from __future__ import annotations

import random
import struct
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pcpconform.check.engine import check_archive
from pcpconform.fixtures.fixture import load_fixture
from pcpconform.fixtures.generate import generate_archive
from pcpconform.fuzz.archive_edit import read_archive
from pcpconform.fuzz.mutators import mutate_archive
from tests.bench_modules import bench_module

ROOT = Path(__file__).resolve().parents[2]
Files = dict[str, bytes]


class Seeds(dict[str, Files]):
    """Seed archives by name (a short repr: hypothesis prints its arguments)."""

    def __repr__(self) -> str:
        return f"Seeds({sorted(self)})"


def _bench(base: Path, version: int) -> None:
    bench_decode = bench_module("bench_decode")
    bench_decode.generate(base, version, 0.12, 1)


@pytest.fixture(scope="module")
def seeds(tmp_path_factory: pytest.TempPathFactory) -> Seeds:
    out = Seeds()
    for version in (2, 3):
        base = tmp_path_factory.mktemp(f"bench{version}") / "a"
        _bench(base, version)
        out[f"bench-v{version}"] = read_archive(base)
        for name in ("example", "events"):
            base = tmp_path_factory.mktemp(f"{name}{version}") / "a"
            generate_archive(load_fixture(ROOT / "corpus" / "fixtures" / f"{name}.yaml"), base,
                             version=version)
            out[f"{name}-v{version}"] = read_archive(base)
    out["lifetimes-v3"] = read_archive(ROOT / "corpus" / "cases" / "valid" / "lifetimes-v3" / "a")
    return out


def _values(files: Files, rng: random.Random) -> Files:
    """Overwrite a few words of the data volume (times, instances, values, block heads)."""
    vol = bytearray(files["0"])
    for _ in range(rng.randrange(1, 4)):
        at = rng.randrange(132, max(133, len(vol) - 4)) & ~3
        less = (struct.unpack_from(">I", vol, at)[0] - 1) & 0xFFFFFFFF     # a counter going back
        struct.pack_into(">I", vol, at, rng.choice([0, 1, 0xFFFFFFFF, 0x7FFFFFFF, rng.getrandbits(32), less]))
    return {**files, "0": bytes(vol)}


def _report(base: Path, columns: bool) -> dict[str, object]:
    report = check_archive(base, columns=columns).to_json()
    report.pop("seconds")
    return report


@settings(max_examples=120, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_columns_report_what_the_reference_path_reports(
        seeds: Seeds, tmp_path_factory: pytest.TempPathFactory, data: st.DataObject) -> None:
    name = data.draw(st.sampled_from(sorted(seeds)))
    rng = random.Random(data.draw(st.integers(0, 2**32 - 1)))
    files = seeds[name]
    if data.draw(st.booleans()):
        files = _values(files, rng)
    else:
        files, _notes = mutate_archive(files, rng, [seeds["example-v3"]])
    dest = tmp_path_factory.mktemp("mutant")
    for part, raw in files.items():
        (dest / f"a.{part}").write_bytes(raw)
    assert _report(dest / "a", True) == _report(dest / "a", False), name
