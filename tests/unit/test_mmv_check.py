"""The MMV validator: clean files written by the kit's writer draw no diagnostic, each fault of
the MMV corpus draws exactly its error codes, damaged and random bytes never raise, and the
rules across the files of a directory follow the PMDA's cluster choice."""

from __future__ import annotations

import hashlib
import json
import os
import random
import struct
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pcpconform.check.mmv import check_mmv_directory, check_mmv_file, is_mmv_file
from pcpconform.check.mmv.directory import choose_cluster
from pcpconform.check.mmv.rules import MMV_TABLE
from pcpconform.check.rules import RULES, Severity
from pcpconform.corpusgen.mmv_faults import (
    FAULTS,
    GENERATION,
    UNCOVERED,
    Layout,
    base_file,
    build_mmv_cases,
    case_files,
)
from pcpconform.errors import UsageError
from pcpconform.extra.mmv_strategies import all_leaves
from pcpconform.mmv import Indom, Instance, Label, Metric, MmvFile, Value, build_mmv
from pcpconform.mmv.model import (
    LABEL_CLUSTER,
    LABEL_INDOM,
    LABEL_INSTANCES,
    LABEL_ITEM,
    TYPE_STRING,
)
from pcpconform.mmv.writer import select_version

SETTINGS = settings(max_examples=60, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
ERRORS = {code for code, sev, _c, _s in MMV_TABLE if sev == "error"}
#: error codes no one-file case can carry
HEADER = 40
NEEDS_MORE = {"mmv.read": "an unreadable file is no file to ship",
              "mmv.cluster-collision": "needs two files in one directory",
              "mmv.watch-torn": "needs a live writer", "mmv.watch-counter-regress": "needs a live writer"}


def write(tmp: Path, data: bytes, name: str = "f.mmv") -> Path:
    path = tmp / name
    path.write_bytes(data)
    return path


def errors_of(report: Any) -> set[str]:
    return {d.code for d in report.diagnostics if d.severity == Severity.ERROR}


# -- clean files -----------------------------------------------------------------------------
@pytest.mark.parametrize("version", [1, 2, 3])
def test_base_files_are_clean(tmp_path: Path, version: int) -> None:
    report = check_mmv_file(write(tmp_path, base_file(version)))
    assert report.diagnostics == []
    assert report.bytes_checked == len(base_file(version))


name_part = st.from_regex(r"[a-z][a-z0-9_]{0,6}", fullmatch=True)
inst_name = st.from_regex(r"[A-Za-z][A-Za-z0-9 ]{0,8}", fullmatch=True)
units = st.sampled_from([0, 0x10000000, 0x01001000, 0x00100000, 0x10030000])


@st.composite
def clean_files(draw: Any) -> MmvFile:
    """Content the validator must accept silently: what a careful writer produces."""
    serials = draw(st.lists(st.integers(1, 2047), max_size=3, unique=True))
    indoms = []
    for serial in serials:
        ids = draw(st.lists(st.integers(0, 2**31 - 1), min_size=1, max_size=3, unique=True))
        names = draw(st.lists(inst_name | st.just("i" * 70), min_size=len(ids), max_size=len(ids),
                              unique=True))
        indoms.append(Indom(serial, tuple(Instance(i, n) for i, n in zip(ids, names)),
                            draw(st.none() | st.just("short")), draw(st.none() | st.just("long"))))
    n = draw(st.integers(max(1, len(indoms)), 6))   # no metrics at all: mmv.toc-empty
    items = draw(st.lists(st.integers(0, 1023), min_size=n, max_size=n, unique=True))
    names = draw(st.lists(st.lists(name_part, min_size=1, max_size=3).map(".".join)
                          | st.just("long." + "m" * 70), min_size=n, max_size=n, unique=True)
                 .filter(all_leaves))
    metrics = []
    for k, (item, name) in enumerate(zip(items, names)):
        mtype = draw(st.sampled_from([-1, 0, 1, 2, 3, 4, 5, 6, 9]))
        # every indom is used by at least one metric (an unused one is worth a warning)
        indom = indoms[k].serial if k < len(indoms) else \
            draw(st.sampled_from([0, *(d.serial for d in indoms)]))
        d = next((x for x in indoms if x.serial == indom), None)
        inst: list[int | None] = [None] if d is None else [i.internal for i in d.instances]
        if mtype == TYPE_STRING:
            values = tuple(Value(i, bytes(8), 0, draw(st.text("abc ", min_size=1, max_size=5)))
                           for i in inst)
            sem, dim = 3, 0
        elif mtype == 9:
            values = tuple(Value.of(9, draw(st.integers(0, 10**6)), i,
                                    draw(st.integers(-(10**12), 0))) for i in inst)
            sem, dim = 1, 0x01001000
        else:
            values = tuple(Value(i, draw(st.binary(min_size=8, max_size=8))) for i in inst)
            sem, dim = draw(st.sampled_from([1, 3, 4])), draw(units)
        metrics.append(Metric(name, item, mtype, sem, dim, indom, draw(st.none() | st.just("s")),
                              draw(st.none() | st.just("help")), values))
    cluster = draw(st.integers(1, 4095))
    labels: list[Label] = []
    if draw(st.booleans()):
        labels.append(Label(LABEL_CLUSTER, cluster, -1, '{"app":"x"}'))
        if metrics:
            labels.append(Label(LABEL_ITEM, metrics[0].item, -1, '{"n":1.5}'))
        if indoms:
            labels.append(Label(LABEL_INDOM, indoms[0].serial, -1, '{"ok":true}'))
            labels.append(Label(LABEL_INSTANCES, indoms[0].serial,
                                indoms[0].instances[0].internal, '{"z":null}'))
    draft = MmvFile(1, GENERATION, GENERATION, draw(st.sampled_from([0, 1, 4, 5])), 99, cluster,
                    tuple(indoms), tuple(metrics), tuple(labels))
    version = max(select_version(draft), draw(st.integers(1, 3)))
    return MmvFile(version, GENERATION, GENERATION, draft.flags, 99, cluster, tuple(indoms),
                   tuple(metrics), tuple(labels))


def test_clean_random_files_draw_no_diagnostic(tmp_path: Path) -> None:
    @SETTINGS
    @given(clean_files())
    def check(content: MmvFile) -> None:
        report = check_mmv_file(write(tmp_path, build_mmv(content)))
        assert report.diagnostics == [], [(d.code, d.field, d.message) for d in report.diagnostics]

    check()


# -- faults ----------------------------------------------------------------------------------
CASES = [(f, v) for f in FAULTS for v in f.versions]


@pytest.mark.parametrize("fault,version", CASES, ids=[f"{f.name}-v{v}" for f, v in CASES])
def test_each_fault_draws_exactly_its_errors(tmp_path: Path, fault: Any, version: int) -> None:
    report = check_mmv_file(write(tmp_path, case_files(fault, version)))
    assert errors_of(report) == set(fault.errors)
    assert set(fault.warnings) <= report.codes() - errors_of(report)
    for d in report.diagnostics:
        assert d.file.endswith("f.mmv") and d.clause == RULES[d.code].clause
        assert d.offset is not None and d.field


def test_every_error_code_has_a_case_of_its_own() -> None:
    alone = {f.errors[0] for f in FAULTS if len(f.errors) == 1}
    assert ERRORS - alone == set(NEEDS_MORE)
    covered = {c for f in FAULTS for c in f.codes}
    assert {code for code, *_ in MMV_TABLE} - covered == set(UNCOVERED)
    assert {c for f in FAULTS for c in f.codes} <= {code for code, *_ in MMV_TABLE}


def test_the_fault_check_can_fail(tmp_path: Path) -> None:
    """An unmodified file answers none of the faults: the comparison above is not vacuous."""
    report = check_mmv_file(write(tmp_path, base_file(1)))
    assert all(errors_of(report) != set(f.errors) for f in FAULTS if f.errors)


def test_diagnostics_locate_the_field(tmp_path: Path) -> None:
    fault = next(f for f in FAULTS if f.name == "metric-item")
    data = case_files(fault, 2)
    (d,) = check_mmv_file(write(tmp_path, data)).diagnostics
    lay = Layout(data)
    assert (d.code, d.record, d.field, d.offset) == ("mmv.metric-item", 0, "metrics[0].item",
                                                     lay.metric_field(0, "item"))
    assert struct.unpack_from("<I", data, d.offset)[0] == 2000


def test_rewriting_is_reported_alone(tmp_path: Path) -> None:
    data = bytearray(base_file(2))
    struct.pack_into("<Q", data, 16, 0)
    data[200:400] = b"\xff" * 200          # half-written sections are not read
    (d,) = check_mmv_file(write(tmp_path, bytes(data))).diagnostics
    assert (d.code, d.field, d.offset) == ("mmv.rewriting", "header.g2", 16)


# -- the corpus builder ----------------------------------------------------------------------
def test_build_mmv_cases(tmp_path: Path) -> None:
    dirs = build_mmv_cases(tmp_path)
    assert len(dirs) == len(CASES) and len({d.name for d in dirs}) == len(dirs)
    for where in dirs:
        case = json.loads((where / "case.json").read_text())
        assert case["id"] == where.name and case["kind"] == "invalid"
        assert case["format"] == "mmv" and case["file"] == "f.mmv"
        assert "archive" not in case and len(case["mmv_versions"]) == 1
        data = (where / "f.mmv").read_bytes()
        assert case["files"] == {"f.mmv": hashlib.sha256(data).hexdigest()}
        exp = case["expected"]
        assert exp["dump"] is None and exp["verdict"] == ("errors" if exp["error_codes"] else "warnings")
        assert case["clauses"][0] == RULES[(exp["error_codes"] or exp["warning_codes"])[0]].clause
        report = check_mmv_file(where / "f.mmv")
        assert errors_of(report) == set(exp["error_codes"])
        assert set(exp["warning_codes"]) <= report.codes()
    again = build_mmv_cases(tmp_path / "again")
    assert [(d / "f.mmv").read_bytes() for d in again] == [(d / "f.mmv").read_bytes() for d in dirs]


# -- damaged and random bytes ----------------------------------------------------------------
def _survives(path: Path) -> Any:
    started = time.perf_counter()
    report = check_mmv_file(path)
    assert "check.internal" not in report.codes(), report.diagnostics
    assert time.perf_counter() - started < 5
    return report


@pytest.mark.parametrize("version", [1, 2, 3])
def test_every_truncation_is_reported(tmp_path: Path, version: int) -> None:
    data = base_file(version)
    for cut in range(0, len(data), 11):
        report = _survives(write(tmp_path, data[:cut]))
        assert errors_of(report), cut


def test_random_damage_never_raises(tmp_path: Path) -> None:
    bases = [base_file(v) for v in (1, 2, 3)]

    @SETTINGS
    @given(st.integers(0, 2), st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255)),
                                       min_size=1, max_size=8))
    def check(which: int, flips: list[tuple[int, int]]) -> None:
        data = bytearray(bases[which])
        for at, byte in flips:
            data[HEADER + at % (len(data) - HEADER)] = byte
        _survives(write(tmp_path, bytes(data)))

    check()



