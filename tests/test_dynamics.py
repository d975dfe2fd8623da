"""Tests of perfpriv.dynamics (paper §4.5, Lemma 9, Theorem 4, appendices D.3-D.4, E).

Truth comes from the paper's formulas written out here independently
(Lemma 7 at the worst case s = 2R with scipy.stats.norm, the finite sums that
Lemma 9 replaces, Kantorovich's inequality on explicit distributions) and from
Monte Carlo simulation of releases for Theorem 4.

The model is given as the engine's two objects: a
:class:`perfpriv.gaussian.GaussianMean` (τ, d, R, μ, Σ, statistic, how p_τ is
evaluated; its level is the default γ) and a :class:`perfpriv.behaviour.Memoryless`
(q, r). The mean-field path is :func:`perfpriv.engine.mean_field` on them.
"""

import math

import mpmath
import numpy as np
import pytest
from scipy import special, stats

from perfpriv import bernoulli, engine, leakage
from perfpriv import dynamics as D
from perfpriv.behaviour import BudgetAware, LeakCount, Memoryless
from perfpriv.gaussian import GaussianMean

D12 = dict(d=12, R=10.0, leak_method="quadrature")  # the paper's data model (quadrature is exact there)
SMALL = dict(d=3, R=8.0, leak_method="quadrature")


def mech(tau, gamma=1.0, **model):
    """The Gaussian mechanism at threshold ``tau`` (its level ``gamma`` is the functions' default γ)."""
    return GaussianMean(gamma, tau=tau, **model)


def users(q, r):
    return Memoryless(q=q, r=r)


def crit(q, r, tau, n, R):
    """Theorem 2's γ_c (uses τ and R only; the mechanism's level and d are not read)."""
    return D.critical_gamma(mech(tau, d=3, R=R), users(q, r), n=n)


def path(gamma, tau, q, r, *, T, n0, d, R, leak_method="auto", statistic=None, **kw):
    """The mean-field path of the Gaussian model (:func:`perfpriv.engine.mean_field`)."""
    return engine.mean_field(GaussianMean(gamma, tau=tau, d=d, R=R, statistic=statistic, leak_method=leak_method),
                             users(q, r), T=T, n0=n0, **kw)


def worst_case_leak(n, gamma, tau, R):
    """Lemma 7 at s = ||z - mean|| = 2R, written out independently."""
    s = 2 * R
    arg = tau * (n - 1) * gamma / (math.sqrt(n) * s) - math.sqrt(n) * s / (2 * (n - 1) * gamma)
    return stats.norm.sf(arg)


QR = [(0.3, 0.6), (0.6, 0.3), (0.05, 0.9), (0.9, 0.05), (0.5, 0.5), (0.01, 0.01), (0.99, 0.2)]


# ------------------------------------------------------------------ Theorem 2
@pytest.mark.parametrize("q,r", QR)
@pytest.mark.parametrize("tau,n,R", [(0.02, 1000, 10.0), (0.2, 50, 3.0), (0.01, 7, 1.0)])
def test_critical_gamma_makes_worst_case_growth_at_least_one_and_5_percent_less_does_not(q, r, tau, n, R):
    gc = crit(q, r, tau, n, R)
    c_at = 1 + r - (q + r) * worst_case_leak(n, gc, tau, R)
    c_below = 1 + r - (q + r) * worst_case_leak(n, 0.95 * gc, tau, R)
    assert c_at >= 1 - 1e-12
    assert c_below < 1
    # the library's Lemma 7 agrees with the written-out one
    assert leakage.leak_probability(2 * R, n, gc, tau=tau) == pytest.approx(worst_case_leak(n, gc, tau, R), rel=1e-9)


def test_critical_gamma_stable_form_equals_literal_formula():
    q = np.linspace(0.01, 0.99, 25)[:, None]
    r = np.linspace(0.01, 0.99, 25)[None, :]
    for tau, n, R in [(0.02, 1000, 10.0), (0.2, 30, 2.0)]:
        x = special.ndtri(q / (q + r))
        literal = 2 * R * np.sqrt(n) / (n - 1) * (x + np.sqrt(x**2 + 2 * tau)) / (2 * tau)
        np.testing.assert_allclose(crit(q, r, tau, n, R), literal, rtol=1e-9)


def test_critical_gamma_edge_cases_are_the_limits_of_the_formula():
    assert crit(0.0, 0.5, 0.02, 1000, 10) == 0.0  # nobody leaves
    assert crit(0.5, 0.0, 0.02, 1000, 10) == math.inf  # nobody joins
    assert crit(0.0, 0.0, 0.02, 1000, 10) == 0.0  # C == 1
    # approaching q -> 0 the threshold decreases continuously to 0, without cancellation to 0 or NaN
    qs = np.array([1e-2, 1e-5, 1e-10, 1e-30, 1e-300])
    g = crit(qs, 0.5, 0.02, 1000, 10)
    assert np.all(np.diff(g) < 0) and np.all(g > 0)
    # far tail: 1/(sqrt(x^2+2 tau) - x) ~ 1/(2|x|) as x -> -inf
    x = special.ndtri(1e-300 / (1e-300 + 0.5))
    assert g[-1] == pytest.approx(2 * 10 * math.sqrt(1000) / 999 / (2 * abs(x)), rel=1e-3)
    # approaching r -> 0 it grows to inf
    g = crit(0.5, np.array([1e-2, 1e-6, 1e-12]), 0.02, 1000, 10)
    assert np.all(np.diff(g) > 0) and np.all(np.isfinite(g))


def test_critical_gamma_scales_like_sqrt_n_over_n_minus_1():
    n = np.array([3.0, 10, 100, 1e4, 1e6])
    g = crit(0.4, 0.3, 0.05, n, 2.0)
    np.testing.assert_allclose(g * (n - 1) / np.sqrt(n), g[0] * 2 / math.sqrt(3), rtol=1e-12)


