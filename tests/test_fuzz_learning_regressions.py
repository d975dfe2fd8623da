"""Regression tests of the causes behind the last strict xfails of ``test_fuzz_learning`` (issue 16).

One small test per cause: a stated range of the simulated paths (bounds, noise multipliers, clipping
bound, a start), a stability rule of gradient descent, or a value computed in a form that survives
(scaled likelihood ratio, (σc)², n(Δ/γ)²/2, the logistic derivative as −y σ(−yz)). Then one test per
class of what its fourth pass found in the figures that run an experiment: a result of the wrong type,
(q, r) pairs unpacked unchecked, an argument passed on and refused under the inner function's name, the
budgets and thresholds a figure can draw.
"""

import math
import warnings

import numpy as np
import pytest

from perfpriv import gradient, plots, regression, widgets
from perfpriv.performative import federated

X2 = [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]
Y2 = [1.0, 0.0, 2.0]
_rng = np.random.default_rng(0)
XL = _rng.standard_normal((12, 3))
YL = np.where(XL[:, 0] > 0, 1.0, -1.0)


@pytest.fixture(autouse=True)
def _no_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


# ------------------------------------------------ regression: the simulated paths' stated ranges
@pytest.mark.parametrize("name", ["x_bound", "y_bound"])
def test_worst_case_dataset_states_its_range_of_bounds(name):
    kw = dict(lam=0.05, x_bound=5.0, y_bound=5.0, grid=3)
    with pytest.raises(ValueError, match=rf"{name} must be in \(0, 1e\+100\]"):
        regression.worst_case_dataset(100, **dict(kw, **{name: 1e300}))
    w = regression.worst_case_dataset(100, **dict(kw, **{name: 1e100}))        # the edge works
    assert math.isfinite(w.shift) and 0 < w.shift <= w.bound * (1 + 1e-12)
    profile_kw = dict(lam=0.05, x_bound=5.0, y_bound=5.0)
    with pytest.raises(ValueError, match=rf"{name} must be in \(0, 1e\+100\]"):
        regression.sensitivity_profile([10], d=2, records=10, **dict(profile_kw, **{name: 1e300}))


@pytest.mark.parametrize("gamma", [1e-100, 1e100])
def test_ridge_paths_take_noise_multipliers_of_the_stated_range(gamma):
    for f in (regression.simulate, regression.simulate_agents):
        run = f(gamma, tau=0.02, q=0.3, r=0.3, T=2, n0=15, trials=2, d=2, seed=0)
        assert np.all(np.isfinite(run.sq_error))
    for bad in (1e-300, 1e300):
        with pytest.raises(ValueError, match=r"gamma must be in \[1e-100, 1e\+100\]"):
            regression.simulate(bad, tau=0.02, q=0.3, r=0.3, T=2, n0=15, trials=2, d=2, seed=0)
        with pytest.raises(ValueError, match="gammas"):
            regression.optimal_gamma_map([0.2], [0.5], [0.003, bad], tau=0.02, T=2, n0=20)


def test_published_privacy_rho_is_the_true_limit_beyond_the_doubles():
    p = regression.published_privacy([1.0], n=50, d=3, y_bound=1e300, records=20)
    assert p.rho_clipped[0] == np.inf                                    # 2n Δ⁻²/γ² ~ 1e600
    small = regression.published_privacy([1e100], n=50, d=3, records=20)
    assert 0 <= small.rho_clipped[0] < 1e-190
    typical = regression.published_privacy([1.0], n=50, d=3, records=20)
    delta = float(regression.removal_sensitivity(50, lam=1e-5, x_bound=10.0, y_bound=10.0))
    assert typical.rho_clipped[0] == pytest.approx(2 * 50 * delta ** 2, rel=1e-12)       # replace-one, n public


