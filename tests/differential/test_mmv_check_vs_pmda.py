"""The MMV validator against each referee's mmvdump: every file mmvdump fails on (exit status
1, a "Bad file ..." report it prints without failing, or a crash) the validator reports an
error on, and the error codes it catches are the ones spec/mmv.md says.

The one-fault MMV corpus (``pcpconform.corpusgen.mmv_faults``) and randomly damaged files go
through ``$PCP_PMDAS_DIR/mmv/mmvdump`` of PCP 6.0.3, 6.3.x and 7.x, all files in one shell
run per referee. The errors mmvdump does not see are the PMDA's (it skips, merges or
misreads what mmvdump prints as it is): the tests of tests/differential/test_mmv_pmda*.py
run the PMDA itself on well-formed files; here the PMDA is run on each one-fault case whose
errors mmvdump does not see, to show that it then loses, merges or misreads something, or
crashes.
"""

from __future__ import annotations

import random
import re
import shutil
import struct
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from pcpconform.check.mmv import check_mmv_directory, check_mmv_file
from pcpconform.check.rules import Severity
from pcpconform.corpusgen.mmv_faults import FAULTS, Layout, base_file, case_files
from tests.differential.libpcp.mmv_pmda import PmdaDesc, observe
from tests.differential.libpcp.referees import Referee

pytestmark = [pytest.mark.libpcp]

MMVDUMP = "/var/lib/pcp/pmdas/mmv/mmvdump"
_RUN = ('cd "$1"; for f in *.mmv; do timeout -k 5 30 ' + MMVDUMP
        + ' "$f" > "$f.out" 2>&1; echo $? > "$f.rc"; done')
#: what mmvdump prints about a file it cannot read (some without failing: value slots)
_FATAL = re.compile(r"^(Bad file|Bad magic|Bad tocs|Bad cluster|Version -?\d+ not supported"
                    r"|Mismatched generation|Unrecognised TOC)", re.M)
_BAD_TOC = re.compile(r"^Bad TOC\[\d+\]: invalid entry count", re.M)
_BAD_ELAPSED = re.compile(r"^Bad \(positive\) ELAPSED", re.M)

#: error codes mmvdump catches on their corpus cases (in every referee)
CAUGHT = {"mmv.header-short", "mmv.magic", "mmv.version", "mmv.rewriting", "mmv.tocs",
          "mmv.cluster", "mmv.toc-type", "mmv.toc-bounds", "mmv.toc-duplicate", "mmv.toc-overlap",
          "mmv.help-offset", "mmv.instance-name-offset", "mmv.metric-name-offset",
          "mmv.string-value-offset", "mmv.value-metric", "mmv.instance-indom-bounds"}
#: codes of CAUGHT mmvdump misses on some cases, and why
PARTLY = {
    "mmv.rewriting": "g1 = g2 = 0: mmvdump compares g1 with g2 only (the PMDA skips the file)",
    "mmv.toc-bounds": "a strings section one slot too long: mmvdump bounds-checks string slots"
                      " with the 32-byte stride of a value (reference defect 6)",
    "mmv.toc-duplicate": "v1: the strings read as a second values section point inside the file",
}
#: error codes whose cases mmvdump prints without a word, and what the PMDA does instead
PMDA_ONLY = {
    "mmv.toc-count": "reads the count as unsigned and skips the section",
    "mmv.toc-limit": "skips a section beyond its limits",
    "mmv.indom-serial": "skips the indom",
    "mmv.indom-duplicate": "merges the two indoms' instances",
    "mmv.indom-collision": "merges the instances of the colliding InDoms",
    "mmv.indom-bounds": "skips the indom (mmvdump reads instances through their section)",
    "mmv.name-nul": "hands out a name that runs into the next entry, or cuts a slot's at 255 bytes",
    "mmv.metric-name-duplicate": "does not create the metric",
    "mmv.metric-name-prefix": "serves the metric's PMID under no name",
    "mmv.string-value-nul": "serves 255 of its bytes (mmvdump prints on past the slot)",
    "mmv.metric-name": "does not export the metric",
    "mmv.metric-item": "does not export the metric",
    "mmv.metric-item-duplicate": "does not export the second metric",
    "mmv.metric-type": "exports a type its fetch has no case for",
    "mmv.metric-indom": "exports an InDom it cannot list",
    "mmv.value-instance": "serves the value under another instance",
    "mmv.label-nul": "parses the payload on into the next label",
}


@dataclass(frozen=True)
class Dump:
    status: int        # exit status; 124 time limit; above 128: killed by a signal
    output: str

    @property
    def fails(self) -> bool:
        return self.status != 0 or _FATAL.search(self.output) is not None

    @property
    def crashed(self) -> bool:
        return self.status == 124 or self.status > 128


