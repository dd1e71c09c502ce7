#!/usr/bin/python3
"""Ask the real libpcp how it parses derived-metric expressions and config files.

Runs under a referee's system python (PCP 6.0.3 on the host, 6.3.x and 7.x in chroots)
and uses ctypes on libpcp only. Reads one JSON request (from the file named by the
first argument, else stdin) and prints one JSON answer.

Requests:

``{"mode": "register", "exprs": [E, ...]}``
    pmRegisterDerived("d.e<i>", E) for each E in order, in this one process (so libpcp's
    parser state carries from one call to the next, as in any client). Answer:
    ``{"results": [{"ok": bool, "pos": int|null, "msg": str|null}, ...]}``; ``pos`` is
    the returned pointer minus E, ``msg`` is pmDerivedErrStr().

``{"mode": "errmsg", "exprs": [E, ...]}``
    pmRegisterDerivedMetric("d.e<i>", E, &errmsg) instead: ``{"rc": int, "errmsg": str|null}``.

``{"mode": "config", "cases": [{"files": {RELPATH: HEX, ...}, "path": P}, ...]}``
    for each case, in a forked child (a fresh libpcp each time): write the files (content
    in hex, directories created as needed) into a fresh temporary directory, chdir there
    and call pmLoadDerivedConfig(P) with stderr captured (libpcp prints its diagnostics
    with pmprintf/pmflush), so file names in the diagnostics are P's relative names.
    Answer per case: ``{"rc": int, "stderr": str, "metrics": [{"name", "oneline",
    "helptext"}], "listdir": {DIR: [names in readdir order]}}``; ``metrics`` are the
    registered global metrics after the two anonymous event.* ones, by PMID.

An expression E is a JSON string, or ``{"hex": "..."}`` for arbitrary bytes.
"""

import ctypes
import ctypes.util
import json
import os
import shutil
import sys
import tempfile

os.environ["PCP_DERIVED_CONFIG"] = ""      # no system derived metrics
os.environ.pop("PCP_STDERR", None)           # pmflush() writes to stderr

PM_TEXT_ONELINE = 1
PM_TEXT_HELP = 2
PM_TEXT_DIRECT = 16



def _libpcp():
    # libpcp.so.3 up to PCP 6, libpcp.so.4 from PCP 7
    for name in ("libpcp.so.4", "libpcp.so.3", ctypes.util.find_library("pcp")):
        if name:
            try:
                return ctypes.CDLL(name)
            except OSError:
                continue
    raise SystemExit("no libpcp")


lib = _libpcp()
libc = ctypes.CDLL(None)
lib.pmRegisterDerived.restype = ctypes.c_void_p
lib.pmRegisterDerived.argtypes = [ctypes.c_char_p, ctypes.c_void_p]
lib.pmRegisterDerivedMetric.restype = ctypes.c_int
lib.pmRegisterDerivedMetric.argtypes = [ctypes.c_char_p, ctypes.c_void_p,
                                        ctypes.POINTER(ctypes.c_void_p)]
lib.pmDerivedErrStr.restype = ctypes.c_char_p
lib.pmLoadDerivedConfig.restype = ctypes.c_int
lib.pmLoadDerivedConfig.argtypes = [ctypes.c_char_p]
lib.pmLookupText.argtypes = [ctypes.c_uint, ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]
lib.pmNameID.argtypes = [ctypes.c_uint, ctypes.POINTER(ctypes.c_char_p)]
libc.free.argtypes = [ctypes.c_void_p]


def text(b):
    return None if b is None else b.decode("utf-8", "surrogateescape")


def expr_bytes(e):
    if isinstance(e, dict):
        return bytes.fromhex(e["hex"])
    return e.encode("utf-8", "surrogateescape")


