#!/usr/bin/python3
"""Read a PCP archive through the PMAPI and print one JSON document.

Usage:  /usr/bin/python3 pm_read.py BASE

Runs under the system python of a PCP (its bindings), never the project venv: Debian's
PCP 6.0.3, 6.3.x and 7.x alike (the calls that differ between their bindings are chosen
by what the bindings offer, and text comes out as str under all of them).

Output (keys sorted):
  label    {"version", "hostname", "timezone", "zoneinfo", "pid", "start": [sec, nsec]}
  end      [sec, nsec]                          pmGetHighResArchiveEnd (PCP 7: pmGetArchiveEnd)
  metrics  {"d.c.i": {"names", "type", "sem", "indom": "d.s"|null,
                      "units": [dimSpace, dimTime, dimCount, scaleSpace, scaleTime, scaleCount]}}
  results  [{"time": [sec, nsec], "mark": bool,
             "values": {"d.c.i": {"numval": n, "valfmt": f, "values": [[inst, VALUE], ...]}}}]
           pmFetchHighResArchive (PCP 7: pmFetchArchive) forward until PM_ERR_EOL
  indoms   {"d.s": [[[sec, nsec], {"inst": "name", ...}], ...]}
           pmGetInDom after each fetch (the context's current time is the
           result's time), recorded when the instance list changes
  indoms_all {"d.s": {"inst": "name"}}          pmGetInDomArchive (union)
  text     {"pmid:d.c.i:oneline": ..., "pmid:d.c.i:help": ...,
            "indom:d.s:oneline": ..., "indom:d.s:help": ...}
           pmLookupText / pmLookupInDomText with PM_TEXT_DIRECT (no fallback
           from help to oneline); only metrics/indoms with a desc are asked
  labels   {"context": {...}, "pmid:d.c.i": {"domain": .., "indom": .., "cluster": .., "item": ..},
            "instances:d.s": {"inst": {...}}}

VALUE: integer types as JSON ints; float "f32:" + 8 hex digits and double
"f64:" + 16 hex digits (big-endian IEEE bits); string "str:" + hex of the
bytes (no NUL); aggregate "agg:" + hex; event types "event".
"""

import ctypes
import json
import os
import sys

# no global derived metrics (/etc/pcp/derived/*): only what the archive holds
os.environ["PCP_DERIVED_CONFIG"] = ""

try:
    from pcp import pmapi
    import cpmapi as c_api
except ImportError as exc:  # pragma: no cover - environment problem
    sys.stderr.write("pm_read.py: cannot import PCP python bindings: %s\n" % exc)
    sys.exit(2)

LIBPCP = pmapi.LIBPCP
LIBC = pmapi.LIBC
LIBC.free.argtypes = [ctypes.c_void_p]
LIBC.free.restype = None

PM_VAL_HDR_SIZE = 4
EVENT_TYPES = (c_api.PM_TYPE_EVENT, c_api.PM_TYPE_HIGHRES_EVENT)
AGG_TYPES = (c_api.PM_TYPE_AGGREGATE, c_api.PM_TYPE_AGGREGATE_STATIC)


def pmid_str(pmid):
    return "%d.%d.%d" % ((pmid >> 22) & 0x1ff, (pmid >> 10) & 0xfff, pmid & 0x3ff)


def indom_str(indom):
    if indom == c_api.PM_INDOM_NULL:
        return None
    return "%d.%d" % ((indom >> 22) & 0x1ff, indom & 0x3fffff)


def _block_bytes(addr):
    """bytes of the payload of the pmValueBlock at addr (header: vlen 24 bits)."""
    hdr = ctypes.c_uint32.from_address(addr).value
    vlen = hdr & 0xffffff if sys.byteorder == "little" else hdr >> 8
    return ctypes.string_at(addr + PM_VAL_HDR_SIZE, max(vlen - PM_VAL_HDR_SIZE, 0))


def encode_value(valfmt, vlist, vtype):
    if vtype in EVENT_TYPES:
        return "event"
    atom = pmapi.pmAtomValue()
    sts = LIBPCP.pmExtractValue(valfmt, ctypes.byref(vlist), vtype, ctypes.byref(atom), vtype)
    if sts < 0:
        return "error:%s" % c_api.pmErrSymDict.get(sts, sts)
    if vtype == c_api.PM_TYPE_32:
        return atom.l
    if vtype == c_api.PM_TYPE_U32:
        return atom.ul
    if vtype == c_api.PM_TYPE_64:
        return atom.ll
    if vtype == c_api.PM_TYPE_U64:
        return atom.ull
    if vtype == c_api.PM_TYPE_FLOAT:
        return "f32:%08x" % atom.ul          # raw bits through the union
    if vtype == c_api.PM_TYPE_DOUBLE:
        return "f64:%016x" % atom.ull
    if vtype == c_api.PM_TYPE_STRING:
        ptr = atom.vp
        if not ptr:
            return "str:"
        data = ctypes.string_at(ptr)          # malloc'd copy, NUL terminated
        LIBC.free(ptr)
        return "str:" + data.hex()
    if vtype in AGG_TYPES:
        ptr = atom.vp                         # malloc'd pmValueBlock copy
        if not ptr:
            return "agg:"
        data = _block_bytes(ptr)
        LIBC.free(ptr)
        return "agg:" + data.hex()
    return "unknown-type:%d" % vtype


