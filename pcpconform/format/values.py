"""Typed metric values: decoding pmValue words and value blocks, and encoding them back.

Decoding is driven by the block's own vtype, as libpcp's byte-swapping is; insitu words
are interpreted by the metric's pmDesc type. 32-bit floats decode to ``F32``, a float that
remembers its exact bits, so a NaN payload survives any round trip.
"""

from __future__ import annotations

import struct
from typing import Any

from pcpconform.format.pmtypes import PmType

__all__ = ["F32", "decode_insitu", "decode_block", "encode_block_payload", "encode_insitu",
           "BLOCK_PAYLOAD_SIZE"]

_I32 = struct.Struct(">i")
_U32 = struct.Struct(">I")
_F32 = struct.Struct(">f")
_I64 = struct.Struct(">q")
_U64 = struct.Struct(">Q")
_F64 = struct.Struct(">d")

#: Exact payload size libpcp's pmExtractValue requires for fixed-size block types.
BLOCK_PAYLOAD_SIZE = {PmType.I64: 8, PmType.U64: 8, PmType.DOUBLE: 8, PmType.FLOAT: 4}


class F32(float):
    """A PM_TYPE_FLOAT value: compares as a float, keeps its 32 IEEE bits."""

    __slots__ = ("bits",)
    bits: int

    def __new__(cls, value: float, bits: int | None = None) -> F32:
        if bits is None:
            try:
                bits = _U32.unpack(_F32.pack(value))[0]
            except OverflowError:  # beyond float range: infinity, as strtof gives
                value = float("inf") if value > 0 else float("-inf")
                bits = _U32.unpack(_F32.pack(value))[0]
            value = _F32.unpack(_U32.pack(bits))[0]  # the float the bits really hold
        obj = super().__new__(cls, value)
        obj.bits = bits
        return obj

    @classmethod
    def from_bits(cls, bits: int) -> F32:
        return cls(_F32.unpack(_U32.pack(bits))[0], bits)

    def __reduce__(self) -> Any:
        return (F32.from_bits, (self.bits,))


def decode_insitu(word: int, ptype: int) -> Any:
    """Value of an INSITU pmValue word for a metric of pmDesc type ``ptype``."""
    if ptype == PmType.I32:
        return word - (1 << 32) if word & 0x80000000 else word
    if ptype == PmType.FLOAT:  # legacy "insitu float": the IEEE single bits
        return F32.from_bits(word)
    return word


def encode_insitu(value: Any, ptype: int) -> int:
    """The pmValue word of an INSITU value."""
    if ptype == PmType.FLOAT:
        return value.bits if isinstance(value, F32) else F32(value).bits
    return int(value) & 0xFFFFFFFF


def decode_block(vtype: int, vbuf: bytes) -> Any:
    """Value of a value block's payload by its vtype; bytes for opaque or odd-sized ones."""
    n = len(vbuf)
    if vtype == PmType.U64 and n == 8:
        return _U64.unpack(vbuf)[0]
    if vtype == PmType.I64 and n == 8:
        return _I64.unpack(vbuf)[0]
    if vtype == PmType.DOUBLE and n == 8:
        return _F64.unpack(vbuf)[0]
    if vtype == PmType.FLOAT and n == 4:
        return F32.from_bits(_U32.unpack(vbuf)[0])
    if vtype == PmType.STRING:
        return vbuf  # the NUL terminator, if any, is part of the stored bytes
    if vtype == PmType.I32 and n == 4:
        return _I32.unpack(vbuf)[0]
    if vtype == PmType.U32 and n == 4:
        return _U32.unpack(vbuf)[0]
    return vbuf


def encode_block_payload(value: Any, ptype: int) -> bytes:
    """Payload bytes of a value block for a value of type ``ptype`` as libpcp writes it."""
    if ptype == PmType.U64:
        return _U64.pack(int(value))
    if ptype == PmType.I64:
        return _I64.pack(int(value))
    if ptype == PmType.DOUBLE:
        return _F64.pack(float(value))
    if ptype == PmType.FLOAT:
        return _U32.pack(value.bits if isinstance(value, F32) else F32(value).bits)
    if ptype == PmType.STRING:
        data = value if isinstance(value, bytes) else str(value).encode("utf-8")
        return data if data.endswith(b"\0") else data + b"\0"
    if isinstance(value, (bytes, bytearray)):
        return bytes(value)
    raise ValueError(f"cannot encode {value!r} as a type {ptype} value block")
