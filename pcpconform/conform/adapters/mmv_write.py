"""Write MMV files with libpcp_mmv's registry API (ctypes), as a JSON spec says.

Run under a PCP's own python (it imports nothing but the standard library and loads
libpcp_mmv.so.1): ``mmv_write.py SPEC OUT``. A SPEC holding one case (an object) is written
to OUT; each case ``c`` of a SPEC holding a list to ``OUT.<c.name>``. A case has ``cluster``,
``flags``, ``indoms`` (serial, shorttext, helptext, instances as [id, name] pairs),
``metrics`` (name, item, type, semantics, dimension, indom, shorttext, helptext, values:
instance, atom as hex, extra, string) and ``label_calls`` (the mmv_stats_add_*_label calls:
kind and arguments). Values are stored straight into the mapped pmAtomValue and ``extra``
words (as an application does), strings through mmv_set_string. Prints nothing; a failing
libpcp_mmv call exits 1 naming the call. The libpcp adapters' mmv-writer runs it, and so do
the differential tests of libpcp_mmv.
"""

from __future__ import annotations

import ctypes
import json
import sys
from typing import Any

lib = ctypes.CDLL("libpcp_mmv.so.1")
P, INT, S = ctypes.c_void_p, ctypes.c_int, ctypes.c_char_p
lib.mmv_stats_registry.restype = P
lib.mmv_stats_registry.argtypes = [S, INT, INT]
lib.mmv_stats_add_indom.argtypes = [P, INT, S, S]
lib.mmv_stats_add_instance.argtypes = [P, INT, INT, S]
# pmUnits is one 32-bit bit-field word, passed by value like an unsigned int
lib.mmv_stats_add_metric.argtypes = [P, S, INT, INT, INT, ctypes.c_uint32, INT, S, S]
lib.mmv_stats_add_registry_label.argtypes = [P, S, S, INT, INT]
lib.mmv_stats_add_indom_label.argtypes = [P, INT, S, S, INT, INT]
lib.mmv_stats_add_metric_label.argtypes = [P, INT, S, S, INT, INT]
lib.mmv_stats_add_instance_label.argtypes = [P, INT, INT, S, S, INT, INT]
lib.mmv_stats_start.restype = P
lib.mmv_stats_start.argtypes = [P]
lib.mmv_lookup_value_desc.restype = P
lib.mmv_lookup_value_desc.argtypes = [P, S, S]
lib.mmv_set_string.argtypes = [P, P, S, INT]

keep: list[bytes] = []  # the registry keeps pointers to these strings until mmv_stats_start


def b(text: str | None) -> bytes | None:
    if text is None:
        return None
    data = text.encode("utf-8", "surrogateescape")
    keep.append(data)
    return data


def check(sts: int, what: str) -> None:
    if sts != 0:
        sys.exit(f"{what} returned {sts} (errno {ctypes.get_errno()})")


def write(case: dict[str, Any], path: str) -> None:
    reg = lib.mmv_stats_registry(b(path), case["cluster"], case["flags"])
    for d in case["indoms"]:
        check(lib.mmv_stats_add_indom(reg, d["serial"], b(d["shorttext"]), b(d["helptext"])), "add_indom")
        for inst, name in d["instances"]:
            # its return value is not checked: libpcp_mmv's search loop lacks a break, so
            # it reports EINVAL (-1) after adding the instance
            lib.mmv_stats_add_instance(reg, d["serial"], inst, b(name))
    for m in case["metrics"]:
        check(lib.mmv_stats_add_metric(reg, b(m["name"]), m["item"], m["type"], m["semantics"],
                                       m["dimension"], m["indom"], b(m["shorttext"]),
                                       b(m["helptext"])), "add_metric")
    for lb in case["label_calls"]:
        kind, args = lb[0], lb[1:]
        fn = getattr(lib, f"mmv_stats_add_{kind}_label")
        args = [b(a) if isinstance(a, str) else a for a in args]
        check(fn(reg, *args), f"add_{kind}_label")
    addr = lib.mmv_stats_start(reg)
    if not addr:
        sys.exit("mmv_stats_start failed")
    names = {d["serial"]: dict(d["instances"]) for d in case["indoms"]}
    for m in case["metrics"]:
        for v in m["values"]:
            inst = None if v["instance"] is None else names[m["indom"]][v["instance"]]
            av = lib.mmv_lookup_value_desc(addr, b(m["name"]), b(inst))
            if not av:
                sys.exit(f"no value for {m['name']} {inst}")
            if v["string"] is not None:
                data = b(v["string"]) or b""
                lib.mmv_set_string(addr, av, data, len(data))
            else:
                ctypes.memmove(av, bytes.fromhex(v["atom"]), 8)
                ctypes.c_int64.from_address(av + 8).value = v["extra"]


def main() -> None:
    spec, out = sys.argv[1], sys.argv[2]
    with open(spec) as f:
        cases = json.load(f)
    if isinstance(cases, dict):
        write(cases, out)
        return
    for case in cases:
        write(case, f"{out}.{case['name']}")


main()
