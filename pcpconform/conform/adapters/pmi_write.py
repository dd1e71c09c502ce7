#!/usr/bin/python3
"""Write a PCP archive with libpcp_import (pcp.pmi) from a JSON fixture.

    /usr/bin/python3 pmi_write.py FIXTURE.json OUTBASE

It runs under a PCP's own system Python (the one carrying its bindings: the host's, or a
chroot's), never under the project's venv, and imports nothing from pcpconform. The libpcp
adapters' writer suite (``libpcp.py``) and the differential tests
(tests/differential/libpcp/bridge.py) run this one copy. ``FIXTURE.json`` is what
``pmi_fixture.fixture_to_pmi`` makes of a fixture file.

Exit status: 0 ok, 2 bad fixture / usage / pmi error, 3 the fixture asks for something
libpcp_import cannot write (e.g. PM_TYPE_AGGREGATE).

Call mapping (in this order):
  pmiLogImport(OUTBASE)                      -> pmiStart
  archive.version   -> pmiSetVersion(2|3)
  archive.hostname  -> pmiSetHostname
  archive.timezone  -> pmiSetTimezone
  metrics[i]        -> pmiAddMetric(name, pmiID(d,c,i), type, pmiInDom|PM_INDOM_NULL, sem, pmiUnits(...))
                       (fixture order, all up front)
  metrics[i].text / indoms[j].text  -> pmiPutText (metric texts in fixture
                       order oneline then help, then indom texts) - queued,
                       written by libpcp at the first pmiWrite
  labels[k]         -> pmiPutLabel(type, ident, inst, name, value) once per
                       name/value - queued likewise.  ident by type:
                       context: ignored (PM_ID_NULL); domain: 60 or "60";
                       cluster: "60.0" (pmiCluster); item: "60.0.1" or a
                       metric name; indom: "60.2"; instances:
                       {"indom": "60.2", "inst": 1 | "name"} (or "60.2" plus
                       an "inst" key).  Values: true/false/null -> JSON
                       literals, anything else str() -> JSON string (pmi
                       quotes it, so 42 becomes "42").
  samples[n]:
     {"mark": true}  -> pmiPutMark()
     otherwise       -> optional per-sample "text" ([{"pmid"|"indom": id,
                        "oneline": .., "help": ..}]) and "labels" (as above)
                        -> pmiPutText/pmiPutLabel (flushed by this write);
                        pmiAddInstance for each instance first referenced by
                        this sample (ascending instance id, see
                        _register_instances); pmiPutValue for each
                        metric/instance in sample order (float/double as C99
                        hex-float strings so strtof/strtod give exact bits;
                        "f32:"/"f64:" bit strings accepted), then
                        v3: pmiHighResWrite(sec, nsec); v2: pmiWrite(sec, nsec // 1000)
  end               -> pmiEnd()
"""

import json
import math
import struct
import sys
from typing import Any

EXIT_BAD = 2
EXIT_UNSUPPORTED = 3

try:
    import cpmapi as c_api  # type: ignore[import-not-found]
    import cpmi as c_pmi  # type: ignore[import-not-found]
    from pcp import pmi  # type: ignore[import-not-found]
except ImportError as _exc:  # an environment problem: one line, no traceback
    sys.stderr.write(f"pmi_write.py: cannot import PCP python bindings: {_exc}\n")
    sys.exit(EXIT_BAD)


class FixtureError(Exception):
    pass


class Unsupported(Exception):
    pass


TYPES = {
    "32": c_api.PM_TYPE_32,
    "u32": c_api.PM_TYPE_U32,
    "64": c_api.PM_TYPE_64,
    "u64": c_api.PM_TYPE_U64,
    "float": c_api.PM_TYPE_FLOAT,
    "double": c_api.PM_TYPE_DOUBLE,
    "string": c_api.PM_TYPE_STRING,
    "aggregate": c_api.PM_TYPE_AGGREGATE,
    "aggregate_static": c_api.PM_TYPE_AGGREGATE_STATIC,
    "event": c_api.PM_TYPE_EVENT,
    "highres_event": c_api.PM_TYPE_HIGHRES_EVENT,
}