def register(exprs):
    out = []
    for i, e in enumerate(exprs):
        buf = ctypes.create_string_buffer(expr_bytes(e))
        ret = lib.pmRegisterDerived(b"d.e%d" % i, buf)
        if ret is None:
            out.append({"ok": True, "pos": None, "msg": None})
        else:
            out.append({"ok": False, "pos": ret - ctypes.addressof(buf),
                        "msg": text(lib.pmDerivedErrStr())})
    return out


def errmsg(exprs):
    out = []
    for i, e in enumerate(exprs):
        buf = ctypes.create_string_buffer(expr_bytes(e))
        msg = ctypes.c_void_p()
        rc = lib.pmRegisterDerivedMetric(b"d.e%d" % i, buf, ctypes.byref(msg))
        s = None
        if msg.value:
            s = text(ctypes.string_at(msg.value))
            libc.free(msg.value)
        out.append({"rc": rc, "errmsg": s})
    return out


def lookup_text(pmid, level):
    b = ctypes.c_char_p()
    if lib.pmLookupText(pmid, level, ctypes.byref(b)) < 0:
        return None
    return text(b.value)


def listdirs(top):
    """readdir() order of every directory under top, as libpcp will see it."""
    out = {}
    for dirpath, _dirnames, _ in os.walk(top):
        rel = os.path.relpath(dirpath, top)
        out["." if rel == "." else rel] = os.listdir(dirpath)
    return out


def load_config_child(case, result_fd):
    top = tempfile.mkdtemp(prefix="derive-config-")
    for rel, content in case["files"].items():
        full = os.path.join(top, rel)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "wb") as f:
            f.write(bytes.fromhex(content))
    for rel in case.get("dirs", []):
        os.makedirs(os.path.join(top, rel), exist_ok=True)
    os.chdir(top)
    # outside top, so that a directory walk of "." does not see it
    fd, errfile = tempfile.mkstemp(prefix="derive-stderr-")
    walk = listdirs(top)
    os.dup2(fd, 2)
    rc = lib.pmLoadDerivedConfig(case["path"].encode("utf-8", "surrogateescape"))
    lib.pmflush()
    libc.fflush(None)
    with open(errfile, "rb") as f:
        err = f.read().decode("utf-8", "surrogateescape")
    metrics = []
    item = 3                    # 511.0.1 and 511.0.2 are event.flags and event.missed
    while True:
        pmid = (511 << 22) | item
        name = ctypes.c_char_p()
        if lib.pmNameID(pmid, ctypes.byref(name)) < 0:
            break
        metrics.append({"name": text(name.value),
                        "oneline": lookup_text(pmid, PM_TEXT_ONELINE),
                        "helptext": lookup_text(pmid, PM_TEXT_HELP | PM_TEXT_DIRECT)})
        item += 1
    os.chdir("/")
    shutil.rmtree(top, ignore_errors=True)
    os.unlink(errfile)
    os.write(result_fd, json.dumps({"rc": rc, "stderr": err, "metrics": metrics,
                                    "listdir": walk}).encode())
    os.close(result_fd)


def config(cases):
    out = []
    for case in cases:
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            try:
                os.close(r)
                load_config_child(case, w)
            finally:
                os._exit(0)
        os.close(w)
        chunks = []
        while True:
            chunk = os.read(r, 65536)
            if not chunk:
                break
            chunks.append(chunk)
        os.close(r)
        _, status = os.waitpid(pid, 0)
        if not chunks:
            out.append({"rc": None, "stderr": None, "metrics": None, "status": status})
        else:
            out.append(json.loads(b"".join(chunks).decode()))
    return out


def main():
    if len(sys.argv) > 1:
        with open(sys.argv[1], encoding="utf-8") as f:
            req = json.load(f)
    else:
        req = json.load(sys.stdin)
    mode = req["mode"]
    if mode == "register":
        res = register(req["exprs"])
    elif mode == "errmsg":
        res = errmsg(req["exprs"])
    elif mode == "config":
        res = config(req["cases"])
    else:
        raise SystemExit(f"unknown mode {mode!r}")
    json.dump({"results": res}, sys.stdout)


if __name__ == "__main__":
    main()
