"""perfpriv.plots: what a figure refuses, by name, before it draws, and the ranges it draws without a warning.

A figure given a result of the wrong type, a sequence or mapping it cannot read, an
index outside its levels, (q, r) pairs it cannot unpack, or a value beyond what an axis
can draw raises one ValueError/TypeError naming its own parameter (not an
AttributeError, IndexError, numpy's message or a warning from deep inside); at valid
extremes it draws without a warning. Every test runs with warnings as errors and closes
its figures.
"""

import matplotlib.pyplot as plt
import numpy as np
import pytest

from perfpriv import bernoulli, engine, experiments, feedback, gaussian, leakage, optimize, plots, widgets
from perfpriv.behaviour import Memoryless
from perfpriv._validate import check_root_seed
from perfpriv.performative import PerformativeProblem
from perfpriv.plots import new_figure

pytestmark = pytest.mark.usefixtures("no_warnings")


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


# ----------------------------------------------------------------------- sizes, helpers and results


@pytest.mark.parametrize("kwargs, word", [(dict(nrows=10**6), "nrows"), (dict(ncols=0), "ncols"),
                                          (dict(nrows=True), "nrows"), (dict(width=-1.0), "width"),
                                          (dict(height=float("nan")), "height")])
def test_new_figure_refuses_panel_counts_and_sizes_no_page_can_show(kwargs, word):
    # a boolean is a wrong type (TypeError), the other values are out of range (ValueError)
    with pytest.raises(TypeError if kwargs.get("nrows") is True else ValueError, match=word):
        new_figure(**kwargs)


def test_plot_helpers_check_their_figure_axes_text_and_number_arguments():
    for call, word in ((lambda: plots.png_bytes(0), "fig"), (lambda: plots.display_width(None), "fig"),
                       (lambda: plots.plain_log("x"), "ax"), (lambda: plots.number(1.0, fmt=3), "fmt"),
                       (lambda: plots.params(q="x"), "q"), (lambda: plots.html(None), "expr")):
        with pytest.raises(TypeError, match=word):
            call()
    fig, _ = plots.new_figure()
    with pytest.raises(ValueError, match="density"):              # png_bytes(density=1e300): pybind11's message
        plots.png_bytes(fig, density=1e300)


def test_figures_check_their_results_and_indices_before_drawing():
    with pytest.raises(TypeError, match="paths"):                 # figure_retraining(paths=0): AttributeError
        plots.figure_retraining(0, PerformativeProblem.squared(m=1.0, A=0.5))
    with pytest.raises(TypeError, match="trajectories"):          # figure_effective_q(trajectories=0)
        plots.figure_effective_q(0)
    with pytest.raises(TypeError, match="family"):                # family_label(None): AttributeError
        plots.family_label(None)
    memory = feedback.family("heterogeneous", 0.5)                 # eps_c = inf (a class never leaves) is drawn
    plots.figure_thresholds({"h": (memory, [0.5, 1.0], [1.0, np.inf])}, paper=1.0)
    assert plots.number(np.array(2.5)) == "2.5"                     # a 0-d array is a number


# ------------------------ figure helpers: arguments checked before drawing, ranges an axis can draw


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
                       (lambda: plots.growth_factor_figure(rules=2), "rules"),
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
    cmp = experiments.compare_schedules({"constant": np.full(2, 0.7), "no privacy": np.full(2, 1e-3)},
                                        gaussian.GaussianMean(tau=0.02, d=3, R=10.0), Memoryless(q=0.5, r=0.4), n0=20,
                                        trials=2, seed=7)
    for kwargs, word in [(dict(z=-1), "z"), (dict(z=1e300), "z"), (dict(z="x"), "z"), (dict(exclude=0), "exclude")]:
        with pytest.raises((TypeError, ValueError), match=word):
            plots.figure_schedule_comparison(cmp, **kwargs)


