"""Fixture files: a declarative description of an archive's content, and its generation.

A fixture (YAML, specified in spec/fixtures.md) names the host, timezone and version,
the metrics, instance domains, help text, labels, and samples over time (values, marks,
volume switches, instance sets). ``generate_archive`` writes it with the same record order,
index entries and volume switches as libpcp's archive importer (libpcp_import, PCP 6.0.3),
so that the same content written through ``pmi`` and through pcpconform gives the same
bytes.
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass, field
from datetime import date, datetime, timezone
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

import yaml
from construct import Container, ListContainer

from .errors import UsageError
from .pmtypes import (
    PM_IN_NULL, PM_INDOM_NULL, LabelType, PmID, PmInDom, PmSem, PmType, PmUnits, Timestamp,
)
from .schema import event_array
from .values import F32, encode_block_payload, encode_insitu

__all__ = ["Fixture", "FixtureError", "load_fixture", "parse_fixture", "parse_time"]

#: pmi starts a new index entry once this many bytes were written since the last one.
INDEX_FLUSH_BYTES = 100000


class FixtureError(UsageError):
    """The fixture file is not valid; the message names the offending entry."""


@dataclass
class MetricSpec:
    name: str
    pmid: PmID
    type: PmType
    sem: int
    indom: PmInDom
    units: PmUnits
    text: dict[str, str] = field(default_factory=dict)


@dataclass
class InDomSpec:
    indom: PmInDom
    instances: dict[str, int]
    text: dict[str, str] = field(default_factory=dict)


@dataclass
class LabelSpec:
    type: LabelType
    ident: int
    sets: list[tuple[int, dict[str, Any]]]


@dataclass
class Sample:
    kind: str                              # "values", "mark" or "volume"
    time: Timestamp | None = None
    values: list[tuple[MetricSpec, list[tuple[int, Any]]]] = field(default_factory=list)
    instances: dict[int, list[int]] | None = None


@dataclass
class Fixture:
    version: int
    hostname: str
    timezone: str
    zoneinfo: str
    pid: int
    max_volume_bytes: int | None
    indom_records: str
    metrics: list[MetricSpec]
    indoms: dict[int, InDomSpec]
    labels: list[LabelSpec]
    samples: list[Sample]


def load_fixture(path: str | Path) -> Fixture:
    """Read and validate a fixture file."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise FixtureError(f"{path}: {exc.strerror}") from None
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise FixtureError(f"{path}: not valid YAML: {exc}") from None
    return parse_fixture(doc, source=str(path))


def _req(mapping: dict[str, Any], key: str, where: str) -> Any:
    if not isinstance(mapping, dict) or key not in mapping:
        raise FixtureError(f"{where}: missing '{key}'")
    return mapping[key]


