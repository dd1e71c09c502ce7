"""The MMV PMDA and mmvdump of a referee, run on MMV files the kit wrote.

``observe`` places the files in a private ``PCP_TMP_DIR/mmv`` (under ``ROOT/tmp`` for a
chroot), then runs, in one shell under the referee: ``dbpmda`` with the PMDA as a DSO and no
pmcd (``open dso pmda_mmv.so mmv_init 70``), answering the requests given (``traverse
mmv``, ``desc``, ``instance``, ``fetch``, ``text``), and ``mmvdump`` on each file. Both
outputs are parsed into Python values. A tool killed by a signal or by the time limit is a
result (``ToolRun.crashed`` / ``timed_out``), never an exception: crashing on a file is
what some tests measure.

dbpmda prints what libpcp's pmPrintValue prints: a 32-bit value in place as its word with
``%u``, as a float with ``%.8g`` unless that is a NaN, and with ``0x%x``; 64-bit integers
as ``%lld``/``%llu``, floats ``%.8g``, doubles ``%.16g``, strings in double quotes.
mmvdump prints ``%f`` for floats and doubles.
"""

from __future__ import annotations

import contextlib
import re
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tests.differential.libpcp.referees import Referee

__all__ = ["ToolRun", "PmdaDesc", "PmdaView", "DumpMetric", "DumpValue", "DumpView",
           "Observation", "observe", "pmda_paths", "PMDA_DOMAIN"]

PMDA_DOMAIN = 70
TOOL_TIMEOUT = 60          # seconds for one dbpmda or mmvdump run
_FETCH_BATCH = 25          # PMIDs per dbpmda fetch command (short command lines)
_TIMED_OUT = 124           # GNU timeout's status when the time limit kills the command


@dataclass(frozen=True)
class ToolRun:
    """How one tool run ended, and everything it printed (stderr merged into stdout)."""

    status: int            # exit status; -N: killed by signal N
    output: str
    timed_out: bool = False

    @property
    def crashed(self) -> bool:
        return self.status < 0 and not self.timed_out

    @property
    def signal(self) -> str | None:
        if not self.crashed:
            return None
        try:
            return signal.Signals(-self.status).name
        except ValueError:
            return f"signal {-self.status}"

    @staticmethod
    def from_shell(status: int, output: str) -> ToolRun:
        """A status as sh and timeout report it: 124 time limit, 128+N signal N."""
        if status == _TIMED_OUT:
            return ToolRun(status, output, timed_out=True)
        if status > 128:
            return ToolRun(128 - status, output)
        return ToolRun(status, output)


# -- dbpmda --------------------------------------------------------------------------------
@dataclass(frozen=True)
class PmdaDesc:
    pmid: str                      # "70.42.1"
    type: str                      # pmTypeStr: "64-bit unsigned int", "string", "Not Supported"
    indom: str | None = None       # "70.86077"; None for PM_INDOM_NULL
    semantics: str | None = None   # "counter", "instant", "discrete"
    units: str | None = None       # pmUnitsStr, "none" for no dimension


@dataclass
class PmdaView:
    """What dbpmda answered. An entry that is a ``str`` is the error dbpmda printed."""

    run: ToolRun
    names: list[str] = field(default_factory=list)           # traverse mmv, leaves
    descs: dict[str, PmdaDesc | str] = field(default_factory=dict)
    instances: dict[str, list[tuple[int, str]] | str] = field(default_factory=dict)
    # PMID -> [(instance or None, printed value)], [] for "No values returned!", or an error
    values: dict[str, list[tuple[int | None, str]] | str] = field(default_factory=dict)
    # metric name or "indom 70.N" -> (one-line text, help text), None where dbpmda printed
    # an error for it
    texts: dict[str, tuple[str | None, str | None]] = field(default_factory=dict)
    answered: list[str] = field(default_factory=list)        # commands dbpmda echoed


