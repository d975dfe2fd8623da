"""The rendered book, as a reader sees it, checked in a real (headless) browser with no network.

The session builds the book once with warnings as errors (or uses the build
named by ``PERFPRIV_BOOK_HTML``), serves it from a local ``http.server`` on
127.0.0.1, and opens every page of the table of contents and of the library
reference in Debian's Chromium through Playwright, with every request that
leaves the local server aborted: the pages must render from the build alone,
as in a classroom without network or from ``file://``. Checked as a reader
would see it: formulas typeset by MathJax (no raw TeX left in the text), the
explorers' stored states drawn by the widget manager with sliders that keep
their tracks and figures that fit their frame, the kernel-free explorers
answering their sliders, no console errors, no missing file.

Chromium is installed by ``.ci/run`` (``apt-get install chromium``); on a
machine without it these tests are skipped, except under CI where a missing
browser is an error (``tests/conftest.py``).
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


def toc_pages() -> list[str]:
    """Document names of the table of contents, in order (e.g. ``book/intro``)."""
    pages = []
    for line in (ROOT / "_toc.yml").read_text().splitlines():
        match = re.match(r"\s*(?:-\s*file|root):\s*(\S+)", line)
        if match:
            pages.append(match.group(1))
    return pages


def public_modules() -> list[str]:
    """Public modules of perfpriv (no component with a leading underscore), found independently of the book."""
    import pkgutil

    import perfpriv

    return sorted(info.name for info in pkgutil.walk_packages(perfpriv.__path__, prefix="perfpriv.")
                  if not any(part.startswith("_") for part in info.name.split(".")[1:]))


PAGES = toc_pages()
CHAPTERS = [p for p in PAGES if re.search(r"/\d\d_", p)]
APPENDICES = [p for p in PAGES if re.search(r"/appendix_[a-z]_", p)]
API_PAGES = [f"book/api/{name}" for name in public_modules()]
ALL_PAGES = PAGES + API_PAGES


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
def screenshot_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("screenshots")


def html_path(page: str) -> str:
    return page + ".html"


# --------------------------------------------------------------------------
# checks on every page's HTML


@pytest.mark.parametrize("page", ALL_PAGES)
def test_element_ids_are_unique_on_every_page(html_dir, page):
    # repeated ids break in-page links and the fold buttons of sphinx-togglebutton (book/_ext/book_fixes.py)
    ids = re.findall(r'\sid="([^"]+)"', (html_dir / html_path(page)).read_text(encoding="utf-8"))
    repeated = sorted({i for i in ids if ids.count(i) > 1})
    assert not repeated, f"{page}: repeated ids {repeated[:10]}"


# --------------------------------------------------------------------------
# opening a page as a reader without network


class Visit:
    """A page opened offline: everything that went wrong while it loaded, and the tab to inspect it."""

    def __init__(self, browser, url, *, local_prefix, viewport=(1280, 900)):
        self.tab = browser.new_page(viewport={"width": viewport[0], "height": viewport[1]})
        self.blocked, self.failed, self.errors = [], [], []
        self.tab.route("**/*", self._route(local_prefix))
        self.tab.on("pageerror", lambda exc: self.errors.append(f"page error: {exc}"))
        self.tab.on("console", lambda msg: self.errors.append(f"console error: {msg.text}")
                    if msg.type == "error" else None)
        self.tab.on("requestfailed", lambda req: self.failed.append(f"{req.url} ({req.failure})")
                    if not req.url.startswith("data:") else None)
        self.tab.on("response", lambda resp: self.failed.append(f"{resp.url} (HTTP {resp.status})")
                    if resp.status >= 400 else None)
        self.response = self.tab.goto(url, wait_until="load")
        self.settle()

    def _route(self, local_prefix):
        def handle(route):
            url = route.request.url
            if url.startswith((local_prefix, "data:", "blob:")):
                route.continue_()
            else:   # the network is cut: the page must not need it
                self.blocked.append(url)
                route.abort()
        return handle

    def settle(self):
        """Wait for MathJax's first typesetting and for the widget manager to draw the stored states."""
        self.tab.evaluate("""() => (window.MathJax && MathJax.startup && MathJax.startup.promise)
                                   ? MathJax.startup.promise.then(() => true) : true""")
        if self.tab.locator('script[type="application/vnd.jupyter.widget-state+json"]').count():
            self.tab.locator(".jupyter-widgets.widget-vbox").first.wait_for(state="visible", timeout=20000)
            self.tab.wait_for_function("() => [...document.querySelectorAll('.widget-output img')]"
                                       ".every(img => img.complete && img.naturalWidth > 0)", timeout=20000)

    def problems(self) -> list[str]:
        return ([f"needed the network: {u}" for u in self.blocked] + [f"missing: {u}" for u in self.failed]
                + self.errors)

    def close(self):
        self.tab.close()


