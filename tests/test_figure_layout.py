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

from perfpriv import (behaviour, bernoulli, engine, experiments, feedback, gaussian, gradient, optimize, plots,
                      regression, widgets)
from perfpriv import performative as pf
from perfpriv.plots import COLUMN_WIDTH, layout_problems
from perfpriv.behaviour import Memoryless
from perfpriv.engine import Policy

# the explorers, moved to the ends of their sliders by test_widgets' redraws
from test_widgets import EXPLORERS, _close_figures, _redraw_at_every_extreme  # noqa: E402,F401  (fixture: autouse)


# plain-text symbols that must be mathtext: subscripted names, Greek letters outside $...$
_RAW_SYMBOL = re.compile(r"\b[A-Za-z]_(\{|[A-Za-z0-9])|[γτεκΛμνΣαρβ∞₀₁]")


def _raw_symbols(fig) -> list[str]:
    """Texts of ``fig`` with a symbol outside mathtext (``$...$``)."""
    found = []
    from matplotlib.text import Text

    for text in fig.findobj(Text):
        value = text.get_text()
        if not isinstance(value, str) or not value:
            continue
        outside = re.sub(r"\$[^$]*\$", "", value)
        if _RAW_SYMBOL.search(outside):
            found.append(value)
    return found


#: Smallest font size (points) of a text written inside a panel: the size of the tick labels, about 8 CSS
#: pixels at the column width (chapter 08's maps once wrote "none" at 6.5 pt in every cell, 5 px tall letters).
MIN_ANNOTATION_POINTS = 7.0


