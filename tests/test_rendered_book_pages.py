"""Every page of the book opened offline in a real (headless) browser, as a reader sees it.

Every page of the table of contents and of the library reference, served from a local
``http.server`` with every request that leaves it aborted (and a chapter from ``file://``):
formulas typeset by MathJax with no raw TeX left, no console error, no missing file; the
chapters' figures sharp and inside the column, proofs and solutions folded, launch buttons;
a figure opens full size with one tap on a phone. Each page leaves a screenshot.

Browser tests drive Debian's Chromium (``tests/conftest.py``); the build and the helpers are in ``tests/rendered.py``.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rendered import ALL_PAGES, CHAPTERS, RAW_TEX, VISIBLE_TEXT, Visit, html_path


@pytest.mark.parametrize("page", ALL_PAGES)
def test_page_renders_offline_with_its_formulas_and_no_errors(page, visit, screenshot_dir):
    v = visit(page, shared=True)
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
    raw = [m.group(0) for m in RAW_TEX.finditer(tab.evaluate(VISIBLE_TEXT))]
    assert not raw, f"{page}: raw TeX in the text: {raw[:8]}"
    assert not v.problems(), f"{page}: " + "; ".join(v.problems()[:8])
    tab.screenshot(path=str(screenshot_dir / f"{page.replace('/', '_')}.png"), full_page=False)


@pytest.mark.parametrize("page", CHAPTERS)
def test_chapter_has_figures_blocks_exercises_and_launch_buttons(page, visit, screenshot_dir):
    tab = visit(page, shared=True).tab      # the page's last test here: it clicks

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


def test_screenshots_were_saved(screenshot_dir):
    """Runs last in this module: every page left a screenshot (see the folder in the log)."""
    shots = sorted(p.name for p in screenshot_dir.glob("*.png"))
    if not shots:
        pytest.skip("the browser tests did not run")
    print(f"screenshots in {screenshot_dir}: {shots}")
    assert len([s for s in shots if s.endswith("_full.png")]) == len(CHAPTERS)
    assert len(shots) == len(ALL_PAGES) + len(CHAPTERS)