def test_critical_gamma_reads_only_tau_and_R_of_the_mechanism():
    u = users(0.3, 0.6)
    ref = D.critical_gamma(GaussianMean(1.0, tau=0.02, d=3, R=10.0), u, n=1000)
    for other in (GaussianMean(7.0, tau=0.02, d=12, R=10.0, statistic="exact"),
                  GaussianMean([0.5, 2.0], tau=0.02, d=5, R=10.0, mu=np.ones(5), leak_method="quadrature"),
                  GaussianMean(engine.Schedule([1.0, 2.0]), tau=0.02, d=3, R=10.0)):
        assert D.critical_gamma(other, u, n=1000) == ref


@pytest.mark.parametrize("q,r", [(0.3, 0.6), (0.6, 0.3), (0.9, 0.05), (0.05, 0.9)])
@pytest.mark.parametrize("tau", [0.01, 0.2])
def test_exact_critical_gamma_gives_growth_one_and_theorem_2_is_conservative(q, r, tau):
    m, u = mech(tau, **D12), users(q, r)
    g = D.exact_critical_gamma(m, u, n=1000)
    c = D.growth_factor(m, u, n=1000, gamma=g)
    assert abs(c - 1) < 1e-8
    assert D.growth_factor(m, u, n=1000, gamma=1.01 * g) > 1 > D.growth_factor(m, u, n=1000, gamma=0.99 * g)
    assert D.critical_gamma(m, u, n=1000) >= g


def test_exact_critical_gamma_edge_cases_and_arrays():
    m = mech(0.02, **SMALL)
    assert D.exact_critical_gamma(m, users(0.0, 0.5), n=100) == 0.0
    assert D.exact_critical_gamma(m, users(0.0, 0.0), n=100) == 0.0
    assert D.exact_critical_gamma(m, users(0.5, 0.0), n=100) == math.inf
    q = np.array([[0.2], [0.7]])
    r = np.array([0.1, 0.5, 0.0])
    m = mech(0.05, **SMALL)
    g = D.exact_critical_gamma(m, users(q, r), n=100)
    assert g.shape == (2, 3)
    assert g[1, 1] == pytest.approx(D.exact_critical_gamma(m, users(0.7, 0.5), n=100), rel=1e-12)
    assert np.all(np.isinf(g[:, 2]))


def test_exact_statistic_threshold_can_be_infinite_at_small_n():
    # (d/2) log(n/(n-1)) > tau: even infinite noise leaks with probability > r/(q+r)
    d, n, tau = 12, 5, 0.1
    assert 0.5 * d * math.log(n / (n - 1)) > tau
    m = mech(tau, d=d, R=50.0, statistic="exact", leak_method="quadrature")
    g = D.exact_critical_gamma(m, users(0.5, 0.05), n=n)
    assert g == math.inf


@pytest.mark.parametrize("k,q,r", [(2, 0.3, 0.6), (3, 0.8, 0.1), (5, 0.5, 0.05)])
def test_exact_critical_gamma_of_users_with_memory_solves_their_critical_leak_probability(k, q, r):
    # LeakCount: a user leaves after k - 1 + Geometric(q) leaks, m = k - 1 + 1/q of them on average, and the
    # population is stationary at p_c = r m / (1 + r m) (written out here, not read from the behaviour)
    tau, n = 0.02, 1000
    m_ = k - 1 + 1 / q
    pc = r * m_ / (1 + r * m_)
    beh = LeakCount(k=k, q=q, r=r)
    assert float(beh.critical_leak_probability()) == pytest.approx(pc, rel=1e-14)
    g = D.exact_critical_gamma(mech(tau, **D12), beh, n=n)
    assert 0 < g < math.inf
    # p_tau at the root, computed by leakage's own quadrature (not through the mechanism)
    p_root = leakage.marginal_leak_probability(n, g, tau=tau, d=12, R=10.0, method="quadrature").p
    assert p_root == pytest.approx(pc, rel=1e-9)
    assert float(mech(tau, **D12).leak_probability(n, g)) == pytest.approx(pc, rel=1e-9)   # the mechanism's own p_tau
    below = leakage.marginal_leak_probability(n, 0.99 * g, tau=tau, d=12, R=10.0, method="quadrature").p
    above = leakage.marginal_leak_probability(n, 1.01 * g, tau=tau, d=12, R=10.0, method="quadrature").p
    assert below > pc > above
    # the long-run growth factor of these users is 1 there (Perron root of their k-type recursion)
    assert float(beh.growth_factor(p_root)) == pytest.approx(1.0, abs=1e-8)
    # the paper's users with the same p_c (q' = 1/m) have the same threshold, and k = 1 is the paper's users
    assert g == pytest.approx(D.exact_critical_gamma(mech(tau, **D12), users(1 / m_, r), n=n), rel=1e-10)
    assert D.exact_critical_gamma(mech(tau, **D12), LeakCount(k=1, q=q, r=r), n=n) == \
        pytest.approx(D.exact_critical_gamma(mech(tau, **D12), users(q, r), n=n), rel=1e-12)


def test_exact_critical_gamma_of_users_with_memory_over_cells_and_at_the_edges():
    m = mech(0.05, **SMALL)
    beh = LeakCount(k=2, q=np.array([0.0, 0.4, 0.7]), r=np.array([[0.5], [0.0]]))
    g = D.exact_critical_gamma(m, beh, n=100)
    assert g.shape == (2, 3)
    assert np.all(g[:, 0] == 0.0)                # q = 0: nobody leaves, p_c = 1
    assert np.all(np.isinf(g[1, 1:]))            # r = 0 < q: nobody joins, p_c = 0
    for j, q in ((1, 0.4), (2, 0.7)):
        assert g[0, j] == D.exact_critical_gamma(m, LeakCount(k=2, q=q, r=0.5), n=100)


# ------------------------------------------------------------------ eq. 13, Lemma 12
def test_growth_factor_is_eq_13_and_broadcasts():
    gam = np.array([0.3, 1.0, 5.0])
    n = np.array([[20.0], [1000.0]])
    m, u = mech(0.02, **D12), users(0.3, 0.6)
    C = D.growth_factor(m, u, n=n, gamma=gam)
    p = leakage.marginal_leak_probability(n, gam, tau=0.02, d=12, R=10.0).p
    assert C.shape == (2, 3)
    np.testing.assert_allclose(C, 1 + 0.6 - 0.9 * p, rtol=1e-14)
    # limits: gamma -> 0 gives 1 - q (Corollary 1), gamma -> inf gives 1 + r
    assert D.growth_factor(m, u, n=1000, gamma=1e-4) == pytest.approx(0.7, abs=1e-9)
    assert D.growth_factor(m, u, n=1000, gamma=1e4) == pytest.approx(1.6, abs=1e-9)


