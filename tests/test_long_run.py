"""The exact statistic's leak floor and the infinite-horizon limit (issue 12, §1-2).

Independent truths: mpmath's regularized incomplete gamma function, the
quadrature of the marginal leak probability at a huge γ, simulation of
Algorithm 1 (both draws) with tolerances from standard errors, a long
explicit mean-field recursion, and brute force over a fine grid of γ.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from perfpriv import bernoulli, dynamics, engine, leakage
from perfpriv.behaviour import Memoryless
from perfpriv.engine import Policy
from perfpriv.gaussian import GaussianMean

Z = 4.5


def gm(gamma=1.0, **kw):
    """The paper's Gaussian mechanism (tau = 0.02, d = 12, R = 10) at the level(s) ``gamma``."""
    return GaussianMean(gamma, tau=0.02, d=12, R=10.0, **kw)


#: infinite_horizon_gamma's model: it evaluated p_tau by quadrature (exact here), now the mechanism's method
QUAD = gm(leak_method="quadrature")


def _floor_mpmath(n, d, tau):
    mpmath.mp.dps = 40
    n = mpmath.mpf(n)
    c = mpmath.mpf(d) / 2 * mpmath.log(n / (n - 1))
    x = n * (c - tau)
    return float(mpmath.gammainc(mpmath.mpf(d) / 2, 0, x, regularized=True)) if x > 0 else 0.0


@pytest.mark.parametrize("n, d, tau", [(2, 1, 0.02), (10, 3, 0.05), (100, 12, 0.02), (250, 12, 0.02),
                                       (50, 30, 0.2), (3.5, 12, 0.5)])
def test_exact_leak_floor_matches_mpmath(n, d, tau):
    got = leakage.exact_leak_floor(n, d=d, tau=tau)
    assert got == pytest.approx(_floor_mpmath(n, d, tau), rel=1e-12, abs=1e-300)


def test_exact_leak_floor_vanishes_exactly_above_the_critical_population():
    d, tau = 12, 0.02
    n_star = 1.0 / (1.0 - math.exp(-2 * tau / d))           # d/(2 tau) + 1/2 = 300.5...
    assert leakage.exact_leak_floor(n_star * 0.999, d=d, tau=tau) > 0
    assert leakage.exact_leak_floor(n_star * 1.001, d=d, tau=tau) == 0.0
    assert leakage.exact_leak_floor(1e6, d=d, tau=tau) == 0.0


def test_exact_leak_floor_is_the_large_noise_limit_of_the_marginal_leak_probability():
    n = np.array([20, 60, 150, 280])
    floor = leakage.exact_leak_floor(n, d=12, tau=0.02)
    p = leakage.marginal_leak_probability(n, 1e6, tau=0.02, d=12, R=10.0, statistic="exact", method="quadrature").p
    np.testing.assert_allclose(p, floor, rtol=1e-6, atol=1e-12)
    # and it is a floor: smaller noise leaks more
    p_small = leakage.marginal_leak_probability(n, 5.0, tau=0.02, d=12, R=10.0, statistic="exact").p
    assert np.all(p_small > floor)


@pytest.mark.parametrize("draw", ["projected", "records"])
def test_exact_leak_floor_against_simulation_at_large_noise(draw):
    # γ = 1e4: Λ is c − χ²_d/(2N) up to ~1e-8, so the whole round leaks or not (one χ² per round);
    # the round's leak fraction is 0/1 with the floor's probability
    n, T, trials = 60, 40, 60 if draw == "projected" else 25
    mech = GaussianMean(1e4, tau=0.02, d=12, R=10.0, statistic="exact", draw=draw)
    run = engine.simulate(mech, Memoryless(q=0.0, r=0.0), T=T, n0=n, trials=trials, policy=Policy(cap=n), seed=11)
    frac = run.leak_fraction.reshape(-1)
    floor = float(leakage.exact_leak_floor(n, d=12, tau=0.02))
    se = math.sqrt(floor * (1 - floor) / frac.size)
    assert abs(frac.mean() - floor) < Z * se
    assert se < 0.02 * max(floor, 0.1) * 5    # the check resolves a few percent of the floor


def test_exact_leak_floor_rejects_bad_input():
    with pytest.raises(ValueError, match="n"):
        leakage.exact_leak_floor(1.0, d=12, tau=0.02)
    with pytest.raises(ValueError, match="tau"):
        leakage.exact_leak_floor(10, d=12, tau=0.0)
    with pytest.raises(ValueError, match="d"):
        leakage.exact_leak_floor(10, d=0, tau=0.02)


