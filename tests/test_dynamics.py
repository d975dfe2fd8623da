"""Tests of perfpriv.dynamics (paper §4.5, Lemma 9, Theorem 4, appendices D.3-D.4, E).

Truth comes from the paper's formulas written out here independently
(Lemma 7 at the worst case s = 2R with scipy.stats.norm, the finite sums that
Lemma 9 replaces, Kantorovich's inequality on explicit distributions) and from
Monte Carlo simulation of releases for Theorem 4.
"""

import math

import mpmath
import numpy as np
import pytest
from scipy import special, stats

from perfpriv import dynamics as D
from perfpriv import leakage

D12 = dict(d=12, R=10.0, method="quadrature")  # the paper's data model (quadrature is exact there)
SMALL = dict(d=3, R=8.0, method="quadrature")


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
    gc = D.critical_gamma(q=q, r=r, tau=tau, n=n, R=R)
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
        np.testing.assert_allclose(D.critical_gamma(q=q, r=r, tau=tau, n=n, R=R), literal, rtol=1e-9)


def test_critical_gamma_edge_cases_are_the_limits_of_the_formula():
    assert D.critical_gamma(q=0.0, r=0.5, tau=0.02, n=1000, R=10) == 0.0  # nobody leaves
    assert D.critical_gamma(q=0.5, r=0.0, tau=0.02, n=1000, R=10) == math.inf  # nobody joins
    assert D.critical_gamma(q=0.0, r=0.0, tau=0.02, n=1000, R=10) == 0.0  # C == 1
    # approaching q -> 0 the threshold decreases continuously to 0, without cancellation to 0 or NaN
    qs = np.array([1e-2, 1e-5, 1e-10, 1e-30, 1e-300])
    g = D.critical_gamma(q=qs, r=0.5, tau=0.02, n=1000, R=10)
    assert np.all(np.diff(g) < 0) and np.all(g > 0)
    # far tail: 1/(sqrt(x^2+2 tau) - x) ~ 1/(2|x|) as x -> -inf
    x = special.ndtri(1e-300 / (1e-300 + 0.5))
    assert g[-1] == pytest.approx(2 * 10 * math.sqrt(1000) / 999 / (2 * abs(x)), rel=1e-3)
    # approaching r -> 0 it grows to inf
    g = D.critical_gamma(q=0.5, r=np.array([1e-2, 1e-6, 1e-12]), tau=0.02, n=1000, R=10)
    assert np.all(np.diff(g) > 0) and np.all(np.isfinite(g))


def test_critical_gamma_scales_like_sqrt_n_over_n_minus_1():
    n = np.array([3.0, 10, 100, 1e4, 1e6])
    g = D.critical_gamma(q=0.4, r=0.3, tau=0.05, n=n, R=2.0)
    np.testing.assert_allclose(g * (n - 1) / np.sqrt(n), g[0] * 2 / math.sqrt(3), rtol=1e-12)


@pytest.mark.parametrize("q,r", [(0.3, 0.6), (0.6, 0.3), (0.9, 0.05), (0.05, 0.9)])
@pytest.mark.parametrize("tau", [0.01, 0.2])
def test_exact_critical_gamma_gives_growth_one_and_theorem_2_is_conservative(q, r, tau):
    g = D.exact_critical_gamma(q=q, r=r, tau=tau, n=1000, **D12)
    c = D.growth_factor(g, tau=tau, q=q, r=r, n=1000, **D12)
    assert abs(c - 1) < 1e-8
    assert D.growth_factor(1.01 * g, tau=tau, q=q, r=r, n=1000, **D12) > 1 > D.growth_factor(0.99 * g, tau=tau, q=q, r=r, n=1000, **D12)
    assert D.critical_gamma(q=q, r=r, tau=tau, n=1000, R=10.0) >= g