def test_below_two_records_leak_probability_is_one_at_one_and_linear_up_to_two():
    m, u = mech(0.02, gamma=3.0, **D12), users(0.3, 0.6)
    assert D.growth_factor(m, u, n=1) == pytest.approx(0.7)
    p2 = leakage.marginal_leak_probability(2, 3.0, tau=0.02, d=12, R=10.0).p
    for n in (1.25, 1.5, 1.999):
        p = (2 - n) + (n - 1) * p2
        assert D.growth_factor(m, u, n=n) == pytest.approx(1.6 - 0.9 * p, rel=1e-13)
    # continuous at n = 2
    assert D.growth_factor(m, u, n=2 - 1e-9) == pytest.approx(D.growth_factor(m, u, n=2), abs=1e-8)


@pytest.mark.parametrize("statistic", ["paper", "exact"])
def test_lemma_12_leak_probability_decreases_and_growth_increases_with_population(statistic):
    # The paper's proof of Lemma 12 says p_tau "strictly increases" as N grows; it decreases.
    n = np.array([10.0, 30, 100, 300, 1000, 3000])
    m = mech(0.02, d=12, R=10.0, statistic=statistic, leak_method="quadrature")
    for gam in (0.5, 2.0):
        C = D.growth_factor(m, users(0.3, 0.6), n=n, gamma=gam)
        assert np.all(np.diff(C) > 0)


# ------------------------------------------------------------------ Theorem 3
def test_kappa_formula_and_limits():
    assert D.kappa(users(0.3, 0.6)) == pytest.approx((2.3) ** 2 / (4 * 0.7 * 1.6))
    assert D.kappa(users(0.0, 0.0)) == 1.0
    assert D.kappa(users(1.0, 0.3)) == math.inf
    np.testing.assert_array_less(0.999999, D.kappa(users(np.linspace(0, 0.99, 7), np.linspace(0, 1, 7))))


@pytest.mark.parametrize("q,r", [(0.3, 0.6), (0.9, 0.05), (0.05, 0.9), (0.5, 0.0)])
def test_kappa_is_the_kantorovich_constant_on_one_minus_q_one_plus_r(q, r):
    lo, hi = 1 - q, 1 + r
    k = D.kappa(users(q, r))
    # two-point laws on the ends: E[1/X] E[X] <= kappa, with equality at weight 1/2
    w = np.linspace(0, 1, 1001)
    ratio = (w / lo + (1 - w) / hi) * (w * lo + (1 - w) * hi)
    assert ratio.max() <= k * (1 + 1e-12)
    assert ratio[500] == pytest.approx(k, rel=1e-12)
    # arbitrary laws on the interval satisfy E[1/X] <= kappa / E[X]
    rng = np.random.default_rng(3)
    for _ in range(200):
        x = rng.uniform(lo, hi, size=rng.integers(2, 8))
        p = rng.dirichlet(np.ones(x.size))
        assert np.sum(p / x) <= k / np.sum(p * x) * (1 + 1e-12)


def test_error_bounds_are_jensen_and_kappa_times_jensen():
    Sigma = 2.0 * np.eye(3)  # isotropic: quadrature applies; Tr Sigma^-1 = 1.5
    gam, n_prev, q, r = np.array([0.5, 2.0]), 40.0, 0.4, 0.3
    m, u = mech(0.05, d=3, R=30.0, Sigma=Sigma, leak_method="quadrature"), users(q, r)
    lo, hi = D.error_bounds(m, u, n_prev=n_prev, gamma=gam)
    C = D.growth_factor(m, u, n=n_prev, gamma=gam)
    np.testing.assert_allclose(lo, (gam**2 * 1.5 + 3) / (C * n_prev), rtol=1e-13)
    np.testing.assert_allclose(hi, D.kappa(u) * lo, rtol=1e-13)
    res = D.error_bounds(m, u, n_prev=n_prev, gamma=1.0)
    assert res.upper >= res.lower > 0 and res.kappa == D.kappa(u)


# ------------------------------------------------------------------ the mean field (engine.mean_field)
def test_mean_field_population_follows_the_recursion_with_cap_and_floor():
    kw = dict(T=12, n0=200, **SMALL)
    N = path(2.0, 0.05, 0.2, 0.5, cap=None, floor=None, **kw).population
    m, u = mech(0.05, gamma=2.0, **SMALL), users(0.2, 0.5)
    for t in range(1, 13):
        C = D.growth_factor(m, u, n=N[t - 1])
        assert N[t] == pytest.approx(N[t - 1] * C, rel=1e-12)
    capped = path(2.0, 0.05, 0.2, 0.5, cap=500, **kw).population
    assert capped.max() == 500 and np.all(capped <= 500)
    np.testing.assert_allclose(capped[capped < 500], N[: (capped < 500).sum()])
    # collapse: tiny noise, many leavers -> floored at 1 and stays there
    dead = path(0.01, 0.05, 0.9, 0.05, cap=None, floor=1, **kw).population
    assert dead[-1] == 1.0 and np.all(np.diff(dead) <= 0)


def test_mean_field_broadcasts_over_gamma_q_r():
    gam = np.array([0.5, 2.0, 8.0])
    # array q, r are cells (leading axes), a 1-D gamma a grid of levels (the next axis)
    N = path(gam, 0.05, np.array([0.2, 0.6]), 0.4, T=5, n0=100, **SMALL).population
    assert N.shape == (2, 3, 6)
    cells = path(gam, 0.05, np.array([[0.2], [0.6]]), np.array([0.4, 0.5]), T=5, n0=100, **SMALL).population
    assert cells.shape == (2, 2, 3, 6)
    np.testing.assert_allclose(cells[1, 1, 0], path(0.5, 0.05, 0.6, 0.5, T=5, n0=100, **SMALL).population,
                               rtol=1e-14)
    single = path(2.0, 0.05, 0.6, 0.4, T=5, n0=100, **SMALL).population
    np.testing.assert_allclose(N[1, 1], single, rtol=1e-14)


