"""The rendered book in the browser, first half of the pages (the even positions of ``rendered.ALL_PAGES``):
every check of ``tests/rendered_checks.py`` on each of them, a page loaded once for all; and a chapter opened
from a ``file://`` URL and on a phone.

Browser tests drive Debian's Chromium (``tests/conftest.py``); the build and the helpers are in ``tests/rendered.py``.
"""

from __future__ import annotations

from pathlib import Path

from rendered import CHAPTERS, Visit, html_path
from rendered_checks import *  # noqa: F401,F403 (the page checks, run on this module's share of the pages)

#: this module's pages: position 0 modulo 2 in ``rendered.ALL_PAGES``
PAGE_SHARE = (0, 2)


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