def _signed4(v):
    return v - 16 if v & 8 else v


def units_of(units):
    """[dimSpace, dimTime, dimCount, scaleSpace, scaleTime, scaleCount] of a pmUnits, read
    from its 32-bit word as libpcp's C code reads it (dimensions and scaleCount signed;
    dimSpace in the top bits with gcc's bitfields and with left-to-right ones alike).

    Not through the bindings' bitfields: PCP 7.2's declare the three scales unsigned, so
    they would report scaleCount -1 as 15 where libpcp itself (pmUnitsStr) says 10^-1."""
    word = ctypes.c_uint32.from_address(ctypes.addressof(units)).value
    return [_signed4(word >> 28 & 15), _signed4(word >> 24 & 15), _signed4(word >> 20 & 15),
            word >> 16 & 15, word >> 12 & 15, _signed4(word >> 8 & 15)]


def as_text(t):
    """Help text as str: PCP 6.0's bindings return pmLookupText as bytes, 6.3 and later as
    str (pmLookupInDomText is str in both)."""
    if isinstance(t, bytes):
        return t.decode("utf-8", "replace")
    return t


def ts(t):
    """[sec, nsec] of a struct timespec, or of a struct timeval (older bindings)."""
    if hasattr(t, "tv_nsec"):
        return [int(t.tv_sec), int(t.tv_nsec)]
    return [int(t.tv_sec), int(t.tv_usec) * 1000]


