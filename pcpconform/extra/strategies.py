"""Hypothesis strategies for archive content: fixtures that any writer can be tested with.

``fixtures()`` draws whole Fixture objects (metrics, instance domains, samples, marks,
help text, labels). With ``pmi_compatible=True`` (the default) it stays within what
libpcp_import can write, so the same fixture can be written by libpcp and compared:
instances of a domain first appear in ascending id order, times increase by at least 2 ms,
and only the seven scalar types appear.

Requires hypothesis (the ``test`` extra).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pcpconform.extra import require
from pcpconform.fixtures.fixture import Fixture, InDomSpec, LabelSpec, MetricSpec, Sample
from pcpconform.format.pmtypes import (
    PM_IN_NULL,
    PM_INDOM_NULL,
    LabelType,
    PmID,
    PmInDom,
    PmSem,
    PmType,
    PmUnits,
    Timestamp,
)
from pcpconform.format.values import F32

if TYPE_CHECKING:
    from hypothesis import strategies as st
else:  # without hypothesis, say which extra provides it
    st = require("hypothesis.strategies", "strategies", "pcpconform.extra.strategies")

__all__ = ["fixtures", "values_of", "SCALAR_TYPES"]

SCALAR_TYPES = (PmType.I32, PmType.U32, PmType.I64, PmType.U64, PmType.FLOAT, PmType.DOUBLE,
                PmType.STRING)

_BOUNDS = {PmType.I32: (-(1 << 31), (1 << 31) - 1), PmType.U32: (0, (1 << 32) - 1),
           PmType.I64: (-(1 << 63), (1 << 63) - 1), PmType.U64: (0, (1 << 64) - 1)}

_NAME = st.from_regex(r"[a-z][a-z0-9_]{0,7}", fullmatch=True)
_TEXT = st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E), min_size=1, max_size=40)


def values_of(ptype: PmType, *, allow_nan: bool = False) -> st.SearchStrategy[Any]:
    """Values of a PCP type as the fixture model holds them."""
    if ptype in _BOUNDS:
        lo, hi = _BOUNDS[ptype]
        return st.one_of(st.integers(lo, hi), st.sampled_from([lo, hi, 0]))
    if ptype == PmType.FLOAT:
        return st.floats(width=32, allow_nan=allow_nan, allow_infinity=allow_nan).map(F32)
    if ptype == PmType.DOUBLE:
        return st.floats(allow_nan=allow_nan, allow_infinity=allow_nan)
    if ptype == PmType.STRING:
        return st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E),
                       max_size=30).map(str.encode)
    raise ValueError(f"no value strategy for {ptype!r}")


@st.composite
def _units(draw: st.DrawFn) -> PmUnits:
    dims = draw(st.tuples(*[st.integers(-2, 2)] * 3))
    return PmUnits(dimSpace=dims[0], dimTime=dims[1], dimCount=dims[2],
                   scaleSpace=draw(st.integers(0, 6)) if dims[0] else 0,
                   scaleTime=draw(st.integers(0, 5)) if dims[1] else 0,
                   scaleCount=draw(st.integers(-3, 6)) if dims[2] else 0)


@st.composite
def fixtures(draw: st.DrawFn, *, version: int | None = None, pmi_compatible: bool = True,
             max_metrics: int = 6, max_samples: int = 8) -> Fixture:
    """Draw a Fixture. See the module docstring for the pmi-compatible restrictions."""
    version = version if version is not None else draw(st.sampled_from([2, 3]))
    domain = draw(st.integers(1, 510))

    n_indoms = draw(st.integers(0, 2))
    indoms: dict[int, InDomSpec] = {}
    for serial in range(1, n_indoms + 1):
        ids = draw(st.lists(st.integers(0, 2000), min_size=1, max_size=6, unique=True))
        names = draw(st.lists(_NAME, min_size=len(ids), max_size=len(ids), unique=True))
        indom = PmInDom(f"{domain}.{serial}")
        text = {"oneline": draw(_TEXT)} if draw(st.booleans()) else {}
        indoms[int(indom)] = InDomSpec(indom, dict(zip(names, sorted(ids))), text)

    n_metrics = draw(st.integers(1, max_metrics))
    items = draw(st.lists(st.integers(0, 1023), min_size=n_metrics, max_size=n_metrics, unique=True))
    metrics = []
    for k, item in enumerate(items):
        ptype = draw(st.sampled_from(SCALAR_TYPES))
        indom_id = draw(st.sampled_from([PM_INDOM_NULL, *indoms])) if indoms else PM_INDOM_NULL
        text = {}
        if draw(st.booleans()):
            text["oneline"] = draw(_TEXT)
        if draw(st.booleans()):
            text["help"] = draw(_TEXT)
        metrics.append(MetricSpec(
            name=f"m{k}.{draw(_NAME)}", pmid=PmID.from_parts(domain, draw(st.integers(0, 7)), item),
            type=ptype, sem=int(draw(st.sampled_from(list(PmSem)))), indom=PmInDom(indom_id),
            units=draw(_units()), text=text))

    labels = []
    if draw(st.booleans()):
        labels.append(LabelSpec(LabelType.CONTEXT, PM_INDOM_NULL,
                                [(PM_IN_NULL, {"env": draw(_NAME), "site": draw(_NAME)})]))

    # instances of each indom become visible in ascending id order (a growing prefix)
    order = {i: sorted(d.instances.values()) for i, d in indoms.items()}
    visible = {i: 0 for i in indoms}
    sec = draw(st.integers(1_000_000_000, 2_000_000_000))
    nsec = draw(st.integers(0, 999_999)) * 1000
    samples: list[Sample] = []
    for k in range(draw(st.integers(1, max_samples))):
        if k and draw(st.integers(0, 4)) == 0:
            samples.append(Sample("mark"))
        if k and not pmi_compatible and draw(st.integers(0, 5)) == 0:
            samples.append(Sample("volume"))
        step = draw(st.integers(2_000_000, 5_000_000_000))
        if version == 2:
            step -= step % 1000
        total = sec * 1_000_000_000 + nsec + (step if k else 0)
        sec, nsec = divmod(total, 1_000_000_000)
        chosen = draw(st.lists(st.sampled_from(metrics), min_size=1, max_size=len(metrics),
                               unique_by=lambda m: m.name))
        values = []
        for m in chosen:
            vs = values_of(m.type, allow_nan=not pmi_compatible)
            if m.indom.is_null:
                values.append((m, [(PM_IN_NULL, draw(vs))]))
                continue
            ids = order[int(m.indom)]
            seen = visible[int(m.indom)]
            # every newly seen instance comes in one ascending run, as pmi needs
            fresh = draw(st.integers(0 if seen else 1, len(ids) - seen))
            old = draw(st.lists(st.sampled_from(ids[:seen]), unique=True)) if seen else []
            if not old and not fresh:
                fresh = 1 if seen < len(ids) else 0
                old = old or ([ids[0]] if not fresh else [])
            subset = old + ids[seen: seen + fresh]
            visible[int(m.indom)] = seen + fresh
            values.append((m, [(i, draw(vs)) for i in subset]))
        samples.append(Sample("values", Timestamp(sec, nsec), values))

    return Fixture(version=version, hostname=draw(_NAME) + ".example", timezone="UTC",
                   zoneinfo="", pid=draw(st.integers(1, 1 << 22)), max_volume_bytes=None,
                   indom_records="full" if pmi_compatible else draw(st.sampled_from(["full", "delta"])),
                   metrics=metrics, indoms=indoms, labels=labels, samples=samples)
