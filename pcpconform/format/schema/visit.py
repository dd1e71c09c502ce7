"""One walker of the construct tree, for everything derived from the schemas.

(Extended by the schema visitor; for now the fixed-size struct formats.)
"""

from __future__ import annotations

from construct import Adapter, Construct, FormatField, Renamed, Struct

__all__ = ["struct_format"]


def struct_format(con: Construct) -> str:
    """The ``struct`` format (without byte-order prefix) of a fixed-size schema."""
    while isinstance(con, (Renamed, Adapter)):
        con = con.subcon
    if isinstance(con, FormatField):
        fmtstr: str = con.fmtstr
        return fmtstr.lstrip("<>=!")
    if isinstance(con, Struct):
        return "".join(struct_format(sub) for sub in con.subcons)
    raise TypeError(f"{con!r} has no fixed struct format")
