"""What salvage accepts as a plausible time and a sound descriptor or metadata record: the
validator's error rules restated as predicates, so that a record salvage keeps is one the
validator does not reject, and a record salvage resynchronises on is one with nothing wrong."""

from __future__ import annotations

import json
import re
from typing import Any

from pcpconform.format.pmtypes import Timestamp
from pcpconform.format.schema import (
    META_TYPES,
    TYPE_DESC,
    TYPE_INDOM,
    TYPE_INDOM_DELTA,
    TYPE_INDOM_V2,
    TYPE_LABEL,
    TYPE_LABEL_V2,
    TYPE_TEXT,
)

__all__ = ["time_ok", "desc_type_ok", "name_ok", "text_type_ok", "labelset_ok", "meta_clean",
           "INDOM_TYPES", "LABEL_TYPES", "TIMESTAMP_VERSION"]

INDOM_TYPES = (TYPE_INDOM_V2, TYPE_INDOM, TYPE_INDOM_DELTA)
LABEL_TYPES = (TYPE_LABEL_V2, TYPE_LABEL)
#: the timestamp form of each timestamped record type
TIMESTAMP_VERSION = {TYPE_INDOM_V2: 2, TYPE_LABEL_V2: 2, TYPE_INDOM: 3, TYPE_INDOM_DELTA: 3, TYPE_LABEL: 3}
_NAME_RE = re.compile(rb"[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z][A-Za-z0-9_]*)*")
_MAXPATHLEN = 4096
_MAX_JSONLEN = 65535


def time_ok(ts: Timestamp, version: int) -> bool:
    """time.fraction's test: a fraction of a second in range for the version, and not negative."""
    return ts.sec >= 0 and 0 <= ts.nsec < 1_000_000_000 and (version == 3 or ts.nsec % 1000 == 0)


def desc_type_ok(ptype: int) -> bool:
    return ptype in range(-1, 11)


def name_ok(name: bytes) -> bool:
    """desc.name's test: a metric name libpcp can read."""
    return 0 < len(name) < _MAXPATHLEN


def text_type_ok(kind: int) -> bool:
    return bool(kind & 1) != bool(kind & 2) and bool(kind & 4) != bool(kind & 8) and not kind & ~0xF


def labelset_ok(body: Any) -> bool:
    """No labelset.json or labelset.span defect: every set's JSON an object, every label's
    name and value inside it, every name a member."""
    for s in body.sets:
        if not 0 <= s.jsonlen <= _MAX_JSONLEN:
            return False
        try:
            obj = json.loads(s.json) if s.json else {}
        except ValueError:
            return False
        if not isinstance(obj, dict):
            return False
        for lab in s.labels:
            if lab.name + lab.namelen > len(s.json) or lab.value + lab.valuelen > len(s.json):
                return False
            if s.json[lab.name:lab.name + lab.namelen].decode("utf-8", "replace") not in obj:
                return False
    return True


def meta_clean(tag: int, body: Any, version: int) -> bool:
    """A .meta record with nothing wrong: what resynchronisation may rest on."""
    if tag not in META_TYPES[version]:
        return False
    if tag == TYPE_DESC:
        return (desc_type_ok(body.type) and body.sem in (1, 3, 4) and not body.tail and len(body.names) > 0
                and all(_NAME_RE.fullmatch(bytes(n)) and name_ok(bytes(n)) for n in body.names))
    if tag == TYPE_TEXT:
        return text_type_ok(body.type) and body.text.endswith(b"\0")
    if not time_ok(body.timestamp, TIMESTAMP_VERSION[tag]):
        return False
    if tag in INDOM_TYPES:
        if body.numinst <= 0:
            return False
        for inst, off in zip(body.instlist, body.offsets):
            if inst < 0 or (off == -1 and tag != TYPE_INDOM_DELTA):
                return False
            if off != -1 and (off < 0 or off >= len(body.strtab) or b"\0" not in body.strtab[off:]):
                return False
        return True
    assert tag in LABEL_TYPES
    return not body.tail and body.nsets >= 1 and labelset_ok(body)