def test_new_figure_takes_integral_floats_and_refuses_the_rest_naming_the_parameter():
    assert new_figure(1, 2.0)[1].shape == (1, 2)
    with pytest.raises(ValueError, match=r"^ncols "):
        new_figure(1, 2.5)
    with pytest.raises(TypeError, match=r"^nrows "):
        new_figure(True, 1)


def test_llr_histogram_takes_integral_float_bins_and_refuses_bad_ones():
    samples = np.random.default_rng(0).normal(0.5, 1.0, (50, 1))
    assert len(plots.llr_histogram(samples, [3.0], 10, 1.0, bins=10.0).axes) == 1
    for bad, error in ((0, ValueError), (2.5, ValueError), (True, TypeError), (10**12, ValueError)):
        with pytest.raises(error, match=r"^bins "):
            plots.llr_histogram(samples, [3.0], 10, 1.0, bins=bad)


@pytest.mark.parametrize("rule", ["leak", "agnostic"])
def test_the_runs_of_figures_1_and_6_take_a_generator_seed(rule):
    # the seed was figure1's and figure6's until they took only their runs (issue 31): now experiments.curve_runs'
    mech, users = bernoulli.RandomizedResponse([1.0]), [Memoryless(q=0.6, r=0.3, rule=rule), Memoryless(q=0.3, r=0.6,
                                                                                                      rule=rule)]
    with pytest.raises(TypeError, match=r"^seed "):
        experiments.curve_runs(mech, users, seed="1", T=3, n0=20, trials=2)
    # the generator gives one integer root seed: the same generator state, the same figure data
    a = check_root_seed(np.random.default_rng(5))
    assert a == check_root_seed(np.random.default_rng(5)) and a >= 0
    drawn = experiments.curve_runs(mech, users, seed=np.random.default_rng(5), T=3, n0=20, trials=2)
    again = experiments.curve_runs(mech, users, seed=a, T=3, n0=20, trials=2)
    assert all(np.array_equal(x.sq_error, y.sq_error) for x, y in zip(drawn, again))


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


# --------------------------------------------------------------- the figures that run an experiment


_SMALL = {"T": 3, "n0": 20, "trials": 2}


@pytest.mark.parametrize("name, param", [
    ("figure1", "results"), ("figure6", "results"), ("final_error_figure", "results"), ("figure2", "result"),
    ("figure7", "result"), ("figure3a", "simulated"), ("exact_floor_figure", "check"), ("figure3bc", "curves"),
    ("algorithm1_runs", "run"),
    ("figure_mean_field", "paths"), ("figure_horizon", "curves")])
def test_a_figure_that_runs_an_experiment_given_a_result_of_the_wrong_type_names_it(name, param):
    # they read its fields deep inside: AttributeError ('int' object has no attribute 'epsilon') or len() errors
    # (figure3bc, figure_mean_field, figure_horizon, figure3a and algorithm1_runs take only a result since issue 31)
    figure = getattr(plots, name)
    for bad in (0, "x", [[1.0], [1.0, 2.0]]):
        with pytest.raises(TypeError, match=param):
            figure(**{param: bad})
    if param in ("results", "curves") and name != "figure_horizon":
        with pytest.raises(ValueError, match=param):
            figure(**{param: []})


@pytest.mark.parametrize("call, param", [
    (lambda v: plots.growth_factor_figure(settings=v), "settings")])
def test_pairs_of_rates_are_checked_before_they_are_unpacked(call, param):
    # 'int' object is not iterable, not enough values to unpack, 'float' object is not subscriptable
    pair = [(0.6, 0.3)] if param == "settings" else (0.6, 0.3)
    one = (lambda v: [v]) if param == "settings" else (lambda v: v)
    cases = ((0.5, TypeError), ("x", TypeError), (one((0.6,)), ValueError), (one((0.6, 0.3, 0.1)), ValueError),
             (one((0.6, 2.0)), ValueError), (one((None, 0.3)), TypeError))
    for bad, error in cases:
        with pytest.raises(error, match=param):
            call(bad)
    call(pair)                                                  # a valid pair draws


