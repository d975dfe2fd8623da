"""The kernel-free explorers: the right figure for every slider position, within budget, stable for nbval.

A :class:`perfpriv.widgets.StaticExplorer` draws its figure for every
combination of a grid of control values with the live explorer's own drawing
function, and a few lines of JavaScript pick the stored image of the slider
positions. These tests check the Python side against the drawing function
itself, and the JavaScript side in Chromium (every slider position of a
two-control grid shows the image of that combination).
"""

from __future__ import annotations

import base64
import contextlib
import io
import itertools
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from perfpriv import widgets
from perfpriv.plots import new_figure, png_bytes
from perfpriv.widgets import StaticExplorer, grid

SANITIZE = Path(__file__).resolve().parents[1] / "book" / "nbval_sanitize.cfg"


def _line(a, b, *, c=0.0):
    fig, axes = new_figure(1, 1, width=2.0, height=1.5)
    axes[0, 0].plot([0, 1, 2], [a, b, c])
    axes[0, 0].set_ylim(-1, 3)
    return fig


def _explorer(**kwargs):
    controls = {"a": grid("$a$", [0.0, 1.0, 2.0], default=1.0), "b": grid("$b$", [0.0, 2.0])}
    return StaticExplorer("lines", controls, _line, **kwargs)


def _png(uri):
    prefix = "data:image/png;base64,"
    assert uri.startswith(prefix)
    return base64.b64decode(uri[len(prefix):])


def test_grid_rejects_an_unknown_default_repeated_values_and_no_values():
    with pytest.raises(ValueError, match="default 3"):
        grid("$a$", [1, 2], default=3)
    with pytest.raises(ValueError, match="distinct"):
        grid("$a$", [1, 1])
    with pytest.raises(ValueError, match="at least one"):
        grid("$a$", [])
    assert grid("$a$", [1, 2, 3], default=2).default == 1


def test_every_combination_is_drawn_by_the_drawing_function():
    calls = []

    def draw(a, b, c):
        calls.append((a, b, c))
        return _line(a, b, c=c)

    ex = StaticExplorer("lines", {"a": grid("$a$", [0.0, 1.0, 2.0]), "b": grid("$b$", [0.0, 2.0])}, draw,
                        fixed={"c": 0.5})
    assert sorted(calls) == sorted((a, b, 0.5) for a, b in itertools.product([0.0, 1.0, 2.0], [0.0, 2.0]))
    assert ex.shape == (3, 2) and len(ex.index) == 6
    for a, b in itertools.product([0.0, 1.0, 2.0], [0.0, 2.0]):
        assert _png(ex.image(a=a, b=b)) == png_bytes(_line(a, b, c=0.5), colors=64), (a, b)
    with pytest.raises(ValueError, match="not one of the precomputed"):
        ex.image(a=0.5)


def test_identical_figures_are_stored_once():
    ex = StaticExplorer("lines", {"a": grid("$a$", [0.0, 1.0]), "b": grid("$b$", [0.0, 1.0, 2.0])},
                        lambda a, b: _line(a, 0.0))          # b changes nothing
    assert len(ex.images) == 2 and len(ex.index) == 6
    assert ex.index == [0, 0, 0, 1, 1, 1]


def test_a_grid_over_the_size_budget_raises():
    with pytest.raises(ValueError, match="use fewer values"):
        _explorer(max_bytes=10_000)


class _Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.inputs, self.images, self.scripts, self.stack = [], [], [], []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "input":
            self.inputs.append(attrs)
        elif tag == "img":
            self.images.append(attrs)
        self.stack.append((tag, attrs))

    def handle_data(self, data):
        if self.stack and self.stack[-1][0] == "script":
            self.scripts.append((self.stack[-1][1].get("class"), data))

    def handle_endtag(self, tag):
        while self.stack and self.stack.pop()[0] != tag:
            pass


def test_html_holds_one_slider_per_control_the_default_figure_and_the_data():
    ex = _explorer()
    page = _Page()
    page.feed(ex._repr_html_())
    assert [i["data-control"] for i in page.inputs] == ["a", "b"]
    assert [(i["min"], i["max"], i["value"]) for i in page.inputs] == [("0", "2", "1"), ("0", "1", "0")]
    assert json.loads(page.inputs[0]["data-values"]) == ["0", "1", "2"]
    assert page.images[0]["src"] == ex.image(a=1.0, b=0.0)        # the default combination, without JavaScript
    data = json.loads(next(text for cls, text in page.scripts if cls == "ppx-data"))
    assert data["shape"] == [3, 2] and len(data["index"]) == 6 and len(data["images"]) == 6
    html = ex._repr_html_()
    assert "precomputed" in html and "Binder" in html and "Live Code" in html


