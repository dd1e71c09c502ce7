"""The DERIVE-CLI-1 document: ``pcpconform derive --format json`` and the corpus's expected
derive answers are this one function's output."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pcpconform.format.pmtypes import PmID
from pcpconform.oracles.derive.bind import Bound
from pcpconform.oracles.derive.evaluate import DerivedSample, DerivedView, Evaluator
from pcpconform.oracles.interp.model import Sample
from pcpconform.oracles.interp.report import samples_json

__all__ = ["derive_document_json"]


def derive_document_json(ev: Evaluator, bounds: Sequence[Bound], samples: Sequence[Sample],
                         derived_samples: Sequence[DerivedSample], rules: str, *,
                         emulate: tuple[str, ...] = (), rules_from: str | None = None) -> dict[str, Any]:
    """The interp document of the derived metrics' ``samples`` (INTERP-FMT-1) with
    ``kind: derive``, each bound metric's descriptor, and per metric the derived-metric
    deviations its value touched (from ``derived_samples``, one per sample)."""
    doc = samples_json(DerivedView(ev), samples, rules, emulate=emulate, rules_from=rules_from)
    doc["kind"] = "derive"
    doc["derived"] = [{
        "name": b.name, "pmid": str(PmID(int(ev.pmids[b.name]))), "masked": b.masked,
        "type": int(b.desc.type), "sem": int(b.desc.sem), "indom": str(b.desc.indom),
        "units": b.desc.units_str} for b in bounds]
    for entry, ds in zip(doc["samples"], derived_samples):
        for m in entry["metrics"]:
            hits = ds.deviations.get(m["name"])
            if hits:
                m["deviations"] = sorted(hits)
    return doc
