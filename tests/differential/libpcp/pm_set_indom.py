#!/usr/bin/python3
"""pmGetInDom after pmSetMode, on an archive set.

Usage:  /usr/bin/python3 pm_set_indom.py SEC INDOM_DOMAIN INDOM_SERIAL SOURCE...

Opens SOURCE... (joined with commas) and, without any other call, sets PM_MODE_INTERP at
SEC (pmSetMode positions the context in a member, SET-REPLAY-6) and prints pmGetInDom's
instances of the indom at that time as JSON ({"id": "name"}), or {"error": "PM_ERR_..."}.
Runs under a PCP's system python.
"""

import json
import sys

from pcp import pmapi
import cpmapi as c_api


def main(argv):
    sec, domain, serial = int(argv[1]), int(argv[2]), int(argv[3])
    ctx = pmapi.pmContext(c_api.PM_CONTEXT_ARCHIVE, ",".join(argv[4:]))
    set_mode = getattr(ctx, "pmSetModeHighRes", None) or ctx.pmSetMode
    set_mode(c_api.PM_MODE_INTERP, pmapi.timespec(sec, 0), pmapi.timespec(1, 0))
    try:
        insts, names = ctx.pmGetInDom(indom=(domain << 22) | serial)
    except pmapi.pmErr as exc:
        print(json.dumps({"error": str(exc).split()[0]}))
        return 0
    print(json.dumps(dict((str(i), n) for i, n in zip(insts or [], names or []))))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