@pytest.fixture
def visit(browser, server):
    opened = []

    def open_page(page, **kwargs):
        v = Visit(browser, f"{server}/{html_path(page)}", local_prefix=server, **kwargs)
        opened.append(v)
        return v

    yield open_page
    for v in opened:
        v.close()


#: raw TeX in the text a reader sees: delimiters MathJax should have consumed, commands, scripts
RAW_TEX = re.compile(r"\\[()\[\]]|\$\$|\\(?:frac|mathbb|mathcal|mathrm|varepsilon|gamma|tau|sum|sqrt|lVert|left|right|"
                     r"alpha|beta|mu|Sigma|Lambda|hat|bar|tfrac|dots|le|ge|infty)\b|[A-Za-z]_\{|\^\{")

_VISIBLE_TEXT = """() => {
  const root = (document.querySelector('main article') || document.body).cloneNode(true);
  root.querySelectorAll('pre, code, script, style, mjx-container, .MathJax, mjx-assistive-mml, '
                        + 'dt.sig, .sig, .highlight, textarea, input').forEach(e => e.remove());
  return root.innerText;
}"""


# --------------------------------------------------------------------------
# checks on every page, in the browser


@pytest.mark.parametrize("page", ALL_PAGES)
def test_page_renders_offline_with_its_formulas_and_no_errors(page, visit, screenshot_dir):
    v = visit(page)
    tab = v.tab
    assert v.response is not None and v.response.ok, f"{page}: HTTP {v.response and v.response.status}"
    assert tab.title().strip(), f"{page}: empty title"
    assert tab.locator("main h1").first.inner_text().strip(), f"{page}: no h1 heading"
    for text in tab.locator(".cell_output").all_inner_texts():
        assert "Traceback (most recent call last)" not in text, f"{page}: a cell output holds a traceback"
        assert not re.search(r"^\w*(Error|Exception):", text, flags=re.M), f"{page}: a cell output holds an error"
    assert tab.locator(".output.traceback, .output.error").count() == 0
    # every formula typeset, none left as TeX in the text
    formulas = tab.locator("span.math, div.math").count()
    typeset = tab.locator("span.math mjx-container, div.math mjx-container").count()
    assert typeset == formulas, f"{page}: {formulas - typeset} of {formulas} formulas not typeset"
    raw = [m.group(0) for m in RAW_TEX.finditer(tab.evaluate(_VISIBLE_TEXT))]
    assert not raw, f"{page}: raw TeX in the text: {raw[:8]}"
    assert not v.problems(), f"{page}: " + "; ".join(v.problems()[:8])
    tab.screenshot(path=str(screenshot_dir / f"{page.replace('/', '_')}.png"), full_page=False)


