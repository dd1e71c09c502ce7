"""The families of inputs the registered fast paths take (``FastPath.inputs``), as draws.

tests/property/test_fast_paths.py draws the arguments of each registered (reference, fast)
pair from its family here: records, volumes and archives from seed archives (generated,
from the corpus, and the benchmark's uniform shape), their mutants (the fuzzer's
mutators, and words overwritten with edge values), random decoded results and value
columns, derived-metric schedules and replay schedules over drawn fixtures.
"""

from __future__ import annotations

import bz2
import contextlib
import gzip
import lzma
import random
import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import zstandard
from hypothesis import assume
from hypothesis import strategies as st

from pcpconform.dump.mmv_blocks import Block
from pcpconform.dump.mmv_jsonl import iter_mmv_lines, mmv_records
from pcpconform.dump.text import RUN_RECORDS, ResultLines
from pcpconform.errors import DeriveSemanticError, DeriveSyntaxError, PcpConformError, UnitsError
from pcpconform.extra.mmv_strategies import mmv_files
from pcpconform.extra.strategies import fixtures
from pcpconform.fastpath import PathStats
from pcpconform.fixtures.fixture import load_fixture
from pcpconform.fixtures.generate import generate_archive
from pcpconform.format.pmtypes import PmID, PmInDom, PmSem, PmType, PmUnits, Timestamp
from pcpconform.format.schema import structs
from pcpconform.format.timezone import ArchiveZone
from pcpconform.format.values import F32
from pcpconform.fuzz.archive_edit import read_archive
from pcpconform.fuzz.mutators import mutate_archive
from pcpconform.io.archive import Archive
from pcpconform.io.bulk import decode_result
from pcpconform.io.decoded import DecodedResult, DecodedValueSet
from pcpconform.io.reader import Component, RawRecord, parse_payload
from pcpconform.io.writer import ArchiveWriter, LabelFields, ValueSetSpec, layout_result
from pcpconform.mmv.reader import parse_mmv
from pcpconform.oracles.derive.bind import Bound, bind
from pcpconform.oracles.derive.evaluate import EMULATABLE, Evaluator, derived_pmid
from pcpconform.oracles.derive.parser import parse
from pcpconform.oracles.derive.profiles import PROFILES
from pcpconform.oracles.derive.vectorised import plan
from pcpconform.salvage.results import Described
from tests.bench_modules import bench_module
from tests.derive_random import expressions, pool_of, schedule_of

__all__ = ["Families", "arithmetic", "draw_schedule"]

ROOT = Path(__file__).resolve().parents[1]
Files = dict[str, bytes]
Draw = Callable[[st.DataObject], tuple[Any, ...]]

_TYPES = [PmType.I32, PmType.U32, PmType.I64, PmType.U64, PmType.FLOAT, PmType.DOUBLE,
          PmType.STRING, PmType.AGGREGATE]
_OPS = ["+", "-", "*", "/", "<", "<=", "==", ">=", ">", "!=", "&&", "||"]
#: literals at the edges of C's conversions (U32 wrap, 2^53, float32 rounding)
_LITERALS = ["0", "1", "2", "7", "1000", "4294967295", "2147483648", "0.5", "1000.0", "1e308",
             "16777217", "9007199254740993.0", ".25"]
_doubles = st.integers(0, 2**64 - 1).map(lambda b: struct.unpack(">d", b.to_bytes(8, "big"))[0])


def _value(kind: str) -> st.SearchStrategy[Any]:
    if kind == "int":
        return st.integers(-(2**63), 2**64 - 1)
    if kind == "f32":
        return st.integers(0, 2**32 - 1).map(F32.from_bits)
    if kind == "double":
        return _doubles
    return st.binary(max_size=12)


@st.composite
def _vset(draw: st.DrawFn) -> tuple[DecodedValueSet, dict[int, int]]:
    """A random value set, and its pmID's type (or none)."""
    pmid = draw(st.integers(0, 2**32 - 1))
    numval = draw(st.integers(-3, 6))
    types: dict[int, int] = {pmid: int(draw(st.sampled_from(_TYPES)))} if draw(st.booleans()) else {}
    if numval <= 0:
        return DecodedValueSet(pmid, numval, None, []), types
    kinds = draw(st.lists(st.sampled_from(["int", "f32", "double", "bytes"]), min_size=1, max_size=2))
    insts = draw(st.lists(st.integers(-(2**31), 2**31 - 1), min_size=numval, max_size=numval))
    values = [draw(_value(draw(st.sampled_from(kinds)))) for _ in range(numval)]
    valfmt = draw(st.sampled_from([0, 1, 2]))
    return DecodedValueSet(pmid, numval, valfmt, None, (tuple(insts), tuple(values))), types


