"""Mutants of valid generated archives, and what pmlogcheck and pcpconform make of them.

Each *defect class* is a list of deterministic mutations of a valid archive (generated from
the bundled fixtures example.yaml and events.yaml, in versions 2 and 3), found by parsing the
archive with pcpconform.corpusgen.invalid.ArchiveEdit. ``run_mutant`` writes one mutant, runs
``pmlogcheck BASE`` of one referee (tests/differential/libpcp/referees.py) and
``check_archive`` on it, and says whether each flagged it: pmlogcheck flags an archive when it
exits non-zero or prints anything, and a death by a signal (returncode < 0 in that run) is
recorded as a crash, which also counts as flagging; pcpconform flags it when it reports any
diagnostic.

    python -m tests.differential.libpcp.mutants [--referee NAME ...] [--write [FILE]]

runs every mutant and the invalid corpus against each referee's pmlogcheck, and prints (or
writes, by default to docs/pmlogcheck-comparison.md) the comparison tables. The tests run a
fixed subset of each class (``subset``) to stay within their time budget.
"""

from __future__ import annotations

import argparse
import random
import shutil
import struct
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pcpconform.check.engine import check_archive
from pcpconform.corpusgen.invalid import ArchiveEdit, build_corpus
from pcpconform.corpusgen.invalid.edit import shifted, ts_bytes
from pcpconform.fixtures import bundled_fixture
from pcpconform.fixtures.fixture import load_fixture
from pcpconform.fixtures.generate import generate_archive
from pcpconform.format.pmtypes import PmID
from pcpconform.format.schema import TYPE_DESC, TYPE_INDOM, TYPE_INDOM_V2, TYPE_LABEL, TYPE_LABEL_V2
from tests.differential.libpcp.referees import BY_NAME, REFEREES, Referee

ROOT = Path(__file__).resolve().parents[3]
DOC = ROOT / "docs" / "pmlogcheck-comparison.md"
SOURCES = ("example", "events")
VERSIONS = (2, 3)

Mutation = Callable[[ArchiveEdit], None]


# --------------------------------------------------------------------------------------------
# originals
# --------------------------------------------------------------------------------------------

_ORIGINALS: dict[tuple[str, int], Path] = {}
_TMP: list[tempfile.TemporaryDirectory[str]] = []


def original(source: str, version: int) -> Path:
    """Base name of a valid generated archive (made once per process)."""
    key = (source, version)
    if key not in _ORIGINALS:
        if not _TMP:
            _TMP.append(tempfile.TemporaryDirectory(prefix="pcpconform-mutants-"))
        base = Path(_TMP[0].name) / f"{source}-v{version}" / "a"
        generate_archive(load_fixture(bundled_fixture(source)), base, version=version)
        _ORIGINALS[key] = base
    return _ORIGINALS[key]


# --------------------------------------------------------------------------------------------
# running one mutant
# --------------------------------------------------------------------------------------------

@dataclass
class Pmlogcheck:
    """What one referee's pmlogcheck did with one archive."""

    status: int          # exit status; < 0: killed by that signal
    output: str

    @property
    def flags(self) -> bool:
        return self.status != 0 or bool(self.output)

    @property
    def crashed(self) -> bool:
        return self.status < 0


def pmlogcheck(referee: Referee, base: Path) -> Pmlogcheck:
    """``pmlogcheck BASE`` of a referee; every file beside BASE goes along (a fault may have
    renamed the archive's files, and pmlogcheck must see the directory as it is)."""
    files = sorted(p for p in base.parent.iterdir() if p.is_file())
    proc = referee.tool(["pmlogcheck", base], files=files)
    return Pmlogcheck(proc.returncode, (proc.stdout + proc.stderr).strip())