_PROMPT = "dbpmda> "
_DESC_TYPE = re.compile(r"^\s+Data Type: (.*?)(?:\s{2}InDom: (\S+) 0x[0-9a-f]+)?$")
_DESC_SEM = re.compile(r"^\s+Semantics: (\S+)\s{2}Units: (.*)$")
_INST = re.compile(r'^\[\s*\d+\] inst: (-?\d+) name: "(.*)"$')
_FETCH_HEAD = re.compile(r"^\s+(\d+\.\d+\.\d+) \(.*?\): (.*)$")
_FETCH_VALUE = re.compile(r'^\s+(?:inst \[(-?\d+) or (?:\?\?\?|".*?")\] )?value (.*)$')
_ERROR = re.compile(r"^Error: (.*)$")
_PMID = re.compile(r"(?<![\w.])\d+\.\d+\.\d+(?![\w.])")


def _segments(output: str) -> list[tuple[str, list[str]]]:
    """(command, lines it printed) for each command dbpmda echoed after its prompt."""
    out: list[tuple[str, list[str]]] = []
    for line in output.splitlines():
        if line.startswith(_PROMPT):
            command = line[len(_PROMPT):].strip()
            if command:
                out.append((command, []))
        elif out:
            out[-1][1].append(line)
    return out


def _error(lines: Sequence[str]) -> str | None:
    for line in lines:
        m = _ERROR.match(line)
        if m:
            return m.group(1)
    return None


def parse_dbpmda(run: ToolRun) -> PmdaView:
    view = PmdaView(run)
    for command, lines in _segments(run.output):
        view.answered.append(command)
        verb, _, arg = command.partition(" ")
        err = _error(lines)
        if verb == "traverse":
            view.names += [ln.split()[1] for ln in lines if ln.split()[:1] == ["leaf"]]
        elif verb == "desc":
            view.descs[arg] = err if err is not None else _parse_desc(lines)
        elif verb == "instance":
            view.instances[arg] = err if err is not None else [
                (int(m.group(1)), m.group(2)) for m in map(_INST.match, lines) if m]
        elif verb == "text":
            view.texts[arg] = _parse_text(lines)
        elif verb == "fetch":
            # dbpmda warns, inside the echoed command, of each PMID not in the static PMNS
            if err is not None:
                for pmid in _PMID.findall(command):
                    view.values[pmid] = err
            else:
                view.values.update(_parse_fetch(lines))
    return view


def _parse_desc(lines: Sequence[str]) -> PmdaDesc | str:
    pmid = next((ln.split()[1] for ln in lines if ln.startswith("PMID: ")), None)
    if pmid is None:
        return "no PMID line: " + " | ".join(lines)
    mtype: str | None = None
    indom = sem = units = None
    for line in lines:
        m = _DESC_TYPE.match(line)
        if m:
            mtype, raw_indom = m.group(1).strip(), m.group(2)
            indom = None if raw_indom in (None, "PM_INDOM_NULL") else raw_indom
        m = _DESC_SEM.match(line)
        if m:
            sem, units = m.group(1), m.group(2).strip()
    if mtype is None:
        return "no Data Type line: " + " | ".join(lines)
    return PmdaDesc(pmid, mtype, indom, sem, units)


def _parse_text(lines: Sequence[str]) -> tuple[str | None, str | None]:
    """dbpmda's text answer: the one-line text in brackets (or an error line), then the
    help text (or a second error line)."""
    body = [ln for ln in lines if not ln.startswith(("PMID: ", "pmInDom: "))]
    oneline: str | None = None
    if body and _ERROR.match(body[0]):
        body = body[1:]
    elif body and body[0].startswith("[") and body[0].endswith("]"):
        oneline, body = body[0][1:-1], body[1:]
    if not body or _ERROR.match(body[0]):
        return oneline, None
    return oneline, "\n".join(body)


def _parse_fetch(lines: Sequence[str]) -> dict[str, list[tuple[int | None, str]] | str]:
    out: dict[str, list[tuple[int | None, str]] | str] = {}
    current: list[tuple[int | None, str]] | None = None
    for line in lines:
        m = _FETCH_HEAD.match(line)
        if m:
            pmid, rest = m.groups()
            if rest.startswith("numval:"):
                current = []
                out[pmid] = current
            else:
                current = None
                out[pmid] = [] if rest.startswith("No values returned") else rest
            continue
        m = _FETCH_VALUE.match(line)
        if m and current is not None:
            current.append((None if m.group(1) is None else int(m.group(1)), m.group(2)))
    return out


