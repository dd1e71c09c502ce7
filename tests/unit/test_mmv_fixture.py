"""MMV fixtures (spec/fixtures.md, part 3, GEN-MMV-*) and ``pcpconform generate`` on them."""

from __future__ import annotations

import json
import struct
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml

from pcpconform.cli import main
from pcpconform.errors import FixtureError
from pcpconform.fixtures import bundled_fixture
from pcpconform.fixtures.mmv import (
    DEFAULT_GENERATION,
    generate_mmv,
    is_mmv_fixture,
    load_mmv_fixture,
    parse_mmv_fixture,
)
from pcpconform.mmv import build_mmv, read_mmv
from pcpconform.mmv import model as mm


def doc(**body: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"metrics": [{"name": "hits", "item": 1, "type": "u64", "value": 3}]}
    base.update(body)
    return {"mmv": base}


def test_bundled_example_generates_and_reads_back(tmp_path: Path) -> None:
    path = bundled_fixture("mmv-example")
    content = load_mmv_fixture(path)
    assert content.version == 3 and content.cluster == 321 and content.flags == mm.FLAG_PROCESS
    out = tmp_path / "shop"
    assert main(["generate", str(path), "-o", str(out), "-q"]) == 0
    assert read_mmv(out) == content
    assert out.read_bytes() == build_mmv(content)
    metrics = {m.name: m for m in content.metrics}
    assert [v.typed(mm.TYPE_U64) for v in metrics["requests.total"].values] == [1200, 85, 40211]
    assert [v.instance for v in metrics["requests.total"].values] == [0, 1, 2]
    assert metrics["version"].values[0].string == "2.4.1"
    assert metrics["version"].values[0].atom == struct.pack("<q", 5)
    assert metrics["gc.time"].values[0].typed(mm.TYPE_ELAPSED) == 125000
    assert metrics["requests.bytes"].units.scaleSpace == 1     # Kbyte
    # 2026-11-21T08:00:00Z as libpcp_mmv encodes a time
    assert content.g1 == content.g2 == 1795248000 << 32
    assert [(lb.flags, lb.identity, lb.internal, lb.payload) for lb in content.labels] == [
        (mm.LABEL_CLUSTER, 321, -1, '{"application":"shop"}'),
        (mm.LABEL_INDOM, 1, -1, '{"tier":"frontend"}'),
        (mm.LABEL_ITEM | mm.LABEL_OPTIONAL, 1, -1, '{"unit":"requests"}'),
        (mm.LABEL_INSTANCES, 1, 1, '{"auth":true}')]


def test_version_as_libpcp_mmv_chooses() -> None:
    assert parse_mmv_fixture(doc()).version == 1
    long = doc(metrics=[{"name": "x" * 64, "item": 1, "type": "32"}])
    assert parse_mmv_fixture(long).version == 2
    assert parse_mmv_fixture({**doc(), "kind": "mmv"}).version == 1
    labelled = doc(labels=[{"type": "cluster", "name": "a", "value": 1}])
    assert parse_mmv_fixture(labelled).version == 3
    assert parse_mmv_fixture(doc(version=3)).version == 3
    with pytest.raises(FixtureError, match="needs version 2"):
        parse_mmv_fixture({"mmv": {**long["mmv"], "version": 1}})


def test_defaults() -> None:
    content = parse_mmv_fixture(doc())
    assert (content.g1, content.g2, content.process, content.flags, content.cluster) == \
        (DEFAULT_GENERATION, DEFAULT_GENERATION, 1, 0, 0)
    (metric,) = content.metrics
    assert metric.semantics == mm.SEM_COUNTER and metric.dimension == 0 and metric.indom == 0
    assert metric.shorttext is None and metric.helptext is None
    unset = parse_mmv_fixture(doc(metrics=[{"name": "s", "item": 1, "type": "string"},
                                           {"name": "n", "item": 2, "type": "double"}]))
    assert unset.metrics[0].values[0].string == "" and unset.metrics[1].values[0].atom == bytes(8)


def test_values_by_type() -> None:
    content = parse_mmv_fixture(doc(flags=["noprefix", "Sentinel"], metrics=[
        {"name": "a", "item": 1, "type": "32", "value": "-0x10"},
        {"name": "b", "item": 2, "type": "float", "value": "0x3fc00000"},
        {"name": "c", "item": 3, "type": "double", "value": "nan"},
        {"name": "d", "item": 4, "type": "elapsed", "value": {"value": 5, "extra": -9}},
        {"name": "e", "item": 5, "type": "nosupport"},
    ]))
    assert content.flags == mm.FLAG_NOPREFIX | mm.FLAG_SENTINEL
    a, b, c, d, e = content.metrics
    assert a.values[0].typed(mm.TYPE_I32) == -16
    assert b.values[0].typed(mm.TYPE_FLOAT) == 1.5
    assert c.values[0].atom == struct.pack("<d", float("nan"))
    assert (d.values[0].typed(mm.TYPE_ELAPSED), d.values[0].extra) == (5, -9)
    assert e.values[0].atom == bytes(8)


