"""One walker of the construct tree, for everything derived from the schemas.

``kind`` names a construct node by what it is in the schemas (a field wrapper, a struct,
an integer, bytes, an array, a choice...), and ``SchemaVisitor`` dispatches a node to its
``on_<kind>`` method, wrappers passing through to what they wrap unless a visitor says
otherwise. Every reader of the schemas is such a visitor: the spec's field tables
(format/schemadoc.py), the fuzzer's field layout (fuzz/layout.py), hypothesis strategies
(extra/schemagen.py), and here the ``struct`` formats and numpy types of the fixed-size
declarations the bulk decoders unpack (io/bulk.py, check/, the MMV column layouts).
"""

from __future__ import annotations

import struct
from typing import Any, Generic, TypeVar

from construct import (
    Adapter,
    Array,
    Bytes,
    BytesInteger,
    Computed,
    Const,
    Construct,
    FixedSized,
    FocusedSeq,
    FormatField,
    GreedyBytes,
    IfThenElse,
    Pass,
    Prefixed,
    Rebuild,
    Renamed,
    Struct,
    Switch,
)

from pcpconform.format.schema.common import Framed, RemainingBytes, ToEnd

__all__ = ["kind", "SchemaVisitor", "struct_format", "numpy_type", "fixed_fields", "numpy_dtype"]

T = TypeVar("T")

#: construct classes by the kind of node they are, most specific first
_KINDS: tuple[tuple[type, str], ...] = (
    (Renamed, "renamed"), (Const, "const"), (Computed, "computed"), (Rebuild, "rebuild"),
    (Adapter, "adapter"), (FormatField, "format"), (BytesInteger, "integer"), (Bytes, "bytes"),
    (RemainingBytes, "remaining"), (Array, "array"), (IfThenElse, "choice"), (Switch, "switch"),
    (Prefixed, "prefixed"), (ToEnd, "to_end"), (Framed, "framed"), (FixedSized, "fixed_sized"),
    (FocusedSeq, "focused"), (Struct, "struct"),
)


def kind(con: Construct) -> str:
    """What a construct node is, as the visitors dispatch on it ("other" for the rest)."""
    if con is Pass:
        return "pass"
    if con is GreedyBytes:
        return "remaining"
    for cls, name in _KINDS:
        if isinstance(con, cls):
            return name
    return "other"


class SchemaVisitor(Generic[T]):
    """``visit(con, *args)`` calls ``on_<kind>(con, *args)``. Wrappers (a field's name, an
    adapter, a rebuilt field, a fixed-size frame, a record frame) pass through to what they
    wrap by default; any other kind a visitor does not handle is ``unknown``."""

    def visit(self, con: Construct, *args: Any) -> T:
        handler = getattr(self, "on_" + kind(con), None)
        if handler is None:
            return self.unknown(con, *args)
        result: T = handler(con, *args)
        return result

    def unknown(self, con: Construct, *args: Any) -> T:
        raise TypeError(f"{type(self).__name__}: no rule for {con!r}")

    def on_renamed(self, con: Construct, *args: Any) -> T:
        return self.visit(con.subcon, *args)

    def on_adapter(self, con: Construct, *args: Any) -> T:
        return self.visit(con.subcon, *args)

    def on_rebuild(self, con: Construct, *args: Any) -> T:
        return self.visit(con.subcon, *args)

    def on_fixed_sized(self, con: Construct, *args: Any) -> T:
        return self.visit(con.subcon, *args)

    def on_framed(self, con: Construct, *args: Any) -> T:
        return self.visit(con.payload, *args)


class _StructFormat(SchemaVisitor[str]):
    """The ``struct`` format of a fixed-size declaration: its fields' codes in order."""

    def on_format(self, con: Construct) -> str:
        fmtstr: str = con.fmtstr
        return fmtstr.lstrip("<>=!")

    def on_struct(self, con: Construct) -> str:
        return "".join(self.visit(sub) for sub in con.subcons)

    def unknown(self, con: Construct, *args: Any) -> str:
        raise TypeError(f"{con!r} has no fixed struct format")


def struct_format(con: Construct) -> str:
    """The ``struct`` format (without byte-order prefix) of a fixed-size schema."""
    return _StructFormat().visit(con)


#: struct's standard-size codes -> numpy's kind (the size is struct's own)
_NUMPY_KINDS = {"b": "i", "h": "i", "i": "i", "l": "i", "q": "i",
                "B": "u", "H": "u", "I": "u", "L": "u", "Q": "u", "f": "f", "d": "f"}


def numpy_type(code: str) -> str:
    """The big-endian numpy type string of one ``struct`` code as the decoders read it
    (standard sizes: "L" is 4 bytes here, 8 in numpy's own letters)."""
    return f">{_NUMPY_KINDS[code]}{struct.calcsize('>' + code)}"


class _FixedField(SchemaVisitor[tuple[str, str]]):
    """One field of a fixed-size Struct: its byte order ("<" or ">") and struct code, or
    ("", "<n>s") for a byte string of n bytes."""

    def on_format(self, con: Construct) -> tuple[str, str]:
        fmtstr: str = con.fmtstr
        return ("<" if fmtstr[0] == "<" else ">"), fmtstr.lstrip("<>=!")

    def on_bytes(self, con: Construct) -> tuple[str, str]:
        if not isinstance(con.length, int):
            raise TypeError(f"{con!r} has no fixed length")
        return "", f"{con.length}s"


def fixed_fields(con: Construct) -> list[tuple[str, str, str]]:
    """A fixed-size Struct's fields in order: (name, byte order, struct code), a byte
    string as order "" and code "<n>s"."""
    visitor = _FixedField()
    return [(sub.name, *visitor.visit(sub)) for sub in con.subcons]


def numpy_dtype(con: Construct) -> dict[str, list[str]]:
    """A fixed-size Struct as the spec of a numpy structured dtype (``np.dtype(spec)``):
    its fields' names and types in their byte order, byte strings raw ("V<n>")."""
    fields = fixed_fields(con)
    return {"names": [name for name, _, _ in fields],
            "formats": [f"V{code[:-1]}" if not order else order + numpy_type(code)[1:]
                        for _, order, code in fields]}