def test_figures_1_and_6_read_q_and_r_from_their_runs_and_refuse_runs_they_cannot_draw():
    # their settings= pairs (checked above until issue 31) are now the users of the runs: q and r come from there
    mech = bernoulli.RandomizedResponse([1.0, np.inf])
    leak = experiments.curve_runs(mech, [Memoryless(q=0.6, r=0.3), Memoryless(q=0.3, r=0.6)], **_SMALL)
    fig = plots.figure1(leak)
    assert plots.params(q=0.6, r=0.3) in fig.axes[0].get_title() and plots.params(q=0.3, r=0.6) in fig.axes[2].get_title()
    with pytest.raises(ValueError, match=r"^each entry of results must be a result of the agnostic rule"):
        plots.figure6(leak)
    gauss = gaussian.simulate(1.0, q=0.3, r=0.6, **_SMALL, **_MEAN)
    with pytest.raises(TypeError, match=r"^each entry of results must be a run of a perfpriv.bernoulli"):
        plots.figure1([gauss])
    cells = engine.simulate(mech, Memoryless(q=[0.6, 0.3], r=0.3), **_SMALL, seed=0)
    with pytest.raises(ValueError, match=r"^each entry of results must be a result for one leaving rate"):
        plots.figure1([cells])
    other = experiments.curve_runs(bernoulli.RandomizedResponse([2.0, np.inf]), [Memoryless(q=0.3, r=0.6)], **_SMALL)
    with pytest.raises(ValueError, match=r"^results must be runs of the same budgets"):
        plots.figure1([leak[0], other[0]])
    scheduled = engine.simulate(bernoulli.RandomizedResponse(engine.Schedule([1.0, 2.0, 3.0])), Memoryless(q=0.6, r=0.3),
                                **_SMALL, seed=0)
    with pytest.raises(ValueError, match=r"^each entry of results must be a run of constant budgets"):
        plots.figure1([scheduled])
    with pytest.raises(ValueError, match=r"^window must"):
        plots.figure1(leak, window=0)


def test_figures_2_and_7_read_the_grid_from_the_maps_users_and_refuse_a_map_they_cannot_draw():
    # their grid= (the q and r values, once checked against the result's shape) is now the users' cells
    Q, R = np.meshgrid([0.2, 0.5, 0.8], [0.3, 0.6], indexing="ij")
    best = optimize.optimal_epsilon(bernoulli.RandomizedResponse([0.5, np.inf]), Memoryless(q=Q, r=R), **_SMALL, seed=0)
    ax = plots.figure2(best).axes[0]
    np.testing.assert_allclose([ax.get_ylim(), ax.get_xlim()], [(0.05, 0.95), (0.15, 0.75)])  # q, r and half a cell
    with pytest.raises(ValueError, match=r"^result must be an epsilon\* map of the agnostic rule"):
        plots.figure7(best)
    with pytest.raises(ValueError, match=r"^result must be a map over a \(q, r\) grid"):
        plots.figure2(optimize.optimal_epsilon(bernoulli.RandomizedResponse([0.5, np.inf]),
                                               Memoryless(q=Q.T, r=R.T), **_SMALL, seed=0))
    from perfpriv.behaviour import LeakCount
    counted = optimize.optimal_epsilon(bernoulli.RandomizedResponse([0.5, np.inf]), LeakCount(q=Q, r=R, k=2),
                                       **_SMALL, seed=0)
    with pytest.raises(TypeError, match=r"^result must be an epsilon\* map of the paper's users"):
        plots.figure2(counted)


@pytest.mark.parametrize("call, param, bad", [
    (lambda v: plots.exact_floor_figure(ns=v, gammas=[1.0]), "ns", [1, 100]),        # "n must be in [2, inf)"
    (lambda v: widgets.draw_schedule(T=v), "T", 1.5)])                          # int(1.5) drew one round
