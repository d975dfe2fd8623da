"""The built book's HTML files, read without a browser: unique ids, links that resolve, no unparsed math, stored
widget states, a reference page per public module, the bibliography, the notation page and the intro's map.

Browser tests drive Debian's Chromium (``tests/conftest.py``); the build and the helpers are in ``tests/rendered.py``.
"""

from __future__ import annotations

import functools
import json
import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urldefrag, urlparse

import pytest

from rendered import ALL_PAGES, API_PAGES, APPENDICES, CHAPTERS, EXPLORER_PAGES, html_path


@pytest.mark.parametrize("page", ALL_PAGES)
def test_element_ids_are_unique_on_every_page(html_dir, page):
    # repeated ids break in-page links and the fold buttons of sphinx-togglebutton (book/_ext/book_fixes.py)
    ids = re.findall(r'\sid="([^"]+)"', (html_dir / html_path(page)).read_text(encoding="utf-8"))
    repeated = sorted({i for i in ids if ids.count(i) > 1})
    assert not repeated, f"{page}: repeated ids {repeated[:10]}"


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


@pytest.mark.parametrize("page", EXPLORER_PAGES)
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