# -- mmvdump -------------------------------------------------------------------------------
@dataclass(frozen=True)
class DumpMetric:
    item: int
    name: str
    fields: dict[str, str | None]  # type, units, indom, shorttext, helptext as printed;
                                   # None where mmvdump says "(no indom)" and the like


@dataclass(frozen=True)
class DumpValue:
    item: int
    name: str
    instance: int | None
    instance_name: str | None
    text: str                      # after " = ", or "Unknown type N"


@dataclass
class DumpView:
    run: ToolRun
    header: dict[str, str] = field(default_factory=dict)
    instances: list[tuple[int, int, str]] = field(default_factory=list)  # serial, id, name
    metrics: list[DumpMetric] = field(default_factory=list)
    values: list[DumpValue] = field(default_factory=list)
    sections: list[str] = field(default_factory=list)     # kinds in TOC order


_HEADER = re.compile(r"^(MMV file|Version|Generated|TOC count|Cluster|Process|Flags)\s*= (.*)$")
_SECTION = re.compile(r"^TOC\[\d+\]: .*?(indoms|instances|metrics|values|string|labels?) offset")
_DUMP_INST = re.compile(r'^\s+\[(\d+)/\d+\] instance = \[(-?\d+) or "(.*)"\]$')
_DUMP_ENTRY = re.compile(r"^  \[(\d+)/\d+\] (.*)$")
_DUMP_FIELD = re.compile(r"^\s{7}(?:\((no \w+)\)|(\w+)=(.*))$")
_DUMP_VALUE = re.compile(r'^  \[(\d+)/\d+\] ([^\[\s]*?)(?:\[(-?\d+) or "(.*?)"\])?'
                         r"(?: = (.*)|(Unknown type -?\d+))$")


def parse_mmvdump(run: ToolRun) -> DumpView:
    view = DumpView(run)
    kind = ""
    for line in run.output.splitlines():
        m = _SECTION.match(line)
        if m:
            kind = m.group(1)
            view.sections.append(kind)
            continue
        if not kind:
            m = _HEADER.match(line)
            if m:
                view.header[m.group(1)] = m.group(2)
        elif kind == "instances":
            m = _DUMP_INST.match(line)
            if m:
                view.instances.append((int(m.group(1)), int(m.group(2)), m.group(3)))
        elif kind == "metrics":
            m = _DUMP_ENTRY.match(line)
            if m:
                view.metrics.append(DumpMetric(int(m.group(1)), m.group(2), {}))
                continue
            m = _DUMP_FIELD.match(line)
            if m and view.metrics:
                fields = view.metrics[-1].fields
                if m.group(1):
                    fields[m.group(1).split()[1]] = None  # "(no indom)"
                else:
                    fields[m.group(2)] = m.group(3)
        elif kind == "values":
            m = _DUMP_VALUE.match(line)
            if m:
                inst = None if m.group(3) is None else int(m.group(3))
                view.values.append(DumpValue(int(m.group(1)), m.group(2), inst, m.group(4),
                                             m.group(5) if m.group(5) is not None
                                             else m.group(6)))
    return view


# -- running -------------------------------------------------------------------------------
@dataclass(frozen=True)
class PmdaPaths:
    dso: str
    pmns: str
    mmvdump: str


_PMDA_DIRS = ("/var/lib/pcp/pmdas/mmv", "/usr/lib/pcp/pmdas/mmv")


def pmda_paths(referee: Referee) -> PmdaPaths:
    """Where this referee's PCP installs the MMV PMDA (Debian: $PCP_PMDAS_DIR/mmv)."""
    root = referee.root or Path("/")
    for d in _PMDA_DIRS:
        if (root / d.lstrip("/") / "pmda_mmv.so").exists():
            return PmdaPaths(f"{d}/pmda_mmv.so", f"{d}/root_mmv", f"{d}/mmvdump")
    raise FileNotFoundError(f"{referee.name}: no pmda_mmv.so under {' or '.join(_PMDA_DIRS)}")


