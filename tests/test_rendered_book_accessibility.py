"""Accessibility of the rendered book: every image has an alt text that describes it, and axe-core finds no
critical or serious violation on any page.

Browser tests drive Debian's Chromium (``tests/conftest.py``); the build and the helpers are in ``tests/rendered.py``.
"""

from __future__ import annotations

import re

import pytest

from rendered import ALL_PAGES, CHAPTERS, ROOT


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