@pytest.mark.parametrize("page", CHAPTERS)
def test_chapter_has_figures_blocks_exercises_and_launch_buttons(page, visit, screenshot_dir):
    tab = visit(page).tab

    # figures: present, decoded, sharp on a high-density screen, inside the text column
    images = tab.locator(".cell_output img")
    assert images.count() >= 1, f"{page}: no figure"
    sizes = images.evaluate_all("els => els.map(e => [e.complete, e.naturalWidth, e.naturalHeight, "
                                "e.getBoundingClientRect().width, e.getBoundingClientRect().right])")
    assert all(ok and w > 0 and h > 0 for ok, w, h, _, _ in sizes), f"{page}: a figure failed to load: {sizes}"
    column = tab.evaluate("document.querySelector('main article').getBoundingClientRect().right")
    for ok, w, h, shown, right in sizes:
        assert w >= 1.9 * shown, f"{page}: a figure of {w} px is shown {shown:.0f} px wide (blurred on a 2x screen)"
        assert right <= column + 1, f"{page}: a figure overflows the text column ({right:.0f} > {column:.0f} px)"

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

    tab.screenshot(path=str(screenshot_dir / f"{page.replace('/', '_')}_full.png"), full_page=True)


@pytest.mark.parametrize("page", CHAPTERS + APPENDICES)
def test_results_are_numbered_by_chapter_with_the_papers_number_apart(page, visit):
    tab = visit(page).tab
    match = re.search(r"/(\d\d)_|/appendix_([a-z])_", page)
    prefix = f"{int(match.group(1))}." if match.group(1) else f"{match.group(2).upper()}."
    captions = tab.locator("div.admonition p.admonition-title span.caption-number").all_inner_texts()
    assert captions, f"{page}: no numbered result"
    for caption in captions:
        number = caption.split()[-1]
        assert number.startswith(prefix), f"{page}: {caption!r} is not numbered within its chapter ({prefix})"
    titles = tab.locator("div.admonition p.admonition-title").all_inner_texts()
    assert not [t for t in titles if "(paper," in t], f"{page}: a title still holds '(paper, ...)'"
    tags = tab.locator("p.admonition-title .paper-ref").all_inner_texts()
    assert all(re.fullmatch(r"paper: .+", t) for t in tags)
    if re.search(r"/0[1-6]_", page):              # the chapters that follow the paper
        assert tags, f"{page}: no result carries the paper's number"


@pytest.mark.parametrize("page", CHAPTERS)
def test_live_explorer_state_renders_with_full_sliders_and_a_figure_inside_its_frame(page, visit):
    tab = visit(page).tab
    box = tab.locator(".jupyter-widgets.widget-vbox").first
    assert box.is_visible(), f"{page}: the explorer's stored state is not drawn"
    sliders = box.locator(".widget-slider")
    assert sliders.count() >= 2, f"{page}: the explorer shows {sliders.count()} sliders"
    tracks = box.locator(".widget-slider .slider-container").evaluate_all(
        "els => els.map(e => e.getBoundingClientRect().width)")
    assert min(tracks) >= 100, f"{page}: slider tracks collapsed to {min(tracks):.0f} px ({tracks})"
    labels = box.locator(".widget-label").evaluate_all("els => els.filter(e => e.textContent.trim())"
                                                       ".map(e => [e.scrollWidth, e.clientWidth, e.textContent])")
    clipped = [text for scroll, client, text in labels if scroll > client + 1]
    assert not clipped, f"{page}: control labels cut off: {clipped}"
    frame = box.bounding_box()
    image = box.locator(".widget-output img").first
    assert image.evaluate("e => e.complete && e.naturalWidth > 0"), f"{page}: the explorer's figure is not drawn"
    shown = image.bounding_box()
    assert shown["x"] >= frame["x"] - 1 and shown["x"] + shown["width"] <= frame["x"] + frame["width"] + 1, \
        f"{page}: the explorer's figure does not fit its frame ({shown} in {frame})"


