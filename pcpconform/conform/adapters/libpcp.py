"""The libpcp adapters: a command speaking the conformance protocol (spec/conformance.md,
one-shot form) whose answers come from a real libpcp, run under that PCP's own Python.

    python pcpconform/conform/adapters/libpcp.py --target libpcp-6.3 --capabilities
    python pcpconform/conform/adapters/libpcp.py --target libpcp-6.3 validator|reader BASE
    python pcpconform/conform/adapters/libpcp.py --target libpcp-6.3 interp BASE REQUEST
    python pcpconform/conform/adapters/libpcp.py --target libpcp-6.3 derive BASE REQUEST
    python pcpconform/conform/adapters/libpcp.py --target libpcp-6.3 writer FIXTURE OUT_BASE VERSION
    python pcpconform/conform/adapters/libpcp.py --target libpcp-6.3 mmv-validator FILE

The work under PCP is done by ``libpcp_script.py`` (standalone, PCP's bindings only). For
the host's PCP it runs under ``/usr/bin/python3``; for a chroot's, the script and the
archive's files are copied into a private directory under ``ROOT/tmp`` and it runs as
``chroot ROOT /usr/bin/python3 ...`` with the paths mapped there. No shell anywhere.

* validator: pmlogcheck's exit status (0: valid); no codes (pmlogcheck has none of
  spec/validator.md's).
* reader: libpcp does not expose where a record lies (file, record number, offset), the
  order of ``.meta`` records, index entries, the v3 label's ``features`` and
  ``reserved``, the raw bytes of a record, nor unpacked event arrays through the bindings
  (IMPL-READ-1). The adapter therefore takes the kit's dump of the archive as a skeleton for
  those and puts in every member libpcp does expose (:data:`FROM_LIBPCP`), read by
  ``libpcp_script.py``; a line libpcp does not return is left out and one only libpcp
  returns is added, so any difference in what libpcp reads shows in the comparison.
* interp: PM_MODE_INTERP fetches on the request's schedule; the document has the form of
  the kit's replay and libpcp's values (IMPL-INTERP-1).
* derive: pmLoadDerivedConfig of the request's config, pmLookupName and pmLookupDesc of each
  metric (what libpcp prints meanwhile is the diagnostics), then PM_MODE_INTERP fetches of
  those that bound; descriptors and values are libpcp's, instance names, the reason for a
  missing value and a masked metric's own descriptor the kit's (IMPL-DERIVE-1). Each libpcp answers its own profile
  (``profiles`` in the capabilities: 6.0.3 pcp-6.0, 6.3 pcp-6.3, 7 pcp-7).
* writer: libpcp_import (``pmi_write.py``, run under that PCP's Python like the script) writes
  the fixture as ``pmi_fixture.fixture_to_pmi`` passes it on; for a chroot the archive is
  written there and its files are copied back beside OUT_BASE (IMPL-WRITE-1). The case tags
  of what pmi cannot write are unsupported in the writer suite alone (``writer/TAG``).
* mmv-validator: mmvdump's exit status (0: valid; IMPL-MMV-1). mmv-reader is not offered:
  the MMV PMDA's view of a file (under dbpmda) is not the dump CONF-MMV-2 asks for.
* mmv-writer: libpcp_mmv's registry API writes the MMV fixture (``mmv_libpcp.py``, run under
  that PCP's python through ``mmv_write.py``; IMPL-MMVW-1).
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pcpconform.errors import PcpConformError

__all__ = ["LibpcpTarget", "TARGETS", "SCRIPT", "PMI_WRITE", "WRITER_UNSUPPORTED", "FROM_LIBPCP", "merge_reader",
           "reader_queries", "main"]

SCRIPT = Path(__file__).with_name("libpcp_script.py")
#: the archive writer through libpcp_import (pmi), run under the PCP's own Python too
PMI_WRITE = Path(__file__).with_name("pmi_write.py")
_CHROOT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
_ROOT = Path(os.environ.get("PCPCONFORM_CHROOTS", "/opt/pcpconform"))

#: dump line kind -> the members the reader takes from libpcp (the rest is the kit's)
FROM_LIBPCP: dict[str, tuple[str, ...]] = {
    "label": ("version", "magic", "pid", "start", "hostname", "timezone", "zoneinfo"),
    "desc": ("type", "indom", "sem", "units", "names"),
    "indom": ("instances",),
    "text": ("text",),
    "labelset": ("sets",),
    "result": ("timestamp", "mark", "vsets"),
}


@dataclass(frozen=True)
class LibpcpTarget:
    """One real libpcp: the host's (``root`` None) or a chroot's."""

    name: str                # "libpcp-6.0.3", "libpcp-6.3", "libpcp-7"
    root: Path | None
    version_prefix: str      # what its PCP_VERSION must start with

    @property
    def python(self) -> str:
        return os.environ.get("PCPCONFORM_SYSTEM_PYTHON", "/usr/bin/python3") if self.root is None \
            else "/usr/bin/python3"

    def available(self) -> bool:
        return _probe(self)

    def run_script(self, args: Sequence[str], files: Iterable[Path] = (),
                   timeout: float | None = None, *, script: Path = SCRIPT,
                   outputs: Sequence[Path] = ()) -> subprocess.CompletedProcess[bytes]:
        """``SCRIPT ARGS`` (default ``libpcp_script.py``) under this PCP. An argument naming
        one of ``files`` (or an archive base name beside them) or one of ``outputs`` (archive
        base names the script writes) is mapped into the chroot; the files written there
        under an output's name are copied back beside it."""
        argv = [self.python, "-E", "-s", str(script), *args]
        if self.root is None:
            return subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout)
        _remove_stale(self.root / "tmp")
        host_dir = Path(tempfile.mkdtemp(prefix=_PREFIX, dir=self.root / "tmp"))
        inner = "/tmp/" + host_dir.name
        try:
            os.chmod(host_dir, 0o755)
            parents = set()
            for f in [script, *files]:
                shutil.copyfile(f, host_dir / f.name)
                parents.add(f.parent)
            outs = {str(o) for o in outputs}
            # a path beside the copied files (one of them, or an archive's base name) is mapped
            inner_argv = [f"{inner}/{Path(a).name}" if a.startswith("/") and (Path(a).parent in parents or a in outs)
                          else a for a in argv]
            env = [f"PATH={_CHROOT_PATH}", "LANG=C.UTF-8", "HOME=/root"]
            chroot_argv = ["chroot", str(self.root), "/usr/bin/env", "-i", *env, *inner_argv]
            proc = subprocess.run(chroot_argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout)
            for out in map(Path, outputs):
                for produced in host_dir.iterdir():
                    if (produced.name == out.name or produced.name.startswith(out.name + ".")) \
                            and produced.is_file():
                        shutil.copyfile(produced, out.parent / produced.name)
            return proc
        finally:
            shutil.rmtree(host_dir, ignore_errors=True)


