"""A live MMV writer for ``check --watch`` tests: libpcp_mmv's registry API (ctypes), run
under a PCP's own python, updating its file by a plan.

    mmv_live.py FILE STEP...

It writes FILE (cluster 5, the PROCESS flag) with three singular metrics: ``ticks`` (u64
counter), ``steady`` (u32 instant, never changed) and ``bytes`` (u64 counter starting just
below 2^33), prints "ready", then runs the steps, each ``HOLD`` seconds apart: ``tick`` adds
1 to ticks and 32 to bytes as a plain 64-bit store; ``torn`` moves bytes up past the next
multiple of 2^32 as two 32-bit stores, the low half first, and holds the half-written value,
lower than before, for HOLD seconds; ``rewrite`` sets g2 to 0 for
HOLD seconds, then both generations to a new one, as a writer re-creating its file does;
``delete`` removes FILE. At the end the process exits, leaving what is left of FILE.
"""

import ctypes
import struct
import sys
import time

HOLD = 1.0

lib = ctypes.CDLL("libpcp_mmv.so.1")
P, INT, S = ctypes.c_void_p, ctypes.c_int, ctypes.c_char_p
lib.mmv_stats_registry.restype = P
lib.mmv_stats_registry.argtypes = [S, INT, INT]
lib.mmv_stats_add_metric.argtypes = [P, S, INT, INT, INT, ctypes.c_uint32, INT, S, S]
lib.mmv_stats_start.restype = P
lib.mmv_stats_start.argtypes = [P]
lib.mmv_lookup_value_desc.restype = P
lib.mmv_lookup_value_desc.argtypes = [P, S, S]

U32, U64, COUNTER, INSTANT, PROCESS = 1, 3, 1, 3, 0x2


#: the registry keeps pointers to these until mmv_stats_start: they must outlive it
KEEP = []


def main():
    path, steps = sys.argv[1], sys.argv[2:]
    KEEP.append(path.encode())
    reg = lib.mmv_stats_registry(KEEP[-1], 5, PROCESS)
    for name, item, mtype, sem in ((b"ticks", 1, U64, COUNTER), (b"steady", 2, U32, INSTANT),
                                   (b"bytes", 3, U64, COUNTER)):
        if lib.mmv_stats_add_metric(reg, name, item, mtype, sem, 0, 0, None, None) != 0:
            sys.exit(f"add_metric {name!r} failed")
    addr = lib.mmv_stats_start(reg)
    if not addr:
        sys.exit("mmv_stats_start failed")
    ticks = lib.mmv_lookup_value_desc(addr, b"ticks", None)
    steady = lib.mmv_lookup_value_desc(addr, b"steady", None)
    counted = lib.mmv_lookup_value_desc(addr, b"bytes", None)
    ctypes.c_uint32.from_address(steady).value = 7
    value = 2**33 - 48
    ctypes.c_uint64.from_address(counted).value = value
    print("ready", flush=True)
    for step in steps:
        time.sleep(HOLD)
        if step == "tick":
            ctypes.c_uint64.from_address(ticks).value += 1
            value += 32
            ctypes.c_uint64.from_address(counted).value = value
        elif step == "torn":
            value = (((value >> 32) + 1) << 32) | 16      # the half-written value is lower
            low, high = struct.unpack("<II", struct.pack("<Q", value))
            ctypes.c_uint32.from_address(counted).value = low
            time.sleep(HOLD)
            ctypes.c_uint32.from_address(counted + 4).value = high
        elif step == "rewrite":
            header = ctypes.c_uint64.from_address(addr + 8)
            g2 = ctypes.c_uint64.from_address(addr + 16)
            g2.value = 0
            time.sleep(HOLD)
            header.value += 1 << 32
            g2.value = header.value
        elif step == "delete":
            import os
            os.unlink(path)
        else:
            sys.exit(f"no such step {step!r}")
    print("done", flush=True)


main()
