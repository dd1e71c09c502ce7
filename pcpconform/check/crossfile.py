"""Rules that need the whole archive: what .meta describes against what uses it."""

from __future__ import annotations

from pcpconform.check.state import Context
from pcpconform.format.pmtypes import PM_INDOM_NULL, PmID, PmInDom

__all__ = ["check_crossfile"]

# text record type bits: about a pmID, about an instance domain
_TEXT_PMID, _TEXT_INDOM = 4, 8


def check_crossfile(ctx: Context) -> None:
    st = ctx.st
    described_indoms = {int(d.indom) for d in st.descs.values() if not d.indom.is_null}
    for indom in st.indoms:
        if indom not in described_indoms:
            ctx.add("indom.undescribed", f"{ctx.base.name}.meta",
                    f"instance domain {PmInDom(indom)} is used by no descriptor")
    for kind, ident, rec in st.text_idents:
        if kind & _TEXT_PMID and ident not in st.descs:
            ctx.add("text.undescribed", rec.file, f"help text for pmID {PmID(ident)} with no descriptor",
                    record=rec.index, offset=rec.offset, field="text.ident")
        elif kind & _TEXT_INDOM and ident not in described_indoms and ident != PM_INDOM_NULL:
            ctx.add("text.undescribed", rec.file, f"help text for indom {PmInDom(ident)} no descriptor uses",
                    record=rec.index, offset=rec.offset, field="text.ident")
