"""What libpcp replays on archives real loggers left behind, against each referee
(spec/interp.md: INTERP-SINGULAR-1, INTERP-BUILTIN-1, INTERP-EOL-3)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pcpconform.fixtures.fixture import load_fixture
from pcpconform.fixtures.generate import generate_archive
from pcpconform.format.pmtypes import PmID, Timestamp
from pcpconform.io.archive import Archive
from pcpconform.oracles.derive.profiles import profile_for
from pcpconform.oracles.interp.builtin import BUILTIN
from pcpconform.oracles.interp.installed import chosen_rules, installed_pcp, interp_rules_for
from tests.differential.libpcp.interp_bridge import libpcp_view, oracle_view
from tests.differential.libpcp.referees import LibpcpError, Referee
from tests.interp_archives import MULTI, T0, damage_label_start, singular_archive

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.libpcp]
SECOND = 10**9


def _schedules() -> list[tuple[Timestamp, int, int]]:
    """Forwards and backwards over the whole archive, from outside it, at half the sample
    interval (exact hits, midpoints, end of log on both sides)."""
    return [(Timestamp(T0 - 5), 5 * SECOND, 9), (Timestamp(T0 + 35), -5 * SECOND, 9),
            (Timestamp(T0 + 3, 250_000_000), 7 * SECOND, 5)]


def test_singular_values_under_another_instance(tmp_path: Path, referee: Referee) -> None:
    """INTERP-SINGULAR-1: a value set of a metric without an instance domain is PM_IN_NULL's,
    whatever instance it names."""
    base = singular_archive(tmp_path / "singular")
    pmids = [int(d.pmid) for d in Archive(base).descs() if int(d.pmid) != MULTI]
    for start, delta, count in _schedules():
        ours = oracle_view(base, start, delta, count, pmids, referee.interp_rules)
        assert ours == libpcp_view(referee, base, start, delta, count, pmids)
        # the planted defect (values under instance 1 ignored) leaves these empty
        assert all(s["values"][str(PmID(p))] for s in ours if not s["eol"] for p in pmids)


def test_singular_metric_with_several_values(tmp_path: Path, referee: Referee) -> None:
    """INTERP-SINGULAR-1: several values in one value set: libpcp 6.x aborts on its
    assertion; 7.2.2 (built without it) keeps the last value, as the oracle does."""
    base = singular_archive(tmp_path / "multi", multi=True)
    seen: set[int] = set()
    for start, delta, count in _schedules():
        ours = oracle_view(base, start, delta, count, [MULTI], referee.interp_rules)
        if referee.version.startswith("6."):
            with pytest.raises(LibpcpError) as died:
                libpcp_view(referee, base, start, delta, count, [MULTI])
            assert died.value.returncode == -6 and "Assertion `i == 0' failed" in died.value.stderr
            continue
        assert ours == libpcp_view(referee, base, start, delta, count, [MULTI])
        seen |= {v[0][1] for s in ours if not s["eol"] for v in s["values"].values()}
    # the last value of a value set wins: the planted defect (the first) gives 2 and 4
    assert referee.version.startswith("6.") or seen == {1, 102, 3, 104}


def test_event_metrics_never_have_values(tmp_path: Path, referee: Referee) -> None:
    """INTERP-BUILTIN-1: event.flags and event.missed exist in every archive context and a
    PM_MODE_INTERP fetch gives them no value, event records or not."""
    base = tmp_path / "events"
    generate_archive(load_fixture(ROOT / "corpus" / "fixtures" / "interp-events.yaml"), base)
    a = Archive(base)
    pmids = [*BUILTIN, *(int(d.pmid) for d in a.descs())]
    hires = int(a.desc("ev.hr").pmid)
    first = a.start
    backwards = (Timestamp(first.sec + 3), -SECOND, 6)
    for (start, delta, count), asked in [((first, SECOND // 2, 8), pmids),
                                         (backwards, [p for p in pmids if p != hires])]:
        ours = oracle_view(base, start, delta, count, asked, referee.interp_rules)
        assert ours == libpcp_view(referee, base, start, delta, count, asked)
        assert all(s["values"][str(PmID(p))] == [] for s in ours if not s["eol"] for p in BUILTIN)
    # INTERP-DEV-4: replaying the high-resolution event metric backwards kills every libpcp
    with pytest.raises(LibpcpError) as died:
        libpcp_view(referee, base, *backwards, [hires])
    assert died.value.returncode < 0


def test_replay_from_outside_the_archive(tmp_path: Path, referee: Referee) -> None:
    """INTERP-EOL-3: a replay may start before the archive or after it; fetches outside are
    end of log, later ones inside have values (pcpconform interp accepts such a --start).
    The built-in event metrics have no value in an archive without event records either."""
    base = singular_archive(tmp_path / "outside")
    pmids = [int(Archive(base).desc("s.ok").pmid), *BUILTIN]     # builtins: no event records
    for start, delta, count in [(Timestamp(T0 + 60), -5 * SECOND, 14), (Timestamp(T0 - 30), 5 * SECOND, 16)]:
        ours = oracle_view(base, start, delta, count, pmids, referee.interp_rules)
        theirs = libpcp_view(referee, base, start, delta, count, pmids)
        assert ours == theirs
        assert theirs[0]["eol"] and any(not s["eol"] for s in theirs)
        assert all(s["values"][str(PmID(p))] == [] for s in theirs if not s["eol"] for p in BUILTIN)


def test_rules_auto_picks_each_referees_rules(referee: Referee, monkeypatch: pytest.MonkeyPatch) -> None:
    """INTERP-CLI-7 (and DERIVE-CLI-7): each libpcp's own pcp.conf names the version whose
    rule set and derive profile the differential tests compare it with."""
    monkeypatch.setenv("PCP_CONF", str((referee.root or Path("/")) / "etc" / "pcp.conf"))
    found = installed_pcp()
    assert found is not None and found.version == referee.version
    assert chosen_rules("auto", interp_rules_for, "pcp-6.3")[0] == referee.interp_rules
    assert chosen_rules("auto", profile_for, "pcp-6.3")[0] == referee.derive_profile


def test_records_before_a_damaged_label_start(tmp_path: Path, referee: Referee) -> None:
    """INTERP-EOL-4: a label starting after the records: nothing is replayed."""
    base = damage_label_start(singular_archive(tmp_path / "late"), T0 + 1000)
    pmids = [int(Archive(base).desc("s.ok").pmid)]
    for start, delta, count in [(Timestamp(T0 + 1000), 10 * SECOND, 2), (Timestamp(T0), 10 * SECOND, 4),
                                (Timestamp(T0 + 40), -10 * SECOND, 5)]:
        ours = oracle_view(base, start, delta, count, pmids, referee.interp_rules)
        assert ours == libpcp_view(referee, base, start, delta, count, pmids)
        assert all(s["eol"] or s["values"][str(PmID(pmids[0]))] == [] for s in ours)
