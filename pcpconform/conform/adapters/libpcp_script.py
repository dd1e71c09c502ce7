#!/usr/bin/python3
"""The side of the libpcp adapters that runs under a PCP's own ``/usr/bin/python3``.

It imports nothing from pcpconform (it runs where only PCP's bindings exist: the host's
Debian PCP, or a chroot's) and nothing beyond the standard library and ``pcp``:

    libpcp_script.py --capabilities          {"name": "libpcp", "version": PCP_VERSION, ...}
    libpcp_script.py validator BASE          pmlogcheck BASE: {"valid": exit status == 0}
    libpcp_script.py reader BASE QUERIES     what libpcp reads of the archive, JSON Lines
    libpcp_script.py interp BASE REQUEST     PM_MODE_INTERP fetches on the request's schedule
    libpcp_script.py derive BASE REQUEST CONFIG   pmLoadDerivedConfig(CONFIG), then interp fetches
    libpcp_script.py mmv-validator FILE      mmvdump FILE: {"valid": exit status == 0}

``reader`` prints one JSON object per line, in the dump's vocabulary (spec/dump-jsonl.md)
but without locations, which the PMAPI does not expose: the archive label, every
descriptor, the instance domain at each (indom, time), the help texts and the label sets
at each (type, ident, time) that ``QUERIES`` (a JSON file) asks for, and every result
pmFetchArchive returns, in order. Values are tagged as DUMP-VAL-1 says; event arrays are
not unpacked (the bindings have no pmUnpackEventRecords), so their value is ``null``. A
PMAPI error stops the reader with exit status 1; a crash of libpcp kills the process, and a
pmlogcheck killed by a signal kills this script by the same signal, so the runner sees the
crash.
"""

import contextlib
import ctypes
import json
import os
import signal
import struct
import subprocess
import sys
import tempfile
from typing import Any

# no global derived metrics (/etc/pcp/derived/*): only what the archive holds
os.environ["PCP_DERIVED_CONFIG"] = ""

import cpmapi as c_api  # type: ignore[import-not-found]
from pcp import pmapi  # type: ignore[import-not-found]

LIBPCP = pmapi.LIBPCP
TYPE_TOKENS = {-1: "nosupport", 0: "32", 1: "u32", 2: "64", 3: "u64", 4: "float", 5: "double",
               6: "string", 7: "aggregate", 8: "aggregate_static", 9: "event", 10: "highres_event",
               255: "unknown"}
SEM_TOKENS = {1: "counter", 3: "instant", 4: "discrete"}
BLOCK_TYPES = (6, 7, 8)          # values read from the pmValueBlock's payload bytes
EVENT_TYPES = (9, 10)


def escape(data: bytes) -> str:
    """DUMP-ESC-1: printable ASCII but the backslash as itself, every other byte as \\xHH."""
    return "".join(chr(b) if 0x20 <= b < 0x7F and b != 0x5C else f"\\x{b:02x}" for b in data)


def pmid_str(pmid: int) -> str:
    return f"{(pmid >> 22) & 0x1ff}.{(pmid >> 10) & 0xfff}.{pmid & 0x3ff}"


def indom_str(indom: int) -> str | None:
    if indom == c_api.PM_INDOM_NULL:
        return None
    return f"{(indom >> 22) & 0x1ff}.{indom & 0x3fffff}"


def parse_indom(text: str) -> int:
    domain, serial = text.split(".")
    return (int(domain) << 22) | int(serial)


def parse_pmid(text: str) -> int:
    domain, cluster, item = text.split(".")
    return (int(domain) << 22) | (int(cluster) << 10) | int(item)


def stamp(t: Any) -> dict[str, int]:
    """{"sec", "nsec"} of a struct timespec, or of a struct timeval (older bindings)."""
    if hasattr(t, "tv_nsec"):
        return {"sec": int(t.tv_sec), "nsec": int(t.tv_nsec)}
    return {"sec": int(t.tv_sec), "nsec": int(t.tv_usec) * 1000}