def test_mean_field_error_indexing_and_cumulative_sum():
    kw = dict(T=6, n0=100, **SMALL)
    N = path(1.5, 0.05, 0.3, 0.5, **kw).population
    e_paper = path(1.5, 0.05, 0.3, 0.5, rounds="paper", **kw).sq_error
    e_alg = path(1.5, 0.05, 0.3, 0.5, rounds="algorithm", **kw).sq_error
    # the default is Algorithm 1's indexing (as in the simulators)
    np.testing.assert_array_equal(path(1.5, 0.05, 0.3, 0.5, **kw).sq_error, e_alg)
    num = 1.5**2 * 3 + 3
    np.testing.assert_allclose(e_paper, num / N[1:], rtol=1e-14)
    np.testing.assert_allclose(e_alg, num / N[:-1], rtol=1e-14)
    assert path(1.5, 0.05, 0.3, 0.5, rounds="paper", **kw).cumulative_error == \
        pytest.approx(e_paper.sum(), rel=1e-14)
    assert path(1.5, 0.05, 0.3, 0.5, **kw).cumulative_error == pytest.approx(e_alg.sum(), rel=1e-14)


# ------------------------------------------------------------------ Lemma 9
@pytest.mark.parametrize("gam", [0.05, 0.3, 1.0, 3.0, 30.0])
@pytest.mark.parametrize("T", [1, 7, 50])
def test_lemma_9_closed_form_equals_the_finite_sum(gam, T):
    q, r, tau, n0 = 0.4, 0.3, 0.05, 300
    m, u = mech(tau, gamma=gam, **SMALL), users(q, r)
    C1 = D.growth_factor(m, u, n=n0)
    total = sum((gam**2 * 3 + 3) / (n0 * C1**t) for t in range(1, T + 1))
    assert D.cumulative_error_bound(m, u, T=T, n0=n0) == pytest.approx(total, rel=1e-11)


def test_lemma_9_limit_at_growth_factor_one():
    # q = r = 0: C == 1 exactly, Ê_total = T (gamma^2 Tr + d) / N0
    m = mech(0.05, **SMALL)
    assert D.cumulative_error_bound(m, users(0.0, 0.0), T=9, n0=100, gamma=2.0) == pytest.approx(9 * 15 / 100,
                                                                                                 rel=1e-15)
    # near C = 1 the stable form is continuous and matches the sum
    u = users(0.4, 0.3)
    g = D.exact_critical_gamma(m, u, n=100)
    for f in (1 - 1e-7, 1.0, 1 + 1e-7):
        C1 = D.growth_factor(m, u, n=100, gamma=g * f)
        total = sum(1 / C1**t for t in range(1, 21)) * ((g * f) ** 2 * 3 + 3) / 100
        val = D.cumulative_error_bound(m, u, T=20, n0=100, gamma=g * f)
        assert val == pytest.approx(total, rel=1e-9)
    small = D._inverse_geometric_sum(np.array([0.0, 1e-13, -1e-13]), 20)
    np.testing.assert_allclose(small, [20, 20 - 210e-13, 20 + 210e-13], rtol=1e-15)


def test_lemma_9_infinite_when_the_population_is_wiped_out():
    # q = 1 and gamma -> 0: C_1 = 1 - q = 0
    assert D.cumulative_error_bound(mech(0.05, **SMALL), users(1.0, 0.3), T=3, n0=100, gamma=1e-6) == math.inf


@pytest.mark.parametrize("q,r", [(0.3, 0.6), (0.6, 0.3), (0.1, 0.1)])
def test_lemma_9_bounds_the_uncapped_mean_field_cumulative_error_in_the_growth_regime(q, r):
    tau, n0, T = 0.05, 100, 25
    m, u = mech(tau, **SMALL), users(q, r)
    gc = D.exact_critical_gamma(m, u, n=n0)
    for gam in gc * np.array([1.05, 2.0, 10.0]):
        N = path(gam, tau, q, r, T=T, n0=n0, cap=None, **SMALL).population
        C = N[1:] / N[:-1]
        # Lemma 12's premise and conclusion (non-decreasing: C saturates at 1 + r once p_tau ~ 0)
        assert np.all(C > 1) and np.all(np.diff(C) >= -1e-15) and C[1] > C[0]
        bound = D.cumulative_error_bound(m, u, T=T, n0=n0, gamma=gam)
        # Lemma 9 bounds the paper's indexing (the release of round t uses N_t)
        exact = path(gam, tau, q, r, T=T, n0=n0, cap=None, rounds="paper", **SMALL).cumulative_error
        assert bound >= exact
        # ... and is tight to first order: within the factor C_1^T of it
        assert bound <= exact * (N[1] / N[0]) ** T


# ------------------------------------------------------------------ Theorem 4
def test_pac_rounds_formula_and_radius_at_that_horizon():
    gam, tau, q, r, eps, delta = 1.0, 0.1, 0.2, 0.5, 0.8, 0.1
    m, u = mech(tau, gamma=gam, d=2, R=6.0, leak_method="quadrature"), users(q, r)
    t = D.pac_rounds(m, u, 50, epsilon=eps, delta=delta)
    C1 = D.growth_factor(m, u, n=50)
    rad = lambda n: D.pac_radius(m, n, delta=delta)  # noqa: E731
    assert t >= 1
    assert rad(50 * C1**t) <= eps < rad(50 * C1 ** (t - 1))


