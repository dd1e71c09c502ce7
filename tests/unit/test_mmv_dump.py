"""The MMV dump (spec/dump-mmv-jsonl.md): JSON Lines, its inverse, the text form, damaged
files and the ``pcpconform dump`` command on MMV files."""

from __future__ import annotations

import dataclasses
import io
import json
import struct
from pathlib import Path
from typing import Any

import pytest

from pcpconform.cli import main
from pcpconform.dump.mmv import dump_mmv, dump_mmv_bytes, is_mmv
from pcpconform.dump.mmv_undump import undump_mmv
from pcpconform.errors import FormatError, UsageError
from pcpconform.mmv import Indom, Instance, Label, Metric, MmvFile, Value, build_mmv, parse_mmv
from pcpconform.mmv import model as mm

GEN = 0x6B021344_00021C7B


def content(version: int = 1, flags: int = 0, cluster: int = 42) -> MmvFile:
    long = "m" * 70 if version >= 2 else "short"
    metrics = (
        Metric("i32", 1, mm.TYPE_I32, mm.SEM_INSTANT, 0, 0, "a 32-bit", None,
               (Value.of(mm.TYPE_I32, -5),)),
        Metric("u64", 4, mm.TYPE_U64, mm.SEM_COUNTER, 0x10000000, 0, None, None,
               (Value.of(mm.TYPE_U64, 2**64 - 1),)),
        Metric("float", 5, mm.TYPE_FLOAT, mm.SEM_INSTANT, 0, 0, None, None,
               (Value.of(mm.TYPE_FLOAT, 1.5),)),
        Metric("double", 6, mm.TYPE_DOUBLE, mm.SEM_DISCRETE, 0, 0, None, "",
               (Value.of(mm.TYPE_DOUBLE, -2.25),)),
        Metric("string", 7, mm.TYPE_STRING, mm.SEM_INSTANT, 0, 0, "words", None,
               (Value(None, struct.pack("<q", 5), 0, "hello"),)),
        Metric("elapsed", 8, mm.TYPE_ELAPSED, mm.SEM_COUNTER, 0x01001000, 0, None, None,
               (Value.of(mm.TYPE_ELAPSED, 1000, extra=-5000000),)),
        Metric(long, 2000, mm.TYPE_U32, mm.SEM_INSTANT, 0, 0, None, None,
               (Value.of(mm.TYPE_U32, 3),)),
        Metric("per.tool", 10, mm.TYPE_U64, mm.SEM_COUNTER, 0, 61, "per tool", "one per tool",
               (Value.of(mm.TYPE_U64, 7, 1), Value.of(mm.TYPE_U64, 9, 2))),
    )
    indoms = (Indom(61, (Instance(1, "Anvils"), Instance(2, "Rockets")), "tools", "shed"),)
    labels = (Label(mm.LABEL_CLUSTER, cluster, -1, '{"app":"x"}'),
              Label(mm.LABEL_INSTANCES | mm.LABEL_OPTIONAL, 61, 2, '{"ins":1}'),
              ) if version == 3 else ()
    return MmvFile(version, GEN, GEN, flags, 1234, cluster, indoms, metrics, labels)


def dump(data: bytes, name: str = "app", fmt: str = "jsonl") -> tuple[list[dict[str, Any]], str]:
    out = io.StringIO()
    dump_mmv_bytes(data, name, out, fmt)
    text = out.getvalue()
    return ([json.loads(line) for line in text.splitlines()] if fmt == "jsonl" else []), text