def _signed4(v: int) -> int:
    return v - 16 if v & 8 else v


def units_of(units: Any) -> dict[str, int]:
    """The eight pmUnits fields from the 32-bit word as libpcp's C code reads it (not the
    bindings' bitfields: PCP 7.2's declare the scales unsigned)."""
    word = ctypes.c_uint32.from_address(ctypes.addressof(units)).value
    extra = word & 0xff
    return {"dimSpace": _signed4(word >> 28 & 15), "dimTime": _signed4(word >> 24 & 15),
            "dimCount": _signed4(word >> 20 & 15), "scaleSpace": word >> 16 & 15,
            "scaleTime": word >> 12 & 15, "scaleCount": _signed4(word >> 8 & 15),
            "extraUnit": _signed4(extra >> 4), "extraScale": extra & 15}


def block_payload(addr: int) -> bytes:
    """The payload bytes of the pmValueBlock at addr (its header holds vlen in 24 bits)."""
    hdr = ctypes.c_uint32.from_address(addr).value
    vlen = hdr & 0xffffff if sys.byteorder == "little" else hdr >> 8
    return ctypes.string_at(addr + 4, max(vlen - 4, 0))


def tagged(valfmt: int, vl: Any, ptype: int | None) -> dict[str, Any]:
    """One value as DUMP-VAL-1 tags it, read through libpcp (None: no descriptor)."""
    if ptype is None:
        if valfmt == 0:
            return {"type": "insitu", "value": str(vl.value.lval & 0xffffffff)}
        return {"type": "unknown", "value": escape(block_payload(ctypes.addressof(vl.value.pval.contents)))}
    token = TYPE_TOKENS.get(ptype, f"type-{ptype}")
    if ptype in EVENT_TYPES:
        return {"type": token, "records": None}
    if ptype in BLOCK_TYPES and valfmt != 0:
        return {"type": token, "value": escape(block_payload(ctypes.addressof(vl.value.pval.contents)))}
    atom = pmapi.pmAtomValue()
    sts = LIBPCP.pmExtractValue(valfmt, ctypes.byref(vl), ptype, ctypes.byref(atom), ptype)
    if sts < 0:
        return {"type": token, "error": c_api.pmErrSymDict.get(sts, str(sts))}
    if ptype == 4:
        return {"type": "float", "value": "0x%08x" % (atom.ul & 0xffffffff)}
    if ptype == 5:
        return {"type": "double", "value": "0x" + struct.pack(">d", atom.d).hex()}
    value = {0: atom.l, 1: atom.ul, 2: atom.ll, 3: atom.ull}.get(ptype)
    return {"type": token, "value": None if value is None else str(value)}


def as_text(t: str | bytes) -> bytes:
    return t if isinstance(t, bytes) else t.encode("utf-8", "surrogateescape")


def label_text(lab: Any, name: str) -> bytes:
    """A label's text field as bytes: the C field itself where the bindings keep it as a
    char array, since their get_hostname() and the like decode it as UTF-8 and fail on
    other bytes."""
    raw = getattr(lab, name, None)
    if isinstance(raw, bytes):
        return raw
    return as_text(getattr(lab, "get_" + name)() or b"")


