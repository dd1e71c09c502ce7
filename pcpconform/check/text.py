"""Help text records (FMT-TEXT); whether their identifiers are described is crossfile's."""

from __future__ import annotations

from typing import Any

from pcpconform.check.state import Context
from pcpconform.io.reader import RawRecord

__all__ = ["check_text"]

# PM_TEXT_ONELINE 1, PM_TEXT_HELP 2, PM_TEXT_PMID 4, PM_TEXT_INDOM 8
_KNOWN_BITS = 0xF


def check_text(ctx: Context, rec: RawRecord, t: Any) -> None:
    f, where = rec.file, {"record": rec.index, "offset": rec.offset}
    kind = t["type"]        # item access: a construct Container's attributes are Python calls
    if bool(kind & 1) == bool(kind & 2) or bool(kind & 4) == bool(kind & 8) or kind & ~_KNOWN_BITS:
        ctx.add("text.type", f, f"text type 0x{kind:x} needs exactly one of ONELINE/HELP and one "
                "of PMID/INDOM", field="text.type", **where)
    if not t["text"].endswith(b"\0"):
        ctx.add("text.nul", f, "text is not NUL-terminated", field="text.text", **where)
    ctx.st.text_idents.append((kind, t["ident"], rec))