def run_mmvdump(referee: Referee, files: dict[str, bytes]) -> dict[str, Dump]:
    """mmvdump of the referee on each file (name -> bytes), in one shell run."""
    parent = None if referee.root is None else referee.root / "tmp"
    host = Path(tempfile.mkdtemp(prefix="pcpconform-mmvdump-", dir=parent))
    inner = str(host) if referee.root is None else "/tmp/" + host.name
    try:
        host.chmod(0o755)
        for name, data in files.items():
            (host / f"{name}.mmv").write_bytes(data)
        proc = referee.run(["sh", "-c", "ulimit -c 0; " + _RUN, "sh", inner], timeout=600)
        if proc.returncode != 0:
            raise subprocess.SubprocessError(f"{referee.name}: the mmvdump loop failed: {proc.stderr}")
        out = {}
        for name in files:
            rc = (host / f"{name}.mmv.rc").read_text().strip()
            out[name] = Dump(int(rc), (host / f"{name}.mmv.out").read_text(errors="replace"))
        return out
    finally:
        shutil.rmtree(host, ignore_errors=True)


@pytest.fixture(scope="module")
def corpus() -> dict[str, bytes]:
    files = {f"mmv-{f.name}-v{v}": case_files(f, v) for f in FAULTS for v in f.versions}
    files.update({f"base-v{v}": base_file(v) for v in (1, 2, 3)})
    return files


@pytest.fixture(scope="module")
def verdicts(corpus: dict[str, bytes], tmp_path_factory: pytest.TempPathFactory
             ) -> dict[str, tuple[set[str], set[str]]]:
    """The validator's (error codes, all codes) per file, each checked as f.mmv (the file's
    name is part of its metrics' names)."""
    where = tmp_path_factory.mktemp("mmv-cases")
    out = {}
    for name, data in corpus.items():
        (where / name).mkdir()
        (where / name / "f.mmv").write_bytes(data)
        report = check_mmv_file(where / name / "f.mmv")
        out[name] = ({d.code for d in report.diagnostics if d.severity == Severity.ERROR},
                     report.codes())
    return out


def test_mmvdump_failures_are_validator_errors(referee: Referee, corpus: dict[str, bytes],
                                               verdicts: dict[str, tuple[set[str], set[str]]]) -> None:
    dumps = run_mmvdump(referee, corpus)
    failed = {name for name, d in dumps.items() if d.fails}
    assert not any(d.crashed for d in dumps.values())
    erroneous = {name for name, (errors, _) in verdicts.items() if errors}
    assert failed <= erroneous, f"{referee.name}: mmvdump fails, the validator does not: " \
        f"{sorted(failed - erroneous)}"
    caught = {code for name in failed for code in verdicts[name][0]}
    assert caught == CAUGHT, referee.name
    unseen = {code for name in erroneous - failed for code in verdicts[name][0]}
    assert unseen - CAUGHT == set(PMDA_ONLY), referee.name
    assert unseen & CAUGHT == set(PARTLY), referee.name
    # what mmvdump only grumbles about is a warning the validator gives too
    for name, d in dumps.items():
        if _BAD_TOC.search(d.output):
            assert verdicts[name][1] & {"mmv.toc-empty", "mmv.toc-count"}, name
        if _BAD_ELAPSED.search(d.output):
            assert "mmv.elapsed-extra" in verdicts[name][1], name
    assert not dumps["base-v1"].fails and not _BAD_TOC.search(dumps["base-v3"].output)


def _damaged(seed: int) -> bytes:
    rnd = random.Random(seed)
    data = bytearray(base_file(rnd.choice((1, 2, 3))))
    for _ in range(rnd.randint(1, 6)):
        at = rnd.randrange(24, len(data))
        if rnd.random() < 0.5:
            data[at] = rnd.randrange(256)
        else:   # a plausible offset or count where a word was
            word = rnd.choice((0, 1, len(data) - rnd.randrange(1, 300), 2**31 - 1, 2**40))
            data[at & ~7:(at & ~7) + 8] = (word % 2**64).to_bytes(8, "little")[:len(data[at & ~7:(at & ~7) + 8])]
    if rnd.random() < 0.2:
        del data[rnd.randrange(40, len(data)):]
    return bytes(data)


DAMAGED = 80


def test_damaged_files_mmvdump_rejects_are_validator_errors(referee: Referee, tmp_path: Path) -> None:
    files = {f"damaged-{n}": _damaged(n) for n in range(DAMAGED)}
    dumps = run_mmvdump(referee, files)
    for name, data in files.items():
        (tmp_path / name).mkdir()
        (tmp_path / name / "f.mmv").write_bytes(data)
        report = check_mmv_file(tmp_path / name / "f.mmv")
        assert "check.internal" not in report.codes()
        if dumps[name].fails or dumps[name].crashed:
            assert report.errors, f"{referee.name}: mmvdump {'crashes' if dumps[name].crashed else 'fails'}" \
                f" on {name}, the validator reports {sorted(report.codes())}\n{dumps[name].output[-500:]}"