_PREFIX = "pcpconform-adapter-"
#: a private chroot directory older than this was left by a run killed at its timeout
_STALE_SECONDS = 3600


def _remove_stale(tmp: Path) -> None:
    """Remove the private directories of runs the runner killed (SIGKILL leaves no time to)."""
    now = time.time()
    for d in tmp.glob(_PREFIX + "*"):
        with contextlib.suppress(OSError):
            if now - d.stat().st_mtime > _STALE_SECONDS:
                shutil.rmtree(d, ignore_errors=True)


@functools.cache
def _probe(target: LibpcpTarget) -> bool:
    if target.root is None:
        if not Path(target.python).exists() or shutil.which("pmlogcheck") is None:
            return False
    elif not (target.root / "usr/bin/pmlogcheck").exists() or shutil.which("chroot") is None \
            or os.geteuid() != 0:
        return False
    try:
        proc = target.run_script(["--capabilities"], timeout=60)
        version = json.loads(proc.stdout)["version"]
    except (OSError, subprocess.SubprocessError, ValueError, KeyError, TypeError):
        return False
    return proc.returncode == 0 and isinstance(version, str) and version.startswith(target.version_prefix)


TARGETS: dict[str, LibpcpTarget] = {t.name: t for t in (
    LibpcpTarget("libpcp-6.0.3", None, "6.0."),
    LibpcpTarget("libpcp-6.3", _ROOT / "trixie", "6.3."),
    LibpcpTarget("libpcp-7", _ROOT / "sid", "7."),
)}


