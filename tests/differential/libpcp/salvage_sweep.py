"""The salvage sweep: damaged archives in, what salvage keeps against what a perfect salvage
could keep and what libpcp itself reads, and whether every libpcp reads every output.

Inputs are fuzzed mutants (``pcpconform.fuzz.mutators.mutate_archive``) of real archives
from several writers: the kit (bundled fixtures, versions 2 and 3), libpcp_import of PCP
6.0.3, 6.3.8 and 7.2.2, pmlogger, pmlogextract and pmlogrewrite (``corpus/sources``), and
PCP's QA archives (pmlogger of many versions, some xz-compressed), each mutant maybe
compressed as its seed was; and the invalid corpus. For each input (spec/salvage.md,
SALVAGE-VERIFY-2):

* ``perfect``: the values of the original's results whose bytes are intact in the mutant,
  for metrics whose descriptor is intact (``measure.perfect_values``), and ``damaged``, how
  many of the original's records are not;
* ``recovered``: the output's values that are the original's (``kept`` all of them,
  ``altered`` those that are not: values the mutation changed and salvage could not know);
* ``invented``: output values that are not, by the raw input record they came from, values
  of the input (must be 0);
* per referee: the output opened, read forward, replayed interpolated and backwards with no
  error and the same number of values as the kit reads (``out_ok``); and libpcp's own best,
  the original's values a PMAPI forward read of the input gives before it stops.

``run_sweep`` is shared by tests/differential/test_salvage_vs_libpcp.py (a bounded run) and
benchmarks/bench_salvage.py (the full run, its tables).
"""

from __future__ import annotations

import json
import random
import shutil
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pcpconform.fixtures.fixture import load_fixture
from pcpconform.fixtures.generate import generate_archive
from pcpconform.format.pmtypes import PmID
from pcpconform.fuzz.mutators import _COMPRESSORS, mutate_archive
from pcpconform.io.files import strip_compression
from pcpconform.salvage import salvage_archive
from pcpconform.salvage.measure import Original, ValueKey, archive_values, invented_values, read_all
from pcpconform.salvage.salvage import Provenance
from tests.differential.libpcp.referees import Referee, archive_files

ROOT = Path(__file__).resolve().parents[3]
HERE = Path(__file__).resolve().parent
PM_VALUES = HERE / "pm_values.py"
PM_READ = HERE / "pm_read.py"
QA = Path("/var/lib/pcp/testsuite/archives")
#: PCP QA archives the sweep mutates: pmlogger of many versions, both archive versions, some
#: compressed, none with a validator error, none over ~100 KB (a mutant is salvaged and read
#: four times)
QA_SEEDS = ("ok-foo", "20041125", "small", "value-test", "pcp-dstat", "pcp-uptime", "eventrec-old",
            "sample-secs", "schizo-A", "dyninsts2", "ok-mv-interp", "bug_v2", "omnibus_v3",
            "omnibus-nomark_v3", "multi-xz/20150508.11.57", "20190628.06.31", "zero_disk_activity")
KIT_FIXTURES = ("example", "events", "multi-volume", "types", "lifetimes")
SOURCES = ("pmi-6-0-3-v2", "pmi-6-0-3-v3", "pmi-6-3-8-v3", "pmi-7-2-2-v3", "pmlogger-v3",
           "pmlogger-derived-v2", "pmlogextract-v3", "pmlogrewrite-v3")


@dataclass(frozen=True)
class Seed:
    name: str
    writer: str
    version: int
    base: Path                  # a readable archive, as its writer left it
    compressed: dict[str, str]  # part -> compression suffix of the seed's files


def _version(base: Path) -> int:
    meta = next(p for p in archive_files(base) if strip_compression(p.name)[0].endswith(".meta"))
    return read_all(meta)[7]


def seeds(work: Path, qa: bool = True, recorded: dict[str, Path] | None = None) -> list[Seed]:
    """The original archives: written by the kit into ``work``, the corpus's libpcp-written
    sources, (``qa``) the QA archives that are installed, and archives pmlogger ``recorded``
    for the session (tests/differential/libpcp/pmlogger.py), by name."""
    out: list[Seed] = [Seed(f"pmlogger-{name}", "pmlogger-live", _version(base), base, {})
                       for name, base in (recorded or {}).items()]
    for fixture in KIT_FIXTURES:
        for version in (2, 3):
            base = work / "seeds" / f"kit-{fixture}-v{version}" / "a"
            if not base.with_suffix(".meta").exists():
                base.parent.mkdir(parents=True, exist_ok=True)
                generate_archive(load_fixture(ROOT / "corpus" / "fixtures" / f"{fixture}.yaml"), base,
                                 version=version)
            out.append(Seed(f"kit-{fixture}-v{version}", "kit", version, base, {}))
    for name in SOURCES:
        base = ROOT / "corpus" / "sources" / name / "a"
        writer = name.split("-")[0]
        out.append(Seed(name, writer, _version(base), base, {}))
    if qa:
        for name in QA_SEEDS:
            base = QA / name
            files = archive_files(base) if base.parent.is_dir() else []
            if not files:
                continue
            comp = {}
            for p in files:
                plain, suffix = strip_compression(p.name)
                if suffix:
                    comp[plain[len(base.name) + 1:]] = suffix.lstrip(".")
            out.append(Seed(f"qa-{name.replace('/', '-')}", "pmlogger-qa", _version(base), base, comp))
    return out


