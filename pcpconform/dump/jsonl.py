"""The lossless JSON Lines dump of an archive.

The form is specified in spec/dump-jsonl.md: one object per record, in file
order (.meta, .index, then each volume); every value tagged with its PCP type; integers as
decimal strings, floats and doubles as their IEEE bits in hex, byte strings escaped.
"""

from __future__ import annotations

import enum
import functools
import json
import struct
from collections.abc import Iterator
from typing import Any, TextIO

from pcpconform.dump.escape import escape_bytes
from pcpconform.fastpath import Declined, PathStats, register
from pcpconform.format.pmtypes import (
    PM_INDOM_NULL,
    LabelType,
    PmID,
    PmInDom,
    PmSem,
    PmType,
    TextType,
    Timestamp,
)
from pcpconform.format.schema import (
    INDEX_ENTRY_SIZE,
    INDOM_TAGS,
    LABEL_TAGS,
    TYPE_DESC,
    TYPE_INDOM_DELTA,
    TYPE_TEXT,
)
from pcpconform.format.values import F32, decode_block
from pcpconform.io.archive import Archive
from pcpconform.io.bulk import DecodedResult, decode_result
from pcpconform.io.index import index_entries
from pcpconform.io.meta import parse_meta
from pcpconform.io.reader import Component

__all__ = ["jsonl_records", "dump_lines", "result_line", "result_json", "write_jsonl", "escape_bytes",
           "typed_value", "values_json", "values_column_json", "ColumnReason", "HEADER"]

DUMP_FORMAT_VERSION = 1


def _stamp(ts: Timestamp) -> dict[str, int]:
    return {"sec": ts.sec, "nsec": ts.nsec}


def _type_token(ptype: int) -> str:
    try:
        return PmType(ptype).token
    except ValueError:
        return f"type-{ptype}"


def typed_value(value: Any, ptype: int | None, valfmt: int | None) -> dict[str, Any]:
    """The tagged JSON form of one value (see spec/dump-jsonl.md, clause DUMP-VAL)."""
    if ptype is None:
        if valfmt == 0:
            return {"type": "insitu", "value": str(value)}
        ptype = PmType.UNKNOWN
    if isinstance(value, F32):
        return {"type": "float", "value": f"0x{value.bits:08x}"}
    if isinstance(value, float):
        return {"type": "double", "value": "0x" + struct.pack(">d", value).hex()}
    if isinstance(value, bool):  # never produced, but keep bool out of the int branch
        value = int(value)
    if isinstance(value, int):
        return {"type": _type_token(ptype), "value": str(value)}
    if isinstance(value, (bytes, bytearray)):
        return {"type": _type_token(ptype), "value": escape_bytes(bytes(value))}
    if hasattr(value, "records"):  # an event array
        return {"type": _type_token(ptype), "records": [_event_record(r) for r in value.records]}
    return {"type": _type_token(ptype), "value": escape_bytes(bytes(value))}


def _event_record(rec: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"timestamp": _stamp(rec.timestamp), "flags": rec.flags,
                           "nparams": rec.nparams}
    params = []
    for p in rec.params or []:
        params.append({"pmid": str(p.pmid), **typed_value(decode_block(p.type, p.vbuf), p.type, 1)})
    out["params"] = params
    return out


def _padded_fields(obj: dict[str, Any], lab: Any, names: tuple[str, ...]) -> None:
    for name in names:
        text, _, rest = lab[f"{name}_raw"].partition(b"\0")
        obj[name] = escape_bytes(text)
        if rest.strip(b"\0"):
            # bytes after the terminating NUL are not padding: keep them (DUMP-LABEL-2)
            obj[f"{name}_padding"] = escape_bytes(rest)


def _label_obj(comp: Component, file: str) -> dict[str, Any]:
    lab = comp.label
    obj: dict[str, Any] = {"kind": "label", "file": file, "record": 0, "offset": 0,
                           "version": comp.version, "magic": f"0x{lab.magic:08x}", "pid": lab.pid,
                           "start": _stamp(lab.start), "vol": lab.vol}
    _padded_fields(obj, lab, ("hostname", "timezone") + (("zoneinfo",) if comp.version == 3 else ()))
    if comp.version == 3:
        obj["features"] = f"0x{lab.features:08x}"
        obj["reserved"] = f"0x{lab.reserved:08x}"
    return obj


def _units_obj(units: Any) -> dict[str, int]:
    return {k: getattr(units, k) for k in ("dimSpace", "dimTime", "dimCount", "scaleSpace",
                                           "scaleTime", "scaleCount", "extraUnit", "extraScale")}