def test_membership_llr_at_extreme_noise_scales_is_the_scaled_value():
    shifts, eta = np.array([[1.0, 0.0], [0.0, -0.3]]), np.array([0.5, 0.2])
    for statistic, kappa in (("paper", None), ("exact", 1.5)):
        ref = regression.membership_llr(shifts, eta, 1e-5, statistic=statistic, kappa=kappa)
        c0 = 0.0 if kappa is None else math.log(kappa)                 # (d/2) log κ, d = 2
        got = regression.membership_llr(shifts, eta, 1e-151, statistic=statistic, kappa=kappa)
        np.testing.assert_allclose((got - c0) * 1e-302, (ref - c0) * 1e-10, rtol=1e-9)
        assert np.array_equal(regression.membership_llr(shifts, eta, 1e-300, statistic=statistic, kappa=kappa),
                              np.sign(ref - c0) * np.inf)
        np.testing.assert_allclose(regression.membership_llr(shifts, eta, 1e300, statistic=statistic, kappa=kappa),
                                   c0, atol=1e-300)


# ------------------------------------------------ gradient descent: stability rules
def test_clipped_gd_refuses_step_times_penalty_above_two():
    kw = dict(loss="logistic", clip=1.0, steps=5, rho=1.0, seed=1)
    gradient.noisy_gd(XL, YL, lam=1.0, step_size=2.0, **kw)          # η λ = 2: bounded
    for lam, step in ((1e300, 0.02), (1.0, 1e300), (1.0, 2.1)):
        with pytest.raises(ValueError, match=r"step_size \* lam must be at most 2"):
            gradient.noisy_gd(XL, YL, lam=lam, step_size=step, **kw)
    with pytest.raises(ValueError, match="step_size"):
        gradient.simulate_transcripts(XL, YL, index=0, runs=4, loss="logistic", lam=1.0, clip=0.05, steps=3,
                                      rho=1.0, step_size=1e300)


def test_quadratic_excess_refuses_steps_above_two_over_the_smoothness():
    H = np.array(X2).T @ np.array(X2) + np.eye(2)
    L = float(np.linalg.eigvalsh(H)[-1])
    ok = gradient.quadratic_expected_excess(X2, Y2, lam=1.0, sigma=0.5, steps=3, step_size=2.0 / L)
    assert math.isfinite(ok)
    for lam, step in ((1.0, 2.0 / L * 1.01), (1e300, 0.5), (1.0, 1e300)):
        with pytest.raises(ValueError, match="step_size must be at most 2/L"):
            gradient.quadratic_expected_excess(X2, Y2, lam=lam, sigma=0.5, steps=3, step_size=step)


def test_quadratic_excess_of_a_huge_noise_is_inf_not_an_overflow():
    assert gradient.quadratic_expected_excess(X2, Y2, lam=1.0, sigma=1e300, steps=3, step_size=0.5) == math.inf
    a = gradient.quadratic_expected_excess(X2, Y2, lam=1.0, sigma=1e100, steps=3, step_size=0.5)
    b = gradient.quadratic_expected_excess(X2, Y2, lam=1.0, sigma=0.0, steps=3, step_size=0.5)
    c = gradient.quadratic_expected_excess(X2, Y2, lam=1.0, sigma=1.0, steps=3, step_size=0.5)
    assert a == pytest.approx(b + (c - b) * 1e200, rel=1e-12)


def test_noisy_gd_states_its_range_of_clipping_bounds():
    for clip in (1e-100, 1e100):
        run = gradient.noisy_gd(XL, YL, loss="logistic", lam=1.0, clip=clip, steps=5, rho=1.0, step_size=0.02,
                                seed=1)
        assert np.all(np.isfinite(run.mu)) and np.all(np.isfinite(run.llr))
        assert np.all(run.mu <= math.sqrt(2 * run.rho) * (1 + 1e-9))
    for clip in (1e-300, 1e300):
        with pytest.raises(ValueError, match=r"clip must be in \[1e-100, 1e\+100\]"):
            gradient.noisy_gd(XL, YL, loss="logistic", lam=1.0, clip=clip, steps=5, rho=1.0, step_size=0.02)


