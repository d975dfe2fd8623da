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
            control.value = value          # triggers a redraw through the observer
            assert explorer.message.value == "", f"{name}: {key}={value!r}: {explorer.message.value}"
            assert isinstance(explorer._draw(**explorer.values), Figure)
        control.value = defaults[key]

