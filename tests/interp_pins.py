"""Small pinned examples of libpcp's bound cache (spec/interp.md INTERP-CACHE-*, INTERP-EOL-2,
INTERP-EXIST-2, INTERP-VER-2): one archive and one or more pmSetModes per clause, and what
each reference libpcp returned on it (tests/data/interp-cache-pins.json).

tests/unit/test_interp_cache_pins.py checks that the oracle emulating INTERP-DEV-5 gives the
pinned answer and that taking the clause out of the model (tests/interp_ablations.py) does
not; tests/differential/test_interp_cache_pins.py that each libpcp still gives it. After a
change in what a libpcp returns is understood, measure again (as root, with the referees):

    .venv/bin/python -m tests.interp_pins
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pcpconform.fixtures.fixture import load_fixture, parse_fixture
from pcpconform.fixtures.generate import generate_archive
from pcpconform.format.pmtypes import Timestamp
from pcpconform.io.archive import Archive
from pcpconform.oracles.interp.model import DEVIATIONS

__all__ = ["PINS", "Pin", "PINNED", "pinned", "build", "segments_of", "pmids_of", "ALL"]

ROOT = Path(__file__).resolve().parents[1]
PINNED = ROOT / "tests" / "data" / "interp-cache-pins.json"
ALL = tuple(DEVIATIONS)
T0 = 1740000000
S = 10**9
MS = 10**6


def _doc(metrics: list[dict[str, Any]], samples: list[dict[str, Any]],
         indoms: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    doc: dict[str, Any] = {"archive": {"version": 3, "hostname": "pin.example", "timezone": "UTC"},
                           "metrics": metrics, "samples": samples}
    if indoms:
        doc["indoms"] = indoms
    return doc


def _fixture(doc: dict[str, Any]) -> Callable[[Path], Path]:
    def write(base: Path) -> Path:
        generate_archive(parse_fixture(doc), base)
        return base
    return write


def _corpus_fixture(name: str) -> Callable[[Path], Path]:
    def write(base: Path) -> Path:
        generate_archive(load_fixture(ROOT / "corpus" / "fixtures" / f"{name}.yaml"), base)
        return base
    return write


_IDS = {f"i{i:02d}": i for i in range(17)}
_ALL16 = list(_IDS)                        # 17 instances: lifetimes (INTERP-EXIST-2)


def _listed(t: int, names: list[str], base: int, metric: str = "m.v") -> dict[str, Any]:
    return {"time": str(T0 + t), "instances": {"60.1": names},
            "values": {metric: {n: float(base + _IDS[n]) for n in names}}}


def _domain_doc(sem: str, samples: list[dict[str, Any]]) -> dict[str, Any]:
    return _doc([{"name": "m.v", "pmid": "60.0.1", "type": "double", "sem": sem, "indom": "60.1"}],
                samples, [{"indom": "60.1", "instances": _IDS}])


#: a counter and an instant every second from 0 to 9 s, a mark at 2.001 s
_COUNTER_WITH_MARK = _doc(
    [{"name": "v.counter", "pmid": "81.0.1", "type": "double", "sem": "counter"},
     {"name": "v.inst", "pmid": "81.0.2", "type": "double", "sem": "instant"}],
    [*({"time": str(T0 + k), "values": {"v.counter": 10.0 * k, "v.inst": float(k)}} for k in range(3)),
     {"mark": True, "time": f"{T0 + 2}.001"},
     *({"time": str(T0 + k), "values": {"v.counter": 10.0 * k, "v.inst": float(k)}} for k in range(3, 10))])


@dataclass(frozen=True)
class Pin:
    """One pinned example: the archive, the pmSetModes (start from the label's start in
    ns, interval, fetches) in one context, the metrics (all when empty), the clauses it
    pins, the ablations each of which must change the model's answer, and whether libpcp
    departs from the rules on it (libpcp 7 only, for INTERP-VER-2)."""

    id: str
    clauses: tuple[str, ...]
    ablations: tuple[str, ...]
    write: Callable[[Path], Path]
    segments: tuple[tuple[int, int, int], ...]
    metrics: tuple[str, ...] = ()
    deviates: tuple[str, ...] = ("pcp-6.0.3", "pcp-6.3", "pcp-7")


PINS: tuple[Pin, ...] = (
    # a fresh context believes the archive ends at 0 s and reads the end, with no 1 ms slack
    Pin("end-read-lazily", ("INTERP-CACHE-1", "INTERP-EOL-2"), ("eager-end",),
        _fixture(_doc([{"name": "m.disc", "pmid": "60.0.1", "type": "u32", "sem": "discrete"}],
                      [{"time": str(T0), "values": {"m.disc": 1}},
                       {"time": str(T0 + 1), "values": {"m.disc": 2}}])),
        ((S + 100, S, 1),)),
    # positioning at the index entry at 0 s, then backing up over the mark at 1 ms unseen
    Pin("fine-positioning-skips-marks", ("INTERP-CACHE-2", "INTERP-DEV-2"), ("fine-positioning-sees-marks",),
        _corpus_fixture("dev-mark-first"), ((MS + 1, -1, 2),)),
    # a second pmSetMode keeps the bounds that bracket its time: the string's upper bound at
    # 20 s stays the upper bound, and its lower bound's value is returned there
    Pin("set-mode-keeps-bracketing-bounds", ("INTERP-CACHE-2", "INTERP-CACHE-7"), ("set-mode-forgets-all",),
        _fixture(_doc([{"name": "m.str", "pmid": "60.0.1", "type": "string", "sem": "instant"}],
                      [{"time": str(T0 + 10 * k), "values": {"m.str": v}} for k, v in enumerate("zabcd")])),
        ((15 * S, 5 * S, 1), (20 * S, 5 * S, 1))),
    # a mark read forwards bounds the counter from below: no value across it
    Pin("marks-bound-every-instance", ("INTERP-CACHE-3", "INTERP-EXIST-1"), ("marks-bound-nothing",),
        _fixture(_COUNTER_WITH_MARK), ((1500 * MS, S, 3),), deviates=()),
    # an instance with no lower bound: the roll reads forwards to the fetch time first
    Pin("roll-before-search", ("INTERP-CACHE-4",), ("no-roll",),
        _fixture(_doc([{"name": "m.v", "pmid": "60.0.1", "type": "u32", "sem": "instant", "indom": "60.1"}],
                      [{"time": str(T0), "values": {"m.v": {}}}, {"mark": True},
                       {"time": str(T0 + 1), "values": {"m.v": {"i0": 10}}},
                       {"time": str(T0 + 2), "values": {"m.v": {}}}],
                      [{"indom": "60.1", "instances": {"i0": 0}}])),
        ((1500 * MS, -500 * MS, 2),), deviates=()),
    # i1 listed but never observed: the backward search finds nothing, and t_first keeps it
    # from searching again as the replay goes back past the record
    Pin("nothing-before-t-first", ("INTERP-CACHE-5",), ("no-t-first",),
        _fixture(_doc([{"name": "m.v", "pmid": "60.0.1", "type": "double", "sem": "instant", "indom": "60.1"}],
                      [{"time": str(T0), "instances": {"60.1": ["i1", "i2"]}, "values": {"m.v": {"i2": 1.0}}}],
                      [{"indom": "60.1", "instances": {"i1": 1, "i2": 2}}])),
        ((2, -2, 5),), deviates=()),
    # the counter's forward search at 25 s finds nothing (t_last): at 30 s no record is read,
    # and the string observed there is given its lower bound's value
    Pin("nothing-after-t-last", ("INTERP-CACHE-6", "INTERP-DEV-1"), ("no-t-last",),
        _fixture(_doc([{"name": "m.str", "pmid": "60.0.1", "type": "string", "sem": "instant"},
                       {"name": "m.ctr", "pmid": "60.0.2", "type": "u32", "sem": "counter"}],
                      [{"time": str(T0), "values": {"m.str": "z", "m.ctr": 0}},
                       {"time": str(T0 + 10), "values": {"m.str": "a", "m.ctr": 10}},
                       {"time": str(T0 + 20), "values": {"m.str": "b", "m.ctr": 20}},
                       {"time": str(T0 + 30), "values": {"m.str": "c"}},
                       {"time": str(T0 + 40), "values": {"m.str": "d"}}])),
        ((15 * S, 5 * S, 4),)),
    # a string observed at the fetch time the previous fetch had as its upper bound: the
    # lower bound's value
    Pin("nonnumeric-lower-bound", ("INTERP-CACHE-7", "INTERP-DEV-1"), ("nonnumeric-exact-hit",),
        _corpus_fixture("dev-exact-hit"), ((15 * S, 5 * S, 6),)),
    # a DISCRETE instance's upper bound left before the fetch time wins the midpoint test
    Pin("stale-upper-bound", ("INTERP-CACHE-7", "INTERP-DEV-3"), ("stale-next-ignored",),
        _corpus_fixture("dev-discrete-stale"), ((0, S, 2),), deviates=("pcp-6.3", "pcp-7")),
    # an INSTANT instance past its death keeps the bounds cached while it lived
    Pin("bounds-outlive-death", ("INTERP-CACHE-7", "INTERP-EXIST-2"), ("lifetime-for-every-semantics",),
        _fixture(_domain_doc("instant", [_listed(0, _ALL16, 0), _listed(1, _ALL16, 10),
                                         _listed(2, _ALL16[:16], 20),
                                         {**_listed(3, _ALL16[:16], 30),
                                          "values": {"m.v": {n: float(30 + i) for n, i in _IDS.items()}}}])),
        ((1500 * MS, S, 3),)),
    # an instance that leaves and comes back lives until the record after its latest listing
    Pin("lifetime-spans-returns", ("INTERP-EXIST-2",), ("first-omission-kills",),
        _fixture(_domain_doc("discrete", [_listed(0, _ALL16, 0), _listed(1, _ALL16[:16], 10),
                                          _listed(2, _ALL16, 20), _listed(3, _ALL16, 30)])),
        ((500 * MS, 500 * MS, 5),), deviates=()),
    # libpcp 7 positions again after a second pmSetMode: no counter-across-mark at 3.25 s
    Pin("set-mode-repositions-in-7", ("INTERP-VER-2", "INTERP-EXIST-3"), ("no-reposition",),
        _fixture(_COUNTER_WITH_MARK),
        ((2 * S, -S, 2), (3 * S + 250 * MS, S, 2)), deviates=("pcp-7",)),
)


def build(pin: Pin, directory: Path) -> Path:
    """Write the pin's archive under ``directory``; its base name."""
    directory.mkdir(parents=True, exist_ok=True)
    return pin.write(directory / "a")


