"""Campaigns: reproducible from the seed (also with workers and on Dask), resumable, each
finding shrunk to a small reproducer that replays, and promotable to a corpus case."""

from __future__ import annotations

import json
import random
import shutil
import sys
from pathlib import Path

import pytest

from pcpconform.cli import main
from pcpconform.fuzz.archive_edit import editor
from pcpconform.fuzz.campaign import Campaign, Options
from pcpconform.fuzz.mutators import ARCHIVE_MUTATORS, Skip, mutate_archive
from pcpconform.fuzz.seeds import archive_seeds
from pcpconform.fuzz.shrink import ddmin, shrink_files
from pcpconform.fuzz.targets import target_from_template

ROOT = Path(__file__).resolve().parents[2]
TARGETS = ROOT / "tests" / "data" / "fuzz_targets"
SEGV = f"{sys.executable} -S {TARGETS}/segv_on_sem.py {{archive}}"


def _seed() -> dict[str, bytes]:
    return dict(dict(archive_seeds())["example-v2"])


def test_the_same_seed_gives_the_same_mutants() -> None:
    a = [mutate_archive(_seed(), random.Random(f"7:{k}"), []) for k in range(40)]
    b = [mutate_archive(_seed(), random.Random(f"7:{k}"), []) for k in range(40)]
    assert a == b
    assert all(files != _seed() or notes for files, notes in a)


@pytest.mark.parametrize("name", sorted(ARCHIVE_MUTATORS))
def test_every_mutator_changes_something_on_some_seed(name: str) -> None:
    fn = ARCHIVE_MUTATORS[name][1]
    changed = 0
    for k in range(30):
        ed = editor(_seed())
        try:
            fn(ed, random.Random(k), [dict(p) for _, p in archive_seeds()])
        except Skip:
            continue
        changed += {p: bytes(v) for p, v in ed.files.items()} != _seed()
    assert changed > 0


def test_ddmin_finds_a_one_minimal_subset() -> None:
    from pcpconform.fuzz.shrink import _Budget

    kept = ddmin(list(range(40)), lambda xs: 7 in xs and 31 in xs, _Budget(500))
    assert kept == [7, 31]


def test_shrinking_keeps_the_property_and_drops_the_rest() -> None:
    ed = editor(_seed())
    i = ed.find_meta("desc")
    rec = ed.meta(i)
    rec.body.sem = 0
    ed.put_meta(i, rec)
    files = {k: bytes(v) for k, v in ed.files.items()}

    def still(parts: dict[str, bytes]) -> bool:
        try:
            ed = editor(parts)
            return any(ed.meta(k).type == 1 and ed.meta(k).body.sem == 0
                       for k in range(1, len(ed.records("meta")) + 1))
        except Exception:
            return False

    small = shrink_files(files, still, runs=400)
    assert still(small) and sum(map(len, small.values())) < 400 < sum(map(len, files.values()))


def _campaign(where: Path, **kw: object) -> Campaign:
    target = target_from_template(SEGV, timeout=30)
    return Campaign(Options(target, where, seed=3, **kw))  # type: ignore[arg-type]


def test_a_campaign_finds_shrinks_replays_and_resumes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    summary = _campaign(tmp_path / "f", runs=48, shrink_runs=120).run()
    crashes = [f for f in summary.findings if f.kind == "crash"]
    assert len(crashes) == 1, summary.as_json()
    finding = crashes[0]
    assert finding.size <= 400 < finding.original_size
    where = tmp_path / "f" / finding.id
    assert {"command.txt", "stderr.txt", "diagnostics.json", "finding.json", "target-version.txt"} \
        <= {p.name for p in where.iterdir()}
    assert (where / "input" / "a.meta").is_file()
    # the reproducer replays deterministically
    assert main(["fuzz", "--replay", str(where)]) == 1
    assert "reproduces" in capsys.readouterr().out
    # a second campaign on the same directory resumes: runs go on, the finding is not new
    again = _campaign(tmp_path / "f", runs=8, shrink_runs=0)
    assert again.state.runs == 48
    assert again.run().new == []
    # and it becomes a corpus case that follows the schema
    corpus = tmp_path / "corpus"
    shutil.copytree(ROOT / "corpus" / "schema", corpus / "schema")
    assert main(["fuzz", "--promote", str(where), "--corpus", str(corpus)]) == 0
    (case,) = (corpus / "cases" / "invalid").iterdir()
    data = json.loads((case / "case.json").read_text())
    assert data["origin"]["writer"] == "pcpconform fuzz" and data["id"] == case.name
    assert data["expected"]["error_codes"] and data["kind"] == "invalid"


