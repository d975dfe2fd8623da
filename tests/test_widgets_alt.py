"""The live explorers' figures describe themselves: the alt text names the explorer, what it plots, the current
values and what the drawn curves do, follows the sliders, and is read correctly off a figure of known lines.

The page copies the text of an explorer's visually hidden ``.pp-figure-alt`` element to its figure's alt
(``book/_static/perfpriv.js``); ``tests/rendered_checks.py`` checks that in the browser.
"""

import html
import re

import pytest

from perfpriv import widgets
from perfpriv.plots import new_figure
from perfpriv.widgets._describe import describe_figure, figure_alt, format_value, plain_text

EXPLORERS = [name for name in widgets.__all__ if name.endswith("_explorer")]


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    import matplotlib.pyplot as plt

    plt.close("all")


def _toy_explorer(**kwargs):
    """An explorer of one known line, y = a * x over x = 0..10, with a slider for a and a check box."""
    def draw(a, log):
        fig, axes = new_figure(1, 1, width=3, height=2)
        axes[0, 0].plot([0, 5, 10], [0, 5 * a, 10 * a], label=r"slope $\gamma$")
        axes[0, 0].set(xlabel="round $t$", ylabel="population $N_t$")
        return fig

    controls = {"a": widgets.float_slider(r"slope $\gamma$", 2.0, 0.5, 4.0, 0.5),
                "log": widgets.checkbox("log scale", False)}
    return widgets.Explorer("Toy growth", controls, draw, **kwargs)


def _hidden_text(explorer) -> str:
    match = re.fullmatch(r'<span class="pp-figure-alt" style="[^"]*">(.*)</span>', explorer.alt_text.value, re.S)
    assert match, explorer.alt_text.value
    return html.unescape(match.group(1))


def test_alt_names_the_title_what_is_plotted_and_the_current_values():
    explorer = _toy_explorer(plotted="the population over the rounds")
    assert explorer.alt.startswith("Toy growth: the population over the rounds, for slope γ = 2, log scale: no. ")
    assert "population Nₜ against round t: slope γ from 0 to 20." in explorer.alt
    # the same text, escaped, in the visually hidden element the page copies to the image's alt
    assert _hidden_text(explorer) == explorer.alt
    assert "position:absolute" in explorer.alt_text.value and "clip:" in explorer.alt_text.value
    assert explorer.alt_text in explorer.children


def test_alt_follows_the_sliders():
    explorer = _toy_explorer(plotted="the population over the rounds")
    before = explorer.alt
    explorer.controls["a"].value = 3.5
    explorer.controls["log"].value = True
    assert explorer.alt != before
    assert "slope γ = 3.5, log scale: yes" in explorer.alt
    assert "slope γ from 0 to 35." in explorer.alt
    assert _hidden_text(explorer) == explorer.alt


def test_alt_without_plotted_still_names_the_explorer():
    assert _toy_explorer().alt.startswith("Figure of Toy growth, for slope γ = 2")


def test_a_refused_redraw_keeps_the_description_of_the_figure_still_shown():
    def draw(a):
        if a > 3:
            raise ValueError("a too large")
        fig, axes = new_figure(1, 1, width=3, height=2)
        axes[0, 0].plot([0, 1], [0, a], label="line")
        return fig

    explorer = widgets.Explorer("Toy", {"a": widgets.float_slider("a", 1.0, 0.5, 4.0, 0.5)}, draw, plotted="a line")
    explorer.controls["a"].value = 4.0
    assert "a too large" in explorer.message.value
    assert explorer.alt == "Toy: a line, for a = 1. a panel: line from 0 to 1."


def test_describe_figure_reads_start_end_and_inner_extremes_of_known_lines():
    fig, axes = new_figure(1, 2, width=6, height=2)
    left, right = axes[0, 0], axes[0, 1]
    left.plot([0, 1, 2, 3, 4], [400, 600, 900, 700, 500], label=r"mean $N_t$")      # a highest point inside
    left.plot([0, 1, 2, 3, 4], [10, 4, 2, 3, 8], label="error")                     # a lowest point inside
    left.plot([0, 1, 2, 3, 4], [1, 2, 3, 4, 5], label="_run")                       # unlabelled runs: counted
    left.plot([0, 1, 2, 3, 4], [2, 3, 4, 5, 7], label="_run")
    left.axhline(0.7, label="$1 - q$")                                               # a labelled reference line
    left.axvline(2.5, color="k")                                                     # unlabelled reference: left out
    left.set(xlabel="round $t$", ylabel="population $N_t$", title="growth")
    right.plot([0.1, 1.0, 10.0], [3.0, 1.0, 2.0], label=r"$\gamma^* = 1$")
    right.axvline(1.0, label=r"$\gamma_c$")
    right.set(xlabel=r"noise scale $\gamma$ (per user)", ylabel="cumulative error")
    fig.suptitle(r"$q = 0.3$, $\tau = 0.02$")
    text = describe_figure(fig)
    assert text == ("q = 0.3, τ = 0.02. "
                    "left: population Nₜ against round t (growth): mean Nₜ from 400 to 500, highest 900 at t = 2; "
                    "error from 10 to 8, lowest 2 at t = 2; 1 − q at 0.7; 2 curves from 1–2 to 5–7. "
                    "right: cumulative error against noise scale γ (per user): "
                    "γ* = 1 from 3 to 2, lowest 1 at γ = 1; γ_c at γ = 1.")


