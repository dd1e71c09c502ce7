"""Replay variants the interp tests compare the real one against."""

from __future__ import annotations

from pcpconform.io.archive import Archive
from pcpconform.oracles.interp.model import gc_paused
from pcpconform.oracles.interp.replay import Replay
from pcpconform.oracles.interp.wanted import wanted_records

__all__ = ["OneAtATime"]


class OneAtATime(Replay):
    """The pass as it was: every record decoded by the WantedDecoder, one at a time."""

    def _read(self, archive: Archive) -> None:
        with gc_paused():
            self._collect(archive, wanted_records(archive, self.descs, self.seeked_from, self.decoder))
