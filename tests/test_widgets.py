"""Every chapter explorer draws at its defaults and at the ends of every slider.

A slider range that makes perfpriv raise would show readers a red error line
instead of a figure; this test moves each control to its extremes, one at a
time, and requires a clean redraw (no message) and a matplotlib Figure.

test_figure_layout checks the layout of the same figures: its explorer test
makes these redraws too (:func:`_redraw_at_every_extreme`) and checks each
figure it draws, so that a run with both tests draws each explorer once.
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


def _draw_once(explorer):
    """``explorer``, its drawing function made to draw each combination of values once.

    The figure of every combination drawn is kept and given again when the
    controls come back to those values (moving a control back to its default
    draws the defaults' figure again; the layout test asks for the figure the
    last redraw drew). The drawings have fixed seeds: a second drawing would
    be the same figure. Every other step of a redraw (the observer, the error
    message, the figure's alt text) runs as before.
    """
    draw, drawn = explorer._draw, {}

    def draw_once(**values):
        key = tuple(sorted((name, repr(value)) for name, value in values.items()))
        if key not in drawn:
            drawn[key] = draw(**values)
        return drawn[key]

    explorer._draw = draw_once
    return explorer


def _redraw_at_every_extreme(name, at_defaults=None, at_extreme=None):
    """Build the explorer ``name`` and move each control to its extremes, one at a time: the checks of the test below.

    ``at_defaults(figure)`` is called with the figure at the defaults, ``at_extreme(explorer, defaults, key, value)``
    after each move (and its redraw); test_figure_layout checks the layout of the figures there.
    """
    explorer = _draw_once(getattr(widgets, name)())
    assert isinstance(explorer, widgets.Explorer)
    text = repr(explorer)
    assert text.startswith("<") and "explorer" in text and "\n" not in text
    defaults = dict(explorer.values)
    fig = explorer._draw(**defaults)
    assert isinstance(fig, Figure)
    if at_defaults is not None:
        at_defaults(fig)
    for key, control in explorer.controls.items():
        for value in _extremes(control):
            control.value = value          # triggers a redraw through the observer (an error would show here)
            assert explorer.message.value == "", f"{name}: {key}={value!r}: {explorer.message.value}"
            if at_extreme is not None:
                at_extreme(explorer, defaults, key, value)
        control.value = defaults[key]
    assert explorer.values == defaults


#: The test of test_figure_layout that makes the redraws of the test below as well (with the layout of each figure)
WITH_LAYOUT = ("test_figure_layout.py", "test_explorer_figure_is_clean_at_defaults_and_at_every_slider_extreme")


@pytest.mark.parametrize("name", EXPLORERS)
def test_explorer_redraws_cleanly_at_every_slider_extreme(name, request):
    # in a run that has test_figure_layout's test of this explorer too (on this worker or another), the redraws are
    # made and checked there, through the same _redraw_at_every_extreme, on the figures whose layout it checks
    for item in request.session.items:
        if (item.path.name, getattr(item, "originalname", None)) == WITH_LAYOUT and \
                item.callspec.params.get("name") == name:
            pytest.skip(f"redrawn and checked with its layout by {WITH_LAYOUT[0]}::{item.name} in this run")
    _redraw_at_every_extreme(name)


def test_explorers_import_plots_through_its_public_names_only():
    import ast
    import pathlib

    for path in pathlib.Path(widgets.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and "plots" in node.module:
                assert node.module.endswith("plots"), f"{path.name} imports {node.module}"



# ---------------------------------------------------------------- bad input of the drawing functions (issue 32)


@pytest.fixture(scope="module")
def feedback_controls():
    """The feedback explorer's drawing from its control values (behaviour, k, spread, tolerance, kappa, q, r, tau)."""
    explorer = widgets.feedback_explorer()
    return explorer._draw, dict(explorer.values)


def test_the_feedback_explorer_refuses_a_memory_k_that_is_not_an_integer(feedback_controls):
    # k = 1.5 was read as int(1.5) = 1: a memory of one round, silently
    draw, values = feedback_controls
    with pytest.raises(ValueError, match=r"\bk must be an integer.*1\.5"):
        draw(**dict(values, k=1.5))
    with pytest.raises(TypeError, match=r"\bk\b"):
        draw(**dict(values, k=True))


@pytest.mark.parametrize("name, value, error", [
    ("tolerance", "2000", TypeError), ("tolerance", 0.0, ValueError), ("tolerance", float("nan"), ValueError),
    ("kappa", -1.0, ValueError), ("kappa", float("nan"), ValueError), ("kappa", True, TypeError),
    ("spread", 1.5, ValueError),
])
def test_the_feedback_explorer_checks_tolerance_kappa_and_spread_by_name(feedback_controls, name, value, error):
    # each behaviour's parameter is checked even when another behaviour is chosen (no bare float())
    draw, values = feedback_controls
    with pytest.raises(error, match=rf"^{name}\b"):
        draw(**dict(values, behaviour="memory (k)", **{name: value}))


def test_draw_feedback_takes_the_model_objects_and_refuses_a_family_name():
    from perfpriv import feedback, gaussian

    with pytest.raises(TypeError, match="^users must be a perfpriv.feedback.Family"):
        widgets.draw_feedback("memory", gaussian.GaussianMean(tau=0.02, d=3, R=10.0), q=0.3, r=0.6)
    with pytest.raises(TypeError, match="^mechanism must be a perfpriv.gaussian.GaussianMean"):
        widgets.draw_feedback(feedback.family("memory", 3), 0.02, q=0.3, r=0.6)


def test_draw_survival_refuses_an_impossible_horizon_by_name():
    # T = 10**12 used to end in numpy's "Unable to allocate 7 TiB"
    with pytest.raises(ValueError, match=r"^T is too large"):
        widgets.draw_survival(T=10**12)
    with pytest.raises(ValueError, match=r"^T is too large"):
        widgets.draw_horizon(T=10**12)
    with pytest.raises(ValueError, match=r"^T must be an integer"):
        widgets.draw_horizon(T=2.5)