def _indom_str(indom: int) -> str | None:
    return None if indom == PM_INDOM_NULL else str(PmInDom(indom))


def sem_token(sem: int) -> str:
    try:
        return PmSem(sem).name.lower()
    except ValueError:
        return f"sem-{sem}"


def _canonical_strtab(body: Any) -> bool:
    """True when offsets and string table are the packed form writers produce."""
    table = bytearray()
    for off, name in zip(body.offsets, body.names):
        if name is None:
            if off != -1:
                return False
            continue
        if off != len(table):
            return False
        table += name + b"\0"
    stored: bytes = body.strtab
    return bytes(table) == stored


def _with_tail(obj: dict[str, Any], tail: bytes) -> dict[str, Any]:
    if tail:
        obj["tail"] = escape_bytes(tail)
    return obj


def _meta_obj(rtype: int, body: Any) -> dict[str, Any]:
    if rtype == TYPE_DESC:
        return _with_tail({"kind": "desc", "tag": rtype, "pmid": str(body.pmid),
                           "type": _type_token(body.type), "indom": _indom_str(body.indom),
                           "sem": sem_token(body.sem), "units": _units_obj(body.units),
                           "names": [escape_bytes(n) for n in body.names]}, body.tail)
    if rtype in INDOM_TAGS:
        obj = {"kind": "indom", "tag": rtype, "delta": rtype == TYPE_INDOM_DELTA,
               "timestamp": _stamp(body.timestamp), "indom": str(body.indom),
               "instances": [{"inst": i, "name": None if n is None else escape_bytes(n)}
                             for i, n in zip(body.instlist, body.names)]}
        if not _canonical_strtab(body):
            obj["offsets"] = list(body.offsets)
            obj["strtab"] = escape_bytes(body.strtab)
        if body.numinst < 0:                  # DUMP-INDOM-3: a count no array can show
            obj["numinst"] = body.numinst
        return obj
    if rtype == TYPE_TEXT:
        return {"kind": "text", "tag": rtype,
                "class": "oneline" if body.type & TextType.ONELINE else "help",
                "target": "indom" if body.type & TextType.INDOM else "pmid",
                "text_type": body.type,
                "ident": str(PmInDom(body.ident) if body.type & TextType.INDOM else PmID(body.ident)),
                "text": escape_bytes(body.text)}
    if rtype in LABEL_TAGS:
        try:
            ltype = LabelType(body.type & 0x3F).name.lower()
        except ValueError:
            ltype = f"type-{body.type}"
        extra = {"nsets": body.nsets} if body.nsets < 0 else {}   # DUMP-LABELSET-2
        return _with_tail({
            "kind": "labelset", "tag": rtype, "timestamp": _stamp(body.timestamp), "type": ltype,
            "label_type": body.type, "ident": body.ident, **extra,
            "sets": [{"inst": s.inst, "json": escape_bytes(s.json), "nlabels": s.nlabels,
                      "labels": [dict(name=lab.name, namelen=lab.namelen, flags=lab.flags,
                                      value=lab.value, valuelen=lab.valuelen) for lab in s.labels]}
                     for s in body.sets]}, body.tail)
    return {"kind": "meta", "tag": rtype, "body": escape_bytes(bytes(body))}


def _values_obj(values: list[tuple[int, Any]], ptype: int | None, valfmt: int | None) -> list[dict[str, Any]]:
    # integers are most values: tag them with a token computed once per value set
    token = "insitu" if ptype is None and valfmt == 0 else _type_token(
        PmType.UNKNOWN if ptype is None else ptype)
    return [{"inst": inst, "type": token, "value": str(v)} if v.__class__ is int
            else {"inst": inst, **typed_value(v, ptype, valfmt)} for inst, v in values]


def _result_obj(res: DecodedResult, types: dict[int, int]) -> dict[str, Any]:
    vsets = []
    for vs in res.vsets:
        ptype = types.get(vs.pmid)
        obj: dict[str, Any] = {"pmid": str(PmID(vs.pmid)), "numval": vs.numval}
        if vs.numval > 0:
            obj["valfmt"] = vs.valfmt
            obj["values"] = _values_obj(vs.values, ptype, vs.valfmt)
        vsets.append(obj)
    obj = {"timestamp": _stamp(res.timestamp), "mark": res.is_mark, "vsets": vsets}
    if not res.canonical and res.record is not None:
        # the values above do not say where blocks, padding or types sit: keep the bytes
        obj["raw"] = res.record.data.hex()
    return obj


