"""Shared derived-metric test inputs that are not measurements: the archives the unit and
differential tests evaluate over, the profiles they use, and a loader for the tables of
measured libpcp answers under tests/data/ (each names the libpcp versions it was measured
with in its "measured_with" field).

Test modules import from here, never from one another.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pcpconform.oracles.derive.profiles import PROFILES

__all__ = ["DATA", "DERIVE_FIXTURE", "SEED_FIXTURE", "T0", "P60", "P63", "P7", "UNITS",
           "table", "measured_with", "rows_for"]

DATA = Path(__file__).resolve().parent / "data"
P60, P63, P7 = PROFILES["pcp-6.0"], PROFILES["pcp-6.3"], PROFILES["pcp-7"]
T0 = 1700000000

#: every type and semantics, units of each dimension, two instance domains (one instance
#: with a space in its name), instances that come and go, and a mark (gap) at 10..30 s
DERIVE_FIXTURE: dict[str, Any] = {
    "archive": {"version": 3, "hostname": "derive.example", "interval": 5},
    "metrics": [
        {"name": "m.c32", "pmid": "30.0.1", "type": "32", "sem": "counter", "units": "count"},
        {"name": "m.cu32", "pmid": "30.0.2", "type": "u32", "sem": "counter", "units": "count"},
        {"name": "m.c64", "pmid": "30.0.3", "type": "64", "sem": "counter", "units": "byte"},
        {"name": "m.cu64", "pmid": "30.0.4", "type": "u64", "sem": "counter", "units": "Kbyte"},
        {"name": "m.cflt", "pmid": "30.0.5", "type": "float", "sem": "counter", "units": "msec"},
        {"name": "m.cdbl", "pmid": "30.0.6", "type": "double", "sem": "counter", "units": "usec"},
        {"name": "m.kb", "pmid": "30.1.1", "type": "u64", "sem": "instant", "units": "Kbyte"},
        {"name": "m.inst", "pmid": "30.1.2", "type": "double", "sem": "instant", "indom": "30.1",
         "units": "Mbyte / sec"},
        {"name": "m.disc", "pmid": "30.1.3", "type": "32", "sem": "discrete", "indom": "30.1"},
        {"name": "m.str", "pmid": "30.1.4", "type": "string", "sem": "discrete"},
        {"name": "m.flt", "pmid": "30.1.5", "type": "float", "sem": "instant", "indom": "30.1",
         "units": "Mbyte / sec"},
        {"name": "m.i64", "pmid": "30.1.6", "type": "64", "sem": "instant", "indom": "30.2",
         "units": "count"},
    ],
    "indoms": [{"indom": "30.1", "instances": {"a": 0, "b": 1, "c": 5, "dd x": 7}},
               {"indom": "30.2", "instances": {"p": 3, "q": 4}}],
    "samples": [
        {"time": T0, "values": {
            "m.c32": 100, "m.cu32": 200, "m.c64": 1000, "m.cu64": 5, "m.cflt": 1.5,
            "m.cdbl": 2.5, "m.kb": 10, "m.inst": {"a": 1.5, "b": 2.5, "c": 0.0},
            "m.disc": {"a": 1, "b": -2}, "m.str": "hello", "m.flt": {"a": 0.1, "b": 0.2, "c": 0.3},
            "m.i64": {"p": 7, "q": -9}}},
        {"values": {
            "m.c32": 85, "m.cu32": 125, "m.c64": 2000, "m.cu64": 4, "m.cflt": 3.0, "m.cdbl": 2.0,
            "m.kb": 20, "m.inst": {"a": 3.5, "b": 0.5, "c": 1.0, "dd x": 4.0},
            "m.disc": {"a": 3, "c": 4}, "m.str": "bye", "m.flt": {"a": 0.5, "c": 1.25},
            "m.i64": {"p": 1, "q": 2}}},
        {"values": {
            "m.c32": 300, "m.cu32": 400, "m.c64": 2500, "m.cu64": 50, "m.cflt": 3.5, "m.cdbl": 9.0,
            "m.kb": 5, "m.inst": {"b": 5.0, "dd x": 1.0}, "m.disc": {"b": 9}, "m.str": "x",
            "m.flt": {"b": 2.0}, "m.i64": {"q": 4}}},
        {"mark": True},
        {"time": T0 + 30, "values": {
            "m.c32": 400, "m.cu32": 500, "m.c64": 3000, "m.cu64": 60, "m.cflt": 4.0,
            "m.cdbl": 10.0, "m.kb": 6, "m.inst": {"a": 1.0}, "m.disc": {"a": 1}, "m.str": "y",
            "m.flt": {"a": 1.0}, "m.i64": {"p": 5}}},
        {"values": {
            "m.c32": 500, "m.cu32": 600, "m.c64": 4000, "m.cu64": 70, "m.cflt": 5.0,
            "m.cdbl": 11.0, "m.kb": 7, "m.inst": {"a": 2.0, "b": 2.0}, "m.disc": {"a": 2},
            "m.str": "z", "m.flt": {"a": 2.0}, "m.i64": {"p": 6}}},
    ],
}


#: the metrics of the pmRegisterDerived(3) worked example (the seed's table)
SEED_FIXTURE: dict[str, Any] = {
    "archive": {"version": 3, "hostname": "seed.example", "interval": 1},
    "metrics": [
        {"name": "network.interface.speed", "pmid": "60.3.0", "type": "float",
         "sem": "instant", "units": "Mbyte / sec"},
        {"name": "network.interface.in.bytes", "pmid": "60.3.1", "type": "u64",
         "sem": "counter", "units": "byte"},
        {"name": "sample.milliseconds", "pmid": "29.0.1", "type": "double",
         "sem": "counter", "units": "millisec"},
    ],
    "samples": [
        {"time": T0, "values": {"network.interface.speed": 100.0,
                                "network.interface.in.bytes": 0,
                                "sample.milliseconds": 0.0}},
        {"values": {"network.interface.speed": 100.0, "network.interface.in.bytes": 2097152,
                    "sample.milliseconds": 1000.0}},
        {"values": {"network.interface.speed": 100.0, "network.interface.in.bytes": 3145728,
                    "sample.milliseconds": 1500.0}},
    ],
}

#: units strings for pmParseUnitsStr (inputs; answers come from libpcp or units.py)
UNITS = ["Kbyte / sec", "count x 10^3", "", "none", "byte^2/ms", "2 Kbyte", "Kbyte/Mbyte",
         "sec^-1", "MB", "foo", "sec sec", "count x 10^-2 / hour^2", "1e3 byte", "-inf byte",
         "space-9", "time-7", "Kbytes / second", "nanosec", "GiB/hr", "count x 10", "counts",
         "s^2 / Kbyte^3", "byte^8", "byte^7 / sec^-1", "0x10 msec", "- byte", "1e999 byte",
         "1e-320 byte", "Kilobyte", "us", "byte^", "byte^16", "Kbyte/", "/sec", "ms ms",
         "byte / byte", "h", "KB MB"]


def table(name: str) -> dict[str, Any]:
    """tests/data/derive-NAME.json: {"what", "measured_with", "rows"}."""
    with open(DATA / f"derive-{name}.json", encoding="utf-8") as f:
        doc: dict[str, Any] = json.load(f)
    return doc


def measured_with(name: str) -> list[str]:
    """The libpcp versions table ``name`` was measured with."""
    return list(table(name)["measured_with"])


def rows_for(name: str, profile: str | None = None) -> list[dict[str, Any]]:
    """The rows of table ``name`` (those that apply to ``profile``, if given)."""
    rows = table(name)["rows"]
    return [r for r in rows if profile is None or profile in r["profiles"]]