@dataclass
class Outcome:
    """What the two tools said about one mutant."""

    label: str
    referee: str
    pmlogcheck: Pmlogcheck
    codes: set[str] = field(default_factory=set)
    errors: set[str] = field(default_factory=set)

    @property
    def pmlogcheck_flags(self) -> bool:
        return self.pmlogcheck.flags

    @property
    def pcpconform_flags(self) -> bool:
        return bool(self.codes)

    @property
    def crashed(self) -> bool:
        return self.pmlogcheck.crashed

    def describe(self) -> str:
        what = (f"killed by signal {-self.pmlogcheck.status}" if self.crashed
                else f"exit {self.pmlogcheck.status}")
        return f"{self.label}: pmlogcheck {self.referee} {what}: {self.pmlogcheck.output[:300]}"


def apply(source: str, version: int, mutate: Mutation, where: Path) -> Path:
    """Write the mutant of an original into directory ``where`` (emptied first)."""
    if where.exists():
        shutil.rmtree(where)
    where.mkdir(parents=True)
    ed = ArchiveEdit(original(source, version))
    ed.originals = dict(_ORIGINALS)
    mutate(ed)
    ed.save(where / "a")
    return where / "a"


def judge(base: Path, label: str, referee: Referee) -> Outcome:
    run = pmlogcheck(referee, base)
    report = check_archive(base)
    return Outcome(label, referee.name, run, report.codes(),
                   {d.code for d in report.diagnostics if d.severity.value == "error"})


def run_mutant(source: str, version: int, label: str, mutate: Mutation, where: Path,
               referee: Referee) -> Outcome:
    return judge(apply(source, version, mutate, where), label, referee)


# --------------------------------------------------------------------------------------------
# defect classes
# --------------------------------------------------------------------------------------------

def _parts(ed: ArchiveEdit) -> list[str]:
    return ["meta", "index"] + sorted(p for p in ed.files if p.isdigit())


