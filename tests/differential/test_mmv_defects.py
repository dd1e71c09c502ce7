"""MMV PMDA defects, reproduced on every referee from files the kit builds.

Each file is laid out by the kit's writer, then one field is edited at a precise offset:

* **unchecked v2 instance name** (MMV-IMPL-INSTANCE-CRASH): the
  first instance's ``external`` string offset set to 2**40. The PMDA follows it without a
  bounds check when it answers an instance request;
* **string read past the end** (MMV-IMPL-STRING-OOB): a STRING value's ``extra``
  set to 8 bytes before the end of the file, whose last 8 bytes are "AAAAAAAA". The PMDA
  checks ``offset + sizeof(MMV_STRINGMAX)`` (4, the size of an int constant) instead of
  ``offset + 256`` against the size, then copies 256 bytes. When the file ends mid-page
  the bytes past its end are the page's zero fill; when it ends on a page boundary they
  come from whatever is mapped next.

What each referee does was measured and is kept below as data (EXPECTED); the kit's reader
rejects both files, naming the edited field, and so does the validator.

A third, in a well-formed file (MMV-IMPL-INDOM-HELP): PCP 7 serves indom help
text, but under the InDom 70.<raw serial> instead of the one it exports (INDOM_HELP).
"""

from __future__ import annotations

import dataclasses
import importlib
import struct
from pathlib import Path
from typing import Any

import pytest

from pcpconform.errors import FormatError
from pcpconform.mmv import Indom, Instance, Metric, MmvFile, Value, build_mmv, parse_mmv
from pcpconform.mmv import model as mm
from pcpconform.mmv.schema import HEADER_SIZE, TOC_INSTANCES, TOC_SIZE, TOC_VALUES, VALUE_SIZE
from tests.differential.libpcp.mmv_pmda import Observation, observe
from tests.differential.libpcp.referees import Referee

pytestmark = [pytest.mark.libpcp]

CLUSTER = 9
SERIAL = 5
PAGE = 4096
TAIL = b"AAAAAAAA"

#: measured on each referee (dbpmda with pmda_mmv.so, and mmvdump); the same in all three
EXPECTED: dict[str, dict[str, Any]] = {
    name: {
        # instance request on the file with the 2**40 name offset: the PMDA crashes;
        # descriptors and fetches answered before it are right
        "instance_crash": "SIGSEGV",
        "instance_mmvdump": (1, "Bad file size: too small for toc[1] inst[0] name"),
        # string slot 8 bytes before a mid-page end: the 8 bytes, then the zero fill
        "oob_mid_page": '"AAAAAAAA"',
        # ... before a page-aligned end: bytes from beyond the file (measured: the start
        # of an ELF header, the next mapping), no crash
        "oob_page_end": "past-eof",
        # mmvdump names the bad offset, prints "?" for the value, and still exits 0
        "oob_mmvdump": (0, "Bad file size: toc[3] str value[2] extra", "?"),
    }
    for name in ("pcp-6.0.3", "pcp-6.3", "pcp-7")
}


def content() -> MmvFile:
    """v2: a long instance name, a metric over the indom, a singular STRING last."""
    return MmvFile(2, 7, 7, 0, 0, CLUSTER,
                   (Indom(SERIAL, (Instance(1, "i" * 70), Instance(2, "two"))),),
                   (Metric("m", 1, mm.TYPE_U64, mm.SEM_COUNTER, 0, SERIAL, None, None,
                           (Value.of(mm.TYPE_U64, 3, 1), Value.of(mm.TYPE_U64, 4, 2))),
                    Metric("s", 2, mm.TYPE_STRING, mm.SEM_INSTANT, 0, 0, None, None,
                           (Value(None, struct.pack("<q", 5), 0, "hello"),))))


def section(data: bytes | bytearray, kind: int) -> int:
    """The offset of a section, from the file's TOC."""
    (tocs,) = struct.unpack_from("<i", data, 24)
    for t in range(tocs):
        k, _count, offset = struct.unpack_from("<iiQ", data, HEADER_SIZE + TOC_SIZE * t)
        if k == kind:
            return int(offset)
    raise KeyError(kind)


def instance_name_file() -> tuple[bytes, int]:
    """The file, and the offset of the edited field (instances[0].external)."""
    data = bytearray(build_mmv(content()))
    at = section(data, TOC_INSTANCES) + 16
    struct.pack_into("<Q", data, at, 2**40)
    return bytes(data), at


