"""A campaign: generate mutants from a queue, run them in batches (in-process, ``-j N``
worker processes, or a Dask cluster), keep the mutants whose feedback key (validator
codes, exit status, normalised stderr) is new, and turn each new signature into a shrunk
finding. Run k's mutant depends only on the seed, k and the queue, and batches are judged
in submission order: a campaign is reproducible from its seed whatever the parallelism,
and resumes from the findings directory's state."""

from __future__ import annotations

import base64
import json
import random
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from pcpconform.cluster import Cluster, WorkerDied
from pcpconform.errors import UsageError
from pcpconform.fuzz.engine import Entry, input_kind, job_files, mutate, seeds_for
from pcpconform.fuzz.findings import (
    FINDING_FILE,
    Finding,
    backtrace_frames,
    finding_id,
    load_findings,
    signature_of,
    write_finding,
)
from pcpconform.fuzz.oracles import Job, Observation, observe
from pcpconform.fuzz.shrink import shrink_files
from pcpconform.fuzz.targets import Target

__all__ = ["Options", "Campaign", "Summary", "STATE_DIR"]

STATE_DIR = ".campaign"
_QUEUE_LIMIT = 400


@dataclass
class Options:
    target: Target
    findings: Path
    seed: int = 0
    runs: int | None = None
    seconds: float | None = None
    jobs: int = 1
    differential: bool = False
    dask: str | Cluster | None = None
    shrink_runs: int = 300
    status: TextIO | None = None


@dataclass
class Summary:
    runs: int
    seconds: float
    findings: list[Finding]
    new: list[Finding]
    kept: int
    feedback_keys: int
    target_seconds: float = 0.0
    #: CPU seconds this process spent making mutants (the fuzzer's own cost)
    generation_seconds: float = 0.0

    def as_json(self) -> dict[str, Any]:
        return {"runs": self.runs, "seconds": round(self.seconds, 3), "kept": self.kept,
                "feedback_keys": self.feedback_keys,
                "findings": [{"id": f.id, "kind": f.kind, "signature": f.signature, "bytes": f.size,
                              "hits": f.hits, "new": f in self.new} for f in self.findings]}


@dataclass
class _State:
    runs: int = 0
    seen: set[str] = field(default_factory=set)
    queue: list[Entry] = field(default_factory=list)


def _key(obs: Observation) -> str:
    return json.dumps(obs.feedback, default=str)