def parse_time(value: Any, where: str) -> Timestamp:
    """A time: epoch seconds (int, float or decimal string), ISO 8601, or [sec, nsec]."""
    if isinstance(value, (list, tuple)) and len(value) == 2:
        sec, nsec = int(value[0]), int(value[1])
        if not 0 <= nsec < 1_000_000_000:
            raise FixtureError(f"{where}: nanoseconds {nsec} are not in 0..999999999")
        return Timestamp(sec, nsec)
    if isinstance(value, datetime):
        dt = value if value.tzinfo else value.replace(tzinfo=timezone.utc)
        return Timestamp(int(dt.timestamp() // 1), dt.microsecond * 1000)
    if isinstance(value, date):
        return parse_time(datetime(value.year, value.month, value.day), where)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        value = repr(value)
    if isinstance(value, str):
        try:
            d = Decimal(value.strip())
            total = int((d * 1_000_000_000).to_integral_value())
            return Timestamp.from_nsec(total)
        except InvalidOperation:
            pass
        try:
            return parse_time(datetime.fromisoformat(value.strip().replace("Z", "+00:00")), where)
        except ValueError:
            pass
    raise FixtureError(f"{where}: cannot read time {value!r}")


def _units(value: Any, where: str) -> PmUnits:
    if value is None:
        return PmUnits()
    if isinstance(value, str):
        try:
            return PmUnits.parse(value)
        except ValueError as exc:
            raise FixtureError(f"{where}: {exc}") from None
    if isinstance(value, dict):
        names = {"scaleSpace": ["byte", "kbyte", "mbyte", "gbyte", "tbyte", "pbyte", "ebyte",
                                "zbyte", "ybyte"],
                 "scaleTime": ["nsec", "usec", "msec", "sec", "min", "hour"]}
        fields: dict[str, int] = {}
        for key, v in value.items():
            if key not in PmUnits.__dataclass_fields__:
                raise FixtureError(f"{where}: unknown units field {key!r}")
            if isinstance(v, str) and key in names and v.lower() in names[key]:
                v = names[key].index(v.lower())
            fields[key] = int(v)
        return PmUnits(**fields)
    raise FixtureError(f"{where}: units must be text or a mapping")


def _texts(value: Any, where: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict) or set(value) - {"oneline", "help"}:
        raise FixtureError(f"{where}: text takes 'oneline' and 'help'")
    return {k: str(v) for k, v in value.items()}


_INT_RANGES = {PmType.I32: (-(1 << 31), (1 << 31) - 1), PmType.U32: (0, (1 << 32) - 1),
               PmType.I64: (-(1 << 63), (1 << 63) - 1), PmType.U64: (0, (1 << 64) - 1)}


def _typed(metric: MetricSpec, value: Any, where: str) -> Any:
    t = metric.type
    if t in _INT_RANGES:
        if isinstance(value, bool) or not isinstance(value, (int, str)):
            raise FixtureError(f"{where}: {metric.name} needs an integer, not {value!r}")
        try:
            number = int(value, 0) if isinstance(value, str) else value
        except ValueError:
            raise FixtureError(f"{where}: {value!r} is not an integer") from None
        lo, hi = _INT_RANGES[t]
        if not lo <= number <= hi:
            raise FixtureError(f"{where}: {number} is out of range for type {t.token}")
        return number
    if t in (PmType.FLOAT, PmType.DOUBLE):
        if isinstance(value, str) and value.lower().startswith("0x"):
            bits = int(value, 16)
            return F32.from_bits(bits) if t == PmType.FLOAT else struct.unpack(">d", bits.to_bytes(8, "big"))[0]
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise FixtureError(f"{where}: {value!r} is not a number") from None
        return F32(number) if t == PmType.FLOAT else number
    if t == PmType.STRING:
        return str(value).encode("utf-8")
    if t in (PmType.AGGREGATE, PmType.AGGREGATE_STATIC):
        if isinstance(value, str) and re.fullmatch(r"(?:[0-9a-fA-F]{2})*", value.replace(" ", "")):
            return bytes.fromhex(value.replace(" ", ""))
        raise FixtureError(f"{where}: aggregate values are hex strings")
    if t in (PmType.EVENT, PmType.HIGHRES_EVENT):
        return _event_payload(metric, value, where)
    raise FixtureError(f"{where}: cannot write values of type {t.token}")


def _event_payload(metric: MetricSpec, value: Any, where: str) -> bytes:
    """Event values: a list of records {time, flags, params: [{pmid, type, value}]} or
    {time, missed: N}; encoded with the event-array schema."""
    highres = metric.type == PmType.HIGHRES_EVENT
    if not isinstance(value, list):
        raise FixtureError(f"{where}: event values are a list of records")
    records = ListContainer()
    for k, rec in enumerate(value):
        rwhere = f"{where}[{k}]"
        stamp = parse_time(_req(rec, "time", rwhere), rwhere)
        if "missed" in rec:
            records.append(Container(timestamp=stamp, flags=0x80000000, nparams=int(rec["missed"]),
                                     params=None))
            continue
        params = ListContainer()
        for j, p in enumerate(rec.get("params", [])):
            pwhere = f"{rwhere}.params[{j}]"
            ptype = PmType.from_token(_req(p, "type", pwhere))
            pm = MetricSpec("param", PmID(str(_req(p, "pmid", pwhere))), ptype, 3, PmInDom(None), PmUnits())
            v = _typed(pm, _req(p, "value", pwhere), pwhere)
            if ptype in (PmType.I32, PmType.U32):
                data = encode_insitu(v, ptype).to_bytes(4, "big")
            elif ptype == PmType.STRING:
                data = v  # event parameter strings carry no NUL
            else:
                data = encode_block_payload(v, ptype)
            plen = 4 + len(data)
            params.append(Container(pmid=pm.pmid, type=ptype, len=plen, vbuf=data, pad=b"\0" * (-plen % 4)))
        records.append(Container(timestamp=stamp, flags=int(rec.get("flags", 1)),
                                 nparams=len(params), params=params))
    return event_array(highres).build(Container(nrecords=len(records), records=records, tail=b""))


def _label_json(labels: Any, where: str) -> dict[str, Any]:
    if not isinstance(labels, dict):
        raise FixtureError(f"{where}: labels are a mapping of name to JSON value")
    return dict(sorted(labels.items()))


def _pid(value: Any, source: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**31:
        raise FixtureError(f"{source}: archive.pid must be an integer in 0..2147483647")
    return value


def _instance_id(indom: InDomSpec, name: Any, where: str) -> int:
    if str(name) not in indom.instances:
        raise FixtureError(f"{where}: instance {name!r} is not in indom {indom.indom}")
    return indom.instances[str(name)]


def _label_ident(ltype: LabelType, text: Any, by_name: dict[str, MetricSpec]) -> int:
    """The ident a label set names: a domain, pmInDom, cluster (pmID with item 0) or pmID."""
    if ltype == LabelType.CONTEXT:
        return PM_INDOM_NULL
    if ltype == LabelType.DOMAIN:
        return int(text)
    if ltype in (LabelType.INDOM, LabelType.INSTANCES):
        return int(PmInDom(str(text)))
    pmid = int(by_name[text].pmid) if text in by_name else None
    if ltype == LabelType.CLUSTER:
        if pmid is None:
            parts = str(text).split(".")
            if len(parts) == 2:
                return int(PmID.from_parts(int(parts[0]), int(parts[1]), 0))
            pmid = int(PmID(str(text)))
        return pmid & ~0x3FF
    return pmid if pmid is not None else int(PmID(str(text)))


def parse_fixture(doc: Any, *, source: str = "fixture") -> Fixture:
    """Validate a loaded fixture document; any defect is a FixtureError."""
    try:
        return _parse_fixture(doc, source)
    except FixtureError:
        raise
    except (ValueError, TypeError, KeyError, AttributeError, IndexError, OverflowError) as exc:
        # the specific checks name the entry; this net keeps odd shapes from escaping
        raise FixtureError(f"{source}: malformed fixture: {type(exc).__name__}: {exc}") from None


def _parse_fixture(doc: Any, source: str) -> Fixture:
    if not isinstance(doc, dict):
        raise FixtureError(f"{source}: a fixture is a mapping")
    arch = doc.get("archive", {}) or {}
    version = int(arch.get("version", 3))
    if version not in (2, 3):
        raise FixtureError(f"{source}: archive.version must be 2 or 3")
    indom_records = str(arch.get("indom_records", "full"))
    if indom_records not in ("full", "delta"):
        raise FixtureError(f"{source}: archive.indom_records is 'full' or 'delta'")

    indoms: dict[int, InDomSpec] = {}
    for i, d in enumerate(doc.get("indoms", []) or []):
        where = f"{source}: indoms[{i}]"
        try:
            indom = PmInDom(str(_req(d, "indom", where)))
        except ValueError as exc:
            raise FixtureError(f"{where}: {exc}") from None
        insts = _req(d, "instances", where)
        if not isinstance(insts, dict):
            raise FixtureError(f"{where}: instances map names to instance ids")
        ids = {}
        for k, v in insts.items():
            if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v < 2**31:
                raise FixtureError(f"{where}: instance {k!r} needs an id in 0..2147483647, not {v!r}")
            ids[str(k)] = v
        if len(set(ids.values())) != len(ids):
            raise FixtureError(f"{where}: instance ids must be unique")
        indoms[int(indom)] = InDomSpec(indom, ids, _texts(d.get("text"), where))

    metrics: list[MetricSpec] = []
    by_name: dict[str, MetricSpec] = {}
    for i, m in enumerate(_req(doc, "metrics", source) or []):
        where = f"{source}: metrics[{i}]"
        try:
            spec = MetricSpec(
                name=str(_req(m, "name", where)), pmid=PmID(str(_req(m, "pmid", where))),
                type=PmType.from_token(str(_req(m, "type", where))),
                sem=int(PmSem.from_token(m.get("sem", "instant"))),
                indom=PmInDom(None if m.get("indom") is None else str(m["indom"])),
                units=_units(m.get("units"), where), text=_texts(m.get("text"), where))
        except (ValueError, KeyError) as exc:
            raise FixtureError(f"{where}: {exc}") from None
        if not spec.indom.is_null and int(spec.indom) not in indoms:
            raise FixtureError(f"{where}: indom {spec.indom} is not declared under indoms")
        if spec.name in by_name:
            raise FixtureError(f"{where}: metric {spec.name} is declared twice")
        metrics.append(spec)
        by_name[spec.name] = spec

    labels: list[LabelSpec] = []
    for i, lab in enumerate(doc.get("labels", []) or []):
        where = f"{source}: labels[{i}]"
        try:
            ltype = LabelType.from_token(_req(lab, "type", where))
        except (KeyError, ValueError):
            raise FixtureError(f"{where}: unknown label type {lab.get('type')!r}") from None
        ident_text = lab.get("ident")
        try:
            ident = _label_ident(ltype, ident_text, by_name)
        except (ValueError, TypeError):
            raise FixtureError(f"{where}: {ident_text!r} is not an ident for a {ltype.name.lower()} label") from None
        if ltype == LabelType.INSTANCES:
            spec_indom = indoms.get(ident)
            if spec_indom is None:
                raise FixtureError(f"{where}: indom {PmInDom(ident)} is not declared")
            per_inst = _req(lab, "instances", where)
            if not isinstance(per_inst, dict):
                raise FixtureError(f"{where}: instances map instance names to labels")
            sets = [(_instance_id(spec_indom, name, where), _label_json(v, where))
                    for name, v in per_inst.items()]
        else:
            sets = [(PM_IN_NULL, _label_json(_req(lab, "labels", where), where))]
        labels.append(LabelSpec(ltype, ident, sets))

    samples: list[Sample] = []
    interval = parse_time(arch.get("interval", 1), f"{source}: archive.interval")
    last: Timestamp | None = None
    for i, s in enumerate(_req(doc, "samples", source) or []):
        where = f"{source}: samples[{i}]"
        if not isinstance(s, dict):
            raise FixtureError(f"{where}: a sample is a mapping")
        if s.get("volume"):
            samples.append(Sample("volume"))
            continue
        if s.get("mark"):
            samples.append(Sample("mark", parse_time(s["time"], where) if "time" in s else None))
            continue
        if "time" in s:
            stamp = parse_time(s["time"], where)
        elif last is not None:
            stamp = Timestamp.from_nsec(last.total_nsec() + interval.total_nsec())
        else:
            raise FixtureError(f"{where}: the first sample needs a time")
        last = stamp
        values = []
        for name, v in (s.get("values") or {}).items():
            vwhere = f"{where}.values.{name}"
            metric = by_name.get(str(name))
            if metric is None:
                raise FixtureError(f"{vwhere}: metric {name} is not declared")
            if metric.indom.is_null:
                values.append((metric, [(PM_IN_NULL, _typed(metric, v, vwhere))]))
                continue
            if not isinstance(v, dict):
                raise FixtureError(f"{vwhere}: values of {name} are a mapping of instance to value")
            known = indoms[int(metric.indom)].instances
            insts = []
            for inst_name, iv in v.items():
                if str(inst_name) not in known:
                    raise FixtureError(f"{vwhere}: instance {inst_name!r} is not in indom {metric.indom}")
                insts.append((known[str(inst_name)], _typed(metric, iv, f"{vwhere}.{inst_name}")))
            values.append((metric, insts))
        explicit = None
        if s.get("instances") is not None:
            explicit = {}
            for indom_text, names in s["instances"].items():
                spec_indom = indoms.get(int(PmInDom(str(indom_text))))
                if spec_indom is None:
                    raise FixtureError(f"{where}.instances: indom {indom_text} is not declared")
                explicit[int(spec_indom.indom)] = [_instance_id(spec_indom, n, f"{where}.instances")
                                                   for n in names]
        samples.append(Sample("values", stamp, values, explicit))

    return Fixture(version=version, hostname=str(arch.get("hostname", "localhost")),
                   timezone=str(arch.get("timezone", "UTC")), zoneinfo=str(arch.get("zoneinfo", "")),
                   pid=_pid(arch.get("pid", 1), source),
                   max_volume_bytes=int(arch["max_volume_bytes"]) if arch.get("max_volume_bytes") else None,
                   indom_records=indom_records, metrics=metrics, indoms=indoms, labels=labels,
                   samples=samples)