def test_exact_critical_gamma_edge_cases_and_arrays():
    assert D.exact_critical_gamma(q=0.0, r=0.5, tau=0.02, n=100, **SMALL) == 0.0
    assert D.exact_critical_gamma(q=0.0, r=0.0, tau=0.02, n=100, **SMALL) == 0.0
    assert D.exact_critical_gamma(q=0.5, r=0.0, tau=0.02, n=100, **SMALL) == math.inf
    q = np.array([[0.2], [0.7]])
    r = np.array([0.1, 0.5, 0.0])
    g = D.exact_critical_gamma(q=q, r=r, tau=0.05, n=100, **SMALL)
    assert g.shape == (2, 3)
    assert g[1, 1] == pytest.approx(D.exact_critical_gamma(q=0.7, r=0.5, tau=0.05, n=100, **SMALL), rel=1e-12)
    assert np.all(np.isinf(g[:, 2]))


def test_exact_statistic_threshold_can_be_infinite_at_small_n():
    # (d/2) log(n/(n-1)) > tau: even infinite noise leaks with probability > r/(q+r)
    d, n, tau = 12, 5, 0.1
    assert 0.5 * d * math.log(n / (n - 1)) > tau
    g = D.exact_critical_gamma(q=0.5, r=0.05, tau=tau, n=n, d=d, R=50.0, statistic="exact", method="quadrature")
    assert g == math.inf


# ------------------------------------------------------------------ eq. 13, Lemma 12
def test_growth_factor_is_eq_13_and_broadcasts():
    gam = np.array([0.3, 1.0, 5.0])
    n = np.array([[20.0], [1000.0]])
    C = D.growth_factor(gam, tau=0.02, q=0.3, r=0.6, n=n, **D12)
    p = leakage.marginal_leak_probability(n, gam, tau=0.02, d=12, R=10.0).p
    assert C.shape == (2, 3)
    np.testing.assert_allclose(C, 1 + 0.6 - 0.9 * p, rtol=1e-14)
    # limits: gamma -> 0 gives 1 - q (Corollary 1), gamma -> inf gives 1 + r
    assert D.growth_factor(1e-4, tau=0.02, q=0.3, r=0.6, n=1000, **D12) == pytest.approx(0.7, abs=1e-9)
    assert D.growth_factor(1e4, tau=0.02, q=0.3, r=0.6, n=1000, **D12) == pytest.approx(1.6, abs=1e-9)


def test_below_two_records_leak_probability_is_one_at_one_and_linear_up_to_two():
    assert D.growth_factor(3.0, tau=0.02, q=0.3, r=0.6, n=1, **D12) == pytest.approx(0.7)
    p2 = leakage.marginal_leak_probability(2, 3.0, tau=0.02, d=12, R=10.0).p
    for n in (1.25, 1.5, 1.999):
        p = (2 - n) + (n - 1) * p2
        assert D.growth_factor(3.0, tau=0.02, q=0.3, r=0.6, n=n, **D12) == pytest.approx(1.6 - 0.9 * p, rel=1e-13)
    # continuous at n = 2
    assert D.growth_factor(3.0, tau=0.02, q=0.3, r=0.6, n=2 - 1e-9, **D12) == pytest.approx(
        D.growth_factor(3.0, tau=0.02, q=0.3, r=0.6, n=2, **D12), abs=1e-8)


@pytest.mark.parametrize("statistic", ["paper", "exact"])
def test_lemma_12_leak_probability_decreases_and_growth_increases_with_population(statistic):
    # The paper's proof of Lemma 12 says p_tau "strictly increases" as N grows; it decreases.
    n = np.array([10.0, 30, 100, 300, 1000, 3000])
    for gam in (0.5, 2.0):
        C = D.growth_factor(gam, tau=0.02, q=0.3, r=0.6, n=n, d=12, R=10.0, statistic=statistic, method="quadrature")
        assert np.all(np.diff(C) > 0)


# ------------------------------------------------------------------ Theorem 3
def test_kappa_formula_and_limits():
    assert D.kappa(q=0.3, r=0.6) == pytest.approx((2.3) ** 2 / (4 * 0.7 * 1.6))
    assert D.kappa(q=0.0, r=0.0) == 1.0
    assert D.kappa(q=1.0, r=0.3) == math.inf
    np.testing.assert_array_less(0.999999, D.kappa(q=np.linspace(0, 0.99, 7), r=np.linspace(0, 1, 7)))


