"""Directories of MMV files as each referee's MMV PMDA (under dbpmda) serves them, against
the kit's model of it (``pcpconform.mmv.pmda.pmda_export``) and its directory check.

Each seed draws two to four files that share clusters (0, chosen by the PMDA, included),
serials and items, with names from a small vocabulary of nested names (``p``, ``p.q``,
``p.q.r``, ...), NOPREFIX files whose names land in other files' namespaces and the PMDA's
own ``mmv.control`` one. dbpmda answers, for every name any file could export, its
descriptor; for every PMID, its values; for every InDom, its instances; for every exported
name, its help text. The model must give the same answers (MMV-ID-3, MMV-IMPL-DIR-1,
MMV-IMPL-CONTROL), and ``check_mmv_directory`` must report an error exactly when the
directory serves something other than its files would alone (MMV-CHK-DIR-1).
"""

from __future__ import annotations

import random
import struct
from pathlib import Path
from typing import Any

import pytest

from pcpconform.check.mmv import check_mmv_directory
from pcpconform.check.rules import Severity
from pcpconform.format.pmtypes import PmUnits
from pcpconform.mmv import Indom, Instance, Metric, MmvFile, Value, build_mmv
from pcpconform.mmv import model as mm
from pcpconform.mmv.pmda import pmda_export
from pcpconform.mmv.pmns import CONTROL_NAMES, CONTROL_NAMES_PCP7
from tests.differential.libpcp.mmv_pmda import Observation, PmdaDesc, observe
from tests.differential.libpcp.referees import Referee

pytestmark = [pytest.mark.libpcp]

SEEDS = tuple(range(1, 9))
NAMES = ("p", "p.q", "p.q.r", "x", "x.y", "b", "b.x", "c.x", "s")
NOPREFIX_NAMES = ("control.new", "control.reload", "control.metrics", "control", "a.p")
FILES = ("a", "b", "c", "d")
TYPES = {mm.TYPE_U32: "32-bit unsigned int", mm.TYPE_U64: "64-bit unsigned int",
         mm.TYPE_DOUBLE: "double", mm.TYPE_STRING: "string"}
TOKENS = {"u32": mm.TYPE_U32, "u64": mm.TYPE_U64, "double": mm.TYPE_DOUBLE, "string": mm.TYPE_STRING,
          "64": mm.TYPE_I64, "32": mm.TYPE_I32}
PROFILES = {"pcp-6.0.3": "pcp-6.0", "pcp-6.3": "pcp-6.3", "pcp-7": "pcp-7"}
COUNTS = (PmUnits(dimCount=1).to_word(), 0)


def draw_directory(rng: random.Random) -> dict[str, MmvFile]:
    files = {}
    for fname in sorted(rng.sample(FILES, rng.randint(2, 4))):
        noprefix = rng.random() < 0.35
        serials = rng.sample((1, 2, 3), rng.randint(0, 2))
        indoms = tuple(Indom(s, tuple(Instance(i, f"{fname}{s}-{i}")
                                      for i in sorted(rng.sample(range(4), rng.randint(1, 3)))),
                             f"indom {fname}{s}") for s in serials)
        vocabulary = NAMES + (NOPREFIX_NAMES if noprefix else ())
        names = rng.sample(vocabulary, rng.randint(1, 5))
        items = [rng.randint(1, 6) for _ in names]
        metrics = []
        for name, item in zip(names, items):
            mtype = rng.choice(tuple(TYPES))
            indom = rng.choice([0, *serials])
            owners: list[int | None] = [None] if indom == 0 else \
                [i.internal for i in next(d for d in indoms if d.serial == indom).instances]
            values = tuple(
                Value(inst, struct.pack("<q", 3), 0, f"{fname}{item}") if mtype == mm.TYPE_STRING
                else Value.of(mtype, rng.randint(0, 10**6) if mtype != mm.TYPE_DOUBLE
                              else rng.random(), inst) for inst in owners)
            metrics.append(Metric(name, item, mtype, rng.choice((mm.SEM_COUNTER, mm.SEM_INSTANT)),
                                  rng.choice(COUNTS), indom, f"{fname}:{name}", None, values))
        files[fname] = MmvFile(1, 1 << 32, 1 << 32, mm.FLAG_NOPREFIX if noprefix else 0, 0,
                               rng.choice((0, 5, 5, 6)), indoms, tuple(metrics))
    return files


def candidates(files: dict[str, MmvFile]) -> list[str]:
    """Every name a file of the directory could export."""
    return sorted({mm.exported_name(f, m.name, mmv.flags) for f, mmv in files.items()
                   for m in mmv.metrics})


