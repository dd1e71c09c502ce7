"""A target that never exits when a descriptor's type is outside -1..10."""

import os
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _meta import meta_records

for rtype, body in meta_records(sys.argv[1]):
    if rtype == 1 and len(body) >= 8 and not -1 <= struct.unpack_from(">i", body, 4)[0] <= 10:
        while True:
            time.sleep(0.05)
print("ok")
