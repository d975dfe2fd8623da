"""perfpriv.gradient at the ends of its stated ranges: stability rules, clipping bounds, budgets, closed forms.

Gradient descent refuses steps beyond its stability rule (η λ ≤ 2 when clipped, η ≤ 2/L for
the quadratic excess); the simulated paths state their ranges of clipping bounds, budgets
and noise; a closed form at an extreme valid value is its finite limit. Every test runs
with warnings as errors.
"""

import math

import numpy as np
import pytest

from perfpriv import engine, gradient
from perfpriv.behaviour import Memoryless

pytestmark = pytest.mark.usefixtures("no_warnings")

X2 = [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]
Y2 = [1.0, 0.0, 2.0]
_rng = np.random.default_rng(0)
XL = _rng.standard_normal((12, 3))
YL = np.where(XL[:, 0] > 0, 1.0, -1.0)


def test_clipped_gd_refuses_step_times_penalty_above_two():
    kw = dict(loss="logistic", clip=1.0, steps=5)
    gradient.noisy_gd(XL, YL, gradient.Training(lam=1.0, step_size=2.0, **kw), rho=1.0, seed=1)   # η λ = 2: bounded
    for lam, step in ((1e300, 0.02), (1.0, 1e300), (1.0, 2.1)):
        with pytest.raises(ValueError, match=r"step_size \* lam must be at most 2"):
            gradient.Training(lam=lam, step_size=step, **kw)           # refused where it is given, for every run
    with pytest.raises(ValueError, match="step_size"):
        gradient.Training(loss="logistic", lam=1.0, clip=0.05, steps=3, step_size=1e300)


def test_quadratic_excess_refuses_steps_above_two_over_the_smoothness():
    H = np.array(X2).T @ np.array(X2) + np.eye(2)
    L = float(np.linalg.eigvalsh(H)[-1])
    run = dict(loss="squared", clip=1.0, steps=3)
    ok = gradient.quadratic_expected_excess(X2, Y2, gradient.Training(lam=1.0, step_size=2.0 / L, **run), sigma=0.5)
    assert math.isfinite(ok)
    with pytest.raises(ValueError, match="step_size must be at most 2/L"):
        gradient.quadratic_expected_excess(X2, Y2, gradient.Training(lam=1.0, step_size=2.0 / L * 1.01, **run),
                                           sigma=0.5)
    # η λ > 2 (so η L > 2 as well, L >= λ) is refused by the Training itself, before any data
    for lam, step in ((1e300, 0.5), (1.0, 1e300)):
        with pytest.raises(ValueError, match="step_size"):
            gradient.quadratic_expected_excess(X2, Y2, gradient.Training(lam=lam, step_size=step, **run), sigma=0.5)


def test_quadratic_excess_of_a_huge_noise_is_inf_not_an_overflow():
    training = gradient.Training(loss="squared", lam=1.0, clip=1.0, steps=3, step_size=0.5)
    assert gradient.quadratic_expected_excess(X2, Y2, training, sigma=1e300) == math.inf
    a = gradient.quadratic_expected_excess(X2, Y2, training, sigma=1e100)
    b = gradient.quadratic_expected_excess(X2, Y2, training, sigma=0.0)
    c = gradient.quadratic_expected_excess(X2, Y2, training, sigma=1.0)
    assert a == pytest.approx(b + (c - b) * 1e200, rel=1e-12)


def test_noisy_gd_states_its_range_of_clipping_bounds():
    for clip in (1e-100, 1e100):
        run = gradient.noisy_gd(XL, YL, gradient.Training(loss="logistic", lam=1.0, clip=clip, steps=5,
                                                          step_size=0.02), rho=1.0, seed=1)
        assert np.all(np.isfinite(run.mu)) and np.all(np.isfinite(run.llr))
        assert np.all(run.mu <= math.sqrt(2 * run.rho) * (1 + 1e-9))
    for clip in (1e-300, 1e300):
        with pytest.raises(ValueError, match=r"clip must be in \[1e-100, 1e\+100\]"):
            gradient.Training(loss="logistic", lam=1.0, clip=clip, steps=5, step_size=0.02)


