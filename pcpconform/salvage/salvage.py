"""``salvage_archive``: a damaged archive in, a new archive every libpcp reads out, and the
account of what was kept, repaired and lost (spec/salvage.md).

The input is only ever read. Its files are found leniently (sources.py), their labels
agreed (labels.py), .meta salvaged (meta.py), every volume's results salvaged into a spool
(volumes.py) and put in time order, and the output written with a rebuilt index
(write.py); then the validator checks the output (SALVAGE-VERIFY-1).
"""

from __future__ import annotations

import os
from array import array
from dataclasses import dataclass
from pathlib import Path

from pcpconform.errors import UsageError
from pcpconform.format.pmtypes import Timestamp
from pcpconform.format.schema import INDEX_ENTRY_SIZE, LABEL_SIZE, PM_LOG_VOL_META, PM_LOG_VOL_TI
from pcpconform.io.files import strip_compression
from pcpconform.salvage.evidence import choose_descriptors
from pcpconform.salvage.labels import FileLabel, agree, archive_version, read_label
from pcpconform.salvage.meta import salvage_meta
from pcpconform.salvage.report import Item, SalvageReport
from pcpconform.salvage.results import Described
from pcpconform.salvage.sources import DEFAULT_DECOMPRESS_LIMIT, InputFiles, Opener, Source, find_input
from pcpconform.salvage.volumes import ORDER_RULES, Spool, salvage_volume
from pcpconform.salvage.write import write_output

__all__ = ["salvage_archive", "Provenance"]


@dataclass(frozen=True)
class Provenance:
    """Where a result of the output lies, and the input record it was salvaged from."""

    out_volume: int
    out_offset: int
    in_file: str
    in_offset: int


def _out_paths(out_base: Path) -> list[Path]:
    parent = out_base.parent if str(out_base.parent) else Path(".")
    if not parent.is_dir():
        return []
    prefix = out_base.name + "."
    parts = {e: strip_compression(e[len(prefix):])[0] for e in os.listdir(parent) if e.startswith(prefix)}
    return [parent / e for e, part in parts.items() if part in ("meta", "index") or part.isdigit()]


def _guard(files: InputFiles, out_base: Path, force: bool) -> None:
    """Never write over the input; never write over anything else unless asked to."""
    ins = {p.resolve() for p in files.all_paths()}
    same = (out_base.parent.resolve(), out_base.name) == (files.base.parent.resolve(), files.base.name)
    existing = _out_paths(out_base)
    if same or any(p.resolve() in ins for p in existing):
        raise UsageError(f"{out_base}: the output would overwrite the input archive {files.base}; "
                         "salvage never touches its input: name another output")
    if existing and not force:
        raise UsageError(f"{out_base}: an archive of that name exists ({existing[0].name}); "
                         "remove it or give --force")


def salvage_archive(in_path: str | os.PathLike[str], out_base: str | os.PathLike[str], *, order: str = "sort",
                    verify: bool = True, force: bool = False,
                    decompress_limit: int = DEFAULT_DECOMPRESS_LIMIT,
                    provenance: list[Provenance] | None = None) -> SalvageReport:
    """Salvage the archive named by ``in_path`` (a base name or any of its files) into a new
    archive ``out_base``. Raises UsageError when the request cannot be carried out (no such
    input, an output that would overwrite it); a damaged input never raises: what cannot
    be made into an archive is the report's ``failure``. ``provenance`` (if given) gets,
    for every result written, where it is and the input record it came from."""
    if order not in ORDER_RULES:
        raise UsageError(f"order rule {order!r} is not one of {', '.join(ORDER_RULES)}")
    files = find_input(in_path)
    out = Path(out_base)
    _guard(files, out, force)
    report = SalvageReport(str(files.base), str(out))
    opener = Opener(decompress_limit)
    spool = Spool()
    try:
        _salvage(files, out, report, opener, spool, order, provenance)
    finally:
        spool.close()
        opener.close()
    if verify and report.failure is None:
        _verify(out, report)
    return report


def _open(opener: Opener, paths: list[Path], report: SalvageReport) -> Source | None:
    if not paths:
        return None
    try:
        source = opener.open(paths[0])
    except OSError as exc:
        raise UsageError(f"{paths[0]}: {exc.strerror or exc}") from None
    if source.broken is not None:
        report.add(Item("file.read", "dropped", "SALVAGE-FILE-4", source.name,
                        f"{source.broken}: the {source.size} bytes before the break are kept", source.size, None))
    return source