@pytest.mark.parametrize("page", CHAPTERS)
def test_precomputed_explorer_answers_its_sliders_offline(page, visit):
    v = visit(page)
    tab = v.tab
    explorer = tab.locator(".ppx")
    assert explorer.count() == 1, f"{page}: {explorer.count()} precomputed explorers"
    assert "precomputed" in explorer.locator(".ppx-badge").inner_text()
    note = explorer.locator(".ppx-note").inner_text()
    assert "Binder" in note and "Live Code" in note, f"{page}: the note does not say how to rerun live"
    frame = explorer.locator("img.ppx-frame")
    default = frame.get_attribute("src")
    sliders = explorer.locator("input[type=range]")
    assert sliders.count() >= 1
    for k in range(sliders.count()):
        slider = sliders.nth(k)
        assert slider.bounding_box()["width"] >= 100, f"{page}: slider {k} is {slider.bounding_box()['width']} px"
        start, top = slider.input_value(), int(slider.get_attribute("max"))
        seen = set()
        for position in range(top + 1):
            slider.fill(str(position))
            seen.add(frame.get_attribute("src"))
            texts = json.loads(slider.get_attribute("data-values"))
            value = explorer.locator("output.ppx-value").nth(k)
            assert value.inner_text() == texts[position]
            # the value stays on one line (a long one, such as a behaviour's name, must not wrap in its box)
            one_line = value.evaluate("e => e.getBoundingClientRect().height < 1.9 * parseFloat(getComputedStyle(e).fontSize)")
            assert one_line, f"{page}: slider {k}'s value {texts[position]!r} wraps"
        assert len(seen) == top + 1, f"{page}: slider {k} shows {len(seen)} figures for {top + 1} positions"
        slider.fill(start)
        assert frame.get_attribute("src") == default
    assert frame.evaluate("e => e.complete && e.naturalWidth > 0")
    assert not v.problems(), f"{page}: " + "; ".join(v.problems()[:8])


def test_a_chapter_works_from_a_file_url_with_no_network(browser, html_dir):
    """Opened straight from the disk: formulas, the explorer's stored state and the precomputed explorer."""
    page = CHAPTERS[0]
    url = (Path(html_dir) / html_path(page)).resolve().as_uri()
    v = Visit(browser, url, local_prefix="file://")
    tab = v.tab
    assert tab.locator("span.math mjx-container, div.math mjx-container").count() == \
        tab.locator("span.math, div.math").count() > 0
    assert tab.locator(".jupyter-widgets.widget-vbox .widget-slider").count() >= 2
    slider = tab.locator(".ppx input[type=range]").first
    before = tab.locator(".ppx img.ppx-frame").get_attribute("src")
    slider.fill(str((int(slider.input_value()) + 1) % (int(slider.get_attribute("max")) + 1)))
    assert tab.locator(".ppx img.ppx-frame").get_attribute("src") != before
    assert not v.problems(), "; ".join(v.problems()[:8])
    v.close()


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


@pytest.mark.parametrize("page", ALL_PAGES)
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


@pytest.mark.parametrize("page", ALL_PAGES)
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


def test_every_public_module_has_its_reference_page(html_dir):
    missing = [p for p in API_PAGES if not (html_dir / html_path(p)).exists()]
    assert not missing, f"no reference page for {missing}"
    index = (html_dir / html_path("book/api")).read_text(encoding="utf-8")
    for page in API_PAGES:
        assert f'href="api/{page.rsplit("/", 1)[1]}.html"' in index, f"book/api does not link to {page}"
    # each page documents its module (not the one-page reference of old)
    for page in API_PAGES:
        html = (html_dir / html_path(page)).read_text(encoding="utf-8")
        name = page.rsplit("/", 1)[1]
        assert re.search(rf'<h1>.*?{re.escape(name)}.*?</h1>', html, flags=re.S), f"{page} is not the page of {name}"
        assert f'id="module-{name}"' in html or "Also available here" in html, f"{page} documents nothing"


class _Text(HTMLParser):
    """Visible text outside code, math, signatures and parameter names."""

    SKIP = {"code", "pre", "script", "style", "kbd", "tt"}

    def __init__(self):
        super().__init__()
        self.stack: list[tuple[str, set]] = []
        self.parts: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag in ("br", "img", "hr", "input", "meta", "link", "wbr"):
            return
        classes = set((dict(attrs).get("class") or "").split())
        self.stack.append((tag, classes))

    def handle_endtag(self, tag):
        while self.stack and self.stack.pop()[0] != tag:
            pass

    def handle_data(self, data):
        skip = any(t in self.SKIP or "math" in c or "sig" in c or "highlight" in c or t == "strong"
                   for t, c in self.stack)
        if not skip:
            self.parts.append(data)