def test_random_bytes_never_raise(tmp_path: Path) -> None:
    @SETTINGS
    @given(st.integers(1, 3), st.integers(-3, 12), st.binary(max_size=600),
           st.lists(st.tuples(st.integers(1, 7), st.integers(0, 2**20), st.integers(-1, 2**33)),
                    max_size=8))
    def check(version: int, tocs: int, tail: bytes, toc: list[tuple[int, int, int]]) -> None:
        head = struct.pack("<4siQQiIii", b"MMV\0", version, 7, 7, tocs, 0, 0, 3)
        body = b"".join(struct.pack("<iiQ", t, c, o & (2**64 - 1))
                        for t, c, o in ((t, min(c, 2**31 - 1), o) for t, c, o in toc))
        _survives(write(tmp_path, head + body + tail))

    check()


def test_huge_counts_cost_nothing(tmp_path: Path) -> None:
    data = bytearray(base_file(1))
    lay = Layout(data)
    for kind in lay.toc:
        struct.pack_into("<i", data, lay.toc_entry(kind) + 4, 2**31 - 1)
    report = _survives(write(tmp_path, bytes(data)))
    assert {"mmv.toc-bounds", "mmv.toc-limit"} <= report.codes()


def test_max_diagnostics_truncates(tmp_path: Path) -> None:
    data = bytearray(base_file(1))
    lay = Layout(data)
    for n in range(5):
        struct.pack_into("<I", data, lay.metric_field(n, "item"), 5000 + n)
    report = check_mmv_file(write(tmp_path, bytes(data)), max_diagnostics=3)
    assert report.truncated and len(report.diagnostics) == 3