def string_oob_file(page_end: bool) -> tuple[bytes, int]:
    """The file (padded to a page boundary when page_end), and the edited field's offset
    (values[2].extra: the STRING's value)."""
    data = bytearray(build_mmv(content()))
    if page_end:
        data += bytes(-len(data) % PAGE)
    data[-len(TAIL):] = TAIL
    at = section(data, TOC_VALUES) + VALUE_SIZE * 2 + 8
    struct.pack_into("<q", data, at, len(data) - len(TAIL))
    return bytes(data), at


def pmid(item: int) -> str:
    return f"{mm.MMV_DOMAIN}.{CLUSTER}.{item}"


INDOM = str(mm.exported_indom(CLUSTER, SERIAL))


def run(referee: Referee, name: str, data: bytes, *, instance: bool) -> Observation:
    return observe(referee, {name: data}, descs=[f"mmv.{name}.m", f"mmv.{name}.s"],
                   fetch=[pmid(1), pmid(2)], indoms=[INDOM] if instance else ())


# -- the kit -------------------------------------------------------------------------------
def assert_kit_rejects(data: bytes, at: int, field: str, tmp_path: Path) -> None:
    """The reader stops at the edited field (its location's offset is the one the field
    holds, not the field's own); the validator reports an error at the field."""
    with pytest.raises(FormatError) as info:
        parse_mmv(data, "bad")
    assert info.value.location.field == field, info.value
    validator_rejects(data, at, field, tmp_path)


def validator_rejects(data: bytes, at: int, field: str, tmp_path: Path) -> None:
    """check_mmv_file (pcpconform.check.mmv) reports an error at the edited field.

    VALIDATOR HOOK: where that package is absent this asserts nothing."""
    try:
        check_mmv_file = importlib.import_module("pcpconform.check.mmv").check_mmv_file
    except (ImportError, AttributeError):
        return
    path = tmp_path / "bad"
    path.write_bytes(data)
    report = check_mmv_file(path)
    assert any(d.severity == "error" and d.offset == at and d.field == field
               for d in report.diagnostics), [(d.code, d.offset, d.field) for d in report.diagnostics]


def test_the_unedited_file_is_good(referee: Referee) -> None:
    data = build_mmv(content())
    assert parse_mmv(data) == content()
    obs = run(referee, "good", data, instance=True)
    assert obs.pmda.run.status == 0
    assert obs.pmda.instances[INDOM] == [(1, "i" * 70), (2, "two")]
    assert obs.pmda.values == {pmid(1): [(1, "3"), (2, "4")], pmid(2): [(None, '"hello"')]}
    assert obs.dumps["good"].run.status == 0


# -- the unchecked instance name offset -----------------------------------------------------
def test_instance_name_offset_crashes_the_pmda(referee: Referee, tmp_path: Path) -> None:
    data, at = instance_name_file()
    assert_kit_rejects(data, at, "indoms[0].instances[0].external", tmp_path)
    expected = EXPECTED[referee.name]

    # without an instance request the PMDA serves the file
    quiet = run(referee, "bad", data, instance=False)
    assert quiet.pmda.run.status == 0, quiet.pmda.run.output
    assert quiet.pmda.values == {pmid(1): [(1, "3"), (2, "4")], pmid(2): [(None, '"hello"')]}

    crashed = run(referee, "bad", data, instance=True)
    assert crashed.pmda.run.signal == expected["instance_crash"], crashed.pmda.run
    assert crashed.pmda.answered[-1] == f"instance {INDOM}"   # the request it died on
    status, message = expected["instance_mmvdump"]
    dump = crashed.dumps["bad"]
    assert dump.run.status == status and message in dump.run.output, dump.run.output


# -- the string slot that runs past the end -------------------------------------------------
@pytest.mark.parametrize("page_end", [False, True], ids=["mid-page", "page-end"])
def test_string_slot_past_the_end_is_read(referee: Referee, tmp_path: Path,
                                          page_end: bool) -> None:
    data, at = string_oob_file(page_end)
    assert (len(data) % PAGE == 0) == page_end
    assert_kit_rejects(data, at, "values[2].extra", tmp_path)
    expected = EXPECTED[referee.name]

    obs = run(referee, "oob", data, instance=False)
    assert obs.pmda.run.status == 0, obs.pmda.run
    assert obs.pmda.values[pmid(1)] == [(1, "3"), (2, "4")]
    got = obs.pmda.values[pmid(2)]
    assert isinstance(got, list) and len(got) == 1 and got[0][0] is None, got
    printed = got[0][1]
    if not page_end:
        assert printed == expected["oob_mid_page"]
    elif expected["oob_page_end"] == "past-eof":
        # the 8 bytes of the file, which hold no NUL: the string the PMDA serves ends past
        # the end of the file, on whatever is mapped next (measured: an ELF header, or a
        # NUL at once; which one depends on the process's mappings, so only the read past
        # the end is asserted, never what it found there)
        assert printed.startswith('"' + TAIL.decode()), printed
    else:
        assert printed == expected["oob_page_end"]
    status, message, shown = expected["oob_mmvdump"]
    dump = obs.dumps["oob"]
    assert dump.run.status == status and message in dump.run.output, dump.run.output
    assert [v.text for v in dump.values if v.item == 2] == [shown]


