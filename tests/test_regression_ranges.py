"""perfpriv.regression at the ends of its stated ranges: bounds, noise multipliers and closed forms.

Within a stated range a value is computed in a form that survives (a scaled likelihood
ratio, n(Δ/γ)²/2, the limit of a closed form); beyond it a call is refused with one
line naming the range. Every test runs with warnings as errors.
"""

import math

import numpy as np
import pytest

from perfpriv import engine, regression
from perfpriv.behaviour import Memoryless

pytestmark = pytest.mark.usefixtures("no_warnings")


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
    agents = engine.simulate_agents(regression.RidgeRelease(gamma, tau=0.02, data=regression.RidgeData(d=2)), Memoryless(q=0.3, r=0.3), T=2,
                                    n0=15, trials=2, seed=0)
    fast = engine.simulate(regression.RidgeRelease(gamma, tau=0.02, data=regression.RidgeData(d=2)), Memoryless(q=0.3, r=0.3), T=2, n0=15,
                           trials=2, seed=0)
    for run in (fast, agents):
        assert np.all(np.isfinite(run.sq_error))
    for bad in (1e-300, 1e300):
        with pytest.raises(ValueError, match=r"gamma must be in \[1e-100, 1e\+100\]"):
            regression.RidgeRelease(bad, tau=0.02, data=regression.RidgeData(d=2))
        with pytest.raises(ValueError, match="gamma"):
            regression.RidgeRelease([0.003, bad], tau=0.02, data=regression.RidgeData(d=2))


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


def test_closed_forms_at_extreme_valid_values_are_finite_limits_without_warnings():
    big = regression.ridge_sensitivity(100, lam=0.05, x_bound=1e300, y_bound=5.0)   # was an OverflowError
    assert np.isfinite(big) and big > 0
    assert regression.removal_sensitivity(100, lam=1e300, x_bound=5.0, y_bound=5.0) >= 0
    assert regression.achieved_rho(1.0, 100, adjacency="add_remove_public_n", noise="calibrated", lam=0.05,
                                   x_bound=1e300, y_bound=5.0) == 0.5
    assert regression.rho_from_gamma(1e-300) == np.inf and regression.rho_from_gamma(1e300) == 0.0
    assert regression.ols_excess_risk(50, d=3, noise_sd=1e300) == np.inf
    # numbers do not move inside the direct formulas' range
    assert regression.ridge_sensitivity(1000, lam=0.05, x_bound=5.0, y_bound=5.0) == \
        float(np.maximum(regression._direct_removal(1000.0, 0.05, 5.0, 5.0),
                         regression._direct_removal(1001.0, 0.05, 5.0, 5.0)))


# ------------------------------------------------------------ issue 32: data, leverage, unused arguments, sizes
@pytest.mark.parametrize("call, name", [
    (lambda: regression.ridge_fit(np.full((3, 2), 1e300), np.ones(3), lam=1.0), "X"),
    (lambda: regression.leave_one_out(np.ones((3, 2)), np.full(3, -1e300), lam=1.0), "y"),
    (lambda: regression.membership_llr([[1e300, 0.0]], [0.5, 0.0], 1.0), "shifts"),
    (lambda: regression.membership_llr([[1.0, 0.0]], [1e300, 0.0], 1.0), "eta"),
])
def test_data_beyond_the_path_bound_is_refused_by_name(call, name):
    # entries of 1e300 overflowed inside the normal equations (XᵀX) with a RuntimeWarning
    with pytest.raises(ValueError, match=rf"{name} must be in \[-1e\+100, 1e\+100\]"):
        call()


def test_data_at_the_path_bound_fit_finitely():
    X = np.array([[1e100, 0.0], [0.0, 1.0], [1.0, 1.0]])
    beta = regression.ridge_fit(X, np.array([1e100, 1.0, 0.0]), lam=1.0)
    assert np.all(np.isfinite(beta)) and beta[0] == pytest.approx(1.0, rel=1e-12)   # x₁β₁ = y₁ dominates


