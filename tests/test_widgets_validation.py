"""perfpriv.widgets: controls, grids and explorers check their arguments and name the explorer's own parameter."""

import matplotlib.pyplot as plt
import pytest

from perfpriv import gaussian, plots, widgets
from perfpriv.behaviour import LeakCount, Memoryless


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def _draw(**values):
    fig, axes = plots.new_figure(1, 1, width=2, height=1.5)
    axes[0, 0].plot([0, 1], [0, 1])
    return fig


def test_widget_controls_check_their_ranges():
    with pytest.raises(ValueError, match="high"):                 # float_slider(low=1, high=0): a TraitError
        widgets.float_slider("q", 0.5, 1.0, 0.0, 0.1)
    with pytest.raises(ValueError, match="value"):
        widgets.int_slider("T", 10, 1, 5)
    with pytest.raises(ValueError, match="low"):                  # log_slider(low=0): math domain error
        widgets.log_slider("gamma", 1.0, 0.0, 10.0)
    with pytest.raises(TypeError, match="value"):                 # checkbox(value=1): booleans only
        widgets.checkbox("no privacy", 1)


def test_grid_checks_its_fields():
    # was: NaN stored as a label, a value or a default (the frozen dataclass took anything)
    for kwargs, word in [(dict(label=float("nan")), "label"), (dict(values=float("nan")), "values"),
                         (dict(values=(0.3, float("nan"))), "values"), (dict(default=2), "default"),
                         (dict(fmt=None), "fmt"), (dict(html=1), "html")]:
        with pytest.raises((TypeError, ValueError), match=word):
            widgets.Grid(**dict(dict(label="q", values=(0.3, 0.6)), **kwargs))
    with pytest.raises(TypeError, match="values"):
        widgets.grid("q", 0.5)


def test_explorers_check_their_controls_and_drawing_function():
    # was: 'int' object is not iterable / not callable, dictionary update sequence element ..., '>' not supported
    slider = widgets.float_slider("q", 0.3, 0.0, 1.0, 0.1)
    for call, word in [(lambda: widgets.Explorer("t", 0, _draw), "controls"),
                       (lambda: widgets.Explorer("t", {"q": 1.0}, _draw), "controls"),
                       (lambda: widgets.Explorer("t", {"q": slider}, None), "draw"),
                       (lambda: widgets.Explorer("t", {"q": slider}, _draw, static_grid="x"), "static_grid"),
                       (lambda: widgets.StaticExplorer("t", 1.0, _draw), "controls"),
                       (lambda: widgets.StaticExplorer("t", {"q": widgets.grid("q", [1])}, _draw, fixed=2), "fixed"),
                       (lambda: widgets.StaticExplorer("t", {"q": widgets.grid("q", [1])}, _draw, max_bytes=None),
                        "max_bytes")]:
        with pytest.raises((TypeError, ValueError), match=word):
            call()


def test_an_explorer_names_its_own_parameter_when_a_slider_refuses_it():
    # was: "value must be in [0.01, 20]; got 0" (the slider's parameter, not the explorer's)
    with pytest.raises(ValueError, match="epsilon"):
        widgets.bernoulli_explorer(epsilon=0, T=10, n0=20, trials=1)
    with pytest.raises(ValueError, match="gamma"):
        widgets.mia_explorer(gaussian.GaussianMean(50.0, tau=0.05, d=12, R=10.0))   # beyond the slider's 30


def test_the_algorithm_1_explorer_starts_from_one_model_and_names_what_it_cannot_draw():
    # the slider start values are a mechanism and users (issue 31: they were 12 loose parameters)
    mech = gaussian.GaussianMean(2.0, tau=0.05, d=12, R=10.0)
    for call, error, word in [
            (lambda: widgets.mia_explorer(gaussian.GaussianMean([1.0, 2.0], tau=0.05, d=12, R=10.0)), ValueError,
             "^mechanism must hold one noise scale"),
            (lambda: widgets.mia_explorer(gaussian.GaussianMean(2.0, tau=0.05, d=2, R=10.0, mu=[1.0, 0.0])),
             ValueError, "^mechanism must have the paper's data model"),
            (lambda: widgets.mia_explorer(mech, Memoryless(q=[0.3, 0.5], r=0.2)), TypeError, "^users must"),
            (lambda: widgets.mia_explorer(mech, LeakCount(k=2, q=0.3, r=0.2)), TypeError, "^users must"),
            (lambda: widgets.mia_explorer("gaussian"), TypeError, "^mechanism must"),
            (lambda: widgets.mia_draw(mech, Memoryless(q=[0.3, 0.5], r=0.2), n0=20, T=3, trials=2), ValueError,
             "^users must be one cell"),
            (lambda: widgets.mia_draw(mech, Memoryless(q=0.3, r=0.2), n0=20, T=3, trials=2, policy=5000), TypeError,
             "^policy must")]:
        with pytest.raises(error, match=word):
            call()


def test_explorer_refresh_names_raise_errors():
    # was: "check_layout must be True or False; got 0" (the name of the flag inside plots.show)
    explorer = widgets.Explorer("t", {"q": widgets.float_slider("q", 0.3, 0.0, 1.0, 0.1)}, _draw)
    for value in (0, "False", None):
        with pytest.raises(TypeError, match="^raise_errors must be True or False"):
            explorer.refresh(raise_errors=value)
    explorer.refresh(raise_errors=True)


def test_bernoulli_draw_states_the_smallest_budget():
    # was: RuntimeWarning: invalid value in subtract (moving average of infinite errors at epsilon = 1e-300)
    with pytest.raises(ValueError, match="epsilon"):
        widgets.bernoulli_draw(1e-300, q=0.3, r=0.6, T=3, n0=20, trials=2)


def test_grid_text_takes_the_index_of_one_of_its_values():
    g = widgets.grid("x", [0.5, 1.0, 2.0])
    assert [g.text(k) for k in (0, 1.0, 2)] == ["0.5", "1", "2"]
    for bad in (-1, 3, 1.5):            # -1 used to read the last value; 1.5 and 3 failed inside the tuple
        with pytest.raises(ValueError, match=r"^k must be an integer in \[0, 2\]"):
            g.text(bad)
    for bad in ("a", True):
        with pytest.raises(TypeError, match=r"^k must be an integer in \[0, 2\]"):
            g.text(bad)
