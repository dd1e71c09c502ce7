#!/usr/bin/python3
"""pminfo -m on an archive with a derived-metric config, under a referee's PCP.

Usage:  /usr/bin/python3 derive_pminfo.py CONFIG BASE NAME...

Sets $PCP_DERIVED_CONFIG to CONFIG (a path inside the referee's file system, which the
caller cannot name in the environment itself) and runs ``pminfo -m -a BASE NAME...``,
passing its output and exit status through.
"""

import os
import subprocess
import sys

os.environ["PCP_DERIVED_CONFIG"] = sys.argv[1]
proc = subprocess.run(["pminfo", "-m", "-a", sys.argv[2]] + sys.argv[3:])
sys.exit(proc.returncode)