@pytest.mark.parametrize("page", API_PAGES)
def test_reference_pages_show_no_raw_markup_and_their_formulas_as_math(page, html_dir):
    parser = _Text()
    parser.feed((html_dir / html_path(page)).read_text(encoding="utf-8"))
    text = " ".join(parser.parts)
    markup = re.findall(r":(?:func|class|data|meth|mod|attr|obj|math|ref|doc):`|``|^\s*-{3,}\s*$", text, flags=re.M)
    assert not markup, f"{page}: raw markup {markup[:5]}"
    formulas = re.findall(r"\b[A-Za-z]_\{[^}]*\}|\b[A-Z]_[A-Za-z0-9]\b|\b(?:gamma|tau|mu|beta|sigma)\^\S+", text)
    assert len(formulas) <= 3, f"{page}: formulas left as plain text: {formulas[:10]}"


def test_bibliography_is_author_year_like_the_citations_sorted_with_titles_capitalized(html_dir):
    html = (html_dir / html_path("book/bibliography")).read_text(encoding="utf-8")
    labels = [re.sub(r"<[^>]+>", "", label) for label in
              re.findall(r'<span class="label"><span class="fn-bracket">\[</span>(.*?)<span class="fn-bracket">\]', html)]
    assert labels and not any(label.isdigit() for label in labels), f"numbered bibliography: {labels[:5]}"

    def order(label):   # first author; one, two, then more authors; year
        who, year = label.rsplit(", ", 1)
        first, _, rest = who.partition(" ")
        kind = 3 if rest.startswith("et al.") else 2 if rest.startswith("and ") else 1
        return first.lower(), kind, rest.lower() if kind == 2 else "", year

    assert labels == sorted(labels, key=order), f"bibliography not in author-year order: {labels}"
    # every citation of the chapters uses the label of its entry
    cited = set()
    for page in CHAPTERS + ["book/intro"]:
        chapter = (html_dir / html_path(page)).read_text(encoding="utf-8")
        cited |= set(re.findall(r'href="bibliography.html#[^"]*"[^>]*>([^<]+)</a>', chapter))
    assert cited and cited <= set(labels), f"citations without a matching entry: {sorted(cited - set(labels))}"
    for title in ("Gaussian Differential Privacy", "Performative Privacy: When Differential Privacy Maximizes Utility",
                  "Rényi Differential Privacy"):
        assert title in html, f"title lost its capitals: {title}"


def test_notation_page_covers_every_chapter_and_the_schedules(html_dir):
    html = (html_dir / html_path("book/notation")).read_text(encoding="utf-8")
    for page in CHAPTERS + APPENDICES:
        assert f'href="{page.rsplit("/", 1)[1]}.html"' in html, f"notation page has nothing from {page}"
    for symbol in (r"\gamma_t", r"\varepsilon_t", r"\mathcal R_T", r"\gamma^*", r"\kappa_{q,r}", r"\mu'"):
        assert symbol in html, f"notation page lacks {symbol}"


# --------------------------------------------------------------------------
# the book as a reader meets it: answers hidden, figures described, formulas that fit, accessibility


def _accepted(exercise, value: float) -> bool:
    """Whether :func:`perfpriv.exercises.check` would accept ``value`` (its own tolerance rule)."""
    import math

    return math.isfinite(value) and abs(value - exercise.answer) <= exercise.atol + exercise.rtol * abs(exercise.answer)


#: the text of the page outside solution blocks, folded code included (one click shows it); a typeset
#: formula counts with the text of its MathML (the numbers of "$F_{100} = 0.2196$" are drawn by CSS)
_TEXT_OUTSIDE_SOLUTIONS = """() => {
  const root = (document.querySelector('main article') || document.body).cloneNode(true);
  root.querySelectorAll('div.solution, script, style').forEach(e => e.remove());
  root.querySelectorAll('mjx-container').forEach(c => {
    const mml = c.querySelector('mjx-assistive-mml');
    c.replaceWith(' ' + (mml ? mml.textContent : '') + ' ');
  });
  return root.textContent;
}"""


