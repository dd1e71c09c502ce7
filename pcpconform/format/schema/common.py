"""Field types shared by every record schema: timestamps, identifiers, units, framing.

Where a field maps one-to-one onto a typed value (timestamps, pmID, pmInDom, pmUnits) the
schema uses an Adapter, so parse gives the typed value and build takes it back. Where a
readable form would lose bytes (NUL-padded strings, float bits, string tables) the schema
keeps the raw bytes and adds a ``Computed`` readable view, which build ignores.
"""

# construct ships no type information, so to mypy its Adapter and Construct are Any; the
# field types below must derive from them, and their own methods stay fully annotated.
# mypy: disallow-subclassing-any=False

from __future__ import annotations

import io
from typing import Any

from construct import (
    Adapter,
    Bytes,
    Computed,
    Construct,
    Int32sb,
    Int32ub,
    Int64sb,
    Renamed,
    StreamError,
    Struct,
    stream_read,
    stream_tell,
    stream_write,
)

from pcpconform.format.pmtypes import PmID, PmInDom, PmUnits, Timestamp

__all__ = [
    "DocStruct", "PmIDField", "PmInDomField", "PmUnitsField", "TimevalT2", "TimestampT3", "TimespecTS16",
    "timestamp_field", "PaddedText", "ToEnd", "RemainingBytes", "decode_padded",
    "encode_padded", "Framed",
]


def DocStruct(*subcons: Construct) -> Struct:
    """A Struct whose fields may carry documentation: ``"pid" / Int32sb * "writer's pid"``.

    construct implements ``* "text"`` by wrapping the named field in a second Renamed,
    which would name the field twice in error paths; this merges the two into one Renamed
    carrying both the name and the text (``.docs``, read by pcpconform.cli.specgen).
    """
    return Struct(*(_merge_docs(sc) for sc in subcons))


def _merge_docs(sc: Construct) -> Construct:
    inner = sc.subcon if isinstance(sc, Renamed) else None
    if isinstance(inner, Renamed) and inner.name == sc.name:
        return Renamed(inner.subcon, newname=sc.name, newdocs=sc.docs or inner.docs,
                       newparsed=sc.parsed or inner.parsed)
    return sc


class _PmIDAdapter(Adapter):
    def _decode(self, obj: int, context: Any, path: str) -> PmID:
        return PmID(obj)

    def _encode(self, obj: Any, context: Any, path: str) -> int:
        return int(PmID(obj))


class _PmInDomAdapter(Adapter):
    def _decode(self, obj: int, context: Any, path: str) -> PmInDom:
        return PmInDom(obj)

    def _encode(self, obj: Any, context: Any, path: str) -> int:
        return int(PmInDom(obj))


class _PmUnitsAdapter(Adapter):
    def _decode(self, obj: int, context: Any, path: str) -> PmUnits:
        return PmUnits.from_word(obj)

    def _encode(self, obj: PmUnits, context: Any, path: str) -> int:
        return obj.to_word()


#: pmID: domain 9 bits, cluster 12, item 10 (one BE32 word).
PmIDField = _PmIDAdapter(Int32ub)
#: pmInDom: domain 9 bits, serial 22 (one BE32 word); PM_INDOM_NULL = 0xFFFFFFFF.
PmInDomField = _PmInDomAdapter(Int32ub)
#: pmUnits bit-packed into one BE32 word (dimSpace:4 dimTime:4 dimCount:4 scaleSpace:4
#: scaleTime:4 scaleCount:4 extraUnit:5 extraScale:3, most significant first).
PmUnitsField = _PmUnitsAdapter(Int32ub)


