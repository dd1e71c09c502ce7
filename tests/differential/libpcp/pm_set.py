#!/usr/bin/python3
"""Read an archive set (a directory, or members joined with commas) through the PMAPI.

Usage:  /usr/bin/python3 pm_set.py read SOURCE...
        /usr/bin/python3 pm_set.py interp START_SEC START_NSEC DELTA_NSEC COUNT PMID,... SOURCE...

SOURCE... are joined with commas into the name given to pmNewContext (one directory, or the
members of a comma-separated list). Runs under a PCP's system python, as pm_read.py does;
pm_read.py must lie beside it.

read:   pm_read.py's document for the set, with "names_at_open" (name: pmID of every name
        the PMNS finds right after the context is opened), "text_at_open" (the help text
        looked up then: PCP 6.0 reloads a member's text as a replay reaches it) and "error" (null, or the PMAPI error that ended the forward pass of
        pmFetchArchive, the results before it kept). An error opening the set prints
        {"open_error": "PM_ERR_..."} and exits 0.
interp: one JSON line per fetch, written as it is done (a libpcp that dies mid-replay
        leaves the fetches before): {"time": [sec, nsec], "eol": bool, "error": null|text,
        "values": {"d.c.i": {"numval": n, "values": [[inst, VALUE], ...]}}}; an error
        opening the set prints {"open_error": ...} instead.
"""

import ctypes
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ["PCP_DERIVED_CONFIG"] = ""

from pcp import pmapi  # noqa: E402
import cpmapi as c_api  # noqa: E402

from pm_read import Reader, encode_value, pmid_str  # noqa: E402


def err_name(exc):
    """The error's symbol: PM_ERR_LOGOVERLAP, or errno's name"""
    text = str(exc).split()
    return text[0] if text else "error %s" % (exc.args[:1],)


class SetReader(Reader):

    def run(self):
        self.label()
        self.metrics()
        self.names_at_open()
        self.text()
        self.out["text_at_open"] = self.out.pop("text")
        self.out["error"] = None
        try:
            self.results()
        except pmapi.pmErr as exc:
            self.out["error"] = err_name(exc)
            self.out.setdefault("results", [])
        self.text()
        self.labels()
        return self.out

    def names_at_open(self):
        # the names the PMNS finds right after opening (pmTraversePMNS, pmLookupName), each
        # with its pmID: PCP 6.0 finds no name under a node a later member added
        names = []
        self.ctx.pmTraversePMNS("", lambda name: names.append(name))
        pmids = self.ctx.pmLookupName(names, relaxed=1) if names else []
        self.out["names_at_open"] = dict((n, pmid_str(p)) for n, p in zip(names, pmids)
                                         if p != c_api.PM_ID_NULL and (p >> 22) & 0x1ff != 511)

    def _vset_entry(self, r, k, vsp):
        # values of metrics libpcp has no descriptor for are marked ("nodesc")
        pmid = vsp.pmid
        ent = {"numval": vsp.numval, "valfmt": vsp.valfmt if vsp.numval > 0 else None, "values": []}
        if pmid not in self.descs:
            try:
                self._desc_entry(pmid, self.out["metrics"])
            except pmapi.pmErr as exc:
                ent["nodesc"] = err_name(exc)
        return self._vset_values(r, k, vsp, ent) if pmid in self.descs else ent


def parse_pmid(text):
    d, c, i = (int(x) for x in text.split("."))
    return (d << 22) | (c << 10) | i


def interp(argv):
    sec, nsec, delta_ns, count = int(argv[0]), int(argv[1]), int(argv[2]), int(argv[3])
    pmids = [parse_pmid(p) for p in argv[4].split(",")]
    name = ",".join(argv[5:])
    try:
        ctx = pmapi.pmContext(c_api.PM_CONTEXT_ARCHIVE, name)
        descs = dict((p, ctx.pmLookupDesc(p)) for p in pmids)
    except pmapi.pmErr as exc:
        print(json.dumps({"open_error": err_name(exc)}))
        return 0
    pmid_array = (ctypes.c_uint * len(pmids))(*pmids)
    sign = -1 if delta_ns < 0 else 1
    delta = pmapi.timespec(sign * (abs(delta_ns) // 10**9), sign * (abs(delta_ns) % 10**9))
    set_mode = getattr(ctx, "pmSetModeHighRes", None) or ctx.pmSetMode
    fetch = getattr(ctx, "pmFetchHighRes", None) or ctx.pmFetch
    free = getattr(ctx, "pmFreeHighResResult", None) or ctx.pmFreeResult
    set_mode(c_api.PM_MODE_INTERP, pmapi.timespec(sec, nsec), delta)
    t = sec * 10**9 + nsec
    for _ in range(count):
        entry = {"time": [t // 10**9, t % 10**9], "eol": False, "error": None, "values": {}}
        t += delta_ns
        try:
            r = fetch(pmid_array)
        except pmapi.pmErr as exc:
            if exc.args and exc.args[0] == c_api.PM_ERR_EOL:
                entry["eol"] = True
            else:
                entry["error"] = err_name(exc)
            sys.stdout.write(json.dumps(entry) + "\n")
            sys.stdout.flush()
            continue
        res = r.contents
        for k in range(res.numpmid):
            vs = res.get_vset(k).contents
            vtype = descs[vs.pmid].contents.type
            vals = []
            for j in range(max(vs.numval, 0)):
                vl = res.get_vlist(k, j)
                vals.append([vl.inst, encode_value(vs.valfmt, vl, vtype)])
            entry["values"][pmid_str(vs.pmid)] = {"numval": vs.numval, "values": sorted(vals)}
        free(r)
        sys.stdout.write(json.dumps(entry) + "\n")
        sys.stdout.flush()
    return 0


def main(argv):
    if len(argv) < 3 or argv[1] not in ("read", "interp"):
        sys.stderr.write("usage: pm_set.py read SOURCE... | interp SEC NSEC DELTA COUNT PMIDS SOURCE...\n")
        return 2
    if argv[1] == "interp":
        return interp(argv[2:])
    try:
        doc = SetReader(",".join(argv[2:])).run()
    except pmapi.pmErr as exc:
        print(json.dumps({"open_error": err_name(exc)}))
        return 0
    json.dump(doc, sys.stdout, sort_keys=True)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