# -- files that are not MMV files ------------------------------------------------------------
def test_is_mmv_file(tmp_path: Path) -> None:
    assert is_mmv_file(write(tmp_path, base_file(3)))
    assert not is_mmv_file(write(tmp_path, b"MMX\0" + bytes(60), "x"))
    assert not is_mmv_file(tmp_path / "absent")
    assert not is_mmv_file(tmp_path)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert not is_mmv_file(fifo)           # not opened: a FIFO would block


def test_magic_module_spells_the_schema_magic() -> None:
    from pcpconform.check.mmv import magic
    from pcpconform.mmv.schema import MMV_MAGIC
    assert magic.MMV_MAGIC == MMV_MAGIC


def test_unreadable_paths_are_reported(tmp_path: Path) -> None:
    for path in (tmp_path / "absent", tmp_path):
        (d,) = check_mmv_file(path).diagnostics
        assert d.code == "mmv.read" and d.severity == Severity.ERROR
    (d,) = check_mmv_file(write(tmp_path, b"", "empty")).diagnostics
    assert d.code == "mmv.header-short"


# -- a directory -----------------------------------------------------------------------------
def _with(version: int, *, cluster: int | None = None, serial: int | None = None,
          name: str | None = None, noprefix: bool = False) -> bytes:
    data = bytearray(base_file(version))
    lay = Layout(data)
    if cluster is not None:
        struct.pack_into("<i", data, 36, cluster)
    if serial is not None:
        struct.pack_into("<I", data, lay.indom(1), serial)
        struct.pack_into("<i", data, lay.metric_field(4, "indom"), serial)
    if noprefix:
        struct.pack_into("<I", data, 28, 1)
    if name is not None:
        data[lay.metric(0):lay.metric(0) + 64] = name.encode().ljust(64, b"\0")
    return bytes(data)