class _TimevalAdapter(Adapter):
    def _decode(self, obj: Any, context: Any, path: str) -> Timestamp:
        return Timestamp(obj.sec, obj.usec * 1000)

    def _encode(self, obj: Timestamp, context: Any, path: str) -> dict[str, int]:
        return {"sec": obj.sec, "usec": obj.nsec // 1000}


class _T3Adapter(Adapter):
    def _decode(self, obj: Any, context: Any, path: str) -> Timestamp:
        return Timestamp.from_t3(obj.sec_low, obj.sec_high, obj.nsec)

    def _encode(self, obj: Timestamp, context: Any, path: str) -> dict[str, int]:
        sec = obj.sec & 0xFFFFFFFFFFFFFFFF
        return {"sec_low": sec & 0xFFFFFFFF, "sec_high": sec >> 32, "nsec": obj.nsec}


class _TS16Adapter(Adapter):
    def _decode(self, obj: Any, context: Any, path: str) -> Timestamp:
        return Timestamp(obj.sec, obj.nsec)

    def _encode(self, obj: Timestamp, context: Any, path: str) -> dict[str, int]:
        return {"sec": obj.sec, "nsec": obj.nsec}


#: T2, pmTimeval: BE32 seconds, BE32 microseconds (v2 records, EVENT records).
TimevalT2 = _TimevalAdapter(DocStruct(
    "sec" / Int32sb * "seconds since the epoch",
    "usec" / Int32sb * "microseconds",
))
#: T3, __pmTimestamp: the 64-bit seconds stored LOW word first, then nanoseconds.
TimestampT3 = _T3Adapter(DocStruct(
    "sec_low" / Int32ub * "low 32 bits of the seconds since the epoch (stored first)",
    "sec_high" / Int32ub * "high 32 bits of the seconds (0 until 2106)",
    "nsec" / Int32sb * "nanoseconds",
))
#: TS16, pmTimespec: BE64 seconds, BE64 nanoseconds (HIGHRES_EVENT records).
TimespecTS16 = _TS16Adapter(DocStruct(
    "sec" / Int64sb * "seconds since the epoch",
    "nsec" / Int64sb * "nanoseconds",
))


def timestamp_field(version: int) -> Construct:
    """The record timestamp of an archive version: T2 for v2, T3 for v3."""
    return TimevalT2 if version == 2 else TimestampT3


def decode_padded(raw: bytes) -> str:
    """Readable form of a NUL-padded fixed field: bytes up to the first NUL, as latin-1."""
    return raw.split(b"\0", 1)[0].decode("latin-1")


def encode_padded(text: str, size: int) -> bytes:
    """A NUL-padded fixed field as libpcp writes it: at most size-1 bytes, then NULs."""
    data = text.encode("latin-1", errors="replace")[: size - 1]
    return data + b"\0" * (size - len(data))


def PaddedText(name: str, size: int, doc: str = "") -> list[Construct]:
    """A fixed-size NUL-padded text field: ``<name>_raw`` keeps every byte, ``<name>`` reads.

    ``doc`` documents the stored field (``<name>_raw``)."""
    raw = f"{name}_raw"
    return [Renamed(Bytes(size), newname=raw, newdocs=doc),
            name / Computed(lambda ctx: decode_padded(ctx[raw]))]


class ToEnd(Construct):
    """Repeat a subconstruct until the (sub)stream is exhausted.

    Unlike construct's GreedyRange, an element that fails to parse is an error, not the
    silent end of the list: a validator must never lose a truncated last element.
    """

    def __init__(self, subcon: Construct) -> None:
        super().__init__()
        self.subcon = subcon

    def _parse(self, stream: io.BytesIO, context: Any, path: str) -> list[Any]:
        items = []
        end = _stream_size(stream)
        while stream_tell(stream, path) < end:
            items.append(self.subcon._parsereport(stream, context, path))
        return items

    def _build(self, obj: list[Any], stream: io.BytesIO, context: Any, path: str) -> list[Any]:
        return [self.subcon._build(item, stream, context, path) for item in obj]

    def _sizeof(self, context: Any, path: str) -> int:
        raise StreamError("ToEnd has no fixed size", path=path)


def _stream_size(stream: io.BytesIO) -> int:
    here = stream.tell()
    stream.seek(0, io.SEEK_END)
    end = stream.tell()
    stream.seek(here)
    return end


class RemainingBytes(Construct):
    """Every byte left in the record, kept verbatim (unused tails that libpcp tolerates)."""

    def _parse(self, stream: io.BytesIO, context: Any, path: str) -> bytes:
        return stream.read()

    def _build(self, obj: bytes, stream: io.BytesIO, context: Any, path: str) -> bytes:
        data = bytes(obj or b"")
        stream_write(stream, data, len(data), path)
        return data

    def _sizeof(self, context: Any, path: str) -> int:
        raise StreamError("RemainingBytes has no fixed size", path=path)


class Framed(Construct):
    """Record framing: BE32 length L (whole record), payload of L-8 bytes, BE32 L again.

    Parse checks L >= 8 and trailer == header; build measures the built payload, so a
    record's length is never stated by hand.
    """

    def __init__(self, payload: Construct) -> None:
        super().__init__()
        self.payload = payload

    def _parse(self, stream: io.BytesIO, context: Any, path: str) -> Any:
        length = Int32ub._parsereport(stream, context, path)
        if length < 8:
            raise StreamError(f"record length {length} is less than 8", path=path)
        body = stream_read(stream, length - 8, path)
        trailer = Int32ub._parsereport(stream, context, path)
        if trailer != length:
            raise StreamError(f"trailer length {trailer} != header length {length}", path=path)
        return self.payload._parsereport(io.BytesIO(body), context, path)

    def _build(self, obj: Any, stream: io.BytesIO, context: Any, path: str) -> Any:
        body = io.BytesIO()
        self.payload._build(obj, body, context, path)
        data = body.getvalue()
        word = (len(data) + 8).to_bytes(4, "big")
        stream_write(stream, word + data + word, len(data) + 8, path)
        return obj

    def _sizeof(self, context: Any, path: str) -> int:
        raise StreamError("a framed record has no fixed size", path=path)

