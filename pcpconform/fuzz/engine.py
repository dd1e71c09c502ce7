"""The mutation engine: inputs to mutate (archives as parts, MMV files, config files),
turned into mutants and into the files and placeholder names of a run."""

from __future__ import annotations

import random
from dataclasses import dataclass

from pcpconform.fuzz.archive_edit import BASE, archive_files
from pcpconform.fuzz.formats import mutate_config, mutate_mmv
from pcpconform.fuzz.mutators import mutate_archive
from pcpconform.fuzz.seeds import archive_seeds, config_seeds, mmv_seeds

__all__ = ["Entry", "seeds_for", "mutate", "job_files", "MMV_NAME", "CONFIG_NAME"]

MMV_NAME = "m.mmv"
CONFIG_NAME = "derived.conf"


@dataclass(frozen=True)
class Entry:
    """One input of the campaign's queue. ``parts`` is what mutations change: an archive's
    parts (meta, index, 0 ...), or {"mmv": bytes}, or {"config": bytes}."""

    kind: str
    parts: dict[str, bytes]
    notes: tuple[str, ...] = ()
    origin: str = ""


def input_kind(needs: set[str]) -> str:
    if "mmv" in needs:
        return "mmv"
    if "config" in needs:
        return "config"
    return "archive"


def seeds_for(kind: str) -> list[Entry]:
    if kind == "mmv":
        return [Entry("mmv", {"mmv": data}, origin=name) for name, data in mmv_seeds()]
    if kind == "config":
        return [Entry("config", {"config": data}, origin=name) for name, data in config_seeds()]
    return [Entry("archive", dict(parts), origin=name) for name, parts in archive_seeds()]


def _donors() -> list[dict[str, bytes]]:
    return [dict(parts) for _, parts in archive_seeds()]


def mutate(entry: Entry, rng: random.Random) -> Entry:
    """A mutant of ``entry``: its mutation history grows by the mutations applied."""
    if entry.kind == "mmv":
        data, notes = mutate_mmv(entry.parts["mmv"], rng)
        return Entry("mmv", {"mmv": data}, entry.notes + tuple(notes), entry.origin)
    if entry.kind == "config":
        data, notes = mutate_config(entry.parts["config"], rng)
        return Entry("config", {"config": data}, entry.notes + tuple(notes), entry.origin)
    parts, notes = mutate_archive(entry.parts, rng, _donors())
    return Entry("archive", parts, entry.notes + tuple(notes), entry.origin)


def job_files(kind: str, parts: dict[str, bytes]) -> tuple[dict[str, bytes], dict[str, str]]:
    """The files of a run and what each placeholder names."""
    if kind == "mmv":
        return {MMV_NAME: parts["mmv"]}, {"mmv": MMV_NAME}
    if kind == "config":
        # a derived config runs against the valid example archive
        archive = dict(archive_seeds()[0][1])
        return {CONFIG_NAME: parts["config"], **archive_files(archive)}, {"config": CONFIG_NAME, "archive": BASE}
    return archive_files(parts), {"archive": BASE}
