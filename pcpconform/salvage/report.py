"""What a salvage did: every repair and every loss, with where and when (SALVAGE-REPORT).

Each entry names the defect it answers by the validator's own rule code (``frame.trailer``,
``desc.type`` ...: the codes of ``pcpconform check``), what was done about it (``dropped``,
``repaired``, ``rebuilt``, ``reordered``), the input file and byte range it concerns, the
time range of the results involved where any were read, how many records and values were
lost, and the spec clause that decided it. Losses of values for one metric and reason are
folded into one entry with their count and ranges.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, TextIO

from pcpconform.check.rules import RULES
from pcpconform.fastpath import PathStats
from pcpconform.format.pmtypes import Timestamp

__all__ = ["Item", "SalvageReport", "ACTIONS", "EXIT_CLEAN", "EXIT_LOST", "EXIT_FAILED"]

#: what can be done about a defect
ACTIONS = ("dropped", "repaired", "rebuilt", "reordered")
#: exit status: nothing of the input lost / something lost / could not be carried out
EXIT_CLEAN, EXIT_LOST, EXIT_FAILED = 0, 1, 2


@dataclass
class Item:
    """One decision about one defect (or one run of the same defect)."""

    code: str                       # the check rule code of the defect
    action: str                     # one of ACTIONS
    clause: str                     # the SALVAGE-* clause that decided it
    file: str                       # the input file it concerns
    detail: str                     # why, in words
    start: int | None = None        # byte range [start, end) in that file
    end: int | None = None
    first: Timestamp | None = None  # time range of the results involved
    last: Timestamp | None = None
    records: int = 0                # records dropped
    values: int = 0                 # values dropped
    metadata: int = 0               # .meta records dropped
    metric: str | None = None
    occurrences: int = 1

    def __post_init__(self) -> None:
        assert self.code in RULES, self.code
        assert self.action in ACTIONS, self.action

    @property
    def lost(self) -> bool:
        return self.action == "dropped"

    def merge(self, other: Item) -> None:
        """Fold another occurrence of the same (code, action, file, metric) into this one."""
        self.start = _min(self.start, other.start)
        self.end = _max(self.end, other.end)
        self.first = _min(self.first, other.first)
        self.last = _max(self.last, other.last)
        self.records += other.records
        self.values += other.values
        self.metadata += other.metadata
        self.occurrences += other.occurrences

    def to_json(self) -> dict[str, Any]:
        return {"code": self.code, "action": self.action, "clause": self.clause, "file": self.file,
                "bytes": None if self.start is None else [self.start, self.end],
                "time": None if self.first is None else [_stamp(self.first), _stamp(self.last)],
                "records": self.records, "values": self.values, "metadata": self.metadata,
                "metric": self.metric, "occurrences": self.occurrences, "detail": self.detail}

    def text(self) -> str:
        where = self.file
        if self.start is not None:
            where += f" bytes {self.start}-{self.end}"
        when = ""
        if self.first is not None:
            when = f" time {self.first}" + ("" if self.last == self.first else f" to {self.last}")
        what = []
        if self.records:
            what.append(f"{self.records} record{'s' if self.records != 1 else ''}")
        if self.values:
            what.append(f"{self.values} value{'s' if self.values != 1 else ''}")
        if self.metadata:
            what.append(f"{self.metadata} metadata record{'s' if self.metadata != 1 else ''}")
        lost = f" ({', '.join(what)})" if what else ""
        times = f" x{self.occurrences}" if self.occurrences > 1 else ""
        metric = f" [{self.metric}]" if self.metric else ""
        return (f"{self.action:<9} {self.code}{metric}{lost}{times}: {where}{when}: {self.detail} "
                f"({self.clause})")


def _min(a: Any, b: Any) -> Any:
    return b if a is None else a if b is None else min(a, b)


def _max(a: Any, b: Any) -> Any:
    return b if a is None else a if b is None else max(a, b)


def _stamp(t: Timestamp | None) -> list[int] | None:
    return None if t is None else [t.sec, t.nsec]


@dataclass
class SalvageReport:
    """The whole account of one salvage."""

    input: str
    output: str
    version: int | None = None
    items: list[Item] = field(default_factory=list)
    #: records and values read from the input's volumes (whatever became of them)
    records_in: int = 0
    values_in: int = 0
    records_out: int = 0
    values_out: int = 0
    metadata_out: int = 0
    volumes_out: int = 0
    #: the validator's verdict on the output: errors and warnings (None: not checked)
    out_errors: int | None = None
    out_warnings: int | None = None
    out_codes: list[str] = field(default_factory=list)
    #: why no output could be written (the salvage could not be carried out)
    failure: str | None = None
    #: what the fast paths did (results kept as they are or walked, written by the bulk
    #: encoder or the schema)
    paths: PathStats = field(default_factory=PathStats, repr=False, compare=False)
    _folded: dict[tuple[str, str, str, str | None], Item] = field(default_factory=dict, repr=False)

    def add(self, item: Item, fold: bool = False) -> None:
        """Record a decision; ``fold`` merges it into an earlier one of the same kind."""
        if fold:
            key = (item.code, item.action, item.file, item.metric)
            earlier = self._folded.get(key)
            if earlier is not None:
                earlier.merge(item)
                return
            self._folded[key] = item
        self.items.append(item)

    @property
    def records_lost(self) -> int:
        return sum(i.records for i in self.items)

    @property
    def values_lost(self) -> int:
        return sum(i.values for i in self.items)

    @property
    def metadata_lost(self) -> int:
        return sum(i.metadata for i in self.items)

    @property
    def bytes_lost(self) -> int:
        """Bytes of IN dropped as holding no record salvage can prove (gaps, cut tails)."""
        return sum(i.end - i.start for i in self.items if i.lost and not i.records and not i.metadata
                   and not i.values and i.start is not None and i.end is not None)

    @property
    def lost(self) -> bool:
        return any(i.lost for i in self.items)

    @property
    def exit_status(self) -> int:
        if self.failure is not None or self.out_errors:
            return EXIT_FAILED
        return EXIT_LOST if self.lost else EXIT_CLEAN

    def to_json(self) -> dict[str, Any]:
        return {"input": self.input, "output": None if self.failure else self.output,
                "version": self.version, "failure": self.failure, "exit": self.exit_status,
                "lost": self.lost,
                "summary": {"records_in": self.records_in, "values_in": self.values_in,
                            "records_out": self.records_out, "values_out": self.values_out,
                            "records_lost": self.records_lost, "values_lost": self.values_lost,
                            "bytes_lost": self.bytes_lost,
                            "metadata_out": self.metadata_out, "metadata_lost": self.metadata_lost,
                            "volumes_out": self.volumes_out},
                "check": {"errors": self.out_errors, "warnings": self.out_warnings, "codes": self.out_codes},
                "items": [i.to_json() for i in self.items]}

    def write_text(self, out: TextIO) -> None:
        if self.failure is not None:
            out.write(f"salvage {self.input}: nothing written: {self.failure}\n")
        else:
            out.write(f"salvage {self.input} -> {self.output}: {self.records_out} of {self.records_in} records, "
                      f"{self.values_out} values kept in {self.volumes_out} volume"
                      f"{'s' if self.volumes_out != 1 else ''}; lost {self.records_lost} records, "
                      f"{self.values_lost} values, {self.metadata_lost} metadata records, {self.bytes_lost} bytes\n")
        for item in self.items:
            out.write(f"  {item.text()}\n")
        if self.out_errors is not None:
            verdict = "checks clean" if not self.out_errors and not self.out_warnings else (
                f"checks with {self.out_errors} errors, {self.out_warnings} warnings"
                + (f" ({', '.join(self.out_codes)})" if self.out_codes else ""))
            out.write(f"  output {verdict}\n")
        status = {EXIT_CLEAN: "nothing was lost", EXIT_LOST: "something was lost",
                  EXIT_FAILED: "the salvage could not be carried out"}[self.exit_status]
        out.write(f"exit {self.exit_status}: {status}\n")