def test_html_is_the_same_for_the_same_grid_apart_from_the_image_bytes():
    """What nbval compares: the page of a re-executed notebook once the images are masked."""
    pattern, replace = re.findall(r"^regex: (.*)$\n^replace: (.*)$", SANITIZE.read_text(), flags=re.M)[0]
    first, other = _explorer(), _explorer(colors=16)              # other image bytes, same grid
    assert first._repr_html_() != other._repr_html_()
    assert re.sub(pattern, replace, first._repr_html_()) == re.sub(pattern, replace, other._repr_html_())
    assert first.element_id == other.element_id
    changed = StaticExplorer("lines", {"a": grid("$a$", [0.0, 1.0, 3.0], default=1.0),
                                       "b": grid("$b$", [0.0, 2.0])}, _line)
    assert changed.element_id != first.element_id
    assert re.sub(pattern, replace, changed._repr_html_()) != re.sub(pattern, replace, first._repr_html_())


def _quiet(factory):
    with contextlib.redirect_stdout(io.StringIO()):
        return factory()


def test_explorer_static_draws_the_live_explorers_figure_with_its_other_values():
    live = _quiet(lambda: widgets.llr_explorer(gamma=1.0, n=100, tau=0.3, s=3.5))
    static = live.static(tau=[0.1, 0.3, 1.0])
    assert static.fixed == {"gamma": 1.0, "n": 100, "s": 3.5}
    assert static.default == {"tau": 0.3}
    assert _png(static.image(tau=1.0)) == png_bytes(live._draw(**dict(live.values, tau=1.0)), colors=64)
    note = static._repr_html_()
    assert "perfpriv.plots.llr_law_figure" in note and "size <i>N</i> = 100" in note
    with pytest.raises(ValueError, match="current value"):
        live.static(tau=[0.1, 1.0])
    with pytest.raises(ValueError, match="not a control"):
        live.static(alpha=[1, 2])


def test_every_chapter_explorer_has_a_default_grid_holding_its_default_values():
    for name in [n for n in widgets.__all__ if n.endswith("_explorer")]:
        live = _quiet(getattr(widgets, name))
        assert live.static_grid, name
        for control, values in live.static_grid.items():
            assert live.values[control] in values, (name, control)
            assert len(values) >= 3, (name, control)


def test_sliders_show_the_figure_of_their_positions_in_chromium(browser, tmp_path):
    ex = _explorer()
    page_file = tmp_path / "explorer.html"
    page_file.write_text(f"<!doctype html><meta charset='utf-8'><body style='width:700px'>{ex._repr_html_()}</body>")
    tab = browser.new_page()
    errors = []
    tab.on("pageerror", lambda exc: errors.append(str(exc)))
    tab.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    tab.goto(page_file.as_uri())
    sliders = tab.locator("input[type=range]")
    frame = tab.locator("img.ppx-frame")
    assert frame.get_attribute("src") == ex.image(a=1.0, b=0.0)
    sliders.nth(0).focus()
    tab.keyboard.press("Home")                                    # a = 0
    for a, b in itertools.product([0.0, 1.0, 2.0], [0.0, 2.0]):
        sliders.nth(0).fill(str([0.0, 1.0, 2.0].index(a)))
        sliders.nth(1).fill(str([0.0, 2.0].index(b)))
        assert frame.get_attribute("src") == ex.image(a=a, b=b), (a, b)
        assert tab.locator("output.ppx-value").all_inner_texts() == [f"{a:g}", f"{b:g}"]
    track = sliders.nth(0).bounding_box()
    assert track["width"] >= 100, f"slider track {track['width']:.0f} px wide"
    assert not errors, errors
    tab.close()


def test_a_control_with_long_values_gets_a_row_and_a_box_as_wide_as_its_longest_value():
    names = ["memory (k)", "budget-aware (tolerance ρ)"]
    controls = {"users": grid("users", names), "a": grid("$a$", [0.0, 1.0])}
    ex = StaticExplorer("lines", controls, lambda users, a: _line(a=a, b=float(len(users))))
    html = ex._repr_html_()
    wide = re.findall(r'<label class="([^"]+)">.*?<output class="ppx-value"([^>]*)>', html)
    assert wide == [("ppx-control ppx-wide", f' style="min-width:{len(names[1])}ch"'), ("ppx-control", "")]
    assert ".ppx-wide .ppx-value{" in html and "white-space:nowrap" in html
    # short values only: no extra style (the stored chapter outputs stay as they were)
    assert "ppx-wide" not in _explorer()._repr_html_()