SEMS = {
    "counter": c_api.PM_SEM_COUNTER,
    "instant": c_api.PM_SEM_INSTANT,
    "discrete": c_api.PM_SEM_DISCRETE,
}

INT_RANGES = {
    "32": (-(2 ** 31), 2 ** 31 - 1),
    "u32": (0, 2 ** 32 - 1),
    "64": (-(2 ** 63), 2 ** 63 - 1),
    "u64": (0, 2 ** 64 - 1),
}

LABEL_TYPES = {
    "context": c_api.PM_LABEL_CONTEXT,
    "domain": c_api.PM_LABEL_DOMAIN,
    "indom": c_api.PM_LABEL_INDOM,
    "cluster": c_api.PM_LABEL_CLUSTER,
    "item": c_api.PM_LABEL_ITEM,
    "instances": c_api.PM_LABEL_INSTANCES,
}


# -- identifiers -------------------------------------------------------------------------------

def _ints(text: Any, n: int, what: str) -> list[int]:
    if isinstance(text, int) and n == 1:
        return [text]
    parts = str(text).split(".")
    if len(parts) != n:
        raise FixtureError(f"bad {what} {text!r} (want {n} dot-separated integers)")
    try:
        return [int(p, 10) for p in parts]
    except ValueError:
        raise FixtureError(f"bad {what} {text!r}") from None


def parse_pmid(text: Any) -> int:
    d, c, i = _ints(text, 3, "pmid")
    return int(pmi.pmiLogImport.pmiID(d, c, i))


def parse_indom(text: Any) -> int:
    if text is None:
        return int(c_api.PM_INDOM_NULL)
    d, s = _ints(text, 2, "indom")
    return int(pmi.pmiLogImport.pmiInDom(d, s))


def parse_cluster(text: Any) -> int:
    d, c = _ints(text, 2, "cluster")
    return int(pmi.pmiLogImport.pmiCluster(d, c))


# -- values: pmi parses the string with strtol ... strtod, so give strings that parse to
# exact bits --------------------------------------------------------------------------------------

def _float_from_fixture(value: Any, width: str) -> float:
    """A Python float (double) for a fixture value: a JSON number, "inf"/"-inf"/"nan", or
    the exact bit patterns "f32:XXXXXXXX" / "f64:XXXXXXXXXXXXXXXX"."""
    if isinstance(value, bool):
        raise FixtureError("boolean is not a float value")
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        if value.startswith("f32:"):
            return float(struct.unpack(">f", bytes.fromhex(value[4:]))[0])
        if value.startswith("f64:"):
            return float(struct.unpack(">d", bytes.fromhex(value[4:]))[0])
        try:
            return float(value)
        except ValueError:
            pass
    raise FixtureError(f"bad {width} value {value!r}")


def _c_float_string(x: float) -> str:
    """A string strtof/strtod parse to exactly x (x already representable)."""
    if math.isnan(x):
        return "-nan" if math.copysign(1.0, x) < 0 else "nan"
    if math.isinf(x):
        return "-inf" if x < 0 else "inf"
    return x.hex()          # C99 hex float: exact, locale independent


def format_value(mtype: str, value: Any, metric: str) -> str:
    if mtype in INT_RANGES:
        if isinstance(value, bool) or not isinstance(value, int):
            if not isinstance(value, str):
                raise FixtureError(f"metric {metric}: bad integer {value!r}")
            try:
                value = int(value, 0)
            except ValueError:
                raise FixtureError(f"metric {metric}: bad integer {value!r}") from None
        lo, hi = INT_RANGES[mtype]
        if not lo <= value <= hi:
            raise FixtureError(f"metric {metric}: {value} out of range for type {mtype}")
        return str(value)
    if mtype == "float":
        # round to binary32 first; the hex of that float is exact for strtof
        x = struct.unpack("<f", struct.pack("<f", _float_from_fixture(value, "float")))[0]
        return _c_float_string(float(x))
    if mtype == "double":
        return _c_float_string(_float_from_fixture(value, "double"))
    if mtype == "string":
        if not isinstance(value, str):
            raise FixtureError(f"metric {metric}: string value must be a JSON string")
        if "\0" in value:
            raise Unsupported(f"metric {metric}: pmiPutValue cannot carry a NUL byte in a string")
        return value
    raise Unsupported(f"metric {metric}: pmi cannot write values of type {mtype!r}")