def test_an_argument_a_figure_passes_on_is_named_as_the_figure_names_it(call, param, bad):
    with pytest.raises((ValueError, TypeError), match=rf"^{param} must"):
        call(bad)


# The survival and horizon figures take only a result (issue 31): what they passed on to their experiment is
# now the experiment's argument, or the model object's, and refused there by the name the caller writes.
_MEAN = dict(tau=0.02, d=12, R=10.0)


@pytest.mark.parametrize("call, param, bad", [
    (lambda v: experiments.mean_field_paths(gaussian.GaussianMean(2.0, **_MEAN), Memoryless(q=0.3, r=0.6), T=3,
                                            n0=50, trials=0, sizes=v), "sizes", []),   # "n must not be empty"
    (lambda v: experiments.growth_curves(gaussian.GaussianMean(v, **_MEAN), Memoryless(q=0.3, r=0.6), n0=20,
                                         trials=2), "gamma", [1.0, 1e-300]),        # was figure3bc's gammas
    (lambda v: experiments.horizon_curves(gaussian.GaussianMean(v, **_MEAN), Memoryless(q=0.3, r=0.6), T=3, n0=50,
                                          trials=2), "gamma", [1.0, 1e-300]),       # was figure_horizon's gammas
    (lambda v: experiments.growth_curves(gaussian.GaussianMean([1.0], **_MEAN), Memoryless(q=0.3, r=0.6), n0=20,
                                         T=v, trials=2), "T", 1.5),
    (lambda v: experiments.growth_curves(gaussian.GaussianMean([1.0], **_MEAN), Memoryless(q=v[0], r=v[1]),
                                         n0=20, trials=2), "r", (0.6, 2.0)),        # was figure3bc's small/large
    (lambda v: optimize.optimal_epsilon(bernoulli.RandomizedResponse([1.0]), Memoryless(
        q=np.asarray(v)[:, None], r=np.asarray(v)[None, :]), **_SMALL), "q", [0.2, 2.0]),   # was figure2's grid
    (lambda v: experiments.curve_runs(bernoulli.RandomizedResponse([1.0]), [Memoryless(q=0.6, r=0.3)], seed=v,
                                      **_SMALL), "seed", "x"),                             # was figure1's seed
    (lambda v: experiments.figure3a_simulation(gaussian.GaussianMean(v, **_MEAN), 20, [0.05], rounds=2), "gamma",
     [1.0, 1e-300]),                                                                # was figure3a's gammas
    (lambda v: gaussian.simulate(v, q=0.5, r=0.2, T=3, n0=20, trials=2, **_MEAN), "gamma",
     [1.0, 1e-300])])                                                               # was algorithm1_runs' gammas
def test_an_argument_of_the_experiment_behind_a_figure_is_named_as_the_caller_names_it(call, param, bad):
    with pytest.raises((ValueError, TypeError), match=rf"^{param} must"):
        call(bad)


def test_figure3bc_draws_a_pair_of_unseeded_curves():
    # seed=None was None + k inside figure3bc (a TypeError); each panel is now its own growth_curves run
    curves = [experiments.growth_curves(gaussian.GaussianMean([1.0], **_MEAN), Memoryless(q=q, r=r), n0=20,
                                        trials=2, seed=None) for q, r in ((0.11, 0.52), (0.45, 0.11))]
    assert len(plots.figure3bc(curves).axes) == 2
    for bad in (curves[:1], curves * 2):
        with pytest.raises(ValueError, match=r"^curves must be a pair"):
            plots.figure3bc(bad)


