"""The checker survives anything: mutated, truncated or hostile archives give a Report."""

from __future__ import annotations

import lzma
import struct
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pcpconform.check.engine import check_archive
from pcpconform.fixtures.fixture import load_fixture
from pcpconform.fixtures.generate import generate_archive

ROOT = Path(__file__).resolve().parents[2]
#: generated valid archives by "<fixture>-v<version>"
Pristine = dict[str, Path]


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Pristine:
    out = {}
    for name in ("example", "events"):
        for version in (2, 3):
            base = tmp_path_factory.mktemp(f"{name}{version}") / "a"
            generate_archive(load_fixture(ROOT / "corpus" / "fixtures" / f"{name}.yaml"), base,
                             version=version)
            out[f"{name}-v{version}"] = base
    return out


def test_generated_archives_check_clean(pristine: Pristine) -> None:
    for name, base in pristine.items():
        report = check_archive(base)
        assert report.diagnostics == [], (name, report.diagnostics)


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_mutations_never_escape(pristine: Pristine, tmp_path_factory: pytest.TempPathFactory,
                                data: st.DataObject) -> None:
    src = pristine[data.draw(st.sampled_from(sorted(pristine)))]
    dest = tmp_path_factory.mktemp("m")
    for p in src.parent.glob("a.*"):
        (dest / p.name).write_bytes(p.read_bytes())
    part = data.draw(st.sampled_from(["meta", "index", "0"]))
    target = dest / f"a.{part}"
    raw = bytearray(target.read_bytes())
    for _ in range(data.draw(st.integers(1, 3))):
        at = data.draw(st.integers(0, len(raw) - 4))
        how = data.draw(st.sampled_from(["flip", "word", "cut"]))
        if how == "flip":
            raw[at] ^= 1 << data.draw(st.integers(0, 7))
        elif how == "word":
            struct.pack_into(">I", raw, at - at % 4, data.draw(st.sampled_from(
                [0, 1, 4, 8, 0xFFFFFFFF, 0x7FFFFFFF, 0x80000000, 12345])))
        else:
            raw = raw[:at]
            break
    target.write_bytes(bytes(raw))
    report = check_archive(dest / "a")
    assert all(d.code and d.message for d in report.diagnostics)
    assert "check.internal" not in report.codes(), report.diagnostics


def test_compression_bomb_is_refused(tmp_path: Path, pristine: Pristine) -> None:
    src = pristine["example-v3"]
    for p in src.parent.glob("a.*"):
        (tmp_path / p.name).write_bytes(p.read_bytes())
    vol = tmp_path / "a.0"
    # one well-framed record of 16 MiB of zeros: 16x the limit, a few KiB compressed
    big = 16 << 20
    record = struct.pack(">I", big) + b"\0" * (big - 8) + struct.pack(">I", big)
    (tmp_path / "a.0.xz").write_bytes(lzma.compress(vol.read_bytes()[:808] + record))
    vol.unlink()
    report = check_archive(tmp_path / "a", decompress_limit=1 << 20)
    assert "file.decompress-limit" in report.codes()


def test_max_diagnostics_stops_early(tmp_path: Path, pristine: Pristine) -> None:
    src = pristine["example-v2"]
    for p in src.parent.glob("a.*"):
        (tmp_path / p.name).write_bytes(p.read_bytes())
    (tmp_path / "a.index").unlink()
    (tmp_path / "a.7").write_bytes(b"junk")
    report = check_archive(tmp_path / "a", max_diagnostics=1)
    assert len(report.diagnostics) == 1 and report.truncated


def test_counter_stored_as_another_type_is_reported_not_a_crash(tmp_path: Path, pristine: Pristine) -> None:
    """A counter's value in a block of another type (here STRING) cannot be compared with the
    previous value: it is value.vtype, and the check goes on (it used to stop with
    check.internal on comparing bytes with an int)."""
    from pcpconform.corpusgen.invalid import ArchiveEdit
    from pcpconform.corpusgen.invalid.edit import Block
    from pcpconform.format.pmtypes import PmType

    ed = ArchiveEdit(pristine["example-v3"])
    res = ed.result(3)
    vs = ed.vset(res, "60.0.4")       # disk.dev.read_bytes, a U64 counter
    vs.values = [(inst, Block(PmType.STRING, b.vbuf)) for inst, b in vs.values]
    ed.put_result(3, res)
    ed.save(tmp_path / "a")
    report = check_archive(tmp_path / "a")
    assert "check.internal" not in report.codes(), report.diagnostics
    assert "value.vtype" in report.codes()