def _annotation_problems(fig, tolerance=1.0, *, drawn=False) -> list[str]:
    """Texts written inside the panels (``ax.text``/``ax.annotate``) that a reader could not read.

    :func:`perfpriv.plots.layout_problems` checks titles, axis labels, tick labels and legends; this adds
    the texts inside the axes: two of them must not overlap (labels of neighbouring cells that run into
    each other, "nonenonenone"), none written in data coordinates (a cell's label) may spill out of its
    panel, and none may be smaller than
    :data:`MIN_ANNOTATION_POINTS`. With ``drawn`` the figure was just drawn on its Agg canvas (by
    :func:`perfpriv.plots.layout_problems`, in :func:`perfpriv.plots.style`) and is measured as drawn, not
    drawn a second time.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    if drawn:
        assert isinstance(fig.canvas, FigureCanvasAgg)
        renderer = fig.canvas.get_renderer()
    else:
        with plots.style():
            canvas = FigureCanvasAgg(fig)
            canvas.draw()
            renderer = canvas.get_renderer()
    found, boxes = [], []
    for k, ax in enumerate(fig.axes):
        if not ax.get_visible():
            continue
        panel = ax.get_window_extent(renderer)
        for text in ax.texts:
            if not text.get_visible() or not text.get_text().strip():
                continue
            label = repr(text.get_text()[:30])
            if text.get_fontsize() < MIN_ANNOTATION_POINTS - 1e-9:
                found.append(f"axes {k}: text {label} is {text.get_fontsize():g} pt, below "
                             f"{MIN_ANNOTATION_POINTS:g} pt")
            b = text.get_window_extent(renderer)
            in_data = text.get_transform() == ax.transData      # a cell label, not a label placed beside the axes
            if in_data and (b.x0 < panel.x0 - tolerance or b.x1 > panel.x1 + tolerance
                                       or b.y0 < panel.y0 - tolerance or b.y1 > panel.y1 + tolerance):
                found.append(f"axes {k}: text {label} spills out of its panel")
            boxes.append((k, label, b))
    for i, (ka, la, a) in enumerate(boxes):
        for kb, lb, b in boxes[i + 1:]:
            if min(a.x1, b.x1) - max(a.x0, b.x0) > tolerance and min(a.y1, b.y1) - max(a.y0, b.y0) > tolerance:
                found.append(f"axes {ka} text {la} overlaps axes {kb} text {lb}")
    return found


def _failures(fig, what) -> list[str]:
    """What :func:`_check` finds wrong with ``fig``: one line per failed check (empty when it is clean)."""
    # layout_problems draws the figure (the costly part: constrained layout and mathtext); the texts inside
    # the panels are measured on that same drawing
    failures = []
    problems = layout_problems(fig)
    problems += _annotation_problems(fig, drawn=True)
    if problems:
        failures.append(f"{what}: " + "; ".join(problems))
    raw = _raw_symbols(fig)
    if raw:
        failures.append(f"{what}: symbols outside mathtext: {raw[:5]}")
    if not fig.get_figwidth() <= COLUMN_WIDTH + 1e-9:
        failures.append(f"{what}: {fig.get_figwidth():.2f} in is wider than the column")
    return failures


def _check(fig, what):
    failures = _failures(fig, what)
    assert not failures, "\n".join(failures)


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


def test_annotation_check_sees_cell_labels_that_run_into_each_other_shrink_or_spill():
    # chapter 08's old maps: "none" in every cell of maps side by side, at 6.5 pt; at a legible size the
    # labels of neighbouring cells run into each other
    for size, seen in ((6.5, "6.5 pt"), (8.0, "overlaps")):
        fig, axes = plots.new_figure(1, 5, width=2.25, height=2.35)
        for ax in axes[0]:
            ax.imshow(np.zeros((7, 7)), aspect="auto")
            for a, b in np.ndindex(7, 7):
                ax.text(b, a, "none", ha="center", va="center", fontsize=size)
        problems = _annotation_problems(fig)
        assert any(seen in p and "'none'" in p for p in problems), (size, problems[:3])
    fig, axes = plots.new_figure(1, 1, width=3.0, height=2.5)
    axes[0, 0].set_xlim(0, 1)
    axes[0, 0].text(0.98, 0.5, "a label that does not fit", fontsize=8)       # runs past the right edge
    assert any("spills out" in p for p in _annotation_problems(fig))
    fig, axes = plots.new_figure(1, 1, width=3.0, height=2.5)
    axes[0, 0].imshow(np.zeros((2, 2)))
    axes[0, 0].text(0, 0, "0.12", ha="center", va="center", fontsize=8)
    axes[0, 0].text(1, 1, "0.5", ha="center", va="center", fontsize=8)
    assert _annotation_problems(fig) == []


def test_feedback_maps_mark_no_finite_optimum_with_the_colour_key_not_with_text():
    from matplotlib.patches import Rectangle

    maps = _fb_maps()
    fig = plots.figure_feedback_maps(maps, title=r"$\varepsilon^*$ maps")
    assert not any(ax.texts for ax in fig.axes)
    labels = [t.get_text() for legend in fig.legends for t in legend.get_texts()]
    assert any("no finite optimum" in label for label in labels), labels
    for j, m in enumerate(maps):
        for i, values in enumerate((m.theory, m.simulated)):
            ax = fig.axes[i * len(maps) + j]
            none = ~(np.asarray(values) != m.levels[m.none]) | ~np.isfinite(values)
            hatched = [p for p in ax.patches if isinstance(p, Rectangle) and p.get_hatch()]
            assert len(hatched) == none.sum()
            cells = {(int(round(p.get_y() + 0.5)), int(round(p.get_x() + 0.5))) for p in hatched}
            assert cells == set(zip(*map(lambda a: a.tolist(), np.nonzero(none))))


def test_raw_symbol_check_sees_plain_text_subscripts_and_greek():
    fig, axes = plots.new_figure()
    axes[0, 0].set_xlabel("population before the round, N_{t-1}")
    axes[0, 0].set_ylabel(r"growth factor $C(\gamma)$")
    axes[0, 0].set_title("γ_c = 1.2")
    assert sorted(_raw_symbols(fig)) == ["population before the round, N_{t-1}", "γ_c = 1.2"]


#: controls that act only under one entry of a menu (draw_feedback reads the parameter of the chosen behaviour
#: only): their extremes are drawn with that entry chosen, as a reader meets them; at the default entry they
#: would redraw the defaults' figure
ACTS_UNDER = {("feedback_explorer", "spread"): ("behaviour", "heterogeneous (spread)"),
              ("feedback_explorer", "tolerance"): ("behaviour", "budget-aware (tolerance ρ)"),
              ("feedback_explorer", "kappa"): ("behaviour", "contagion (κ)")}


@pytest.mark.parametrize("name", EXPLORERS)
def test_explorer_figure_is_clean_at_defaults_and_at_every_slider_extreme(name):
    # test_widgets' redraws at every slider extreme, with all their checks, and the layout of each figure checked as
    # it is drawn: one drawing of each explorer serves both (test_widgets' own test skips itself in a run with this
    # one). The layout failures are reported together at the end, so that none hides a redraw check that follows.
    failures = []

    def at_extreme(explorer, defaults, key, value):
        if value == defaults[key]:
            return    # a menu's default entry: the figure at the defaults, checked above
        values = dict(defaults, **dict([ACTS_UNDER[name, key]] if (name, key) in ACTS_UNDER else []), **{key: value})
        # the figure the redraw just drew (kept by test_widgets._draw_once), or, under ACTS_UNDER, a new drawing
        failures.extend(_failures(explorer._draw(**values), f"{name} with {key}={value!r}"))

    _redraw_at_every_extreme(name, at_defaults=lambda fig: failures.extend(_failures(fig, f"{name} at its defaults")),
                             at_extreme=at_extreme)
    assert not failures, "\n".join(failures)


def _ridge_searches(qs, rs, gammas, *, T, n0, trials, d, seed, cap):
    """The simulated and mean-field γ* searches of the ridge release over a (q, r) grid (chapter 09's map)."""
    mech = regression.RidgeRelease(gammas, tau=0.02, data=regression.RidgeData(d=d))
    cells = behaviour.Memoryless(q=np.asarray(qs, float)[:, None], r=np.asarray(rs, float)[None, :])
    return (optimize.level_search(mech, cells, T=T, n0=n0, trials=trials, seed=seed, policy=Policy(cap=cap)),
            optimize.level_search(mech, cells, T=T, n0=n0, method="mean_field", policy=Policy(cap=cap)))


def _schedule_figure():
    best = optimize.optimal_schedule(gaussian.GaussianMean(1.0, tau=0.02, d=12, R=10.0),
                                     behaviour.Memoryless(q=0.3, r=0.6), T=6, n0=200,
                                     search=dict(starts="constant", polish=0))
    return plots.figure_schedules({"optimal": best}, title="test")


def _schedule_comparison_figure():
    T = 10
    cmp = experiments.compare_schedules({"constant": np.full(T, 0.7), "decay": np.geomspace(1.1, 0.3, T),
                                         "no privacy": np.full(T, 1e-3)}, gaussian.GaussianMean(tau=0.02, d=12, R=10.0),
                                        behaviour.Memoryless(q=0.5, r=0.4), n0=200, trials=50, seed=7)
    return plots.figure_schedule_comparison(cmp, title="test", exclude=("no privacy",))


def _figure3bc():
    """Figs. 3b-3c at small sizes: the paper's two (q, r) panels (seeds 0 and 1), τ = 0.02 and 0.05."""
    mechs = [gaussian.GaussianMean([0.5, 5.0], tau=tau, d=12, R=10.0) for tau in (0.02, 0.05)]
    return plots.figure3bc([experiments.growth_curves(mechs, behaviour.Memoryless(q=q, r=r), n0=200, trials=2, seed=k)
                            for k, (q, r) in enumerate(((0.11, 0.52), (0.45, 0.11)))])


def _figure1():
    """Fig. 1 at small sizes: the paper's two (q, r) rows (seeds 0 and 1) over 20 rounds from N_0 = 400."""
    users = [behaviour.Memoryless(q=q, r=r) for q, r in ((0.6, 0.3), (0.3, 0.6))]
    return plots.figure1(experiments.curve_runs(bernoulli.RandomizedResponse([0.1, 1.0, np.inf]), users, T=20,
                                                trials=2))


def _epsilon_star_figure(rule):
    """Fig. 2 (leak) or 7 (agnostic) on a 3 x 3 grid of (q, r) over 10 rounds, μ_T ~ U(0.5, 1)."""
    Q, R = np.meshgrid([0.2, 0.5, 0.8], [0.2, 0.5, 0.8], indexing="ij")
    best = optimize.optimal_epsilon(bernoulli.RandomizedResponse([0.5, np.inf], mu=(0.5, 1.0)),
                                    behaviour.Memoryless(q=Q, r=R, rule=rule), T=10, n0=400, trials=2, seed=0)
    return (plots.figure2 if rule == "leak" else plots.figure7)(best)


def _final_error_figure():
    """The final error against ε of two (q, r) panels over 10 rounds from N_0 = 400."""
    return plots.final_error_figure([experiments.final_error_curve(bernoulli.RandomizedResponse([0.1, 1.0, np.inf]),
                                                                   behaviour.Memoryless(q=q, r=r), T=10, trials=3)
                                     for q, r in ((0.3, 0.6), (0.6, 0.3))])


FIGURES = {
    "figure1": _figure1,
    "figure2": lambda: _epsilon_star_figure("leak"),
    "figure7": lambda: _epsilon_star_figure("agnostic"),
    "growth_factor_figure": lambda: plots.growth_factor_figure(),
    "final_error_figure": _final_error_figure,
    "clipping_figure": lambda: plots.clipping_figure(np.random.default_rng(0).normal(0, 2, (40, 2)), 2.0),
    "algorithm1_runs": lambda: plots.algorithm1_runs(gaussian.simulate([0.5, 2.0, 8.0], tau=0.05, q=0.5, r=0.2, T=5,
                                                                       n0=200, d=12, R=10.0, trials=2, seed=0)),
    "llr_histogram": lambda: plots.llr_histogram(np.random.default_rng(0).normal(0.5, 1, (200, 3)),
                                                 [2.0, 3.0, 5.0], 100, 1.0),
    "tail_bounds_figure": lambda: plots.tail_bounds_figure(3.0, 100, 1.0),
    "figure3a": lambda: plots.figure3a(experiments.figure3a_simulation(
        gaussian.GaussianMean([0.5, 1.0, 2.0, 4.0], tau=0.05, d=12, R=10.0), 100, [0.05, 0.5], rounds=3)),
    "roc_figure": lambda: plots.roc_figure([0.5, 1.0, 2.0]),
    "outlier_figure": lambda: plots.outlier_figure(np.random.default_rng(0).gamma(3, 1, 300),
                                                   np.random.default_rng(1).random(300) < 0.3, 100, 1.0, tau=0.3),
    "statistic_figure": lambda: plots.statistic_figure(np.geomspace(0.3, 10, 8),
                                                       populations={"paper": np.full((2, 6), 100.0),
                                                                    "exact": np.full((2, 6), 90.0)},
                                                       run_gamma=2.0, q=0.3, r=0.6),
    "llr_law_figure": lambda: plots.llr_law_figure(3.5, 100, 1.0, tau=0.3),
    "exact_floor_figure": lambda: plots.exact_floor_figure(experiments.exact_floor_check([20, 100, 400], rounds=5),
                                                           gammas=np.geomspace(0.5, 500, 8)),
    "conventions_figure": lambda: plots.conventions_figure(
        {c: engine.simulate(gaussian.GaussianMean(1.0, tau=0.05, d=12, R=10.0), Memoryless(q=0.5, r=0.1), T=8, n0=30, trials=3, conventions=c, seed=0)
         for c in ("paper", "authors")}, gamma=1.0, d=12),
    "figure3bc": _figure3bc,
    "figure_theorem3": lambda: plots.figure_theorem3([experiments.theorem3_check(
        gaussian.GaussianMean(2.0, tau=0.02, d=12, R=10.0), behaviour.Memoryless(q=0.3, r=0.6), sizes=(2, 100),
        trials=20)] * 3),
    "figure_leak_dispersion": lambda: plots.figure_leak_dispersion([experiments.leak_dispersion(2.0, tau=0.02, n=100,
                                                                                                trials=20)] * 2),
    "figure_mean_field": lambda: plots.figure_mean_field(experiments.mean_field_paths(
        gaussian.GaussianMean(2.0, tau=0.02, d=12, R=10.0), behaviour.Memoryless(q=0.3, r=0.6), T=5, trials=2,
        sizes=[10, 1000])),
    "figure_horizon": lambda: plots.figure_horizon(experiments.horizon_curves(
        gaussian.GaussianMean(np.geomspace(0.2, 20, 10), tau=0.02, d=12, R=10.0), behaviour.Memoryless(q=0.3, r=0.6),
        empirical=False)),
    "figure_gamma_star": lambda: plots.figure_gamma_star([experiments.gamma_star_map(
        gaussian.GaussianMean(tau=0.02, d=12, R=10.0),
        behaviour.Memoryless(q=np.array([0.1, 0.5])[:, None], r=np.array([0.2, 0.6])[None, :]),
        maps=experiments.THEORY_MAPS)]),
    "figure_schedules": _schedule_figure,
    "figure_schedule_comparison": _schedule_comparison_figure,
}


def _fb_paths():
    return [feedback.trajectories(feedback.family(n, p), bernoulli.RandomizedResponse([0.3]), q=0.2, r=0.8, T=6, n0=200,
                                  trials=4, seed=3)
            for n, p in (("memory", 3), ("contagion", 1.0))]

def _fb_maps():
    g = np.linspace(0.2, 0.8, 2)
    rr = bernoulli.RandomizedResponse([0.5, 2.0], mu=(0.5, 1.0))
    return [feedback.epsilon_map(feedback.family(n, p), rr, g, g, T=8, n0=50, trials=4, seed=8)
            for n, p in (("paper", None), ("memory", 3), ("contagion", 1.0))]

def _thresholds():
    ks = np.arange(1, 4)
    return {"memory": (feedback.family("memory", 3), ks, feedback.threshold_curve("memory", ks, q=0.3, r=0.6)),
            "contagion": (feedback.family("contagion", 1.0), np.linspace(0, 2, 5),
                          feedback.threshold_curve("contagion", np.linspace(0, 2, 5), q=0.3, r=0.6))}

def _retraining():
    sq = pf.PerformativeProblem.squared(m=1.0, A=0.5)
    return {"RRM, $\\varepsilon$ = 0.5": pf.repeated_risk_minimization(sq, [0.0], T=8)}, pf.PerformativeProblem.linear(m=1.0, A=0.3)

def _clients():
    return pf.GaussianClients.example(N=10, m_mean=10.0, eps_mean=0.9)

#: figures of the chapters beyond the paper (08 richer feedback, 10 performative learning), at toy sizes
FIGURES_BEYOND = {
    "figure_effective_q": lambda: plots.figure_effective_q(_fb_paths()),
    "figure_feedback_paths": lambda: plots.figure_feedback_paths(
        feedback.trajectories(feedback.family("memory", 3), bernoulli.RandomizedResponse([0.3, np.inf]), q=0.3,
                              r=0.6, T=6, n0=100, trials=4, seed=4)),
    "figure_thresholds": lambda: plots.figure_thresholds(_thresholds(), paper=bernoulli.critical_epsilon(q=0.3, r=0.6)),
    "figure_feedback_maps": lambda: plots.figure_feedback_maps(_fb_maps(), title=r"$\varepsilon^*$ maps"),
    "figure_retraining": lambda: plots.figure_retraining(*_retraining(), title="retraining"),
    "figure_level_response": lambda: plots.figure_level_response(
        pf.level_response(gaussian.GaussianMean(np.geomspace(0.01, 10, 8), tau=0.02, d=12, R=10.0),
                          behaviour.Memoryless(q=0.3, r=0.6), T=10, n0=500), deployed=[2, 5], title="levels"),
    "figure_fedavg_convergence": lambda: plots.figure_fedavg_convergence(
        {"full": pf.expected_distance(_clients(), pf.FedAvg(E=2), T=200)},
        {"full": pf.p_fedavg(_clients(), pf.FedAvg(E=2), T=50, trials=5, seed=3)}, title="P-FedAvg"),
    "figure_fedavg_factors": lambda: plots.figure_fedavg_factors(
        {"local steps $E$": ([1, 2, 5], {"full": [pf.expected_distance(_clients(), pf.FedAvg(E=E), T=100).sq_distance[-1]
                                                   for E in (1, 2, 5)]}),
         "clients $K$": ([2, 5], {"II": [pf.expected_distance(_clients(), pf.FedAvg(E=2, scheme="II", K=K),
                                                              T=100).sq_distance[-1] for K in (2, 5)]}),
         "spread": ([0, 2], {"data": [1.0, 2.0]})}, title="factors"),
    "figure_bilevel": lambda: (lambda mixed: plots.figure_bilevel(
        {"$s = 0.5\\,s^*$": pf.fbi_rrm(mixed.with_sensitivities(0.25 * mixed.threshold(), 1.5 * mixed.threshold()),
                                       rounds=20)}, mixed, title="FBi-RRM"))(
        pf.BilevelRegression.synthetic(eps_c=0.5, eps_d=3.0, lam_x=1.0, lam_y=1.0, seed=0)),
    "figure_participation": lambda: plots.figure_participation(
        {"$s_\\varepsilon$ = 0": engine.simulate(pf.PrivateFederatedRound(np.geomspace(0.15, 8, 4), tau=0.3, R=10.0,
                                                                          clients=pf.ClientLaw(m=2.0, eps=0.8)),
                                                 behaviour.Memoryless(q=0.5, r=0.2), T=8, n0=20, policy=Policy(cap=60),
                                                 trials=3, seed=1)},
        title="both loops"),
}
def _gd_run():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((30, 3)); y = np.sign(rng.standard_normal(30))
    return gradient.noisy_gd(X, y, gradient.Training(loss="logistic", lam=1.0, clip=2.0, steps=4, step_size=0.1),
                             rho=1.0, seed=1)

def _transcripts():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((20, 3)); y = np.sign(rng.standard_normal(20))
    return [gradient.simulate_transcripts(X, y, gradient.Training(loss="logistic", lam=1.0, clip=c, steps=4,
                                                                  step_size=0.1), index=0, runs=200, rho=0.1, seed=2)
            for c in (0.05, 2.0)]

#: figures of chapter 09 (learning tasks beyond the mean), at toy sizes
FIGURES_CH09 = {
    "figure_ridge_sensitivity": lambda: plots.figure_ridge_sensitivity(
        regression.sensitivity_profile([10, 100], d=3, lam=0.05, x_bound=5.0, y_bound=5.0, seed=1)),
    "figure_one_round": lambda: plots.figure_one_round(regression.one_round_check(
        regression.RidgeRelease(np.geomspace(0.001, 0.064, 3), tau=0.02, data=regression.RidgeData(d=3)), [16, 128], trials=10, seed=2)),
    "figure_gamma_star_map": lambda: plots.figure_gamma_star_map(
        *_ridge_searches([0.2, 0.6], [0.2, 0.6], np.r_[1e-4, 0.001, 0.01], T=4, n0=50, trials=3, d=3, seed=3, cap=200),
        q=[0.2, 0.6], r=[0.2, 0.6]),
    "figure_published_privacy": lambda: plots.figure_published_privacy(
        regression.published_privacy(np.geomspace(0.2, 20, 3), tau=0.02, n=100, d=3, records=200, seed=4)),
    "figure_gd_utility": lambda: plots.figure_gd_utility(
        [gradient.utility_check([2.0, 20.0], gradient.UtilityData(n=30, d=2), loss="squared", steps=5, runs=10,
                                seed=5)]),
    "figure_individual_privacy": lambda: plots.figure_individual_privacy(_gd_run(), tau=0.02),
    "figure_transcript_checks": lambda: plots.figure_transcript_checks(_transcripts(), ["clipped", "driven"],
                                                                        tau=0.02),
    "figure_long_run_utility": lambda: plots.figure_long_run_utility(gradient.long_run_utility(
        gradient.PrivateGD(np.r_[0.1, 1.0, np.inf], tau=0.02), Memoryless(q=[0.0, 0.5], r=[0.0, 0.3]), T=4, n0=50,
        trials=3, policy=Policy(cap=200), seed=6)),
}
FIGURES.update(FIGURES_BEYOND)
FIGURES.update(FIGURES_CH09)


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