class Reader:

    def __init__(self, base: str, queries: dict[str, Any]) -> None:
        self.ctx = pmapi.pmContext(c_api.PM_CONTEXT_ARCHIVE, base)
        self.queries = queries
        self.descs: dict[int, Any] = {}   # pmid -> pmDesc pointer, or None when libpcp has none

    def emit(self, obj: dict[str, Any]) -> None:
        sys.stdout.write(json.dumps(obj, separators=(",", ":")) + "\n")

    def label(self) -> None:
        # PCP 6.x: the timespec label is pmGetHighResArchiveLabel; PCP 7: pmGetArchiveLabel
        get = getattr(self.ctx, "pmGetHighResArchiveLabel", None) or self.ctx.pmGetArchiveLabel
        lab = get()
        obj = {"kind": "label", "version": lab.magic & 0xff, "magic": f"0x{lab.magic:08x}",
               "pid": lab.pid_t, "start": stamp(lab.start),
               "hostname": escape(label_text(lab, "hostname")), "timezone": escape(label_text(lab, "timezone"))}
        if hasattr(lab, "get_zoneinfo"):
            obj["zoneinfo"] = escape(label_text(lab, "zoneinfo"))
        self.emit(obj)

    def desc(self, pmid: int) -> Any:
        if pmid in self.descs:
            return self.descs[pmid]
        try:
            self.descs[pmid] = self.ctx.pmLookupDesc(pmid)
        except pmapi.pmErr:
            self.descs[pmid] = None
        return self.descs[pmid]

    def metrics(self) -> None:
        names = []
        self.ctx.pmTraversePMNS("", lambda name: names.append(name))
        pmids = self.ctx.pmLookupName(names, relaxed=1) if names else []
        for pmid in sorted(set(pmids)):
            if pmid == c_api.PM_ID_NULL:
                continue
            desc = self.desc(pmid)
            if desc is None:
                continue
            d = desc.contents
            try:
                all_names = [escape(as_text(n)) for n in self.ctx.pmNameAll(pmid)]
            except (pmapi.pmErr, UnicodeDecodeError):
                all_names = []
            self.emit({"kind": "desc", "pmid": pmid_str(pmid), "type": TYPE_TOKENS.get(d.type, f"type-{d.type}"),
                       "indom": indom_str(d.indom), "sem": SEM_TOKENS.get(d.sem, f"sem-{d.sem}"),
                       "units": units_of(d.units), "names": all_names})

    def indoms(self) -> None:
        # PCP 6.x: the timespec call is pmSetModeHighRes; PCP 7: pmSetMode takes a timespec
        set_mode = getattr(self.ctx, "pmSetModeHighRes", None) or self.ctx.pmSetMode
        zero = pmapi.timespec(0, 0) if hasattr(pmapi, "timespec") else pmapi.timeval(0, 0)
        for indom, sec, nsec in self.queries.get("indoms", []):
            obj = {"kind": "indom", "indom": indom, "timestamp": {"sec": sec, "nsec": nsec}}
            try:
                when = pmapi.timespec(sec, nsec) if hasattr(pmapi, "timespec") else pmapi.timeval(sec, nsec // 1000)
                set_mode(c_api.PM_MODE_FORW, when, zero)
                insts, names = self.ctx.pmGetInDom(indom=parse_indom(indom))
                obj["instances"] = [{"inst": i, "name": escape(as_text(n))} for i, n in zip(insts or [], names or [])]
            except (pmapi.pmErr, UnicodeDecodeError) as exc:   # the bindings decode names as UTF-8
                obj["error"] = str(exc)
            self.emit(obj)

    def texts(self) -> None:
        direct = getattr(c_api, "PM_TEXT_DIRECT", 16)
        kinds = {"oneline": c_api.PM_TEXT_ONELINE | direct, "help": c_api.PM_TEXT_HELP | direct}
        for target, ident, klass in self.queries.get("texts", []):
            obj = {"kind": "text", "target": target, "ident": ident, "class": klass}
            try:
                if target == "pmid":
                    text = self.ctx.pmLookupText(parse_pmid(ident), kinds[klass])
                else:
                    desc = next((d for d in self.descs.values()
                                 if d is not None and indom_str(d.contents.indom) == ident), None)
                    if desc is None:
                        raise LookupError("no metric of this instance domain to ask through")
                    text = self.ctx.pmLookupInDomText(desc, kinds[klass])
                # libpcp hands the text over without its NUL; the record stores one
                obj["text"] = escape(as_text(text) + b"\0")
            except (pmapi.pmErr, LookupError, UnicodeDecodeError) as exc:
                obj["error"] = str(exc)
            self.emit(obj)

    def labelsets(self) -> None:
        """Each label-set record the queries name, as libpcp holds it at the record's time:
        the pmLabelSets of pmGetContextLabels ... pmGetInstancesLabels, through the C calls
        (the bindings' wrappers give parsed dicts, not the stored JSON and label fields)."""
        set_mode = getattr(self.ctx, "pmSetModeHighRes", None) or self.ctx.pmSetMode
        zero = pmapi.timespec(0, 0)
        calls = {"context": None, "domain": LIBPCP.pmGetDomainLabels, "cluster": LIBPCP.pmGetClusterLabels,
                 "item": LIBPCP.pmGetItemLabels, "indom": LIBPCP.pmGetInDomLabels,
                 "instances": LIBPCP.pmGetInstancesLabels}
        for kind, ident, sec, nsec in self.queries.get("labelsets", []):
            obj = {"kind": "labelset", "type": kind, "ident": ident, "timestamp": {"sec": sec, "nsec": nsec}}
            if kind not in calls:
                continue
            set_mode(c_api.PM_MODE_FORW, pmapi.timespec(sec, nsec), zero)
            LIBPCP.pmUseContext(self.ctx.ctx)
            result = ctypes.POINTER(pmapi.pmLabelSet)()
            if kind == "context":
                n = LIBPCP.pmGetContextLabels(ctypes.byref(result))
            else:
                n = calls[kind](ident, ctypes.byref(result))
            if n < 0:
                obj["error"] = c_api.pmErrSymDict.get(n, str(n))
            else:
                obj["sets"] = []
                for k in range(n):
                    ls = result[k]
                    labels = [{"name": ls.labels[j].name & 0xffff, "namelen": ls.labels[j].namelen & 0xff,
                               "flags": ls.labels[j].flags & 0xff, "value": ls.labels[j].value & 0xffff,
                               "valuelen": ls.labels[j].valuelen & 0xffff} for j in range(max(ls.nlabels, 0))]
                    obj["sets"].append({"inst": ls.inst & 0xffffffff,
                                        "json": escape(ctypes.string_at(ls.json, ls.jsonlen & 0xffff)
                                                       if ls.json else b""),
                                        "nlabels": ls.nlabels, "labels": labels})
                if n > 0:
                    LIBPCP.pmFreeLabelSets(result, n)
            self.emit(obj)

    def results(self) -> None:
        fetch = getattr(self.ctx, "pmFetchHighResArchive", None) or self.ctx.pmFetchArchive
        free = getattr(self.ctx, "pmFreeHighResResult", None) or self.ctx.pmFreeResult
        set_mode = getattr(self.ctx, "pmSetModeHighRes", None) or self.ctx.pmSetMode
        zero = pmapi.timespec(0, 0) if hasattr(pmapi, "timespec") else pmapi.timeval(0, 0)
        lab = (getattr(self.ctx, "pmGetHighResArchiveLabel", None) or self.ctx.pmGetArchiveLabel)()
        set_mode(c_api.PM_MODE_FORW, lab.start, zero)
        while True:
            try:
                rp = fetch()
            except pmapi.pmErr as exc:
                if exc.args and exc.args[0] == c_api.PM_ERR_EOL:
                    return
                raise
            r = rp.contents
            vsets = []
            for k in range(r.numpmid):
                vsp = r.get_vset(k).contents
                desc = self.desc(vsp.pmid)
                ptype = None if desc is None else desc.contents.type
                vset = {"pmid": pmid_str(vsp.pmid), "numval": vsp.numval}
                if vsp.numval > 0:
                    vset["valfmt"] = vsp.valfmt
                    vset["values"] = [dict({"inst": r.get_vlist(k, j).inst},
                                           **tagged(vsp.valfmt, r.get_vlist(k, j), ptype))
                                      for j in range(vsp.numval)]
                vsets.append(vset)
            self.emit({"kind": "result", "timestamp": stamp(r.timestamp), "mark": r.numpmid == 0,
                       "vsets": vsets})
            free(rp)

    def run(self) -> None:
        self.label()
        self.metrics()
        self.texts()
        self.indoms()
        self.labelsets()
        self.results()


def interp(base: str, request_path: str) -> int:
    """PM_MODE_INTERP fetches on the request's schedule: per sample its time, whether libpcp
    said PM_ERR_EOL, and per metric [inst, tagged value] for every instance libpcp gave."""
    with open(request_path) as f:
        sched = json.load(f)["schedule"]
    ctx = pmapi.pmContext(c_api.PM_CONTEXT_ARCHIVE, base)
    pmids = list(ctx.pmLookupName(sched["metrics"]))
    types = {p: ctx.pmLookupDesc(p).contents.type for p in pmids}
    samples = _interp_fetches(ctx, sched, pmids, types.__getitem__, contextlib.nullcontext)
    print(json.dumps({"samples": samples}))
    return 0


def _interp_fetches(ctx: Any, sched: dict[str, Any], pmids: list[int], type_of: Any,
                    guard: Any) -> list[dict[str, Any]]:
    """PM_MODE_INTERP fetches of ``pmids`` on the request's schedule: per sample its time,
    whether libpcp said PM_ERR_EOL, and per metric [inst, tagged value] for every instance
    libpcp gave; ``type_of`` gives a pmID's type, each fetch runs inside ``guard()``."""
    delta_ns, t = int(sched["interval_nsec"]), sched["start"]["sec"] * 10**9 + sched["start"]["nsec"]
    sign = -1 if delta_ns < 0 else 1
    delta = pmapi.timespec(sign * (abs(delta_ns) // 10**9), sign * (abs(delta_ns) % 10**9))
    # PCP 6.x: the timespec calls are the HighRes ones; PCP 7: the plain names take timespecs
    set_mode = getattr(ctx, "pmSetModeHighRes", None) or ctx.pmSetMode
    fetch = getattr(ctx, "pmFetchHighRes", None) or ctx.pmFetch
    free = getattr(ctx, "pmFreeHighResResult", None) or ctx.pmFreeResult
    set_mode(c_api.PM_MODE_INTERP, pmapi.timespec(t // 10**9, t % 10**9), delta)
    pmid_array = (ctypes.c_uint * len(pmids))(*pmids)
    samples = []
    for _ in range(int(sched["samples"])):
        entry: dict[str, Any] = {"time": {"sec": t // 10**9, "nsec": t % 10**9}, "eol": False, "metrics": {}}
        try:
            with guard():
                rp = fetch(pmid_array)
        except pmapi.pmErr as exc:
            if not (exc.args and exc.args[0] == c_api.PM_ERR_EOL):
                raise
            entry["eol"] = True
        else:
            r = rp.contents
            for k in range(r.numpmid):
                vsp = r.get_vset(k).contents
                entry["metrics"][pmid_str(vsp.pmid)] = [
                    [r.get_vlist(k, j).inst, tagged(vsp.valfmt, r.get_vlist(k, j), type_of(vsp.pmid))]
                    for j in range(max(vsp.numval, 0))]
            free(rp)
        samples.append(entry)
        t += delta_ns
    return samples


class Fd2:
    """What libpcp writes to file descriptor 2 meanwhile (pmprintf, flushed by pmflush)."""

    def __enter__(self) -> "Fd2":
        sys.stderr.flush()
        self.tmp = tempfile.TemporaryFile()
        self.saved = os.dup(2)
        os.dup2(self.tmp.fileno(), 2)
        self.text = ""
        return self

    def __exit__(self, *exc: Any) -> None:
        with contextlib.suppress(Exception):
            LIBPCP.pmflush()
        os.dup2(self.saved, 2)
        os.close(self.saved)
        self.tmp.seek(0)
        self.text = self.tmp.read().decode("utf-8", "replace")
        self.tmp.close()


def lines_of(text: str, directory: str) -> list[str]:
    """libpcp's lines, the config's directory taken out of its ``[FILE:LINE]`` prefixes."""
    text = text.replace("[" + directory + "/", "[")
    out = text.split("\n")
    return out[:-1] if out and out[-1] == "" else out


def err_str(code: int) -> str:
    buf = ctypes.create_string_buffer(256)
    LIBPCP.pmErrStr_r.restype = ctypes.c_char_p
    LIBPCP.pmErrStr_r.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int]
    return (LIBPCP.pmErrStr_r(code, buf, 256) or b"").decode("utf-8", "replace")


def units_text(units: Any) -> str:
    buf = ctypes.create_string_buffer(64)
    LIBPCP.pmUnitsStr_r.restype = ctypes.c_char_p
    LIBPCP.pmUnitsStr_r.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
    return (LIBPCP.pmUnitsStr_r(ctypes.byref(units), buf, 64) or b"").decode("utf-8", "replace")


def derive(base: str, request_path: str, config: str) -> int:
    """pmLoadDerivedConfig of the request's config, then for each metric of the schedule
    pmLookupName and pmLookupDesc (what libpcp prints meanwhile is the diagnostics; a failed
    lookup with nothing printed gets one line of its own), then PM_MODE_INTERP fetches of
    the metrics that bound, as ``interp`` answers them."""
    with open(request_path) as f:
        request = json.load(f)
    sched = request["schedule"]
    directory = os.path.dirname(config)
    diagnostics: list[str] = []
    LIBPCP.pmLoadDerivedConfig.argtypes = [ctypes.c_char_p]
    LIBPCP.pmLoadDerivedConfig.restype = ctypes.c_int
    with Fd2() as cap:
        LIBPCP.pmLoadDerivedConfig(config.encode())
    diagnostics += lines_of(cap.text, directory)
    ctx = pmapi.pmContext(c_api.PM_CONTEXT_ARCHIVE, base)
    bound: list[tuple[str, int, Any]] = []
    for name in sched["metrics"]:
        if any(name == b[0] for b in bound):
            continue
        sts, pmid, desc = 0, 0, pmapi.pmDesc()
        with Fd2() as cap:
            try:
                pmid = ctx.pmLookupName([name])[0]
            except pmapi.pmErr as exc:
                sts = int(exc.args[0]) if exc.args else -1
            if sts == 0:
                sts = LIBPCP.pmLookupDesc(pmid, ctypes.byref(desc))
        said = lines_of(cap.text, directory)
        diagnostics += said
        if sts >= 0:
            bound.append((name, pmid, desc))
        elif not said:
            unknown = sts == getattr(c_api, "PM_ERR_NAME", -12357)
            diagnostics.append(f"{name}: not a registered derived metric" if unknown
                               else f"derived metric {name}: {err_str(sts)} "
                                    "(libpcp prints nothing; pmLookupDesc fails)")
    derived = [{"name": name, "pmid": pmid_str(pmid), "type": d.type, "sem": d.sem,
                "indom": indom_str(d.indom) or "PM_INDOM_NULL", "units": units_text(d.units)}
               for name, pmid, d in bound]
    samples = []
    if bound:
        types = {pmid: d.type for _, pmid, d in bound}
        samples = _interp_fetches(ctx, sched, [pmid for _, pmid, _ in bound], types.get, Fd2)
    print(json.dumps({"derived": derived, "samples": samples, "diagnostics": diagnostics}))
    return 0


def capabilities() -> int:
    version = pmapi.pmContext.pmGetConfig("PCP_VERSION")
    version = version.decode() if isinstance(version, bytes) else version
    suites = ["validator", "reader", "interp", "derive", "mmv-validator"]
    try:        # the writer suite is pmi_write.py's, with libpcp_import's bindings
        from pcp import pmi  # noqa: F401
        suites.insert(2, "writer")
    except ImportError:
        pass
    print(json.dumps({"name": "libpcp", "version": version, "suites": suites,
                      "archive_versions": [2, 3], "mmv_versions": [1, 2, 3]}))
    return 0


def die_like(returncode: int) -> int:
    """End this process the way the child ended (a signal is passed on, not swallowed)."""
    if returncode < 0:
        sys.stdout.flush()
        signal.signal(-returncode, signal.SIG_DFL)
        os.kill(os.getpid(), -returncode)
    return returncode


def validator(base: str) -> int:
    """pmlogcheck's verdict is its exit status; what it says goes to standard error (it
    reports many problems and still exits 0: IMPL-VAL-1)."""
    proc = subprocess.run(["pmlogcheck", base], capture_output=True)
    if proc.returncode < 0:
        sys.stderr.write(f"pmlogcheck killed by signal {-proc.returncode}\n")
        return die_like(proc.returncode)
    said = (proc.stdout + proc.stderr).decode("utf-8", "replace").strip().splitlines()
    if said:
        sys.stderr.write(f"pmlogcheck said {len(said)} lines, the last: {said[-1][-200:]}\n")
    valid = proc.returncode == 0
    print(json.dumps({"valid": valid, "pmlogcheck_status": proc.returncode, "pmlogcheck_lines": len(said)}))
    return 0 if valid else 1


#: where Debian's PCP installs the MMV PMDA and its mmvdump ($PCP_PMDAS_DIR/mmv)
MMVDUMP = ("/var/lib/pcp/pmdas/mmv/mmvdump", "/usr/lib/pcp/pmdas/mmv/mmvdump")


def mmv_validator(path: str) -> int:
    """mmvdump's verdict is its exit status (it stops at the first problem it sees and
    checks less than the PMDA does: IMPL-MMV-1)."""
    tool = next((t for t in MMVDUMP if os.path.exists(t)), None)
    if tool is None:
        sys.stderr.write(f"no mmvdump under {' or '.join(MMVDUMP)}\n")
        return 2
    proc = subprocess.run([tool, path], capture_output=True)
    if proc.returncode < 0:
        sys.stderr.write(f"mmvdump killed by signal {-proc.returncode}\n")
        return die_like(proc.returncode)
    said = (proc.stdout + proc.stderr).decode("utf-8", "replace").strip().splitlines()
    if said and proc.returncode != 0:
        sys.stderr.write(f"mmvdump said {len(said)} lines, the last: {said[-1][-200:]}\n")
    valid = proc.returncode == 0
    print(json.dumps({"valid": valid, "mmvdump_status": proc.returncode}))
    return 0 if valid else 1


def reader(base: str, queries_path: str) -> int:
    with open(queries_path) as f:
        queries = json.load(f)
    try:
        Reader(base, queries).run()
    except (pmapi.pmErr, UnicodeDecodeError) as exc:
        sys.stdout.flush()
        sys.stderr.write(f"libpcp: {exc}\n")
        return 1
    except Exception as exc:  # the bindings raise what they like: one line, no traceback
        sys.stdout.flush()
        sys.stderr.write(f"PCP's Python bindings: {type(exc).__name__}: {exc}\n")
        return 1
    return 0


def main(argv: list[str]) -> int:
    if argv == ["--capabilities"]:
        return capabilities()
    if len(argv) == 2 and argv[0] == "validator":
        return validator(argv[1])
    if len(argv) == 2 and argv[0] == "mmv-validator":
        return mmv_validator(argv[1])
    if len(argv) == 3 and argv[0] == "reader":
        return reader(argv[1], argv[2])
    if (len(argv) == 3 and argv[0] == "interp") or (len(argv) == 4 and argv[0] == "derive"):
        try:
            return interp(argv[1], argv[2]) if argv[0] == "interp" else derive(argv[1], argv[2], argv[3])
        except pmapi.pmErr as exc:
            sys.stderr.write(f"libpcp: {exc}\n")
            return 1
        except Exception as exc:  # the bindings raise what they like: one line, no traceback
            sys.stderr.write(f"PCP's Python bindings: {type(exc).__name__}: {exc}\n")
            return 1
    sys.stderr.write("usage: libpcp_script.py --capabilities | validator BASE | reader BASE QUERIES"
                     " | interp BASE REQUEST | derive BASE REQUEST CONFIG | mmv-validator FILE\n")
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
