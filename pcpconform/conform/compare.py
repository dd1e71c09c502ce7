"""The smallest useful difference between an expected answer and an implementation's, for
the suites whose answers are documents (spec/conformance.md): the interp result format
(INTERP-FMT-1), the derive document (DERIVE-CLI-1) and a written archive's dump.

Each ``compare_*`` returns None when the answers are equal, else a :class:`Difference`:
one line saying where (fetch, metric, instance), the JSON pointer, the two values and the
clauses at stake. Values are compared as the tagged strings of DUMP-VAL-1, so a float or
double must match bit for bit.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

__all__ = ["Difference", "WriterLatitude", "compare_interp", "compare_derive", "compare_dump_content",
           "json_difference",
           "INTERP_SEM_CLAUSES"]


@dataclass
class Difference:
    detail: str
    path: str
    expected: Any
    got: Any
    clauses: list[str] = field(default_factory=list)


def json_difference(expected: Any, got: Any, path: str = "") -> tuple[str, Any, Any] | None:
    """The first place where two JSON values differ: (JSON pointer, expected, got); member
    order counts, as it does in the canonical forms."""
    if type(expected) is not type(got):
        return path or "/", expected, got
    if isinstance(expected, dict):
        for key in list(expected) + [k for k in got if k not in expected]:
            if key not in got:
                return f"{path}/{key}", expected[key], "(missing)"
            if key not in expected:
                return f"{path}/{key}", "(absent)", got[key]
            diff = json_difference(expected[key], got[key], f"{path}/{key}")
            if diff is not None:
                return diff
        if list(expected) != list(got):
            return path or "/", f"members in the order {list(expected)}", list(got)
        return None
    if isinstance(expected, list):
        for i, (e, g) in enumerate(zip(expected, got)):
            diff = json_difference(e, g, f"{path}/{i}")
            if diff is not None:
                return diff
        if len(expected) != len(got):
            return path or "/", f"{len(expected)} items", f"{len(got)} items"
        return None
    return None if expected == got else (path or "/", expected, got)


#: interp: the clause of a value, by the metric's semantics and the rule set
INTERP_SEM_CLAUSES: dict[tuple[str, str], list[str]] = {
    ("counter", "pcp-6.0"): ["INTERP-VAL-2"], ("counter", "pcp-6.3"): ["INTERP-VAL-2"],
    ("instant", "pcp-6.0"): ["INTERP-VAL-3"], ("instant", "pcp-6.3"): ["INTERP-VAL-4"],
    ("discrete", "pcp-6.0"): ["INTERP-VAL-3"], ("discrete", "pcp-6.3"): ["INTERP-VAL-5"],
}
#: interp: the clause behind each reason for a missing value (INTERP-EXIST-*)
_REASON_CLAUSES = {"no prior": "INTERP-EXIST-1", "no next": "INTERP-EXIST-1", "mark": "INTERP-EXIST-1",
                   "not alive": "INTERP-EXIST-2", "counter across mark": "INTERP-EXIST-3"}
_NON_NUMERIC = ("string", "aggregate", "aggregate_static", "event", "highres_event")


def _show(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))[:160]


def _value_clauses(kind: str, want: Mapping[str, Any], got: Mapping[str, Any], sem: str | None,
                   rules: str) -> list[str]:
    want_v, got_v = want.get("value"), got.get("value")
    if want_v is None or got_v is None:
        reason = want.get("reason") if want_v is None else got.get("reason")
        return [_REASON_CLAUSES.get(str(reason), "INTERP-EXIST-1")]
    if isinstance(want_v, dict) and want_v.get("type") in _NON_NUMERIC:
        return ["INTERP-VAL-6"]
    base = INTERP_SEM_CLAUSES.get((sem or "", rules), ["INTERP-VAL-1"])
    if kind == "derive":
        return ["DERIVE-EVAL-5"]
    return base


def _compare_samples(kind: str, want: list[Any], got: Any, rules: str, sems: Mapping[str, str],
                     root: str) -> Difference | None:
    fmt = "DERIVE-CLI-1" if kind == "derive" else "INTERP-FMT-1"
    if not isinstance(got, list):
        return Difference("'samples' is not a list", f"{root}/samples", "a list", got, [fmt])
    for k, (ws, gs) in enumerate(zip(want, got)):
        at = f"{root}/samples/{k}"
        if not isinstance(gs, dict):
            return Difference(f"fetch {k}: not an object", at, "an object", gs, [fmt])
        if gs.get("time") != ws.get("time"):
            return Difference(f"fetch {k}: time {_show(gs.get('time'))}, expected {_show(ws.get('time'))}",
                              f"{at}/time", ws.get("time"), gs.get("time"), ["INTERP-TIME-1", fmt])
        if gs.get("eol") != ws.get("eol"):
            return Difference(f"fetch {k}: eol {_show(gs.get('eol'))}, expected {_show(ws.get('eol'))}",
                              f"{at}/eol", ws.get("eol"), gs.get("eol"), ["INTERP-EOL-1"])
        when = f"fetch {k} ({ws['time']['sec']}.{ws['time']['nsec']:09d})"
        wm, gm = ws.get("metrics", []), gs.get("metrics")
        if not isinstance(gm, list) or [m.get("pmid") if isinstance(m, dict) else None for m in gm] != \
                [m["pmid"] for m in wm]:
            names = [m.get("name") if isinstance(m, dict) else m for m in gm] if isinstance(gm, list) else gm
            return Difference(f"{when}: metrics {_show(names)}, expected {_show([m['name'] for m in wm])}",
                              f"{at}/metrics", [m["name"] for m in wm], names, [fmt])
        for j, (wmet, gmet) in enumerate(zip(wm, gm)):
            mat = f"{at}/metrics/{j}"
            metric = f"{wmet['name']} ({wmet['pmid']})"
            if gmet.get("name") != wmet["name"]:
                return Difference(f"{when}, metric {metric}: named {_show(gmet.get('name'))}", f"{mat}/name",
                                  wmet["name"], gmet.get("name"), [fmt])
            wi, gi = wmet.get("instances", []), gmet.get("instances")
            want_ids = [i["inst"] for i in wi]
            got_ids = [i.get("inst") if isinstance(i, dict) else i for i in gi] if isinstance(gi, list) else gi
            if got_ids != want_ids:
                if isinstance(got_ids, list) and sorted(map(str, got_ids)) == sorted(map(str, want_ids)):
                    why, clauses = "instances out of order", [fmt]
                else:
                    why, clauses = "other instances", ["INTERP-BOUND-2", fmt]
                return Difference(f"{when}, metric {metric}: {why}: {_show(got_ids)}, expected "
                                  f"{_show(want_ids)}", f"{mat}/instances", want_ids, got_ids, clauses)
            for n, (winst, ginst) in enumerate(zip(wi, gi)):
                iat = f"{mat}/instances/{n}"
                diff = json_difference(winst, ginst, iat)
                if diff is None:
                    continue
                inst = f"instance {winst['inst']}" + (f" ({winst['name']})" if winst.get("name") else "")
                clauses = _value_clauses(kind, winst, ginst, sems.get(wmet["pmid"]), rules)
                return Difference(f"{when}, metric {metric}, {inst}: expected {_show(_shown(winst))}, "
                                  f"got {_show(_shown(ginst))}", diff[0], diff[1], diff[2], clauses)
            if "deviations" in gmet and gmet.get("deviations") != wmet.get("deviations"):
                pass    # which deviations an answer touched is informative, not graded
    if len(got) != len(want):
        return Difference(f"{len(got)} fetches, {len(want)} expected", f"{root}/samples",
                          f"{len(want)} items", f"{len(got)} items", [fmt])
    return None


def _shown(inst: Any) -> Any:
    """What an instance answered: its value, or null with its reason."""
    if not isinstance(inst, dict):
        return inst
    return inst.get("value") if inst.get("value") is not None else {"value": None, "reason": inst.get("reason")}


def compare_interp(expected: Mapping[str, Any], got: Any, sems: Mapping[str, str]) -> Difference | None:
    """An interp answer against the expected INTERP-FMT-1 document; ``sems`` maps pmid
    strings to semantics names (counter, instant, discrete) to name the value's clause."""
    if not isinstance(got, dict):
        return Difference("the answer is not a JSON object", "/", "an object", got, ["INTERP-FMT-1"])
    for key in ("kind", "format", "format_version"):
        if got.get(key) != expected.get(key):
            return Difference(f"{key} {_show(got.get(key))}, expected {_show(expected.get(key))}", f"/{key}",
                              expected.get(key), got.get(key), ["INTERP-FMT-1"])
    rules = str(expected.get("rules"))
    if got.get("rules") != rules:
        return Difference(f"answered under rules {_show(got.get('rules'))}, asked for {rules}", "/rules",
                          rules, got.get("rules"), ["INTERP-VER-1"])
    return _compare_samples("interp", expected.get("samples", []), got.get("samples"), rules, sems, "")


