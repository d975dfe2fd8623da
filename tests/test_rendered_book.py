"""The rendered book, as a reader sees it, checked in a real (headless) browser.

The session builds the book once with warnings as errors (or uses the build
named by ``PERFPRIV_BOOK_HTML``), serves it from a local ``http.server`` on
127.0.0.1, and opens every page of the table of contents in Debian's Chromium
through Playwright. Nothing here touches the network: MathJax and the widget
manager normally come from a CDN, so their *markup* is checked, not their
rendering.

Chromium is installed by ``.ci/run`` (``apt-get install chromium``); on a
machine without it these tests are skipped, except under CI where a missing
browser is an error.
"""

from __future__ import annotations

import functools
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import threading
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urldefrag, urlparse

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"]


def toc_pages() -> list[str]:
    """Document names of the table of contents, in order (e.g. ``book/intro``)."""
    pages = []
    for line in (ROOT / "_toc.yml").read_text().splitlines():
        match = re.match(r"\s*(?:-\s*file|root):\s*(\S+)", line)
        if match:
            pages.append(match.group(1))
    return pages


PAGES = toc_pages()
CHAPTERS = [p for p in PAGES if re.search(r"/\d\d_", p)]


@pytest.fixture(scope="session")
def html_dir(tmp_path_factory) -> Path:
    """A warning-free build of the book (built once per session)."""
    given = os.environ.get("PERFPRIV_BOOK_HTML")
    if given:
        return Path(given)
    out = tmp_path_factory.mktemp("book")
    # the jupyter-book of this Python environment (it has no ``python -m`` entry point)
    sibling = Path(sys.executable).with_name("jupyter-book")
    command = str(sibling) if sibling.exists() else shutil.which("jupyter-book")
    assert command, "jupyter-book is not installed (pip install -r requirements.txt)"
    proc = subprocess.run(
        [command, "build", str(ROOT), "--path-output", str(out), "-n", "-W", "--keep-going"],
        capture_output=True, text=True, cwd=ROOT,
    )
    assert proc.returncode == 0, "book build failed or warned:\n" + proc.stdout[-4000:] + proc.stderr[-4000:]
    return out / "_build" / "html"


@pytest.fixture(scope="session")
def server(html_dir):
    """Serve the built HTML on 127.0.0.1 (a free port) for the whole session."""
    handler = functools.partial(_QuietHandler, directory=str(html_dir))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # keep the test output clean
        pass


@pytest.fixture(scope="session")
def browser():
    if not CHROMIUM.exists():
        if os.environ.get("CI"):
            pytest.fail("Chromium is missing: .ci/run must `apt-get install -y chromium`")
        pytest.skip("Debian's Chromium is not installed (apt-get install -y chromium)")
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture(scope="session")
def screenshot_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("screenshots")


def html_path(page: str) -> str:
    return page + ".html"


# --------------------------------------------------------------------------
# checks on every page's HTML


@pytest.mark.parametrize("page", PAGES)
def test_element_ids_are_unique_on_every_page(html_dir, page):
    # repeated ids break in-page links and the fold buttons of sphinx-togglebutton (book/_ext/book_fixes.py)
    ids = re.findall(r'\sid="([^"]+)"', (html_dir / html_path(page)).read_text(encoding="utf-8"))
    repeated = sorted({i for i in ids if ids.count(i) > 1})
    assert not repeated, f"{page}: repeated ids {repeated[:10]}"


# --------------------------------------------------------------------------
# checks on every page, in the browser


@pytest.mark.parametrize("page", PAGES)
def test_page_renders_without_errors(page, browser, server, screenshot_dir):
    tab = browser.new_page(viewport={"width": 1280, "height": 900})
    errors = []
    tab.on("pageerror", lambda exc: errors.append(str(exc)))
    response = tab.goto(f"{server}/{html_path(page)}", wait_until="load")
    assert response is not None and response.ok, f"{page}: HTTP {response and response.status}"
    assert tab.title().strip(), f"{page}: empty title"
    heading = tab.locator("main h1").first.inner_text()
    assert heading.strip(), f"{page}: no h1 heading"
    outputs = tab.locator(".cell_output").all_inner_texts()
    for text in outputs:
        assert "Traceback (most recent call last)" not in text, f"{page}: a cell output holds a traceback"
        assert not re.search(r"^\w*(Error|Exception):", text, flags=re.M), f"{page}: a cell output holds an error"
    assert tab.locator(".output.traceback, .output.error").count() == 0
    name = page.replace("/", "_")
    tab.screenshot(path=str(screenshot_dir / f"{name}.png"), full_page=False)
    tab.close()


