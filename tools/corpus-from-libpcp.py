#!/usr/bin/env python3
"""Write the corpus's libpcp-made archives once, into corpus/sources/<id>/ (an archive
``a`` and a ``source.json`` naming writer, version, tags and clauses).

    python tools/corpus-from-libpcp.py [CORPUS_DIR]      (as root, from the repository)

Makes: the example fixture written by each reference libpcp's pmi (libpcp_import) as a
version 3 archive, and by PCP 6.0.3's as version 2; a short pmlogger recording from a real
pmcd (version 3 and a version 2 one that logs derived metrics); pmlogrewrite and
pmlogextract applied to the recording. These bytes cannot be made again identically (times,
pids, host), so they are committed and ``pcpconform corpus build`` only copies them; CI
never runs this script. Then run ``pcpconform corpus build``.
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

from pcpconform.fixtures.fixture import load_fixture  # noqa: E402
from tests.differential.libpcp import bridge, pmlogger  # noqa: E402
from tests.differential.libpcp.convert import fixture_to_pmi  # noqa: E402
from tests.differential.libpcp.referees import REFEREES, Referee  # noqa: E402

#: a small recording: a few metrics of every kind, instances, strings
PMLOGGER_CONFIG = """\
log mandatory on 250 msec {
    kernel.all.load
    kernel.all.cpu.user
    mem.util.used
    disk.dev.read
    network.interface.in.bytes
    kernel.uname.release
    hinv.ncpu
    proc.nprocs
}
"""
#: a derived metric pmlogger evaluates and logs (domain 511)
DERIVED = "corpus.load_x10 = kernel.all.load * 10\n"
PMLOGGER_DERIVED_CONFIG = """\
log mandatory on 250 msec {
    kernel.all.load
    corpus.load_x10
}
"""
REWRITE_RULES = """\
metric kernel.all.load { name -> corpus.rewritten.load }
metric mem.util.used { sem -> discrete }
"""
PMLOGREWRITE = "/usr/lib/pcp/bin/pmlogrewrite"     # Debian installs it off PATH
EXTRACT_CONFIG = "kernel.all.load\nmem.util.used\nkernel.uname.release\n"


def _write(out: Path, base: Path, title: str, writer: str, version: str, source: str,
           tags: list[str], clauses: list[str]) -> None:
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    for f in sorted(base.parent.iterdir()):
        if f.name.startswith(base.name + ".") and f.suffix not in (".log",) and not f.name.endswith(".config"):
            shutil.copy(f, out / ("a" + f.name[len(base.name):]))
    meta = {"title": title, "origin": {"writer": writer, "version": version, "source": source},
            "tags": tags, "clauses": clauses}
    (out / "source.json").write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
    print(f"{out}: {sorted(p.name for p in out.iterdir())}")


def pmi_archives(sources: Path, tmp: Path) -> None:
    fixture = load_fixture(REPO / "corpus" / "fixtures" / "example.yaml")
    for referee in REFEREES:
        version = referee.version
        for av in (3, 2) if referee.root is None else (3,):
            base = tmp / f"pmi-{referee.name}-v{av}" / "a"
            base.parent.mkdir(parents=True)
            bridge.pmi_write(referee, fixture_to_pmi(fixture, av), base)
            seven = version.startswith("7.")
            clauses = ["FMT-PMI-1", "FMT-PMI-2", "FMT-PMI-3"] if seven and av == 3 else ["FMT-DIV-23"]
            cid = f"pmi-{version.replace('.', '-')}-v{av}"
            _write(sources / cid, base, f"example.yaml written by libpcp_import (pmi) of PCP {version} "
                   f"as a version {av} archive", "pmi (libpcp_import)", version,
                   "corpus/fixtures/example.yaml", ["fixture:example", "origin:pmi"], clauses)


def _host() -> Referee:
    return next(r for r in REFEREES if r.root is None)


def pmlogger_archives(sources: Path, tmp: Path) -> Path:
    version = _host().version
    session = pmlogger.PmcdSession()
    session.start(tmp)
    try:
        pmlogger.CONFIG = PMLOGGER_CONFIG
        v3 = pmlogger.record(tmp / "pmlogger-v3" / "a", version=3, samples=8)
        derived_dir = tmp / "pmlogger-derived"
        derived_dir.mkdir()
        config = derived_dir / "derived.conf"
        config.write_text(DERIVED, encoding="utf-8")
        (derived_dir / "pmlogger.config").write_text(PMLOGGER_DERIVED_CONFIG, encoding="utf-8")
        subprocess.run(["pmlogger", "-c", str(derived_dir / "pmlogger.config"), "-s", "4", "-V", "2",
                        "-l", str(derived_dir / "a.log"), str(derived_dir / "a")],
                       check=True, capture_output=True, timeout=120,
                       env={"PATH": "/usr/bin:/bin:/usr/sbin", "PCP_DERIVED_CONFIG": str(config)})
    finally:
        session.stop()
    _write(sources / "pmlogger-v3", v3, f"a short recording of a real pmcd by pmlogger of PCP {version}",
           "pmlogger", version, "pmcd on the reference host (tools/corpus-from-libpcp.py)",
           ["origin:pmlogger"], ["FMT-DIV-26"])
    if (derived_dir / "a.0").exists():
        _write(sources / "pmlogger-derived-v2", derived_dir / "a",
               f"pmlogger of PCP {version} logging a derived metric (domain 511) in a version 2 archive",
               "pmlogger", version, "pmcd on the reference host, with a derived metric configured",
               ["origin:pmlogger"], ["FMT-CONV-9"])
    return v3


def rewritten_archives(sources: Path, tmp: Path, recording: Path) -> None:
    version = _host().version
    rules = tmp / "rewrite.rules"
    rules.write_text(REWRITE_RULES, encoding="utf-8")
    out = tmp / "rewrite" / "a"
    out.parent.mkdir()
    subprocess.run([PMLOGREWRITE, "-c", str(rules), str(recording), str(out)], check=True, timeout=120)
    _write(sources / "pmlogrewrite-v3", out, f"the pmlogger recording renamed and re-typed by pmlogrewrite "
           f"of PCP {version}", "pmlogrewrite", version, f"pmlogger-v3 with the rules: {REWRITE_RULES!r}",
           ["origin:pmlogrewrite"], [])
    config = tmp / "extract.config"
    config.write_text(EXTRACT_CONFIG, encoding="utf-8")
    out = tmp / "extract" / "a"
    out.parent.mkdir()
    subprocess.run(["pmlogextract", "-c", str(config), str(recording), str(out)], check=True, timeout=120)
    _write(sources / "pmlogextract-v3", out, f"three metrics of the pmlogger recording, extracted by "
           f"pmlogextract of PCP {version}", "pmlogextract", version,
           f"pmlogger-v3 with the configuration: {EXTRACT_CONFIG!r}", ["origin:pmlogextract"], [])


def main() -> int:
    corpus = Path(sys.argv[1]) if len(sys.argv) > 1 else REPO / "corpus"
    sources = corpus / "sources"
    with tempfile.TemporaryDirectory(prefix="pcpconform-sources-") as name:
        tmp = Path(name)
        pmi_archives(sources, tmp)
        recording = pmlogger_archives(sources, tmp)
        rewritten_archives(sources, tmp, recording)
    return 0


if __name__ == "__main__":
    sys.exit(main())