def test_algorithm1_runs_draws_each_noise_scale_of_a_gaussian_run():
    from perfpriv import bernoulli

    kw = dict(q=0.5, r=0.2, T=3, n0=20, trials=2, seed=0, **_MEAN)
    grid = plots.algorithm1_runs(gaussian.simulate([0.5, 2.0], **kw))
    one = plots.algorithm1_runs(gaussian.simulate(2.0, **kw))
    means = [line.get_ydata() for line in grid.axes[0].get_lines()]
    assert len(means) == 2 and np.array_equal(one.axes[0].get_lines()[0].get_ydata(), means[1])  # the γ alone
    assert "$q = 0.5$, $r = 0.2$" in grid._suptitle.get_text()
    with pytest.raises(TypeError, match=r"^run.mechanism must be a perfpriv.gaussian.GaussianMean"):
        plots.algorithm1_runs(bernoulli.simulate(1.0, q=0.5, r=0.2, T=3, n0=20, trials=2))
    cells = engine.simulate(gaussian.GaussianMean(2.0, **_MEAN), Memoryless(q=[0.3, 0.5], r=0.2), T=3, n0=20,
                            trials=2)
    with pytest.raises(ValueError, match=r"^run must be of one cell of users"):
        plots.algorithm1_runs(cells)


def test_figure3a_draws_the_theory_of_the_simulated_mechanism():
    mech = gaussian.GaussianMean([0.5, 2.0], tau=0.05, d=3, R=10.0, statistic="exact")
    sim = experiments.figure3a_simulation(mech, 30, [0.05, 0.5], rounds=3)
    curves = [line for line in plots.figure3a(sim).axes[0].get_lines() if len(line.get_xdata()) == 200]
    assert len(curves) == 2
    dense = curves[0].get_xdata()
    assert np.array_equal(curves[1].get_ydata(), leakage.marginal_leak_probability(
        30, 2.0, tau=dense, d=3, R=10.0, statistic="exact").p)


_Q, _R = np.meshgrid([0.3, 0.6], [0.3, 0.6], indexing="ij")
#: The experiment behind each Bernoulli figure (they take only its result since issue 31), at a grid of budgets.
_BERNOULLI_RESULTS = {
    "figure1": lambda eps: (experiments.curve_runs(bernoulli.RandomizedResponse(eps), [Memoryless(q=0.6, r=0.3)],
                                                   **_SMALL),),
    "final_error_figure": lambda eps: ([experiments.final_error_curve(bernoulli.RandomizedResponse(eps),
                                                                      Memoryless(q=0.3, r=0.6), **_SMALL)],),
    "figure2": lambda eps: (optimize.optimal_epsilon(bernoulli.RandomizedResponse(eps), Memoryless(q=_Q, r=_R),
                                                     **_SMALL, seed=0),),
}


@pytest.mark.parametrize("name", ["figure1", "final_error_figure", "figure2"])
def test_budgets_a_bernoulli_figure_draws_are_stated(name):
    # epsilon = 1e-300: the squared errors overflow (inf - inf in the moving average / error bars); 1e300: the log
    # colour scale and the log epsilon axis overflow; at 1e-100 and 1e100 they draw without a warning. The
    # experiments run at every budget; the figure refuses, by the name of its result, the ones it cannot draw.
    figure, results = getattr(plots, name), _BERNOULLI_RESULTS[name]
    figure(*results([1e-100, 1e100, np.inf]))
    param = "result" if name == "figure2" else "results"
    for bad in (1e-300, [1.0, 1e300]):
        with pytest.raises(ValueError, match=rf"^{param} must hold budgets epsilon inf or in \[1e-100, 1e\+100\]"):
            figure(*results(bad))


def test_exact_floor_figure_draws_a_tiny_threshold_without_a_warning():
    # 1/(1 - exp(-2 tau/d)) divided by zero at tau = 1e-300; an empty taus warned of an empty legend
    fig = plots.exact_floor_figure(ns=(20, 100), gammas=[1.0, 10.0], taus=(1e-300, 0.02))
    assert len(fig.axes) == 2
    with pytest.raises(ValueError, match="taus must not be empty"):
        plots.exact_floor_figure(ns=(20,), gammas=[1.0], taus=[])
