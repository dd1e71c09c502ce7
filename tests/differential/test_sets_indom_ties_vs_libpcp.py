"""SET-META-5 against each reference libpcp: members of a set with different instance
domain records of one time, read in every namelist order (comma-separated lists in each
order, and the directory), pmGetInDom after each result of a forward pass."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest

from pcpconform.format.pmtypes import PmID, PmInDom, Timestamp
from pcpconform.io.archiveset import ArchiveSet
from pcpconform.io.setmeta import instances_as_loaded
from pcpconform.oracles.interp.model import DEVIATIONS
from tests.differential.libpcp.referees import Referee
from tests.differential.libpcp.set_bridge import SetSource, kit_interp, set_interp, set_read
from tests.differential.libpcp.set_compare import kit_document, set_differences
from tests.setmembers import T, churn_member

pytestmark = [pytest.mark.libpcp]
SECOND = 10**9

#: member: (sample times, instances, the instances of its last sample)
MEMBERS: dict[str, tuple[list[int], dict[str, int], dict[str, int]]] = {
    "m1": ([T, T + 10, T + 20], {"a": 0, "b": 1}, {"a": 0, "b": 1, "c": 2}),
    "m2": ([T + 20, T + 30, T + 40], {"a": 0, "b": 1, "d": 3}, {"a": 0, "e": 4}),
    "m3": ([T + 40, T + 50, T + 60], {"a": 0, "b": 1, "f": 5}, {"a": 0, "b": 1, "f": 5}),
}


def _names(insts: dict[str, int]) -> dict[str, str]:
    return {str(i): n for n, i in sorted(insts.items(), key=lambda kv: kv[1])}


def _expected(order: tuple[str, ...], profile: str) -> list[list[Any]]:
    """The instances pmGetInDom gives after each result, where they change: at T+20 and at
    T+40 two members have a record. PCP 6.0 gives the record of the member it is reading
    (it reloads a member's metadata when it switches to it); 6.3 and 7 the record of the
    member loaded last in namelist order."""
    m1, m2, m3 = (MEMBERS[m] for m in ("m1", "m2", "m3"))
    if profile == "pcp-6.0":
        at20, at30, at40, at50 = m1[2], m2[1], m2[2], m3[1]
    else:
        at20 = m1[2] if order.index("m1") > order.index("m2") else m2[1]
        at40 = m2[2] if order.index("m2") > order.index("m3") else m3[1]
        at30, at50 = at20, at40
    steps = [(T, m1[1]), (T + 20, at20), (T + 30, at30), (T + 40, at40), (T + 50, at50)]
    out: list[list[Any]] = []
    for t, insts in steps:
        if not out or out[-1][1] != _names(insts):
            out.append([[t, 0], _names(insts)])
    return out


ORDERS = [*itertools.permutations(("m1", "m2", "m3")), None]


@pytest.mark.parametrize("order", ORDERS, ids=[",".join(o) if o else "directory" for o in ORDERS])
def test_tied_instance_domains(tmp_path: Path, referee: Referee, order: tuple[str, ...] | None) -> None:
    """SET-META-5: which of two records of one time pmGetInDom gives, in every load order."""
    directory = tmp_path / "s"
    directory.mkdir()
    for name, (times, insts, last) in MEMBERS.items():
        churn_member(directory / name, times, [insts] * (len(times) - 1) + [last])
    source = SetSource(directory, order)
    theirs = set_read(referee, source)
    ours = kit_document(source.name(), referee.set_profile)
    diffs = set_differences(theirs, ours)
    assert not diffs, "\n".join(diffs)
    if order is not None:
        assert theirs["indoms"]["60.1"] == _expected(order, referee.set_profile)
    # the values of a replay do not depend on the names (libpcp's bound cache emulated)
    counter = int(PmID("60.0.1"))
    got = set_interp(referee, source, Timestamp(T + 5), 5 * SECOND, 11, [counter]).fetches
    assert got == kit_interp(source, referee.set_profile, referee.interp_rules, Timestamp(T + 5), 5 * SECOND, 11,
                             [counter], tuple(DEVIATIONS))


PM_SET_INDOM = Path(__file__).resolve().parent / "libpcp" / "pm_set_indom.py"


@pytest.mark.parametrize("order", [("m1", "m2", "m3"), ("m3", "m2", "m1"), ("m2", "m1", "m3")])
@pytest.mark.parametrize("at", [25, 45])
def test_tied_instance_domains_where_pmsetmode_positions(tmp_path: Path, referee: Referee,
                                                         order: tuple[str, ...], at: int) -> None:
    """SET-META-5: pmGetInDom right after pmSetMode: PCP 6.0 loads the member pmSetMode
    positions in (SET-REPLAY-6: m2 for T+25, m3 for T+45), whose record then wins; 6.3 and 7
    keep the namelist's last."""
    directory = tmp_path / "s"
    directory.mkdir()
    for name, (times, insts, last) in MEMBERS.items():
        churn_member(directory / name, times, [insts] * (len(times) - 1) + [last])
    source = SetSource(directory, order)
    proc = referee.python(PM_SET_INDOM, str(T + at), "60", "1", *source.args(), dirs=[directory])
    assert proc.returncode == 0, proc.stderr
    theirs = json.loads(proc.stdout)
    s = ArchiveSet(source.name(), profile=referee.set_profile)
    loads = s.open_loads()
    if referee.set_profile == "pcp-6.0":
        loads.append(s.positioned_member(float(at), lambda ts: ts.total_nsec() / SECOND - T))
    ours = instances_as_loaded([m.archive for m in s.members], int(PmInDom("60.1")), Timestamp(T + at), loads)
    assert ours is not None
    assert theirs == {str(i): n for i, n in sorted(ours.items())}
    positioned = MEMBERS["m2"] if at == 25 else MEMBERS["m3"]
    if referee.set_profile == "pcp-6.0":
        assert theirs == _names(positioned[1])