@pytest.mark.parametrize("page", ["book/intro"] + CHAPTERS + APPENDICES)
def test_no_self_check_answer_is_shown_outside_a_solution(page, visit):
    from perfpriv import exercises

    text = visit(page).tab.evaluate(_TEXT_OUTSIDE_SOLUTIONS)
    shown = []
    for exercise_id, exercise in exercises.EXERCISES.items():
        # a self-check call, or its printed verdict, with an accepted value
        for match in re.finditer(re.escape(exercise_id) + r"""['"]?\s*,\s*([-+0-9.eE]+)""", text):
            try:
                value = float(match.group(1))
            except ValueError:
                continue
            if _accepted(exercise, value):
                shown.append(f"{exercise_id}: check call with {match.group(1)}")
        if re.search(re.escape(exercise_id) + r":\s*correct", text):
            shown.append(f"{exercise_id}: a 'correct' verdict")
    # the answer printed as a bare number (a table, a printed result, the prose) by the chapter that asks for it
    chapter = re.search(r"/(\d\d)_", page)
    own = {i: e for i, e in exercises.EXERCISES.items() if chapter and i.startswith(f"ch{chapter.group(1)}-")}
    for token in set(_NUMBER.findall(text)):
        shown += [f"{i}: the number {token} is printed" for i, e in own.items() if _prints_answer(token, e)]
    assert not shown, f"{page}: answers visible outside solutions:\n" + "\n".join(sorted(shown))


#: a number as printed in text or tables (not a piece of an identifier, a version or a longer number)
_NUMBER = re.compile(r"(?<![\w.])[-−]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?(?![\w]|\.\d)")


def _prints_answer(token: str, exercise) -> bool:
    """Whether the printed number ``token`` gives away ``exercise``'s answer.

    It does when :func:`perfpriv.exercises.check` would accept it and it is the answer written
    to the token's own precision (within one unit of its last digit): ``0.2143`` or ``0.214``
    for 0.21428..., not ``0.2135``. Round answers (at most two significant digits, such as
    0.5, 20 or 1.0) are left to the self-check calls above: a bare 0.5 or 20 in a chapter is a
    parameter far more often than an answer, and cannot be told apart from one.
    """
    import math

    answer = exercise.answer
    if not math.isfinite(answer) or float(f"{answer:.2g}") == answer:
        return False
    mantissa, _, exponent = token.replace("−", "-").lower().partition("e")
    digits = mantissa.lstrip("-").replace(".", "").lstrip("0")
    if "." not in mantissa:
        digits = digits.rstrip("0")
    if len(digits) < 3:                       # 0.52, 300: a setting, not a computed answer
        return False
    value = float(token.replace("−", "-"))
    decimals = len(mantissa.partition(".")[2])
    unit = 10.0 ** (int(exponent or 0) - decimals)
    return _accepted(exercise, value) and abs(value - answer) <= unit


_PATH_LIKE = re.compile(r"\.(?:png|jpe?g|gif|svg|webp)\b|_images/|^\.\.?/|^[\w./-]+$", re.I)


@pytest.mark.parametrize("page", ALL_PAGES)
def test_every_image_has_an_alt_text_that_describes_it(page, visit):
    tab = visit(page).tab
    images = tab.locator("img").evaluate_all(
        "els => els.map(e => [e.getAttribute('alt'), (e.getAttribute('src') || '').slice(0, 80)])")
    missing = [src for alt, src in images if alt is None or not alt.strip()]
    assert not missing, f"{page}: {len(missing)} images without alt text: {missing[:5]}"
    pathlike = [alt for alt, _ in images if _PATH_LIKE.search(alt.strip()) and len(alt.split()) < 3]
    assert not pathlike, f"{page}: alt texts that are a path or a file name: {pathlike[:5]}"
    if page in CHAPTERS:    # the chapters' figures: a sentence, not a label
        short = [alt for alt, src in images if src.startswith(("../_images", "data:")) and len(alt.split()) < 6]
        assert not short, f"{page}: figure alt texts too short to say what they show: {short[:5]}"