def crashing(export: Any) -> set[str]:
    """The PMIDs whose fetch the model says kills the PMDA (MMV-IMPL-DIR-CRASH)."""
    return {p for p, vs in export.values.items() if isinstance(vs, list)
            and any("crash" in v for _, v in vs)}


def pmda_desc(pmid: str, desc: dict[str, Any]) -> PmdaDesc:
    return PmdaDesc(pmid, TYPES[TOKENS[desc["type"]]], desc["indom"], desc["sem"],
                    str(PmUnits.from_word(int(desc["units"], 16))))


def printed(value: dict[str, Any]) -> str:
    """dbpmda's text of a value the model tags (32-bit in place: word, float, hex)."""
    if value["type"] == "string":
        return f'"{value["value"]}"'
    if value["type"] in ("u32", "32"):
        word = int(value["value"]) & 0xFFFFFFFF
        as_float = struct.unpack("<f", struct.pack("<I", word))[0]
        return f"{word}{'' if as_float != as_float else f' {as_float:.8g}'} 0x{word:x}"
    if value["type"] == "double":
        return f"{struct.unpack('>d', bytes.fromhex(value['value'][2:]))[0]:.16g}"
    return str(value["value"])


_SEEN: dict[tuple[str, int], tuple[dict[str, MmvFile], Observation]] = {}


def observed(referee: Referee, seed: int) -> tuple[dict[str, MmvFile], Observation]:
    key = (referee.name, seed)
    if key not in _SEEN:
        files = draw_directory(random.Random(seed))
        export = pmda_export(sorted(files.items()), PROFILES[referee.name])
        # a PMID whose fetch kills the PMDA is fetched on its own (test_crash_as_the_model_says)
        pmids = sorted({f"70.{c}.{i}" for c in set(export.clusters.values()) for i in range(1, 7)}
                       - crashing(export))
        _SEEN[key] = files, observe(
            referee, {f: build_mmv(m) for f, m in files.items()}, descs=candidates(files),
            indoms=sorted(export.indoms), fetch=pmids, texts=sorted(export.names))
    return _SEEN[key]


@pytest.mark.parametrize("seed", SEEDS)
def test_the_pmda_serves_a_directory_as_the_model_says(referee: Referee, seed: int) -> None:
    files, obs = observed(referee, seed)
    view = obs.pmda
    assert view.run.status == 0 and not view.run.crashed, view.run.output[-2000:]
    profile = PROFILES[referee.name]
    export = pmda_export(sorted(files.items()), profile)
    control = set(CONTROL_NAMES + (CONTROL_NAMES_PCP7 if profile == "pcp-7" else ()))
    assert sorted(view.names) == sorted(set(export.names) | control), referee.name
    for name in candidates(files):
        pmid = export.names.get(name)
        want: PmdaDesc | str = "Unknown metric name" if pmid is None else \
            pmda_desc(pmid, export.descs[pmid])
        if name in control:
            continue
        assert view.descs[name] == want, (referee.name, name)
    for pmid, got in view.values.items():
        want_values = export.values.get(pmid)
        if want_values is None:
            assert isinstance(got, str), (referee.name, pmid, got)
            continue
        assert isinstance(want_values, list) and isinstance(got, list), (referee.name, pmid, got)
        known = [(i, printed(v)) for i, v in want_values if "unpredictable" not in v]
        assert [x for x in got if x[0] in {i for i, _ in known}] == known, (referee.name, pmid)
        assert [i for i, _ in got] == [i for i, _ in want_values], (referee.name, pmid)
    for indom, instances in export.indoms.items():
        assert view.instances[indom] == instances, (referee.name, indom)
    for name, pmid in export.names.items():
        assert view.texts[name] == (export.texts[pmid][0], None), (referee.name, name)