_DESC_CLAUSES = {"name": "DERIVE-CLI-1", "pmid": "DERIVE-CLI-1", "masked": "DERIVE-BIND-1",
                 "type": "DERIVE-BIND-10", "sem": "DERIVE-BIND-5", "indom": "DERIVE-BIND-25",
                 "units": "DERIVE-BIND-9"}


def compare_derive(expected: Mapping[str, Any] | None, diagnostics: list[str], got: Any,
                   sems: Mapping[str, str]) -> Difference | None:
    """A derive answer ``{"kind": "derive", "result": DOC|null, "diagnostics": [...]}``
    against the expected DERIVE-CLI-1 document (None: nothing binds) and diagnostics:
    diagnostics first, then descriptors, then values."""
    if not isinstance(got, dict) or got.get("kind") != "derive":
        return Difference("the answer is not a {\"kind\": \"derive\", ...} object", "/kind", "derive",
                          got.get("kind") if isinstance(got, dict) else got, ["CONF-DERIVE-1"])
    got_diag = got.get("diagnostics")
    if got_diag != diagnostics:
        diff = json_difference(diagnostics, got_diag, "/diagnostics")
        assert diff is not None
        return Difference(f"diagnostics differ at {diff[0]}: expected {_show(diff[1])}, got {_show(diff[2])}",
                          diff[0], diff[1], diff[2], ["DERIVE-CLI-3", "DERIVE-BIND-30"])
    doc = got.get("result")
    if expected is None or doc is None:
        if expected is doc:
            return None
        return Difference("no metric binds" if expected is None else "the answer has no result",
                          "/result", None if expected is None else "a document",
                          None if doc is None else "a document", ["DERIVE-CLI-1"])
    if not isinstance(doc, dict):
        return Difference("'result' is not an object", "/result", "an object", doc, ["DERIVE-CLI-1"])
    want_d, got_d = expected.get("derived", []), doc.get("derived")
    if not isinstance(got_d, list) or len(got_d) != len(want_d):
        return Difference(f"derived: {_show(got_d)[:80]}, expected {len(want_d)} descriptors",
                          "/result/derived", want_d, got_d, ["DERIVE-CLI-1"])
    for k, (wd, gd) in enumerate(zip(want_d, got_d)):
        if not isinstance(gd, dict):
            return Difference(f"derived {k}: not an object", f"/result/derived/{k}", wd, gd, ["DERIVE-CLI-1"])
        for key in wd:
            if gd.get(key) != wd[key]:
                return Difference(f"derived metric {wd['name']}: {key} {_show(gd.get(key))}, expected "
                                  f"{_show(wd[key])}", f"/result/derived/{k}/{key}", wd[key], gd.get(key),
                                  [_DESC_CLAUSES.get(key, "DERIVE-CLI-1")])
    rules = str(expected.get("rules"))
    return _compare_samples("derive", expected.get("samples", []), doc.get("samples"), rules, sems, "/result")