#: display formulas whose typeset width exceeds the width of their container (page at 1280 px)
_WIDE_FORMULAS = """() => [...document.querySelectorAll('mjx-container[display="true"]')]
  .filter(c => c.getClientRects().length)
  .map(c => {
    const box = c.closest('div.math, .math') || c.parentElement;
    const math = c.querySelector('mjx-math') || c;
    const item = window.MathJax && MathJax.startup && MathJax.startup.document
      ? MathJax.startup.document.getMathItemsWithin(c)[0] : null;
    return [math.getBoundingClientRect().width, Math.min(box.clientWidth, c.clientWidth || box.clientWidth),
            item ? item.math : c.textContent.slice(0, 80)];
  })
  .filter(([width, room]) => width > room + 1)"""


@pytest.mark.parametrize("page", ALL_PAGES)
def test_display_formulas_fit_the_text_column_at_1280_px(page, visit):
    tab = visit(page, viewport=(1280, 900)).tab
    wide = tab.evaluate(_WIDE_FORMULAS)
    assert not wide, f"{page}: {len(wide)} display formulas wider than the column:\n" + "\n".join(
        f"  {width:.0f} px in {room:.0f} px: {' '.join(tex.split())[:160]}" for width, room, tex in wide)


def test_the_intro_maps_every_chapter_of_the_table_of_contents(html_dir):
    html = (html_dir / html_path("book/intro")).read_text(encoding="utf-8")
    start = html.index('id="map-of-the-book"')
    table = html[start:html.index("</table>", start)]
    linked = set(re.findall(r'href="([\w]+)\.html"', table))
    missing = [p for p in CHAPTERS + APPENDICES if p.rsplit("/", 1)[1] not in linked]
    assert not missing, f"the intro's map of the book omits {missing}"


_REFERENCE_WORDS = ("Exercise", "Lemma", "Theorem", "Proposition", "Definition", "Corollary", "Remark",
                    "Algorithm", "Figure", "Fig.", "Example", "Assumption", "Section", "Chapter", "Equation")


@pytest.mark.parametrize("page", ALL_PAGES)
def test_no_reference_word_is_doubled(page, html_dir):
    """'Exercise {ref}`x`' renders 'Exercise Exercise 4.2': the reference brings its own word."""
    text = " ".join(re.sub(r"<[^>]+>", " ", (html_dir / html_path(page)).read_text(encoding="utf-8")).split())
    words = "|".join(re.escape(w) for w in _REFERENCE_WORDS)
    doubled = [text[max(0, m.start() - 40):m.end() + 20] for m in re.finditer(rf"\b({words}) \1(?=[\s\d])", text)]
    assert not doubled, f"{page}: doubled reference words: {doubled[:5]}"


def test_bibliography_entries_hold_no_raw_tex_and_no_tracker_names(html_dir):
    html = (html_dir / html_path("book/bibliography")).read_text(encoding="utf-8")
    entries = [" ".join(re.sub(r"<[^>]+>", " ", e).split())
               for e in re.findall(r'<div class="citation"[^>]*>(.*?)</div>', html, flags=re.S)]
    assert len(entries) >= 10
    raw = [e for e in entries if re.search(r"\$|\\[A-Za-z]+|[{}]|[A-Za-z]_\w", e)]
    assert not raw, f"raw TeX in bibliography entries: {raw[:3]}"
    jargon = [e for e in entries if re.search(r"\bpaper 0\d\d\b|\bAnonymous\b", e, flags=re.I)]
    assert not jargon, f"entries named like a tracker: {jargon[:3]}"
    for page in CHAPTERS + ["book/intro", "book/bibliography"]:
        text = re.sub(r"<[^>]+>", "", (html_dir / html_path(page)).read_text(encoding="utf-8"))
        assert not re.search(r"Anonymous, (?:n\.d\.|\d{4})", text), f"{page} cites an entry as 'Anonymous'"


#: axe-core rules that the book cannot satisfy without forking an upstream package: rule -> reason
AXE_ALLOWED: dict[str, str] = {}


