#!/usr/bin/python3
"""Ask libpcp about derived metrics: registration, binding, and values in an INTERP replay.

Usage:  /usr/bin/python3 pm_derive.py REQUEST.json [BASE]

Runs under a referee's system python with the PCP bindings (Debian's 6.0.3 on the host,
6.3.x and 7.x in chroots), never the project venv. $PCP_DERIVED_CONFIG is set to "" before
libpcp is loaded, so only the metrics of the request exist.

REQUEST (JSON, every key optional):
  derived    [[name, expr], ...]    registered in order with pmRegisterDerivedMetric
                                   before the archive context is created
  schedule   {"start": [sec, nsec], "delta": nsec, "count": n}
                                   PM_MODE_INTERP replay of every derived metric whose
                                   descriptor lookup succeeded, all in one pmFetch per step
  units      ["Kbyte / sec", ...]  pmParseUnitsStr
  convscale  [[type, VALUE, from_word, to_word], ...]  pmConvScale (units as pmUnits words)

Prints one JSON document:
  register   {name: null | "error text"}       pmRegisterDerivedMetric's message
  descs      {name: {"pmid", "type", "sem", "indom": "d.s"|null, "units": word,
                     "units_str", "stderr"} | {"error": code, "errstr", "stderr"}}
             "stderr" is everything libpcp wrote to fd 2 (pmprintf + pmflush) while the
             name and descriptor were looked up: semantic errors appear there
  samples    [{"time": [sec, nsec], "eol": bool, "error": code|null,
               "values": {name: {"numval": n, "values": [[inst, VALUE], ...]}}}]
             instances in the order libpcp returns them (not sorted)
  units      [{"word": w, "str": pmUnitsStr, "mult": "f64:..."} | {"error": text}]
  convscale  [VALUE | "error:<code>"]
VALUE as pm_read.py encodes it (ints; "f32:"/"f64:" IEEE bits; "str:" hex).
"""

import ctypes
import json
import os
import struct
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ["PCP_DERIVED_CONFIG"] = ""

import cpmapi as c_api
from pcp import pmapi
from pm_read import encode_value, indom_str, pmid_str

LIBPCP = pmapi.LIBPCP
LIBC = pmapi.LIBC
LIBC.free.argtypes = [ctypes.c_void_p]
LIBC.free.restype = None
LIBPCP.pmRegisterDerivedMetric.restype = ctypes.c_int
LIBPCP.pmRegisterDerivedMetric.argtypes = [ctypes.c_char_p, ctypes.c_char_p,
                                           ctypes.POINTER(ctypes.c_char_p)]
LIBPCP.pmParseUnitsStr.restype = ctypes.c_int
LIBPCP.pmParseUnitsStr.argtypes = [ctypes.c_char_p, ctypes.c_void_p,
                                   ctypes.POINTER(ctypes.c_double),
                                   ctypes.POINTER(ctypes.c_char_p)]
LIBPCP.pmUnitsStr_r.restype = ctypes.c_char_p
LIBPCP.pmUnitsStr_r.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
LIBPCP.pmConvScale.restype = ctypes.c_int
LIBPCP.pmConvScale.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p,
                               ctypes.c_void_p, ctypes.c_void_p]
LIBPCP.pmErrStr_r.restype = ctypes.c_char_p
LIBPCP.pmErrStr_r.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int]


class Fd2Capture:
    """Collect what is written to file descriptor 2 (libpcp's stderr) meanwhile."""

    def __enter__(self):
        sys.stderr.flush()
        self.tmp = tempfile.TemporaryFile()
        self.saved = os.dup(2)
        os.dup2(self.tmp.fileno(), 2)
        return self

    def __exit__(self, *exc):
        os.dup2(self.saved, 2)
        os.close(self.saved)
        self.tmp.seek(0)
        self.text = self.tmp.read().decode("utf-8", "replace")
        self.tmp.close()
        return False


def err_str(code):
    buf = ctypes.create_string_buffer(256)
    return LIBPCP.pmErrStr_r(code, buf, 256).decode()


def units_str(word):
    u = ctypes.c_uint32(word)
    buf = ctypes.create_string_buffer(64)
    out = LIBPCP.pmUnitsStr_r(ctypes.byref(u), buf, 64)
    return out.decode() if out is not None else None


def register(derived):
    out = {}
    for name, expr in derived:
        errmsg = ctypes.c_char_p()
        sts = LIBPCP.pmRegisterDerivedMetric(name.encode(), expr.encode(), ctypes.byref(errmsg))
        if sts < 0:
            out[name] = errmsg.value.decode("utf-8", "replace") if errmsg.value else ""
            LIBC.free(ctypes.cast(errmsg, ctypes.c_void_p))
        else:
            out[name] = None
    return out


def lookup(ctx, name):
    with Fd2Capture() as cap:
        try:
            pmid = ctx.pmLookupName([name])[0]
            desc = pmapi.pmDesc()
            sts = LIBPCP.pmLookupDesc(pmid, ctypes.byref(desc))
        except pmapi.pmErr as exc:
            pmid, sts = None, exc.args[0]
        LIBPCP.pmflush()
    if sts < 0:
        return None, {"error": sts, "errstr": err_str(sts), "stderr": cap.text}
    word = ctypes.cast(ctypes.byref(desc.units), ctypes.POINTER(ctypes.c_uint32)).contents.value
    return (pmid, desc.type), {
        "pmid": pmid_str(pmid), "type": desc.type, "sem": desc.sem,
        "indom": indom_str(desc.indom), "units": word, "units_str": units_str(word),
        "stderr": cap.text}