# ------------------------------------------------------------------ Remark 2 corrected
def test_two_noise_levels_keep_a_constant_error_ratio_without_a_cap():
    e = engine.mean_field(gm([5.0, 20.0]), Memoryless(q=0.3, r=0.6), T=200, n0=1000, cap=None).sq_error
    ratio = e[1] / e[0]
    # the larger noise never catches up: the ratio settles at a constant > 1
    np.testing.assert_allclose(ratio[[59, 99, 199]], ratio[19], rtol=1e-9)
    # it is the noise ratio (γ² Tr Σ⁻¹ + d) shrunk by the extra growth the larger noise bought,
    # which is finite: the populations grow at the same rate 1 + r once leaks vanish
    noise_ratio = (20.0**2 * 12 + 12) / (5.0**2 * 12 + 12)
    N = engine.mean_field(gm([5.0, 20.0]), Memoryless(q=0.3, r=0.6), T=200, n0=1000, cap=None).population
    assert 1.0 < ratio[-1] < noise_ratio
    assert ratio[-1] == pytest.approx(noise_ratio * N[0, -2] / N[1, -2], rel=1e-12)
    np.testing.assert_allclose(N[:, -1] / N[:, -2], 1.6, rtol=1e-12)


def test_infinite_horizon_limit_equals_the_rescaled_error_of_a_long_mean_field():
    users = Memoryless(q=0.3, r=0.6)
    res = dynamics.infinite_horizon_gamma(QUAD, users, n0=1000)
    assert res.finite
    T = 120
    e = engine.mean_field(gm(res.gamma), users, T=T, n0=1000, cap=None).sq_error
    rescaled = e * (1 + 0.6) ** np.arange(1, T + 1)
    assert rescaled[-1] == pytest.approx(res.limit, rel=1e-8)
    assert rescaled[-1] == pytest.approx(rescaled[-20], rel=1e-10)   # converged


def test_infinite_horizon_gamma_is_the_argmin_on_a_fine_grid():
    users = Memoryless(q=0.3, r=0.6)
    res = dynamics.infinite_horizon_gamma(QUAD, users, n0=1000)
    grid = np.geomspace(res.gamma / 1.5, res.gamma * 1.5, 121)
    T = 150
    e = engine.mean_field(gm(grid), users, T=T, n0=1000, cap=None).sq_error[:, -1] * (1 + 0.6) ** T
    best = grid[np.argmin(e)]
    assert best == pytest.approx(res.gamma, rel=0.01)
    assert res.limit <= e.min() * (1 + 1e-9)


def test_infinite_horizon_limit_is_infinite_when_nobody_joins():
    res = dynamics.infinite_horizon_gamma(QUAD, Memoryless(q=0.3, r=0.0), n0=1000)
    assert not res.finite and math.isinf(res.limit) and math.isnan(res.gamma)
    assert "nobody joins" in res.reason


def test_infinite_horizon_limit_is_infinite_below_the_exact_statistics_floor():
    # at n0 = 30 the exact statistic leaks at least 0.45 of the users whatever gamma, and with
    # q = 0.9, r = 0.5 the expected growth 1 + r − (q + r) p stays below 1 forever
    floor = leakage.exact_leak_floor(30, d=12, tau=0.02)
    assert 1 + 0.5 - (0.9 + 0.5) * floor < 1
    users = Memoryless(q=0.9, r=0.5)
    res = dynamics.infinite_horizon_gamma(gm(statistic="exact", leak_method="quadrature"), users, n0=30)
    assert not res.finite and math.isinf(res.limit)
    # the paper's statistic has no floor: the same setting has a finite optimum
    assert dynamics.infinite_horizon_gamma(QUAD, users, n0=30).finite


# ----------------------------------------------------------------- a long run of a small population


def test_the_long_small_population_reproducer_runs_clean_and_extends_its_short_run():
    # the reproducer: T = 100 000 rounds from 10 users under a cap of 100 (about half a minute here:
    # the per-round cost of a small population, issue 14). No warning, the population within [floor, cap],
    # finite errors, and keyed streams: its first 1000 rounds are the T = 1000 run's
    import warnings

    model = (bernoulli.RandomizedResponse(1.0), Memoryless(q=0.3, r=0.6))
    kwargs = dict(n0=10, trials=2, policy=Policy(cap=100), seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        long = engine.simulate(*model, T=100_000, **kwargs)
    short = engine.simulate(*model, T=1000, **kwargs)
    assert long.population.shape == (2, 100_001)
    assert long.population.min() >= 1 and long.population.max() <= 100
    assert np.all(np.isfinite(long.sq_error))
    assert np.array_equal(long.population[:, :1001], short.population)
    assert np.array_equal(long.sq_error[:, :1000], short.sq_error)