@pytest.mark.parametrize("version", [1, 2, 3])
def test_lines_follow_the_file(version: int) -> None:
    data = build_mmv(content(version))
    lines, text = dump(data)
    assert lines[0] == {"kind": "dump", "format": "pcpconform-mmv-jsonl", "format_version": 1}
    assert text.count("\n") == len(lines) and ", " not in text.splitlines()[1]
    header = lines[1]
    assert list(header)[:3] == ["kind", "offset", "file"] and header["g1"] == str(GEN)
    tocs = [x for x in lines if x["kind"] == "toc"]
    assert len(tocs) == header["tocs"] == (6 if version == 3 else 5)
    kinds = [x["kind"] for x in lines[2 + len(tocs):]]
    expected = ["indom", "instance", "metric", "value", "string", "label"]
    assert [k for i, k in enumerate(kinds) if i == 0 or kinds[i - 1] != k] == \
        expected[:6 if version == 3 else 5]
    for x in lines[2:]:
        assert list(x)[:3] == ["kind", "index", "offset"]
    # every entry line's offset is where its TOC says its section starts, plus index x size
    for toc in tocs:
        entries = [x for x in lines if x["kind"] + "s" == toc["section"]]
        assert len(entries) == toc["count"]
        if len(entries) > 1:
            size = entries[1]["offset"] - entries[0]["offset"]
            assert [x["offset"] for x in entries] == [toc["section_offset"] + size * n
                                                     for n in range(len(entries))]
    assert not [x for x in lines if x["kind"] == "problem"]


@pytest.mark.parametrize("flags,prefix", [(0, "mmv.app."), (mm.FLAG_NOPREFIX, "mmv.")])
def test_identity_as_the_pmda_exports_it(flags: int, prefix: str) -> None:
    lines, _ = dump(build_mmv(content(2, flags)))
    metrics = {x["item"]: x for x in lines if x["kind"] == "metric"}
    assert metrics[10]["pcp_name"] == prefix + "per.tool"
    assert metrics[10]["pmid"] == "70.42.10"
    assert metrics[10]["pcp_indom"] == f"70.{(42 << 11) | 61}"
    assert metrics[1]["pcp_indom"] is None and metrics[1]["exported"]
    assert metrics[2000]["pmid"] is None and not metrics[2000]["exported"]  # item > 1023
    values = [x for x in lines if x["kind"] == "value" and x["item"] == 10]
    assert [(v["instance"], v["instance_name"]) for v in values] == [(1, "Anvils"), (2, "Rockets")]
    instances = [x for x in lines if x["kind"] == "instance"]
    assert {x["pcp_indom"] for x in instances} == {metrics[10]["pcp_indom"]}


def test_repeated_item_is_not_exported() -> None:
    model = content(1)
    twin = dataclasses.replace(model.metrics[0], name="twin")
    lines, _ = dump(build_mmv(dataclasses.replace(model, metrics=(*model.metrics, twin))))
    exported = [(x["name"], x["exported"]) for x in lines if x["kind"] == "metric" and x["item"] == 1]
    assert exported == [("i32", True), ("twin", False)]


def test_a_name_the_pmda_refuses_is_not_exported() -> None:
    model = content(1)
    odd = dataclasses.replace(model.metrics[0], name="two words", item=77)
    lines, _ = dump(build_mmv(dataclasses.replace(model, metrics=(*model.metrics, odd))))
    (metric,) = [x for x in lines if x["kind"] == "metric" and x["item"] == 77]
    assert metric["pcp_name"] == "mmv.app.two words" and metric["pmid"] == "70.42.77"
    assert metric["exported"] is False


def test_values_are_typed() -> None:
    lines, _ = dump(build_mmv(content(1)))
    values = {x["name"]: x for x in lines if x["kind"] == "value"}
    assert values["i32"]["value"] == {"type": "32", "value": "-5"}
    assert values["u64"]["value"] == {"type": "u64", "value": "18446744073709551615"}
    assert values["float"]["value"] == {"type": "float", "value": "0x3fc00000"}
    assert values["double"]["value"] == {"type": "double", "value": "0xc002000000000000"}
    assert values["string"]["value"] == {"type": "string", "value": "hello"}
    assert values["string"]["string_offset"] == int(values["string"]["extra"])
    assert values["elapsed"]["value"] == {"type": "elapsed", "value": "1000"}
    assert values["elapsed"]["extra"] == "-5000000"
    assert values["i32"]["atom"] == "fbffffff00000000"