#: one value's JSON by the class of its value: int and the type token, F32's bits, a
#: double's 8 bytes in hex (what ``typed_value`` gives, as json.dumps lays it out)
_INT_ITEM = '{"inst":%d,"type":"%s","value":"%d"}'
_F32_ITEM = '{"inst":%d,"type":"float","value":"0x%08x"}'
_DOUBLE_ITEM = '{"inst":%d,"type":"double","value":"0x%s"}'
_BYTES_ITEM = '{"inst":%d,"type":"%s","value":%s}'


class ColumnReason(enum.Enum):
    """Why a value set's values are formatted value by value instead of as a column."""

    NO_DESCRIPTOR = "no descriptor"
    MIXED = "mixed value classes"
    OTHER_CLASS = "values of a class formatted value by value (event arrays)"


@functools.lru_cache(maxsize=256)
def _int_item(ptype: int) -> str:
    return _INT_ITEM.replace("%s", _type_token(ptype))


def values_json(insts: tuple[int, ...], values: tuple[Any, ...], ptype: int | None,
                valfmt: int | None) -> str:
    """A value set's values as ``json.dumps`` lays out ``_values_obj``: the reference of
    ``dump.jsonl-values``."""
    return json.dumps(_values_obj(list(zip(insts, values)), ptype, valfmt),
                      separators=(",", ":"), ensure_ascii=False)


def values_column_json(insts: tuple[int, ...], values: tuple[Any, ...], ptype: int | None,
                       valfmt: int | None) -> str:
    """``values_json`` for a column of one class, with one ``%`` format for the whole value
    set; other columns are declined (``ColumnReason``)."""
    if ptype is None:
        raise Declined(ColumnReason.NO_DESCRIPTOR)
    classes = set(map(type, values))
    if len(classes) != 1:
        raise Declined(ColumnReason.MIXED)
    cls = classes.pop()
    flat: list[Any] = [0] * (2 * len(insts))
    flat[0::2] = insts
    if cls is int:
        item = _int_item(ptype)
        flat[1::2] = values
    elif cls is F32:
        item = _F32_ITEM
        flat[1::2] = [v.bits for v in values]
    elif cls is float:
        item = _DOUBLE_ITEM
        raw = struct.pack(f">{len(values)}d", *values).hex()
        flat[1::2] = [raw[k:k + 16] for k in range(0, len(raw), 16)]
    elif cls is bytes:
        item = _BYTES_ITEM.replace("%s", _type_token(ptype), 1)
        flat[1::2] = [json.dumps(escape_bytes(v)) for v in values]
    else:
        raise Declined(ColumnReason.OTHER_CLASS)
    return _template(item, len(insts)) % tuple(flat)


VALUES = register("dump.jsonl-values", reference=values_json, fast=values_column_json,
                  reasons=ColumnReason, inputs="value-column")


@functools.lru_cache(maxsize=1024)
def _template(item: str, count: int) -> str:
    return "[" + ",".join([item] * count) + "]"


