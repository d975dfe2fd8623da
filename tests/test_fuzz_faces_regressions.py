"""Regressions of the third fuzzing pass of issue 16 over the plots and widgets layer: one test per distinct cause.

Each was found by ``test_fuzz_learning`` (an AttributeError, IndexError, numpy message or warning from inside a
figure, where a one-line ValueError/TypeError naming the parameter belongs, or a warning at a valid extreme).
"""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from perfpriv import gaussian, leakage, plots, widgets  # noqa: E402


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def _draw(**values):
    fig, axes = plots.new_figure(1, 1, width=2, height=1.5)
    axes[0, 0].plot([0, 1], [0, 1])
    return fig


def test_a_figure_given_a_result_of_the_wrong_type_names_it():
    # was: AttributeError: 'float' object has no attribute 'epsilon' / 'population' / 'names' ...
    for call, word in [(lambda: plots.epsilon_star_map(0.5, q=[0.2], r=[0.5]), "result"),
                       (lambda: plots.population_error([], gamma=1.0, d=3), "run"),
                       (lambda: plots.conventions_figure({"a": None}, gamma=1.0, d=3), "runs"),
                       (lambda: plots.figure_schedule_comparison("x"), "comparison"),
                       (lambda: plots.figure_schedules({"a": 1.0}), "results"),
                       (lambda: plots.figure_gain_map([[1.0]]), "maps"),
                       (lambda: plots.figure_theorem3([None]), "checks"),
                       (lambda: plots.figure_leak_dispersion(3), "results"),
                       (lambda: plots.figure_gamma_star([1.0]), "maps")]:
        with pytest.raises(TypeError, match=word):
            call()


def test_sequences_and_mappings_of_a_figure_are_checked_before_drawing():
    # was: 'int' object is not iterable / not subscriptable, IndexError: list index out of range
    for call, word in [(lambda: plots.growth_factor_figure(settings=0.5), "settings"),
                       (lambda: plots.growth_factor_figure(models=2), "models"),
                       (lambda: plots.growth_factor_figure(epsilon_range=[]), "epsilon_range"),
                       (lambda: plots.roc_figure([0.5, 1.0], labels=[]), "labels"),
                       (lambda: plots.roc_figure([0.5, 1.0], empirical=1.0), "empirical"),
                       (lambda: plots.llr_histogram(np.zeros((5, 2)), [1.0, 2.0], 10, 1.0, labels="x"), "labels"),
                       (lambda: plots.llr_histogram(3.0, [1.0], 10, 1.0), "samples"),
                       (lambda: plots.figure_gain_map([], titles=None), "maps")]:
        with pytest.raises((TypeError, ValueError), match=word):
            call()


def test_level_of_a_run_is_an_index_into_its_levels():
    # was: IndexError: only integers ... are valid indices / index 2 is out of bounds
    run = gaussian.simulate(1.0, tau=0.05, q=0.5, r=0.2, T=2, n0=10, d=2, R=10.0, trials=2, seed=0)
    for bad in (0.5, 2, "x"):
        with pytest.raises((TypeError, ValueError), match="level"):
            plots.population_error(run, gamma=1.0, d=2, level=bad)
    with pytest.raises(ValueError, match="fig_axes"):
        plots.population_error(run, gamma=1.0, d=2, fig_axes=(1.0, 2.0, 3.0))


def test_law_of_the_statistic_beyond_what_an_axis_draws_is_refused():
    # was: RuntimeWarning: invalid value in subtract / divide by zero (a = inf or 0 at gamma = 1e-+300)
    for gamma in (1e-300, 1e300):
        for call in (lambda: plots.llr_law_figure(3.5, 100, gamma, tau=0.3),
                     lambda: plots.tail_bounds_figure(3.0, 100, gamma),
                     lambda: plots.llr_histogram(np.zeros((5, 1)), [2.0], 100, gamma)):
            with pytest.raises(ValueError, match="gamma"):
                call()
    with pytest.raises(ValueError, match="tau"):
        plots.llr_law_figure(3.5, 100, 1.0, tau=1e300)
    with pytest.raises(ValueError, match="samples"):
        plots.tail_bounds_figure(3.0, 100, 1.0, samples=[])


def test_marginal_leak_probability_at_a_huge_noise_scale_under_the_exact_statistic():
    # was: RuntimeWarning: invalid value in subtract (a quadrature window starting at infinity); statistic_figure
    for gamma in (1e200, 1e300):
        assert leakage.marginal_leak_probability(1000, gamma, tau=0.02, d=3, R=10, statistic="exact").p == 0.0
    plots.statistic_figure([1.0, 1e100], n=100)
    with pytest.raises(ValueError, match="gammas"):       # no log axis reaches it
        plots.statistic_figure([1.0, 1e300], n=100)


def test_outlier_bins_hold_records():
    # was: RuntimeWarning: Mean of empty slice (more bins than records)
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="bins"):
        plots.outlier_figure(rng.gamma(3, 1, 20), rng.random(20) < 0.3, 100, 1.0, tau=0.3, bins=100)