def replay(ctx, bound, schedule):
    names = [n for n in bound]
    pmids = [bound[n][0] for n in names]
    types = {bound[n][0]: bound[n][1] for n in names}
    by_pmid = {bound[n][0]: n for n in names}
    sec, nsec = schedule["start"]
    delta_ns, count = schedule["delta"], schedule["count"]
    samples = []
    if not pmids:
        return samples
    arr = (ctypes.c_uint * len(pmids))(*pmids)
    sign = -1 if delta_ns < 0 else 1
    delta = pmapi.timespec(sign * (abs(delta_ns) // 10**9), sign * (abs(delta_ns) % 10**9))
    # PCP 6 has the high-resolution calls under their own names; PCP 7's plain ones are them
    set_mode = getattr(ctx, "pmSetModeHighRes", None) or ctx.pmSetMode
    fetch = getattr(ctx, "pmFetchHighRes", None) or ctx.pmFetch
    free = getattr(ctx, "pmFreeHighResResult", None) or ctx.pmFreeResult
    set_mode(c_api.PM_MODE_INTERP, pmapi.timespec(sec, nsec), delta)
    t = sec * 10**9 + nsec
    for _ in range(count):
        entry = {"time": [t // 10**9, t % 10**9], "eol": False, "error": None, "values": {}}
        try:
            r = fetch(arr)
        except pmapi.pmErr as exc:
            if exc.args and exc.args[0] == c_api.PM_ERR_EOL:
                entry["eol"] = True
            else:
                entry["error"] = exc.args[0]
            samples.append(entry)
            t += delta_ns
            continue
        res = r.contents
        for k in range(res.numpmid):
            vs = res.get_vset(k).contents
            vals = []
            for j in range(max(vs.numval, 0)):
                vl = res.get_vlist(k, j)
                vals.append([vl.inst, encode_value(vs.valfmt, vl, types[vs.pmid])])
            entry["values"][by_pmid[vs.pmid]] = {"numval": vs.numval, "values": vals}
        free(r)
        samples.append(entry)
        t += delta_ns
    return samples


def parse_units(texts):
    out = []
    for text in texts:
        u = ctypes.c_uint32(0)
        mult = ctypes.c_double(0.0)
        errmsg = ctypes.c_char_p()
        sts = LIBPCP.pmParseUnitsStr(text.encode(), ctypes.byref(u), ctypes.byref(mult),
                                     ctypes.byref(errmsg))
        if sts < 0:
            out.append({"error": errmsg.value.decode() if errmsg.value else "", "code": sts})
            if errmsg.value:
                LIBC.free(ctypes.cast(errmsg, ctypes.c_void_p))
        else:
            out.append({"word": u.value, "str": units_str(u.value),
                        "mult": "f64:" + struct.pack(">d", mult.value).hex()})
    return out


def atom_in(ptype, value):
    atom = pmapi.pmAtomValue()
    if ptype == c_api.PM_TYPE_32:
        atom.l = value
    elif ptype == c_api.PM_TYPE_U32:
        atom.ul = value
    elif ptype == c_api.PM_TYPE_64:
        atom.ll = value
    elif ptype == c_api.PM_TYPE_U64:
        atom.ull = value
    elif ptype == c_api.PM_TYPE_FLOAT:
        atom.ul = int(value[4:], 16)
    else:
        atom.ull = int(value[4:], 16)
    return atom


def atom_out(ptype, atom):
    if ptype == c_api.PM_TYPE_32:
        return atom.l
    if ptype == c_api.PM_TYPE_U32:
        return atom.ul
    if ptype == c_api.PM_TYPE_64:
        return atom.ll
    if ptype == c_api.PM_TYPE_U64:
        return atom.ull
    if ptype == c_api.PM_TYPE_FLOAT:
        return f"f32:{atom.ul:08x}"
    return f"f64:{atom.ull:016x}"


def conv_scale(requests):
    out = []
    for ptype, value, from_word, to_word in requests:
        ival = atom_in(ptype, value)
        oval = pmapi.pmAtomValue()
        iu, ou = ctypes.c_uint32(from_word), ctypes.c_uint32(to_word)
        sts = LIBPCP.pmConvScale(ptype, ctypes.byref(ival), ctypes.byref(iu),
                                 ctypes.byref(oval), ctypes.byref(ou))
        out.append(f"error:{sts}" if sts < 0 else atom_out(ptype, oval))
    return out


def main(argv):
    with open(argv[1]) as f:
        request = json.load(f)
    result = {}
    if request.get("units"):
        result["units"] = parse_units(request["units"])
    if request.get("convscale"):
        result["convscale"] = conv_scale(request["convscale"])
    derived = request.get("derived", [])
    result["register"] = register(derived)
    if len(argv) > 2:
        ctx = pmapi.pmContext(c_api.PM_CONTEXT_ARCHIVE, argv[2])
        descs, bound = {}, {}
        for name, _ in derived:
            if result["register"].get(name) is not None or name in descs:
                continue
            got, descs[name] = lookup(ctx, name)
            if got is not None:
                bound[name] = got
        result["descs"] = descs
        if request.get("schedule"):
            result["samples"] = replay(ctx, bound, request["schedule"])
    json.dump(result, sys.stdout)


if __name__ == "__main__":
    main(sys.argv)