@pytest.mark.parametrize("q,r", [(0.3, 0.6), (0.9, 0.05), (0.05, 0.9), (0.5, 0.0)])
def test_kappa_is_the_kantorovich_constant_on_one_minus_q_one_plus_r(q, r):
    lo, hi = 1 - q, 1 + r
    k = D.kappa(q=q, r=r)
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
    lo, hi = D.error_bounds(gam, tau=0.05, q=q, r=r, n_prev=n_prev, d=3, R=30.0, Sigma=Sigma, method="quadrature")
    C = D.growth_factor(gam, tau=0.05, q=q, r=r, n=n_prev, d=3, R=30.0, Sigma=Sigma, method="quadrature")
    np.testing.assert_allclose(lo, (gam**2 * 1.5 + 3) / (C * n_prev), rtol=1e-13)
    np.testing.assert_allclose(hi, D.kappa(q=q, r=r) * lo, rtol=1e-13)
    res = D.error_bounds(1.0, tau=0.05, q=q, r=r, n_prev=n_prev, d=3, R=30.0, Sigma=Sigma, method="quadrature")
    assert res.upper >= res.lower > 0 and res.kappa == D.kappa(q=q, r=r)


# ------------------------------------------------------------------ mean field
def test_mean_field_population_follows_the_recursion_with_cap_and_floor():
    kw = dict(T=12, n0=200, **SMALL)
    N = D.mean_field(2.0, tau=0.05, q=0.2, r=0.5, cap=None, floor=None, **kw).population
    for t in range(1, 13):
        C = D.growth_factor(2.0, tau=0.05, q=0.2, r=0.5, n=N[t - 1], **SMALL)
        assert N[t] == pytest.approx(N[t - 1] * C, rel=1e-12)
    capped = D.mean_field(2.0, tau=0.05, q=0.2, r=0.5, cap=500, **kw).population
    assert capped.max() == 500 and np.all(capped <= 500)
    np.testing.assert_allclose(capped[capped < 500], N[: (capped < 500).sum()])
    # collapse: tiny noise, many leavers -> floored at 1 and stays there
    dead = D.mean_field(0.01, tau=0.05, q=0.9, r=0.05, cap=None, floor=1, **kw).population
    assert dead[-1] == 1.0 and np.all(np.diff(dead) <= 0)


def test_mean_field_broadcasts_over_gamma_q_r():
    gam = np.array([0.5, 2.0, 8.0])
    # array q, r are cells (leading axes), a 1-D gamma a grid of levels (the next axis)
    N = D.mean_field(gam, tau=0.05, q=np.array([0.2, 0.6]), r=0.4, T=5, n0=100, **SMALL).population
    assert N.shape == (2, 3, 6)
    cells = D.mean_field(gam, tau=0.05, q=np.array([[0.2], [0.6]]), r=np.array([0.4, 0.5]),
                                    T=5, n0=100, **SMALL).population
    assert cells.shape == (2, 2, 3, 6)
    np.testing.assert_allclose(cells[1, 1, 0], D.mean_field(0.5, tau=0.05, q=0.6, r=0.5, T=5,
                                                                       n0=100, **SMALL).population, rtol=1e-14)
    single = D.mean_field(2.0, tau=0.05, q=0.6, r=0.4, T=5, n0=100, **SMALL).population
    np.testing.assert_allclose(N[1, 1], single, rtol=1e-14)


def test_mean_field_error_indexing_and_cumulative_sum():
    kw = dict(T=6, n0=100, **SMALL)
    N = D.mean_field(1.5, tau=0.05, q=0.3, r=0.5, **kw).population
    e_paper = D.mean_field(1.5, tau=0.05, q=0.3, r=0.5, rounds="paper", **kw).sq_error
    e_alg = D.mean_field(1.5, tau=0.05, q=0.3, r=0.5, rounds="algorithm", **kw).sq_error
    # the default is Algorithm 1's indexing (as in the simulators)
    np.testing.assert_array_equal(D.mean_field(1.5, tau=0.05, q=0.3, r=0.5, **kw).sq_error, e_alg)
    num = 1.5**2 * 3 + 3
    np.testing.assert_allclose(e_paper, num / N[1:], rtol=1e-14)
    np.testing.assert_allclose(e_alg, num / N[:-1], rtol=1e-14)
    assert D.mean_field(1.5, tau=0.05, q=0.3, r=0.5, rounds="paper", **kw).cumulative_error == \
        pytest.approx(e_paper.sum(), rel=1e-14)
    assert D.mean_field(1.5, tau=0.05, q=0.3, r=0.5, **kw).cumulative_error == pytest.approx(e_alg.sum(), rel=1e-14)