def test_log_axes_stop_at_1e100():
    # was: RuntimeWarning: overflow in exp (matplotlib's log-scale margins around a value near 1e300)
    fig, axes = plots.new_figure()
    ax = axes[0, 0]
    ax.plot([1.0, 2.0], [1.0, 3.0], label="curve")
    plots.finish_horizon_axes(ax, 1e300, q=0.3, r=0.6, tau=0.02, T=3, n0=50)       # drawn without the line
    with pytest.raises(ValueError, match="gamma"):
        widgets.draw_survival(gamma=1e300, T=3, d=3, cap=200, n0=50)
    with pytest.raises(ValueError, match="R"):
        widgets.draw_survival(R=1e300, T=3, d=3, cap=200, n0=50)


def test_no_empty_legend_when_nothing_is_labelled():
    # was: UserWarning: No artists with labels found to put in legend (gamma_c = 0 on an unlabelled panel)
    fig, axes = plots.new_figure()
    axes[0, 0].plot([1.0, 2.0], [1.0, 3.0])
    plots.finish_horizon_axes(axes[0, 0], 0.0, q=0.3, r=0.6, tau=0.02, T=3, n0=50)
    assert axes[0, 0].get_legend() is None


def test_schedule_comparison_checks_z_and_exclude():
    # was: 'xerr' must not contain negative values, overflow in exp at z = 1e300, argument of type 'int' ...
    from perfpriv import experiments
    cmp = experiments.compare_schedules({"constant": np.full(2, 0.7), "no privacy": np.full(2, 1e-3)}, q=0.5,
                                        r=0.4, tau=0.02, n0=20, d=3, R=10.0, trials=2, seed=7)
    for kwargs, word in [(dict(z=-1), "z"), (dict(z=1e300), "z"), (dict(z="x"), "z"), (dict(exclude=0), "exclude")]:
        with pytest.raises((TypeError, ValueError), match=word):
            plots.figure_schedule_comparison(cmp, **kwargs)


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
        widgets.mia_explorer(gamma=1e300)


def test_bernoulli_draw_states_the_smallest_budget():
    # was: RuntimeWarning: invalid value in subtract (moving average of infinite errors at epsilon = 1e-300)
    with pytest.raises(ValueError, match="epsilon"):
        widgets.bernoulli_draw(1e-300, q=0.3, r=0.6, T=3, n0=20, trials=2)


# ---------------------------------------------------------------- issue 32 (D, E): faces and sweeps
def test_new_figure_takes_integral_floats_and_refuses_the_rest_naming_the_parameter():
    from perfpriv.plots import new_figure

    assert new_figure(1, 2.0)[1].shape == (1, 2)
    with pytest.raises(ValueError, match=r"^ncols "):
        new_figure(1, 2.5)
    with pytest.raises(TypeError, match=r"^nrows "):
        new_figure(True, 1)


def test_llr_histogram_takes_integral_float_bins_and_refuses_bad_ones():
    from perfpriv import plots

    samples = np.random.default_rng(0).normal(0.5, 1.0, (50, 1))
    assert len(plots.llr_histogram(samples, [3.0], 10, 1.0, bins=10.0).axes) == 1
    for bad, error in ((0, ValueError), (2.5, ValueError), (True, TypeError), (10**12, ValueError)):
        with pytest.raises(error, match=r"^bins "):
            plots.llr_histogram(samples, [3.0], 10, 1.0, bins=bad)


@pytest.mark.parametrize("figure", ["figure1", "figure6"])
def test_figure1_and_6_take_a_generator_seed(figure):
    from perfpriv import plots

    with pytest.raises(TypeError, match=r"^seed "):
        getattr(plots, figure)(seed="1")
    # the generator gives one integer root seed: the same generator state, the same figure data
    from perfpriv._validate import check_root_seed

    a = check_root_seed(np.random.default_rng(5))
    assert a == check_root_seed(np.random.default_rng(5)) and a >= 0


@pytest.mark.parametrize("cells", [{"q": None}, {"q": ["a"]}, {1: [0.5]}, {"q": [[0.1, 0.2], [0.3]]},
                                   {"q": [True, False]}])
def test_map_cells_refuses_cells_that_are_not_numeric_coordinates(cells):
    from perfpriv.sweep import map_cells

    def first(q, keys):
        return q

    with pytest.raises(TypeError, match=r"^cells"):
        map_cells(first, cells)


def test_clipping_figure_refuses_records_beyond_what_an_axis_draws():
    # was: RuntimeWarning: overflow encountered in multiply (the norms of records at 1e200 and beyond)
    with pytest.raises(ValueError, match=r"^Z must be in \[-1e\+100, 1e\+100\]"):
        plots.clipping_figure([[1e300, 1e300], [0.1, 0.2]], 1.0)
    fig = plots.clipping_figure([[1e100, -1e100], [1e-300, 0.2]], 1.0)       # the ends are drawn
    assert len(fig.axes) == 1


def test_llr_histogram_at_a_huge_population_keeps_a_drawable_y_range():
    # was: UserWarning: Attempting to set identical low and high ylims (the law's curve, too narrow for any
    # grid point, has a maximum of 0 on the grid)
    rng = np.random.default_rng(0)
    fig = plots.llr_histogram(rng.normal(0.5, 1, (50, 2)), [2.0, 3.0], 1e12, 1.0)
    low, high = fig.axes[0].get_ylim()
    assert low == 0 and high > 0