def test_workers_do_not_change_the_result(tmp_path: Path) -> None:
    one = _campaign(tmp_path / "a", runs=8, shrink_runs=0).run()
    two = _campaign(tmp_path / "b", runs=8, shrink_runs=0, jobs=2).run()
    assert [f.signature for f in one.findings] == [f.signature for f in two.findings]
    state = [json.loads((tmp_path / d / ".campaign" / "state.json").read_text())["seen"] for d in "ab"]
    assert state[0] == state[1]


def test_a_dask_cluster_gives_the_same_campaign(tmp_path: Path) -> None:
    distributed = pytest.importorskip("distributed")
    one = _campaign(tmp_path / "a", runs=8, shrink_runs=0).run()
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                  dashboard_address=None) as cluster:
        two = _campaign(tmp_path / "b", runs=8, shrink_runs=0, dask=cluster.scheduler_address).run()
    assert two.runs == 8
    state = [json.loads((tmp_path / d / ".campaign" / "state.json").read_text())["seen"] for d in "ab"]
    assert state[0] == state[1]
    assert [f.signature for f in one.findings] == [f.signature for f in two.findings]


def test_cli_exit_status(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fuzz", "--target", "cat {archive}.meta", "--findings", str(tmp_path)]) == 2
    assert main(["fuzz", "--target", "cat", "--runs", "1", "--findings", str(tmp_path)]) == 2
    assert main(["fuzz", "--replay", str(tmp_path)]) == 2
    assert main(["fuzz", "--target", "cat {archive}.meta", "--runs", "4", "--findings", str(tmp_path / "c"),
                 "--format", "json"]) == 0
    out = capsys.readouterr()
    assert json.loads(out.out)["runs"] == 4
    assert all(line.startswith("pcpconform fuzz: ") for line in out.err.splitlines())


@pytest.mark.parametrize(("template", "kind"), [("cat {mmv}", "mmv"), ("cat {config} {archive}.meta", "config")])
def test_mmv_files_and_derived_configs_are_mutated_with_the_kits_feedback(tmp_path: Path, template: str,
                                                                          kind: str) -> None:
    campaign = Campaign(Options(target_from_template(template), tmp_path, seed=1, runs=10, shrink_runs=0))
    assert campaign.kind == kind
    summary = campaign.run()
    # the kit's MMV validator codes, or its derived-config diagnostics, spread the feedback keys
    assert summary.runs == 10 and summary.feedback_keys > 2


@pytest.mark.parametrize("files", [{}, {"meta": b""}, {"meta": b"", "0": b""}, {"meta": b"\x00" * 3}])
def test_mutating_what_is_left_of_an_archive_never_raises(files: dict[str, bytes]) -> None:
    for k in range(20):
        mutated, notes = mutate_archive(files, random.Random(k), [])
        assert notes and mutated != files


def test_a_scheduler_nobody_runs_is_status_2(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """fuzz --dask goes through the same Cluster as check and conform: an address where no
    scheduler answers is one line and exit 2, not a Client's traceback."""
    pytest.importorskip("distributed")
    from pcpconform import cluster

    monkeypatch.setattr(cluster, "CONNECT_TIMEOUT", 0.5)
    assert main(["fuzz", "--target", "cat {archive}.meta", "--runs", "2", "--dask", "tcp://127.0.0.1:1",
                 "--findings", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and err.startswith("pcpconform fuzz: --dask tcp://127.0.0.1:1: ")
