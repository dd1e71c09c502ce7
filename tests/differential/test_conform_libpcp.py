"""The libpcp adapters (pcpconform/conform/adapters/) under each reference libpcp: a handful
of corpus cases per suite get the verdicts the committed matrix (docs/conformance-matrix.json)
records for that libpcp, crashes included; and the reader really answers with libpcp's values.

The whole matrix takes minutes (``python -m pcpconform.conform.matrix``); these cases are
chosen to cover each kind of cell: a pass, a failure explained by each of a few deviations,
a crash in one version only, and the golden archives of the reader suite.
"""

from __future__ import annotations

import copy
import fnmatch
import json
import shlex
from pathlib import Path

import pytest

from pcpconform.conform.adapters import BUILTIN
from pcpconform.conform.adapters.libpcp import LibpcpTarget, merge_derive, merge_interp, merge_reader
from pcpconform.conform.runner import run_conformance
from pcpconform.dump.jsonl import jsonl_records
from pcpconform.io.archive import Archive
from tests.differential.libpcp.referees import Referee

pytestmark = [pytest.mark.libpcp]

ROOT = Path(__file__).resolve().parents[2]
MATRIX = json.loads((ROOT / "docs/conformance-matrix.json").read_text(encoding="utf-8"))
#: referee name -> built-in adapter name
ADAPTER = {"pcp-6.0.3": "libpcp-6.0.3", "pcp-6.3": "libpcp-6.3", "pcp-7": "libpcp-7"}
SUBSET = {
    "validator": ["example-v3", "desc-sem-v2", "desc-name-v3", "event-structure-v2", "indom-length-v2",
                  "label-features-v3", "file-missing-index-v2"],
    "reader": ["example-v2", "events-v3", "delta-indom-v3", "types-v3"],
    # pmi: a pass (7.x through CONF-WRITE-2's latitude), a fixed pid (IMPL-WRITE-2), removed
    # instances (IMPL-WRITE-3), events and volume switches (unsupported in the writer suite)
    "writer": ["interp-seed-v3", "dev-mark-first-v2", "example-v3", "lifetimes-v2", "events-v3", "multi-volume-v2"],
    "interp": ["interp-seed-v3/fwd-3s@*", "interp-seed-v3/back-7s@*", "dev-discrete-stale-v3/*"],
    # a pass, a silent unknown operand (IMPL-DERIVE-2 before 7.x), a masked metric; the other
    # profiles' units are skipped
    "derive": ["interp-seed-v3/seed@*", "example-v3/errors@*", "example-v3/language@*"],
    # mmvdump: a clean file, a fault it stops at, one it dumps anyway (IMPL-MMV-1), a warning
    "mmv-validator": ["mmv-base-v3", "mmv-magic-v2", "mmv-cluster-v1", "mmv-indom-duplicate-v2",
                      "mmv-toc-bounds-v[13]", "mmv-metric-singular-v1"],
    "mmv-reader": ["mmv-base-v1"],       # not offered: skipped, never passed
    # libpcp_mmv writes every MMV fixture (IMPL-MMVW-1): every type, labels, SENTINEL, NOPREFIX
    "mmv-writer": ["mmv-*"],
}


def _recorded(adapter: str, suite: str, name: str) -> str:
    for row in MATRIX["rows"]:
        if row["suite"] == suite and row["name"] == name:
            return str(row["cells"][adapter]["verdict"])
    raise KeyError(f"{suite} {name} is not in docs/conformance-matrix.json")


def test_the_subset_covers_more_than_passes() -> None:
    verdicts = {row["cells"][a]["verdict"] for a in ADAPTER.values() for row in MATRIX["rows"]
                for name in SUBSET.get(row["suite"], ()) if fnmatch.fnmatchcase(row["name"], name)}
    assert {"pass", "fail", "crash", "skip"} <= verdicts