def test_directory_cluster_and_indom_collisions(tmp_path: Path) -> None:
    # reference defect 3: cluster 3 serial 5 and cluster 1 serial 4101 are both InDom 70.6149
    write(tmp_path, _with(1, cluster=3, serial=5), "a")
    write(tmp_path, _with(1, cluster=1, serial=4101), "b")
    write(tmp_path, _with(1, cluster=3), "c")
    write(tmp_path, b"junk", ".hidden")
    reports = check_mmv_directory(tmp_path)
    assert [Path(r.archive).name for r in reports] == ["a", "b", "c"]
    a, b, c = reports
    assert a.codes() == set()
    assert {(d.code, d.field) for d in b.diagnostics} >= {("mmv.indom-collision", "indoms[1].serial")}
    assert "mmv.cluster-collision" in c.codes() and "mmv.cluster-collision" not in b.codes()
    alone = check_mmv_file(tmp_path / "b")
    assert "mmv.indom-collision" not in alone.codes()


def test_directory_names_and_chosen_clusters(tmp_path: Path) -> None:
    write(tmp_path, _with(1, cluster=0, noprefix=True), "a")
    write(tmp_path, _with(1, cluster=0, noprefix=True), "b")
    write(tmp_path, _with(1, cluster=2), "c")
    a, b, c = check_mmv_directory(tmp_path)
    assert not a.codes()
    assert "mmv.metric-name-duplicate" in b.codes()       # mmv.bytes twice
    assert "mmv.cluster-collision" in c.codes()            # b was given cluster 2


def test_choose_cluster_follows_the_pmda() -> None:
    assert choose_cluster([], 0) == 1 and choose_cluster([1], 0) == 2
    assert choose_cluster([7], 7) == 7
    # after a restart the C loop does not look at entry 0 again
    assert choose_cluster([2, 1], 0) == 2
    assert choose_cluster([1, 2], 0) == 3


def test_a_directory_that_cannot_be_listed(tmp_path: Path) -> None:
    with pytest.raises(UsageError):
        check_mmv_directory(tmp_path / "absent")


@pytest.mark.parametrize("version", [1, 2, 3])
def test_fast_entry_parse_agrees_with_the_schemas(version: int) -> None:
    from pcpconform.check.mmv.context import _compiled
    from pcpconform.mmv.schema import mmv_structs
    rnd = random.Random(version)
    s = mmv_structs(version)
    for name in ("header", "toc", "indom", "instance", "metric", "value", "label"):
        schema = getattr(s, name)
        if schema is None:
            continue
        compiled = _compiled(schema)
        assert compiled is not None, name
        layout, names = compiled
        for _ in range(20):
            raw = bytes(rnd.randrange(256) for _ in range(schema.sizeof()))
            parsed = schema.parse(raw)
            assert dict(zip(names, layout.unpack(raw))) == {k: parsed[k] for k in names}


def test_the_file_name_is_part_of_every_metric_name(tmp_path: Path) -> None:
    report = check_mmv_file(write(tmp_path, base_file(1), "my-app"))
    assert {d.code for d in report.diagnostics} == {"mmv.metric-name"}
    assert len(report.diagnostics) == 5 and "rename the file" in report.diagnostics[0].message
    noprefix = bytearray(base_file(1))
    struct.pack_into("<I", noprefix, 28, 1)
    assert check_mmv_file(write(tmp_path, bytes(noprefix), "my-app")).diagnostics == []


def test_a_directory_of_damaged_files_never_raises(tmp_path: Path) -> None:
    rnd = random.Random(7)
    for n in range(12):
        data = bytearray(base_file(n % 3 + 1))
        for _ in range(4):
            data[rnd.randrange(0, len(data))] = rnd.randrange(256)
        write(tmp_path, bytes(data[:rnd.randrange(20, len(data) + 1)]), f"f{n}")
    reports = check_mmv_directory(tmp_path)
    assert len(reports) == 12
    assert all("check.internal" not in r.codes() for r in reports)
