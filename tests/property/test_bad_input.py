"""Bad input is normal input: every corruption ends in a located diagnostic, never a traceback."""

from __future__ import annotations

import shutil
import struct
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pcpconform.fixtures.fixture import load_fixture
from pcpconform.fixtures.generate import generate_archive
from tests.cli import run_cli as run

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "corpus" / "fixtures" / "example.yaml"


@pytest.fixture(scope="module")
def pristine(tmp_path_factory) -> dict[int, Path]:
    out = {}
    for version in (2, 3):
        base = tmp_path_factory.mktemp(f"pristine{version}") / "ex"
        generate_archive(load_fixture(EXAMPLE), base, version=version)
        out[version] = base
    return out




def copy_archive(base: Path, dest: Path) -> Path:
    dest.mkdir(parents=True, exist_ok=True)
    for p in base.parent.glob(base.name + ".*"):
        shutil.copy(p, dest / p.name)
    return dest / base.name


def test_missing_archive_is_usage_error(tmp_path: Path) -> None:
    status, _, err = run("dump", str(tmp_path / "nothing"))
    assert status == 2
    assert "no such archive" in err


def test_truncated_volume_names_file_record_offset_and_field(pristine, tmp_path: Path) -> None:
    base = copy_archive(pristine[3], tmp_path)
    vol = Path(f"{base}.0")
    data = vol.read_bytes()
    vol.write_bytes(data[:-10])
    status, _, err = run("dump", "--format", "jsonl", str(base))
    assert status == 1
    assert "ex.0" in err and "record 6" in err and "offset" in err and "field" in err
    assert "truncated" in err


def test_huge_numval_in_small_record_is_bounded(pristine, tmp_path: Path) -> None:
    base = copy_archive(pristine[2], tmp_path)
    vol = Path(f"{base}.0")
    data = bytearray(vol.read_bytes())
    # first result at 132: len(4) sec(4) usec(4) numpmid(4) pmid(4) numval(4)
    struct.pack_into(">i", data, 132 + 20, 2**31 - 1)
    vol.write_bytes(bytes(data))
    status, _, err = run("dump", "--format", "jsonl", str(base))
    assert status == 1
    assert "record 1" in err and "vset" in err


def test_huge_length_word_does_not_allocate(pristine, tmp_path: Path) -> None:
    base = copy_archive(pristine[3], tmp_path)
    meta = Path(f"{base}.meta")
    data = bytearray(meta.read_bytes())
    struct.pack_into(">I", data, 808, 0x7FFFFFF0)
    meta.write_bytes(bytes(data))
    status, _, err = run("dump", str(base))
    assert status == 1
    assert "ex.meta" in err and "record 1" in err and "truncated" in err


