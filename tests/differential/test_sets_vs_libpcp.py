"""Archive sets (spec/sets.md) against each reference libpcp: random sets -- random archives
split at random points into 2-5 members, gaps, touching seams, overlaps, members whose
metadata changes, damaged members, directories and comma-separated lists -- opened, read
forwards and replayed in PM_MODE_INTERP in both directions, by the kit and by libpcp."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from pcpconform.errors import FormatError, UsageError
from pcpconform.extra.set_strategies import archive_sets
from pcpconform.format.pmtypes import Timestamp
from pcpconform.io.archiveset import ArchiveSet
from pcpconform.oracles.derive.profiles import profile as get_profile
from pcpconform.oracles.interp.model import DEVIATIONS
from tests.differential.libpcp import derive_compare
from tests.differential.libpcp.referees import Referee
from tests.differential.libpcp.set_bridge import SetSource, kit_interp, set_interp, set_read
from tests.differential.libpcp.set_compare import kit_document, set_differences
from tests.setmembers import member

pytestmark = [pytest.mark.libpcp]

# derandomized by default (the same examples in every CI run); PCPCONFORM_SET_EXAMPLES=N
# explores N fresh random sets per referee instead
_EXPLORE = os.environ.get("PCPCONFORM_SET_EXAMPLES")


def _source(name: str, directory: Path) -> SetSource:
    if "," not in name:
        return SetSource(directory)
    return SetSource(directory, tuple(Path(p).name for p in name.split(",")))


# no shrinking: each step runs libpcp three times over; the failure message describes the set
@settings(max_examples=int(_EXPLORE or "30"), deadline=None, derandomize=not _EXPLORE,
          database=settings().database if _EXPLORE else None,
          phases=[Phase.explicit, Phase.reuse, Phase.generate],
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_random_sets_read_and_replay_as_libpcp(tmp_path_factory: pytest.TempPathFactory, referee: Referee,
                                                data: st.DataObject) -> None:
    plan = data.draw(archive_sets(), label="set")
    directory = tmp_path_factory.mktemp("set") / "s"
    name = plan.write(directory)
    source = _source(name, directory)
    theirs = set_read(referee, source)
    ours = kit_document(name, referee.set_profile)
    diffs = set_differences(theirs, ours)
    assert not diffs, f"{plan.describe()}\n" + "\n".join(diffs)
    if "open_error" in ours or ours["error"] is not None:
        return                  # libpcp refuses the set or stops reading it, as the kit does
    s = ArchiveSet(name, profile=referee.set_profile)
    pmids = sorted(int(d.pmid) for d in s.descs())
    lo, hi = s.start.total_nsec(), s.end().total_nsec()   # type: ignore[union-attr]
    span = max(hi - lo, 1)
    start = Timestamp.from_nsec(lo + data.draw(st.integers(-2 * 10**9, span + 2 * 10**9), label="start"))
    delta = data.draw(st.integers(1, max(span // 4, 1)) | st.sampled_from([10**9, 60 * 10**9]), label="delta")
    if data.draw(st.booleans(), label="backwards"):
        delta = -delta
    count = data.draw(st.integers(1, 16), label="count")
    times = [start.total_nsec() + k * delta for k in range(count)]
    # INTERP-EOL-2: libpcp's end-of-log edges within 1 ms of the ends are not modelled
    if any(lo - 2_000_000 <= t < lo or hi < t <= hi + 2_000_000 for t in times):
        return
    try:
        expected = kit_interp(source, referee.set_profile, referee.interp_rules, start, delta, count, pmids,
                              tuple(DEVIATIONS))
    except UsageError:
        return                  # a replay in which PCP 7 drops a member backwards, or the first: not modelled
    got = set_interp(referee, source, start, delta, count, pmids)
    assert got.open_error is None
    # SET-REPLAY-7: libpcp may die by a signal on backward replays across a seam; what it
    # finished before is compared
    assert got.signal is None or delta < 0, f"libpcp died on a forward replay: {plan.describe()}"
    first = next((k for k, f in enumerate(got.fetches) if f != expected[k]), None)
    assert first is None, (f"{plan.describe()}; from {start} every {delta} ns, {count} fetches: fetch {first} "
                           f"libpcp {got.fetches[first]} ours {expected[first]}")


def test_refusals_name_libpcps_error(tmp_path: Path, referee: Referee) -> None:
    """Each way the kit refuses a set at open is the PMAPI error libpcp gives."""
    cases = {"same-start": ([0, 0], {}), "host": ([0, 100], {"host": "h2"}), "type": ([0, 100], {"ctype": "u32"})}
    for case, (starts, change) in cases.items():
        d = tmp_path / case
        member(d / "m1", 1_700_000_000 + starts[0])
        member(d / "m2", 1_700_000_000 + starts[1], **change)    # type: ignore[arg-type]
        ours = kit_document(str(d), referee.set_profile)
        theirs = set_read(referee, SetSource(d))
        assert "open_error" in ours
        assert theirs.get("open_error") == ours["open_error"], case
    with pytest.raises(FormatError):
        ArchiveSet(tmp_path / "host")


@settings(max_examples=int(_EXPLORE or "12"), deadline=None, derandomize=not _EXPLORE,
          database=settings().database if _EXPLORE else None,
          phases=[Phase.explicit, Phase.reuse, Phase.generate],
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_random_sets_derive_as_libpcp(tmp_path_factory: pytest.TempPathFactory, referee: Referee,
                                      data: st.DataObject) -> None:
    """Derived metrics over a set's metrics (rates, deltas, instants and arithmetic, so
    counters and their marks cross every seam), replayed forwards or backwards."""
    plan = data.draw(archive_sets(seams=("split", "gap", "touch", "touch-1ms"), changes=(), damage=False,
                                  lists=False), label="set")
    directory = tmp_path_factory.mktemp("dset") / "s"
    plan.write(directory)
    try:
        s = ArchiveSet(directory, profile=referee.set_profile)
    except FormatError:
        return                  # refused at open, as libpcp refuses it (the read test's part)
    if any(seam.overlap for seam in s.seams()):
        return                  # SET-REPLAY-5: not replayed
    numeric = [d for d in s.descs() if d.type in (0, 1, 2, 3, 4, 5) and d.names]
    if not numeric:
        return
    texts = []
    for d in numeric[:3]:
        name = d.names[0]
        texts += [f"rate({name})", f"delta({name})", f"instant({name})", f"{name} + 1"]
    lo, hi = s.start.total_nsec(), s.end().total_nsec()       # type: ignore[union-attr]
    span = max(hi - lo, 1)
    step = data.draw(st.integers(max(span // 20, 1), max(span // 4, 1)), label="step")
    backwards = data.draw(st.booleans(), label="backwards")
    start = Timestamp.from_nsec((hi + step // 3) if backwards else (lo + step // 3))
    schedule = (start, -step if backwards else step, 12)
    times = [start.total_nsec() + k * schedule[1] for k in range(12)]
    if any(lo - 2_000_000 <= t < lo or hi < t <= hi + 2_000_000 for t in times):
        return                  # INTERP-EOL-2
    view = s.for_direction(schedule[1])
    cmp = derive_compare.compare(referee, get_profile(referee.derive_profile), directory, texts, schedule,
                                 archive=view)
    assert derive_compare.mismatches(cmp) == [], plan.describe()