def test_pac_rounds_coverage_by_simulation():
    """At t = pac_rounds, a release from N0 C1^t records is within epsilon w.p. >= 1 - delta."""
    d, R, n0, gam, tau, q, r, eps, delta = 2, 6.0, 20, 1.0, 0.1, 0.2, 0.5, 1.0, 0.2
    m, u = mech(tau, gamma=gam, d=d, R=R, leak_method="quadrature"), users(q, r)
    t = D.pac_rounds(m, u, n0, epsilon=eps, delta=delta)
    C1 = D.growth_factor(m, u, n=n0)
    n = int(math.ceil(n0 * C1**t))
    assert 1 <= t and n <= 2000
    rng = np.random.default_rng(11)
    releases = 1000
    Z = rng.standard_normal((releases, n, d))
    norms = np.linalg.norm(Z, axis=-1, keepdims=True)
    Z = Z * np.minimum(1.0, R / norms)
    o = Z.mean(axis=1) + rng.standard_normal((releases, d)) * gam / math.sqrt(n)
    inside = np.linalg.norm(o, axis=1) <= eps  # mu = 0, Sigma = I
    assert inside.mean() >= 1 - delta
    # the theorem is conservative: already at N0 (t = 0) coverage is typically high;
    # check the bound on the radius holds with the Theorem's constants too
    assert D.pac_radius(m, n, delta=delta) <= eps


def test_pac_rounds_zero_when_already_accurate_and_errors_explained():
    m = mech(0.1, d=2, R=8.0, leak_method="quadrature")
    assert D.pac_rounds(m, users(0.2, 0.5), 10_000, epsilon=5.0, delta=0.1, gamma=1.0) == 0
    with pytest.raises(ValueError, match="epsilon"):
        D.pac_rounds(mech(0.1, d=2, R=1.0, leak_method="quadrature"), users(0.2, 0.5), 50, epsilon=1e-30,
                     delta=0.1, gamma=1.0)
    with pytest.raises(ValueError, match="C_1"):
        D.pac_rounds(m, users(0.6, 0.3), 10_000, epsilon=1.0, delta=0.1, gamma=0.01)


def test_pac_clipping_bias_matches_theorem_4_constants():
    # B(R) = sqrt(lmax(S^-1)) M exp(-(R-M)^2/(4 lmax(S))), R > M; radius at n -> inf is B
    Sigma = np.diag([1.0, 4.0])
    mu = np.array([0.5, -1.0])
    M = math.sqrt(0.25 + 1 + 5)
    B = 1.0 * M * math.exp(-((6 - M) ** 2) / 16)
    m = mech(0.1, d=2, R=6.0, mu=mu, Sigma=Sigma)
    assert D.pac_radius(m, 1e30, gamma=1.0, delta=0.1) == pytest.approx(B, rel=1e-9)


# ------------------------------------------------------------------ validation
@pytest.mark.parametrize(
    "call,name",
    [
        # the model's values are checked by the objects' constructors
        (lambda: D.critical_gamma(mech(0.02, d=3, R=10), users(1.5, 0.3), n=100), "q"),
        (lambda: D.critical_gamma(mech(0.02, d=3, R=10), users(0.5, -0.1), n=100), "r"),
        (lambda: D.critical_gamma(mech(0.0, d=3, R=10), users(0.5, 0.3), n=100), "tau"),
        (lambda: D.critical_gamma(mech(0.02, d=3, R=10), users(0.5, 0.3), n=1), "n"),
        (lambda: D.critical_gamma(mech(0.02, d=3, R=0), users(0.5, 0.3), n=100), "R"),
        (lambda: D.growth_factor(mech(0.02, **SMALL), users(0.3, 0.6), n=100, gamma=-1.0), "gamma"),
        (lambda: D.growth_factor(mech(0.02, **SMALL), users(0.3, 0.6), n=0.5), "n"),
        (lambda: D.growth_factor(mech(0.02, d=3, R=8.0, statistic="bogus"), users(0.3, 0.6), n=100), "statistic"),
        (lambda: D.growth_factor(mech(0.02, d=3, R=8.0, leak_method="bogus"), users(0.3, 0.6), n=100),
         "leak_method"),
        (lambda: D.growth_factor(mech(0.02, d=0, R=8.0), users(0.3, 0.6), n=100), "d"),
        (lambda: D.exact_critical_gamma(mech(0.02, **SMALL), users(0.3, 0.6), n=100, bracket=(2, 1)), "bracket"),
        (lambda: D.kappa(users(0.3, 1.2)), "r"),
        (lambda: D.error_bounds(mech(0.02, **SMALL), users(0.3, 0.6), n_prev=0), "n_prev"),
        (lambda: D.growth_factor(mech(0.02, d=3, R=8.0, leak_method=leakage.Integration(samples=0)), users(0.3, 0.6),
                                 n=100), "samples"),
        (lambda: D.growth_factor(mech(0.02, d=3, R=8.0, leak_method=leakage.Integration("montecarlo", seed=-1)),
                                 users(0.3, 0.6), n=100), "seed"),
        (lambda: D.cumulative_error_bound(mech(0.02, Sigma=-np.eye(3), **SMALL), users(0.3, 0.6), T=3, n0=100),
         "Sigma"),
        (lambda: D.cumulative_error_bound(mech(0.02, **SMALL), users(0.3, 0.6), T=0, n0=100), "T"),
        (lambda: D.cumulative_error_bound(mech(0.02, **SMALL), users(0.3, 0.6), T=3, n0=1), "n0"),
        (lambda: D.pac_rounds(mech(0.02, **SMALL), users(0.3, 0.6), 100, epsilon=1.0, delta=1.0), "delta"),
        (lambda: D.pac_rounds(mech(0.02, **SMALL), users(0.3, 0.6), 100, epsilon=0.0, delta=0.1), "epsilon"),
        (lambda: D.pac_radius(mech(0.02, d=2, R=1.0), 0.0, delta=0.1), "n"),
    ],
)
def test_bad_input_raises_value_error_naming_the_parameter(call, name):
    with pytest.raises(ValueError, match=rf"\b{name}\b"):
        call()