# ------------------------------------------------------------------ Lemma 9
@pytest.mark.parametrize("gam", [0.05, 0.3, 1.0, 3.0, 30.0])
@pytest.mark.parametrize("T", [1, 7, 50])
def test_lemma_9_closed_form_equals_the_finite_sum(gam, T):
    q, r, tau, n0 = 0.4, 0.3, 0.05, 300
    C1 = D.growth_factor(gam, tau=tau, q=q, r=r, n=n0, **SMALL)
    total = sum((gam**2 * 3 + 3) / (n0 * C1**t) for t in range(1, T + 1))
    assert D.cumulative_error_bound(gam, tau=tau, q=q, r=r, T=T, n0=n0, **SMALL) == pytest.approx(total, rel=1e-11)


def test_lemma_9_limit_at_growth_factor_one():
    # q = r = 0: C == 1 exactly, Ê_total = T (gamma^2 Tr + d) / N0
    assert D.cumulative_error_bound(2.0, tau=0.05, q=0.0, r=0.0, T=9, n0=100, **SMALL) == pytest.approx(9 * 15 / 100, rel=1e-15)
    # near C = 1 the stable form is continuous and matches the sum
    g = D.exact_critical_gamma(q=0.4, r=0.3, tau=0.05, n=100, **SMALL)
    for f in (1 - 1e-7, 1.0, 1 + 1e-7):
        C1 = D.growth_factor(g * f, tau=0.05, q=0.4, r=0.3, n=100, **SMALL)
        total = sum(1 / C1**t for t in range(1, 21)) * ((g * f) ** 2 * 3 + 3) / 100
        val = D.cumulative_error_bound(g * f, tau=0.05, q=0.4, r=0.3, T=20, n0=100, **SMALL)
        assert val == pytest.approx(total, rel=1e-9)
    small = D._inverse_geometric_sum(np.array([0.0, 1e-13, -1e-13]), 20)
    np.testing.assert_allclose(small, [20, 20 - 210e-13, 20 + 210e-13], rtol=1e-15)


def test_lemma_9_infinite_when_the_population_is_wiped_out():
    # q = 1 and gamma -> 0: C_1 = 1 - q = 0
    assert D.cumulative_error_bound(1e-6, tau=0.05, q=1.0, r=0.3, T=3, n0=100, **SMALL) == math.inf


@pytest.mark.parametrize("q,r", [(0.3, 0.6), (0.6, 0.3), (0.1, 0.1)])
def test_lemma_9_bounds_the_uncapped_mean_field_cumulative_error_in_the_growth_regime(q, r):
    tau, n0, T = 0.05, 100, 25
    gc = D.exact_critical_gamma(q=q, r=r, tau=tau, n=n0, **SMALL)
    for gam in gc * np.array([1.05, 2.0, 10.0]):
        N = D.mean_field(gam, tau=tau, q=q, r=r, T=T, n0=n0, cap=None, **SMALL).population
        C = N[1:] / N[:-1]
        # Lemma 12's premise and conclusion (non-decreasing: C saturates at 1 + r once p_tau ~ 0)
        assert np.all(C > 1) and np.all(np.diff(C) >= -1e-15) and C[1] > C[0]
        bound = D.cumulative_error_bound(gam, tau=tau, q=q, r=r, T=T, n0=n0, **SMALL)
        # Lemma 9 bounds the paper's indexing (the release of round t uses N_t)
        exact = D.mean_field(gam, tau=tau, q=q, r=r, T=T, n0=n0, cap=None, rounds="paper",
                                              **SMALL).cumulative_error
        assert bound >= exact
        # ... and is tight to first order: within the factor C_1^T of it
        assert bound <= exact * (N[1] / N[0]) ** T


