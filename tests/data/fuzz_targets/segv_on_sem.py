"""A target that dies of SIGSEGV when a descriptor's semantics is not 1, 3 or 4."""

import os
import signal
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _meta import meta_records

for rtype, body in meta_records(sys.argv[1]):
    if rtype == 1 and len(body) >= 16 and struct.unpack_from(">i", body, 12)[0] not in (1, 3, 4):
        os.kill(os.getpid(), signal.SIGSEGV)
print("ok")