def _label_value(value: Any) -> str:
    # pmiPutLabel quotes the value unless it is true/false/null
    if value is True:
        return "true"
    if value is False:
        return "false"
    if value is None:
        return "null"
    return str(value)


class _Importer(pmi.pmiLogImport):  # type: ignore[misc]
    """pmiLogImport whose destructor does not pmiEnd() a second time: pcp.pmi's __del__
    calls pmiUseContext(-1) (fails, leaving the old context current), then pmiEnd() again
    after an explicit pmiEnd()."""

    def __del__(self) -> None:
        if getattr(self, "_ctx", -1) != -1:
            pmi.pmiLogImport.__del__(self)


class Writer:

    def __init__(self, doc: dict[str, Any], outbase: str) -> None:
        self.doc = doc
        self.outbase = outbase
        self.archive: dict[str, Any] = doc.get("archive", {}) or {}
        self.version = self.archive.get("version")
        self.metrics: dict[str, dict[str, Any]] = {}      # name -> type, indom, pmid
        self.pmids: dict[str, str] = {}                   # "d.c.i" -> name
        self.indoms: dict[str, dict[str, Any]] = {}       # "d.s" -> id, instances {name: id}, added
        self.log: Any = None
        self.use_highres = False
        self.nsec_write = False

    # -- setup
    def start(self) -> None:
        self.log = _Importer(self.outbase.encode("utf-8"))
        if self.version is not None:
            if self.version not in (2, 3):
                raise FixtureError("archive.version must be 2 or 3")
            self.log.pmiSetVersion(int(self.version))
        if self.archive.get("hostname") is not None:
            self.log.pmiSetHostname(self.archive["hostname"])
        if self.archive.get("timezone") is not None:
            self.log.pmiSetTimezone(self.archive["timezone"])
        self.use_highres = self.version == 3 and hasattr(self.log, "pmiHighResWrite")
        # libpcp_import 2 (PCP 7) has no pmiHighResWrite: its pmiWrite takes nanoseconds
        self.nsec_write = not hasattr(pmi.LIBPCP_IMPORT, "pmiHighResWrite")

    def add_indoms(self) -> None:
        for ent in self.doc.get("indoms", []) or []:
            insts = ent.get("instances", {}) or {}
            self.indoms[ent["indom"]] = {"id": parse_indom(ent["indom"]),
                                         "instances": {str(k): int(v) for k, v in insts.items()},
                                         "added": set()}

    def add_metrics(self) -> None:
        for m in self.doc.get("metrics", []) or []:
            name = m["name"]
            tname = str(m["type"])
            if tname not in TYPES:
                raise FixtureError(f"metric {name}: unknown type {tname!r}")
            if m.get("sem") not in SEMS:
                raise FixtureError(f"metric {name}: unknown sem {m.get('sem')!r}")
            indom_key = m.get("indom")
            if indom_key is not None and indom_key not in self.indoms:
                # an indom without an "indoms" entry: no named instances known
                self.indoms[indom_key] = {"id": parse_indom(indom_key), "instances": {}, "added": set()}
            u = m.get("units", {}) or {}
            units = self.log.pmiUnits(int(u.get("dimSpace", 0)), int(u.get("dimTime", 0)),
                                      int(u.get("dimCount", 0)), int(u.get("scaleSpace", 0)),
                                      int(u.get("scaleTime", 0)), int(u.get("scaleCount", 0)))
            pmid = parse_pmid(m["pmid"])
            try:
                self.log.pmiAddMetric(name, pmid, TYPES[tname], parse_indom(indom_key), SEMS[m["sem"]], units)
            except pmi.pmiErr as exc:
                if exc.args and exc.args[0] == c_pmi.PMI_ERR_BADTYPE:
                    raise Unsupported(f"metric {name}: pmiAddMetric rejects type {tname!r} ({exc})") from None
                raise
            self.metrics[name] = {"type": tname, "indom": indom_key, "pmid": pmid}
            self.pmids[m["pmid"]] = name

    # -- text and labels (queued; libpcp_import writes them at pmiWrite)
    def put_text_entry(self, kind: str, ident: Any, text: dict[str, Any]) -> None:
        if kind == "pmid":
            typ, ident_val = c_api.PM_TEXT_PMID, parse_pmid(ident)
        elif kind == "indom":
            typ, ident_val = c_api.PM_TEXT_INDOM, parse_indom(ident)
        else:
            raise FixtureError(f"bad text kind {kind!r}")
        for cls_name, cls in (("oneline", c_api.PM_TEXT_ONELINE), ("help", c_api.PM_TEXT_HELP)):
            if text.get(cls_name) is not None:
                self.log.pmiPutText(typ, cls, ident_val, text[cls_name])

    def put_fixture_texts(self) -> None:
        for m in self.doc.get("metrics", []) or []:
            if m.get("text"):
                self.put_text_entry("pmid", m["pmid"], m["text"])
        for ent in self.doc.get("indoms", []) or []:
            if ent.get("text"):
                self.put_text_entry("indom", ent["indom"], ent["text"])

    def _label_ident(self, ent: dict[str, Any]) -> tuple[int, int]:
        ltype = ent["type"]
        ident = ent.get("ident")
        inst = int(c_api.PM_IN_NULL)
        if ltype == "context":
            return int(c_api.PM_ID_NULL), inst
        if ltype == "domain":
            (dom,) = _ints(ident, 1, "domain")
            return dom, inst
        if ltype == "cluster":
            return parse_cluster(ident), inst
        if ltype == "item":
            if ident in self.metrics:
                return int(self.metrics[ident]["pmid"]), inst
            return parse_pmid(ident), inst
        if ltype == "indom":
            return parse_indom(ident), inst
        if ltype == "instances":
            # ident: {"indom": "60.2", "inst": 1 | "name"}  or "60.2" with ent["inst"]
            if isinstance(ident, dict):
                indom_key, which = ident["indom"], ident.get("inst")
            else:
                indom_key, which = ident, ent.get("inst")
            if isinstance(which, str):
                which = self.indoms[indom_key]["instances"][which]
            if which is None:
                raise FixtureError("instances label needs an instance")
            return parse_indom(indom_key), int(which)
        raise FixtureError(f"bad label type {ltype!r}")

    def put_label_entry(self, ent: dict[str, Any]) -> None:
        if ent.get("type") not in LABEL_TYPES:
            raise FixtureError(f"bad label type {ent.get('type')!r}")
        ident, inst = self._label_ident(ent)
        for name, value in (ent.get("labels", {}) or {}).items():
            self.log.pmiPutLabel(LABEL_TYPES[ent["type"]], ident, inst, name, _label_value(value))

    # -- samples
    def _register_instances(self, n: int, values: dict[str, Any]) -> None:
        """pmiAddInstance every instance this sample references for the first time, those of
        one indom in ascending instance-id order.

        libpcp (6.0.3, 6.3.8 and 7.2.2 alike) sorts pmi's own inst[]/name[] arrays in place
        when it first writes the indom (addindom -> addinsts), and a later pmiAddInstance
        rebuilds name[] from the insertion-ordered name buffer, so the names get scrambled
        unless the cumulative insertion order is ascending (FMT-PMI-4). A fixture that needs
        a smaller id after the indom has been written therefore cannot be written correctly:
        exit 3.
        """
        new: dict[str, dict[str, int]] = {}
        for name, val in values.items():
            m = self.metrics.get(name)
            if m is None:
                raise FixtureError(f"sample {n}: unknown metric {name!r}")
            if m["indom"] is None:
                continue
            if not isinstance(val, dict):
                raise FixtureError(f"sample {n}: metric {name} has an indom; give {{instance: value}}")
            ind = self.indoms[m["indom"]]
            for inst_name in val:
                if inst_name in ind["added"]:
                    continue
                if inst_name not in ind["instances"]:
                    raise FixtureError(f"sample {n}: metric {name}: instance {inst_name!r} not listed in "
                                       f"indom {m['indom']}")
                new.setdefault(m["indom"], {})[inst_name] = ind["instances"][inst_name]
        for indom_key, insts in new.items():
            ind = self.indoms[indom_key]
            ordered = sorted(insts.items(), key=lambda kv: kv[1])
            if ind["added"]:
                have = max(ind["instances"][k] for k in ind["added"])
                if ordered[0][1] < have:
                    raise Unsupported(
                        f"indom {indom_key}: instance {ordered[0][0]!r} (id {ordered[0][1]}) first appears after "
                        f"instance id {have} was written; libpcp_import would write scrambled instance names "
                        "(addinsts sorts pmi's arrays in place; FMT-PMI-4)")
            for inst_name, inst_id in ordered:
                self.log.pmiAddInstance(ind["id"], inst_name, inst_id)
                ind["added"].add(inst_name)

    def sample(self, n: int, s: dict[str, Any]) -> None:
        if s.get("mark"):
            self.log.pmiPutMark()
            return
        for t in s.get("text", []) or []:
            if "pmid" in t:
                self.put_text_entry("pmid", t["pmid"], t)
            elif "indom" in t:
                self.put_text_entry("indom", t["indom"], t)
            else:
                raise FixtureError(f"sample {n}: text entry needs pmid or indom")
        for ent in s.get("labels", []) or []:
            self.put_label_entry(ent)
        values = s.get("values", {}) or {}
        self._register_instances(n, values)
        for name, val in values.items():
            m = self.metrics[name]
            if m["indom"] is None:
                self.log.pmiPutValue(name, None, format_value(m["type"], val, name))
            else:
                for inst_name, v in val.items():
                    self.log.pmiPutValue(name, inst_name, format_value(m["type"], v, name))
        t = s.get("time")
        if not isinstance(t, list | tuple) or len(t) != 2:
            raise FixtureError(f"sample {n}: time must be [sec, nsec]")
        sec, nsec = int(t[0]), int(t[1])
        try:
            if self.nsec_write:
                self.log.pmiWrite(sec, nsec)
            elif self.use_highres:
                self.log.pmiHighResWrite(sec, nsec)
            else:
                self.log.pmiWrite(sec, nsec // 1000)
        except pmi.pmiErr as exc:
            if exc.args and exc.args[0] == c_pmi.PMI_ERR_NODATA:
                sys.stderr.write(f"pmi_write.py: sample {n}: nothing to write (PMI_ERR_NODATA), skipped\n")
                return
            raise

    def run(self) -> None:
        self.start()
        self.add_indoms()
        self.add_metrics()
        self.put_fixture_texts()
        for ent in self.doc.get("labels", []) or []:
            self.put_label_entry(ent)
        for n, s in enumerate(self.doc.get("samples", []) or []):
            self.sample(n, s)
        self.log.pmiEnd()


def pmi_errstr(exc: Any) -> str:
    code = getattr(exc, "code", 0)
    sym = c_pmi.pmiErrSymDict.get(code) or c_api.pmErrSymDict.get(code) or "?"
    try:
        raw = pmi.LIBPCP_IMPORT.pmiErrStr_r(code, pmi.ctypes.create_string_buffer(256), 256)
        text = raw.decode("utf-8", "replace")
    except Exception:
        text = ""
    return f"{sym} ({code}) {text}"


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        sys.stderr.write("usage: pmi_write.py FIXTURE.json OUTBASE\n")
        return EXIT_BAD
    with open(argv[1], encoding="utf-8") as f:
        doc = json.load(f)
    try:
        Writer(doc, argv[2]).run()
    except Unsupported as exc:
        sys.stderr.write(f"pmi_write.py: UNSUPPORTED: {exc}\n")
        return EXIT_UNSUPPORTED
    except (FixtureError, KeyError, ValueError, TypeError) as exc:
        sys.stderr.write(f"pmi_write.py: bad fixture: {type(exc).__name__}: {exc}\n")
        return EXIT_BAD
    except pmi.pmiErr as exc:
        sys.stderr.write(f"pmi_write.py: libpcp_import error: {pmi_errstr(exc)}\n")
        return EXIT_BAD
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