def _plain_parts(seed: Seed) -> dict[str, bytes]:
    """part -> decompressed bytes of a seed's files."""
    out = {}
    for p in archive_files(seed.base):
        plain, _ = strip_compression(p.name)
        out[plain[len(seed.base.name) + 1:]] = read_all(p)
    return out


@dataclass
class Mutant:
    id: str
    seed: Seed
    files: dict[str, bytes]     # file name suffix (meta, 0, 0.xz ...) -> bytes
    notes: list[str]


def mutants(all_seeds: Sequence[Seed], count: int, rng_seed: int = 0) -> Iterator[Mutant]:
    """``count`` mutants, round-robin over the seeds, reproducible from ``rng_seed``: one
    mutation most often (what damages one record), two or three sometimes; a seed's
    compressed files compressed again as they were, mostly."""
    plain = {s.name: _plain_parts(s) for s in all_seeds}
    donors = list(plain.values())
    for k in range(count):
        seed = all_seeds[k % len(all_seeds)]
        rng = random.Random(f"{rng_seed}:{k}")
        stack = 1 if rng.random() < 0.75 else rng.choice((2, 3))
        parts, notes = mutate_archive(plain[seed.name], rng, donors, stack=stack)
        files: dict[str, bytes] = {}
        for part, data in parts.items():
            suffix = seed.compressed.get(part)
            if suffix in _COMPRESSORS and rng.random() < 0.8:
                files[f"{part}.{suffix}"] = _COMPRESSORS[suffix](data)
            else:
                files[part] = data
        yield Mutant(f"m{rng_seed}x{k:05d}", seed, files, notes)


@dataclass
class Outcome:
    """One input of the sweep and what became of it."""

    id: str
    seed: str
    writer: str
    version: int
    notes: list[str]
    compressed: bool
    damaged: int = 0                 # original records not intact in the input
    perfect: int = 0
    recovered: int = 0
    genuine: int = 0                 # output values that are the original's
    kept: int = 0
    altered: int = 0
    invented: int = 0
    #: values dropped as several values of a singular metric (SALVAGE-RESULT-4): libpcp's
    #: forward read of the input shows them, its interpolation aborts on them
    singular: int = 0
    out_values: int = 0              # values of the output, as a forward read counts them
    exit: int | None = None
    failure: str | None = None
    out_errors: int | None = None
    crash: str | None = None
    seconds: float = 0.0
    invented_detail: list[str] = field(default_factory=list)
    libpcp: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def one_record(self) -> bool:
        return self.damaged <= 1

    def as_json(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items()}


def _write(m: Mutant, where: Path) -> Path:
    where.mkdir(parents=True, exist_ok=True)
    for suffix, data in m.files.items():
        (where / f"{m.id}.{suffix}").write_bytes(data)
    return where / m.id


def salvage_one(m: Mutant, work: Path, original: Original) -> tuple[Outcome, Path, Path | None]:
    """Salvage one mutant; its outcome without libpcp's part, the input's and output's bases."""
    base = _write(m, work / "in")
    out = work / "out" / m.id
    o = Outcome(m.id, m.seed.name, m.seed.writer, m.seed.version, m.notes,
                any(strip_compression(s)[1] for s in [f".{k}" for k in m.files]))
    started = time.perf_counter()
    provenance: list[Provenance] = []
    try:
        report = salvage_archive(base, out, provenance=provenance)
    except Exception as exc:   # a UsageError is fine only when nothing of the mutant exists
        o.crash = f"{type(exc).__name__}: {exc}"
        return o, base, None
    finally:
        o.seconds = time.perf_counter() - started
    o.exit, o.failure, o.out_errors = report.exit_status, report.failure, report.out_errors
    o.singular = sum(i.values for i in report.items if i.code == "value.singular-inst")
    perfect, o.damaged = original.perfect(base)
    o.perfect = len(perfect)
    if report.failure is not None:
        return o, base, None
    kept = archive_values(out)
    o.kept = len(kept)
    o.recovered = len(kept & perfect)
    o.genuine = len(kept & original.values)
    o.altered = len(kept - original.values)
    invented = invented_values(base, out, provenance)
    o.invented, o.invented_detail = len(invented), invented[:5]
    return o, base, out


