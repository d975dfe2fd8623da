"""Shared test configuration: a non-interactive matplotlib backend, Debian's Chromium, the rendered book.

The browser tests (``test_rendered_book_browser_*.py``, ``test_static_explorer.py``)
drive ``/usr/bin/chromium`` through Playwright's Python package; nothing is
downloaded (never ``playwright install``). Without Chromium they are skipped,
except under CI, where a missing browser is an error. The rendered book's
tests share its build, its local server and a page opened offline through the
fixtures below (helpers in ``tests/rendered.py``). ``mp60`` and
``no_warnings`` serve the tests at the ends of the double range.
"""

import os
from pathlib import Path

import matplotlib
import pytest

matplotlib.use("Agg")

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"]


@pytest.fixture(scope="session")
def browser():
    """One headless Chromium for the session."""
    if not CHROMIUM.exists():
        if os.environ.get("CI"):
            pytest.fail("Chromium is missing: .ci/run must `apt-get install -y chromium`")
        pytest.skip("Debian's Chromium is not installed (apt-get install -y chromium)")
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def dashboard_port_taken():
    """Port 8787, Dask's default dashboard port, held by someone else while the test runs.

    A local cluster must not depend on it being free (a CI run once failed when
    another job held it, and two test suites on one machine compete for it):
    the cluster tests start ``LocalCluster(dashboard_address=":0")``. If the
    port is taken already, it stays taken.
    """
    import socket

    holder = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        holder.bind(("0.0.0.0", 8787))
        holder.listen(1)
    except OSError:
        pass   # already in use: the situation this fixture creates
    try:
        yield 8787
    finally:
        holder.close()


@pytest.fixture
def mp60():
    """mpmath at 60 significant digits for the test (the references at the ends of the double range)."""
    import mpmath

    with mpmath.workdps(60):
        yield


@pytest.fixture
def no_warnings():
    """Every warning raised inside the test is an error, whatever the warning filters of the run say."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield



# ---------------------------- the rendered book (tests/test_rendered_book_*.py, rendered_checks.py, rendered.py)


@pytest.fixture(scope="session")
def html_dir(tmp_path_factory) -> Path:
    """A warning-free build of the book: ``PERFPRIV_BOOK_HTML``, or built once for the whole run."""
    from rendered import build_book

    given = os.environ.get("PERFPRIV_BOOK_HTML")
    if given:
        return Path(given)
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent          # the run's folder, shared by its workers
    return build_book(base / "book")


@pytest.fixture(scope="session")
def server(html_dir):
    """Serve the built HTML on 127.0.0.1 (a free port) for the whole session."""
    import functools
    import http.server
    import threading

    from rendered import QuietHandler

    handler = functools.partial(QuietHandler, directory=str(html_dir))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(scope="session")
def screenshot_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("screenshots")


@pytest.fixture(scope="session")
def axe_source() -> str:
    """axe-core's script (``node_modules``, from ``npm ci --ignore-scripts``), to inject into a page."""
    from rendered import ROOT

    path = ROOT / "node_modules" / "axe-core" / "axe.min.js"
    if not path.exists():
        pytest.fail("axe-core is missing: run `npm ci --ignore-scripts` (package.json lists it)")
    return path.read_text(encoding="utf-8")


def pytest_generate_tests(metafunc):
    """The page checks of ``tests/rendered_checks.py`` on the pages of the module's share: those of
    ``check.pages`` whose position in ``rendered.ALL_PAGES`` is k modulo n, for ``PAGE_SHARE = (k, n)``."""
    share = getattr(metafunc.module, "PAGE_SHARE", None)
    pages = getattr(metafunc.function, "pages", None)
    if share is None or pages is None or "page" not in metafunc.fixturenames:
        return
    from rendered import ALL_PAGES

    k, n = share
    metafunc.parametrize("page", [p for i, p in enumerate(ALL_PAGES) if i % n == k and p in pages])


@pytest.fixture(scope="session")
def shared_visits(browser):
    """The page opened for the tests of one module that share it (``visit(page, shared=True)``): at most one."""
    shared = {}
    yield shared
    for v in shared.values():
        v.close()


@pytest.fixture
def visit(browser, server, shared_visits, request):
    """Open a page of the book offline: ``visit(page, viewport=...)`` returns a :class:`rendered.Visit`.

    ``shared=True``: the page as the previous test of the same module left it, if that test opened the same
    page with the same viewport (a page loads and typesets in seconds; the rendered-book tests read it in
    turn: ``pytest_collection_modifyitems`` below runs a module's tests page by page, in the order they are
    written, so a test that clicks or changes the page comes last for its page). Otherwise a fresh tab.
    """
    from rendered import Visit, html_path

    opened = []

    def open_page(page, shared=False, viewport=(1280, 900)):
        url = f"{server}/{html_path(page)}"
        key = (request.module.__name__, url, tuple(viewport))
        if shared and key in shared_visits:
            return shared_visits[key]
        v = Visit(browser, url, local_prefix=server, viewport=viewport)
        if shared:
            for old in shared_visits.values():
                old.close()
            shared_visits.clear()
            shared_visits[key] = v
        else:
            opened.append(v)
        return v

    yield open_page
    for v in opened:
        v.close()


def pytest_collection_modifyitems(items):
    """The rendered-book tests of a module page by page (tests of one page in the order written), so that the
    tests of one page share its visit; the module's tests without a page come last, in their order.
    Other files keep their order."""
    def page_order(item):
        callspec = getattr(item, "callspec", None)
        page = callspec.params.get("page") if callspec else None
        return (0, first_seen.setdefault(page, len(first_seen))) if page is not None else (1, 0)

    start = 0
    while start < len(items):
        path = items[start].path
        end = start
        while end < len(items) and items[end].path == path:
            end += 1
        if path.name.startswith("test_rendered_book_"):
            first_seen = {}
            items[start:end] = sorted(items[start:end], key=page_order)     # a stable sort
        start = end
