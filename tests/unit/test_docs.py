"""The documentation builds without warnings (the spec chapters included), a broken link fails
the build, every link of the built pages leads somewhere, the guide covers every command,
and the pages render in a headless browser as a reader sees them."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from pcpconform.cli import COMMANDS

ROOT = Path(__file__).resolve().parents[2]
SPHINX = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html"]


def _build(docs: Path, out: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*SPHINX, str(docs), str(out)], capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def html() -> Path:
    out = Path(tempfile.mkdtemp(prefix="pcpconform-docs-"))
    proc = _build(ROOT / "docs", out)
    assert proc.returncode == 0, proc.stderr
    yield out
    shutil.rmtree(out, ignore_errors=True)


def test_sphinx_builds_docs_without_warnings(html: Path) -> None:
    assert (html / "spec" / "archive-format.html").read_text().count("FMT-FRAME-1") >= 1


def test_a_broken_link_fails_the_build(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "docs", tmp_path / "docs", ignore=shutil.ignore_patterns("_build"))
    shutil.copytree(ROOT / "spec", tmp_path / "spec")
    with (tmp_path / "docs" / "guide.md").open("a") as f:
        f.write("\nSee [the missing page](no-such-page.md).\n")
    proc = _build(tmp_path / "docs", tmp_path / "html")
    assert proc.returncode != 0
    assert "no-such-page.md" in proc.stderr


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name == "id" and value:
                self.ids.add(value)
            if tag == "a" and name == "href" and value:
                self.hrefs.append(value)


def _parse(page: Path) -> _Links:
    parser = _Links()
    parser.feed(page.read_text(encoding="utf-8"))
    return parser


def test_every_link_of_the_built_pages_leads_somewhere(html: Path) -> None:
    pages = {p: _parse(p) for p in html.rglob("*.html") if "_static" not in p.parts}
    broken = []
    for page, links in pages.items():
        for href in links.hrefs:
            parts = urlsplit(href)
            if parts.scheme or href.startswith("mailto:"):
                continue
            target = (page.parent / unquote(parts.path)).resolve() if parts.path else page
            if not target.exists():
                broken.append(f"{page.relative_to(html)}: {href}")
            elif parts.fragment and target.suffix == ".html":
                ids = pages[target].ids if target in pages else _parse(target).ids
                if parts.fragment not in ids:
                    broken.append(f"{page.relative_to(html)}: {href} (no such anchor)")
    assert not broken, broken


def test_the_guide_covers_every_command() -> None:
    guide = (ROOT / "docs" / "guide.md").read_text(encoding="utf-8")
    missing = [name for name in COMMANDS if f"pcpconform {name}" not in guide]
    assert not missing, f"docs/guide.md does not show: {missing}"


def _chromium() -> str:
    path = shutil.which("chromium")
    if path is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is not installed (.ci/install-browser.sh)")
        pytest.skip("chromium is not installed (.ci/install-browser.sh)")
    return path


def _browser(args: list[str], profile: Path) -> subprocess.CompletedProcess[str]:
    # the flags keep a headless Chromium off the network, which this machine refuses
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             f"--user-data-dir={profile}"]
    return subprocess.run([_chromium(), *flags, *args], capture_output=True, text=True, timeout=120)


def test_pages_render_in_a_browser(html: Path, tmp_path: Path) -> None:
    dom = _browser(["--dump-dom", (html / "index.html").as_uri()], tmp_path / "p1")
    assert dom.returncode == 0, dom.stderr[-2000:]
    titles = re.findall(r'<a class="reference internal" href="([^"#]+)">', dom.stdout)
    assert "guide.html" in titles and "spec/archive-format.html" in titles
    shot = tmp_path / "guide.png"
    run = _browser(["--window-size=1200,1600", f"--screenshot={shot}", (html / "guide.html").as_uri()],
                   tmp_path / "p2")
    assert run.returncode == 0 and shot.exists(), run.stderr[-2000:]
    image = pytest.importorskip("matplotlib.image").imread(shot)
    assert image.shape[0] == 1600 and image.shape[1] == 1200
    # a rendered page: mostly background, with text (dark pixels) and a styled sidebar
    dark = (image[..., :3].mean(axis=2) < 0.35).mean()
    assert 0.005 < dark < 0.5, dark