class Reader(object):

    def __init__(self, base):
        self.ctx = pmapi.pmContext(c_api.PM_CONTEXT_ARCHIVE, base)
        self.descs = {}     # pmid -> pmDesc pointer
        self.out = {}

    def label(self):
        # PCP 6.x: pmGetHighResArchiveLabel/End (timespec) beside the timeval calls;
        # PCP 7: the plain names are the timespec ones and the HighRes names are gone
        get_label = getattr(self.ctx, "pmGetHighResArchiveLabel", None) or self.ctx.pmGetArchiveLabel
        get_end = getattr(self.ctx, "pmGetHighResArchiveEnd", None) or self.ctx.pmGetArchiveEnd
        lab = get_label()
        zoneinfo = getattr(lab, "get_zoneinfo", None)
        self.out["label"] = {
            "version": lab.magic & 0xff,
            "hostname": lab.get_hostname(),
            "timezone": lab.get_timezone(),
            "zoneinfo": zoneinfo() if zoneinfo is not None else None,
            "pid": lab.pid_t,
            "start": ts(lab.start),
        }
        self.out["end"] = ts(get_end())

    def metrics(self):
        names = []
        self.ctx.pmTraversePMNS("", lambda name: names.append(name))
        metrics = {}
        if names:
            pmids = self.ctx.pmLookupName(names, relaxed=1)
            for pmid in sorted(set(pmids)):
                if pmid == c_api.PM_ID_NULL or (pmid >> 22) & 0x1ff == 511:
                    continue        # unresolved or derived (DYNAMIC_PMID domain)
                self._desc_entry(pmid, metrics)
        self.out["metrics"] = metrics

    def _desc_entry(self, pmid, metrics):
        key = pmid_str(pmid)
        if key in metrics:
            return
        desc = self.ctx.pmLookupDesc(pmid)
        self.descs[pmid] = desc
        u = units_of(desc.contents.units)
        try:
            names = sorted(self.ctx.pmNameAll(pmid))
        except pmapi.pmErr:
            names = []
        metrics[key] = {
            "names": names,
            "type": desc.contents.type,
            "sem": desc.contents.sem,
            "indom": indom_str(desc.contents.indom),
            "units": u,
        }

    def _indom_desc(self, indom):
        # pcp.pmapi's get_indom() only accepts a pmDesc pointer
        for desc in self.descs.values():
            if desc.contents.indom == indom:
                return desc
        raise KeyError(indom)

    def _indom_snapshot(self, indom):
        try:
            insts, names = self.ctx.pmGetInDom(indom=indom)
        except pmapi.pmErr:
            return None
        if not insts:
            return {}
        return dict((str(i), n) for i, n in zip(insts, names))

    def results(self):
        """Every result, pmFetchArchive'd; the document holds what was read so far, so a
        caller that catches an error still has it (pm_set.py)."""
        results = []
        indoms = {}
        last_snap = {}
        want_indoms = sorted(set(d.contents.indom for d in self.descs.values()
                                 if d.contents.indom != c_api.PM_INDOM_NULL))
        # PCP 6.x: pmFetchHighResArchive; PCP 7: pmFetchArchive gives the timespec result
        fetch = getattr(self.ctx, "pmFetchHighResArchive", None) or self.ctx.pmFetchArchive
        free = getattr(self.ctx, "pmFreeHighResResult", None) or self.ctx.pmFreeResult
        self.out["results"] = results
        self.out["indoms"] = indoms
        self.out["indoms_all"] = {}
        while True:
            try:
                rp = fetch()
            except pmapi.pmErr as exc:
                if exc.args and exc.args[0] == c_api.PM_ERR_EOL:
                    break
                raise
            r = rp.contents
            when = ts(r.timestamp)
            values = {}
            for k in range(r.numpmid):
                vsp = r.get_vset(k).contents
                values[pmid_str(vsp.pmid)] = self._vset_entry(r, k, vsp)
            results.append({"time": when, "mark": r.numpmid == 0, "values": values})
            free(rp)
            for indom in want_indoms:
                snap = self._indom_snapshot(indom)
                if snap is not None and snap != last_snap.get(indom):
                    indoms.setdefault(indom_str(indom), []).append([when, snap])
                    last_snap[indom] = snap
        for indom in want_indoms:
            try:
                insts, names = self.ctx.pmGetInDomArchive(self._indom_desc(indom))
            except pmapi.pmErr:
                continue
            self.out["indoms_all"][indom_str(indom)] = dict((str(i), n) for i, n in zip(insts or [], names or []))

    def _vset_entry(self, r, k, vsp):
        pmid = vsp.pmid
        if pmid not in self.descs:
            self._desc_entry(pmid, self.out["metrics"])
        return self._vset_values(r, k, vsp, {"numval": vsp.numval,
                                             "valfmt": vsp.valfmt if vsp.numval > 0 else None, "values": []})

    def _vset_values(self, r, k, vsp, ent):
        vtype = self.descs[vsp.pmid].contents.type
        for j in range(max(vsp.numval, 0)):
            vl = r.get_vlist(k, j)
            ent["values"].append([vl.inst, encode_value(vsp.valfmt, vl, vtype)])
        return ent

    def text(self):
        out = {}
        # PM_TEXT_DIRECT: no libpcp fallback from a missing help text to the
        # oneline, so each key present means that text record is in .meta
        direct = getattr(c_api, "PM_TEXT_DIRECT", 16)
        kinds = (("oneline", c_api.PM_TEXT_ONELINE | direct),
                 ("help", c_api.PM_TEXT_HELP | direct))
        indoms = set()
        for pmid, desc in sorted(self.descs.items()):
            for kname, kind in kinds:
                try:
                    t = self.ctx.pmLookupText(pmid, kind)
                except pmapi.pmErr:
                    continue
                out["pmid:%s:%s" % (pmid_str(pmid), kname)] = as_text(t)
            if desc.contents.indom != c_api.PM_INDOM_NULL:
                indoms.add(desc.contents.indom)
        for indom in sorted(indoms):
            for kname, kind in kinds:
                try:
                    t = self.ctx.pmLookupInDomText(self._indom_desc(indom), kind)
                except pmapi.pmErr:
                    continue
                out["indom:%s:%s" % (indom_str(indom), kname)] = as_text(t)
        self.out["text"] = out

    def labels(self):
        out = {}
        try:
            out["context"] = self.ctx.pmGetContextLabels()
        except pmapi.pmErr:
            pass
        names = {c_api.PM_LABEL_CONTEXT: "context", c_api.PM_LABEL_DOMAIN: "domain",
                 c_api.PM_LABEL_INDOM: "indom", c_api.PM_LABEL_CLUSTER: "cluster",
                 c_api.PM_LABEL_ITEM: "item"}
        indoms = set()
        for pmid, desc in sorted(self.descs.items()):
            try:
                got = self.ctx.pmLookupLabels(pmid)
            except pmapi.pmErr:
                continue
            got = dict((names.get(k, str(k)), v) for k, v in got.items() if k != c_api.PM_LABEL_CONTEXT)
            if got:
                out["pmid:%s" % pmid_str(pmid)] = got
            if desc.contents.indom != c_api.PM_INDOM_NULL:
                indoms.add(desc.contents.indom)
        for indom in sorted(indoms):
            try:
                got = self.ctx.pmGetInstancesLabels(indom)
            except pmapi.pmErr:
                continue
            if got:
                out["instances:%s" % indom_str(indom)] = dict((str(k), v) for k, v in got.items())
        self.out["labels"] = out

    def run(self):
        self.label()
        self.metrics()
        self.results()
        self.text()
        self.labels()
        return self.out


def main(argv):
    if len(argv) != 2:
        sys.stderr.write("usage: pm_read.py BASE\n")
        return 2
    try:
        doc = Reader(argv[1]).run()
    except pmapi.pmErr as exc:
        sys.stderr.write("pm_read.py: PMAPI error: %s\n" % exc)
        return 1
    json.dump(doc, sys.stdout, sort_keys=True)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