def test_sentinel_marks_no_value() -> None:
    model = content(1, mm.FLAG_SENTINEL)
    metrics = list(model.metrics)
    metrics[1] = dataclasses.replace(metrics[1], values=(Value(None, b"\xff" * 8),))
    lines, _text = dump(build_mmv(dataclasses.replace(model, metrics=tuple(metrics))))
    flagged = [x["name"] for x in lines if x["kind"] == "value" and x.get("sentinel")]
    assert flagged == ["u64"]
    _, listing = dump(build_mmv(dataclasses.replace(model, metrics=tuple(metrics))), fmt="text")
    assert "u64 = (no value: sentinel)" in listing


@pytest.mark.parametrize("version", [1, 2, 3])
def test_undump_gives_back_the_file(version: int) -> None:
    data = build_mmv(content(version))
    _, text = dump(data)
    model = undump_mmv(text.splitlines())
    assert model == parse_mmv(data)
    assert build_mmv(model) == data


def test_undump_refuses_a_damaged_dump() -> None:
    _, text = dump(build_mmv(content(1))[:700])
    with pytest.raises(UsageError, match="error problems"):
        undump_mmv(text.splitlines())


def test_escaped_bytes_and_label_slack() -> None:
    model = dataclasses.replace(content(3), indoms=(Indom(61, (Instance(1, "a\\b\x7f"),
                                                               Instance(2, "é")), None, None),))
    data = bytearray(build_mmv(model))
    labels_at = next(x for x in dump(bytes(data))[0] if x["kind"] == "label")["offset"]
    data[labels_at + 12 + 20] = 0x7F          # a byte after the payload's NUL
    lines, _ = dump(bytes(data))
    names = [x["name"] for x in lines if x["kind"] == "instance"]
    assert names == ["a\\x5cb\\x7f", "\\xc3\\xa9"]
    label = next(x for x in lines if x["kind"] == "label")
    assert label["payload"] == '{"app":"x"}' and label["payload_padding"].count("\\x7f") == 1
    assert [x for x in lines if x["kind"] == "label"][1]["optional"] is True


@pytest.mark.parametrize("version", [1, 2, 3])
def test_text_reads_like_mmvdump(version: int) -> None:
    data = build_mmv(content(version))
    _, text = dump(data, fmt="text")
    assert text.startswith(f"MMV file   = app\nVersion    = {version}\nGenerated  = {GEN}\n")
    assert "Flags      = 0x0 (none)\n" in text
    assert "metrics offset" in text and "TOC[2]: toc offset 72," in text
    assert '  [10/' in text and 'per.tool[1 or "Anvils"] = 7\n' in text
    assert "float = 1.500000\n" in text and "double = -2.250000\n" in text
    assert 'string = "hello"\n' in text
    assert "elapsed = 1000 (value=1000/extra=-5000000)\n" in text   # as stored, no clock
    assert "       units=byte\n" in text and "       units=microsec\n" in text
    lines, _ = dump(data)
    second = [x for x in lines if x["kind"] == "instance"][1]
    assert f'  [61/{second["offset"]}] instance = [2 or "Rockets"]' in text
    assert second["offset"] - next(x for x in lines if x["kind"] == "instance")["offset"] == \
        (80 if version == 1 else 24)


def test_text_prints_floats_as_printf_does() -> None:
    model = content(1)
    metrics = list(model.metrics)
    metrics[2] = dataclasses.replace(metrics[2], values=(Value(None, struct.pack("<f", -float("nan")) + bytes(4)),))
    metrics[3] = dataclasses.replace(metrics[3], values=(Value.of(mm.TYPE_DOUBLE, float("nan")),))
    _, text = dump(build_mmv(dataclasses.replace(model, metrics=tuple(metrics))), fmt="text")
    assert "float = -nan\n" in text and "double = nan\n" in text


def test_rewriting_is_reported_and_the_rest_dumped() -> None:
    data = bytearray(build_mmv(content(1)))
    data[16:24] = bytes(8)
    lines, _ = dump(bytes(data))
    problems = [x for x in lines if x["kind"] == "problem"]
    assert [(p["code"], p["field"], p["clause"]) for p in problems] == \
        [("mmv.rewriting", "header.g2", "MMV-HDR-2")]
    assert lines[2] == problems[0]       # right after the header line
    assert len([x for x in lines if x["kind"] == "value"]) == 9
    _, text = dump(bytes(data), fmt="text")
    assert f"Generated2 = 0\nMismatched generation numbers ({GEN}/0)\n" in text


