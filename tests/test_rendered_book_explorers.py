"""The explorers of the chapters and appendices in the browser: the live explorer's stored state drawn with full
sliders and its figure inside the frame, the precomputed explorer answering every position of every slider
offline, and the note that the live one needs a kernel.

Browser tests drive Debian's Chromium (``tests/conftest.py``); the build and the helpers are in ``tests/rendered.py``.
"""

from __future__ import annotations

import json

import pytest

from rendered import EXPLORER_PAGES


@pytest.mark.parametrize("page", EXPLORER_PAGES)
def test_live_explorer_state_renders_with_full_sliders_and_a_figure_inside_its_frame(page, visit):
    tab = visit(page, shared=True).tab
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


@pytest.mark.parametrize("page", EXPLORER_PAGES)
def test_precomputed_explorer_answers_its_sliders_offline(page, visit):
    v = visit(page, shared=True)          # moves the sliders and puts them back
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


@pytest.mark.parametrize("page", EXPLORER_PAGES)
def test_a_visible_note_says_that_the_live_explorer_needs_a_kernel(page, visit):
    tab = visit(page, shared=True).tab      # the page's last test here: it marks the kernel ready
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
