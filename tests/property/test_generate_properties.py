"""Properties of generated archives, with no reference implementation needed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pcpconform.dump.jsonl import dump_lines
from pcpconform.dump.undump import undump
from pcpconform.extra.strategies import fixtures
from pcpconform.fixtures.fixture import Fixture
from pcpconform.fixtures.generate import generate_archive, mark_time
from pcpconform.format.pmtypes import PmType, Timestamp
from pcpconform.format.schema import structs
from pcpconform.io.archive import Archive
from pcpconform.io.bulk import decode_result_schema
from pcpconform.io.rebuild import rebuild_archive
from pcpconform.io.writer import ValueSetSpec, layout_result

SETTINGS = settings(max_examples=60, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


def expected_results(fixture: Fixture) -> list[tuple[Timestamp, dict[int, list[Any]]]]:
    out: list[tuple[Timestamp, dict[int, list[Any]]]] = []
    last = None
    for s in fixture.samples:
        if s.kind == "mark" and last is not None:
            out.append((s.time or mark_time(last, fixture.version), {}))
        elif s.kind == "values":
            assert s.time is not None          # the strategy times every values sample
            last = s.time
            out.append((s.time, {int(m.pmid): sorted(vals, key=lambda iv: iv[0]) for m, vals in s.values}))
    return out


def same_value(a: Any, b: Any, ptype: int) -> bool:
    if ptype == PmType.STRING:
        return bool(a == b + b"\0")
    if isinstance(a, float):
        return repr(a) == repr(b) or a == b
    return bool(a == b)


def all_files(base: Path) -> dict[str, bytes]:
    return {p.name[len(base.name):]: p.read_bytes() for p in base.parent.glob(base.name + ".*")}


@SETTINGS
@given(data=st.data())
def test_generated_archives_read_back_rebuild_and_decode_alike(tmp_path_factory: pytest.TempPathFactory,
                                                               data: st.DataObject) -> None:
    fixture = data.draw(fixtures(pmi_compatible=False), label="fixture")
    tmp = tmp_path_factory.mktemp("prop")
    base = tmp / "gen"
    generate_archive(fixture, base)

    archive = Archive(base)
    types = {pmid: d.type for pmid, d in archive.metadata.descs.items()}
    results = list(archive.results())
    expected = expected_results(fixture)
    assert len(results) == len(expected)
    for got, (stamp, values) in zip(results, expected):
        assert got.timestamp == stamp
        assert {vs.pmid for vs in got.vsets} == set(values)
        for vs in got.vsets:
            want = values[vs.pmid]
            assert [i for i, _ in vs.values] == [i for i, _ in want]
            assert all(same_value(a, b, types[vs.pmid]) for (_, a), (_, b) in zip(vs.values, want))
        # the bulk decoder and the schema decoder agree on every record
        assert got.record is not None
        assert decode_result_schema(got.record, archive.version, types) == got

        if got.canonical:
            specs = [ValueSetSpec(vs.pmid, types[vs.pmid], vs.values, vs.numval) for vs in got.vsets]
            built = structs(archive.version).result_record.build(
                layout_result(archive.version, got.timestamp, specs))
            assert built == got.record.data

    rebuild_archive(base, tmp / "again")
    assert all_files(tmp / "again") == all_files(base)

    # the JSON Lines dump is lossless: undumping it gives the same files
    lines = list(dump_lines(archive))
    undump(lines, tmp / "undumped" / "gen")
    assert all_files(tmp / "undumped" / "gen") == all_files(base)