def test_gd_agents_oracle_survives_a_tiny_budget():
    # ρ = 1e-300: σ ~ 1e150 drives the margins so far that math.exp(y z) overflowed
    run = gradient.simulate_agents(1e-300, tau=0.02, q=0.5, r=0.3, T=2, n0=10, trials=2, seed=0)
    assert np.all(np.isfinite(run.sq_error))


@pytest.mark.parametrize("name, bad, good", [("rhos", [1e-300], [1e-100]), ("x_bound", 1e300, 1e50),
                                             ("noise_sd", 1e300, 1e50)])
def test_utility_check_states_its_ranges(name, bad, good):
    kw = dict(rhos=[1.0, 100.0], n=20, d=3, steps=5, runs=2, seed=0)
    for loss in ("squared", "logistic"):
        c = gradient.utility_check(**dict(kw, loss=loss, **{name: good}))
        assert np.all(np.isfinite(c.simulated)) and np.all(np.isfinite(c.se))
        with pytest.raises(ValueError, match=name):
            gradient.utility_check(**dict(kw, loss=loss, **{name: bad}))


# ------------------------------------------------ federated: the start's range
def test_expected_distance_states_the_range_of_the_start():
    clients = federated.GaussianClients.example(N=4, m_mean=1.0, eps_mean=0.5, m_sd=0.5)
    for scheme, K in (("full", None), ("I", 2), ("II", 2)):
        mom = federated.expected_distance(clients, T=3, scheme=scheme, K=K, steps=1.0, theta0=-1e100)
        assert np.all(np.isfinite(mom.sq_distance)) and mom.sq_distance[0] == pytest.approx(1e200, rel=1e-12)
    for bad in (1e300, -1e300):
        with pytest.raises(ValueError, match=r"theta0 must be in \[-1e\+100, 1e\+100\]"):
            federated.expected_distance(clients, T=2, theta0=bad)


def test_participation_round_states_the_range_of_its_locations_and_spreads():
    # PrivateFederatedRound(m=1e300) squared m in record_spread (OverflowError inside draw_participation)
    from perfpriv.performative.participation import PrivateFederatedRound
    for name in ("m", "m_sd", "eps_sd", "sigma", "theta0"):
        with pytest.raises(ValueError, match=name):
            PrivateFederatedRound(0.6, tau=0.3, R=10.0, **{name: 1e300})


# ------------------------------------------------ the figures that run an experiment (the fourth pass)
_SMALL = {"T": 3, "n0": 20, "trials": 2}


@pytest.mark.parametrize("name, param", [
    ("figure1", "results"), ("figure6", "results"), ("final_error_figure", "results"), ("figure2", "result"),
    ("figure7", "result"), ("figure3a", "simulated"), ("exact_floor_figure", "check"), ("figure3bc", "curves"),
    ("figure_mean_field", "paths"), ("figure_horizon", "curves")])
def test_a_figure_given_a_result_of_the_wrong_type_names_it(name, param):
    # they read its fields deep inside: AttributeError ('int' object has no attribute 'epsilon') or len() errors
    figure = getattr(plots, name)
    for bad in (0, "x", [[1.0], [1.0, 2.0]]):
        with pytest.raises(TypeError, match=param):
            figure(**{param: bad})
    if param in ("results", "curves") and name != "figure_horizon":
        with pytest.raises(ValueError, match=param):
            figure(**{param: []})


@pytest.mark.parametrize("call, param", [
    (lambda v: plots.figure1(settings=v, epsilons=[1.0], **_SMALL), "settings"),
    (lambda v: plots.final_error_figure(settings=v, epsilons=[1.0], **_SMALL), "settings"),
    (lambda v: plots.growth_factor_figure(settings=v), "settings"),
    (lambda v: plots.figure3bc(small=v, gammas=[1.0], n0=20, trials=2), "small"),
    (lambda v: plots.figure3bc(large=v, gammas=[1.0], n0=20, trials=2), "large")])
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