def archive_files(base: Path) -> list[Path]:
    prefix = base.name + "."
    return sorted(p for p in base.parent.iterdir() if p.name.startswith(prefix) and p.is_file())


def _pass_on(proc: subprocess.CompletedProcess[bytes]) -> int:
    """Print what the script printed and end as it ended (a signal is passed on)."""
    sys.stdout.buffer.write(proc.stdout)
    sys.stdout.flush()
    sys.stderr.buffer.write(proc.stderr)
    sys.stderr.flush()
    if proc.returncode < 0:
        signal.signal(-proc.returncode, signal.SIG_DFL)
        os.kill(os.getpid(), -proc.returncode)
    return proc.returncode


# -- the reader: libpcp's members put into the kit's skeleton ---------------------------------
def _key(obj: dict[str, Any]) -> tuple[Any, ...] | None:
    kind = obj.get("kind")
    if kind == "desc":
        return ("desc", obj["pmid"])
    if kind == "indom":
        return ("indom", obj["indom"], obj["timestamp"]["sec"], obj["timestamp"]["nsec"])
    if kind == "text":
        return ("text", obj["target"], obj["ident"], obj["class"])
    if kind == "labelset":
        return ("labelset", obj["type"], obj["ident"], obj["timestamp"]["sec"], obj["timestamp"]["nsec"])
    return None


def reader_queries(skeleton: Sequence[dict[str, Any]]) -> dict[str, list[list[Any]]]:
    """What the script must ask libpcp: the instance domain at each indom record's time, and
    each help text the archive holds."""
    indoms = [[o["indom"], o["timestamp"]["sec"], o["timestamp"]["nsec"]]
              for o in skeleton if o["kind"] == "indom"]
    texts = [[o["target"], o["ident"], o["class"]] for o in skeleton if o["kind"] == "text"]
    labelsets = [[o["type"], o["ident"], o["timestamp"]["sec"], o["timestamp"]["nsec"]]
                 for o in skeleton if o["kind"] == "labelset"]
    return {"indoms": indoms, "texts": texts, "labelsets": labelsets}


def _same_set(kit: list[Any], libpcp: list[Any]) -> bool:
    """Names and instances libpcp lists in an order of its own: equal as sets keeps the kit's
    record order (libpcp promises no order, IMPL-READ-2)."""
    dumps = sorted(json.dumps(x, sort_keys=True) for x in kit)
    return dumps == sorted(json.dumps(x, sort_keys=True) for x in libpcp)