@pytest.mark.parametrize("suite", list(SUBSET))
def test_adapter_gets_the_recorded_verdicts(referee: Referee, suite: str) -> None:
    adapter = BUILTIN[ADAPTER[referee.name]]
    assert adapter.available(), f"{adapter.name} is not usable although {referee.name} is installed"
    report = run_conformance(ROOT / "corpus", adapter.command, suites=[suite], globs=SUBSET[suite],
                             jobs=2, timeout=60)
    assert report.capabilities.version.startswith(referee.version_prefix)
    got = {r.case: r.verdict.value for r in report.results}
    want = {r.case: _recorded(adapter.name, suite, r.case) for r in report.results}
    assert len(got) >= len(SUBSET[suite]), "a case of the subset is no longer in the corpus"
    assert got == want, {n: (want[n], got.get(n)) for n in want if got.get(n) != want[n]}


def test_mmv_validator_stderr_says_what_mmvdump_said(referee: Referee) -> None:
    adapter = BUILTIN[ADAPTER[referee.name]]
    report = run_conformance(ROOT / "corpus", adapter.command, suites=["mmv-validator", "mmv-reader"],
                             globs=["mmv-magic-v1", "mmv-base-v2"], timeout=60)
    got = {(r.suite, r.case): r for r in report.results}
    assert got["mmv-validator", "mmv-magic-v1"].verdict.value == "pass"
    assert "mmvdump said" in got["mmv-validator", "mmv-magic-v1"].stderr
    assert got["mmv-reader", "mmv-base-v2"].verdict.value == "skip"
    assert "mmv-reader" in got["mmv-reader", "mmv-base-v2"].detail


def test_reader_answers_with_libpcps_values() -> None:
    """A planted difference in what libpcp answers shows in the dump: the reader takes the
    values, names, instances and texts from libpcp, not from the kit's skeleton."""
    skeleton = list(jsonl_records(Archive(ROOT / "corpus/cases/valid/example-v3/a")))
    answer = [{"kind": "label", "version": 3, "hostname": "elsewhere"},
              {"kind": "desc", "pmid": "60.0.4", "type": "u32", "indom": "60.1", "sem": "counter",
               "units": skeleton[1]["units"], "names": ["disk.dev.read_bytes"]}]
    answer += [{"kind": "result", **{k: copy.deepcopy(o[k]) for k in ("timestamp", "mark", "vsets")}}
               for o in skeleton if o["kind"] == "result"]
    answer[2]["vsets"][0]["values"][0]["value"] = "999"
    merged = merge_reader(skeleton, answer)
    assert merged[0]["hostname"] == "elsewhere"
    desc = next(o for o in merged if o["kind"] == "desc")
    assert desc["type"] == "u32"
    first = next(o for o in merged if o["kind"] == "result")
    assert first["vsets"][0]["values"][0]["value"] == "999"
    # what libpcp did not return is left out: here every other desc, every indom and text
    assert sum(o["kind"] == "desc" for o in merged) == 1
    assert not any(o["kind"] in ("indom", "text") for o in merged)
    # and a result only libpcp returned is added at the end
    extra = merge_reader(skeleton, [*answer, {"kind": "result", "timestamp": {"sec": 1, "nsec": 0},
                                              "mark": True, "vsets": []}])
    assert extra[-1]["timestamp"] == {"sec": 1, "nsec": 0} and len(extra) == len(merged) + 1


def test_registry_names_and_commands() -> None:
    """The four built-in implementations, each an argv run without a shell; a libpcp whose
    chroot is not there is not available (and is not probed by running anything)."""
    assert list(BUILTIN) == ["pcpconform", "libpcp-6.0.3", "libpcp-6.3", "libpcp-7"]
    for adapter in BUILTIN.values():
        argv = shlex.split(adapter.command)
        assert argv == list(adapter.argv) and Path(argv[0]).is_absolute()
    assert not LibpcpTarget("libpcp-9", Path("/nonexistent/chroot"), "9.").available()