class Campaign:
    def __init__(self, options: Options) -> None:
        self.o = options
        self.kind = input_kind(options.target.needs)
        self.findings = load_findings(options.findings)
        self.prelim: dict[str, str] = {}     # kind|detail|stderr -> signature, saves backtraces
        self.state = self._load_state()
        self._version: str | None = None

    # -- state ---------------------------------------------------------------------------
    def _state_file(self) -> Path:
        return self.o.findings / STATE_DIR / "state.json"

    def _load_state(self) -> _State:
        path = self._state_file()
        seeds = seeds_for(self.kind)
        if path.is_file():
            try:
                data = json.loads(path.read_text())
                if data.get("command") == self.o.target.command and data.get("seed") == self.o.seed:
                    queue = [Entry(q["kind"], {k: base64.b64decode(v) for k, v in q["parts"].items()},
                                   tuple(q["notes"]), q.get("origin", "")) for q in data["queue"]]
                    return _State(int(data["runs"]), set(data["seen"]), queue or seeds)
            except (ValueError, KeyError, TypeError):
                pass
        return _State(0, set(), seeds)

    def _save_state(self) -> None:
        path = self._state_file()
        path.parent.mkdir(parents=True, exist_ok=True)
        data = {"command": self.o.target.command, "seed": self.o.seed, "runs": self.state.runs,
                "seen": sorted(self.state.seen),
                "queue": [{"kind": e.kind, "origin": e.origin, "notes": list(e.notes[-8:]),
                           "parts": {k: base64.b64encode(v).decode() for k, v in e.parts.items()}}
                          for e in self.state.queue]}
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(data))
        tmp.replace(path)

    # -- generation ----------------------------------------------------------------------
    def job(self, k: int) -> tuple[Job, Entry]:
        """Run k's mutant: from the seed, k and the queue alone."""
        rng = random.Random(f"{self.o.seed}:{k}")
        queue = self.state.queue
        # recent discoveries are favoured, the seeds are never forgotten
        parent = queue[rng.randrange(len(queue))] if rng.random() < 0.5 else \
            queue[max(0, len(queue) - 1 - int(rng.expovariate(0.1)))]
        try:
            child = mutate(parent, rng)
        except Exception as exc:    # a bug of the engine must not end a campaign: run the parent
            child = Entry(parent.kind, parent.parts, (*parent.notes, f"mutation failed: {exc!r}"[:200]),
                          parent.origin)
        files, names = job_files(child.kind, child.parts)
        return Job(self.o.target, child.kind, files, names, child.notes, self.o.differential), child

    # -- running -------------------------------------------------------------------------
    def _mapper(self) -> tuple[Callable[[list[Job]], Iterator[Observation]], Callable[[], None]]:
        if self.o.dask is not None:
            owned = not isinstance(self.o.dask, Cluster)
            cluster = Cluster(self.o.dask).__enter__() if isinstance(self.o.dask, str) else self.o.dask
            return ((lambda jobs: _on_cluster(cluster, jobs)),
                    (lambda: cluster.__exit__(None, None, None)) if owned else (lambda: None))
        if self.o.jobs > 1:
            pool = ProcessPoolExecutor(max_workers=self.o.jobs)
            return (lambda jobs: pool.map(observe, jobs), lambda: pool.shutdown(cancel_futures=True))
        return (lambda jobs: map(observe, jobs), lambda: None)

    def run(self) -> Summary:
        started = time.monotonic()
        first = self.state.runs
        new: list[Finding] = []
        batch = max(8, 4 * max(1, self.o.jobs))
        runner, close = self._mapper()
        last_status = 0.0
        target_seconds = 0.0
        generation_seconds = 0.0
        try:
            while True:
                if self.o.runs is not None and self.state.runs - first >= self.o.runs:
                    break
                if self.o.seconds is not None and time.monotonic() - started >= self.o.seconds:
                    break
                n = batch if self.o.runs is None else min(batch, self.o.runs - (self.state.runs - first))
                cpu = time.process_time()
                made = [self.job(k) for k in range(self.state.runs, self.state.runs + n)]
                generation_seconds += time.process_time() - cpu
                for (job, child), obs in zip(made, runner([j for j, _ in made])):
                    target_seconds += obs.seconds
                    self._judge(job, child, obs, self.state.runs, new)
                    self.state.runs += 1
                self._save_state()
                if self.o.status is not None and time.monotonic() - last_status > 0.5:
                    last_status = time.monotonic()
                    self._status(started, first)
        finally:
            close()
            self._save_state()
            self._save_hits()
            if self.o.status is not None:
                self._status(started, first)
                self.o.status.write("\n")
        return Summary(self.state.runs - first, time.monotonic() - started,
                       sorted(self.findings.values(), key=lambda f: f.id), new, len(self.state.queue),
                       len(self.state.seen), target_seconds, generation_seconds)

    def _save_hits(self) -> None:
        """Hit counts grow after a finding is written: bring its finding.json up to date."""
        for f in self.findings.values():
            path = self.o.findings / f.id / FINDING_FILE
            try:
                data = json.loads(path.read_text())
            except (OSError, ValueError):
                continue
            if data.get("hits") != f.hits:
                data["hits"] = f.hits
                path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")

    def _status(self, started: float, first: int) -> None:
        assert self.o.status is not None
        elapsed = max(time.monotonic() - started, 1e-9)
        runs = self.state.runs - first
        hits = sum(f.hits for f in self.findings.values())
        self.o.status.write(f"\r{runs} runs, {runs / elapsed:.1f}/s, {hits} findings, "
                            f"{len(self.findings)} distinct, {len(self.state.queue)} kept, {elapsed:.0f}s ")
        self.o.status.flush()

    def _judge(self, job: Job, child: Entry, obs: Observation, k: int, new: list[Finding]) -> None:
        key = _key(obs)
        if key not in self.state.seen:
            self.state.seen.add(key)
            self.state.queue.append(child)
            if len(self.state.queue) > _QUEUE_LIMIT:      # keep the seeds, drop the oldest finds
                seeds = len(seeds_for(self.kind))
                del self.state.queue[seeds]
        verdict = obs.verdict
        if verdict is None:
            return
        prelim = f"{verdict.kind}|{verdict.detail}|{obs.stderr_sig}"
        if prelim in self.prelim:
            self.findings[self.prelim[prelim]].hits += 1
            return
        frames: list[str] = []
        bt = ""
        if verdict.kind == "crash":
            frames, bt = backtrace_frames(self.o.target, job.files, job.names)
        signature = signature_of(verdict, obs, frames)
        self.prelim[prelim] = signature
        if signature in self.findings:
            self.findings[signature].hits += 1
            return
        finding = self._finding(job, child, obs, signature, frames, bt, k)
        self.findings[signature] = finding
        new.append(finding)
        write_finding(self.o.findings, finding, self.o.target)

    def _finding(self, job: Job, child: Entry, obs: Observation, signature: str, frames: list[str],
                 bt: str, k: int) -> Finding:
        assert obs.verdict is not None
        want = (obs.verdict.kind, obs.verdict.detail, obs.stderr_sig)

        def still(parts: dict[str, bytes]) -> bool:
            files, names = job_files(child.kind, parts)
            again = observe(Job(self.o.target, child.kind, files, names, (), self.o.differential))
            return again.verdict is not None and (again.verdict.kind, again.verdict.detail, again.stderr_sig) == want

        parts = child.parts
        if self.o.shrink_runs > 0:
            parts = shrink_files(child.parts, still, child.kind, self.o.shrink_runs)
        files, names = job_files(child.kind, parts)
        final = observe(Job(self.o.target, child.kind, files, names, (), self.o.differential))
        if final.verdict is None or (final.verdict.kind, final.verdict.detail, final.stderr_sig) != want:
            files, names, final = dict(job.files), dict(job.names), obs   # shrinking lost it: keep the original
        elif frames:
            _, bt2 = backtrace_frames(self.o.target, files, names)
            bt = bt2 or bt
        if self._version is None:
            self._version = self.o.target.version()
        v = final.verdict or obs.verdict
        return Finding(finding_id(signature), signature, v.kind, v.detail, v.judge, v.evidence,
                       self.o.target.command, self._version, child.kind, dict(names), dict(files),
                       list(child.notes), final.returncode, final.stderr.decode("utf-8", "replace"),
                       final.stdout_head.decode("utf-8", "replace"), list(final.codes),
                       [dict(d) for d in final.diagnostics], frames, bt, self.o.seed, k,
                       sum(len(v) for v in job.files.values()))


def run_campaign(options: Options) -> Summary:
    return Campaign(options).run()


def _on_cluster(cluster: Cluster, jobs: list[Job]) -> Iterator[Observation]:
    """The jobs' observations in job order; a worker that died is not an observation of the
    target (the mutant runs in a child process the worker supervises), so it ends the
    campaign as work that could not be carried out."""
    got: dict[int, Observation] = {}
    for i, outcome in cluster.completed(observe, [(job,) for job in jobs]):
        if isinstance(outcome, WorkerDied):
            raise UsageError(f"--dask {cluster.address}: a worker died running a mutant: {outcome.reason}")
        got[i] = outcome
    return (got[i] for i in range(len(jobs)))     # every job has its observation