@pytest.mark.parametrize("call, param, bad", [
    (lambda v: plots.exact_floor_figure(ns=v, gammas=[1.0]), "ns", [1, 100]),        # "n must be in [2, inf)"
    (lambda v: plots.figure4(taus=v, qs=[0.3], rs=[0.6], gammas=[1.0, 3.0], n0=20, trials=2, d=3), "taus", "x"),
    (lambda v: plots.figure2(grid=v, epsilons=[1.0], **_SMALL), "grid", [0.2, 2.0]),  # "q must be in [0, 1]"
    (lambda v: plots.figure3bc(T=v, gammas=[1.0], n0=20, trials=2), "T", 1),          # 'int' object is not iterable
    (lambda v: plots.figure1(seed=v, epsilons=[1.0], **_SMALL), "seed", "x"),          # seed + k: str + int
    (lambda v: plots.figure_mean_field(sizes=v, gamma=2.0, tau=0.02, q=0.3, r=0.6, T=3, n0=50, trials=0), "sizes",
     []),                                                                              # "n must not be empty"
    (lambda v: plots.algorithm1_runs(gammas=v, T=3, n0=20, trials=2), "gammas", [1.0, 1e-300]),  # "gamma must ..."
    (lambda v: plots.figure3a(gammas=v, n=20, taus=[0.05], rounds=2), "gammas", [1.0, 1e-300]),
    (lambda v: plots.figure3bc(gammas=v, n0=20, trials=2), "gammas", [1.0, 1e-300]),
    (lambda v: plots.figure_horizon(gammas=v, q=0.3, r=0.6, tau=0.02, T=3, n0=50, trials=2), "gammas", [1.0, 1e-300]),
    (lambda v: widgets.draw_schedule(T=v), "T", 1.5)])                          # int(1.5) drew one round
def test_an_argument_a_figure_passes_on_is_named_as_the_figure_names_it(call, param, bad):
    with pytest.raises((ValueError, TypeError), match=rf"^{param} must"):
        call(bad)


def test_figure3bc_runs_unseeded_with_seed_none():
    # seed=None was None + k inside (a TypeError); each panel is then unseeded
    assert len(plots.figure3bc(seed=None, taus=(0.02,), gammas=[1.0], n0=20, trials=2).axes) == 2


@pytest.mark.parametrize("name", ["figure1", "final_error_figure", "figure2"])
def test_budgets_a_bernoulli_figure_draws_are_stated(name):
    # epsilon = 1e-300: the squared errors overflow (inf - inf in the moving average / error bars); 1e300: the log
    # colour scale and the log epsilon axis overflow; at 1e-100 and 1e100 they draw without a warning
    figure = getattr(plots, name)
    kw = dict(_SMALL, **({"grid": [0.3, 0.6]} if name == "figure2" else {}))
    figure(epsilons=[1e-100, 1e100, np.inf], **kw)
    for bad in (1e-300, [1.0, 1e300]):
        with pytest.raises(ValueError, match=r"epsilons must be inf or in \[1e-100, 1e\+100\]"):
            figure(epsilons=bad, **kw)


def test_exact_floor_figure_draws_a_tiny_threshold_without_a_warning():
    # 1/(1 - exp(-2 tau/d)) divided by zero at tau = 1e-300; an empty taus warned of an empty legend
    fig = plots.exact_floor_figure(ns=(20, 100), gammas=[1.0, 10.0], taus=(1e-300, 0.02))
    assert len(fig.axes) == 2
    with pytest.raises(ValueError, match="taus must not be empty"):
        plots.exact_floor_figure(ns=(20,), gammas=[1.0], taus=[])
