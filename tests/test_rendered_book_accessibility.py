"""Accessibility of the rendered book: every image has an alt text that describes it, and axe-core finds no
critical or serious violation on any page.

Browser tests drive Debian's Chromium (``tests/conftest.py``); the build and the helpers are in ``tests/rendered.py``.
"""

from __future__ import annotations

import re

import pytest

from rendered import ALL_PAGES, EXPLORER_PAGES, ROOT


_PATH_LIKE = re.compile(r"\.(?:png|jpe?g|gif|svg|webp)\b|_images/|^\.\.?/|^[\w./-]+$", re.I)


@pytest.mark.parametrize("page", ALL_PAGES)
def test_every_image_has_an_alt_text_that_describes_it(page, visit):
    tab = visit(page, shared=True).tab
    images = tab.locator("img").evaluate_all(
        "els => els.map(e => [e.getAttribute('alt'), (e.getAttribute('src') || '').slice(0, 80)])")
    missing = [src for alt, src in images if alt is None or not alt.strip()]
    assert not missing, f"{page}: {len(missing)} images without alt text: {missing[:5]}"
    pathlike = [alt for alt, _ in images if _PATH_LIKE.search(alt.strip()) and len(alt.split()) < 3]
    assert not pathlike, f"{page}: alt texts that are a path or a file name: {pathlike[:5]}"
    if page in EXPLORER_PAGES:    # the figures of pages with explorers: a sentence, not a label
        short = [alt for alt, src in images if src.startswith(("../_images", "data:")) and len(alt.split()) < 6]
        assert not short, f"{page}: figure alt texts too short to say what they show: {short[:5]}"
        # the live explorer's figure: the explorer's own description (perfpriv.widgets.Explorer.alt, copied from
        # its hidden .pp-figure-alt element by book/_static/perfpriv.js), naming its title and slider values
        explorers = tab.locator(".jupyter-widgets.widget-vbox:has(.widget-output img)").evaluate_all(
            """els => els.filter(box => !box.parentElement.closest('.jupyter-widgets.widget-vbox')).map(box => [
                 (box.querySelector('.widget-html b') || {}).textContent || '',
                 [...box.querySelectorAll('.widget-output img')].map(img => img.getAttribute('alt')),
                 (box.querySelector('.pp-figure-alt') || {}).textContent || ''])""")
        assert explorers, f"{page}: no live explorer with a figure"
        for title, alts, described in explorers:
            assert title.strip(), f"{page}: a live explorer without a title"
            assert described.strip(), f"{page}: the live explorer {title!r} stores no description of its figure"
            for alt in alts:
                assert alt and not _PATH_LIKE.search(alt.strip()), f"{page}: {title!r}'s figure has alt {alt!r}"
                assert alt == described.strip(), f"{page}: {title!r}'s figure alt is not its description: {alt!r}"
                assert alt.startswith(title.strip() + ": ") and ", for " in alt and " against " in alt, \
                    f"{page}: {title!r}'s figure alt does not name the explorer, its values and its axes: {alt!r}"
        # the description is for assistive technology only: nothing of it shows, and it takes no room
        sizes = tab.locator(".pp-figure-alt-box").evaluate_all(
            "els => els.map(e => [e.getBoundingClientRect().height, e.querySelector('.pp-figure-alt')"
            ".getBoundingClientRect().width, e.querySelector('.pp-figure-alt').getBoundingClientRect().height])")
        assert sizes and all(box <= 0.5 and w <= 1 and h <= 1 for box, w, h in sizes), \
            f"{page}: the hidden figure description shows or takes room: {sizes}"


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
    tab = visit(page, shared=True).tab
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