def test_bad_magic_is_reported(pristine, tmp_path: Path) -> None:
    base = copy_archive(pristine[2], tmp_path)
    meta = Path(f"{base}.meta")
    data = bytearray(meta.read_bytes())
    data[4:8] = b"\xde\xad\xbe\x02"
    meta.write_bytes(bytes(data))
    status, _, err = run("dump", str(base))
    assert status == 1 and "bad label magic" in err


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_mutated_archives_never_crash(pristine, tmp_path_factory, data) -> None:
    version = data.draw(st.sampled_from([2, 3]))
    base = copy_archive(pristine[version], tmp_path_factory.mktemp("mut"))
    suffix = data.draw(st.sampled_from(["meta", "index", "0"]))
    target = Path(f"{base}.{suffix}")
    raw = bytearray(target.read_bytes())
    kind = data.draw(st.sampled_from(["flip", "word", "truncate", "append"]))
    if kind == "truncate":
        raw = raw[: data.draw(st.integers(0, len(raw) - 1))]
    elif kind == "append":
        raw += data.draw(st.binary(min_size=1, max_size=40))
    else:
        for _ in range(data.draw(st.integers(1, 4))):
            at = data.draw(st.integers(0, len(raw) - 4))
            if kind == "flip":
                raw[at] ^= 1 << data.draw(st.integers(0, 7))
            else:
                word = data.draw(st.sampled_from([0, 1, 3, 4, 7, 8, 0xFFFFFFFF, 0x7FFFFFFF, 0x80000000]))
                struct.pack_into(">I", raw, at - at % 4, word)
    target.write_bytes(bytes(raw))
    for fmt in ("jsonl", "text"):
        status, out, err = run("dump", "--format", fmt, str(base))
        assert status in (0, 1), err
        if status == 1:
            assert err.startswith("pcpconform dump: ") and "Traceback" not in err
        elif fmt == "jsonl":
            # whatever the dump could read in full, it holds losslessly
            dumped = base.parent / "dump.jsonl"
            dumped.write_text(out)
            assert run("undump", "-q", str(dumped), "-o", str(base.parent / "ud" / "x"))[0] == 0
            for part in ("meta", "index", "0"):
                assert Path(f"{base.parent}/ud/x.{part}").read_bytes() == Path(f"{base}.{part}").read_bytes()
    status, _, err = run("rebuild", "-q", str(base), str(base.parent / "out" / "rb"))
    assert status in (0, 1), err
    # the oracles: a located one-line error (1 corrupt, 2 unusable request), never a traceback
    for argv in (["interp", str(base), "disk.dev.read_bytes", "kernel.uname.release",
                  "--samples", "6", "--interval", "7"],
                 ["interp", str(base), "mem.util.used", "--interval=-13", "--samples", "4",
                  "--emulate", "all"],
                 ["derive", str(base), "-d", "r = rate(disk.dev.read_bytes)",
                  "-d", "s = sum(disk.dev.read_bytes) + hinv.ncpu", "--samples", "5"]):
        status, _, err = run(*argv)
        assert status in (0, 1, 2) and "Traceback" not in err, err
        if status == 2 or (status == 1 and argv[0] == "interp"):
            assert len(err.strip().splitlines()) == 1 and err.startswith(f"pcpconform {argv[0]}: "), err


@pytest.mark.parametrize("part, extra", [("meta", 1), ("meta", 7), ("0", 1), ("0", 3),
                                         ("index", 5), ("index", 19)])
def test_end_of_file_quirks_libpcp_tolerates_are_kept(pristine, tmp_path: Path, part: str,
                                                      extra: int) -> None:
    """Stray bytes after the last record (fewer than 8 in .meta, 4 in a volume) and a
    partial last index entry are a clean end for libpcp: read, dumped and rebuilt."""
    from pcpconform.dump.jsonl import dump_lines, jsonl_records
    from pcpconform.dump.undump import undump
    from pcpconform.io.archive import Archive

    base = copy_archive(pristine[3], tmp_path / "in")
    target = Path(f"{base}.{part}")
    target.write_bytes(target.read_bytes() + bytes(range(200, 200 + extra)))
    objs = list(jsonl_records(Archive(base)))
    trailing = [o for o in objs if o["kind"] == "trailing"]
    assert len(trailing) == 1 and trailing[0]["file"] == part
    assert run("rebuild", "-q", str(base), str(tmp_path / "rb" / "ex"))[0] == 0
    assert Path(f"{tmp_path}/rb/ex.{part}").read_bytes() == target.read_bytes()
    undump(dump_lines(Archive(base)), tmp_path / "ud" / "ex")
    assert Path(f"{tmp_path}/ud/ex.{part}").read_bytes() == target.read_bytes()


def test_four_stray_bytes_in_a_volume_are_a_truncated_record(pristine, tmp_path: Path) -> None:
    base = copy_archive(pristine[3], tmp_path)
    vol = Path(f"{base}.0")
    vol.write_bytes(vol.read_bytes() + b"\0\0\0\x30")
    status, _, err = run("dump", str(base))
    assert status == 1 and "truncated" in err