def test_interp_answers_with_libpcps_values() -> None:
    """The interp document keeps the kit's form but every value is libpcp's: a planted value,
    a missing one and an end of log show through."""
    skeleton = {"kind": "interp", "rules": "pcp-6.3", "samples": [
        {"time": {"sec": 1, "nsec": 0}, "eol": False, "metrics": [
            {"pmid": "1.0.1", "name": "m", "instances": [
                {"inst": 0, "name": "a", "value": {"type": "u32", "value": "1"}},
                {"inst": 1, "name": "b", "value": None, "reason": "no prior"}]}]},
        {"time": {"sec": 2, "nsec": 0}, "eol": False, "metrics": [
            {"pmid": "1.0.1", "name": "m", "instances": [
                {"inst": 0, "name": "a", "value": {"type": "u32", "value": "2"}}]}]}]}
    libpcp = {"samples": [{"time": {"sec": 1, "nsec": 0}, "eol": False,
                           "metrics": {"1.0.1": [[0, {"type": "u32", "value": "7"}]]}},
                          {"time": {"sec": 2, "nsec": 0}, "eol": True, "metrics": {}}]}
    doc = merge_interp(skeleton, libpcp)
    first, second = doc["samples"]
    assert first["metrics"][0]["instances"] == [
        {"inst": 0, "name": "a", "value": {"type": "u32", "value": "7"}},
        {"inst": 1, "name": "b", "value": None, "reason": "no prior"}]
    assert second == {"time": {"sec": 2, "nsec": 0}, "eol": True, "metrics": []}
    nothing = merge_interp(skeleton, {"samples": [{"time": {"sec": 1, "nsec": 0}, "eol": False, "metrics": {}},
                                                  {"time": {"sec": 2, "nsec": 0}, "eol": False, "metrics": {}}]})
    assert nothing["samples"][1]["metrics"][0]["instances"][0] == {
        "inst": 0, "name": "a", "value": None, "reason": "libpcp gave no value"}


def test_derive_answers_with_libpcps_descriptors_and_values() -> None:
    """libpcp's descriptors and values go into the document; a name libpcp resolves to an
    archive metric is masked, keeps the kit's descriptor and takes the archive's values;
    nothing bound is a null result."""
    kit_desc = {"name": "d.m", "pmid": "511.0.3", "masked": True, "type": 1, "sem": 4,
                "indom": "PM_INDOM_NULL", "units": "count"}
    skeleton = {"kind": "derive", "format": "pcpconform-interp", "format_version": 1, "rules": "pcp-7",
                "samples": [{"time": {"sec": 1, "nsec": 0}, "eol": False, "metrics": [
                    {"pmid": "511.0.2", "name": "d.x", "instances": [
                        {"inst": -1, "name": None, "value": None, "reason": "no prior"}]},
                    {"pmid": "511.0.3", "name": "d.m", "instances": [
                        {"inst": -1, "name": None, "value": {"type": "u32", "value": "4"}}]}]}],
                "derived": [dict(kit_desc, name="d.x", pmid="511.0.2", masked=False, type=5), kit_desc]}
    libpcp = {"derived": [{"name": "d.x", "pmid": "511.0.2", "type": 3, "sem": 3, "indom": "PM_INDOM_NULL",
                           "units": ""},
                          {"name": "d.m", "pmid": "60.0.32", "type": 1, "sem": 4, "indom": "PM_INDOM_NULL",
                           "units": "count"}],
              "samples": [{"time": {"sec": 1, "nsec": 0}, "eol": False, "metrics": {
                  "511.0.2": [[-1, {"type": "u64", "value": "9"}]], "60.0.32": [[-1, {"type": "u32", "value": "4"}]]}}],
              "diagnostics": []}
    doc = merge_derive(skeleton, libpcp, "pcp-7")
    assert doc is not None
    assert doc["derived"] == [{"name": "d.x", "pmid": "511.0.2", "type": 3, "sem": 3, "indom": "PM_INDOM_NULL",
                               "units": "", "masked": False}, kit_desc]
    x, m = doc["samples"][0]["metrics"]
    assert x["instances"] == [{"inst": -1, "name": None, "value": {"type": "u64", "value": "9"}}]
    assert m == skeleton["samples"][0]["metrics"][1]
    assert merge_derive(skeleton, {"derived": [], "samples": [], "diagnostics": ["x"]}, "pcp-7") is None