@pytest.fixture(scope="session")
def axe_source() -> str:
    path = ROOT / "node_modules" / "axe-core" / "axe.min.js"
    if not path.exists():
        pytest.fail("axe-core is missing: run `npm ci --ignore-scripts` (package.json lists it)")
    return path.read_text(encoding="utf-8")


@pytest.mark.parametrize("page", ALL_PAGES)
def test_axe_finds_no_critical_or_serious_violation(page, visit, axe_source):
    tab = visit(page).tab
    tab.add_script_tag(content=axe_source)
    result = tab.evaluate("() => axe.run(document, {resultTypes: ['violations']})")
    serious, moderate = [], []
    for violation in result["violations"]:
        line = (f"{violation['id']} ({violation['impact']}, {len(violation['nodes'])} elements): "
                f"{violation['help']}; first: {violation['nodes'][0]['target']}")
        if violation["id"] in AXE_ALLOWED:
            continue
        (serious if violation["impact"] in ("critical", "serious") else moderate).append(line)
    if moderate:
        print(f"{page}: moderate or minor axe findings:\n  " + "\n  ".join(moderate))
    assert not serious, f"{page}: axe-core violations:\n  " + "\n  ".join(serious)


@pytest.mark.parametrize("page", CHAPTERS)
def test_a_visible_note_says_that_the_live_explorer_needs_a_kernel(page, visit):
    tab = visit(page).tab
    note = tab.locator(".pp-live-note")
    assert note.count() == 1, f"{page}: {note.count()} notes beside the live explorer"
    assert note.is_visible(), f"{page}: the note is hidden"
    text = note.inner_text()
    for word in ("kernel", "Binder", "Live Code", "precomputed"):
        assert word in text, f"{page}: the note does not mention {word!r}: {text!r}"
    explorer = tab.locator(".jupyter-widgets.widget-vbox").first.bounding_box()
    assert note.bounding_box()["y"] < explorer["y"], f"{page}: the note is not above the live explorer"
    # hidden once a kernel runs (the class that book/_static/perfpriv.js sets when Thebe is ready)
    tab.evaluate("() => document.body.classList.add('pp-kernel-ready')")
    assert not note.is_visible(), f"{page}: the note stays with a kernel attached"


def test_a_figure_opens_full_size_with_one_tap_on_a_phone(browser, server):
    page = CHAPTERS[0]
    context = browser.new_context(viewport={"width": 420, "height": 860}, has_touch=True, is_mobile=True,
                                  device_scale_factor=2)
    tab = context.new_page()
    tab.route("**/*", lambda route: route.continue_() if route.request.url.startswith((server, "data:"))
              else route.abort())
    tab.goto(f"{server}/{html_path(page)}", wait_until="load")
    figures = tab.locator(".cell_output img.pp-zoomable")
    widths = figures.evaluate_all("els => els.map(e => e.naturalWidth)")
    figure = figures.nth(widths.index(max(widths)))     # the widest: the column shrinks it most
    figure.scroll_into_view_if_needed()
    shown = figure.bounding_box()["width"]
    figure.tap()
    viewer = tab.locator(".pp-viewer")
    viewer.wait_for(state="visible", timeout=5000)
    big = viewer.locator("img")
    assert big.get_attribute("alt") == figure.get_attribute("alt")
    assert big.bounding_box()["width"] >= 1.5 * shown, "the figure does not open larger than in the column"
    tab.keyboard.press("Escape")
    viewer.wait_for(state="hidden", timeout=5000)
    context.close()


def test_screenshots_were_saved(screenshot_dir):
    """Runs last in this module: every page left a screenshot (see the folder in the log)."""
    shots = sorted(p.name for p in screenshot_dir.glob("*.png"))
    if not shots:
        pytest.skip("the browser tests did not run")
    print(f"screenshots in {screenshot_dir}: {shots}")
    assert len([s for s in shots if s.endswith("_full.png")]) == len(CHAPTERS)
    assert len(shots) == len(ALL_PAGES) + len(CHAPTERS)