def segments_of(pin: Pin, base: Path) -> list[tuple[Timestamp, int, int]]:
    start = Archive(base).start.total_nsec()
    return [(Timestamp.from_nsec(start + offset), delta, count) for offset, delta, count in pin.segments]


def pmids_of(pin: Pin, base: Path) -> list[int]:
    a = Archive(base)
    if pin.metrics:
        return [int(a.desc(m).pmid) for m in pin.metrics]
    return [int(d.pmid) for d in a.descs()]


def pinned() -> dict[str, dict[str, Any]]:
    """Pin id -> referee name -> the view each libpcp returned."""
    doc: dict[str, dict[str, Any]] = json.loads(PINNED.read_text(encoding="utf-8"))["pins"]
    return doc


def _measure(directory: Path) -> dict[str, Any]:
    from tests.differential.libpcp.interp_bridge import libpcp_segments_view
    from tests.differential.libpcp.referees import REFEREES

    out: dict[str, Any] = {}
    for pin in PINS:
        base = build(pin, directory / pin.id)
        out[pin.id] = {r.name: libpcp_segments_view(r, base, segments_of(pin, base), pmids_of(pin, base))
                       for r in REFEREES}
    return out


def main(argv: Sequence[str]) -> int:
    import tempfile

    from tests.differential.libpcp.referees import REFEREES

    with tempfile.TemporaryDirectory() as d:
        pins = _measure(Path(d))
    versions = {r.name: r.version for r in REFEREES}
    lines = ["{", ' "what": "what each reference libpcp returns on tests/interp_pins.py\'s PINS '
             '(interp_bridge view per fetch)",', f' "measured_with": {json.dumps(versions)},', ' "pins": {']
    for k, (pin, views) in enumerate(sorted(pins.items())):
        lines.append(f"  {json.dumps(pin)}: {{")
        lines += [f"   {json.dumps(name)}: {json.dumps(view, separators=(',', ':'))}"
                  + ("," if j < len(views) - 1 else "") for j, (name, view) in enumerate(sorted(views.items()))]
        lines.append("  }" + ("," if k < len(pins) - 1 else ""))
    lines += [" }", "}"]
    PINNED.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