def _truncations(ed: ArchiveEdit) -> Iterator[tuple[str, Mutation]]:
    for part in _parts(ed):
        size = len(ed.files[part])
        cuts = {0, 1, 4, 7, 8, ed.lsize // 2, ed.lsize - 4, ed.lsize - 1, ed.lsize + 1, ed.lsize + 4,
                size - 1, size - 3, size - 4, size - 8}
        if part == "index":
            step = ed.s.index_entry_size
            cuts |= {ed.lsize + k * step + d for k in range(4) for d in (1, 8, step - 4)}
        else:
            for offset, length in ed.records(part):
                cuts |= {offset + 2, offset + 4, offset + 8, offset + length // 2, offset + length - 1}
        for cut in sorted(c for c in cuts if 0 <= c < size):
            yield f"{part} cut to {cut} bytes", _cut(part, cut)


def _cut(part: str, cut: int) -> Mutation:
    def mutate(ed: ArchiveEdit) -> None:
        del ed.files[part][cut:]
    return mutate


def _length_words(ed: ArchiveEdit) -> Iterator[tuple[str, Mutation]]:
    for part in ("meta", "0"):
        for i, (offset, length) in enumerate(ed.records(part), 1):
            for what, value in (("0", 0), ("4", 4), ("L-1", length - 1), ("L+1", length + 1),
                                ("L+4", length + 4), ("L-4", length - 4), ("0x7fffffff", 0x7FFFFFFF)):
                yield f"{part} record {i} length word {what}", _poke(part, offset, "I", value)
            yield f"{part} record {i} trailer L+4", _poke(part, offset + length - 4, "I", length + 4)
            yield (f"{part} record {i} both length words L-4",
                   _pokes(part, [(offset, "I", length - 4), (offset + length - 8, "I", length - 4)]))


def _poke(part: str, offset: int, fmt: str, value: int) -> Mutation:
    return _pokes(part, [(offset, fmt, value)])


def _pokes(part: str, edits: list[tuple[int, str, int]]) -> Mutation:
    def mutate(ed: ArchiveEdit) -> None:
        for offset, fmt, value in edits:
            ed.poke(part, offset, fmt, value)
    return mutate


def _value_words(ed: ArchiveEdit) -> Iterator[tuple[int, int, int, int]]:
    """(record, vset, value, byte offset of the value word) of every DPTR/SPTR value."""
    for i, (offset, _) in enumerate(ed.records("0"), 1):
        data = ed.files["0"]
        pos = offset + ed.s.result_header_size
        numpmid = struct.unpack_from(">i", data, pos - 4)[0]
        for k in range(numpmid):
            numval = struct.unpack_from(">i", data, pos + 4)[0]
            pos += 8
            if numval <= 0:
                continue
            valfmt = struct.unpack_from(">I", data, pos)[0]
            pos += 4
            for j in range(numval):
                if valfmt:
                    yield i, k, j, pos + 8 * j + 4
            pos += 8 * numval


def _dptrs(ed: ArchiveEdit) -> Iterator[tuple[str, Mutation]]:
    for i, k, j, at in _value_words(ed):
        word = ed.peek("0", at, "I")
        for what, value in (("0", 0), ("+1", word + 1), ("-1", word - 1), ("2", 2), ("0xffff", 0xFFFF),
                            ("0xffffffff", 0xFFFFFFFF)):
            yield f"result {i} vset {k} value {j} index {what}", _poke("0", at, "I", value & 0xFFFFFFFF)


def _timestamps(ed: ArchiveEdit) -> Iterator[tuple[str, Mutation]]:
    recs = ed.records("0")
    for i in range(2, len(recs) + 1):
        for delta in (-1, -3600, -0.000001):
            yield f"result {i} {delta:+g} s before the previous", _result_time(i, delta)
    for i in range(1, len(recs) + 1):
        frac_at = recs[i - 1][0] + 4 + (4 if ed.version == 2 else 8)
        yield f"result {i} fraction 2e9", _poke("0", frac_at, "i", 2_000_000 if ed.version == 2 else 2_000_000_000)
        yield f"result {i} fraction -1", _poke("0", frac_at, "i", -1)
    for part in _parts(ed):
        yield f"{part} label start +1 s", _label_start(part, 1)
        yield f"{part} label start -1 s", _label_start(part, -1)
    for n in range(1, len(ed.entries()) + 1):
        yield f"index entry {n} 1 h earlier", _entry_time(n, -3600)
        yield f"index entry {n} 1 h later", _entry_time(n, 3600)
    for i in range(1, len(ed.records("meta")) + 1):
        if ed.meta(i).type in (TYPE_INDOM_V2, TYPE_INDOM, TYPE_LABEL_V2, TYPE_LABEL):
            yield f"meta record {i} 1 h earlier", _meta_time(i, -3600)


def _result_time(i: int, delta: float) -> Mutation:
    def mutate(ed: ArchiveEdit) -> None:
        prev = ed.s.result.parse(ed.record("0", i - 1)[1][4:-4]).timestamp
        offset = ed.records("0")[i - 1][0]
        stamp = ts_bytes(ed.version, shifted(prev, delta))
        ed.files["0"][offset + 4:offset + 4 + len(stamp)] = stamp
    return mutate


def _label_start(part: str, delta: int) -> Mutation:
    def mutate(ed: ArchiveEdit) -> None:
        at = ed.label_field("start")
        ed.poke(part, at, "I", ed.peek(part, at, "I") + delta)
    return mutate


def _entry_time(n: int, delta: int) -> Mutation:
    def mutate(ed: ArchiveEdit) -> None:
        e = ed.entry(n)
        e.timestamp = shifted(e.timestamp, delta)
        ed.put_entry(n, e)
    return mutate


def _meta_time(i: int, delta: int) -> Mutation:
    def mutate(ed: ArchiveEdit) -> None:
        rec = ed.meta(i)
        rec.body.timestamp = shifted(rec.body.timestamp, delta)
        ed.put_meta(i, rec)
    return mutate


def _descs(ed: ArchiveEdit) -> Iterator[tuple[str, Mutation]]:
    for i, (offset, _) in enumerate(ed.records("meta"), 1):
        if ed.meta(i).type != TYPE_DESC:
            continue
        for value in (-2, 11, 42, 0x7FFFFFFF):
            yield f"desc {i} type {value}", _poke("meta", offset + 12, "i", value)
        for value in (0, 2, 5, -1):
            yield f"desc {i} sem {value}", _poke("meta", offset + 20, "i", value)
        # dimSpace 3; dimTime -3; scaleSpace 9 (dimSpace 1); scaleTime 6 (dimTime 1);
        # scaleSpace 1 with dimSpace 0; low byte 0xff; every bit set
        for value in (0x30000000, 0x0D000000, 0x10090000, 0x01006000, 0x00010000, 0x000000FF,
                      0xFFFFFFFF):
            yield f"desc {i} units 0x{value:08x}", _poke("meta", offset + 24, "I", value)
        yield f"desc {i} indom of domain 61", _poke("meta", offset + 16, "I", (61 << 22) | 1)


def _undefined_pmids(ed: ArchiveEdit) -> Iterator[tuple[str, Mutation]]:
    unknown = int(PmID("60.0.99"))
    for i, (offset, length) in enumerate(ed.records("0"), 1):
        if length == ed.s.mark_size:
            continue
        data = ed.files["0"]
        pos = offset + ed.s.result_header_size
        numpmid = struct.unpack_from(">i", data, pos - 4)[0]
        for k in range(numpmid):
            yield f"result {i} vset {k} pmID 60.0.99", _poke("0", pos, "I", unknown)
            yield f"result {i} vset {k} pmID 0", _poke("0", pos, "I", 0)
            numval = struct.unpack_from(">i", data, pos + 4)[0]
            pos += 8 + (4 + 8 * numval if numval > 0 else 0)


def _index_offsets(ed: ArchiveEdit) -> Iterator[tuple[str, Mutation]]:
    meta_size = len(ed.files["meta"])
    vol_size = len(ed.files["0"])
    for n, e in enumerate(ed.entries(), 1):
        for what, fld, value in (
                ("off_meta 0", "off_meta", 0), ("off_meta label-1", "off_meta", ed.lsize - 1),
                ("off_meta +1", "off_meta", e.off_meta + 1), ("off_meta end+1", "off_meta", meta_size + 1),
                ("off_meta huge", "off_meta", 0x7FFFFFF0), ("off_meta -1", "off_meta", -1),
                ("off_data 0", "off_data", 0), ("off_data label-1", "off_data", ed.lsize - 1),
                ("off_data +4", "off_data", e.off_data + 4), ("off_data end+4", "off_data", vol_size + 4),
                ("off_data huge", "off_data", 0x7FFFFFF0), ("off_data -1", "off_data", -1),
                ("vol -1", "vol", -1), ("vol 7", "vol", 7)):
            yield f"index entry {n} {what}", _entry_field(n, fld, value)


def _entry_field(n: int, fld: str, value: int) -> Mutation:
    def mutate(ed: ArchiveEdit) -> None:
        e = ed.entry(n)
        e[fld] = value
        ed.put_entry(n, e)
    return mutate


def _labels(ed: ArchiveEdit) -> Iterator[tuple[str, Mutation]]:
    for part in _parts(ed):
        yield f"{part} magic byte 0 flipped", _xor(part, 4, 0x01)
        yield f"{part} magic 0x50052700", _xor(part, 6, 0x01)
        for version in (0, 1, 4, 0xFF, 5 - ed.version):
            yield f"{part} version byte {version}", _set_byte(part, 7, version)
        for vol in (-3, -2, -1, 0, 1, 99):
            yield f"{part} label vol {vol}", _poke(part, ed.label_field("vol"), "i", vol)
        yield f"{part} label pid +1", _xor(part, ed.label_field("pid") + 3, 0x01)
        yield f"{part} label hostname changed", _xor(part, ed.label_field("hostname"), 0x20)
        yield f"{part} label length +4", _poke(part, 0, "I", ed.lsize + 4)
        yield f"{part} label trailer +4", _poke(part, ed.lsize - 4, "I", ed.lsize + 4)
        if ed.version == 3:
            yield f"{part} features bit 0", _poke(part, ed.label_field("features"), "I", 1)


def _xor(part: str, offset: int, mask: int) -> Mutation:
    def mutate(ed: ArchiveEdit) -> None:
        ed.files[part][offset] ^= mask
    return mutate


def _set_byte(part: str, offset: int, value: int) -> Mutation:
    def mutate(ed: ArchiveEdit) -> None:
        ed.files[part][offset] = value
    return mutate


def _stray_bytes(ed: ArchiveEdit) -> Iterator[tuple[str, Mutation]]:
    for part in _parts(ed):
        for n in (1, 2, 3, 4, 5, 7, 8, 12, 16):
            for fill in (0x00, 0xFF):
                yield f"{part} + {n} bytes of 0x{fill:02x}", _append(part, bytes([fill]) * n)


def _append(part: str, data: bytes) -> Mutation:
    def mutate(ed: ArchiveEdit) -> None:
        ed.files[part] += data
    return mutate


def _byte_flips(ed: ArchiveEdit) -> Iterator[tuple[str, Mutation]]:
    """A fixed pseudo-random sample of single-byte flips (the hypothesis test draws more)."""
    rng = random.Random(f"{ed.version}-{len(ed.files['0'])}")
    parts = _parts(ed)
    for _ in range(60):
        part = rng.choice(parts)
        offset = rng.randrange(len(ed.files[part]))
        mask = rng.randrange(1, 256)
        yield f"{part} byte {offset} ^ 0x{mask:02x}", _xor(part, offset, mask)


#: defect class -> (description, generator of (label, mutation))
CLASSES: dict[str, tuple[str, Callable[[ArchiveEdit], Iterator[tuple[str, Mutation]]]]] = {
    "truncation": ("a file cut short: inside its label, inside a record's header, body or trailer, "
                   "or in an index entry", _truncations),
    "length-word": ("a record's leading or trailing length word changed (0, 4, L+-1, L+-4, huge)",
                    _length_words),
    "dptr": ("a DPTR/SPTR value index changed (0, +-1 word, into the header, past the record)", _dptrs),
    "timestamps": ("results out of order, fractions out of range, label start times differing, "
                   "index and .meta timestamps moved", _timestamps),
    "desc": ("a descriptor's type, semantics, units or indom domain changed to bad values", _descs),
    "undefined-pmid": ("a value set's pmID replaced by one with no descriptor (60.0.99, 0)",
                       _undefined_pmids),
    "index-offsets": ("an index entry's off_meta, off_data or volume set before the label, past the "
                      "end, off a record boundary or negative", _index_offsets),
    "label": ("label magic, version, volume, pid, hostname, length words or v3 feature bits changed",
              _labels),
    "stray-bytes": ("1 to 16 bytes (zeros or 0xff) appended to a file", _stray_bytes),
    "byte-flip": ("a fixed sample of 60 single-byte xor flips per archive", _byte_flips),
}


def mutants(cls: str, source: str, version: int) -> list[tuple[str, Mutation]]:
    """The mutants of a class for one original; mutations that change nothing are dropped."""
    ed = ArchiveEdit(original(source, version))
    out = []
    for label, mutate in CLASSES[cls][1](ed):
        copy = ArchiveEdit(original(source, version))
        copy.originals = dict(_ORIGINALS)
        mutate(copy)
        if copy.files != ed.files or copy.extra:
            out.append((label, mutate))
    return out


def subset(cases: Sequence[tuple[str, Mutation]], limit: int) -> list[tuple[str, Mutation]]:
    """At most ``limit`` cases, evenly spread over the list (fixed: no randomness)."""
    if len(cases) <= limit:
        return list(cases)
    return [cases[k * len(cases) // limit] for k in range(limit)]


# --------------------------------------------------------------------------------------------
# the comparison tables
# --------------------------------------------------------------------------------------------

@dataclass
class RefereeTally:
    """One referee's pmlogcheck over one defect class."""

    flags: int = 0
    crashes: int = 0
    missed: list[str] = field(default_factory=list)       # pmlogcheck flags, pcpconform silent


@dataclass
class ClassResult:
    mutants: int = 0
    pcpconform: int = 0
    pcpconform_errors: int = 0
    codes: Counter[str] = field(default_factory=Counter)
    referees: dict[str, RefereeTally] = field(default_factory=dict)
    only_ours: list[str] = field(default_factory=list)    # pcpconform flags, no pmlogcheck does
    neither: list[str] = field(default_factory=list)
    differ: list[str] = field(default_factory=list)       # the pmlogcheck versions disagree


def _status(run: Pmlogcheck) -> str:
    if run.crashed:
        return f"killed by signal {-run.status}"
    return "flags" if run.flags else "silent"


def run_classes(work: Path, referees: Sequence[Referee]) -> dict[str, ClassResult]:
    results: dict[str, ClassResult] = {}
    for cls in CLASSES:
        res = results[cls] = ClassResult(referees={r.name: RefereeTally() for r in referees})
        for source in SOURCES:
            for version in VERSIONS:
                for label, mutate in mutants(cls, source, version):
                    base = apply(source, version, mutate, work / "m")
                    report = check_archive(base)
                    ours = bool(report.diagnostics)
                    name = f"{source} v{version}: {label}"
                    res.mutants += 1
                    res.pcpconform += ours
                    res.pcpconform_errors += report.errors > 0
                    res.codes.update(report.codes())
                    runs = {r.name: pmlogcheck(r, base) for r in referees}
                    for ref, run in runs.items():
                        tally = res.referees[ref]
                        tally.flags += run.flags
                        tally.crashes += run.crashed
                        if run.flags and not ours:
                            tally.missed.append(f"{name}: {run.output[:120]}")
                    if ours and not any(run.flags for run in runs.values()):
                        res.only_ours.append(f"{name} ({', '.join(sorted(report.codes()))})")
                    if not ours and not any(run.flags for run in runs.values()):
                        res.neither.append(name)
                    if len({_status(run) for run in runs.values()}) > 1:
                        res.differ.append(f"{name} (" + ", ".join(
                            f"{ref}: {_status(run)}" for ref, run in runs.items()) + ")")
    return results


@dataclass
class CorpusRow:
    name: str
    fault: str
    expect: list[str]
    ours: list[bool] = field(default_factory=list)
    flags: dict[str, list[bool]] = field(default_factory=dict)
    crashes: dict[str, int] = field(default_factory=dict)


def run_corpus(work: Path, referees: Sequence[Referee]) -> list[CorpusRow]:
    manifest = build_corpus(work / "corpus")
    rows: dict[str, CorpusRow] = {}
    for entry in manifest["cases"]:
        stem = entry["name"].rsplit("-v", 1)[0]
        base = work / "corpus" / entry["archive"]
        report = check_archive(base, **entry.get("options", {}))
        row = rows.setdefault(stem, CorpusRow(stem, entry["fault"], entry["expect"],
                                              flags={r.name: [] for r in referees},
                                              crashes={r.name: 0 for r in referees}))
        row.ours.append(bool(report.diagnostics))
        for r in referees:
            run = pmlogcheck(r, base)
            row.flags[r.name].append(run.flags)
            row.crashes[r.name] += run.crashed
    return list(rows.values())


def _share(n: int, total: int) -> str:
    if total == 0:
        return "-"
    if n == total:
        return f"yes ({n}/{total})"
    if n == 0:
        return f"no (0/{total})"
    return f"partly ({n}/{total})"


def _examples(items: list[str], limit: int) -> str:
    return "; ".join(items[:limit]) + ("; ..." if len(items) > limit else "")


#: what pmlogcheck reports that ``pcpconform check`` does not (measured by
#: tests/differential/test_check_vs_pmlogcheck.py::test_what_pmlogcheck_reports_that_check_does_not)
NOT_CHECKED = """## What pmlogcheck reports that `pcpconform check` does not

* **A derived metric's instance domain of another domain.** On the valid corpus case
  `pmlogger-derived-v2` (pmlogger 6.0.3 logging a derived metric, `corpus.load_x10`, pmID
  511.2048.3, over an operand with instance domain 60.2), pmlogcheck 6.0.3 prints
  `a.meta: corpus.load_x10 [511.2048.3]: domain of pmid (511) != domain of indom (60)` and
  exits 0; pmlogcheck 6.3.8 and 7.2.2 print nothing. `pcpconform check` reports nothing
  either: a logged derived metric (domain 511, cluster bit 11) takes its operands' instance
  domain (FMT-CONV-9, FMT-DESC-7), which libpcp reads and replays as any other, so the
  warning `desc.indom-domain` is not given for it. (pmlogcheck 5.2.6 was not measured: no
  PCP 5 referee is installed.)

Nothing else: on every mutant and corpus case above that some pmlogcheck flags,
`pcpconform check` reports a diagnostic too.
"""


def render(classes: dict[str, ClassResult], corpus_rows: list[CorpusRow], referees: Sequence[Referee]) -> str:
    names = [r.name for r in referees]
    heads = [f"pmlogcheck {r.version}" for r in referees]
    versions = ", ".join(f"{r.version} ({r.name}, Debian {r.suite})" for r in referees)
    lines = [
        "# pmlogcheck and `pcpconform check` compared",
        "",
        "Both tools were run on damaged copies of valid archives that `pcpconform generate` writes",
        "from the bundled fixtures `example.yaml` and `events.yaml`, in versions 2 and 3. pmlogcheck",
        f"is that of each reference libpcp, PCP {versions}, run as `pmlogcheck BASE`;",
        "it *flags* an archive when it exits non-zero, is killed by a signal (a *crash*, as measured",
        "in that run), or prints anything. `pcpconform check` flags an archive when it reports any",
        "diagnostic. The tables come from an actual run:",
        "",
        "```sh",
        "python -m tests.differential.libpcp.mutants --write docs/pmlogcheck-comparison.md",
        "```",
        "",
        "`tests/differential/test_check_vs_pmlogcheck.py` runs, against each referee, a fixed subset",
        "of these mutants (evenly spread over each class), the invalid corpus and 150 random byte",
        "flips, and fails if that referee's pmlogcheck flags (or crashes on) an archive that",
        "`pcpconform check` passes as clean; it also checks that archives written by each referee's",
        "libpcp_import check without errors and pass that pmlogcheck.",
        "",
        "## Defect classes",
        "",
        "| defect class | mutants | " + " | ".join(f"{h} catches?" for h in heads)
        + " | pcpconform catches? | pcpconform errors | most frequent codes |",
        "|---|---|" + "---|" * len(heads) + "---|---|---|",
    ]
    for cls, res in classes.items():
        codes = ", ".join(f"`{c}`" for c, _ in res.codes.most_common(6))
        theirs = " | ".join(_share(res.referees[n].flags, res.mutants) for n in names)
        lines.append(f"| **{cls}**: {CLASSES[cls][0]} | {res.mutants} | {theirs} | "
                     f"{_share(res.pcpconform, res.mutants)} | {res.pcpconform_errors} | {codes} |")
    total = sum(r.mutants for r in classes.values())
    lines += ["", f"{total} mutants in all.", "",
              "### pmlogcheck crashes", "",
              "Mutants on which pmlogcheck was killed by a signal (each counts as flagged above).", "",
              "| defect class | " + " | ".join(heads) + " |", "|---|" + "---|" * len(heads)]
    for cls, res in classes.items():
        lines.append(f"| **{cls}** | " + " | ".join(str(res.referees[n].crashes) for n in names) + " |")
    crash_totals = ", ".join(f"{h}: {sum(res.referees[n].crashes for res in classes.values())}"
                             for n, h in zip(names, heads))
    lines += ["", f"In all: {crash_totals}.", ""]
    for n, h in zip(names, heads):
        missed = [m for res in classes.values() for m in res.referees[n].missed]
        lines.append(f"Mutants {h} flags but `pcpconform check` does not: "
                     + ("; ".join(missed) if missed else "none") + ".")
    lines += ["", "### Where the pmlogcheck versions differ", "",
              "Mutants on which the referees' pmlogcheck do not all do the same (flag, stay silent, or",
              "die by a signal): the number per class, and up to six examples.", ""]
    differ = False
    for cls, res in classes.items():
        if res.differ:
            differ = True
            lines.append(f"* **{cls}** ({len(res.differ)}): " + _examples(res.differ, 6))
    if not differ:
        lines.append("None: every pmlogcheck version gave the same verdict on every mutant.")
    lines += ["", "### Flagged by `pcpconform check` only", "",
              "Mutants no pmlogcheck version flags: the number per class, and up to four examples",
              "with the codes reported.", ""]
    for cls, res in classes.items():
        if res.only_ours:
            lines.append(f"* **{cls}** ({len(res.only_ours)}): " + "; ".join(res.only_ours[:4]))
    lines += ["", "### Flagged by neither tool", "",
              "Not every mutant is a defect: a flipped byte inside a value, a name or a help text, or",
              "an index entry moved to a later time, can leave a valid archive.", ""]
    for cls, res in classes.items():
        if res.neither:
            lines.append(f"* **{cls}** ({len(res.neither)}): " + _examples(res.neither, 6))
    lines += ["", NOT_CHECKED.rstrip("\n")]
    lines += [
        "",
        "## The invalid corpus",
        "",
        "Each one-fault archive of the invalid corpus (`python -m pcpconform.corpusgen.invalid`, see",
        "`corpus/invalid/README.md`), in every version it is built for. *(crashes)* marks a",
        "pmlogcheck killed by a signal on at least one version.",
        "",
        "| case | fault | " + " | ".join(heads) + " | pcpconform catches? | expected codes |",
        "|---|---|" + "---|" * len(heads) + "---|---|",
    ]
    for row in corpus_rows:
        count = len(row.ours)
        theirs = " | ".join(_share(sum(row.flags[r]), count) + (" (crashes)" if row.crashes[r] else "")
                            for r in names)
        codes = ", ".join(f"`{c}`" for c in row.expect)
        fault = row.fault.replace("|", "\\|")
        lines.append(f"| `{row.name}` | {fault} | {theirs} | {_share(sum(row.ours), count)} | {codes} |")
    ours = sum(1 for r in corpus_rows if all(r.ours))
    caught = ", ".join(f"{h} {sum(1 for r in corpus_rows if any(r.flags[n]))}" for n, h in zip(names, heads))
    lines += ["", f"Of the {len(corpus_rows)} corpus faults, pmlogcheck flags (in at least one version): "
              f"{caught}; `pcpconform check` flags {ours} in every version. Whether it reports exactly "
              "the expected codes is tested by `tests/unit/test_invalid_corpus.py`."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.differential.libpcp.mutants")
    parser.add_argument("--write", nargs="?", const=str(DOC), metavar="FILE",
                        help="write the comparison to FILE (default docs/pmlogcheck-comparison.md)")
    parser.add_argument("--referee", action="append", choices=sorted(BY_NAME),
                        help="run this referee's pmlogcheck (repeatable; default: all three)")
    args = parser.parse_args(argv)
    referees = [BY_NAME[n] for n in args.referee] if args.referee else list(REFEREES)
    missing = [f"{r.name}: {r.why_missing()}" for r in referees if not r.available()]
    if missing:
        print("\n".join(missing), file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="pcpconform-compare-") as tmp:
        text = render(run_classes(Path(tmp), referees), run_corpus(Path(tmp), referees), referees)
    if args.write:
        Path(args.write).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