@st.composite
def _random_result(draw: st.DrawFn) -> tuple[DecodedResult, dict[int, int]]:
    vsets = draw(st.lists(_vset(), max_size=4))
    types: dict[int, int] = {}
    for _, t in vsets:
        types.update(t)
    stamp = Timestamp(draw(st.integers(-(2**40), 2**40)), draw(st.integers(0, 999_999_999)))
    return DecodedResult(stamp, [vs for vs, _ in vsets], None, draw(st.booleans())), types


@st.composite
def arithmetic(draw: st.DrawFn, names: list[str], depth: int = 3) -> str:
    """An expression the derive vectoriser plans for: names, literals, unary minus,
    instant(), binary operators; few distinct names, so that their units agree."""
    if depth == 0 or draw(st.integers(0, 3)) == 0:
        if draw(st.integers(0, 2)):
            return draw(st.sampled_from(names))
        return draw(st.sampled_from(_LITERALS))
    unary = draw(st.integers(0, 7))
    if unary == 0:
        return f"(-{draw(arithmetic(names, depth - 1))})"
    if unary == 1:
        return f"instant({draw(arithmetic(names, depth - 1))})"
    left, right = draw(arithmetic(names, depth - 1)), draw(arithmetic(names, depth - 1))
    return f"({left} {draw(st.sampled_from(_OPS))} {right})"


def _overwrite(files: Files, rng: random.Random) -> Files:
    """A few words of the data volume overwritten (times, instances, values, block heads)."""
    vol = bytearray(files["0"])
    for _ in range(rng.randrange(1, 4)):
        at = rng.randrange(132, max(133, len(vol) - 4)) & ~3
        less = (struct.unpack_from(">I", vol, at)[0] - 1) & 0xFFFFFFFF     # a counter going back
        struct.pack_into(">I", vol, at, rng.choice([0, 1, 0xFFFFFFFF, 0x7FFFFFFF, rng.getrandbits(32), less]))
    return {**files, "0": bytes(vol)}


def _processes(base: Path, version: int) -> None:
    """Per-process metrics: value sets of 40 to 60 strings and counters, instances that
    come and go (large value sets of blocks of varying size)."""
    w = ArchiveWriter(base, version)
    t0 = Timestamp(1_700_000_000, 0)
    w.start(LabelFields(hostname="procs", timezone="UTC", start=t0, pid=1, zoneinfo=":UTC"))
    indom = int(PmInDom("3.9"))
    cmd, ticks = int(PmID("3.8.1")), int(PmID("3.8.2"))
    w.put_desc(cmd, PmType.STRING, indom, PmSem.INSTANT, PmUnits(), ["proc.psinfo.cmd"])
    w.put_desc(ticks, PmType.U64, indom, PmSem.COUNTER, PmUnits(), ["proc.psinfo.utime"])
    w.put_index(t0)
    for k in range(12):
        pids = list(range(100 + 3 * k, 145 + 5 * k))
        stamp = Timestamp(t0.sec + k, 0)
        w.put_indom(stamp, indom, [(p, f"{p:06d} proc{p % 7}") for p in pids])
        vsets = [ValueSetSpec(cmd, PmType.STRING, [(p, f"proc{p % 7}" + "x" * (p % 5)) for p in pids]),
                 ValueSetSpec(ticks, PmType.U64, [(p, 1000 * k + p) for p in pids])]
        w.put_result_bytes(w.encode_result(layout_result(version, stamp, vsets)))
    w.put_index(Timestamp(t0.sec + 11, 0))
    w.close()


#: edge atoms of the value section: NaNs of both signs (f32 and f64), infinities, -0.0,
#: the all-ones sentinel, integer extremes, and numbers %f spells at length
_EDGE_ATOMS = [bytes.fromhex(h) for h in (
    "0000c07f00000000", "0000c0ff00000000", "0100807f00000000", "0000807f00000000", "000080ff00000000",
    "0000008000000000", "000000000000f87f", "000000000000f8ff", "000000000000f07f", "000000000000f0ff",
    "0000000000000080", "ffffffffffffffff", "0000000000000080", "ffffffffffffff7f", "ffffffff00000000",
    "ffffffff7f000000", "0000000000002000", "ffffffffffffef7f", "0100000000000000", "00000000000080bf",
    "000000000000003f", "0000803f00000000", "7ce8f9ff00000000", "cdcccc3d00000000", "9c7500883ce4377e",
    "caf2497100000000", "0000003c00000000", "000000000000803f")]


#: texts of STRING slots: quotes, backslashes, control and high bytes, empty, 255 bytes
_EDGE_TEXTS = [b'"', b"\\", b'a"b\\c', b"\x01\x1f\x7f\x80\xff", b"", b"\xce\xbb \"quoted\" \\x41", b"x" * 255,
               b"caf\xc3\xa9\t\n"]


def _value_blocks(raw: bytes) -> list[tuple[Any, int, int]]:
    """(values, lo, hi) of every block of clean value rows the dump of raw makes."""
    lines, _ = iter_mmv_lines(raw, "drawn")
    return [obj.source for obj in lines if isinstance(obj, Block) and obj.kind == "value"]


