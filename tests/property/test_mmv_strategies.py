"""Properties over the MMV strategies: the reader inverts the writer, the JSON Lines dump
inverts through undump_mmv, and neither dump form raises on any bytes, damaged included."""

from __future__ import annotations

import io
import json
import struct

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pcpconform.dump.jsonl import escape_bytes
from pcpconform.dump.mmv import dump_mmv_bytes
from pcpconform.dump.mmv_undump import undump_mmv
from pcpconform.extra.mmv_strategies import mmv_contents, mmv_files
from pcpconform.mmv import MmvFile, build_mmv, parse_mmv
from pcpconform.mmv.model import MMV_TYPES, encode_text, exported_metrics
from pcpconform.mmv.writer import select_version

SETTINGS = settings(max_examples=40, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def dumped(data: bytes, fmt: str = "jsonl") -> tuple[str, list[dict[str, object]]]:
    out = io.StringIO()
    problems = dump_mmv_bytes(data, "drawn", out, fmt)
    return out.getvalue(), problems


@pytest.mark.parametrize("version", [None, 1, 2, 3])
def test_parse_inverts_write(version: int | None) -> None:
    @SETTINGS
    @given(mmv_contents(version, raw_atoms=version == 2))
    def check(content: MmvFile) -> None:
        if version is None:
            assert content.version == select_version(content)
        else:
            assert content.version == version
        data = build_mmv(content)
        assert parse_mmv(data, "drawn") == content
        assert build_mmv(parse_mmv(data)) == data

    check()


@pytest.mark.parametrize("version", [1, 2, 3])
def test_jsonl_dump_inverts_through_undump(version: int) -> None:
    @SETTINGS
    @given(mmv_contents(version, raw_atoms=version == 1))
    def check(content: MmvFile) -> None:
        data = build_mmv(content)
        text, problems = dumped(data)
        assert [p["severity"] for p in problems] in ([], ["warning"] * len(problems))
        assert undump_mmv(text.splitlines()) == content
        assert build_mmv(undump_mmv(text.splitlines())) == data

    check()


def test_exportable_content_is_exported() -> None:
    @SETTINGS
    @given(mmv_contents(exportable=True))
    def check(content: MmvFile) -> None:
        text, problems = dumped(build_mmv(content))
        metrics = [json.loads(line) for line in text.splitlines() if '"kind":"metric"' in line]
        assert problems == [] and len(metrics) == len(content.metrics)
        assert all(m["exported"] and m["pmid"] for m in metrics)

    check()


def test_dump_identity_is_the_models() -> None:
    """The dump's names, PMIDs and InDoms are exported_metrics' (which the PMDA test pins)."""
    @SETTINGS
    @given(mmv_contents())
    def check(content: MmvFile) -> None:
        text, _ = dumped(build_mmv(content))
        lines = [json.loads(line) for line in text.splitlines()[1:]]
        exported = [m for m in lines if m["kind"] == "metric" and m["exported"]]
        want = [e for e in exported_metrics(content, "drawn") if e.metric.type in MMV_TYPES]
        assert [(m["pcp_name"], m["pmid"], m["pcp_indom"]) for m in exported] == [
            (escape_bytes(encode_text(e.name)), str(e.pmid),
             None if e.indom.is_null else str(e.indom)) for e in want]

    check()


@pytest.mark.parametrize("fmt", ["jsonl", "text"])
def test_dumps_never_raise_on_damaged_files(fmt: str) -> None:
    @SETTINGS
    @given(mmv_files(), st.data())
    def check(data: bytes, draw: st.DataObject) -> None:
        raw = bytearray(data)
        if draw.draw(st.booleans()):
            raw = raw[:draw.draw(st.integers(0, len(raw)))]
        else:
            for _ in range(draw.draw(st.integers(1, 6))):
                at = draw.draw(st.integers(0, len(raw) - 1))
                raw[at] = draw.draw(st.integers(0, 255))
        text, problems = dumped(bytes(raw), fmt)
        for p in problems:
            assert p["field"] and isinstance(p["offset"], int) and p["clause"]
        if fmt == "jsonl":
            for line in text.splitlines():
                json.loads(line)

    check()


def test_dumps_of_any_bytes_after_a_good_magic_and_version() -> None:
    @SETTINGS
    @given(st.tuples(st.integers(1, 3), st.binary(max_size=600)).map(
        lambda t: b"MMV\0" + struct.pack("<i", t[0]) + t[1]))
    def check(data: bytes) -> None:
        dumped(data, "text")
        dumped(data, "jsonl")

    check()
