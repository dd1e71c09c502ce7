"""Interpolation of real archives written by pmlogger (INTERP-*): every metric, forwards and
backwards, against each reference libpcp with the rule set it is modelled by."""

from __future__ import annotations

from pathlib import Path

import pytest

from pcpconform.format.pmtypes import Timestamp
from pcpconform.io.archive import Archive
from pcpconform.oracles.interp.model import DEVIATIONS
from pcpconform.oracles.interp.replay import Replay
from tests.differential.libpcp.interp_bridge import libpcp_view, oracle_view
from tests.differential.libpcp.referees import Referee

pytestmark = [pytest.mark.libpcp]

# an interval unrelated to pmlogger's 100 ms, kept clear of the 1 ms end windows (INTERP-EOL-2)
STEP = 37_777_777


@pytest.mark.parametrize("forward", [True, False], ids=["forward", "backward"])
@pytest.mark.parametrize("name", ["v2", "v3", "v3-multivolume"])
def test_pmlogger_archive_interpolates_like_libpcp(pmlogger_archives: dict[str, Path], referee: Referee,
                                                   name: str, forward: bool) -> None:
    base = pmlogger_archives[name]
    a = Archive(base)
    # every metric but the derived ones (domain 511), which libpcp would recompute
    pmids = sorted(int(d.pmid) for d in a.descs() if (int(d.pmid) >> 22) != 511)
    times = [r.timestamp.total_nsec() for r in a.results()]
    lo, hi = times[0], times[-1]
    count = (hi - lo - 4_000_000) // STEP
    start = Timestamp.from_nsec(lo + 2_000_000 if forward else hi - 2_000_000)
    delta = STEP if forward else -STEP
    ours = oracle_view(base, start, delta, count, pmids, referee.interp_rules, tuple(DEVIATIONS))
    theirs = libpcp_view(referee, base, start, delta, count, pmids)
    assert count > 10 and len(ours) == count
    # real values, not only end-of-log or empty fetches
    assert sum(len(v) for s in theirs for v in s["values"].values()) > count
    assert ours == theirs
    # without emulated deviations the same archive replays on the vectorised path, unaided
    replay = Replay(a, pmids, rules=referee.interp_rules)
    replay.schedule(start, delta, count)
    assert (replay.stats.vectorised, replay.stats.reference) == (1, 0)
    assert not replay.stats.fallbacks and not replay.stats.series_fallbacks