def _keys(rows: list[list[Any]]) -> set[ValueKey]:
    return {(sec * 10**9 + nsec, int(PmID(pmid)), inst, value) for sec, nsec, pmid, inst, value in rows}


def read_with(referee: Referee, bases: list[Path], *flags: str, timeout: float = 900) -> dict[str, dict[str, Any]]:
    """pm_values.py under a referee on many archives at once: base name -> its line."""
    if not bases:
        return {}
    files = [f for b in bases for f in archive_files(b)] + [PM_READ]
    proc = referee.python(PM_VALUES, *flags, *bases, files=files, timeout=timeout)
    out = {}
    for line in proc.stdout.splitlines():
        doc = json.loads(line)
        out[Path(doc["base"]).name] = doc
    return out


def libpcp_part(referee: Referee, outcomes: list[Outcome], ins: dict[str, Path], outs: dict[str, Path],
                originals: dict[str, Original]) -> None:
    """Each referee's reading of every input (its best) and every output (must be clean)."""
    read_in = read_with(referee, list(ins.values()), "--values")
    read_out = read_with(referee, list(outs.values()), "--replay")
    for o in outcomes:
        got = read_in.get(o.id, {})
        stopped = bool(got.get("open") or got.get("stop") or got.get("crash") or got.get("hang"))
        values = got.get("values") if isinstance(got.get("values"), list) else []
        genuine = len(_keys(values) & originals[o.seed].values) if values else 0
        entry: dict[str, Any] = {"in_values": len(values), "in_genuine": genuine, "in_stopped": stopped,
                                 "in_error": got.get("open") or got.get("stop") or got.get("crash")
                                 or ("hang" if got.get("hang") else None)}
        if o.id in outs:
            r = read_out.get(o.id, {})
            problem = (r.get("open") or r.get("stop") or r.get("replay") or r.get("crash")
                       or ("hang" if r.get("hang") else None) or r.get("script_error"))
            returned = (r.get("values") or 0) + (r.get("conv") or 0)
            if problem is None and returned != o.out_values:
                problem = f"{returned} values read, the kit reads {o.out_values}"
            entry["out_ok"] = problem is None
            entry["out_error"] = problem
        o.libpcp[referee.name] = entry


@dataclass
class Salvaged:
    """The salvage half of a sweep: outcomes, and the inputs and outputs to read."""

    outcomes: list[Outcome]
    ins: dict[str, Path]
    outs: dict[str, Path]
    originals: dict[str, Original]

    def read_with(self, referee: Referee) -> None:
        libpcp_part(referee, self.outcomes, self.ins, self.outs, self.originals)


def salvage_sweep(count: int, work: Path, *, rng_seed: int = 0, qa: bool = True,
                  recorded: dict[str, Path] | None = None,
                  progress: Callable[[str], None] | None = None) -> Salvaged:
    """Salvage ``count`` mutants (nothing read by libpcp yet)."""
    all_seeds = seeds(work, qa=qa, recorded=recorded)
    originals = {s.name: Original(s.base) for s in all_seeds}
    done = Salvaged([], {}, {}, originals)
    for k, m in enumerate(mutants(all_seeds, count, rng_seed)):
        o, base, out = salvage_one(m, work, originals[m.seed.name])
        if out is not None:
            o.out_values = _count_values(out)
            done.outs[o.id] = out
        done.ins[o.id] = base
        done.outcomes.append(o)
        if progress and (k + 1) % 50 == 0:
            progress(f"{k + 1}/{count} salvaged")
    return done


def run_sweep(count: int, referees: Sequence[Referee], work: Path, *, rng_seed: int = 0, qa: bool = True,
              recorded: dict[str, Path] | None = None,
              progress: Callable[[str], None] | None = None) -> list[Outcome]:
    """Salvage ``count`` mutants and read inputs and outputs with every referee."""
    done = salvage_sweep(count, work, rng_seed=rng_seed, qa=qa, recorded=recorded, progress=progress)
    for referee in referees:
        if progress:
            progress(f"reading with {referee.name}")
        done.read_with(referee)
    return done.outcomes


def _count_values(out: Path) -> int:
    """Values of the output as a PMAPI forward read counts them (duplicates included)."""
    from pcpconform.io.archive import Archive

    a = Archive(out)
    return sum(len(vs.values) for r in a.results() for vs in r.vsets)


def clean(work: Path) -> None:
    shutil.rmtree(work / "in", ignore_errors=True)
    shutil.rmtree(work / "out", ignore_errors=True)