def test_leak_probability_checks_kappa_and_d_whichever_statistic_reads_them():
    # the paper statistic ignores kappa and d; a value no statistic accepts was still accepted silently
    with pytest.raises(ValueError, match=r"kappa must be in \[1, inf\)"):
        regression.leak_probability(1.0, 1.0, tau=0.5, kappa=-3)
    with pytest.raises(ValueError, match="d must be an integer >= 1"):
        regression.leak_probability(1.0, 1.0, tau=0.5, d=0)
    # accepted values change nothing for the paper statistic
    assert regression.leak_probability(1.0, 1.0, tau=0.5, kappa=2.0, d=3) == regression.leak_probability(
        1.0, 1.0, tau=0.5)


def test_ridge_release_sigma_and_kappa_state_their_ranges():
    m = regression.RidgeRelease(1.0, tau=0.02, data=regression.RidgeData(d=3)).resolved("paper")
    with pytest.raises(ValueError, match=r"n must be in \[1, inf\)"):
        m.sigma(-1, 1.0)                              # was nan with a RuntimeWarning
    with pytest.raises(ValueError, match=r"gamma must be in \[1e-100, 1e\+100\]"):
        m.sigma(10, 1e300)
    with pytest.raises(ValueError, match=r"n must be in \[2, inf\)"):
        m.kappa(1)                                    # σ_0 is no release
    # κ = σ_{n−1}²/σ_n² by its definition
    assert m.kappa(10, 1.0) == pytest.approx((m.sigma(9, 1.0) / m.sigma(10, 1.0)) ** 2, rel=1e-15)


@pytest.mark.parametrize("call", [
    lambda: regression.sensitivity_profile([10], d=2, lam=0.05, x_bound=5.0, y_bound=5.0, records=10**12),
    lambda: regression.published_privacy([1.0], n=20, records=10**12),
])
def test_record_counts_no_call_can_hold_are_refused_before_the_loop(call):
    # records = 10**12 looped in Python with no bound (hours); now refused at once by name
    with pytest.raises(ValueError, match="records is too large"):
        call()


def _mp_shift(X, y, lam):
    """‖β̂(X, y) − β̂(X[1:], y[1:])‖ of a one-column dataset at 60 digits (the ridge fit Σxy/(Σx² + nλ))."""
    import mpmath
    mpmath.mp.dps = 60
    x, yy = [mpmath.mpf(float(v)) for v in X[:, 0]], [mpmath.mpf(float(v)) for v in y]

    def fit(xs, ys):
        return mpmath.fsum(a * b for a, b in zip(xs, ys)) / (mpmath.fsum(a * a for a in xs) + len(xs) * lam)

    return abs(fit(x, yy) - fit(x[1:], yy[1:]))


@pytest.mark.parametrize("lam, x_bound", [(1.0, 1e-300), (1e300, 1.0), (1e100, 1e-100), (0.05, 5.0)])
def test_worst_case_dataset_at_extreme_bounds_has_the_shift_of_its_data(lam, x_bound):
    # was scipy's "lower bound exceeds the upper bound" (an empty log-a range) and a shift that squared to 0
    w = regression.worst_case_dataset(5, lam=lam, x_bound=x_bound, y_bound=1.0, grid=8)
    assert np.all(np.abs(w.X) <= x_bound) and 0 < w.shift
    assert w.shift == pytest.approx(float(_mp_shift(w.X, w.y, lam)), rel=1e-9)
    assert 0.24 <= w.ratio <= 1.0 + 1e-12


def test_sensitivity_profile_at_a_tiny_feature_bound_keeps_the_size_of_the_shifts():
    tiny = regression.sensitivity_profile([5], d=2, lam=1.0, x_bound=1e-300, y_bound=1.0, records=20, seed=0)
    small = regression.sensitivity_profile([5], d=2, lam=1.0, x_bound=1e-10, y_bound=1.0, records=20, seed=0)
    # both feature bounds are deep in the regime where the fit is linear in x (x² << λ): every shift, and the
    # bound, scale with B_x, so the ratios agree (they came out 0 at 1e-300, the squares underflowing)
    assert tiny.median[0] > 0 and tiny.worst[0] > 0
    for field in ("median", "maximum", "worst"):
        assert getattr(tiny, field)[0] / tiny.bound[0] == pytest.approx(
            getattr(small, field)[0] / small.bound[0], rel=1e-6), field
