"""Shared test configuration: a non-interactive matplotlib backend, and Debian's Chromium.

The browser tests (``test_rendered_book.py``, ``test_static_explorer.py``)
drive ``/usr/bin/chromium`` through Playwright's Python package; nothing is
downloaded (never ``playwright install``). Without Chromium they are skipped,
except under CI, where a missing browser is an error.
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