@functools.lru_cache(maxsize=64)
def _json_text(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


@functools.lru_cache(maxsize=4096)
def _pmid_text(pmid: int) -> str:
    return str(PmID(pmid))


def result_line(res: DecodedResult, types: dict[int, int], file: str, index: int,
                offset: int, stats: PathStats) -> str:
    """One result's JSON Lines line, as ``json.dumps`` lays out its object (DUMP-RESULT);
    each value set's values are formatted as a column (``dump.jsonl-values``, counted in
    ``stats``)."""
    head = (f'{{"kind":"result","file":{_json_text(file)},"record":{index},"offset":{offset},'
            f'"timestamp":{{"sec":{res.timestamp.sec},"nsec":{res.timestamp.nsec}}},'
            f'"mark":{"true" if res.is_mark else "false"},"vsets":[')
    parts = []
    for vs in res.vsets:
        obj = f'{{"pmid":"{_pmid_text(vs.pmid)}","numval":{vs.numval}'
        if vs.numval > 0:
            insts, values = vs.columns
            valfmt = "null" if vs.valfmt is None else int(vs.valfmt)
            obj += (f',"valfmt":{valfmt},"values":'
                    + VALUES(stats, insts, values, types.get(vs.pmid), vs.valfmt))
        parts.append(obj + "}")
    tail = "]}"
    if not res.canonical and res.record is not None:
        tail = f'],"raw":"{res.record.data.hex()}"}}'
    return head + ",".join(parts) + tail


def _trailing(comp: Component, file: str, record: int, offset: int) -> Iterator[dict[str, Any]]:
    """Stray bytes after a file's last record that libpcp ignores (DUMP-TRAILING-1)."""
    if comp.trailing:
        yield {**_loc("trailing", file, record, offset),
               "bytes": escape_bytes(b"".join(comp.trailing))}


def _loc(kind: str, file: str, record: int, offset: int) -> dict[str, Any]:
    return {"kind": kind, "file": file, "record": record, "offset": offset}


def jsonl_records(archive: Archive) -> Iterator[dict[str, Any]]:
    """Every record of the archive as a canonical JSON object, in file order.

    ``file`` names the component by its suffix (``meta``, ``index``, ``0``...), so the
    dump does not depend on the archive's base name or on compression.
    """
    for item in _records(archive, lines=False):
        assert isinstance(item, dict)
        yield item


def _records(archive: Archive, *, lines: bool) -> Iterator[dict[str, Any] | str]:
    """``jsonl_records``; with ``lines``, results come as their finished lines."""
    assert archive.files.meta is not None
    with Component(archive.files.meta) as meta:
        yield _label_obj(meta, "meta")
    with Component(archive.files.meta) as meta:
        end = meta.label_record.offset + len(meta.label_record.data)
        index = 0
        for record in meta.records("meta"):
            parsed = parse_meta(record, archive.version, archive.stats)
            obj = _meta_obj(parsed.type, parsed.body)
            yield {**_loc(obj.pop("kind"), "meta", record.index, record.offset), **obj}
            index, end = record.index, record.offset + len(record.data)
        yield from _trailing(meta, "meta", index + 1, end)
    if archive.files.index is not None:
        with Component(archive.files.index) as idx:
            yield _label_obj(idx, "index")
            number, offset = 0, len(idx.label_record.data)
            for number, offset, e in index_entries(idx, archive.stats):
                yield {**_loc("index", "index", number, offset),
                       "timestamp": _stamp(e.timestamp), "vol": e.vol,
                       "off_meta": e.off_meta, "off_data": e.off_data}
                offset += INDEX_ENTRY_SIZE[idx.version]
            yield from _trailing(idx, "index", number + 1, offset)
    types = {pmid: d.type for pmid, d in archive.metadata.descs.items()}
    stats = archive.stats
    for vol in sorted(archive.files.volumes):
        with Component(archive.files.volumes[vol]) as comp:
            yield _label_obj(comp, str(vol))
            index, end = 0, len(comp.label_record.data)
            file = str(vol)
            for record in comp.records():
                res = decode_result(record, archive.version, types, stats)
                if lines:
                    yield result_line(res, types, file, record.index, record.offset, stats)
                else:
                    yield {**_loc("result", file, record.index, record.offset),
                           **_result_obj(res, types)}
                index, end = record.index, record.offset + len(record.data)
            yield from _trailing(comp, str(vol), index + 1, end)


def result_json(res: DecodedResult, types: dict[int, int], file: str, index: int,
                offset: int, stats: PathStats) -> str:
    """``json.dumps`` of one result's object: the reference of ``dump.jsonl-result``."""
    return json.dumps({**_loc("result", file, index, offset), **_result_obj(res, types)},
                      separators=(",", ":"), ensure_ascii=False)


RESULT_LINES = register("dump.jsonl-result", reference=result_json, fast=result_line,
                        reasons=ColumnReason, inputs="result-line")


HEADER = {"kind": "dump", "format": "pcpconform-jsonl", "format_version": DUMP_FORMAT_VERSION}


def dump_lines(archive: Archive) -> Iterator[str]:
    """The JSON Lines dump, line by line (without newlines), header first."""
    yield json.dumps(HEADER, separators=(",", ":"))
    for item in _records(archive, lines=True):
        yield item if item.__class__ is str else json.dumps(item, separators=(",", ":"),
                                                             ensure_ascii=False)


def write_jsonl(archive: Archive, out: TextIO) -> int:
    count = 0
    batch: list[str] = []
    try:
        for line in dump_lines(archive):
            batch.append(line)
            if len(batch) == 256:           # fewer, larger writes
                out.write("\n".join(batch) + "\n")
                count += len(batch)
                batch.clear()
    finally:                                # the lines before a bad record are written
        if batch:
            out.write("\n".join(batch) + "\n")
            count += len(batch)
    return count - 1
