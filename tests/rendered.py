"""What the tests of the rendered book share: its pages, a warning-free build made once per run, and a page opened offline.

The fixtures built on these (``html_dir``, ``server``, ``visit``, ``screenshot_dir``,
``axe_source``) are in ``tests/conftest.py``. The browser checks are in ``tests/rendered_checks.py``
and run page by page, all checks of a page on one load of it, from two modules
(``tests/test_rendered_book_browser_{1,2}.py``, each with half of the pages) that pytest-xdist runs on
two cores (``--dist loadfile`` keeps a module on one worker); the checks of the HTML files are in
``tests/test_rendered_book_html.py``. The book is built once per run: the
first worker to need it builds it under a file lock in the run's shared temporary
folder, the others wait and reuse it; ``PERFPRIV_BOOK_HTML`` names an existing build
instead (CI builds the book first and sets it).
"""

from __future__ import annotations

import fcntl
import http.server
import re
import shutil
import subprocess
import sys
from pathlib import Path

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
#: the pages with an explorer (a live one and its precomputed copy): every chapter, and the appendices that
#: store a widget's view (appendix B runs a model of the reader's own through one)
EXPLORER_PAGES = CHAPTERS + [p for p in APPENDICES
                             if "application/vnd.jupyter.widget-view+json" in (ROOT / f"{p}.ipynb").read_text()]
API_PAGES = [f"book/api/{name}" for name in public_modules()]
ALL_PAGES = PAGES + API_PAGES


def build_book(folder: Path) -> Path:
    """The book built with warnings as errors into ``folder``, once: later calls (other workers) wait and reuse it."""
    folder.mkdir(parents=True, exist_ok=True)
    html, failed = folder / "_build" / "html", folder / "failed.txt"
    with open(folder / "build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if failed.exists():
            raise AssertionError(failed.read_text())
        if not (folder / "built").exists():
            # the jupyter-book of this Python environment (it has no ``python -m`` entry point)
            sibling = Path(sys.executable).with_name("jupyter-book")
            command = str(sibling) if sibling.exists() else shutil.which("jupyter-book")
            assert command, "jupyter-book is not installed (pip install -r requirements.txt)"
            proc = subprocess.run(
                [command, "build", str(ROOT), "--path-output", str(folder), "-n", "-W", "--keep-going"],
                capture_output=True, text=True, cwd=ROOT,
            )
            if proc.returncode != 0:
                failed.write_text("book build failed or warned:\n" + proc.stdout[-4000:] + proc.stderr[-4000:])
                raise AssertionError(failed.read_text())
            (folder / "built").touch()
    return html


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    """The local server of the built book, without a log line per request."""

    def log_message(self, *args):  # keep the test output clean
        pass


def html_path(page: str) -> str:
    return page + ".html"


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


#: raw TeX in the text a reader sees: delimiters MathJax should have consumed, commands, scripts
RAW_TEX = re.compile(r"\\[()\[\]]|\$\$|\\(?:frac|mathbb|mathcal|mathrm|varepsilon|gamma|tau|sum|sqrt|lVert|left|right|"
                     r"alpha|beta|mu|Sigma|Lambda|hat|bar|tfrac|dots|le|ge|infty)\b|[A-Za-z]_\{|\^\{")


VISIBLE_TEXT = """() => {
  const root = (document.querySelector('main article') || document.body).cloneNode(true);
  root.querySelectorAll('pre, code, script, style, mjx-container, .MathJax, mjx-assistive-mml, '
                        + 'dt.sig, .sig, .highlight, textarea, input').forEach(e => e.remove());
  return root.innerText;
}"""
