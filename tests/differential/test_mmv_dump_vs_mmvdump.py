"""The kit's text dump of an MMV file against each referee's mmvdump (DUMP-MMV-TEXT).

Files are kit-written from the bundled MMV fixture in versions 1 (labels dropped), 2 and 3.
The two listings must be equal line for line once the differences DUMP-MMV-TEXT names are
taken out: the file name line, the offsets of version 2 and 3 instances (mmvdump uses the
v1 stride), and mmvdump's missing space before "Unknown type" of a NOSUPPORT value. The
header, every TOC heading, indom, instance, metric (type, semantics, units, indom, help),
value, string slot and label line is compared.
"""

from __future__ import annotations

import dataclasses
import io
import re
from pathlib import Path

import pytest

from pcpconform.dump.mmv import dump_mmv
from pcpconform.fixtures import bundled_fixture
from pcpconform.fixtures.mmv import generate_mmv, load_mmv_fixture
from pcpconform.mmv import Metric, Value
from pcpconform.mmv import model as mm
from tests.differential.libpcp.referees import Referee

MMVDUMP = "/usr/lib/pcp/pmdas/mmv/mmvdump"
_INSTANCE = re.compile(r"^(  \[\d+/)\d+(\] instance = )", re.M)


def normalised(listing: str, version: int) -> str:
    lines = listing.splitlines()[1:]           # "MMV file = <path as given>"
    text = "\n".join(lines)
    if version >= 2:
        text = _INSTANCE.sub(r"\1*\2", text)
    return re.sub(r"(\S)Unknown type -1$| Unknown type nosupport$", r"\1 <nosupport>", text,
                  flags=re.M)


@pytest.mark.parametrize("version", [1, 2, 3])
def test_text_dump_lists_what_mmvdump_lists(referee: Referee, tmp_path: Path, version: int) -> None:
    content = load_mmv_fixture(bundled_fixture("mmv-example"))
    odd = Metric("unsupported", 9, mm.TYPE_NOSUPPORT, mm.SEM_INSTANT, 0, 0, None, None, (Value(),))
    content = dataclasses.replace(content, version=version, metrics=(*content.metrics, odd),
                                  labels=content.labels if version == 3 else ())
    path = tmp_path / f"app{version}"
    generate_mmv(content, path)
    proc = referee.tool([MMVDUMP, path], files=[path])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = io.StringIO()
    dump_mmv(path, out, "text")
    ours, theirs = normalised(out.getvalue(), version), normalised(proc.stdout, version)
    assert "requests.total[1 or \"/login\"] = 85" in ours
    assert ours == theirs


def _unescaped(listing: str) -> str:
    """The kit's listing with DUMP-MMV-ESC's ``\\xHH`` escapes turned back into bytes."""
    raw = re.sub(rb"\\x([0-9a-f]{2})", lambda m: bytes([int(m.group(1), 16)]), listing.encode("ascii"))
    return raw.decode("utf-8", "replace")


def test_text_dump_escapes_what_mmvdump_prints_raw(referee: Referee, tmp_path: Path) -> None:
    """DUMP-MMV-TEXT: a string value and a help text with non-ASCII bytes and a newline are
    escaped in the kit's listing (``\\xc3\\xa9``, ``\\x0a``), one line each, where mmvdump
    prints the bytes as they are (a newline breaking the line); unescaped, the listings agree."""
    text = bundled_fixture("mmv-example").read_text(encoding="utf-8")
    text = text.replace('value: "2.4.1"', 'value: "2.4.1 caf\\u00e9\\nbeta"')
    text = text.replace("shorttext: application version", 'shorttext: "application v\\u00e9rsion\\nline 2"')
    assert "caf" in text and "rsion" in text
    fixture = tmp_path / "odd.yaml"
    fixture.write_text(text, encoding="utf-8")
    path = tmp_path / "odd"
    generate_mmv(load_mmv_fixture(fixture), path)
    proc = referee.tool([MMVDUMP, path], files=[path])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = io.StringIO()
    dump_mmv(path, out, "text")
    ours = out.getvalue()
    assert ours.isascii()
    assert "2.4.1 caf\\xc3\\xa9\\x0abeta" in ours and "application v\\xc3\\xa9rsion\\x0aline 2" in ours
    assert "2.4.1 café\nbeta" in proc.stdout and "application vérsion\nline 2" in proc.stdout
    assert normalised(_unescaped(ours), 3) == normalised(proc.stdout, 3)
