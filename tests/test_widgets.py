"""Every chapter explorer draws at its defaults and at the ends of every slider.

A slider range that makes perfpriv raise would show readers a red error line
instead of a figure; this test moves each control to its extremes, one at a
time, and requires a clean redraw (no message) and a matplotlib Figure.
"""

import ipywidgets
import pytest
from matplotlib.figure import Figure

from perfpriv import widgets

EXPLORERS = [name for name in widgets.__all__ if name.endswith("_explorer")]


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    import matplotlib.pyplot as plt

    plt.close("all")


def _extremes(control):
    if isinstance(control, ipywidgets.FloatLogSlider):
        return [control.base ** control.min, control.base ** control.max]
    if isinstance(control, (ipywidgets.FloatSlider, ipywidgets.IntSlider)):
        return [control.min, control.max]
    if isinstance(control, ipywidgets.Checkbox):
        return [not control.value]
    if hasattr(control, "options"):
        return [opt[1] if isinstance(opt, tuple) else opt for opt in control.options]
    return []


@pytest.mark.parametrize("name", EXPLORERS)
def test_explorer_redraws_cleanly_at_every_slider_extreme(name):
    explorer = getattr(widgets, name)()
    assert isinstance(explorer, widgets.Explorer)
    text = repr(explorer)
    assert text.startswith("<") and "explorer" in text and "\n" not in text
    defaults = dict(explorer.values)
    assert isinstance(explorer._draw(**defaults), Figure)
    for key, control in explorer.controls.items():
        for value in _extremes(control):
            control.value = value          # triggers a redraw through the observer (an error would show here)
            assert explorer.message.value == "", f"{name}: {key}={value!r}: {explorer.message.value}"
        control.value = defaults[key]
    assert explorer.values == defaults


@pytest.mark.parametrize("name", ["bernoulli_draw", "mia_draw", "draw_survival", "draw_horizon", "draw_schedule"])
def test_draw_functions_take_q_r_and_tau_by_keyword_only(name):
    import inspect

    params = inspect.signature(getattr(widgets, name)).parameters
    for p in ("q", "r", "tau"):
        if p in params:
            assert params[p].kind is inspect.Parameter.KEYWORD_ONLY, (name, p)


def test_explorers_import_plots_through_its_public_names_only():
    import ast
    import pathlib

    for path in pathlib.Path(widgets.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and "plots" in node.module:
                assert node.module.endswith("plots"), f"{path.name} imports {node.module}"

