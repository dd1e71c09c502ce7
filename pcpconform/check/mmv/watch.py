"""Watching live MMV files (``check --watch``, MMV-CHK-WATCH-*): what a one-shot check cannot
see, found by sampling a running writer's files as the MMV PMDA reads them.

Every ``interval`` seconds each file (or each file of a directory the PMDA would scan) is
read whole, once. The PMDA's own tests decide what it sees: a header whose generations
differ, or are 0, is a rewrite in progress (the PMDA skips the file); a generation that
changed is a new file (the PMDA reloads it), checked as ``check`` checks a file; a PROCESS
writer whose process is gone has its file dropped. Between two samples of one generation
every counter's value must not go down: one that goes down and comes back at the next
sample was read half written (torn), one that stays down regressed. At the end, each
metric whose values never changed is named. Each finding is a diagnostic of the file's
report, with the sample's time.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pcpconform.check.diagnostics import DiagnosticLimit, Report
from pcpconform.errors import PcpConformError
from pcpconform.mmv.model import (
    FLAG_PROCESS,
    FLAG_SENTINEL,
    MMV_TYPES,
    SEM_COUNTER,
    TYPE_ELAPSED,
    TYPE_NOSUPPORT,
    TYPE_STRING,
    TYPE_U32,
    TYPE_U64,
    exported_metrics,
)
from pcpconform.mmv.reader import parse_mmv
from pcpconform.mmv.schema import HEADER_SIZE, MMV_MAGIC

__all__ = ["watch_mmv", "Watcher"]

_Key = tuple[str, int | None]          # exported name, instance


@dataclass
class _File:
    """What the samples so far showed of one file."""

    report: Report
    generation: int | None = None
    present: bool = False
    names: set[str] = field(default_factory=set)
    last: dict[_Key, int | float] = field(default_factory=dict)       # counters, last sample
    pending: dict[_Key, tuple[int | float, int | float, str]] = field(default_factory=dict)
    first: dict[_Key, Any] = field(default_factory=dict)              # every value, first seen
    changed: set[_Key] = field(default_factory=set)
    samples: int = 0                    # samples of the current generation with values
    reported: set[str] = field(default_factory=set)                   # one-off findings made


def _stamp(now: float) -> str:
    return datetime.fromtimestamp(now, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class Watcher:
    """Samples one MMV file or a directory of them; ``sample()`` once per interval, then
    ``finish()`` for the reports."""

    def __init__(self, path: str | os.PathLike[str], max_diagnostics: int | None = None,
                 wall: Callable[[], float] = time.time) -> None:
        self.path = Path(path)
        self.directory = self.path.is_dir()
        self.files: dict[Path, _File] = {}
        self.max_diagnostics = max_diagnostics
        self.wall = wall
        self.count = 0

    def _targets(self) -> list[Path]:
        if not self.directory:
            return [self.path]
        from pcpconform.check.mmv.directory import scanned_files
        try:
            return scanned_files(self.path)
        except OSError:
            return []

    def _file(self, path: Path) -> _File:
        if path not in self.files:
            self.files[path] = _File(Report(str(path), max_diagnostics=self.max_diagnostics))
        return self.files[path]

    def sample(self) -> None:
        now = self.wall()
        when = _stamp(now)
        current = set(self._targets())
        for path in sorted(current | set(self.files)):
            f = self._file(path)
            with contextlib.suppress(DiagnosticLimit):
                self._sample_file(path, f, when, path in current)
        self.count += 1

    def _add(self, path: Path, f: _File, code: str, message: str, when: str, **where: Any) -> None:
        f.report.add(code, str(path), message, record=self.count, time=when, **where)

    def _sample_file(self, path: Path, f: _File, when: str, listed: bool) -> None:
        try:
            data = path.read_bytes() if listed else None
        except OSError:
            data = None
        if data is None:
            if f.present:
                self._add(path, f, "mmv.watch-file-gone", f"the file is gone at sample {self.count}: the"
                          " PMDA no longer serves its metrics", when)
            f.present = False
            return
        if not f.present and self.count > 0:
            self._add(path, f, "mmv.watch-file-appeared", f"the file appeared at sample {self.count}", when)
        f.present = True
        if len(data) < HEADER_SIZE or data[:4] != MMV_MAGIC:
            self._once(path, f, data, when, "bad")
            return
        g1 = int.from_bytes(data[8:16], "little")
        g2 = int.from_bytes(data[16:24], "little")
        if g1 != g2 or g1 == 0:
            self._add(path, f, "mmv.watch-rewriting", f"generations g1 {g1:#x} and g2 {g2:#x} at sample"
                      f" {self.count}: the file is being written, and the PMDA skips it", when,
                      offset=8 if g1 == 0 else 16, field="header.g1" if g1 == 0 else "header.g2")
            return
        if f.generation is not None and g1 != f.generation:
            self._add(path, f, "mmv.watch-generation", f"the generation changed from {f.generation:#x} to"
                      f" {g1:#x} at sample {self.count}: the file was written anew, and the PMDA reloads"
                      " it (its values start again)", when, offset=8, field="header.g1")
            self._regressed(path, f)
            f.last.clear()
            f.samples = 0
        if g1 != f.generation:
            f.generation = g1
            self._once(path, f, data, when, f"{g1:#x}")
        flags = int.from_bytes(data[28:32], "little")
        pid = int.from_bytes(data[32:36], "little", signed=True)
        if flags & FLAG_PROCESS and pid > 0 and not _alive(pid) and f"gone {pid}" not in f.reported:
            f.reported.add(f"gone {pid}")
            self._add(path, f, "mmv.watch-process-gone", f"the writer, process {pid}, is gone (PROCESS"
                      " flag): the PMDA drops the file's metrics; the file is left behind", when,
                      offset=32, field="header.process")
        try:
            mmv = parse_mmv(data, str(path))
        except PcpConformError:
            return                      # the check of this generation says why
        self._values(path, f, mmv, when)

    def _once(self, path: Path, f: _File, data: bytes, when: str, generation: str) -> None:
        """The one-shot check of what the file holds now (once per generation)."""
        if generation in f.reported:
            return
        f.reported.add(generation)
        with tempfile.TemporaryDirectory(prefix="pcpconform-watch-") as tmp:
            copy = Path(tmp) / path.name
            copy.write_bytes(data)
            from pcpconform.check.mmv.engine import check_mmv_file
            report = check_mmv_file(copy)
        for d in report.diagnostics:
            f.report.add(d.code, str(path), d.message, record=d.record, offset=d.offset, field=d.field,
                         metric=d.metric, time=when)

    def _values(self, path: Path, f: _File, mmv: Any, when: str) -> None:
        names = set()
        for e in exported_metrics(mmv, path.name):
            m = e.metric
            names.add(e.name)
            if m.type not in MMV_TYPES or m.type in (TYPE_NOSUPPORT, TYPE_ELAPSED):
                continue
            for v in m.values:
                if mmv.flags & FLAG_SENTINEL and v.atom == b"\xff" * 8:
                    continue
                key = (e.name, v.instance)
                value = v.typed(m.type)
                if key not in f.first:
                    f.first[key] = value
                elif value != f.first[key]:
                    f.changed.add(key)
                if m.type != TYPE_STRING and m.semantics in (0, SEM_COUNTER) and isinstance(value, (int, float)):
                    self._counter(path, f, key, m.type, value, when)
        if f.names and names != f.names:
            gone, new = sorted(f.names - names), sorted(names - f.names)
            self._add(path, f, "mmv.watch-metrics-changed", f"at sample {self.count} the file exports"
                      f" {len(new)} new and no longer {len(gone)} of its metrics"
                      + (f" (gone: {', '.join(gone[:3])}{' ...' if len(gone) > 3 else ''})" if gone else ""),
                      when)
        f.names = names
        f.samples += 1

    def _counter(self, path: Path, f: _File, key: _Key, mtype: int, value: int | float, when: str) -> None:
        """A counter's value at this sample: one below the sample before stays pending until
        it comes back up (torn: a reader saw it half written) or the watch ends (regressed)."""
        name, inst = key
        held = f.pending.get(key)
        if held is not None:
            before, low, then = held
            if value >= before:
                del f.pending[key]
                which = name + ("" if inst is None else f"[{inst}]")
                self._add(path, f, "mmv.watch-torn", f"the counter {which} read {low} at {then},"
                          f" between {before} and {value}: a reader saw it half written", then,
                          metric=name)
        elif key in f.last and value < f.last[key] and not _wrapped(mtype, f.last[key], value):
            f.pending[key] = (f.last[key], value, when)
        f.last[key] = value

    def _regressed(self, path: Path, f: _File) -> None:
        """The counters still below an earlier value (at the end, or at a new generation)."""
        for (name, inst), (before, low, then) in f.pending.items():
            which = name + ("" if inst is None else f"[{inst}]")
            self._add(path, f, "mmv.watch-counter-regress", f"the counter {which} went down from"
                      f" {before} to {low} at {then}, and did not come back", then, metric=name)
        f.pending.clear()

    def finish(self) -> list[Report]:
        """The reports, a counter still down at the last sample counted as regressed, and
        the metrics whose values never changed named."""
        for path, f in self.files.items():
            with contextlib.suppress(DiagnosticLimit):
                self._regressed(path, f)
                if self.count >= 3 and f.samples >= 3:
                    still = sorted({name for name, _ in f.first} - {name for name, _ in f.changed})
                    for name in still:
                        self._add(path, f, "mmv.watch-static", f"{name} kept its values through"
                                  f" {f.samples} samples", _stamp(self.wall()), metric=name)
        return [f.report for _, f in sorted(self.files.items())]


def _wrapped(mtype: int, before: int | float, after: int | float) -> bool:
    """A 32- or 64-bit unsigned counter that wrapped (PCP's rate conversion allows for it)."""
    top = {TYPE_U32: 2**32, TYPE_U64: 2**64}.get(mtype)
    return top is not None and before >= top * 3 // 4 and after < top // 4


def watch_mmv(path: str | os.PathLike[str], *, interval: float = 1.0, count: int | None = None,
              duration: float | None = None, max_diagnostics: int | None = None,
              sleep: Callable[[float], None] = time.sleep, clock: Callable[[], float] = time.monotonic,
              on_sample: Callable[[int], None] | None = None) -> list[Report]:
    """Sample ``path`` every ``interval`` seconds, ``count`` times or for ``duration``
    seconds (at least twice), and return one report per file seen."""
    watcher = Watcher(path, max_diagnostics)
    started = clock()
    while True:
        watcher.sample()
        if on_sample is not None:
            on_sample(watcher.count)
        if count is not None and watcher.count >= count:
            break
        if count is None and duration is not None and clock() - started >= duration and watcher.count >= 2:
            break
        sleep(interval)
    return watcher.finish()

