"""The valid inputs mutations start from: the bundled fixtures written as archives of both
versions, valid archives of extreme content (a large instance domain, long names and help
text, deep event arrays, many volumes), the bundled MMV fixture in each MMV version, and
derived-metric config files."""

from __future__ import annotations

import dataclasses
import functools
import tempfile
from pathlib import Path

from pcpconform.fixtures import bundled_fixture
from pcpconform.fixtures.fixture import load_fixture, parse_fixture
from pcpconform.fixtures.generate import generate_archive
from pcpconform.fuzz.archive_edit import BASE, read_archive

__all__ = ["archive_seeds", "mmv_seeds", "config_seeds", "extreme_fixtures", "ARCHIVE_FIXTURES"]

ARCHIVE_FIXTURES = ("example", "events")

#: derived metrics over the example fixture's metrics (pminfo -c CONFIG -a ARCHIVE)
CONFIGS = (
    "d.sum = disk.dev.read_bytes + 1\n",
    "d.rate = rate(disk.dev.read_bytes)\nd.avg = avg(disk.dev.read_bytes)\n",
    "d.cond = kernel.all.load > 1 ? mem.util.used : 0 * mem.util.used\n",
    "d.scale = rescale(disk.dev.read_bytes, \"Mbyte\")\nd.cnt = count(disk.dev.read_bytes)\n",
    "d.match = matchinst(/sd[ab]/, disk.dev.read_bytes)\nd.inst = instant(hinv.ncpu) * 2\n",
)


def extreme_fixtures() -> dict[str, dict[str, object]]:
    """Valid fixtures at sizes ordinary archives never reach, where readers' fixed buffers,
    counts and loops are tried: each is within what libpcp writes and reads."""
    big_indom = {f"inst-{i:05d}": i for i in range(2000)}
    long_name = "x." + "long" * 60                              # 242 characters
    events = [{"time": 1_700_000_000 + k, "flags": 1,
               "params": [{"pmid": "60.0.4", "type": "u32", "value": p} for p in range(8)]}
              for k in range(120)]
    return {
        "extreme-indom": {
            "archive": {"version": 3, "interval": 1},
            "indoms": [{"indom": "60.1", "instances": big_indom}],
            "metrics": [{"name": "big.metric", "pmid": "60.0.1", "type": "u64", "indom": "60.1"}],
            "samples": [{"time": 1_700_000_000, "values": {"big.metric": {n: i for n, i in big_indom.items()}}},
                        {"values": {"big.metric": {n: i + 1 for n, i in list(big_indom.items())[::3]}}}]},
        "extreme-names": {
            "archive": {"version": 2},
            "metrics": [{"name": long_name + str(k), "pmid": f"60.0.{k}", "type": "string",
                         "text": {"oneline": "o" * 200, "help": "h" * 3000}} for k in range(4)],
            "samples": [{"time": 1_700_000_000, "values": {long_name + str(k): "v" * 1000 for k in range(4)}}]},
        "extreme-events": {
            "archive": {"version": 3},
            "metrics": [{"name": "ev.records", "pmid": "60.0.3", "type": "event"},
                        {"name": "ev.param", "pmid": "60.0.4", "type": "u32"}],
            "samples": [{"time": 1_700_000_100, "values": {"ev.records": events}}]},
        "extreme-volumes": {
            "archive": {"version": 2, "max_volume_bytes": 200},
            "metrics": [{"name": "v.m", "pmid": "60.0.1", "type": "u32"}],
            "samples": [{"time": 1_700_000_000 + k, "values": {"v.m": k}} for k in range(24)]},
    }


@functools.cache
def archive_seeds() -> tuple[tuple[str, dict[str, bytes]], ...]:
    """(name, parts) of each seed archive, written once per process: the bundled fixtures
    first, then the extreme ones."""
    out = []
    with tempfile.TemporaryDirectory(prefix="pcpconform-fuzz-seeds-") as tmp:
        for fixture in ARCHIVE_FIXTURES:
            for version in (2, 3):
                base = Path(tmp) / f"{fixture}-v{version}" / BASE
                base.parent.mkdir()
                generate_archive(load_fixture(bundled_fixture(fixture)), base, version=version)
                out.append((f"{fixture}-v{version}", read_archive(base)))
        for name, doc in extreme_fixtures().items():
            base = Path(tmp) / name / BASE
            base.parent.mkdir()
            generate_archive(parse_fixture(doc, source=name), base)
            out.append((name, read_archive(base)))
    return tuple(out)


@functools.cache
def mmv_seeds() -> tuple[tuple[str, bytes], ...]:
    """The bundled MMV fixture in each version; versions 1 and 2 cannot hold labels, so
    theirs are the same content without them."""
    from pcpconform.fixtures.mmv import load_mmv_fixture
    from pcpconform.mmv.writer import build_mmv

    content = load_mmv_fixture(bundled_fixture("mmv-example"))
    out = []
    for version in (1, 2, 3):
        labels = content.labels if version == 3 else type(content.labels)()
        out.append((f"mmv-example-v{version}",
                    build_mmv(dataclasses.replace(content, version=version, labels=labels))))
    return tuple(out)


def config_seeds() -> tuple[tuple[str, bytes], ...]:
    return tuple((f"config-{i}", text.encode()) for i, text in enumerate(CONFIGS))
