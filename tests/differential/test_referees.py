"""The trixie chroot bridge: PCP 6.3.x reads what the host's 6.0.3 reads.

Needs the chroot of .ci/install-pcp-trixie.sh (and root for chroot); skipped otherwise.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pcpconform.fixtures.fixture import load_fixture
from pcpconform.fixtures.generate import generate_archive
from tests.differential.libpcp import bridge, chroot

pytestmark = [
    pytest.mark.libpcp,
    pytest.mark.skipif(not chroot.HAVE_TRIXIE,
                       reason=f"no trixie PCP chroot at {chroot.TRIXIE_ROOT} "
                              "(bash .ci/install-pcp-trixie.sh, as root)"),
    pytest.mark.skipif(not bridge.HAVE_LIBPCP, reason="Debian's PCP is not installed"),
]

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "corpus" / "fixtures" / "example.yaml"


@pytest.fixture(scope="module")
def example_docs(tmp_path_factory) -> tuple[dict, dict]:
    base = tmp_path_factory.mktemp("trixie") / "example"
    generate_archive(load_fixture(EXAMPLE), base)
    return bridge.pm_read(base), chroot.pm_read_trixie(base)


def test_trixie_pcp_is_6_3():
    assert chroot.pcp_version().startswith("6.3"), chroot.pcp_version()


def test_results_match_host_libpcp(example_docs):
    host, trixie = example_docs
    assert host["results"], "the example archive has results"
    assert [r["time"] for r in trixie["results"]] == [r["time"] for r in host["results"]]
    assert [r["mark"] for r in trixie["results"]] == [r["mark"] for r in host["results"]]
    assert [r["values"] for r in trixie["results"]] == [r["values"] for r in host["results"]]


def test_whole_document_matches_host_libpcp(example_docs):
    host, trixie = example_docs
    assert trixie == host


def test_run_python_rewrites_paths_and_cleans_up(tmp_path):
    data = tmp_path / "payload.txt"
    data.write_text("hello from the host\n", encoding="utf-8")
    script = tmp_path / "show.py"
    script.write_text(
        "import sys\n"
        "print(sys.argv[1])\n"
        "print(open(sys.argv[1]).read(), end='')\n"
        "print(sys.argv[2])\n", encoding="utf-8")
    before = set((chroot.TRIXIE_ROOT / "tmp").iterdir())
    proc = chroot.run_python(script, data, "plain-arg", files=[data])
    assert proc.returncode == 0, proc.stderr
    inner, text, plain = proc.stdout.splitlines()
    assert inner.startswith("/tmp/pcpconform-") and inner.endswith("/payload.txt")
    assert text == "hello from the host"
    assert plain == "plain-arg"
    assert set((chroot.TRIXIE_ROOT / "tmp").iterdir()) == before