@pytest.mark.parametrize("cut", [0, 10, 39, 40, 60, 130, 700, 1500, 3000])
@pytest.mark.parametrize("version", [1, 2, 3])
def test_truncated_files_dump_what_can_be_read(version: int, cut: int) -> None:
    data = build_mmv(content(version))[:cut]
    for fmt in ("jsonl", "text"):
        out = io.StringIO()
        problems = dump_mmv_bytes(data, "app", out, fmt)
        assert problems, cut
        for p in problems:
            assert p["code"] in ("mmv.format", "mmv.rewriting") and p["field"]
            assert p["severity"] in ("error", "warning") and p["clause"].startswith("MMV-")


def test_bad_back_pointers_and_offsets() -> None:
    model = content(2)
    data = bytearray(build_mmv(model))
    lines, _ = dump(bytes(data))
    value = next(x for x in lines if x["kind"] == "value")
    metric = next(x for x in lines if x["kind"] == "metric")
    data[value["offset"] + 16:value["offset"] + 24] = struct.pack("<Q", 2**40)
    data[metric["offset"]:metric["offset"] + 8] = struct.pack("<Q", 2**64 - 1)
    lines, _text = dump(bytes(data))
    fields = [x["field"] for x in lines if x["kind"] == "problem"]
    assert fields == ["metrics[0].name", "values[0].metric"]
    assert next(x for x in lines if x["kind"] == "metric")["name"] is None
    assert "Bad values[0].metric at offset" in dump(bytes(data), fmt="text")[1]


def test_dump_mmv_raises_after_writing(tmp_path: Path) -> None:
    path = tmp_path / "app"
    path.write_bytes(build_mmv(content(1))[:700])
    out = io.StringIO()
    with pytest.raises(FormatError) as info:
        dump_mmv(path, out)
    assert info.value.location.file == str(path) and info.value.location.field
    assert out.getvalue().count("\n") > 10
    with pytest.raises(UsageError):
        dump_mmv(path, io.StringIO(), "xml")


def test_a_warning_alone_is_no_bad_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = content(1)
    metrics = list(model.metrics)
    metrics[5] = dataclasses.replace(metrics[5], values=(Value.of(mm.TYPE_ELAPSED, 1, extra=7),))
    path = tmp_path / "app"
    path.write_bytes(build_mmv(dataclasses.replace(model, metrics=tuple(metrics))))
    assert main(["dump", str(path), "--format", "jsonl"]) == 0
    problems = [json.loads(x) for x in capsys.readouterr().out.splitlines() if "problem" in x]
    assert [(p["field"], p["severity"]) for p in problems] == [("values[5].extra", "warning")]


def test_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = tmp_path / "good"
    good.write_bytes(build_mmv(content(3)))
    assert is_mmv(good) and not is_mmv(tmp_path / "missing")
    assert main(["dump", str(good), "--format", "jsonl"]) == 0
    out, err = capsys.readouterr()
    assert err == "" and json.loads(out.splitlines()[1])["file"] == "good"
    assert main(["dump", str(good)]) == 0
    assert capsys.readouterr().out.startswith("MMV file   = good\n")
    bad = tmp_path / "bad"
    bad.write_bytes(build_mmv(content(1))[:700])
    assert main(["dump", str(bad), "-o", str(tmp_path / "out.jsonl"), "--format", "jsonl"]) == 1
    out, err = capsys.readouterr()
    assert len(err.splitlines()) == 1 and "bad" in err and "Traceback" not in err
    assert (tmp_path / "out.jsonl").read_text().count('"kind":"problem"') > 1
    assert main(["dump", str(tmp_path / "missing")]) == 2
    out, err = capsys.readouterr()
    assert len(err.splitlines()) == 1
