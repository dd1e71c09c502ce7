#!/usr/bin/env python3
"""Write the corpus's archive sets made by libpcp's own tools once, into corpus/sources/set-*/
(the members' files and a ``source.json`` with ``"format": "set"``).

    python tools/set-sources-from-libpcp.py [CORPUS_DIR]      (as root, from the repository)

Makes: three archives pmlogger recorded one after another from a real pmcd into one
directory (the first in version 2, the others in version 3, as after an upgrade); a
recording cut in three by pmlogextract -S/-T (pmlogextract 6.0.3 ends a -T window about one
second late, so the cuts are -T +0sec, -S +1sec -T +0sec, -S +2sec); and the members of the
kit's ``set-gaps`` case written by PCP 6.0.3's libpcp_import. These bytes cannot be made
again identically, so they are committed and ``pcpconform corpus build`` only reads them;
CI never runs this script. Then run ``pcpconform corpus build``.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from pcpconform.corpusgen.invalid.sets import SET_CASES  # noqa: E402
from pcpconform.conform.adapters.pmi_fixture import fixture_to_pmi  # noqa: E402
from tests.differential.libpcp import bridge, pmlogger  # noqa: E402
from tests.differential.libpcp.referees import REFEREES  # noqa: E402

CONFIG = """\
log mandatory on 250 msec {
    kernel.all.load
    kernel.all.cpu.user
    mem.util.used
    disk.dev.read
    hinv.ncpu
}
"""


def _write(out: Path, members: list[Path], title: str, writer: str, version: str, source: str,
           clauses: list[str]) -> None:
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    for base in members:
        for f in sorted(base.parent.iterdir()):
            if f.name.startswith(base.name + ".") and not f.name.endswith((".log", ".config")):
                shutil.copy(f, out / f.name)
    meta = {"title": title, "format": "set", "origin": {"writer": writer, "version": version, "source": source},
            "tags": [f"origin:{writer.split()[0]}"], "clauses": clauses}
    (out / "source.json").write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
    print(f"{out}: {sorted(p.name for p in out.iterdir())}")


def main() -> int:
    corpus = Path(sys.argv[1]) if len(sys.argv) > 1 else REPO / "corpus"
    sources = corpus / "sources"
    host = next(r for r in REFEREES if r.root is None)
    version = host.version
    with tempfile.TemporaryDirectory(prefix="pcpconform-set-sources-") as name:
        tmp = Path(name)
        session = pmlogger.PmcdSession()
        session.start(tmp)
        try:
            pmlogger.CONFIG = CONFIG
            daily = [pmlogger.record(tmp / "daily" / f"20260101.00.{k:02d}", version=v, samples=4)
                     for k, v in enumerate((2, 3, 3))]
            long = pmlogger.record(tmp / "long" / "a", version=3, samples=14)
        finally:
            session.stop()
        _write(sources / "set-pmlogger", daily, f"three archives pmlogger of PCP {version} recorded one after "
               "another from a real pmcd (version 2, then 3)", "pmlogger", version,
               "pmcd on the reference host (tools/set-sources-from-libpcp.py)", ["SET-FORM-6"])
        pieces = []
        for k, window in enumerate((["-T", "+0sec"], ["-S", "+1sec", "-T", "+0sec"], ["-S", "+2sec"])):
            out = tmp / "split" / f"piece{k}"
            out.parent.mkdir(exist_ok=True)
            subprocess.run(["pmlogextract", *window, str(long), str(out)], check=True, timeout=120)
            pieces.append(out)
        _write(sources / "set-pmlogextract", pieces, f"a 3.5 s pmlogger recording cut in three by pmlogextract "
               f"-S/-T of PCP {version}", "pmlogextract", version,
               "a pmlogger recording of the reference host's pmcd", ["SET-REPLAY-1"])
        case = next(c for c in SET_CASES if c.name == "set-gaps")
        written = []
        for m in case.make():
            base = tmp / "pmi" / m.name
            base.parent.mkdir(exist_ok=True)
            bridge.pmi_write(host, fixture_to_pmi(m.fixture, 3), base)
            written.append(base)
        _write(sources / "set-pmi", written, f"the members of set-gaps written by libpcp_import (pmi) of PCP "
               f"{version}", "pmi (libpcp_import)", version, "pcpconform.corpusgen.invalid.sets set-gaps",
               ["SET-META-1"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
