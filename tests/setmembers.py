"""Small archive sets for tests: members of one host written by the kit's generator."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pcpconform.fixtures.fixture import parse_fixture
from pcpconform.fixtures.generate import generate_archive

__all__ = ["T", "member"]

T = 1_700_000_000


def member(base: Path, t0: float, n: int = 3, *, step: float = 10, host: str = "h1", version: int = 3,
           ctype: str = "u64", text: str | None = None, insts: dict[str, int] | None = None) -> Path:
    insts = insts or {"a": 0, "b": 1}
    metrics: list[dict[str, Any]] = [
        {"name": "t.counter", "pmid": "60.0.1", "type": ctype, "sem": "counter", "indom": "60.1"},
        {"name": "t.instant", "pmid": "60.0.2", "type": "double", "sem": "instant"}]
    if text:
        metrics[0]["text"] = {"oneline": text}
    doc = {"archive": {"version": version, "hostname": host, "timezone": "UTC"},
           "metrics": metrics, "indoms": [{"indom": "60.1", "instances": insts}],
           "samples": [{"time": t0 + k * step, "values": {"t.counter": {i: 100 * k for i in insts},
                                                          "t.instant": 1.5 + k}} for k in range(n)]}
    generate_archive(parse_fixture(doc), base)
    return base