GM = GaussianMean(1.0, tau=0.02, d=3, R=8.0, leak_method="quadrature")
MEM = Memoryless(q=0.3, r=0.6)
#: every public function of the module, called on (mechanism, behaviour) with its other arguments
CALLS = {
    "growth_factor": lambda m, b: D.growth_factor(m, b, n=100),
    "critical_gamma": lambda m, b: D.critical_gamma(m, b, n=100),
    "exact_critical_gamma": lambda m, b: D.exact_critical_gamma(m, b, n=100),
    "kappa": lambda m, b: D.kappa(b),
    "error_bounds": lambda m, b: D.error_bounds(m, b, n_prev=100),
    "cumulative_error_bound": lambda m, b: D.cumulative_error_bound(m, b, T=3, n0=100),
    "infinite_horizon_gamma": lambda m, b: D.infinite_horizon_gamma(m, b, n0=100, grid=5, rounds_max=50),
    "pac_radius": lambda m, b: D.pac_radius(m, 100, delta=0.1),
    "pac_rounds": lambda m, b: D.pac_rounds(m, b, 100, epsilon=2.0, delta=0.1),
}
NOT_A_MECHANISM = [None, 1.0, "gaussian", bernoulli.RandomizedResponse(1.0), MEM]
NOT_A_BEHAVIOUR = [None, 0.3, "memoryless", GM, bernoulli.RandomizedResponse(1.0)]


def test_the_table_of_calls_holds_every_public_function():
    import inspect

    assert set(CALLS) == {n for n in D.__all__ if inspect.isfunction(getattr(D, n))}
    for name, call in CALLS.items():           # each call is valid as written
        call(GM, MEM)


@pytest.mark.parametrize("name", [n for n in CALLS if n != "kappa"])
@pytest.mark.parametrize("bad", NOT_A_MECHANISM, ids=lambda v: type(v).__name__)
def test_a_mechanism_that_is_not_a_gaussian_mean_is_a_type_error_naming_it(name, bad):
    with pytest.raises(TypeError, match=r"^mechanism must be a perfpriv\.gaussian\.GaussianMean"):
        CALLS[name](bad, MEM)


@pytest.mark.parametrize("name", [n for n in CALLS if n != "pac_radius"])
@pytest.mark.parametrize("bad", NOT_A_BEHAVIOUR, ids=lambda v: type(v).__name__)
def test_a_behaviour_that_is_not_one_is_a_type_error_naming_it(name, bad):
    with pytest.raises(TypeError, match=r"^behaviour must be a perfpriv\.behaviour\."):
        CALLS[name](GM, bad)


@pytest.mark.parametrize("name", [n for n in CALLS if n not in ("pac_radius", "exact_critical_gamma")])
@pytest.mark.parametrize("other", [LeakCount(k=2, q=0.3, r=0.6), BudgetAware(tolerance=2.0, r=0.6)],
                         ids=lambda v: type(v).__name__)
def test_the_paper_s_formulas_refuse_users_other_than_memoryless(name, other):
    with pytest.raises(TypeError, match=r"^behaviour must be a perfpriv\.behaviour\.Memoryless"):
        CALLS[name](GM, other)


@pytest.mark.parametrize("levels", [engine.Schedule([1.0, 2.0, 3.0]), engine.Schedule([[1.0, 2.0], [3.0, 4.0]]),
                                    engine.PerCell([1.0, 2.0])], ids=["schedule", "schedules", "per-cell"])
def test_pointwise_functions_need_gamma_when_the_levels_change_over_rounds_or_cells(levels):
    m = GaussianMean(levels, tau=0.02, d=3, R=8.0, leak_method="quadrature")
    b = Memoryless(q=[0.3, 0.4], r=0.6)    # two cells, for the per-cell levels
    for call in (lambda: D.growth_factor(m, b, n=100),
                 lambda: D.error_bounds(m, b, n_prev=100),
                 lambda: D.cumulative_error_bound(m, b, T=3, n0=100),
                 lambda: D.pac_radius(m, 100, delta=0.1),
                 lambda: D.pac_rounds(m, MEM, 100, epsilon=2.0, delta=0.1)):
        with pytest.raises(ValueError, match=r"^gamma: the mechanism's levels are a schedule"):
            call()
    # an explicit gamma is evaluated whatever the levels
    assert D.growth_factor(m, b, n=100, gamma=2.0).tolist() == \
        D.growth_factor(GaussianMean(2.0, tau=0.02, d=3, R=8.0, leak_method="quadrature"), b, n=100).tolist()
    assert D.pac_rounds(m, MEM, 100, epsilon=2.0, delta=0.1, gamma=2.0) == \
        D.pac_rounds(GaussianMean(2.0, tau=0.02, d=3, R=8.0, leak_method="quadrature"), MEM, 100, epsilon=2.0,
                     delta=0.1)


def test_critical_gamma_refuses_the_agnostic_rule_naming_the_behaviour():
    # Theorem 2 is stated for the leak rule (C = 1 + r - (q + r) p); under the agnostic rule C = 1 + r - q p
    with pytest.raises(ValueError, match=r"^behaviour: critical_gamma .*rule='agnostic'"):
        D.critical_gamma(GM, Memoryless(q=0.3, r=0.6, rule="agnostic"), n=100)


def test_exact_critical_gamma_under_the_agnostic_rule_solves_its_critical_leak_probability():
    # agnostic: C = 1 + r - q p = 1 at p = r / q (here 0.2 / 0.5 = 0.4)
    g = D.exact_critical_gamma(mech(0.02, **D12), Memoryless(q=0.5, r=0.2, rule="agnostic"), n=1000)
    p = leakage.marginal_leak_probability(1000, g, tau=0.02, d=12, R=10.0, method="quadrature").p
    assert p == pytest.approx(0.4, rel=1e-9)
    # r >= q: C >= 1 at every gamma (p <= 1), the threshold is 0
    assert D.exact_critical_gamma(mech(0.02, **D12), Memoryless(q=0.3, r=0.6, rule="agnostic"), n=1000) == 0.0