# -- the kit's reader on value entries out of libpcp_mmv's order -----------------------------
def test_reader_takes_value_entries_in_any_order() -> None:
    """The PMDA reaches values through their back-pointers, not their order: the reader's
    grouping must not depend on libpcp_mmv's metric-by-metric layout."""
    data = bytearray(build_mmv(content()))
    values = section(data, TOC_VALUES)
    first, last = (bytes(data[values + VALUE_SIZE * n:values + VALUE_SIZE * (n + 1)])
                   for n in (0, 2))
    data[values:values + VALUE_SIZE] = last           # the STRING's value first
    data[values + 2 * VALUE_SIZE:values + 3 * VALUE_SIZE] = first
    m, text = content().metrics
    reordered = (dataclasses.replace(m, values=m.values[::-1]), text)  # values in file order
    assert parse_mmv(bytes(data)) == dataclasses.replace(content(), metrics=reordered)
    # and a broken back-pointer is still named by its entry
    struct.pack_into("<Q", data, values + VALUE_SIZE + 24, 12345)
    with pytest.raises(FormatError) as info:
        parse_mmv(bytes(data))
    assert info.value.location.field == "values[1].instance"
    assert info.value.location.offset == values + VALUE_SIZE + 24


# -- indom help text -------------------------------------------------------------------------
#: measured: (one-line, help) for "text indom" of the InDom the PMDA exports, and of
#: 70.<the file's raw serial>; None where dbpmda printed an error
INDOM_HELP: dict[str, dict[str, tuple[str | None, str | None]]] = {
    "pcp-6.0.3": {"exported": (None, None), "raw serial": (None, None)},   # no indom help
    "pcp-6.3": {"exported": (None, None), "raw serial": (None, None)},
    # 7.x serves indom help, but looks the indom up by comparing the file's raw serial
    # with the requested InDom's serial, (cluster << 11) | serial
    "pcp-7": {"exported": (None, None), "raw serial": ("indom short", "indom long")},
}


def test_indom_help_is_looked_up_by_the_raw_serial(referee: Referee) -> None:
    base = content()
    helped = dataclasses.replace(base, indoms=(dataclasses.replace(
        base.indoms[0], shorttext="indom short", helptext="indom long"),))
    exported, raw = INDOM, f"{mm.MMV_DOMAIN}.{SERIAL}"
    assert exported != raw
    obs = observe(referee, {"help": build_mmv(helped)}, traverse=False,
                  texts=[f"indom {exported}", f"indom {raw}", "mmv.help.m"])
    assert obs.pmda.run.status == 0, obs.pmda.run
    expected = INDOM_HELP[referee.name]
    assert obs.pmda.texts[f"indom {exported}"] == expected["exported"]
    assert obs.pmda.texts[f"indom {raw}"] == expected["raw serial"]
    assert obs.pmda.texts["mmv.help.m"] == (None, None)   # the metric has no help


def test_indom_help_under_its_own_indom_when_the_cluster_bits_are_set(referee: Referee) -> None:
    """Cluster 1, serial 2053 (bit 11 set): the exported InDom's serial is the raw one."""
    base = content()
    serial = (1 << 11) | SERIAL
    indom = Indom(serial, base.indoms[0].instances, "indom short", "indom long")
    metric = dataclasses.replace(base.metrics[0], indom=serial)
    mmv = dataclasses.replace(base, cluster=1, indoms=(indom,), metrics=(metric, base.metrics[1]))
    exported = str(mm.exported_indom(1, serial))
    assert exported == f"{mm.MMV_DOMAIN}.{serial}"
    obs = observe(referee, {"bits": build_mmv(mmv)}, traverse=False,
                  texts=[f"indom {exported}"], indoms=[exported])
    assert obs.pmda.instances[exported] == [(1, "i" * 70), (2, "two")]
    assert obs.pmda.texts[f"indom {exported}"] == INDOM_HELP[referee.name]["raw serial"]
