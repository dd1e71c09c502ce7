#!/usr/bin/python3
"""Replay an archive with libpcp's PM_MODE_INTERP and print what every fetch returns.

Usage:  /usr/bin/python3 pm_interp.py BASE START_SEC START_NSEC DELTA_NSEC COUNT PMID...
        /usr/bin/python3 pm_interp.py BASE --segments JSON PMID...

The second form makes one pmSetMode per segment of JSON, a list of
[START_SEC, START_NSEC, DELTA_NSEC, COUNT], in one context, each followed by its fetches.

Runs under a PCP's system python (the bindings of PCP 6.0.3, 6.3 or 7). Prints one JSON
document:
  {"samples": [{"time": [sec, nsec], "eol": bool,
                "values": {"d.c.i": {"numval": n, "values": [[inst, VALUE], ...]}}}]}
VALUE is encoded as pm_read.py encodes it (ints; "f32:"/"f64:" bits; "str:" hex); pm_read.py
must lie beside this script.
"""

import ctypes
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ["PCP_DERIVED_CONFIG"] = ""

from pcp import pmapi  # noqa: E402
import cpmapi as c_api  # noqa: E402

from pm_read import encode_value, pmid_str  # noqa: E402


def parse_pmid(text):
    d, c, i = (int(x) for x in text.split("."))
    return (d << 22) | (c << 10) | i


def main(argv):
    base = argv[1]
    if argv[2] == "--segments":
        segments = json.loads(argv[3])
        pmids = [parse_pmid(p) for p in argv[4:]]
    else:
        segments = [[int(a) for a in argv[2:6]]]
        pmids = [parse_pmid(p) for p in argv[6:]]
    ctx = pmapi.pmContext(c_api.PM_CONTEXT_ARCHIVE, base)
    descs = {p: ctx.pmLookupDesc(p) for p in pmids}
    pmid_array = (ctypes.c_uint * len(pmids))(*pmids)
    samples = []
    for sec, nsec, delta_ns, count in segments:
        replay(ctx, descs, pmid_array, sec, nsec, delta_ns, count, samples)
    json.dump({"samples": samples}, sys.stdout)


def replay(ctx, descs, pmid_array, sec, nsec, delta_ns, count, samples):
    """One pmSetMode and ``count`` fetches, appended to ``samples``."""
    sign = -1 if delta_ns < 0 else 1
    delta = pmapi.timespec(sign * (abs(delta_ns) // 10**9), sign * (abs(delta_ns) % 10**9))
    # PCP 6.x: the timespec calls are the HighRes ones; PCP 7: the plain names take and give
    # timespecs and the HighRes names are gone
    set_mode = getattr(ctx, "pmSetModeHighRes", None) or ctx.pmSetMode
    fetch = getattr(ctx, "pmFetchHighRes", None) or ctx.pmFetch
    free = getattr(ctx, "pmFreeHighResResult", None) or ctx.pmFreeResult
    set_mode(c_api.PM_MODE_INTERP, pmapi.timespec(sec, nsec), delta)
    t = sec * 10**9 + nsec
    for _ in range(count):
        entry = {"time": [t // 10**9, t % 10**9], "eol": False, "values": {}}
        try:
            r = fetch(pmid_array)
        except pmapi.pmErr as exc:
            if exc.args and exc.args[0] == c_api.PM_ERR_EOL:
                entry["eol"] = True
                samples.append(entry)
                t += delta_ns
                continue
            raise
        res = r.contents
        for k in range(res.numpmid):
            vsp = res.get_vset(k)
            pmid = vsp.contents.pmid
            vtype = descs[pmid].contents.type
            vs = vsp.contents
            vals = []
            for j in range(max(vs.numval, 0)):
                vl = res.get_vlist(k, j)   # vs.vlist is declared with one element
                vals.append([vl.inst, encode_value(vs.valfmt, vl, vtype)])
            entry["values"][pmid_str(pmid)] = {"numval": vs.numval, "values": sorted(vals)}
        free(r)
        samples.append(entry)
        t += delta_ns


if __name__ == "__main__":
    main(sys.argv)