# ------------------------------------------------------------------ Theorem 4
def test_pac_rounds_formula_and_radius_at_that_horizon():
    kw = dict(n0=50, d=2, R=6.0, method="quadrature")
    gam, tau, q, r, eps, delta = 1.0, 0.1, 0.2, 0.5, 0.8, 0.1
    t = D.pac_rounds(gam, tau=tau, q=q, r=r, epsilon=eps, delta=delta, **kw)
    C1 = D.growth_factor(gam, tau=tau, q=q, r=r, n=50, d=2, R=6.0, method="quadrature")
    rad = lambda n: D.pac_radius(gam, n, d=2, R=6.0, delta=delta)  # noqa: E731
    assert t >= 1
    assert rad(50 * C1**t) <= eps < rad(50 * C1 ** (t - 1))


def test_pac_rounds_coverage_by_simulation():
    """At t = pac_rounds, a release from N0 C1^t records is within epsilon w.p. >= 1 - delta."""
    d, R, n0, gam, tau, q, r, eps, delta = 2, 6.0, 20, 1.0, 0.1, 0.2, 0.5, 1.0, 0.2
    t = D.pac_rounds(gam, tau=tau, q=q, r=r, n0=n0, d=d, R=R, epsilon=eps, delta=delta, method="quadrature")
    C1 = D.growth_factor(gam, tau=tau, q=q, r=r, n=n0, d=d, R=R, method="quadrature")
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
    assert D.pac_radius(gam, n, d=d, R=R, delta=delta) <= eps


def test_pac_rounds_zero_when_already_accurate_and_errors_explained():
    kw = dict(n0=10_000, d=2, R=8.0, method="quadrature")
    assert D.pac_rounds(1.0, tau=0.1, q=0.2, r=0.5, epsilon=5.0, delta=0.1, **kw) == 0
    with pytest.raises(ValueError, match="epsilon"):
        D.pac_rounds(1.0, tau=0.1, q=0.2, r=0.5, epsilon=1e-30, delta=0.1, n0=50, d=2, R=1.0, method="quadrature")
    with pytest.raises(ValueError, match="C_1"):
        D.pac_rounds(0.01, tau=0.1, q=0.6, r=0.3, epsilon=1.0, delta=0.1, **kw)


def test_pac_clipping_bias_matches_theorem_4_constants():
    # B(R) = sqrt(lmax(S^-1)) M exp(-(R-M)^2/(4 lmax(S))), R > M; radius at n -> inf is B
    Sigma = np.diag([1.0, 4.0])
    mu = np.array([0.5, -1.0])
    M = math.sqrt(0.25 + 1 + 5)
    B = 1.0 * M * math.exp(-((6 - M) ** 2) / 16)
    assert D.pac_radius(1.0, 1e30, d=2, R=6.0, mu=mu, Sigma=Sigma, delta=0.1) == pytest.approx(B, rel=1e-9)