#: members of a dump line that say where a record is, not what it holds
_LOCATION = ("file", "record", "offset")
#: label members that describe the writing process and host, and the fixture keys that fix them
_WRITER_LABEL = {"pid": "pid", "hostname": "hostname", "timezone": "timezone", "zoneinfo": "zoneinfo"}


@dataclass(frozen=True)
class WriterLatitude:
    """What a fixture leaves to the writer (CONF-WRITE-2): the label members it does not give
    (``label``), and whether an instance domain may be written as full or delta records
    (``indom_form``: the fixture does not set ``indom_records``)."""

    label: frozenset[str] = frozenset()
    indom_form: bool = False

    @classmethod
    def of_fixture(cls, path: Path) -> WriterLatitude:
        """The latitude a fixture file leaves; none when it cannot be read as a mapping."""
        try:
            doc = yaml.safe_load(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, yaml.YAMLError):
            return cls()
        if not isinstance(doc, dict):
            return cls()
        archive = doc.get("archive")
        given = set(archive) if isinstance(archive, dict) else set()
        return cls(frozenset(m for m, key in _WRITER_LABEL.items() if key not in given),
                   "indom_records" not in given)


def _content(line: dict[str, Any], latitude: WriterLatitude) -> dict[str, Any]:
    out = {k: v for k, v in line.items() if k not in _LOCATION}
    if out.get("kind") == "label":
        out = {k: v for k, v in out.items() if k not in latitude.label}
    return out