@pytest.mark.parametrize("level", [2.0, [0.5, 2.0, 8.0]], ids=["number", "grid"])
def test_the_default_gamma_is_the_mechanism_s_level(level):
    m = GaussianMean(level, tau=0.02, d=3, R=8.0, leak_method="quadrature")
    u = Memoryless(q=np.array([[0.3], [0.6]]), r=0.5)
    g = np.asarray(level, float)
    np.testing.assert_array_equal(D.growth_factor(m, u, n=100), D.growth_factor(m, u, n=100, gamma=g))
    a, b = D.error_bounds(m, u, n_prev=100), D.error_bounds(m, u, n_prev=100, gamma=g)
    for field in ("lower", "upper", "growth", "kappa"):
        np.testing.assert_array_equal(getattr(a, field), getattr(b, field))
    np.testing.assert_array_equal(D.cumulative_error_bound(m, u, T=4, n0=100),
                                  D.cumulative_error_bound(m, u, T=4, n0=100, gamma=g))
    np.testing.assert_array_equal(D.pac_radius(m, 100, delta=0.1), D.pac_radius(m, 100, gamma=g, delta=0.1))
    # and a different explicit gamma is a different answer (the default is not a constant)
    assert not np.array_equal(D.growth_factor(m, u, n=100), D.growth_factor(m, u, n=100, gamma=3 * g))
    if g.ndim == 0:
        assert D.pac_rounds(m, MEM, 100, epsilon=2.0, delta=0.1) == \
            D.pac_rounds(m, MEM, 100, epsilon=2.0, delta=0.1, gamma=2.0)
    else:                                   # Theorem 4's horizon is one number: one gamma
        with pytest.raises(TypeError, match="^gamma must be a single number"):
            D.pac_rounds(m, MEM, 100, epsilon=2.0, delta=0.1)


def test_functions_of_one_cell_refuse_cells():
    cells = Memoryless(q=[0.3, 0.4], r=0.6)
    with pytest.raises(ValueError, match=r"^behaviour: infinite_horizon_gamma takes one cell"):
        D.infinite_horizon_gamma(GM, cells, n0=100, grid=5)
    with pytest.raises(TypeError, match=r"^behaviour's q must be a single number"):
        D.pac_rounds(GM, cells, 100, epsilon=2.0, delta=0.1)


# ------------------------------------------------------------------ against Algorithm 1
@pytest.mark.parametrize("gam,q,r", [(0.3, 0.5, 0.4), (1.5, 0.3, 0.6), (6.0, 0.8, 0.1)])
def test_growth_factor_is_the_mean_one_round_ratio_of_algorithm_1(gam, q, r):
    from perfpriv import gaussian

    n0, tau = 200, 0.05
    run = gaussian.simulate(gam, tau=tau, q=q, r=r, T=1, n0=n0, d=3, R=8.0, trials=400, seed=4)
    ratio = run.population[:, 1] / n0
    se = ratio.std(ddof=1) / math.sqrt(ratio.size)
    C = D.growth_factor(mech(tau, gamma=gam, **SMALL), users(q, r), n=n0)
    assert abs(ratio.mean() - C) < 4.5 * se + 1e-12


# ------------------------------------------------ Theorem 4's constants, computed independently
@pytest.mark.parametrize("delta", [0.01, 0.05, 0.3])
@pytest.mark.parametrize("Sigma", [None, np.diag([0.5, 2.0, 1.0])])
def test_pac_radius_constants_are_pinelis_and_laurent_massart(delta, Sigma):
    # ||o − μ||_{Σ⁻¹} <= B(R) + (V_{δ/2} + γ sqrt(λ_max(Σ⁻¹) K_{δ/2}))/sqrt(n) with
    # V_{δ/2} = 2R sqrt(2 λ_max(Σ⁻¹) ln(4/δ)) and K_{δ/2} = d + 2 sqrt(d ln(2/δ)) + 2 ln(2/δ)
    d, R, n = 3, 7.0, 400.0
    lam = 1.0 if Sigma is None else 1.0 / 0.5
    V = 2 * R * math.sqrt(2 * lam * math.log(4 / delta))
    K = d + 2 * math.sqrt(d * math.log(2 / delta)) + 2 * math.log(2 / delta)
    m = mech(0.02, d=d, R=R, Sigma=Sigma)
    B = D.pac_radius(m, 1e300, gamma=1.0, delta=delta)  # n → inf leaves the clipping bias
    for gam in (0.5, 3.0):
        expect = B + (V + gam * math.sqrt(lam * K)) / math.sqrt(n)
        assert D.pac_radius(m, n, gamma=gam, delta=delta) == pytest.approx(expect, rel=1e-13)


def test_pac_rounds_is_the_smallest_t_of_theorem_4_computed_independently():
    gam, tau, q, r, n0, d, R, eps, delta = 2.0, 0.02, 0.3, 0.6, 1000, 12, 10.0, 1.0, 0.05
    V = 2 * R * math.sqrt(2 * math.log(4 / delta))
    K = d + 2 * math.sqrt(d * math.log(2 / delta)) + 2 * math.log(2 / delta)
    M = math.sqrt(d)
    B = M * math.exp(-((R - M) ** 2) / 4)
    p = leakage.marginal_leak_probability(n0, gam, tau=tau, d=d, R=R, method="quadrature").p
    C1 = 1 + r - (q + r) * p
    t_real = math.log((V + gam * math.sqrt(K)) ** 2 / (n0 * (eps - B) ** 2)) / math.log(C1)
    m = mech(tau, gamma=gam, d=d, R=R, leak_method="quadrature")
    assert D.pac_rounds(m, users(q, r), n0, epsilon=eps, delta=delta) == math.ceil(t_real)


# ------------------------------------------------ the infinite-horizon limit (corrects Remark 2)
def test_infinite_horizon_limit_is_the_rescaled_error_of_the_uncapped_mean_field():
    # L(γ) = lim (1 + r)^t E_t(γ) with E_t = (γ² d + d)/N_{t-1} along the uncapped mean field
    q, r, tau, n0, d, R = 0.3, 0.6, 0.02, 200, 3, 30.0
    res = D.infinite_horizon_gamma(mech(tau, d=d, R=R, leak_method="quadrature"), users(q, r), n0=n0, grid=9)
    assert res.finite and res.gammas.shape == (9,) and np.isfinite(res.limit)
    T = 120
    for j in (2, 4, 7):
        g = res.gammas[j]
        err = path(g, tau, q, r, T=T, n0=n0, d=d, R=R, cap=None, leak_method="quadrature").sq_error
        rescaled = (1 + r) ** np.arange(1, T + 1) * err
        assert rescaled[-1] == pytest.approx(rescaled[-2], rel=1e-9)  # converged
        assert res.limits[j] == pytest.approx(rescaled[-1], rel=1e-6)
    # the optimum: no better on a fine grid around it, and an interior point of the bracket
    fine = np.geomspace(res.gamma / 1.5, res.gamma * 1.5, 7)
    errs = [path(g, tau, q, r, T=T, n0=n0, d=d, R=R, cap=None, leak_method="quadrature").sq_error[-1]
            for g in fine]
    assert min(errs) * (1 + r) ** T >= res.limit * (1 - 1e-6)
    assert res.gammas[0] < res.gamma < res.gammas[-1]