# ------------------------------------------------------------------ validation
@pytest.mark.parametrize(
    "call,name",
    [
        (lambda: D.critical_gamma(q=1.5, r=0.3, tau=0.02, n=100, R=10), "q"),
        (lambda: D.critical_gamma(q=0.5, r=-0.1, tau=0.02, n=100, R=10), "r"),
        (lambda: D.critical_gamma(q=0.5, r=0.3, tau=0.0, n=100, R=10), "tau"),
        (lambda: D.critical_gamma(q=0.5, r=0.3, tau=0.02, n=1, R=10), "n"),
        (lambda: D.critical_gamma(q=0.5, r=0.3, tau=0.02, n=100, R=0), "R"),
        (lambda: D.growth_factor(-1.0, tau=0.02, q=0.3, r=0.6, n=100, **SMALL), "gamma"),
        (lambda: D.growth_factor(1.0, tau=0.02, q=0.3, r=0.6, n=0.5, **SMALL), "n"),
        (lambda: D.growth_factor(1.0, tau=0.02, q=0.3, r=0.6, n=100, d=3, R=8.0, statistic="bogus"), "statistic"),
        (lambda: D.growth_factor(1.0, tau=0.02, q=0.3, r=0.6, n=100, d=3, R=8.0, method="bogus"), "method"),
        (lambda: D.growth_factor(1.0, tau=0.02, q=0.3, r=0.6, n=100, d=0, R=8.0), "d"),
        (lambda: D.exact_critical_gamma(q=0.3, r=0.6, tau=0.02, n=100, bracket=(2, 1), **SMALL), "bracket"),
        (lambda: D.kappa(q=0.3, r=1.2), "r"),
        (lambda: D.error_bounds(1.0, tau=0.02, q=0.3, r=0.6, n_prev=0, **SMALL), "n_prev"),
        (lambda: D.mean_field(1.0, tau=0.02, q=0.3, r=0.6, T=0, n0=100, **SMALL).population, "T"),
        (lambda: D.mean_field(1.0, tau=0.02, q=0.3, r=0.6, T=3, n0=1, **SMALL).population, "n0"),
        (lambda: D.mean_field(1.0, tau=0.02, q=0.3, r=0.6, T=3, n0=100, cap=50, **SMALL).population, "cap"),
        (lambda: D.mean_field(1.0, tau=0.02, q=0.3, r=0.6, T=3, n0=100, floor=-0.5, **SMALL).population, "floor"),
        (lambda: D.mean_field(1.0, tau=0.02, q=0.3, r=0.6, T=3, n0=100, floor=200, **SMALL).population, "floor"),
        (lambda: D.growth_factor(1.0, tau=0.02, q=0.3, r=0.6, n=100, d=3, R=8.0, samples=0), "samples"),
        (lambda: D.growth_factor(1.0, tau=0.02, q=0.3, r=0.6, n=100, d=3, R=8.0, method="montecarlo", seed=-1),
         "seed"),
        (lambda: D.mean_field(1.0, tau=0.02, q=0.3, r=0.6, T=3, n0=100, rounds="x", **SMALL).sq_error, "rounds"),
        (lambda: D.cumulative_error_bound(1.0, tau=0.02, q=0.3, r=0.6, T=3, n0=100, Sigma=-np.eye(3), **SMALL), "Sigma"),
        (lambda: D.pac_rounds(1.0, tau=0.02, q=0.3, r=0.6, n0=100, epsilon=1.0, delta=1.0, **SMALL), "delta"),
        (lambda: D.pac_rounds(1.0, tau=0.02, q=0.3, r=0.6, n0=100, epsilon=0.0, delta=0.1, **SMALL), "epsilon"),
        (lambda: D.pac_radius(1.0, 0.0, d=2, R=1.0, delta=0.1), "n"),
    ],
)
def test_bad_input_raises_value_error_naming_the_parameter(call, name):
    with pytest.raises(ValueError, match=rf"\b{name}\b"):
        call()


# ------------------------------------------------------------------ against Algorithm 1
@pytest.mark.parametrize("gam,q,r", [(0.3, 0.5, 0.4), (1.5, 0.3, 0.6), (6.0, 0.8, 0.1)])
def test_growth_factor_is_the_mean_one_round_ratio_of_algorithm_1(gam, q, r):
    from perfpriv import gaussian

    n0, tau = 200, 0.05
    run = gaussian.simulate(gam, tau=tau, q=q, r=r, T=1, n0=n0, d=3, R=8.0, trials=400, seed=4)
    ratio = run.population[:, 1] / n0
    se = ratio.std(ddof=1) / math.sqrt(ratio.size)
    C = D.growth_factor(gam, tau=tau, q=q, r=r, n=n0, **SMALL)
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
    B = D.pac_radius(1.0, 1e300, d=d, R=R, Sigma=Sigma, delta=delta)  # n → inf leaves the clipping bias
    for gam in (0.5, 3.0):
        expect = B + (V + gam * math.sqrt(lam * K)) / math.sqrt(n)
        assert D.pac_radius(gam, n, d=d, R=R, Sigma=Sigma, delta=delta) == pytest.approx(expect, rel=1e-13)