def test_a_string_and_a_number_under_one_pmid_crash_the_pmda(referee: Referee) -> None:
    """MMV-IMPL-DIR-CRASH: two files of one cluster with a u64 and a STRING metric of one
    item: the descriptor is the STRING's (the last file's), the value the u64's (the first
    file's), which the PMDA hands on as a string pointer."""
    number = Metric("n", 1, mm.TYPE_U64, mm.SEM_INSTANT, 0, 0, None, None, (Value.of(mm.TYPE_U64, 12345),))
    text = Metric("s", 1, mm.TYPE_STRING, mm.SEM_INSTANT, 0, 0, None, None,
                  (Value(None, struct.pack("<q", 2), 0, "hi"),))
    files = {"a": MmvFile(1, 1 << 32, 1 << 32, 0, 0, 5, (), (number,)),
             "b": MmvFile(1, 1 << 32, 1 << 32, 0, 0, 5, (), (text,))}
    export = pmda_export(sorted(files.items()), PROFILES[referee.name])
    assert crashing(export) == {"70.5.1"}
    view = observe(referee, {f: build_mmv(m) for f, m in files.items()}, descs=["mmv.a.n"],
                   fetch=["70.5.1"], traverse=False).pmda
    assert view.descs["mmv.a.n"] == PmdaDesc("70.5.1", "string", None, "instant", "none")
    assert view.run.signal == "SIGSEGV", (referee.name, view.run.status)
    # swapped, the number's descriptor reads the string buffer's address: no crash
    swapped = {"a": files["b"], "b": files["a"]}
    view = observe(referee, {f: build_mmv(m) for f, m in swapped.items()}, fetch=["70.5.1"],
                   traverse=False).pmda
    assert not view.run.crashed and isinstance(view.values["70.5.1"], list)


def alone(files: dict[str, MmvFile], profile: str) -> dict[str, Any]:
    """name -> what the PMDA serves under it when each file is alone in its directory."""
    out: dict[str, Any] = {}
    for f, mmv in files.items():
        e = pmda_export([(f, mmv)], profile)
        out.update({n: served(e, p) for n, p in e.names.items()})
        for d in mmv.indoms:
            out[f"indom {f} {d.serial}"] = e.indoms.get(str(mm.exported_indom(e.clusters[f], d.serial)))
    return out


def served(export: Any, pmid: str) -> Any:
    """What a name serves, but its InDom's number (a file of cluster 0 gets another cluster
    beside others)."""
    desc = {k: v for k, v in export.descs[pmid].items() if k != "indom"}
    return desc, export.values[pmid], export.texts[pmid]


@pytest.mark.parametrize("seed", SEEDS)
def test_the_check_flags_what_the_directory_changes(seed: int, tmp_path: Path) -> None:
    """An error across files exactly when a name is served otherwise than its file alone
    serves it (under PCP 7, the kit's profile for its checks), or not at all."""
    files = draw_directory(random.Random(seed))
    for f, mmv in files.items():
        (tmp_path / f).write_bytes(build_mmv(mmv))
    reports = {Path(r.archive).name: r for r in check_mmv_directory(tmp_path)}
    alone_reports = {f: reports_alone for f in files
                     for reports_alone in [_alone_errors(tmp_path, f, files[f])]}
    cross = {f: {d.code for d in r.diagnostics if d.severity == Severity.ERROR} - alone_reports[f]
             for f, r in reports.items()}
    export = pmda_export(sorted(files.items()))
    together = {n: served(export, p) for n, p in export.names.items()}
    together.update({f"indom {f} {d.serial}": export.indoms.get(str(mm.exported_indom(c, d.serial)))
                     for f, c in export.clusters.items() for d in files[f].indoms})
    changed = any(together.get(n) != what for n, what in alone(files, "pcp-7").items())
    assert bool(any(cross.values())) == changed, (seed, cross)


def _alone_errors(tmp: Path, name: str, mmv: MmvFile) -> set[str]:
    where = tmp / "alone" / name
    where.mkdir(parents=True)
    (where / name).write_bytes(build_mmv(mmv))
    (report,) = check_mmv_directory(where)
    return {d.code for d in report.diagnostics if d.severity == Severity.ERROR}


def test_seeds_reach_every_case() -> None:
    """The seeds draw shared clusters, colliding items, merged InDoms, nested names across
    and within files, and the control names."""
    seen: set[str] = set()
    for seed in SEEDS:
        files = draw_directory(random.Random(seed))
        export = pmda_export(sorted(files.items()))
        clusters = list(export.clusters.values())
        if len(set(clusters)) < len(clusters):
            seen.add("shared cluster")
        names = candidates(files)
        if any(a != b and b.startswith(a + ".") for a in names for b in names):
            seen.add("nested names")
        if any(n.startswith("mmv.control.") for n in names):
            seen.add("control names")
        if len(export.names) < len(names):
            seen.add("a name not exported")
        keys = [str(mm.exported_indom(export.clusters[f], d.serial))
                for f, m in files.items() if f in export.clusters for d in m.indoms]
        if len(set(keys)) < len(keys):
            seen.add("merged indom")
    assert seen == {"shared cluster", "nested names", "control names", "a name not exported",
                    "merged indom"}, seen