def test_gd_agents_oracle_survives_a_tiny_budget():
    # ρ = 1e-300: σ ~ 1e150 drives the margins so far that math.exp(y z) overflowed
    run = engine.simulate_agents(gradient.PrivateGD(1e-300, tau=0.02), Memoryless(q=0.5, r=0.3), T=2, n0=10, trials=2,
                                 seed=0)
    assert np.all(np.isfinite(run.sq_error))


@pytest.mark.parametrize("name, bad, good", [("rhos", [1e-300], [1e-100]), ("x_bound", 1e300, 1e50),
                                             ("noise_sd", 1e300, 1e50)])
def test_utility_check_states_its_ranges(name, bad, good):
    def call(loss, value):
        data = dict(n=20, d=3, **({name: value} if name != "rhos" else {}))
        rhos = value if name == "rhos" else [1.0, 100.0]
        return gradient.utility_check(rhos, gradient.UtilityData(**data), loss=loss, steps=5, runs=2, seed=0)

    for loss in ("squared", "logistic"):
        c = call(loss, good)
        assert np.all(np.isfinite(c.simulated)) and np.all(np.isfinite(c.se))
        with pytest.raises(ValueError, match=name):
            call(loss, bad)


def test_closed_forms_at_extreme_valid_values_are_finite_limits_without_warnings():
    assert gradient.zcdp_cost(4, clip=1e300, sigma=1e300) == pytest.approx(2.0, rel=1e-12)   # was inf/inf
    assert gradient.utility_bound(100, lipschitz=1e300, lam=1.0, radius=1.0, d=5, rho=1.0, steps=10) == np.inf
    # numbers do not move inside the direct formula's range
    assert gradient.zcdp_cost(100, clip=1.0, sigma=10.0) == 100 * 1.0**2 / (2.0 * 10.0**2)


# ------------------------------------------------------------ issue 32: entries, budgets and unused arguments
@pytest.mark.parametrize("kw, message", [
    (dict(X=[[1e300, 0.0]]), r"X must be in \[-1e\+50, 1e\+50\]"),
    (dict(y=[-1e300]), r"y must be in \[-1e\+100, 1e\+100\]"),
    (dict(theta=[1e300, 0.0]), r"theta must be in \[-1e\+50, 1e\+50\]"),
])
def test_objective_states_the_range_of_its_entries(kw, message):
    # entries of 1e300 overflowed in the margins or their squares with a RuntimeWarning
    args = dict(dict(theta=[0.0, 0.0], X=[[1.0, 0.0]], y=[1.0]), **kw)
    for loss in ("squared", "logistic"):
        with pytest.raises(ValueError, match=message):
            gradient.objective(args["theta"], args["X"], args["y"], loss=loss, lam=1.0)


def test_objective_at_the_edges_of_its_ranges_is_its_definition_or_inf():
    # J = ½(y − xθ)² + (λ/2)θ² at x = θ = 2¹⁶⁶ (~1e50, exact powers of two), y = ±2³³² (~1e100)
    x, y = 2.0**166, 2.0**332
    assert gradient.objective([x], [[x]], [y], loss="squared", lam=1.0) == 0.5 * y          # ½·0² + ½·2³³²
    assert gradient.objective([x], [[x]], [-y], loss="squared", lam=1.0) == 2.0 * y * y + 0.5 * y
    # every term is >= 0: a penalty beyond the doubles, (1e300/2)·1e100, is +inf
    assert gradient.objective([1e50], [[1.0]], [1.0], loss="squared", lam=1e300) == math.inf


def test_private_gd_sigma_states_its_range_of_budgets():
    m = gradient.PrivateGD(1.0, tau=0.02, clip=2.0, steps=20)
    assert m.sigma(1.0) == pytest.approx(2.0 * math.sqrt(20 / 2.0), rel=1e-15)      # C √(K/(2ρ))
    assert m.sigma(math.inf) == 0.0
    for rho in (-1.0, 0.0, math.nan):                                                 # was nan with a warning
        with pytest.raises(ValueError, match=r"rho must be .*in \(0, inf\]"):
            m.sigma(rho)


def test_utility_check_checks_the_radius_under_either_loss():
    # the squared loss runs unprojected and ignored radius=-1
    for loss in ("squared", "logistic"):
        with pytest.raises(ValueError, match=r"radius must be in \(0, inf\)"):
            gradient.utility_check([1.0], gradient.UtilityData(n=20, d=2), loss=loss, steps=2, runs=2, radius=-1.0,
                                   seed=0)