@pytest.mark.parametrize("page", CHAPTERS)
def test_chapter_has_figures_blocks_exercises_and_launch_buttons(page, browser, server, screenshot_dir):
    tab = browser.new_page(viewport={"width": 1280, "height": 900})
    tab.goto(f"{server}/{html_path(page)}", wait_until="load")

    # figures: present and decoded (non-zero natural size)
    images = tab.locator(".cell_output img")
    assert images.count() >= 1, f"{page}: no figure"
    sizes = images.evaluate_all("els => els.map(e => [e.complete, e.naturalWidth, e.naturalHeight])")
    assert all(ok and w > 0 and h > 0 for ok, w, h in sizes), f"{page}: a figure failed to load: {sizes}"

    # lemma/theorem blocks and proofs (sphinx-proof)
    assert tab.locator("div.proof, div.lemma, div.theorem, div.corollary").count() >= 1, f"{page}: no prf blocks"

    # every collapsible proof is folded until its title is clicked
    proofs = tab.locator("div.proof.dropdown")
    for k in range(proofs.count()):
        proof = proofs.nth(k)
        assert not proof.locator("p").last.is_visible(), f"{page}: proof {k + 1} visible before click"
    if proofs.count():
        proofs.last.locator(".admonition-title").click()
        proofs.last.locator("p").last.wait_for(state="visible", timeout=5000)

    # exercises, with solutions collapsed until clicked (sphinx-exercise + togglebutton)
    assert tab.locator("div.exercise").count() >= 3, f"{page}: fewer than three exercises"
    solution = tab.locator("div.solution").first
    assert solution.count() == 1, f"{page}: no solution"
    toggle = solution.locator("button.toggle-button").first
    assert toggle.count() == 1, f"{page}: solution is not a collapsible dropdown"
    assert not solution.locator("section, .section, p").last.is_visible(), f"{page}: solution visible before click"
    toggle.click()
    solution.locator("section, .section, p").last.wait_for(state="visible", timeout=5000)

    # launch buttons (Binder and Live Code) on chapter pages
    launch = tab.locator(".dropdown-launch-buttons")
    assert launch.count() == 1, f"{page}: no launch-buttons menu"
    hrefs = launch.locator("a").evaluate_all("els => els.map(e => e.href)")
    assert any("mybinder" in h or "/v2/gh/" in h for h in hrefs), f"{page}: no Binder link in {hrefs}"
    assert tab.locator(".thebe-launch-button").count() >= 1 or \
        launch.locator("button, a").filter(has_text="Live Code").count() >= 1, f"{page}: no Live Code button"

    # math as MathJax markup
    assert tab.locator("span.math, div.math").count() >= 1, f"{page}: no math markup"

    tab.screenshot(path=str(screenshot_dir / f"{page.replace('/', '_')}_full.png"), full_page=True)
    tab.close()


# --------------------------------------------------------------------------
# checks on the HTML files themselves


class _LinksAndIds(HTMLParser):
    def __init__(self):
        super().__init__()
        self.links: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if "id" in attrs:
            self.ids.add(attrs["id"])
        if tag == "a" and attrs.get("href"):
            self.links.append(attrs["href"])


@functools.lru_cache(maxsize=None)
def _parse(path: Path) -> _LinksAndIds:
    parser = _LinksAndIds()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser


@pytest.mark.parametrize("page", PAGES)
def test_internal_links_resolve(page, html_dir):
    source = html_dir / html_path(page)
    broken = []
    for href in _parse(source).links:
        parsed = urlparse(href)
        if parsed.scheme or href.startswith(("mailto:", "javascript:", "//")):
            continue
        target_part, anchor = urldefrag(href)
        target = (source.parent / unquote(target_part)).resolve() if target_part else source
        if target.is_dir():
            target = target / "index.html"
        if not target.exists():
            broken.append(href)
            continue
        if anchor and target.suffix == ".html" and unquote(anchor) not in _parse(target).ids:
            broken.append(href)
    assert not broken, f"{page}: broken internal links {broken[:10]}"


class _ProseText(HTMLParser):
    """Text of paragraphs and list items outside code, math and scripts."""

    SKIP = {"code", "pre", "script", "style", "span", "div"}

    def __init__(self):
        super().__init__()
        self.stack: list[str] = []
        self.texts: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag not in ("br", "img", "hr", "input", "meta", "link"):
            self.stack.append(tag)

    def handle_endtag(self, tag):
        while self.stack and self.stack.pop() != tag:
            pass

    def handle_data(self, data):
        if self.stack and self.stack[-1] in ("p", "li", "em", "strong", "a") and \
                not (self.SKIP & set(self.stack[-3:])):
            self.texts.append(data)


@pytest.mark.parametrize("page", PAGES)
def test_no_math_left_unparsed(page, html_dir):
    """A dollar sign in rendered prose means a formula the parser did not recognize."""
    parser = _ProseText()
    parser.feed((html_dir / html_path(page)).read_text(encoding="utf-8"))
    leaked = [t.strip()[:80] for t in parser.texts if "$" in t]
    assert not leaked, f"{page}: unparsed math in the text: {leaked[:3]}"


@pytest.mark.parametrize("page", CHAPTERS)
def test_widget_initial_output_is_stored(page, html_dir):
    """The explorer's view and its state, including the default figure, are in the page."""
    html = (html_dir / html_path(page)).read_text(encoding="utf-8")
    assert 'application/vnd.jupyter.widget-view+json' in html, f"{page}: no widget view"
    match = re.search(r'<script type="application/vnd.jupyter.widget-state\+json">(.*?)</script>', html, re.S)
    assert match, f"{page}: no stored widget state"
    state = json.loads(match.group(1))["state"]
    outputs = [m["state"].get("outputs", []) for m in state.values() if m.get("model_name") == "OutputModel"]
    assert any(o.get("data", {}).get("image/png") for out in outputs for o in out), \
        f"{page}: the explorer's initial figure is not stored"


def test_screenshots_were_saved(screenshot_dir):
    """Runs last in this module: every page left a screenshot (see the folder in the log)."""
    shots = sorted(p.name for p in screenshot_dir.glob("*.png"))
    if not shots:
        pytest.skip("the browser tests did not run")
    print(f"screenshots in {screenshot_dir}: {shots}")
    assert len([s for s in shots if s.endswith("_full.png")]) == len(CHAPTERS)
