"""Figures as a reader sees them: no clipped or overlapping text, symbols in mathtext, sizes for the column.

``perfpriv.plots.layout_problems`` draws a figure and lists every title, axis
label, tick label or legend that leaves the canvas or runs into another text
(the chapter 03 explorer once printed its y label half outside the figure and
over its tick labels). Every explorer is checked at its defaults and with each
control at the ends of its range, and every figure function of the chapters
at small sizes. The same figures must use mathtext for their symbols (no
``N_t`` or ``γ_c`` as plain text) and fit the book's text column.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from perfpriv import experiments, optimize, plots, widgets
from perfpriv.plots import COLUMN_WIDTH, layout_problems

# the explorers and the ends of their sliders, as test_widgets moves them
from test_widgets import EXPLORERS, _close_figures, _extremes  # noqa: E402,F401  (fixture: autouse)


# plain-text symbols that must be mathtext: subscripted names, Greek letters outside $...$
_RAW_SYMBOL = re.compile(r"\b[A-Za-z]_(\{|[A-Za-z0-9])|[γτεκΛμνΣαρβ∞₀₁]")


def _raw_symbols(fig) -> list[str]:
    """Texts of ``fig`` with a symbol outside mathtext (``$...$``)."""
    found = []
    for text in fig.findobj(lambda a: hasattr(a, "get_text") and callable(a.get_text)):
        value = text.get_text()
        if not isinstance(value, str) or not value:
            continue
        outside = re.sub(r"\$[^$]*\$", "", value)
        if _RAW_SYMBOL.search(outside):
            found.append(value)
    return found


def _check(fig, what):
    problems = layout_problems(fig)
    assert not problems, f"{what}: " + "; ".join(problems)
    raw = _raw_symbols(fig)
    assert not raw, f"{what}: symbols outside mathtext: {raw[:5]}"
    assert fig.get_figwidth() <= COLUMN_WIDTH + 1e-9, f"{what}: {fig.get_figwidth():.2f} in is wider than the column"


def test_layout_problems_sees_a_label_cut_by_the_edge_and_overlapping_ticks():
    fig, axes = plots.new_figure(1, 2, width=3.0, height=2.5)
    fig.set_layout_engine(None)
    fig.subplots_adjust(left=0.02)                          # no room for the left panel's labels
    axes[0, 0].plot([1, 1000], [1, 1000])
    axes[0, 0].set_ylabel("population $N_t$")
    axes[0, 1].plot([1, 1000], [1, 1000])
    axes[0, 1].set_ylabel("squared error")
    axes[0, 1].yaxis.set_label_coords(-0.08, 0.5)           # printed over its own tick labels
    problems = layout_problems(fig)
    assert any("cut by the edge" in p and "population" in p for p in problems), problems
    assert any("overlaps" in p and "squared error" in p and "ytick" in p for p in problems), problems
    fig.subplots_adjust(left=0.2, wspace=0.6)
    axes[0, 1].yaxis.set_label_coords(-0.35, 0.5)
    assert layout_problems(fig) == []


def test_layout_problems_sees_minor_tick_labels_of_a_log_axis_run_into_each_other():
    fig, axes = plots.new_figure(1, 2, width=4.3, height=2.5)
    axes[0, 0].barh([0, 1], [1.3, 40.0])
    axes[0, 0].set_xscale("log")                  # matplotlib labels 2x10^0, 3x10^0, ... in a narrow panel
    problems = layout_problems(fig)
    assert any("tick labels" in p and "times10" in p for p in problems), problems
    plots.plain_log(axes[0, 0], x=True)
    assert layout_problems(fig) == []


def test_raw_symbol_check_sees_plain_text_subscripts_and_greek():
    fig, axes = plots.new_figure()
    axes[0, 0].set_xlabel("population before the round, N_{t-1}")
    axes[0, 0].set_ylabel(r"growth factor $C(\gamma)$")
    axes[0, 0].set_title("γ_c = 1.2")
    assert sorted(_raw_symbols(fig)) == ["population before the round, N_{t-1}", "γ_c = 1.2"]


@pytest.mark.parametrize("name", EXPLORERS)
def test_explorer_figure_is_clean_at_defaults_and_at_every_slider_extreme(name):
    explorer = getattr(widgets, name)()
    defaults = dict(explorer.values)
    _check(explorer._draw(**defaults), f"{name} at its defaults")
    for key, control in explorer.controls.items():
        for value in _extremes(control):
            values = dict(defaults, **{key: value})
            _check(explorer._draw(**values), f"{name} with {key}={value!r}")


def _schedule_figure():
    best = optimize.optimal_schedule(0.3, 0.6, tau=0.02, T=6, n0=200, d=12, R=10.0, starts="constant", polish=0)
    return plots.figure_schedules({"optimal": best}, title="test")


def _schedule_comparison_figure():
    T = 10
    cmp = experiments.compare_schedules({"constant": np.full(T, 0.7), "decay": np.geomspace(1.1, 0.3, T),
                                         "no privacy": np.full(T, 1e-3)}, q=0.5, r=0.4, tau=0.02, n0=200, d=12,
                                        R=10.0, trials=50, seed=7)
    return plots.figure_schedule_comparison(cmp, title="test", exclude=("no privacy",))


FIGURES = {
    "figure1": lambda: plots.figure1(T=20, trials=2, epsilons=[0.1, 1.0, np.inf]),
    "figure2": lambda: plots.figure2(T=10, trials=2, grid=[0.2, 0.5, 0.8], epsilons=[0.5, np.inf]),
    "figure7": lambda: plots.figure7(T=10, trials=2, grid=[0.2, 0.5, 0.8], epsilons=[0.5, np.inf]),
    "growth_factor_figure": lambda: plots.growth_factor_figure(),
    "final_error_figure": lambda: plots.final_error_figure(((0.3, 0.6), (0.6, 0.3)), T=10, trials=3,
                                                           epsilons=[0.1, 1.0, np.inf]),
    "clipping_figure": lambda: plots.clipping_figure(np.random.default_rng(0).normal(0, 2, (40, 2)), 2.0),
    "algorithm1_runs": lambda: plots.algorithm1_runs(T=5, trials=2),
    "llr_histogram": lambda: plots.llr_histogram(np.random.default_rng(0).normal(0.5, 1, (200, 3)),
                                                 [2.0, 3.0, 5.0], 100, 1.0),
    "tail_bounds_figure": lambda: plots.tail_bounds_figure(3.0, 100, 1.0),
    "figure3a": lambda: plots.figure3a(rounds=3, taus=[0.05, 0.5]),
    "roc_figure": lambda: plots.roc_figure([0.5, 1.0, 2.0]),
    "outlier_figure": lambda: plots.outlier_figure(np.random.default_rng(0).gamma(3, 1, 300),
                                                   np.random.default_rng(1).random(300) < 0.3, 100, 1.0, 0.3),
    "statistic_figure": lambda: plots.statistic_figure(np.geomspace(0.3, 10, 8),
                                                       populations={"paper": np.full((2, 6), 100.0),
                                                                    "exact": np.full((2, 6), 90.0)},
                                                       run_gamma=2.0, q=0.3, r=0.6),
    "llr_law_figure": lambda: plots.llr_law_figure(3.5, 100, 1.0, 0.3),
    "figure3bc": lambda: plots.figure3bc(trials=2, gammas=[0.5, 5.0], n0=200),
    "figure_theorem3": lambda: plots.figure_theorem3([experiments.theorem3_check(2.0, tau=0.02, q=0.3, r=0.6,
                                                                                 sizes=(2, 100), trials=20)] * 3),
    "figure_leak_dispersion": lambda: plots.figure_leak_dispersion([experiments.leak_dispersion(2.0, tau=0.02, n=100,
                                                                                                trials=20)] * 2),
    "figure_mean_field": lambda: plots.figure_mean_field(2.0, tau=0.02, q=0.3, r=0.6, T=5, trials=2, sizes=[10, 1000]),
    "figure_horizon": lambda: plots.figure_horizon(q=0.3, r=0.6, tau=0.02, empirical=False),
    "figure_gamma_star": lambda: plots.figure_gamma_star([experiments.gamma_star_map([0.1, 0.5], [0.2, 0.6], tau=0.02,
                                                                                     empirical=False)]),
    "figure_schedules": _schedule_figure,
    "figure_schedule_comparison": _schedule_comparison_figure,
}


@pytest.mark.parametrize("name", FIGURES)
def test_figure_text_is_clean_in_mathtext_and_fits_the_column(name):
    _check(FIGURES[name](), name)


def test_gain_map_annotations_contrast_with_their_cells():
    from perfpriv.plots._schedules import _text_color

    assert _text_color((0.993, 0.906, 0.144, 1.0)) == "black"     # the bright yellow end of viridis
    assert _text_color((0.267, 0.005, 0.329, 1.0)) == "white"     # its dark purple end

    class Map:
        qs = np.array([0.1, 0.5])
        rs = np.array([0.2, 0.6])
        gain = np.array([[0.0, 0.1], [0.2, 0.4]])
        T, tau = 10, 0.02

    fig = plots.figure_gain_map([Map()])
    ax = fig.axes[0]
    image = ax.images[0]
    for text in ax.texts:
        x, y = text.get_position()
        cell = image.cmap(image.norm(100 * Map.gain[int(round(y)), int(round(x))]))
        assert text.get_color() == _text_color(cell)
    assert {t.get_color() for t in ax.texts} == {"black", "white"}


def test_show_stores_a_sharp_palette_png_at_the_column_width():
    from io import BytesIO

    from PIL import Image

    fig = plots.growth_factor_figure()
    data = plots.png_bytes(fig)
    image = Image.open(BytesIO(data))
    assert image.mode == "P"                                            # 256-colour palette
    assert image.size[0] == plots.PIXEL_DENSITY * plots.display_width(fig)
    assert plots.display_width(fig) <= 700
    assert plots.PIXEL_DENSITY >= 2


def test_symbol_helpers_write_the_prose_symbols():
    assert plots.assign("n0", 400) == "$N_0 = 400$"
    assert plots.assign("epsilon", np.inf) == r"$\varepsilon = \infty$"
    assert plots.params(q=0.3, r=0.6) == "$q = 0.3$, $r = 0.6$"
    assert plots.number(2.5e-7) == r"2.5\times 10^{-7}"
    assert widgets.label_html(r"budget $\varepsilon$") == "budget <i>ε</i>"
    assert plots.html(r"\gamma_c") == "<i>γ</i><sub><i>c</i></sub>"