def _merge_values(kit_vsets: list[dict[str, Any]], vsets: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """libpcp's value sets; an event array it cannot unpack (``records`` null) keeps the kit's."""
    for i, vset in enumerate(vsets):
        for j, value in enumerate(vset.get("values", [])):
            if "records" in value and value["records"] is None:
                with contextlib.suppress(IndexError, KeyError, TypeError):
                    value["records"] = kit_vsets[i]["values"][j]["records"]
    return vsets


def _delta(before: list[dict[str, Any]], now: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A v3 delta record as libpcp's two full instance lists imply it (pmGetInDom answers with
    the domain after the delta, IMPL-READ-3): instances new or renamed, then those gone
    (name null, FMT-INDOM-8)."""
    old = {i["inst"]: i["name"] for i in before}
    new = {i["inst"]: i["name"] for i in now}
    return ([{"inst": i, "name": n} for i, n in new.items() if i not in old or old[i] != n]
            + [{"inst": i, "name": None} for i in old if i not in new])


def merge_reader(skeleton: Sequence[dict[str, Any]], libpcp: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The dump lines: each skeleton line with the members of :data:`FROM_LIBPCP` taken from
    libpcp's answer; skeleton lines libpcp did not return are left out, descriptors and
    results only libpcp returned are added after the last of their kind."""
    label = next((o for o in libpcp if o["kind"] == "label"), None)
    keyed = {_key(o): o for o in libpcp if _key(o) is not None}
    results = [o for o in libpcp if o["kind"] == "result"]
    used: set[tuple[Any, ...]] = set()
    out: list[dict[str, Any]] = []
    nresult = 0
    prev: dict[str, list[dict[str, Any]]] = {}       # indom -> libpcp's instances at its last record
    for kit in skeleton:
        obj = dict(kit)
        kind = obj["kind"]
        if kind == "label":
            if label is None:
                continue
            for member in FROM_LIBPCP["label"]:
                if member in obj and member in label:
                    obj[member] = label[member]
        elif kind in ("desc", "indom", "text", "labelset"):
            key = _key(obj)
            got = keyed.get(key) if key is not None else None
            if got is None or "error" in got:
                continue
            used.add(key)  # type: ignore[arg-type]
            if kind == "indom":
                full, last = got["instances"], prev.get(obj["indom"])
                prev[obj["indom"]] = full
                if obj.get("delta") and last is not None:
                    got = dict(got, instances=_delta(last, full))
            for member in FROM_LIBPCP[kind]:
                if member in ("names", "instances") and _same_set(obj[member], got[member]):
                    continue
                obj[member] = got[member]
        elif kind == "result":
            if nresult >= len(results):
                continue
            got = results[nresult]
            nresult += 1
            obj["timestamp"], obj["mark"] = got["timestamp"], got["mark"]
            obj["vsets"] = _merge_values(obj["vsets"], got["vsets"])
        out.append(obj)
    # libpcp defines event.flags and event.missed itself in every context (IMPL-READ-4)
    extra_descs = [o for o in libpcp if o["kind"] == "desc" and _key(o) not in used
                   and o["names"] not in (["event.flags"], ["event.missed"])]
    if extra_descs:
        at = max((i + 1 for i, o in enumerate(out) if o.get("file") == "meta"), default=len(out))
        out[at:at] = extra_descs
    out += results[nresult:]
    return out


def _reader(target: LibpcpTarget, base: Path) -> int:
    from pcpconform.dump.jsonl import HEADER, jsonl_records
    from pcpconform.errors import PcpConformError
    from pcpconform.io.archive import Archive

    try:
        skeleton = list(jsonl_records(Archive(base)))
    except PcpConformError as exc:
        print(f"libpcp adapter: the kit cannot read the archive for the skeleton: {exc}", file=sys.stderr)
        return 1
    files = archive_files(base)
    with tempfile.TemporaryDirectory(prefix="pcpconform-adapter-") as tmp:
        queries = Path(tmp) / "queries.json"
        queries.write_text(json.dumps(reader_queries(skeleton)), encoding="utf-8")
        proc = target.run_script(["reader", str(base), str(queries)], [*files, queries])
    if proc.returncode != 0:
        return _pass_on(proc)
    sys.stderr.buffer.write(proc.stderr)
    answer = [json.loads(line) for line in proc.stdout.decode("utf-8").splitlines() if line.strip()]
    out = sys.stdout
    out.write(json.dumps(HEADER, separators=(",", ":")) + "\n")
    for obj in merge_reader(skeleton, answer):
        out.write(json.dumps(obj, separators=(",", ":"), ensure_ascii=False) + "\n")
    out.flush()
    return 0


def _instances(rows: list[dict[str, Any]], fetched: list[list[Any]]) -> list[dict[str, Any]]:
    """The kit's instance ``rows`` with the values libpcp ``fetched`` ([inst, value] pairs):
    a row libpcp gave no value for is null with the kit's reason (or "libpcp gave no
    value"); instances only libpcp gave follow, unnamed."""
    values = {inst: value for inst, value in fetched}
    instances = []
    for row in rows:
        value = values.pop(row["inst"], None)
        if value is not None:
            instances.append({"inst": row["inst"], "name": row["name"], "value": value})
        else:
            instances.append({"inst": row["inst"], "name": row["name"], "value": None,
                              "reason": row.get("reason") or "libpcp gave no value"})
    instances += [{"inst": i, "name": None, "value": v} for i, v in values.items()]
    return instances


def merge_interp(skeleton: dict[str, Any], libpcp: dict[str, Any]) -> dict[str, Any]:
    """The INTERP-FMT-1 document: the kit's (``skeleton``) with each sample's ``eol`` and every
    value as libpcp fetched it; an instance libpcp gave no value for is null, with the kit's
    reason when the kit has none either (libpcp gives no reasons, IMPL-INTERP-1)."""
    doc = dict(skeleton)
    samples = []
    for kit, got in zip(skeleton["samples"], libpcp["samples"]):
        sample = dict(kit, eol=got["eol"])
        if got["eol"] and not kit["eol"]:
            sample["metrics"] = []
        metrics = []
        for metric in sample["metrics"] if not got["eol"] else []:
            instances = _instances(metric["instances"], got["metrics"].get(metric["pmid"], []))
            metrics.append(dict(metric, instances=instances))
        if not got["eol"]:
            sample["metrics"] = metrics
        samples.append(sample)
    doc["samples"] = samples
    return doc


def _interp(target: LibpcpTarget, base: Path, request_path: Path) -> int:
    from pcpconform.format.pmtypes import Timestamp
    from pcpconform.io.archive import Archive
    from pcpconform.oracles.interp.replay import Replay
    from pcpconform.oracles.interp.report import samples_json

    request = json.loads(request_path.read_text(encoding="utf-8"))
    sched = request["schedule"]
    archive = Archive(base)
    start = Timestamp(int(sched["start"]["sec"]), int(sched["start"]["nsec"]))
    interval = int(sched["interval_nsec"])
    replay = Replay(archive, [int(archive.desc(m).pmid) for m in sched["metrics"]], rules=request["rules"],
                    from_time=start if interval > 0 else None)
    skeleton = samples_json(archive, replay.schedule(start, interval, int(sched["samples"])), request["rules"])
    proc = target.run_script(["interp", str(base), str(request_path)], [*archive_files(base), request_path])
    if proc.returncode != 0:
        return _pass_on(proc)
    sys.stderr.buffer.write(proc.stderr)
    print(json.dumps(merge_interp(skeleton, json.loads(proc.stdout))))
    return 0


#: the domain of the pmIDs libpcp gives derived metrics (DYNAMIC_PMID)
_DERIVED_DOMAIN = "511"


def merge_derive(skeleton: dict[str, Any] | None, libpcp: dict[str, Any], profile: str) -> dict[str, Any] | None:
    """The DERIVE-CLI-1 document of libpcp's answer (None when nothing bound): its
    descriptors and values, with the kit's document (``skeleton``) giving what libpcp does
    not: instance names, the reason for a missing value, and the descriptor of a derived
    metric an archive metric masks (libpcp answers with the archive's; IMPL-DERIVE-1)."""
    if not libpcp["derived"]:
        return None
    kit_desc = {d["name"]: d for d in (skeleton or {}).get("derived", [])}
    derived = []
    fetched_as = {d["name"]: d["pmid"] for d in libpcp["derived"]}     # a masked name: the archive's pmID
    for d in libpcp["derived"]:
        if d["pmid"].split(".")[0] == _DERIVED_DOMAIN:
            derived.append(dict(d, masked=False))
        else:       # the archive's metric won (DERIVE-BIND-1): the descriptor libpcp hides is the kit's
            derived.append(dict(kit_desc.get(d["name"], d), masked=True))
    kit_samples = (skeleton or {}).get("samples", [])
    samples = []
    for k, got in enumerate(libpcp["samples"]):
        kit = kit_samples[k] if k < len(kit_samples) else {}
        sample: dict[str, Any] = {"time": got["time"], "eol": got["eol"], "metrics": []}
        if not got["eol"]:
            rows = {m["name"]: m.get("instances", []) for m in kit.get("metrics", [])}
            for d in derived:
                instances = _instances(rows.get(d["name"], []), got["metrics"].get(fetched_as[d["name"]], []))
                sample["metrics"].append({"pmid": d["pmid"], "name": d["name"], "instances": instances})
        samples.append(sample)
    head = {k: v for k, v in (skeleton or {}).items() if k not in ("samples", "derived")}
    return {"kind": "derive", "format": "pcpconform-interp", "format_version": 1, "rules": profile, **head,
            "samples": samples, "derived": derived}


def _derive(target: LibpcpTarget, base: Path, request_path: Path) -> int:
    from pcpconform.conform.expected import Schedule, derive_document
    from pcpconform.io.archive import Archive

    request = json.loads(request_path.read_text(encoding="utf-8"))
    if request.get("profile") != PROFILES.get(target.name):
        print(f"{target.name} answers the {PROFILES.get(target.name)} profile, not {request.get('profile')}",
              file=sys.stderr)
        return 2
    config = Path(str(request["config"])).absolute()
    try:
        skeleton, _ = derive_document(Archive(base), config.read_bytes(), config.name,
                                      Schedule.from_json(request["schedule"]), str(request["profile"]))
    except (PcpConformError, KeyError, ValueError):
        skeleton = None         # the kit's document only lends names and reasons
    proc = target.run_script(["derive", str(base), str(request_path), str(config)],
                             [*archive_files(base), request_path, config])
    if proc.returncode != 0:
        return _pass_on(proc)
    sys.stderr.buffer.write(proc.stderr)
    answer = json.loads(proc.stdout)
    print(json.dumps({"kind": "derive", "result": merge_derive(skeleton, answer, str(request["profile"])),
                      "diagnostics": answer["diagnostics"]}))
    return 0


def _writer(target: LibpcpTarget, fixture_path: Path, out_base: Path, version: int) -> int:
    """libpcp_import of this PCP writes the fixture (``pmi_write.py``, its calls in the order
    ``generate`` follows) at ``out_base`` (IMPL-WRITE-1)."""
    from pcpconform.conform.adapters.pmi_fixture import NO_PMI_TYPES, fixture_to_pmi
    from pcpconform.fixtures.fixture import load_fixture

    try:
        fixture = load_fixture(fixture_path)
        doc = fixture_to_pmi(fixture, version)
    except (PcpConformError, ValueError) as exc:     # not a fixture, or asking what pmi has no call for
        print(f"{target.name}: libpcp_import cannot be asked to write this fixture: {exc}", file=sys.stderr)
        return 1
    types = sorted({m.type.token for m in fixture.metrics if m.type in NO_PMI_TYPES})
    if types:           # pmi_write.py's status for what libpcp_import cannot write
        print(f"{target.name}: libpcp_import cannot write values of type {', '.join(types)}", file=sys.stderr)
        return 3
    with tempfile.TemporaryDirectory(prefix=_PREFIX) as tmp:
        request = Path(tmp) / "pmi-fixture.json"
        request.write_text(json.dumps(doc), encoding="utf-8")
        proc = target.run_script([str(request), str(out_base)], [request], script=PMI_WRITE, outputs=[out_base])
    return _pass_on(proc)


#: case tags of what libpcp_import has no call to write (IMPL-WRITE-1): events (pmiPutValue
#: takes a string per value), aggregates (pmiAddMetric refuses the type), volume switches on
#: request and delta instance-domain records asked for by the fixture
WRITER_UNSUPPORTED = ("events", "highres-events", "type:event", "type:highres-event", "type:aggregate",
                      "type:aggregate-static", "multi-volume", "delta-indom")

#: the derive profile each libpcp is (DERIVE-VER-1)
PROFILES = {"libpcp-6.0.3": "pcp-6.0", "libpcp-6.3": "pcp-6.3", "libpcp-7": "pcp-7"}
#: the interpolation rule set each libpcp follows (INTERP-VER-1)
RULES = {"libpcp-6.0.3": "pcp-6.0", "libpcp-6.3": "pcp-6.3", "libpcp-7": "pcp-6.3"}


def _capabilities(target: LibpcpTarget) -> int:
    proc = target.run_script(["--capabilities"])
    if proc.returncode != 0:
        return _pass_on(proc)
    caps = json.loads(proc.stdout)
    caps["name"] = target.name
    caps["rules"] = [RULES.get(target.name, "pcp-6.3")]
    caps["profiles"] = [PROFILES[target.name]]
    if "writer" in caps.get("suites", []):
        caps["unsupported"] = [f"writer/{tag}" for tag in WRITER_UNSUPPORTED]      # that suite's only
    caps["suites"] = [*caps.get("suites", []), "mmv-writer"]        # libpcp_mmv, through ctypes
    # archive sets are measured against libpcp by tests/differential/test_sets_*, not here
    caps["unsupported"] = [*caps.get("unsupported", []), "set"]
    # beyond CONF-CAP-1 (ignored by the runner): what the reader's dump takes from libpcp
    caps["reader_from_libpcp"] = {k: list(v) for k, v in FROM_LIBPCP.items()}
    print(json.dumps(caps))
    return 0


def main(argv: Sequence[str]) -> int:
    usage = ("usage: python pcpconform/conform/adapters/libpcp.py --target NAME "
             "(--capabilities | validator BASE | reader BASE | interp BASE REQUEST | derive BASE REQUEST "
             "| writer FIXTURE OUT_BASE VERSION | mmv-validator FILE | mmv-writer FIXTURE FILE)")
    if len(argv) < 3 or argv[0] != "--target" or argv[1] not in TARGETS:
        print(usage + f"\n  NAME: {', '.join(TARGETS)}", file=sys.stderr)
        return 2
    target, rest = TARGETS[argv[1]], list(argv[2:])
    try:
        if rest == ["--capabilities"]:
            return _capabilities(target)
        if len(rest) == 2 and rest[0] == "validator":
            base = Path(rest[1]).absolute()
            return _pass_on(target.run_script(["validator", str(base)], archive_files(base)))
        if len(rest) == 2 and rest[0] == "mmv-validator":
            path = Path(rest[1]).absolute()
            return _pass_on(target.run_script(["mmv-validator", str(path)], [path]))
        if len(rest) == 2 and rest[0] == "reader":
            return _reader(target, Path(rest[1]).absolute())
        if len(rest) == 3 and rest[0] == "interp":
            return _interp(target, Path(rest[1]).absolute(), Path(rest[2]).absolute())
        if len(rest) == 4 and rest[0] == "writer" and rest[3] in ("2", "3"):
            return _writer(target, Path(rest[1]).absolute(), Path(rest[2]).absolute(), int(rest[3]))
        if len(rest) == 3 and rest[0] == "mmv-writer":
            from pcpconform.conform.adapters import mmv_libpcp

            return _pass_on(mmv_libpcp.write(target, Path(rest[1]).absolute(), Path(rest[2]).absolute()))
        if len(rest) == 3 and rest[0] == "derive":
            return _derive(target, Path(rest[1]).absolute(), Path(rest[2]).absolute())
    except OSError as exc:          # the PCP, its chroot or the archive's directory is not there
        print(f"{target.name}: {exc.strerror or exc}: {exc.filename or ''}", file=sys.stderr)
        return 2
    except (ValueError, KeyError, TypeError) as exc:       # the script's answer is not what it says
        print(f"{target.name}: {exc}", file=sys.stderr)
        return 2
    except PcpConformError as exc:       # the kit cannot replay the archive for the skeleton
        print(f"{target.name}: the kit cannot replay the archive for the skeleton: {exc}", file=sys.stderr)
        return 1
    print(usage, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