def test_pac_rounds_is_the_smallest_t_of_theorem_4_computed_independently():
    gam, tau, q, r, n0, d, R, eps, delta = 2.0, 0.02, 0.3, 0.6, 1000, 12, 10.0, 1.0, 0.05
    V = 2 * R * math.sqrt(2 * math.log(4 / delta))
    K = d + 2 * math.sqrt(d * math.log(2 / delta)) + 2 * math.log(2 / delta)
    M = math.sqrt(d)
    B = M * math.exp(-((R - M) ** 2) / 4)
    p = leakage.marginal_leak_probability(n0, gam, tau=tau, d=d, R=R, method="quadrature").p
    C1 = 1 + r - (q + r) * p
    t_real = math.log((V + gam * math.sqrt(K)) ** 2 / (n0 * (eps - B) ** 2)) / math.log(C1)
    assert D.pac_rounds(gam, tau=tau, q=q, r=r, n0=n0, d=d, R=R, epsilon=eps, delta=delta,
                        method="quadrature") == math.ceil(t_real)


# ------------------------------------------------ the infinite-horizon limit (corrects Remark 2)
def test_infinite_horizon_limit_is_the_rescaled_error_of_the_uncapped_mean_field():
    # L(γ) = lim (1 + r)^t E_t(γ) with E_t = (γ² d + d)/N_{t-1} along the uncapped mean field
    q, r, tau, n0, d, R = 0.3, 0.6, 0.02, 200, 3, 30.0
    res = D.infinite_horizon_gamma(q=q, r=r, tau=tau, n0=n0, d=d, R=R, grid=9)
    assert res.finite and res.gammas.shape == (9,) and np.isfinite(res.limit)
    T = 120
    for j in (2, 4, 7):
        g = res.gammas[j]
        err = D.mean_field(g, tau=tau, q=q, r=r, T=T, n0=n0, d=d, R=R, cap=None, method="quadrature").sq_error
        rescaled = (1 + r) ** np.arange(1, T + 1) * err
        assert rescaled[-1] == pytest.approx(rescaled[-2], rel=1e-9)  # converged
        assert res.limits[j] == pytest.approx(rescaled[-1], rel=1e-6)
    # the optimum: no better on a fine grid around it, and an interior point of the bracket
    fine = np.geomspace(res.gamma / 1.5, res.gamma * 1.5, 7)
    errs = [D.mean_field(g, tau=tau, q=q, r=r, T=T, n0=n0, d=d, R=R, cap=None, method="quadrature").sq_error[-1]
            for g in fine]
    assert min(errs) * (1 + r) ** T >= res.limit * (1 - 1e-6)
    assert res.gammas[0] < res.gamma < res.gammas[-1]


def test_infinite_horizon_limit_is_infinite_when_nobody_joins():
    res = D.infinite_horizon_gamma(q=0.3, r=0.0, tau=0.02, n0=200, d=3, R=30.0, grid=5)
    assert not res.finite and res.limit == np.inf and math.isnan(res.gamma) and "nobody joins" in res.reason


def test_infinite_horizon_gamma_bounds_its_grid_up_front():
    # was: MemoryError: Unable to allocate 7.28 TiB (grid = 1e12 mean-field paths)
    with pytest.raises(ValueError, match="^grid is too large"):
        D.infinite_horizon_gamma(q=0.3, r=0.6, tau=0.02, n0=100, d=3, R=10.0, grid=10**12)


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
    got = D.critical_gamma(q=q, r=r, tau=tau, n=n, R=R)
    assert math.isfinite(got) and got == pytest.approx(float(want), rel=1e-10)


def test_exact_critical_gamma_is_the_lower_end_of_the_bracket_when_nothing_leaks():
    # τ = 1e300: nothing leaks at any γ, so C(γ) = 1 + r > 1 already at the lower end of the bracket
    assert D.exact_critical_gamma(q=0.3, r=0.6, tau=1e300, n=100, d=3, R=10.0) == 1e-6