def test_infinite_horizon_gamma_evaluates_p_tau_by_the_mechanism_s_method_and_ignores_its_level():
    # the function once forced the quadrature; now the mechanism's leak_method is used, and "auto" is the
    # quadrature where clipping is negligible (d = 12, R = 10): the same numbers. The level (5.0) is not read.
    u = users(0.3, 0.6)
    quad = D.infinite_horizon_gamma(mech(0.02, **D12), u, n0=1000, grid=9)
    auto = D.infinite_horizon_gamma(GaussianMean(5.0, tau=0.02, d=12, R=10.0), u, n0=1000, grid=9)
    assert quad.finite and auto.gamma == quad.gamma and auto.limit == quad.limit
    np.testing.assert_array_equal(auto.limits, quad.limits)


def test_infinite_horizon_limit_is_infinite_when_nobody_joins():
    res = D.infinite_horizon_gamma(mech(0.02, d=3, R=30.0, leak_method="quadrature"), users(0.3, 0.0), n0=200,
                                   grid=5)
    assert not res.finite and res.limit == np.inf and math.isnan(res.gamma) and "nobody joins" in res.reason


def test_infinite_horizon_gamma_bounds_its_grid_up_front():
    # was: MemoryError: Unable to allocate 7.28 TiB (grid = 1e12 mean-field paths)
    with pytest.raises(ValueError, match="^grid is too large"):
        D.infinite_horizon_gamma(mech(0.02, d=3, R=10.0, leak_method="quadrature"), users(0.3, 0.6), n0=100,
                                 grid=10**12)


# -------------------------------------------- critical noise scales at the ends of the double range


@pytest.mark.usefixtures("mp60")
@pytest.mark.parametrize("r", [1e-20, 1e-100, 1e-300, 0.05, 0.6])
def test_critical_gamma_uses_the_upper_tail_of_the_probit(r):
    q, tau, n, R = 0.1, 0.02, 1000, 10.0
    Q, Rr, T, N = mpmath.mpf(q), mpmath.mpf(r), mpmath.mpf(tau), mpmath.mpf(n)
    # x = Φ⁻¹(q/(q + r)) = −Φ⁻¹(r/(q + r)), solved at 60 digits
    u = Rr / (Q + Rr)
    # (on the log scale: ncdf(y) − u has an absolute tolerance that tiny u would not meet)
    if u < 0.5:
        x = -mpmath.findroot(lambda y: mpmath.log(mpmath.ncdf(y)) - mpmath.log(u), -mpmath.sqrt(-2 * mpmath.log(u)))
    else:
        x = mpmath.findroot(lambda y: mpmath.ncdf(y) - Q / (Q + Rr), 0)
    want = 2 * R * mpmath.sqrt(N) / (N - 1) * (x + mpmath.sqrt(x * x + 2 * T)) / (2 * T)
    got = crit(q, r, tau, n, R)
    assert math.isfinite(got) and got == pytest.approx(float(want), rel=1e-10)


def test_exact_critical_gamma_is_the_lower_end_of_the_bracket_when_nothing_leaks():
    # τ = 1e300: nothing leaks at any γ, so C(γ) = 1 + r > 1 already at the lower end of the bracket
    assert D.exact_critical_gamma(mech(1e300, d=3, R=10.0), users(0.3, 0.6), n=100) == 1e-6


# ----------------------------------------------------------------- a mechanism without a noise scale
def test_the_thresholds_take_a_mechanism_without_a_noise_scale_and_agree_with_one_that_has_any():
    # the thresholds choose gamma themselves: the model alone (tau, d, R) is their whole input
    bare = GaussianMean(tau=0.02, d=12, R=10.0, leak_method="quadrature")
    users = Memoryless(q=np.array([0.3, 0.5]), r=0.6)
    for level in (0.01, 7.0, [1.0, 2.0]):
        with_level = GaussianMean(level, tau=0.02, d=12, R=10.0, leak_method="quadrature")
        np.testing.assert_array_equal(D.critical_gamma(bare, users, n=1000), D.critical_gamma(with_level, users, n=1000))
        np.testing.assert_array_equal(D.exact_critical_gamma(bare, users, n=1000),
                                      D.exact_critical_gamma(with_level, users, n=1000))
    one = Memoryless(q=0.3, r=0.6)
    a = D.infinite_horizon_gamma(bare, one, n0=100, grid=5, rounds_max=50)
    b = D.infinite_horizon_gamma(GaussianMean(3.0, tau=0.02, d=12, R=10.0, leak_method="quadrature"), one, n0=100,
                                 grid=5, rounds_max=50)
    assert (a.gamma, a.limit) == (b.gamma, b.limit)
    # and the pointwise formulas evaluate it at an explicit gamma
    assert D.growth_factor(bare, one, n=1000, gamma=2.0) == D.growth_factor(
        GaussianMean(2.0, tau=0.02, d=12, R=10.0, leak_method="quadrature"), one, n=1000)


@pytest.mark.parametrize("name", ["growth_factor", "error_bounds", "cumulative_error_bound", "pac_radius", "pac_rounds"])
def test_a_pointwise_formula_on_a_mechanism_without_a_noise_scale_asks_for_gamma(name):
    with pytest.raises(ValueError, match=r"^gamma: the mechanism was built without a noise scale"):
        CALLS[name](GaussianMean(tau=0.02, d=3, R=8.0), MEM)