def test_describe_figure_counts_the_curves_beyond_the_first_few_and_describes_one_unlabelled_curve():
    fig, axes = new_figure(1, 1, width=3, height=2)
    ax = axes[0, 0]
    for k in range(6):
        ax.plot([0, 1], [k, k + 1], label=f"line {k}")
    ax.plot([0, 1, 2], [5, 1, 4])
    ax.set(xlabel="$x$", ylabel="$y$")
    text = describe_figure(fig)
    assert "line 3 from 3 to 4; 2 more; a curve from 5 to 4, lowest 1 at x = 1." in text
    assert "line 4" not in text


def test_describe_figure_of_a_figure_without_data():
    fig, _ = new_figure(1, 1, width=3, height=2)
    assert describe_figure(fig) == "an empty figure."


@pytest.mark.parametrize("label, text", [
    ("population $N_t$", "population Nₜ"),
    (r"$\varepsilon_c = 0.693$", "ε_c = 0.693"),
    (r"$\gamma^*$ = 0.56", "γ* = 0.56"),
    (r"$\|\theta_t - \theta_{PS}\|^2$", "‖θₜ − θ_PS‖²"),
    (r"$\Lambda \mid Z \sim \mathcal{N}(a, 2a)$", "Λ | Z ~ N(a, 2a)"),
    (r"$\bar\varepsilon = 0.8$", "ε̄ = 0.8"),
    ("<i>q</i> (leave)", "q (leave)"),
    ("initial <i>N</i>₀", "initial N₀"),
    ("two\nlines", "two; lines"),
    ("costs $5 and $6", "costs 5 and 6"),
])
def test_plain_text_writes_tex_and_html_labels_as_words_and_unicode(label, text):
    assert plain_text(label) == text


@pytest.mark.parametrize("value, text", [
    (True, "yes"), (False, "no"), (2000, "2000"), (3.0, "3"), (0.0056234, "0.00562"), (float("inf"), "∞"),
    (float("-inf"), "−∞"), (float("nan"), "undefined"), ("memory (k)", "memory (k)"),
])
def test_format_value(value, text):
    assert format_value(value) == text


def test_bad_input_is_refused_naming_the_parameter():
    with pytest.raises(ValueError, match="plotted"):
        _toy_explorer(plotted="  ")
    with pytest.raises(TypeError, match="plotted"):
        _toy_explorer(plotted=3)
    fig, _ = new_figure(1, 1, width=3, height=2)
    with pytest.raises(ValueError, match="title"):
        figure_alt("", "a line", "a = 1", fig)
    with pytest.raises(ValueError, match="plotted"):
        figure_alt("Toy", "", "a = 1", fig)
    with pytest.raises(TypeError, match="values"):
        figure_alt("Toy", "a line", None, fig)
    with pytest.raises(TypeError, match="fig"):
        describe_figure("figure.png")
    with pytest.raises(TypeError, match="text"):
        plain_text(None)


@pytest.mark.parametrize("name", EXPLORERS)
def test_every_chapter_explorer_says_what_it_plots_at_which_values(name):
    explorer = getattr(widgets, name)()
    assert explorer.plotted, f"{name} gives no plotted="
    assert explorer.alt.startswith(f"{explorer.title}: {explorer.plotted}, for ")
    for control in explorer.controls.values():
        assert plain_text(control.description) in explorer.alt
    # the figure's own curves, in words: a panel "y against x" and at least one curve's first and last value
    assert re.search(r"against .+?: .* from \S+ to \S+", explorer.alt), explorer.alt
    # no TeX, no tag, no undefined number left
    assert not re.search(r"[$\\{}]|</?[a-z]|\bnan\b|undefined", explorer.alt), explorer.alt
    assert _hidden_text(explorer) == explorer.alt