def _string_blocks(raw: bytes) -> list[tuple[Any, ...]]:
    """(data, base, lo, hi) of every block of clean string slots the dump of raw makes."""
    lines, _ = iter_mmv_lines(raw, "drawn")
    return [obj.source for obj in lines if isinstance(obj, Block) and obj.kind == "string"]


def _packed(data: st.DataObject, raw: bytes, suffix: str) -> bytes:
    """``raw`` compressed as ``suffix`` says; a ``.zst`` in two frames, split anywhere."""
    if suffix == ".zst":
        at = data.draw(st.integers(0, len(raw)), label="frame split")
        return zstandard.ZstdCompressor().compress(raw[:at]) + zstandard.ZstdCompressor().compress(raw[at:])
    compress: dict[str, Callable[[bytes], bytes]] = {".xz": lzma.compress, ".gz": gzip.compress,
                                                     ".bz2": bz2.compress}
    return compress[suffix](raw)


class Families:
    """Draws of every input family, over seed archives made once under ``tmp``."""

    def __init__(self, tmp: Callable[[str], Path]) -> None:
        self.tmp = tmp
        self._seeds: dict[str, Files] | None = None
        self._seed_types: dict[str, dict[int, int]] = {}
        self._event_arrays: list[tuple[bytes, bool]] | None = None
        self.draws: dict[str, Draw] = {
            "result-record": self.result_record,
            "meta-record": self.meta_record,
            "result-records": self.result_records,
            "wanted-record": self.wanted_record,
            "decoded-result": self.decoded_result,
            "result-line": self.result_line,
            "value-column": self.value_column,
            "printed-column": self.printed_column,
            "archive-result": self.archive_result,
            "text-run": self.text_run,
            "event-payload": self.event_payload,
            "volume-file": self.volume_file,
            "index-file": self.index_file,
            "archive": self.archive,
            "archive-object": self.archive_object,
            "derive-schedule": self.derive_schedule,
            "derive-csv": self.derive_csv,
            "interp-schedule": self.interp_schedule,
            "interp-archive": self.interp_archive,
            "salvage-record": self.salvage_record,
            "mmv-values": self.mmv_values,
            "mmv-strings": self.mmv_strings,
            "mmv-value-run": self.mmv_value_run,
            "mmv-interleave": self.mmv_interleave,
            "mmv-slot-offsets": self.mmv_slot_offsets,
            "mmv-string-section": self.mmv_string_section,
            "seconds-pairs": self.seconds_pairs,
        }

    # -- seeds and mutants --------------------------------------------------------------
    @property
    def seeds(self) -> dict[str, Files]:
        if self._seeds is None:
            out: dict[str, Files] = {}
            for version in (2, 3):
                base = self.tmp(f"bench{version}") / "a"
                bench_module("bench_decode").generate(base, version, 0.12, 1)
                out[f"bench-v{version}"] = read_archive(base)
                for name in ("example", "events"):
                    base = self.tmp(f"{name}{version}") / "a"
                    generate_archive(load_fixture(ROOT / "corpus" / "fixtures" / f"{name}.yaml"), base,
                                     version=version)
                    out[f"{name}-v{version}"] = read_archive(base)
            out["lifetimes-v3"] = read_archive(ROOT / "corpus" / "cases" / "valid" / "lifetimes-v3" / "a")
            for version in (2, 3):
                base = self.tmp(f"processes{version}") / "a"
                _processes(base, version)
                out[f"processes-v{version}"] = read_archive(base)
            self._seeds = out
        return self._seeds

    def _mutant(self, data: st.DataObject) -> tuple[str, Files]:
        """A seed archive's name, and its files as they are or mutated."""
        name = data.draw(st.sampled_from(sorted(self.seeds)), label="seed")
        files = self.seeds[name]
        how = data.draw(st.sampled_from(["as is", "words", "mutators"]), label="mutation")
        rng = random.Random(data.draw(st.integers(0, 2**32 - 1), label="rng"))
        if how == "words":
            return name, _overwrite(files, rng)
        if how == "mutators":
            return name, mutate_archive(files, rng, [self.seeds["example-v3"]])[0]
        return name, files

    def _files(self, data: st.DataObject) -> Files:
        return self._mutant(data)[1]

    def _types(self, name: str) -> dict[int, int]:
        """pmID -> type of a seed's descriptors."""
        if name not in self._seed_types:
            archive = Archive(self._written(self.seeds[name]))
            self._seed_types[name] = {p: d.type for p, d in archive.metadata.descs.items()}
        return self._seed_types[name]

    def _written(self, files: Files) -> Path:
        dest = self.tmp("mutant")
        for part, raw in files.items():
            (dest / f"a.{part}").write_bytes(raw)
        return dest / "a"

    def _generated(self, data: st.DataObject, **limits: int) -> Path:
        base = self.tmp("generated") / "a"
        generate_archive(data.draw(fixtures(**limits), label="fixture"), base)
        return base

    def _records(self, data: st.DataObject) -> tuple[list[RawRecord], int, dict[int, int]]:
        """The records of a data volume (as far as they frame), its version, and the types
        of its seed's descriptors."""
        name, files = self._mutant(data)
        base = self._written(files)
        types = self._types(name)
        records: list[RawRecord] = []
        version = 0
        try:
            with Component(base.with_name("a.0")) as comp:
                version = comp.version
                with contextlib.suppress(PcpConformError):     # the records before a framing fault
                    records.extend(comp.records())
        except (PcpConformError, OSError):
            assume(False)
        assume(records)
        return records, version, types

    # -- the families ---------------------------------------------------------------------
    def result_record(self, data: st.DataObject) -> tuple[Any, ...]:
        records, version, types = self._records(data)
        return data.draw(st.sampled_from(records), label="record"), version, types

    def salvage_record(self, data: st.DataObject) -> tuple[Any, ...]:
        """A result record's bytes, its version, what salvage's descriptors say (some
        metrics undescribed, some singular) and the stats the walk counts in."""
        record, version, types = self.result_record(data)
        pmids = sorted(types)
        lost = data.draw(st.sets(st.sampled_from(pmids)) if pmids else st.just(set()), label="undescribed")
        singular = data.draw(st.sets(st.sampled_from(pmids)) if pmids else st.just(set()), label="singular")
        described = Described({p: t for p, t in types.items() if p not in lost}, frozenset(singular))
        return record.data, version, described, PathStats()

    def meta_record(self, data: st.DataObject) -> tuple[Any, ...]:
        """A record of a .meta file (as far as it frames), and its version."""
        base = self._written(self._files(data))
        records: list[RawRecord] = []
        version = 0
        try:
            with Component(base.with_name("a.meta")) as comp:
                version = comp.version
                with contextlib.suppress(PcpConformError):
                    records.extend(comp.records("meta"))
        except (PcpConformError, OSError):
            assume(False)
        assume(records)
        return data.draw(st.sampled_from(records), label="record"), version

    def result_records(self, data: st.DataObject) -> tuple[Any, ...]:
        records, version, types = self._records(data)
        first = data.draw(st.sampled_from(records), label="record")
        same = [r for r in records if len(r.data) == len(first.data)]
        if data.draw(st.booleans(), label="others"):
            same += data.draw(st.lists(st.sampled_from(records), max_size=3), label="others")
        return same, version, types

    def wanted_record(self, data: st.DataObject) -> tuple[Any, ...]:
        record, version, types = self.result_record(data)
        wanted = data.draw(st.sets(st.sampled_from(sorted(types) or [0])), label="wanted")
        return record, version, types, frozenset(wanted)

    def decoded_result(self, data: st.DataObject) -> tuple[Any, ...]:
        if data.draw(st.booleans(), label="from a record"):
            record, version, types = self.result_record(data)
            try:
                res = decode_result(record, version, types, PathStats())
            except PcpConformError:
                assume(False)
            return version, res, types
        res, types = data.draw(_random_result(), label="result")
        return data.draw(st.sampled_from([2, 3]), label="version"), res, types

    def result_line(self, data: st.DataObject) -> tuple[Any, ...]:
        _version, res, types = self.decoded_result(data)
        return (res, types, data.draw(st.sampled_from(["0", "1"])), data.draw(st.integers(0, 10**6)),
                data.draw(st.integers(0, 10**9)), PathStats())

    def value_column(self, data: st.DataObject) -> tuple[Any, ...]:
        vs, types = data.draw(_vset().filter(lambda v: v[0].numval > 0), label="value set")
        return (*vs.columns, types.get(vs.pmid), vs.valfmt)

    def printed_column(self, data: st.DataObject) -> tuple[Any, ...]:
        values = data.draw(st.one_of(
            st.lists(st.integers(-(2**63), 2**64 - 1), min_size=1),
            st.lists(_doubles, min_size=1),
            st.lists(st.integers(0, 2**32 - 1).map(F32.from_bits), min_size=1),
            st.lists(st.one_of(st.integers(), _doubles, st.binary(max_size=8)), min_size=1)), label="values")
        ptype = data.draw(st.sampled_from([None, PmType.U64, PmType.DOUBLE, PmType.FLOAT, PmType.STRING]))
        return tuple(values), ptype

    def archive_result(self, data: st.DataObject) -> tuple[Any, ...]:
        base = self._written(self._files(data))
        try:
            archive = Archive(base)
            results = [r for r in archive.results() if not r.is_mark]
        except PcpConformError:
            assume(False)
        assume(results)
        return archive, data.draw(st.sampled_from(results), label="result")

    def text_run(self, data: st.DataObject) -> tuple[Any, ...]:
        """The text dump's lines of an archive (its timezone or UTC) and a run of its
        records, as ``write_text`` takes them."""
        records: list[RawRecord] = []
        try:
            archive = Archive(self._written(self._files(data)))
            with contextlib.suppress(PcpConformError):     # the records before a framing fault
                records.extend(record for _, record in archive.volume_records())
        except (PcpConformError, OSError):
            assume(False)
        assume(records)
        lo = data.draw(st.integers(0, len(records) - 1), label="from")
        hi = data.draw(st.integers(lo + 1, min(len(records), lo + RUN_RECORDS)), label="to")
        zone = ArchiveZone(None if data.draw(st.booleans(), label="utc") else archive.label.timezone)
        return ResultLines(archive, zone, PathStats()), records[lo:hi]

    @property
    def event_arrays(self) -> list[tuple[bytes, bool]]:
        """Every event array of the seeds' event blocks, and whether it is high-resolution."""
        if self._event_arrays is None:
            found = []
            for files in self.seeds.values():
                base = self._written(files)
                with Component(base.with_name("a.0")) as comp:
                    for record in comp.records():
                        for block in parse_payload(structs(comp.version).result, record, "result").blocks:
                            if block.vtype in (PmType.EVENT, PmType.HIGHRES_EVENT):
                                found.append((bytes(block.vbuf), block.vtype == PmType.HIGHRES_EVENT))
            assert found, "no event arrays among the seeds"
            self._event_arrays = found
        return self._event_arrays

    def event_payload(self, data: st.DataObject) -> tuple[Any, ...]:
        """An event array of the seeds, as it is, with a few bytes overwritten, cut short or
        with bytes after it; and whether it is read as high-resolution."""
        payload, highres = data.draw(st.sampled_from(self.event_arrays), label="array")
        raw = bytearray(payload)
        how = data.draw(st.sampled_from(["as is", "bytes", "cut", "longer"]), label="mutation")
        if how == "bytes" and raw:
            for _ in range(data.draw(st.integers(1, 3), label="count")):
                at = data.draw(st.integers(0, len(raw) - 1), label="at")
                raw[at] = data.draw(st.sampled_from([0, 1, 3, 0x7F, 0x80, 0xFF]), label="byte")
        elif how == "cut":
            del raw[data.draw(st.integers(0, len(raw)), label="length"):]
        elif how == "longer":
            raw += data.draw(st.binary(min_size=1, max_size=24), label="tail")
        if data.draw(st.booleans(), label="other resolution"):
            highres = not highres
        return bytes(raw), highres

    def seconds_pairs(self, data: st.DataObject) -> tuple[Any, ...]:
        """(sec, nsec) differences as the interpolation makes them (record times less the
        archive's start: nanoseconds of either sign) and at the edges: 64-bit extremes,
        ties of the long double's rounding, and now and then one past 64 bits."""
        secs = st.one_of(st.integers(-10**9, 10**9), st.integers(-(1 << 63), (1 << 63) - 1),
                         st.sampled_from([0, 1, -1, (1 << 63) - 1, -(1 << 63), 1 << 52, (1 << 53) + 1]))
        nsecs = st.one_of(st.integers(-999_999_999, 999_999_999),
                          st.sampled_from([0, 1, -1, 500_000_000, 999_999_999, -999_999_999]),
                          st.integers(-(1 << 63), (1 << 63) - 1))
        size = data.draw(st.integers(0, 120), label="pairs")
        pairs = [data.draw(st.tuples(secs, nsecs)) for _ in range(size)]
        if pairs and data.draw(st.integers(0, 9), label="past 64 bits") == 0:
            pairs[-1] = (1 << 70, pairs[-1][1])
        return [s for s, _ in pairs], [n for _, n in pairs]

    def volume_file(self, data: st.DataObject) -> tuple[Any, ...]:
        """A data volume or .meta of a mutant, plain or compressed."""
        base = self._written(self._files(data))
        plain = base.with_name(data.draw(st.sampled_from(["a.0", "a.meta"]), label="component"))
        suffix = data.draw(st.sampled_from(["", ".xz", ".gz", ".bz2", ".zst"]), label="compression")
        if not suffix:
            return (plain,)
        assume(plain.exists())          # a mutant may have lost it: nothing to compress
        packed = plain.with_name(plain.name + suffix)
        packed.write_bytes(_packed(data, plain.read_bytes(), suffix))
        return (packed,)

    def index_file(self, data: st.DataObject) -> tuple[Any, ...]:
        """The .index of a mutant, plain or compressed, the compressed form sometimes cut
        short (a read that fails part way)."""
        base = self._written(self._files(data))
        plain = base.with_name("a.index")
        assume(plain.exists())
        suffix = data.draw(st.sampled_from(["", ".xz", ".gz", ".bz2", ".zst"]), label="compression")
        if not suffix:
            return (plain,)
        packed = _packed(data, plain.read_bytes(), suffix)
        if data.draw(st.booleans(), label="cut"):
            packed = packed[:data.draw(st.integers(0, len(packed)), label="kept")]
        out = plain.with_name(plain.name + suffix)
        out.write_bytes(packed)
        return (out,)

    def archive(self, data: st.DataObject) -> tuple[Any, ...]:
        return (self._written(self._files(data)),)

    def archive_object(self, data: st.DataObject) -> tuple[Any, ...]:
        try:
            return (Archive(self._written(self._files(data))),)
        except PcpConformError:
            assume(False)
            raise

    def mmv_values(self, data: st.DataObject) -> tuple[Any, ...]:
        """A run of the clean value rows of a drawn MMV file (any version and flags, random
        or edge atoms, escapes and 256-byte texts), whose atoms, extras and bytes are then
        overwritten with edge values (NaNs of either sign, infinities, -0.0, sentinels,
        integer extremes, offsets that name no slot); and the dump's format."""
        raw = bytearray(data.draw(mmv_files(raw_atoms=data.draw(st.booleans(), label="raw atoms"),
                                            max_metrics=12, max_instances=8), label="mmv file"))
        sections = _value_blocks(bytes(raw))
        if sections:
            values = sections[0][0]
            real = [n for n in range(values.count) if values.metrics[int(values.pos[n])].type in (4, 5)]
            rows = st.integers(0, max(values.count - 1, 0)) | st.sampled_from(real or [0])   # floats often
            for _ in range(data.draw(st.integers(0, 16), label="edge atoms")):
                at = values.base + 32 * data.draw(rows, label="row")
                raw[at:at + 8] = data.draw(st.sampled_from(_EDGE_ATOMS), label="atom")
            for _ in range(data.draw(st.integers(0, 2), label="edge extras")):
                at = values.base + 32 * data.draw(rows, label="row") + 8
                raw[at:at + 8] = struct.pack("<q", data.draw(st.sampled_from(
                    [1, -1, 0, 40, len(raw) - 256, len(raw) - 255, len(raw), 2**62]), label="extra"))
            slots = sorted(set(values.extra[values.clean].tolist()) - {0})
            for _ in range(data.draw(st.integers(0, 3), label="edge texts") if slots else 0):
                at = data.draw(st.sampled_from(slots), label="slot")
                if 40 <= at <= len(raw) - 256:
                    text = data.draw(st.sampled_from(_EDGE_TEXTS), label="text")
                    raw[at:at + 256] = text.ljust(256, b"\0")[:256]
        for _ in range(data.draw(st.integers(0, 3), label="bytes")):
            raw[40 + data.draw(st.integers(0, 10**6)) % max(1, len(raw) - 40)] = data.draw(st.integers(0, 255))
        sections = _value_blocks(bytes(raw))
        assume(sections)
        values, lo, hi = data.draw(st.sampled_from(sections), label="block")
        if data.draw(st.integers(0, 3), label="part of the block") == 0:
            lo = data.draw(st.integers(lo, hi - 1), label="from")
            hi = data.draw(st.integers(lo + 1, hi), label="to")
        return values, lo, hi, data.draw(st.sampled_from(["jsonl", "text"]), label="format")

    def mmv_value_run(self, data: st.DataObject) -> tuple[Any, ...]:
        """One metric's values as the reader leaves them (a ``ValueRun``) in a drawn MMV file
        (any version and flags, random or edge atoms), whose value entries are then put in
        another order (runs become lists of rows) and whose STRING values' slots are
        overwritten with edge texts (escapes, high bytes that are not UTF-8, 255 bytes)."""
        raw = bytearray(data.draw(mmv_files(raw_atoms=data.draw(st.booleans(), label="raw atoms"),
                                            max_metrics=12, max_instances=8), label="mmv file"))
        sections = _value_blocks(bytes(raw))
        if sections:
            values = sections[0][0]
            base, count = values.base, values.count
            for _ in range(data.draw(st.integers(0, 8), label="edge atoms") if count else 0):
                at = base + 32 * data.draw(st.integers(0, count - 1), label="row")
                raw[at:at + 8] = data.draw(st.sampled_from(_EDGE_ATOMS), label="atom")
            slots = sorted(set(values.extra[values.clean].tolist()) - {0})
            for _ in range(data.draw(st.integers(0, 3), label="edge texts") if slots else 0):
                at = data.draw(st.sampled_from(slots), label="slot")
                if 40 <= at <= len(raw) - 256:
                    raw[at:at + 256] = data.draw(st.sampled_from(_EDGE_TEXTS), label="text").ljust(256, b"\0")[:256]
            if data.draw(st.booleans(), label="reordered"):
                order = data.draw(st.permutations(range(count)), label="order")
                rows = [bytes(raw[base + 32 * k:base + 32 * k + 32]) for k in order]
                raw[base:base + 32 * count] = b"".join(rows)
        try:
            parsed = parse_mmv(bytes(raw), stats=PathStats())
        except PcpConformError:
            assume(False)
        runs = [m.value_source for m in parsed.metrics if m.value_source is not None]
        assume(runs)
        return (data.draw(st.sampled_from(runs), label="run"),)

    def mmv_interleave(self, data: st.DataObject) -> tuple[Any, ...]:
        """Lines as the MMV dump's instances and metrics are made of pieces: texts every line
        shares, columns of texts, integer columns (int64 and uint64 extremes), JSON texts
        (quotes, backslashes, None); now and then a text that is not printable ASCII (which
        the kernel declines); the last piece ends the line."""
        rows = data.draw(st.integers(0, 30), label="rows")
        printable = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=10)
        odd = st.text(max_size=4)
        text = st.one_of(printable, printable, printable, odd) if data.draw(st.booleans(), label="odd") else printable

        def column(values: st.SearchStrategy[Any]) -> st.SearchStrategy[list[Any]]:
            return st.lists(values, min_size=rows, max_size=rows)

        piece = st.one_of(
            text, column(text),
            st.tuples(st.just("i"), column(st.integers(-2**63, 2**63 - 1) | st.sampled_from([0, -1, 2**63 - 1, -2**63]))
                      .map(lambda v: np.array(v, np.int64))),
            st.tuples(st.just("u"), column(st.integers(0, 2**64 - 1) | st.sampled_from([0, 2**64 - 1]))
                      .map(lambda v: np.array(v, np.uint64))),
            st.tuples(st.just("j"), column(st.none() | text)))
        pieces = data.draw(st.lists(piece, max_size=8), label="pieces")
        return rows, (*pieces, data.draw(text, label="last") + "\n")

    def mmv_strings(self, data: st.DataObject) -> tuple[Any, ...]:
        """A run of the clean string slots of a drawn MMV file (version 2 or 3: names, help
        and STRING values in slots), whose slots are then overwritten with edge texts (quotes,
        backslashes, control and high bytes, 255 bytes and a NUL); and the dump's format."""
        version = data.draw(st.sampled_from([2, 3]), label="version")
        raw = bytearray(data.draw(mmv_files(version, max_metrics=12, max_instances=8), label="mmv file"))
        blocks = _string_blocks(bytes(raw))
        assume(blocks)
        for _ in range(data.draw(st.integers(0, 6), label="edge texts")):
            _, base, lo, hi = data.draw(st.sampled_from(blocks), label="block")
            at = base + 256 * data.draw(st.integers(lo, hi - 1), label="slot")
            raw[at:at + 256] = data.draw(st.sampled_from(_EDGE_TEXTS), label="text").ljust(256, b"\0")[:256]
        _, base, lo, hi = data.draw(st.sampled_from(_string_blocks(bytes(raw))), label="block")
        if data.draw(st.integers(0, 3), label="part of the block") == 0:
            lo = data.draw(st.integers(lo, hi - 1), label="from")
            hi = data.draw(st.integers(lo + 1, hi), label="to")
        return bytes(raw), base, lo, hi, data.draw(st.sampled_from(["jsonl", "text"]), label="format")

    def _mmv_with_slots(self, data: st.DataObject) -> tuple[bytearray, int, int]:
        """A drawn MMV file (version 2 or 3) with some of its string slots overwritten with
        edge texts, no NUL, or bytes after the NUL; and its strings section's offset and
        count (as its TOC says: the section may leave the file)."""
        version = data.draw(st.sampled_from([2, 3]), label="version")
        raw = bytearray(data.draw(mmv_files(version, max_metrics=12, max_instances=8), label="mmv file"))
        toc = next((r for r in mmv_records(bytes(raw), "drawn")[0]
                    if r["kind"] == "toc" and r["section"] == "strings"), None)
        assume(toc is not None)
        assert toc is not None
        base, count = toc["section_offset"], toc["count"]
        for _ in range(data.draw(st.integers(0, 6), label="edited slots") if count else 0):
            at = base + 256 * data.draw(st.integers(0, count - 1), label="slot")
            text = data.draw(st.sampled_from([*_EDGE_TEXTS, b"x" * 256, b"ab\0c", b"\0" * 255 + b"z"]),
                             label="text")
            raw[at:at + 256] = text.ljust(256, b"\0")[:256]
        if data.draw(st.integers(0, 4), label="cut") == 0:
            raw = raw[:data.draw(st.integers(0, len(raw)), label="length")]
        return raw, base, count

    def mmv_slot_offsets(self, data: st.DataObject) -> tuple[Any, ...]:
        """A drawn file's bytes, and offsets to find slots at: its slots', their neighbours,
        and the edges of the file (before the header's end, the last slot, past the end)."""
        raw, base, count = self._mmv_with_slots(data)
        n = len(raw)
        near = st.sampled_from([base + 256 * k for k in range(count)] or [40]).flatmap(
            lambda at: st.integers(at - 2, at + 2))
        edges = st.sampled_from([-1, 0, 39, 40, n - 257, n - 256, n - 255, n, 2**62])
        offsets = data.draw(st.lists(near | edges | st.integers(0, n), max_size=40), label="offsets")
        return bytes(raw), np.array(offsets, np.int64)

    def mmv_string_section(self, data: st.DataObject) -> tuple[Any, ...]:
        """A drawn file's bytes, and its strings section's offset and count (or a part of
        it, or a count that runs past the end)."""
        raw, base, count = self._mmv_with_slots(data)
        if count and data.draw(st.booleans(), label="part"):
            lo = data.draw(st.integers(0, count - 1), label="from")
            base, count = base + 256 * lo, data.draw(st.integers(0, count - lo + 1), label="count")
        return bytes(raw), base, count

    def derive_schedule(self, data: st.DataObject) -> tuple[Any, ...]:
        base = self._generated(data, max_metrics=5, max_samples=7)
        archive = Archive(base)
        pool = pool_of(archive)
        assume(pool.numeric)
        profile = PROFILES[data.draw(st.sampled_from(sorted(PROFILES)), label="profile")]
        few = st.lists(st.sampled_from(pool.numeric), min_size=1, max_size=2)
        texts = [data.draw(arithmetic(data.draw(few)), label=f"arith {k}") for k in range(6)]
        texts += [data.draw(expressions(pool, archive, profile), label=f"expr {k}") for k in range(3)]
        bound: list[Bound] = []
        for k, text in enumerate(texts):
            try:
                bound.append(bind(parse(text, profile), f"d.m{k}", archive, profile))
            except (DeriveSemanticError, DeriveSyntaxError, UnitsError):
                continue
        assume(bound)
        start, step, count = schedule_of(data.draw, archive)
        emulate = EMULATABLE if data.draw(st.booleans(), label="emulate") else frozenset()
        unwritten = data.draw(st.sampled_from([None, 0, 0xAA]), label="unwritten")
        return archive, bound, profile, emulate, unwritten, start, step, count

    def derive_csv(self, data: st.DataObject) -> tuple[Any, ...]:
        """``derive_schedule``'s draw as the derived CSV writers take it: a maker of the
        evaluator, and one time in five ``--instances`` (some instances of each metric)."""
        archive, bound, profile, emulate, unwritten, start, step, count = self.derive_schedule(data)
        if data.draw(st.booleans(), label="vectorisable only"):     # fetches with every metric in columns
            bound = [b for b in bound if plan(b.root) is None] or bound
        keep = None
        if data.draw(st.integers(0, 4), label="instances") == 0:
            insts = st.sets(st.sampled_from([-1, 0, 1, 2, 3, 4]), max_size=3)
            keep = {int(derived_pmid(k)): data.draw(insts, label=f"keep {k}") for k in range(len(bound))}

        min_run = data.draw(st.sampled_from([1, 4]), label="min_run")

        def make() -> Evaluator:
            ev = Evaluator(archive, bound, profile, emulate=emulate, unwritten=unwritten)
            if ev.vectoriser is not None:
                ev.vectoriser.min_run = min_run     # 1: every run, however short, as columns
            return ev
        return make, bound, keep, start, step, count

    def interp_archive(self, data: st.DataObject) -> tuple[Any, ...]:
        base = self._generated(data, max_samples=10)
        pmids = [int(d.pmid) for d in Archive(base).descs()]
        wanted = data.draw(st.sets(st.sampled_from(pmids)), label="wanted") if pmids else set()
        return base, [p for p in pmids if p in wanted] or pmids

    def interp_schedule(self, data: st.DataObject) -> tuple[Any, ...]:
        base = self._generated(data, max_samples=12)
        a = Archive(base)
        assume(any(True for _ in a.results()))
        start, step, count = draw_schedule(data, a)
        pmids = [int(d.pmid) for d in a.descs()]
        rules = data.draw(st.sampled_from(["pcp-6.0", "pcp-6.3"]), label="rules")
        return base, pmids, rules, start, step, count


def draw_schedule(data: st.DataObject, a: Archive) -> tuple[Timestamp, int, int]:
    """A replay schedule over an archive's records: from a record's time or anywhere near
    them, steps of any size, one in five backwards, up to 40 fetches."""
    stamps = [r.timestamp.total_nsec() for r in a.results()]
    lo, hi = min(stamps), max(stamps)
    span = max(hi - lo, 1)
    if data.draw(st.booleans(), label="at a record"):
        at = data.draw(st.sampled_from(stamps), label="record")
    else:
        at = lo + data.draw(st.integers(-2 * 10**9, span + 2 * 10**9), label="start offset ns")
    delta = data.draw(st.integers(1, max(span // 3, 1))
                      | st.sampled_from([1, 10**6, 10**9, 250_000_000, max(span // 11, 1)]),
                      label="delta ns")
    if data.draw(st.integers(0, 4), label="backwards") == 0:
        delta = -delta
    return Timestamp.from_nsec(at), delta, data.draw(st.integers(0, 40), label="count")
