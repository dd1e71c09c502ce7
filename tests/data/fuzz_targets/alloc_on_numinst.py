"""A target that allocates without bound when a v2 instance domain's numinst is negative
or larger than its record could hold."""

import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _meta import meta_records

for rtype, body in meta_records(sys.argv[1]):
    if rtype == 2 and len(body) >= 16:
        numinst = struct.unpack_from(">i", body, 12)[0]
        if numinst < 0 or numinst * 8 > len(body):
            hoard = []
            while True:
                hoard.append(bytearray(64 << 20))
print("ok")