@dataclass
class Observation:
    """One dbpmda session over all the files, and mmvdump on each file."""

    pmda: PmdaView
    dumps: dict[str, DumpView]
    started: float              # wall clock (s) before and after the run, for ELAPSED values
    finished: float


_SCRIPT = """\
ulimit -c 0
d=$(dirname "$0")
cd "$d"
export PCP_TMP_DIR="$d"
timeout -k 5 {timeout} stdbuf -o0 -e0 dbpmda -n {pmns} -ie < dbpmda.in > dbpmda.out 2>&1
echo $? > dbpmda.rc
for f in {files}; do
    timeout -k 5 {timeout} {mmvdump} "mmv/$f" > "mmvdump.$f.out" 2>&1
    echo $? > "mmvdump.$f.rc"
done
"""


def dbpmda_commands(paths: PmdaPaths, *, descs: Sequence[str] = (), indoms: Sequence[str] = (),
                    fetch: Sequence[str] = (), texts: Sequence[str] = (),
                    traverse: bool = True) -> str:
    lines = [f"open dso {paths.dso} mmv_init {PMDA_DOMAIN}"]
    if traverse:
        lines.append("traverse mmv")
    lines += [f"desc {name}" for name in descs]
    lines += [f"instance {indom}" for indom in indoms]
    lines += [f"text {name}" for name in texts]
    for n in range(0, len(fetch), _FETCH_BATCH):
        lines.append("fetch " + " ".join(fetch[n:n + _FETCH_BATCH]))
    return "\n".join(lines) + "\n"


def observe(referee: Referee, files: Mapping[str, bytes], *, descs: Sequence[str] = (),
            indoms: Sequence[str] = (), fetch: Sequence[str] = (), texts: Sequence[str] = (),
            traverse: bool = True, timeout: float = TOOL_TIMEOUT) -> Observation:
    """Run dbpmda (desc by name, instance by InDom "70.N", fetch by PMID "70.C.I", text by
    name or "indom 70.N") and mmvdump under ``referee`` with ``files`` (name -> bytes) as
    its ``PCP_TMP_DIR/mmv``."""
    for name in files:
        if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", name):
            raise ValueError(f"MMV file name {name!r} is not a simple metric name component")
    paths = pmda_paths(referee)
    tmp_parent = None if referee.root is None else referee.root / "tmp"
    host_dir = Path(tempfile.mkdtemp(prefix="pcpconform-mmv-", dir=tmp_parent))
    inner = str(host_dir) if referee.root is None else "/tmp/" + host_dir.name
    try:
        host_dir.chmod(0o755)
        (host_dir / "mmv").mkdir()
        for name, data in files.items():
            (host_dir / "mmv" / name).write_bytes(data)
        (host_dir / "dbpmda.in").write_text(dbpmda_commands(
            paths, descs=descs, indoms=indoms, fetch=fetch, texts=texts, traverse=traverse))
        (host_dir / "run.sh").write_text(_SCRIPT.format(
            timeout=int(timeout), pmns=paths.pmns, mmvdump=paths.mmvdump,
            files=" ".join(files)))
        started = time.time()
        # a tool left without a status file when the whole run times out timed out
        with contextlib.suppress(subprocess.TimeoutExpired):
            referee.run(["sh", f"{inner}/run.sh"], timeout=2 * timeout * (1 + len(files)) + 30)
        finished = time.time()
        pmda = parse_dbpmda(_tool_run(host_dir, "dbpmda"))
        dumps = {name: parse_mmvdump(_tool_run(host_dir, f"mmvdump.{name}")) for name in files}
        return Observation(pmda, dumps, started, finished)
    finally:
        shutil.rmtree(host_dir, ignore_errors=True)


def _tool_run(host_dir: Path, stem: str) -> ToolRun:
    out = host_dir / f"{stem}.out"
    output = out.read_text(errors="replace") if out.exists() else ""
    rc = host_dir / f"{stem}.rc"
    if not rc.exists():
        return ToolRun(_TIMED_OUT, output, timed_out=True)
    return ToolRun.from_shell(int(rc.read_text().strip() or _TIMED_OUT), output)
