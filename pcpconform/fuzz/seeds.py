"""The valid inputs mutations start from: the bundled fixtures written as archives of both
versions, the bundled MMV fixture in each MMV version, and derived-metric config files."""

from __future__ import annotations

import dataclasses
import functools
import tempfile
from pathlib import Path

from pcpconform.fixtures import bundled_fixture
from pcpconform.fixtures.fixture import load_fixture
from pcpconform.fixtures.generate import generate_archive
from pcpconform.fuzz.archive_edit import BASE, read_archive

__all__ = ["archive_seeds", "mmv_seeds", "config_seeds", "ARCHIVE_FIXTURES"]

ARCHIVE_FIXTURES = ("example", "events")

#: derived metrics over the example fixture's metrics (pminfo -c CONFIG -a ARCHIVE)
CONFIGS = (
    "d.sum = disk.dev.read_bytes + 1\n",
    "d.rate = rate(disk.dev.read_bytes)\nd.avg = avg(disk.dev.read_bytes)\n",
    "d.cond = kernel.all.load > 1 ? mem.util.used : 0 * mem.util.used\n",
    "d.scale = rescale(disk.dev.read_bytes, \"Mbyte\")\nd.cnt = count(disk.dev.read_bytes)\n",
    "d.match = matchinst(/sd[ab]/, disk.dev.read_bytes)\nd.inst = instant(hinv.ncpu) * 2\n",
)


@functools.cache
def archive_seeds() -> tuple[tuple[str, dict[str, bytes]], ...]:
    """(name, parts) of each seed archive, written once per process."""
    out = []
    with tempfile.TemporaryDirectory(prefix="pcpconform-fuzz-seeds-") as tmp:
        for fixture in ARCHIVE_FIXTURES:
            for version in (2, 3):
                base = Path(tmp) / f"{fixture}-v{version}" / BASE
                base.parent.mkdir()
                generate_archive(load_fixture(bundled_fixture(fixture)), base, version=version)
                out.append((f"{fixture}-v{version}", read_archive(base)))
    return tuple(out)


@functools.cache
def mmv_seeds() -> tuple[tuple[str, bytes], ...]:
    from pcpconform.fixtures.mmv import load_mmv_fixture
    from pcpconform.mmv.writer import build_mmv

    out = []
    content = load_mmv_fixture(bundled_fixture("mmv-example"))
    for version in (1, 2, 3):
        try:
            out.append((f"mmv-example-v{version}", build_mmv(dataclasses.replace(content, version=version))))
        except Exception:       # a version that cannot hold this content
            continue
    return tuple(out)


def config_seeds() -> tuple[tuple[str, bytes], ...]:
    return tuple((f"config-{i}", text.encode()) for i, text in enumerate(CONFIGS))
