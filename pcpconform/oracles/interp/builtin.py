"""Metrics an archive context has that no archive holds, and the metrics of a replay under
the names they were asked for.

libpcp registers ``event.flags`` and ``event.missed`` in every context as anonymous derived
metrics (511.0.1, 511.0.2: U32, DISCRETE, no instance domain, no units); only
pmUnpackEventRecords fills them, so a PM_MODE_INTERP fetch gives them no value
(INTERP-BUILTIN-1, measured on 6.0.3, 6.3.8 and 7.2.2). An archive that holds a metric of
the same name or pmID keeps its own.
"""

from __future__ import annotations

from typing import Any

from pcpconform.format.pmtypes import PmID, PmInDom, PmSem, PmType, PmUnits
from pcpconform.io.archive import Archive, Desc, InDomRecord

__all__ = ["BUILTIN", "BUILTIN_REASON", "MetricSource"]

BUILTIN_REASON = "event metric: only pmUnpackEventRecords fills it"


def _anon(name: str, item: int) -> Desc:
    return Desc(PmID(f"511.0.{item}"), PmType.U32, PmInDom(None), PmSem.DISCRETE, PmUnits(), (name,))


#: pmID -> descriptor of libpcp's anonymous event metrics
BUILTIN: dict[int, Desc] = {int(d.pmid): d for d in (_anon("event.flags", 1), _anon("event.missed", 2))}
_BY_NAME = {d.names[0]: d for d in BUILTIN.values()}


class MetricSource:
    """An archive's metrics plus libpcp's built-in ones, each reported under the name it
    was asked for (INTERP-CLI-5): what the report functions read of an Archive."""

    def __init__(self, archive: Archive) -> None:
        self.archive = archive
        self.asked: dict[int, str] = {}       # pmid -> the first name it was asked for

    def desc(self, metric: str | int) -> Desc:
        """The descriptor of ``metric`` (a name or pmID): the archive's, else libpcp's
        built-in one. Raises KeyError for a metric neither has."""
        try:
            return self.archive.desc(metric)
        except KeyError:
            desc = _BY_NAME.get(metric) if isinstance(metric, str) else None
            if desc is None:
                try:
                    desc = BUILTIN.get(int(PmID(metric)))
                except (ValueError, TypeError):
                    desc = None
            if desc is None:
                raise
            return desc

    def lookup(self, metric: str | int) -> Desc:
        """``desc``, remembering the name ``metric`` if it is one of the metric's names."""
        desc = self.desc(metric)
        if isinstance(metric, str) and metric in desc.names:
            self.asked.setdefault(int(desc.pmid), metric)
        return desc

    def metric_name(self, pmid: int) -> str:
        if pmid in self.asked:
            return self.asked[pmid]
        try:
            return self.desc(pmid).names[0]
        except (KeyError, IndexError):
            return self.archive.metric_name(pmid)

    def instances(self, indom: Any, at: Any = None) -> dict[int, str]:
        return self.archive.instances(indom, at)

    def indom_history(self, indom: Any) -> list[InDomRecord]:
        return self.archive.indom_history(indom)


def builtin_desc(archive: Archive, pmid: int) -> Desc:
    """The archive's descriptor of ``pmid``, else libpcp's built-in one (KeyError if none)."""
    try:
        return archive.desc(pmid)
    except KeyError:
        if pmid in BUILTIN:
            return BUILTIN[pmid]
        raise