def _by_inst(item: tuple[Any, Any]) -> tuple[int, int, str]:
    inst = item[0]
    return (0, inst, "") if isinstance(inst, int) else (1, 0, str(inst))


def _full_indoms(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each instance-domain line as the whole domain it leaves in force (a delta applied to
    the domain's previous record, FMT-INDOM-8), sorted by instance, without ``tag`` and
    ``delta``: full and delta records of the same domains compare equal (FMT-PMI-2)."""
    now: dict[str, dict[Any, Any]] = {}
    out = []
    for line in lines:
        if line.get("kind") != "indom":
            out.append(line)
            continue
        domain = now.setdefault(str(line.get("indom")), {})
        if not line.get("delta"):
            domain.clear()
        for inst in line.get("instances") or []:
            if not isinstance(inst, dict):
                continue
            if line.get("delta") and inst.get("name") is None:
                domain.pop(inst.get("inst"), None)
            else:
                domain[inst.get("inst")] = inst.get("name")
        full = {k: v for k, v in line.items() if k not in ("tag", "delta")}
        full["instances"] = [{"inst": i, "name": n} for i, n in sorted(domain.items(), key=_by_inst)]
        out.append(full)
    return out


def compare_dump_content(expected: list[dict[str, Any]], got: list[dict[str, Any]],
                         latitude: WriterLatitude | None = None) -> Difference | None:
    """Two dumps as content: every line but the index's (whose offsets depend on the layout),
    without the members that locate a record (CONF-WRITE-1) and what ``latitude`` leaves to
    the writer (CONF-WRITE-2); line numbers are 1-based."""
    latitude = latitude or WriterLatitude()
    want = [(n, _content(d, latitude)) for n, d in enumerate(expected, 1) if d.get("kind") != "index"]
    have = [(n, _content(d, latitude)) for n, d in enumerate(got, 1) if d.get("kind") != "index"]
    if latitude.indom_form:
        want = list(zip([n for n, _ in want], _full_indoms([d for _, d in want])))
        have = list(zip([n for n, _ in have], _full_indoms([d for _, d in have])))
    for (wn, w), (gn, g) in zip(want, have):
        diff = json_difference(w, g)
        if diff is not None:
            kind = w.get("kind")
            return Difference(f"record {kind} (expected dump line {wn}, written line {gn}), field {diff[0]}: "
                              f"expected {_show(diff[1])}, got {_show(diff[2])}", diff[0], diff[1], diff[2],
                              [f"GEN-{str(kind).upper()}"] if kind in ("label", "desc", "indom", "text",
                                                                      "labelset", "result") else [])
    if len(want) != len(have):
        return Difference(f"{len(have)} records written, {len(want)} expected (index entries aside)", "/",
                          len(want), len(have), ["GEN-FILES"])
    return None