#: what the PMDA is asked about a case's file (named "f"): every metric of the base file,
#: its two InDoms in cluster 42 and the ones the faults move them to, every value but the
#: ELAPSED one (it follows the clock)
_NAMES = ["mmv.f.bytes", "mmv.f.text", "mmv.f.elapsed", "mmv.f.per.tool", "mmv.f.per.room"]
_INDOMS = ["70.86077", "70.86078", "70.86016", "70.86115"]
_FETCH = ["70.42.1", "70.42.2", "70.42.4", "70.42.5"]
#: PMDA_ONLY codes the PMDA is not asked about here (labels are not requested)
_LABELS = {"mmv.label-nul", "mmv.toc-limit"}


def _pmda_view(referee: Referee, data: bytes) -> tuple[bool, object]:
    """(crashed, what dbpmda answered) for one file alone in the MMV directory."""
    p = observe(referee, {"f": data}, descs=_NAMES, indoms=_INDOMS, fetch=_FETCH).pmda
    return p.run.crashed, (sorted(p.names), p.descs, p.instances, p.values)


def test_pmda_errors_mmvdump_misses_change_what_the_pmda_serves(referee: Referee) -> None:
    bases = {v: _pmda_view(referee, base_file(v)) for v in (1, 2, 3)}
    assert not any(crashed for crashed, _ in bases.values())
    checked = set()
    for fault in FAULTS:
        if not fault.errors or not set(fault.errors) <= set(PMDA_ONLY) - _LABELS:
            continue
        version = fault.versions[0]
        crashed, view = _pmda_view(referee, case_files(fault, version))
        assert crashed or view != bases[version][1], f"{referee.name}: mmv-{fault.name}-v{version}"
        checked |= set(fault.errors)
    assert checked == set(PMDA_ONLY) - _LABELS
    # a warning never takes the PMDA down
    for fault in FAULTS:
        if not fault.errors:
            crashed, _ = _pmda_view(referee, case_files(fault, fault.versions[0]))
            assert not crashed, f"{referee.name}: mmv-{fault.name}"
    # planted: the comparison above sees no difference where there is none
    again = _pmda_view(referee, base_file(1))
    assert again == bases[1]


def _variant(*, cluster: int, serial: int | None = None, room: bytes | None = None) -> bytes:
    """The version 1 base file with another cluster, rooms serial or room name."""
    data = bytearray(base_file(1))
    lay = Layout(data)
    struct.pack_into("<i", data, 36, cluster)
    if serial is not None:
        struct.pack_into("<I", data, lay.indom(1), serial)
        struct.pack_into("<i", data, lay.metric_field(4, "indom"), serial)
    if room is not None:
        data[lay.instance(2) + 16:lay.instance(2) + 80] = room.ljust(64, b"\0")
    return bytes(data)


def _directory(files: dict[str, bytes], where: Path) -> dict[str, set[str]]:
    where.mkdir()
    for name, data in files.items():
        (where / name).write_bytes(data)
    return {Path(r.archive).name: r.codes() for r in check_mmv_directory(where)}


def test_directory_clusters_as_the_pmda_chooses(referee: Referee, tmp_path: Path) -> None:
    # a asks for 2, b for 1, c for 0: the PMDA's search gives c cluster 2 again
    files = {"a": _variant(cluster=2), "b": _variant(cluster=1), "c": _variant(cluster=0)}
    codes = _directory(files, tmp_path / "d")
    assert "mmv.cluster-collision" in codes["c"] and not codes["a"] and not codes["b"]
    pmda = observe(referee, files, descs=["mmv.a.bytes", "mmv.c.bytes"], traverse=False).pmda
    a, c = pmda.descs["mmv.a.bytes"], pmda.descs["mmv.c.bytes"]
    assert isinstance(a, PmdaDesc) and isinstance(c, PmdaDesc)
    assert a.pmid == c.pmid == "70.2.1", referee.name


def test_directory_indom_collision_as_the_pmda_merges(referee: Referee, tmp_path: Path) -> None:
    # reference defect 3: cluster 3 serial 5 and cluster 1 serial 4101 are both InDom 70.6149
    files = {"x": _variant(cluster=3, serial=5), "y": _variant(cluster=1, serial=4101, room=b"parlour")}
    codes = _directory(files, tmp_path / "d")
    assert codes["x"] == set() and "mmv.indom-collision" in codes["y"]
    pmda = observe(referee, files, indoms=["70.6149"], traverse=False).pmda
    assert pmda.instances["70.6149"] == [(7, "kitchen")], referee.name   # y's "parlour" is lost