@pytest.mark.parametrize("body,message", [
    ({"metrics": [{"name": "h", "item": 1, "type": "u64", "semantic": "counter"}]},
     "unknown key 'semantic'; did you mean 'semantics'"),
    ({"metric": []}, "did you mean 'metrics'"),
    ({"metrics": [{"name": "h", "item": 1, "type": "u16"}]}, "unknown MMV type 'u16'"),
    ({"metrics": [{"name": "h", "item": 1, "type": "u32", "value": -1}]}, "outside 0..4294967295"),
    ({"metrics": [{"name": "h", "item": 1, "type": "u32", "indom": 5}]}, "no indom with serial 5"),
    ({"indoms": [{"serial": 5, "instances": {"a": 1}}],
      "metrics": [{"name": "h", "item": 1, "type": "u32", "indom": 5, "values": {"b": 1}}]},
     "unknown key 'b'"),
    ({"indoms": [{"serial": 5}, {"serial": 5}]}, "declared twice"),
    ({"indoms": [{"serial": 0}]}, "outside 1.."),
    ({"cluster": 4096}, "outside 0..4095"),
    ({"flags": ["noprefx"]}, "did you mean 'noprefix'"),
    ({"labels": [{"type": "item", "item": 9, "name": "a", "value": 1}]}, "no metric has item 9"),
    ({"labels": [{"type": "cluster", "name": "9a", "value": 1}]}, "is not a label name"),
    ({"labels": [{"type": "cluster", "name": "a", "value": "x" * 240}]}, "244 bytes"),
    ({"metrics": [{"name": "h", "item": 1, "type": "string", "value": "v" * 256}]}, "256 bytes"),
])
def test_invalid_fixtures_name_the_entry(body: dict[str, Any], message: str) -> None:
    with pytest.raises(FixtureError, match=message) as info:
        parse_mmv_fixture({"mmv": body}, "f.yaml")
    assert str(info.value).startswith("f.yaml: mmv")


def test_unknown_top_level_key() -> None:
    with pytest.raises(FixtureError, match="did you mean 'kind'"):
        parse_mmv_fixture({"mmv": {}, "knd": "mmv"}, "f.yaml")
    assert not is_mmv_fixture({"metrics": []}) and is_mmv_fixture({"kind": "mmv"})


def test_generate_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fixture = tmp_path / "app.yaml"
    fixture.write_text(yaml.safe_dump(doc()))
    out = tmp_path / "app"
    assert main(["generate", str(fixture), "-o", str(out)]) == 0
    assert capsys.readouterr().out.startswith(f"{out}: MMV version 1, 1 metrics")
    assert read_mmv(out).metrics[0].values[0].typed(mm.TYPE_U64) == 3
    assert main(["generate", str(fixture), "-o", str(out), "--mmv-version", "2", "-q"]) == 0
    assert read_mmv(out).version == 2
    # a missing directory: exit 2 with one line, unless --mkdir
    deep = tmp_path / "no" / "such" / "app"
    assert main(["generate", str(fixture), "-o", str(deep)]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "--mkdir" in err and not deep.parent.exists()
    assert main(["generate", str(fixture), "-o", str(deep), "--mkdir", "-q"]) == 0
    assert read_mmv(deep).version == 1
    bad = tmp_path / "bad.yaml"
    bad.write_text(json.dumps({"mmv": {"metrics": [{"name": "h"}]}}))
    assert main(["generate", str(bad), "-o", str(tmp_path / "x")]) == 2
    assert "missing 'item'" in capsys.readouterr().err and not (tmp_path / "x").exists()


def test_archive_generate_keeps_its_meaning(tmp_path: Path) -> None:
    base = tmp_path / "arch" / "example"
    assert main(["generate", str(bundled_fixture("example")), "-o", str(base), "-q"]) == 2
    assert main(["generate", str(bundled_fixture("example")), "-o", str(base), "-q",
                 "--mkdir"]) == 0
    assert (tmp_path / "arch" / "example.meta").exists()


def test_generate_mmv_refuses_what_cannot_be_laid_out(tmp_path: Path) -> None:
    content = parse_mmv_fixture(doc())
    with pytest.raises(FixtureError):
        generate_mmv(replace(content, version=4), tmp_path / "x")


def test_serials_above_int32_are_stored_as_the_field_holds_them(tmp_path: Path) -> None:
    content = parse_mmv_fixture(doc(indoms=[{"serial": 3000000000, "instances": {"a": 1}}],
                                    metrics=[{"name": "m", "item": 1, "type": "32",
                                              "indom": 3000000000, "values": {"a": 4}}]))
    assert content.metrics[0].indom == 3000000000 - 2**32
    assert read_mmv(Path(generate_mmv(content, tmp_path / "big").split(":")[0])) == content
