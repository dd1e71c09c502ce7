#!/usr/bin/python3
"""Read many archives through the PMAPI, each in a child process, and print one JSON line
per archive: what libpcp's own reading of it gives, and where it stops.

Usage:  /usr/bin/python3 pm_values.py [--values] [--replay] [--timeout S] BASE...

Runs under the system python of a PCP (its bindings), never the project venv. Each archive
is read in a forked child, so a crash or a hang of libpcp on a damaged archive costs that
archive alone (the line then says ``"crash": SIGNAL`` or ``"hang": true``).

Each line (keys sorted):
  base      the base name as given
  open      null, or the error pmNewContext gave
  stop      null when the forward fetch loop reached PM_ERR_EOL, else the error it ended with
  results   results fetched before the loop ended
  values    values pmExtractValue gave (with --values: [[sec, nsec, "d.c.i", inst, VALUE], ...],
            in pm_read.py's encoding; else their count)
  conv      values pmExtractValue refused
  replay    with --replay: null, or the first error of an interpolated replay of every metric
            the forward read met (PM_MODE_INTERP, 25 steps from the label's start to the
            archive's end) and a
            backwards fetch loop (PM_MODE_BACK from the end) to PM_ERR_EOL
"""

import ctypes
import json
import os
import select
import signal
import sys
import time

os.environ["PCP_DERIVED_CONFIG"] = ""

try:
    from pcp import pmapi
    import cpmapi as c_api
except ImportError as exc:  # pragma: no cover - environment problem
    sys.stderr.write("pm_values.py: cannot import PCP python bindings: %s\n" % exc)
    sys.exit(2)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pm_read import encode_value, pmid_str, ts  # noqa: E402  (beside this script)


def _fetch_fn(ctx):
    return getattr(ctx, "pmFetchHighResArchive", None) or ctx.pmFetchArchive


def _free_fn(ctx):
    return getattr(ctx, "pmFreeHighResResult", None) or ctx.pmFreeResult


def forward(ctx, keep_values, descs):
    out = {"results": 0, "conv": 0, "stop": None, "values": [] if keep_values else 0}
    fetch, free = _fetch_fn(ctx), _free_fn(ctx)
    while True:
        try:
            rp = fetch()
        except pmapi.pmErr as exc:
            if exc.args and exc.args[0] == c_api.PM_ERR_EOL:
                return out
            out["stop"] = str(exc)
            return out
        r = rp.contents
        when = ts(r.timestamp)
        out["results"] += 1
        for k in range(r.numpmid):
            vsp = r.get_vset(k).contents
            pmid = vsp.pmid
            if pmid not in descs:
                try:
                    descs[pmid] = ctx.pmLookupDesc(pmid).contents.type
                except pmapi.pmErr:
                    descs[pmid] = None
            vtype = descs[pmid]
            for j in range(max(vsp.numval, 0)):
                if vtype is None:
                    out["conv"] += 1
                    continue
                value = encode_value(vsp.valfmt, r.get_vlist(k, j), vtype)
                if isinstance(value, str) and value.startswith("error:"):
                    out["conv"] += 1
                elif keep_values:
                    out["values"].append([when[0], when[1], pmid_str(pmid), r.get_vlist(k, j).inst, value])
                else:
                    out["values"] += 1
        free(rp)


def replay(ctx, seen):
    """The first error of an interpolated replay of the metrics ``seen`` in the forward
    read and of a backwards read, or None."""
    # not libpcp's own anonymous metrics (event.flags, event.missed: domain 511), which are
    # not the archive's (and, fetched with an AGGREGATE_STATIC metric in PM_MODE_INTERP,
    # crash 6.0.3 on a valid archive)
    found = sorted(p for p in seen if (p >> 22) & 0x1ff != 511)
    pmids = (ctypes.c_uint * len(found))(*found)
    get_label = getattr(ctx, "pmGetHighResArchiveLabel", None) or ctx.pmGetArchiveLabel
    get_end = getattr(ctx, "pmGetHighResArchiveEnd", None) or ctx.pmGetArchiveEnd
    start, end = ts(get_label().start), ts(get_end())
    span = max((end[0] - start[0]) * 10**9 + end[1] - start[1], 25)
    step = span // 25
    # PCP 6.x: the timespec calls are the HighRes ones; PCP 7: the plain names take timespecs
    set_mode = getattr(ctx, "pmSetModeHighRes", None) or ctx.pmSetMode
    fetch_interp = getattr(ctx, "pmFetchHighRes", None) or ctx.pmFetch
    free = _free_fn(ctx)
    try:
        set_mode(c_api.PM_MODE_INTERP, pmapi.timespec(start[0], start[1]),
                 pmapi.timespec(step // 10**9, step % 10**9))
        for _ in range(26):
            if found:
                free(fetch_interp(pmids))
    except pmapi.pmErr as exc:
        if not (exc.args and exc.args[0] == c_api.PM_ERR_EOL):
            return "interp: %s" % exc
    try:
        set_mode(c_api.PM_MODE_BACK, pmapi.timespec(end[0], end[1]), pmapi.timespec(0, 0))
        fetch = _fetch_fn(ctx)
        while True:
            free(fetch())
    except pmapi.pmErr as exc:
        if not (exc.args and exc.args[0] == c_api.PM_ERR_EOL):
            return "backwards: %s" % exc
    return None


def read_one(base, keep_values, want_replay):
    out = {"base": base, "open": None}
    try:
        ctx = pmapi.pmContext(c_api.PM_CONTEXT_ARCHIVE, base)
    except pmapi.pmErr as exc:
        out["open"] = str(exc)
        return out
    descs = {}
    out.update(forward(ctx, keep_values, descs))
    if want_replay:
        try:
            out["replay"] = replay(ctx, [p for p, t in descs.items() if t is not None])
        except pmapi.pmErr as exc:
            out["replay"] = "replay: %s" % exc
    return out


def in_child(base, keep_values, want_replay, timeout):
    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: read, write one line, leave without cleanup
        os.close(rfd)
        try:
            data = json.dumps(read_one(base, keep_values, want_replay), sort_keys=True).encode()
        except Exception as exc:  # a bug of this script, not of libpcp
            data = json.dumps({"base": base, "script_error": repr(exc)}).encode()
        with os.fdopen(wfd, "wb") as w:
            w.write(data)
        os._exit(0)
    os.close(wfd)
    chunks = []
    deadline = time.monotonic() + timeout
    with os.fdopen(rfd, "rb") as r:
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([r], [], [], left)[0]:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                return {"base": base, "hang": True}
            chunk = os.read(r.fileno(), 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        return {"base": base, "crash": signal.Signals(os.WTERMSIG(status)).name}
    return json.loads(b"".join(chunks).decode())


def main(argv):
    keep_values = "--values" in argv
    want_replay = "--replay" in argv
    timeout = 20.0
    bases = []
    args = iter(argv[1:])
    for a in args:
        if a == "--timeout":
            timeout = float(next(args))
        elif not a.startswith("--"):
            bases.append(a)
    for base in bases:
        sys.stdout.write(json.dumps(in_child(base, keep_values, want_replay, timeout), sort_keys=True) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
