"""The writer suite's grading for writers like libpcp_import (spec/conformance.md, CONF-WRITE-2,
CONF-CAP-1's suite-qualified tags): what a fixture leaves to the writer, full and delta
instance-domain records as one content, and the libpcp adapters' unsupported writer tags,
which must skip every corpus fixture pmi cannot be asked to write and nothing else."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from pcpconform.conform.adapters.libpcp import WRITER_UNSUPPORTED
from pcpconform.conform.adapters.pmi_fixture import NO_PMI_TYPES, fixture_to_pmi
from pcpconform.conform.compare import WriterLatitude, compare_dump_content
from pcpconform.conform.manifest import Case, load_corpus
from pcpconform.conform.protocol import Capabilities
from pcpconform.conform.runner import select_units, skip_reason
from pcpconform.fixtures.fixture import load_fixture

ROOT = Path(__file__).resolve().parents[2]
CASES = {c.id: c for c in load_corpus(ROOT / "corpus")}


def _caps(*unsupported: str) -> Capabilities:
    return Capabilities("x", "1", ("validator", "reader", "writer"), (2, 3), unsupported=unsupported)


def test_a_suite_qualified_tag_skips_that_suite_alone() -> None:
    case = CASES["events-v3"]
    units = {u.suite: u for u in select_units([case], ["validator", "reader", "writer"])}
    only_writer = _caps("writer/events")
    assert skip_reason(units["writer"], None, only_writer) == "the implementation does not handle events"
    assert skip_reason(units["validator"], None, only_writer) is None
    assert skip_reason(units["reader"], None, only_writer) is None
    everywhere = _caps("events")
    assert all(skip_reason(u, None, everywhere) is not None for u in units.values())
    assert skip_reason(units["writer"], None, _caps("reader/events")) is None


def _pmi_cannot_write(case: Case) -> bool:
    """Whether the case's fixture asks for what pmi has no call for, read from the fixture
    itself (not from the tags): such a type, a volume switch, or a record form."""
    fixture = load_fixture(case.path / str(case.data["fixture"]))
    if fixture.indom_records != "full" or any(m.type in NO_PMI_TYPES for m in fixture.metrics):
        return True
    try:
        fixture_to_pmi(fixture)
    except ValueError:          # a volume switch on request
        return True
    return False


def _skipped(tags: tuple[str, ...]) -> set[str]:
    caps = _caps(*(f"writer/{t}" for t in tags))
    return {u.case.id for u in select_units(list(CASES.values()), ["writer"]) if skip_reason(u, None, caps)}


def test_libpcp_writer_skips_exactly_what_pmi_cannot_write() -> None:
    writers = [u.case for u in select_units(list(CASES.values()), ["writer"])]
    cannot = {c.id for c in writers if _pmi_cannot_write(c)}
    assert cannot and len(cannot) < len(writers)
    assert _skipped(WRITER_UNSUPPORTED) == cannot
    # each kind is needed: without it, a fixture pmi cannot write would be run (and could pass);
    # the corpus's aggregates come with events, so the aggregate tags are not tested alone
    for kind in ({"events", "highres-events", "type:event", "type:highres-event"}, {"multi-volume"},
                 {"delta-indom"}):
        assert _skipped(tuple(t for t in WRITER_UNSUPPORTED if t not in kind)) < cannot, kind


def test_latitude_is_what_the_fixture_does_not_give(tmp_path: Path) -> None:
    example = WriterLatitude.of_fixture(ROOT / "corpus/fixtures/example.yaml")
    assert example == WriterLatitude(frozenset({"zoneinfo"}), True)     # it gives pid, hostname, timezone
    volumes = WriterLatitude.of_fixture(ROOT / "corpus/fixtures/multi-volume.yaml")
    assert volumes == WriterLatitude(frozenset({"pid"}), True)
    assert not WriterLatitude.of_fixture(ROOT / "corpus/fixtures/delta-indom.yaml").indom_form
    bare = tmp_path / "bare.yaml"
    bare.write_text("metrics: []\n", encoding="utf-8")
    assert WriterLatitude.of_fixture(bare).label == {"pid", "hostname", "timezone", "zoneinfo"}
    for text in ("[1, 2]\n", "{: bad\n"):
        bare.write_text(text, encoding="utf-8")
        assert WriterLatitude.of_fixture(bare) == WriterLatitude()
    assert WriterLatitude.of_fixture(tmp_path / "missing.yaml") == WriterLatitude()


def _indom(delta: bool, sec: int, *insts: tuple[int, str | None]) -> dict[str, Any]:
    return {"kind": "indom", "file": "meta", "record": 1, "offset": 8, "tag": 6 if delta else 5, "delta": delta,
            "timestamp": {"sec": sec, "nsec": 0}, "indom": "60.1",
            "instances": [{"inst": i, "name": n} for i, n in insts]}


LABEL = {"kind": "label", "file": "meta", "record": 0, "offset": 0, "pid": 1, "hostname": "h", "zoneinfo": ""}
FULL = [LABEL, _indom(False, 1, (0, "a"), (1, "b")), _indom(False, 2, (0, "a"), (1, "b"), (2, "c")),
        _indom(False, 3, (0, "a"), (2, "c"))]
DELTA = [LABEL, _indom(False, 1, (0, "a"), (1, "b")), _indom(True, 2, (2, "c")), _indom(True, 3, (1, None))]


def test_full_and_delta_records_of_one_domain_are_one_content() -> None:
    free = WriterLatitude(indom_form=True)
    assert compare_dump_content(FULL, DELTA, free) is None
    strict = compare_dump_content(FULL, DELTA)
    assert strict is not None and strict.clauses == ["GEN-INDOM"]
    # what the records leave in force is still graded
    wrong = copy.deepcopy(DELTA)
    wrong[3]["instances"] = [{"inst": 0, "name": None}]
    diff = compare_dump_content(FULL, wrong, free)
    assert diff is not None and diff.path.startswith("/instances") and diff.clauses == ["GEN-INDOM"]


@pytest.mark.parametrize("member,value", [("pid", 4242), ("hostname", "elsewhere"), ("zoneinfo", ":Etc/UTC")])
def test_a_label_member_is_the_writers_only_where_the_fixture_leaves_it(member: str, value: Any) -> None:
    got = [dict(LABEL, **{member: value})]
    assert compare_dump_content([LABEL], got, WriterLatitude(frozenset({member}))) is None
    diff = compare_dump_content([LABEL], got, WriterLatitude(frozenset({"pid", "hostname", "zoneinfo"} - {member})))
    assert diff is not None and diff.path == f"/{member}" and diff.clauses == ["GEN-LABEL"]
