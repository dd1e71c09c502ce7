"""How each referee's libpcp_import (pmi) writes a fixture, relative to ``pcpconform generate``.

``generate`` writes what PCP 6.0.3's pmi writes (spec/fixtures.md, GEN-*); PCP 6.3.8's pmi
writes the same bytes. PCP 7's pmi differs in three measured ways (spec/archive-format.md,
FMT-PMI-1..3):

* ``zoneinfo`` (FMT-PMI-1): the v3 label's zoneinfo is always the writing host's own
  (``:`` + the zone /etc/localtime links to), even when pmiSetTimezone named another zone;
  6.x write an empty zoneinfo once pmiSetTimezone was called;
* ``delta-indoms`` (FMT-PMI-2): in version 3, an instance domain that grows is written
  as a delta record (tag 6) of the added instances, not a full record (tag 5);
* ``index-dedup`` (FMT-PMI-3): no index entry is written with the same timestamp as the
  entry before it (6.x write such entries, see FMT-DIV-23).

``expected_pmi_archive(referee, fixture, base, pid=...)`` writes, with ``generate`` and the
rules of that referee, the archive its pmi is expected to write. The rules can be given
explicitly (``rules``), so a test can show that each one is needed where it applies and
wrong where it does not.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Collection
from pathlib import Path
from typing import Any

from pcpconform.fixtures.fixture import Fixture
from pcpconform.fixtures.generate import generate_archive
from pcpconform.format.schema import structs
from tests.differential.libpcp.referees import Referee

__all__ = ["RULES", "expected_pmi_archive", "local_zoneinfo", "pmi_rules"]

#: the pmi version rules, by name, with their clause
RULES = {"zoneinfo": "FMT-PMI-1", "delta-indoms": "FMT-PMI-2", "index-dedup": "FMT-PMI-3"}


def pmi_rules(referee: Referee) -> frozenset[str]:
    """The rules (names of ``RULES``) by which ``referee``'s pmi departs from ``generate``."""
    major = int(referee.version.split(".")[0])
    return frozenset(RULES) if major >= 7 else frozenset()


def local_zoneinfo(referee: Referee) -> str:
    """The zoneinfo string libpcp derives for the referee's own host: ``:`` and the zone name
    its /etc/localtime links to (``:Etc/UTC``), or "" if it is no such link."""
    root = referee.root or Path("/")
    localtime = root / "etc" / "localtime"
    try:
        target = os.readlink(localtime)
    except OSError:
        return ""
    marker = "zoneinfo/"
    if marker not in target:
        return ""
    return ":" + target.split(marker, 1)[1]


def _dedup_index(base: Path, version: int) -> None:
    """Drop every index entry whose timestamp equals the one of the entry kept before it."""
    path = Path(f"{base}.index")
    data = path.read_bytes()
    label = int.from_bytes(data[:4], "big")        # the label record's length word
    size = structs(version).index_entry_size
    stamp_len = 8 if version == 2 else 12
    out, last = bytearray(data[:label]), None
    for off in range(label, len(data), size):
        entry = data[off:off + size]
        stamp = entry[:stamp_len]
        if stamp == last:
            continue
        out += entry
        last = stamp
    path.write_bytes(bytes(out))


def expected_pmi_archive(referee: Referee, fixture: Fixture, base: Path, *, pid: int,
                         rules: Collection[str] | None = None) -> Path:
    """Write at ``base`` the archive ``referee``'s pmi is expected to write for ``fixture``
    (with process id ``pid``): ``generate``, then the rules (default: ``pmi_rules(referee)``)."""
    rules = pmi_rules(referee) if rules is None else frozenset(rules)
    if not rules <= set(RULES):
        raise ValueError(f"unknown pmi rules {sorted(rules - set(RULES))}")
    changes: dict[str, Any] = {"pid": pid}
    if "zoneinfo" in rules and fixture.version == 3:
        changes["zoneinfo"] = local_zoneinfo(referee)
    if "delta-indoms" in rules:
        changes["indom_records"] = "delta"
    generate_archive(dataclasses.replace(fixture, **changes), base)
    if "index-dedup" in rules:
        _dedup_index(base, fixture.version)
    return base