def _salvage(files: InputFiles, out: Path, report: SalvageReport, opener: Opener, spool: Spool, order: str,
             provenance: list[Provenance] | None) -> None:
    meta = _open(opener, files.meta, report)
    index = _open(opener, files.index, report)
    volumes = {vol: s for vol, paths in sorted(files.volumes.items()) if (s := _open(opener, paths, report))}
    for vol, path in files.renamed.items():
        report.add(Item("file.name", "repaired", "SALVAGE-FILE-1", path.name,
                        f"taken as volume {vol}, which libpcp cannot open under this name"))
    labels: list[FileLabel] = []
    if meta is not None:
        labels.append(read_label(meta, "meta", PM_LOG_VOL_META))
    if index is not None:
        labels.append(read_label(index, "index", PM_LOG_VOL_TI))
    labels += [read_label(s, "volume", vol) for vol, s in volumes.items()]
    version = archive_version(labels)
    if version not in LABEL_SIZE:
        report.failure = ("no file has a label" if version is None else
                          f"the labels say archive version {version}: libpcp reads only versions 2 and 3")
        return
    report.version = version
    label, repairs = agree(labels, version)
    if label is None:
        report.failure = "no file's label can be read"
        return
    for code, name, detail in repairs:
        report.add(Item(code, "repaired", "SALVAGE-LABEL-1" if code != "label.features" else "SALVAGE-LABEL-2",
                        name or (meta.name if meta else "(labels)"), detail))
    if meta is None or meta.size <= LABEL_SIZE[version]:
        code = "file.missing-meta" if meta is None else "file.empty"
        report.add(Item(code, "dropped", "SALVAGE-FILE-2", meta.name if meta else f"{files.base.name}.meta",
                        "without .meta no value has a type"))
        report.failure = "the archive has no .meta holding a record: no value can be typed"
        return
    if not volumes:
        report.failure = "the archive has no data volume"
        return
    ms = salvage_meta(meta, version, report)
    if not ms.descs:
        report.failure = "no metric descriptor survives in .meta: no value can be typed"
        return
    if ms.conflicts:
        ms.settle(choose_descriptors(list(volumes.values()), version, ms.conflicts), meta.name, report)
    described = Described({pmid: int(d.type) for pmid, d in ms.descs.items()},
                          frozenset(pmid for pmid, d in ms.descs.items() if d.indom.is_null), ms.lost)
    start = label.start if label.start != Timestamp(0, 0) else None
    for vol, source in volumes.items():
        if source.size <= LABEL_SIZE[version]:
            report.add(Item("file.empty" if vol == min(volumes) else "file.empty-volume", "dropped",
                            "SALVAGE-FILE-3", source.name, "the volume holds no record; it is left out"))
        salvage_volume(source, vol, version, described, ms.names, start, spool, report)
    _index_note(files, index, version, report)
    if not len(spool):
        report.failure = "no result survives in the data volumes"
        return
    rows = array("q", spool.order(order, report))     # a machine word per result
    first = min(spool.stamp(k) for k in rows)
    if start is None:
        report.add(Item("time.fraction", "repaired", "SALVAGE-LABEL-3", "(labels)",
                        f"no label gives a start that is a time: the first result's, {first}, is taken",
                        first=first, last=first))
    if start is None or first < start:
        if start is not None:
            report.add(Item("result.before-start", "repaired", "SALVAGE-ORDER-2", "(labels)",
                            f"the archive start {start} is moved back to its first result, {first}: libpcp "
                            "replays no result earlier than the start", first=first, last=start))
        label.start = first
    placed: list[tuple[int, int, int]] | None = [] if provenance is not None else None
    written, nvol, nmeta = write_output(out, version, label, ms.records, spool, rows, placed)
    if provenance is not None and placed is not None:
        provenance += [Provenance(vol, offset, volumes[spool.volumes[k]].name, spool.sources[k])
                       for vol, offset, k in placed]
    report.records_out, report.volumes_out, report.metadata_out = written, nvol, nmeta
    report.values_out = sum(spool.values[k] for k in rows)


def _index_note(files: InputFiles, index: Source | None, version: int, report: SalvageReport) -> None:
    if index is None:
        report.add(Item("file.missing-index", "rebuilt", "SALVAGE-INDEX-1", f"{files.base.name}.index",
                        "the index is written from the volumes"))
        return
    size = index.size - LABEL_SIZE[version]
    if size <= 0:
        report.add(Item("index.empty", "rebuilt", "SALVAGE-INDEX-1", index.name,
                        "the index holds no entry; it is written from the volumes"))
    elif size % INDEX_ENTRY_SIZE[version]:
        report.add(Item("index.partial", "rebuilt", "SALVAGE-INDEX-1", index.name,
                        "the index ends in a partial entry; it is written from the volumes"))


def _verify(out: Path, report: SalvageReport) -> None:
    from pcpconform.check.engine import check_archive
    from pcpconform.check.rules import Severity

    checked = check_archive(out)
    report.out_errors = checked.errors
    report.out_warnings = checked.count(Severity.WARNING)
    report.out_codes = sorted(checked.codes())
