"""Small archive sets for tests: members of one host written by the kit's generator."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pcpconform.fixtures.fixture import parse_fixture
from pcpconform.fixtures.generate import generate_archive

__all__ = ["T", "churn_member", "member"]

T = 1_700_000_000


def member(base: Path, t0: float, n: int = 3, *, step: float = 10, host: str = "h1", version: int = 3,
           ctype: str = "u64", text: str | None = None, insts: dict[str, int] | None = None,
           extra: Sequence[tuple[str, int, str]] = ()) -> Path:
    """A member of two metrics, t.counter (60.0.1) and t.instant (60.0.2), ``n`` samples
    ``step`` s apart from ``t0``; each of ``extra`` (name, item, PCP type token) adds an
    instant metric 60.0.item, sampled with the others."""
    insts = insts or {"a": 0, "b": 1}
    metrics: list[dict[str, Any]] = [
        {"name": "t.counter", "pmid": "60.0.1", "type": ctype, "sem": "counter", "indom": "60.1"},
        {"name": "t.instant", "pmid": "60.0.2", "type": "double", "sem": "instant"}]
    if text:
        metrics[0]["text"] = {"oneline": text}
    metrics += [{"name": name, "pmid": f"60.0.{item}", "type": ptype, "sem": "instant"}
                for name, item, ptype in extra]
    doc = {"archive": {"version": version, "hostname": host, "timezone": "UTC"},
           "metrics": metrics, "indoms": [{"indom": "60.1", "instances": insts}],
           "samples": [{"time": t0 + k * step, "values": {"t.counter": {i: 100 * k for i in insts},
                                                          "t.instant": 1.5 + k,
                                                          **{name: _extra(ptype, t0 + k * step)
                                                             for name, _, ptype in extra}}}
                       for k in range(n)]}
    generate_archive(parse_fixture(doc), base)
    return base


def churn_member(base: Path, times: Sequence[int], instances: Sequence[dict[str, int]]) -> Path:
    """A member of ``member``'s two metrics sampled at ``times``, the k-th sample with the
    instances ``instances[k]`` of 60.1: each change writes an instance domain record at that
    sample's time (and the temporal index entry before that sample's record)."""
    every: dict[str, int] = {}
    for insts in instances:
        every.update(insts)
    doc = {"archive": {"version": 3, "hostname": "h1", "timezone": "UTC"},
           "metrics": [{"name": "t.counter", "pmid": "60.0.1", "type": "u64", "sem": "counter", "indom": "60.1"},
                       {"name": "t.instant", "pmid": "60.0.2", "type": "double", "sem": "instant"}],
           "indoms": [{"indom": "60.1", "instances": every}],
           "samples": [{"time": t, "values": {"t.counter": {i: 100 * k for i in insts}, "t.instant": 1.5 + k},
                        "instances": {"60.1": list(insts)}}
                       for k, (t, insts) in enumerate(zip(times, instances))]}
    generate_archive(parse_fixture(doc), base)
    return base


def _extra(ptype: str, t: float) -> Any:
    """An extra metric's value at ``t``: the time, as a string or a number."""
    return f"at {t:.0f}" if ptype == "string" else t
