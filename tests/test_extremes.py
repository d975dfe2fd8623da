"""perfpriv at the extremes, against high-precision references (mpmath).

Leak probabilities for γ → 0 and γ → ∞, τ → 0 and τ large, n up to 1e9
(Lemma 7 in closed form, its exact remove-one version, Lemma 8 by
quadrature); long horizons (T = 1e5) in the growth recursions; ε up to 700
and ε = ∞; q = 1, r = 0, q + r = 0; populations that die out or reach the
cap; a lone user in Algorithm 1. Every test runs under ``filterwarnings =
error``, so a RuntimeWarning anywhere fails it.
"""

import itertools
import math

import mpmath as mp
import numpy as np
import pytest

from perfpriv import bernoulli, dynamics, engine, gaussian, leakage
from perfpriv.behaviour import Memoryless
from perfpriv.gaussian import GaussianMean

mp.mp.dps = 40
TINY = 1e-300  # below this a probability is compared in log space only


# ------------------------------------------------------------ references


def _ref_paper(s, n, gamma, tau):
    """log P(Λ > τ | Z) for the paper's statistic (Lemma 7) at 40 digits."""
    s, n, gamma, tau = (mp.mpf(x) for x in (s, n, gamma, tau))
    mu = mp.sqrt(n) * s / (gamma * (n - 1))
    x = tau / mu - mu / 2
    return mp.log(mp.erfc(x / mp.sqrt(2)) / 2)


def _ref_ncx2_cdf(x, d, lam):
    """P(W <= x), W ~ χ²_d(λ), as W = (g + √λ)² + χ²_{d−1}: closed form (d = 1) or one quadrature."""
    x, lam = mp.mpf(x), mp.mpf(lam)
    if x <= 0:
        return mp.mpf(0)

    def given(v):  # P((g + √λ)² <= x − v)
        w = mp.sqrt(max(mp.mpf(0), x - v))
        return mp.ncdf(w - mp.sqrt(lam)) - mp.ncdf(-w - mp.sqrt(lam))

    if d == 1:
        return given(0)
    k = mp.mpf(d - 1)

    def integrand(u):  # v = u², χ_{d−1} density in u
        return given(u * u) * 2 * u ** (k - 1) * mp.exp(-u * u / 2) / (2 ** (k / 2) * mp.gamma(k / 2))

    top = mp.sqrt(x)
    mid = mp.sqrt(max(mp.mpf(0), x - lam)) if x > lam else top / 2
    pts = sorted({mp.mpf(0), min(mid, top), min(mp.sqrt(k) + 12, top), top})
    return mp.quad(integrand, pts)


def _ref_exact(s, n, gamma, tau, d):
    s, n, gamma, tau = (mp.mpf(x) for x in (s, n, gamma, tau))
    c = mp.mpf(d) / 2 * mp.log(n / (n - 1))
    lam = n * s**2 / gamma**2
    return _ref_ncx2_cdf(2 * n * (c - tau) + n * lam / (n - 1), d, lam)


def _rel(got, ref):
    ref = float(ref)
    return abs(got - ref) / abs(ref)


# ------------------------------------------------- Lemma 7, paper statistic

GAMMAS = [1e-8, 1e-3, 1.0, 1e3, 1e8]
TAUS = [1e-12, 1e-3, 1.0, 20.0, 50.0, 1e4]
NS = [2, 10, 1e4, 1e9]
SS = [1e-3, 1.0, 20.0]


@pytest.mark.parametrize("gamma", GAMMAS)
def test_paper_leak_probability_matches_mpmath_over_the_extremes(gamma):
    """Relative error <= 1e-10 wherever the probability is representable, log error
    <= 1e-12 everywhere (including where the probability underflows to 0)."""
    for tau, n, s in itertools.product(TAUS, NS, SS):
        ref_log = _ref_paper(s, n, gamma, tau)
        got_log = leakage.log_leak_probability(s, n, gamma, tau=tau)
        got = leakage.leak_probability(s, n, gamma, tau=tau)
        assert math.isfinite(got_log) and got_log <= 0.0
        assert abs(got_log - float(ref_log)) <= 1e-12 * max(1.0, abs(float(ref_log))), (s, n, gamma, tau)
        ref = mp.exp(ref_log)
        if ref > TINY:
            assert _rel(got, ref) <= 1e-10, (s, n, gamma, tau, got, ref)
        else:
            assert got < 1e-290  # underflows towards 0, never to a wrong positive value


def test_paper_leak_probability_keeps_relative_accuracy_deep_in_the_representable_tail():
    # τ/μ' − μ'/2 ≈ 29.7: P ≈ 1e-194, where 1 − Φ would have returned 0
    got = leakage.leak_probability(1.0, 10, 1.0, tau=10.5)
    ref = mp.exp(_ref_paper(1.0, 10, 1.0, 10.5))
    assert 1e-200 < got < 1e-185 and _rel(got, ref) <= 1e-12


def test_log_leak_probability_far_below_the_smallest_double():
    # n = 1e9, s = 1, γ = 1, τ = 0.02: probability ~ 10^{-86863}
    got = leakage.log_leak_probability(1.0, 1e9, 1.0, tau=0.02)
    assert got == pytest.approx(float(_ref_paper(1.0, 1e9, 1.0, 0.02)), rel=1e-13)
    assert leakage.leak_probability(1.0, 1e9, 1.0, tau=0.02) == 0.0
    assert leakage.log_leak_probability(0.0, 10, 1.0, tau=0.5) == -np.inf


def test_paper_leak_probability_limits_in_gamma_and_overflowing_ratios():
    assert leakage.leak_probability(1.0, 10, 1e-300, tau=0.5) == 1.0  # s/γ overflows: μ' = inf
    assert leakage.leak_probability(1e300, 10, 1e-300, tau=0.5) == 1.0
    assert leakage.leak_probability(1e-300, 10, 1e300, tau=0.5) == 0.0
    assert leakage.leak_probability(1.0, 10, 1.0, tau=1e308) == 0.0
    assert leakage.gdp_mu(1e300, 10, 1e-300) == np.inf
    assert leakage.worst_case_gdp_mu(10, 1e-300, 1e300) == np.inf
    assert leakage.threshold_for_fpr(1e300, 0.05) == -np.inf


# ------------------------------------------------- Lemma 7, exact statistic

EXACT_CASES = [  # (s, n, gamma, tau) spanning λ = n s²/γ² from 1e-16 to 1e21
    (1.0, 10, 1.0, 0.5), (3.0, 10, 1.0, 0.5), (1.0, 100, 0.1, 3.0), (1.0, 1e9, 1.0, 0.02),
    (1.0, 1e9, 1e-6, 0.02), (2.0, 1e4, 1e-4, 50.0), (1.0, 10, 1e-6, 5e11), (1.0, 10, 1e-6, 4.9e12),
    (1e-3, 5, 1e3, 1e-3), (1.0, 3, 1e5, 1e-12), (5.0, 50, 0.05, 1.0), (1.0, 2, 1e-8, 1.0),
]


@pytest.mark.parametrize("d", [1, 3])
@pytest.mark.parametrize("s, n, gamma, tau", EXACT_CASES)
def test_exact_leak_probability_matches_mpmath(s, n, gamma, tau, d):
    got = leakage.leak_probability(s, n, gamma, tau=tau, statistic="exact", d=d)
    ref = _ref_exact(s, n, gamma, tau, d)
    assert 0.0 <= got <= 1.0
    if ref > TINY:
        assert _rel(got, ref) <= 1e-9, (got, ref)
        assert leakage.log_leak_probability(s, n, gamma, tau=tau, statistic="exact", d=d) == pytest.approx(
            float(mp.log(ref)), rel=1e-9, abs=1e-12)
    else:
        assert got < 1e-290


def test_exact_leak_probability_beyond_the_noncentral_chi2_routine():
    """λ ≥ 1e12, where scipy's chndtr gives up: the quadrature fallback keeps 1e-10."""
    for lam_scale, z in [(1e13, -3.0), (1e14, -5.0), (1e13, 1.0), (1e14, -10.0), (3e12, -2.0)]:
        n = 100.0
        gamma = math.sqrt(n / lam_scale)  # s = 1
        # τ placing x − λ = z·√(4λ) (the bulk of W is λ ± 2√λ)
        c = 1.5 * math.log1p(1 / (n - 1))
        tau = c + (lam_scale / (n - 1) - z * 2 * math.sqrt(lam_scale)) / (2 * n)
        got = leakage.leak_probability(1.0, n, gamma, tau=tau, statistic="exact", d=3)
        ref = _ref_exact(1.0, n, gamma, tau, 3)
        # x − λ = 2n(c − τ) + λ/(n − 1) cancels two terms of size ~λ/n: one ulp of τ or
        # of λ moves it by ~λ·1e-16/n against the scale √λ. Up to λ = 1e14 that is a
        # relative change below ~1e-10 in P (beyond, the conditioning of the inputs,
        # not the method, limits the accuracy: ~3e-9 at λ = 1e20).
        assert _rel(got, ref) <= 1e-9, (lam_scale, z, got, ref)


def test_exact_leak_probability_when_s_over_gamma_or_tau_overflow():
    def p(s, n, gamma, tau):
        return leakage.leak_probability(s, n, gamma, tau=tau, statistic="exact", d=3)

    assert p(1.0, 1e9, 1.0, 1e300) == 0.0           # 2n(c − τ) = −inf: no leak
    assert p(1.0, 10, 1.0, 1.7e308) == 0.0
    assert p(1e200, 10, 1e-200, 1.0) == 1.0         # λ = inf: sure leak
    # both beyond range: (s/γ)²/(n − 1) = 1e399 against 2τ = 3.4e308 -> leak ...
    assert p(1e100, 10, 1e-100, 1.7e308) == 1.0
    # ... and (s/γ)²/(n − 1) = 1e307/9 against 2τ = 3.4e308 -> no leak (λ itself finite here)
    assert p(10**153.5, 10, 1.0, 1.7e308) == 0.0
    assert p(1e-300, 10, 1e300, 0.01) == p(0.0, 10, 1.0, 0.01)  # λ underflows to the s = 0 value


# ------------------------------------------------------- Lemma 8 (quadrature)


def _ref_marginal_paper(n, gamma, tau, d):
    """p_τ = E[Φ̄(τ/μ' − μ'/2)], s² = ((n−1)/n) χ²_d (Σ = I, no clipping), at 30 digits."""
    n, gamma, tau = mp.mpf(n), mp.mpf(gamma), mp.mpf(tau)
    k = mp.mpf(d)

    def integrand(u):  # u = ‖g‖, χ_d density
        s = u * mp.sqrt((n - 1) / n)
        mu = mp.sqrt(n) * s / (gamma * (n - 1))
        tail = mp.ncdf(-(tau / mu - mu / 2)) if mu > 0 else mp.mpf(0)
        return tail * 2 * u ** (k - 1) * mp.exp(-u * u / 2) / (2 ** (k / 2) * mp.gamma(k / 2))

    return mp.quad(integrand, [0, mp.sqrt(k), mp.sqrt(k) + 4, mp.sqrt(k) + 12, mp.inf])


def _ref_marginal_exact_d1(n, gamma, tau):
    """Exact statistic, d = 1: E over s of the closed-form noncentral χ²_1 cdf."""
    n, gamma, tau = mp.mpf(n), mp.mpf(gamma), mp.mpf(tau)
    c = mp.log(n / (n - 1)) / 2

    def integrand(u):
        s2 = u * u * (n - 1) / n
        lam = n * s2 / gamma**2
        x = 2 * n * (c - tau) + n * lam / (n - 1)
        if x <= 0:
            return mp.mpf(0)
        w = mp.sqrt(x)
        return (mp.ncdf(w - mp.sqrt(lam)) - mp.ncdf(-w - mp.sqrt(lam))) * 2 * mp.npdf(u)

    return mp.quad(integrand, [0, 1, 4, 12, mp.inf])


MARGINAL_CASES = [  # (n, gamma, tau)
    (1000, 0.05, 0.02), (1000, 30.0, 0.02), (1e9, 1e-4, 0.02), (1e9, 1.0, 1e-12),
    (10, 1e-3, 50.0), (2, 0.5, 0.1), (50, 1e3, 1e-3),
]


@pytest.mark.parametrize("n, gamma, tau", MARGINAL_CASES)
def test_marginal_leak_probability_quadrature_matches_mpmath(n, gamma, tau):
    d = 4
    got = leakage.marginal_leak_probability(n, gamma, tau=tau, d=d, R=1e3, method="quadrature").p
    ref = _ref_marginal_paper(n, gamma, tau, d)
    assert 0.0 <= got <= 1.0
    assert abs(got - float(ref)) <= 1e-10 * float(ref) + 1e-15, (got, ref)


@pytest.mark.parametrize("n, gamma, tau", [(1000, 0.05, 0.02), (1e9, 1e-4, 0.02), (3, 1e4, 0.05),
                                          (2, 1e8, 0.1)])
def test_marginal_exact_statistic_quadrature_matches_mpmath_in_one_dimension(n, gamma, tau):
    got = leakage.marginal_leak_probability(n, gamma, tau=tau, d=1, R=1e3, statistic="exact",
                                            method="quadrature").p
    ref = _ref_marginal_exact_d1(n, gamma, tau)
    assert abs(got - float(ref)) <= 1e-10 * float(ref) + 1e-15, (got, ref)


def test_marginal_leak_probability_degenerate_noise_scales_are_their_limits():
    kw = dict(d=3, R=1e3, method="quadrature")
    assert leakage.marginal_leak_probability(100, 1e-300, tau=0.02, **kw).p == 1.0
    assert leakage.marginal_leak_probability(100, 1e300, tau=0.02, **kw).p == 0.0
    assert leakage.marginal_leak_probability(100, 1.0, tau=1e308, **kw).p == 0.0
    # exact statistic as γ → ∞: F_{χ²_d}(2n(c − τ)) (only the variance change leaks)
    n, d, tau = 3, 3, 0.05
    c = 0.5 * d * math.log(n / (n - 1))
    limit = float(mp.gammainc(d / 2, 0, n * (c - tau), regularized=True))
    got = leakage.marginal_leak_probability(n, 1e300, tau=tau, d=d, R=1e3, statistic="exact",
                                            method="quadrature").p
    assert got == pytest.approx(limit, rel=1e-10)


def test_auto_method_at_populations_too_large_to_simulate_uses_quadrature():
    # d = 12, R = 10: clipping bound n P(‖z‖ > R) exceeds 1e-6 from n ~ 1e9 on
    res = leakage.marginal_leak_probability(1e12, 1.0, tau=0.02, d=12, R=10.0)
    assert res.method == "quadrature" and 0.0 <= res.p < 1e-6
    with pytest.raises(ValueError, match="n must be at most"):
        leakage.marginal_leak_probability(1e12, 1.0, tau=0.02, d=12, R=10.0, method="montecarlo")


# ------------------------------------------------------------ long horizons

T_LONG = 100_000
QUAD = dict(d=12, R=1e3, method="quadrature")  # R large: clipping negligible at every n


def gm(gamma=1.0, tau=0.02):
    """The Gaussian mechanism of QUAD's data model (for perfpriv.dynamics and engine.mean_field)."""
    return GaussianMean(gamma, tau=tau, d=QUAD["d"], R=QUAD["R"], leak_method=QUAD["method"])


@pytest.mark.parametrize("q, r, gamma", [(0.3, 0.6, 2.0), (0.9, 0.01, 2.0), (0.0, 0.0, 2.0), (1.0, 0.0, 0.05),
                                         (0.5, 0.5, 0.118)])
def test_cumulative_error_bound_over_a_long_horizon_matches_the_exact_geometric_sum(q, r, gamma):
    got = dynamics.cumulative_error_bound(gm(gamma), Memoryless(q=q, r=r), T=T_LONG, n0=1000)
    p = leakage.marginal_leak_probability(1000, gamma, tau=0.02, **QUAD).p
    C = 1 + mp.mpf(r) - (mp.mpf(q) + mp.mpf(r)) * mp.mpf(p)
    num = (mp.mpf(gamma) ** 2 * 12 + 12) / 1000
    ref = num * (T_LONG if C == 1 else (1 - C ** (-T_LONG)) / (C - 1)) if C > 0 else mp.inf
    if ref > mp.mpf("1e308"):
        assert got == np.inf
    else:
        assert got == pytest.approx(float(ref), rel=1e-9)


def test_inverse_geometric_sum_near_growth_one_and_for_huge_horizons():
    for e in [0.0, 5e-324, 1e-300, 1e-16, 1e-12, -1e-12, 1e-9, 1e-6, -1e-6, 0.5, -0.5]:
        for T in [1, 10**5, 10**9, 10**15]:
            got = float(dynamics._inverse_geometric_sum(np.array(e), T))
            # (1 − C^{−T})/(C − 1) with C = 1 + e, exactly (1 + e would round at 40 digits)
            ref = mp.mpf(T) if e == 0 else -mp.expm1(-T * mp.log1p(mp.mpf(e))) / mp.mpf(e)
            if ref > mp.mpf("1e308"):
                assert got == np.inf
            else:
                assert got == pytest.approx(float(ref), rel=1e-12), (e, T)


def test_uncapped_mean_field_population_overflows_to_inf_without_warnings():
    N = engine.mean_field(gm(2.0), Memoryless(q=0.0, r=1.0), T=T_LONG, n0=1000, cap=None).population
    assert N.shape == (T_LONG + 1,)
    assert np.all(N[1:] >= N[:-1]) and N[-1] == np.inf
    first_inf = int(np.argmax(np.isinf(N)))
    # p_τ is tiny long before the overflow, so the last finite steps grow by 1 + r = 2
    assert N[first_inf - 1] > np.finfo(float).max / 2
    assert N[first_inf - 1] == pytest.approx(N[first_inf - 2] * 2, rel=1e-9)


def test_mean_field_population_dying_out_reaches_zero_and_infinite_error():
    N = engine.mean_field(gm(0.05), Memoryless(q=1.0, r=0.0), T=T_LONG, n0=1000, cap=None, floor=None).population
    assert N[-1] == 0.0 and np.all(np.diff(N) <= 0)
    err = engine.mean_field(gm(0.05), Memoryless(q=1.0, r=0.0), T=T_LONG, n0=1000, cap=None, floor=None).sq_error
    assert err[-1] == np.inf and not np.isnan(err).any()
    floored = engine.mean_field(gm(0.05), Memoryless(q=1.0, r=0.0), T=T_LONG, n0=1000).population
    assert floored[-1] == 1.0


def test_mean_field_population_at_the_cap_stays_there():
    N = engine.mean_field(gm(2.0), Memoryless(q=0.3, r=0.6), T=T_LONG, n0=1000, cap=20000).population
    assert N.max() == 20000.0 and N[-1] == 20000.0
    assert np.all(np.diff(N) >= 0)


def test_bernoulli_mean_field_population_is_the_clipped_geometric_sequence_over_long_horizons():
    eps = np.array([1.0, 0.05, 700.0, np.inf, 1.0, 1.0, 2.0, 1e-3])
    q = np.array([0.3, 0.3, 0.3, 0.3, 1.0, 0.0, 0.2, 0.01])
    r = np.array([0.6, 0.6, 0.6, 0.6, 0.0, 0.0, 0.2, 0.0])
    cap, n0 = 20000, 400
    # the first four paths share their cell: one call with ε as a grid of levels (the vectorized path, ε from
    # 0.05 to ∞); each other path a call of its own. (The 8 x 8 grid x cells call this test made, to read its
    # diagonal, took 8 s for 56 paths that were only checked to be finite.)
    grid = bernoulli.mean_field(eps[:4], q=q[0], r=r[0], T=T_LONG, n0=n0, cap=cap).population
    assert grid.shape == (4, T_LONG + 1)
    N = np.vstack([grid] + [bernoulli.mean_field(eps[i], q=q[i], r=r[i], T=T_LONG, n0=n0, cap=cap).population
                            for i in range(4, eps.size)])
    assert N.shape == (eps.size, T_LONG + 1) and np.isfinite(N).all()
    for i in range(eps.size):
        C = mp.mpf(bernoulli.growth_factor(bernoulli.beta_from_epsilon(eps[i]), q=q[i], r=r[i]))
        for t in [1, 10, 1000, T_LONG]:
            ref = min(max(n0 * C**t, 1), cap)  # C constant: the clip is reached once and kept
            assert N[i, t] == pytest.approx(float(ref), rel=1e-9), (i, t)


# ----------------------------------------------------------------- ε extremes


def test_beta_from_epsilon_is_accurate_from_tiny_to_huge_budgets():
    for eps in [1e-300, 1e-12, 1e-3, 1.0, 20.0, 36.0, 40.0, 700.0, 1e300]:
        ref = mp.tanh(mp.mpf(eps) / 2) / 2
        assert bernoulli.beta_from_epsilon(eps) == pytest.approx(float(ref), rel=1e-15)
    assert bernoulli.beta_from_epsilon(np.inf) == 0.5
    assert bernoulli.epsilon_from_beta(0.5) == np.inf
    # β = tanh(ε/2)/2 carries 1/2 − β ≈ e^{−ε} only to absolute precision 2^-54: the
    # round trip keeps ~1e-9 up to ε = 10 and loses digits beyond (β = 1/2 from ε ≈ 37 on)
    for eps in [1e-300, 1e-8, 0.5, 10.0]:
        assert bernoulli.epsilon_from_beta(bernoulli.beta_from_epsilon(eps)) == pytest.approx(eps, rel=1e-9)
    assert bernoulli.epsilon_from_beta(bernoulli.beta_from_epsilon(30.0)) == pytest.approx(30.0, rel=1e-4)


def test_simulate_at_epsilon_700_and_infinity_is_finite_and_non_private():
    run = engine.simulate(bernoulli.RandomizedResponse([1e-3, 700.0, np.inf]), Memoryless(q=0.3, r=0.6), T=5, n0=50, trials=3, policy=Policy(cap=500), seed=4)
    assert np.isfinite(run.estimate).all() and np.isfinite(run.sq_error).all()
    # β = 1/2 to double precision at ε = 700: every answer kept, the estimate is the sample mean
    assert bernoulli.beta_from_epsilon(700.0) == 0.5
    assert np.all(run.leaked[1:] == run.population[1:, :, :-1])
    np.testing.assert_array_equal(run.estimate[1], run.estimate[2])  # the same draws (common random numbers)
    # the leak model without privacy has C = 1 - q: nobody recruits
    assert np.all(np.diff(run.population[2], axis=-1) <= 0)
    err = bernoulli.mean_field([700.0, np.inf], q=0.3, r=0.6, T=3, n0=50).sq_error
    assert np.isfinite(err).all() and np.array_equal(err[0], err[1])


# ------------------------------------------------------- q = 1, r = 0, q + r = 0


def test_growth_rules_and_thresholds_at_q_one_r_zero_and_q_plus_r_zero():
    assert bernoulli.growth_factor(0.5, q=1.0, r=0.0) == 0.0
    assert bernoulli.growth_factor(0.2, q=0.0, r=0.0) == 1.0
    assert bernoulli.critical_beta(q=0.0, r=0.0) == 0.5 and bernoulli.critical_epsilon(q=0.0, r=0.0) == np.inf
    assert bernoulli.critical_beta(q=1.0, r=0.0) == 0.0 and bernoulli.critical_epsilon(q=1.0, r=0.0) == 0.0
    none, all_leave = Memoryless(q=0.0, r=0.0), Memoryless(q=1.0, r=0.0)
    at_r10 = GaussianMean(1.0, tau=0.02, d=12, R=10)        # Theorem 2 reads tau and R only
    assert dynamics.critical_gamma(at_r10, none, n=1000) == 0.0
    assert dynamics.critical_gamma(at_r10, all_leave, n=1000) == np.inf
    assert dynamics.exact_critical_gamma(gm(), all_leave, n=1000) == np.inf
    assert dynamics.exact_critical_gamma(gm(), none, n=1000) == 0.0
    assert dynamics.kappa(all_leave) == np.inf and dynamics.kappa(none) == 1.0
    C = dynamics.growth_factor(gm(1e-3), all_leave, n=1000)
    assert C == pytest.approx(0.0, abs=1e-12)
    lo, hi = dynamics.error_bounds(gm(1e-3), all_leave, n_prev=1000)
    assert lo > 0 and hi == np.inf
    assert dynamics.growth_factor(gm(2.0), none, n=1000) == 1.0
    assert dynamics.cumulative_error_bound(gm(2.0), none, T=10, n0=1000) == pytest.approx(
        10 * (4 * 12 + 12) / 1000)


# ------------------------------------------------- Algorithm 1: die-out, cap, N = 1


def test_gaussian_population_that_dies_out_stays_at_zero_and_repeats_its_last_error():
    # floor=0: Algorithm 1 read literally (the default floor 1 keeps a user); collapse="repeat"
    run = engine.simulate(gaussian.GaussianMean(1e-3, tau=0.02, d=2, R=10.0), Memoryless(q=1.0, r=0.0), T=6, n0=20, trials=3, seed=1, policy=Policy(floor=0, collapse="repeat"))
    assert np.all(run.population[:, -1] == 0) and run.collapsed.all()
    for i in range(3):
        dead = ~run.alive[i]
        assert dead.any()
        first = int(np.argmax(dead))
        assert np.all(run.sq_error[i, first:] == run.sq_error[i, first - 1])
        assert np.all(run.leak_fraction[i, first:] == 0.0)
    assert np.isfinite(run.sq_error).all()


@pytest.mark.parametrize("simulator", [engine.simulate, engine.simulate_agents])
def test_gaussian_population_reaches_the_cap_and_never_exceeds_it(simulator):
    run = simulator(GaussianMean(1e4, tau=0.02, d=2, R=10.0), Memoryless(q=0.0, r=1.0), T=8, n0=3, trials=2,
                    policy=Policy(cap=40), seed=2)
    assert run.population.max() == 40 and np.all(run.population <= 40)
    assert np.all(run.population[:, -1] == 40)


@pytest.mark.parametrize("simulator", [engine.simulate, engine.simulate_agents])
def test_a_lone_user_counts_as_leaked_and_never_recruits(simulator):
    # documented: N = 1 has an empty remove-one dataset, so the lone user leaks
    mech = GaussianMean(1e4, tau=0.02, d=2, R=10.0)
    stay = simulator(mech, Memoryless(q=0.0, r=1.0), T=5, n0=1, trials=2, seed=3)
    assert np.all(stay.population == 1) and np.all(stay.leak_fraction == 1.0)
    assert np.isfinite(stay.sq_error).all()
    leave = simulator(mech, Memoryless(q=1.0, r=1.0), T=3, n0=1, trials=2, seed=3, policy=Policy(floor=0))
    assert np.all(leave.population[:, 1:] == 0) and np.all(leave.alive[:, 0]) and not leave.alive[:, 1:].any()


def test_bernoulli_population_floor_and_cap():
    run = engine.simulate(bernoulli.RandomizedResponse(np.inf), Memoryless(q=1.0, r=0.0), T=4, n0=30, trials=3, policy=Policy(cap=100), seed=5)
    assert np.all(run.population[:, 1:] == 1)  # everyone leaks and leaves: the floor is 1
    run = engine.simulate(bernoulli.RandomizedResponse(1e-3), Memoryless(q=0.0, r=1.0), T=12, n0=30, trials=3, policy=Policy(cap=100), seed=5)
    assert np.all(run.population[:, -1] == 100) and run.population.max() == 100


# ------------------------------------------------------------ issue 32: refusals at the extremes
# (the rest of the third robustness pass: flags of cells, sizes of 1e12, extreme in-range values)

from perfpriv import experiments, feedback, gradient, regression  # noqa: E402
from perfpriv.performative import bilevel, federated, participation, prediction  # noqa: E402
from perfpriv.engine import Policy

_BIG = 10**12


@pytest.mark.parametrize("call", [
    lambda q: feedback.critical_epsilon(feedback.family("paper"), q=q, r=0.6),
    lambda q: dynamics.exact_critical_gamma(GaussianMean(1.0, tau=0.02, d=3, R=10.0), feedback.family("paper")(q, 0.6),
                                            n=100),
    lambda q: feedback.trajectories(feedback.family("paper"), bernoulli.RandomizedResponse(0.5), q=q, r=0.6, T=2,
                                    n0=10, trials=1, seed=0),
    lambda q: feedback.threshold_curve("contagion", [0.0], q=q, r=0.6),
    lambda q: feedback.compare_gaussian(feedback.family("paper"), GaussianMean(tau=0.02, d=3, R=10.0), q=q, r=0.6,
                                        T=2, n0=10, trials=1),
], ids=["critical_epsilon", "exact_critical_gamma", "trajectories", "threshold_curve", "compare_gaussian"])
def test_feedback_refuses_a_boolean_q_instead_of_reading_it_as_one(call):
    with pytest.raises(TypeError, match="^q must be a real number"):
        call(True)
    with pytest.raises(TypeError, match="^q must be a real number"):
        call(np.bool_(False))


def _pgd():
    return gradient.PrivateGD(1.0, tau=0.02, data=gradient.GDData(d=3), steps=3,
                              table=gradient.Tabulation(records=50, datasets=2))


def _ridge():
    return regression.RidgeRelease(0.01, tau=0.02, data=regression.RidgeData(d=3, test_size=20),
                                   table=regression.Tabulation(records=50, datasets=2))


_X = np.random.default_rng(0).standard_normal((12, 3))
_Y = np.sign(_X[:, 0])
_SQ = prediction.PerformativeProblem.squared(m=1.0, A=0.5)
_CLIENTS = federated.GaussianClients.example(N=4, m_mean=1.0, eps_mean=0.5, m_sd=0.5)
_BILEVEL = bilevel.BilevelRegression.synthetic(M=2, n=5, d=2, seed=0)

OVERSIZED = {
    "regression.sample_data(n)": ("n", lambda: regression.sample_data(_BIG, d=3, x_bound=2, y_bound=3)),
    "regression.sample_data(d)": ("d", lambda: regression.sample_data(3, d=_BIG, x_bound=2, y_bound=3)),
    "regression.worst_case_dataset(n)": ("n", lambda: regression.worst_case_dataset(_BIG, lam=0.05, x_bound=5.0,
                                                                                    y_bound=5.0, grid=3)),
    "regression.worst_case_dataset(grid)": ("grid", lambda: regression.worst_case_dataset(100, lam=0.05, x_bound=5.0,
                                                                                          y_bound=5.0, grid=_BIG)),
    "regression.RidgeData(d)": ("d", lambda: regression.RidgeData(d=_BIG)),
    "regression.RidgeRelease(table.records)": ("table.records", lambda: regression.RidgeRelease(
        0.01, tau=0.02, data=regression.RidgeData(d=3), table=regression.Tabulation(records=_BIG, datasets=64))),
    "regression.RidgeData(test_size)": ("test_size", lambda: regression.RidgeData(d=12, test_size=_BIG)),
    "regression.one_round_check(ns)": ("ns", lambda: regression.one_round_check(_ridge(), [_BIG], trials=2, seed=0)),
    "gradient.one_round_check(ns)": ("ns", lambda: gradient.one_round_check(_pgd(), [_BIG], trials=2, seed=0)),
    "gradient.noisy_gd(steps)": ("steps", lambda: gradient.noisy_gd(_X, _Y, gradient.Training(
        loss="logistic", lam=1.0, clip=1.0, steps=_BIG, step_size=0.1), rho=1.0)),
    "gradient.simulate_transcripts(runs)": ("runs", lambda: gradient.simulate_transcripts(
        _X, _Y, gradient.Training(loss="logistic", lam=1.0, clip=0.05, steps=3, step_size=0.1), index=0, runs=_BIG,
        rho=1.0)),
    "gradient.simulate_transcripts(steps)": ("steps", lambda: gradient.simulate_transcripts(
        _X, _Y, gradient.Training(loss="logistic", lam=1.0, clip=0.05, steps=_BIG, step_size=0.1), index=0, runs=4,
        rho=1.0)),
    # n and d are the data's now: refused where the UtilityData is built, before the check runs
    "gradient.UtilityData(n)": ("n", lambda: gradient.UtilityData(n=_BIG, d=3)),
    "gradient.UtilityData(d)": ("d", lambda: gradient.UtilityData(n=20, d=_BIG)),
    "gradient.utility_check(runs)": ("runs", lambda: gradient.utility_check([1.0], gradient.UtilityData(n=20, d=3),
                                                                            steps=3, runs=_BIG)),
    "gradient.utility_check(steps)": ("steps", lambda: gradient.utility_check([1.0], gradient.UtilityData(n=20, d=3),
                                                                              steps=_BIG, runs=2)),
    "gradient.PrivateGD.sample_data(n)": ("n", lambda: _pgd().sample_data(_BIG)),
    "gradient.PrivateGD(table.records)": ("table.records", lambda: gradient.PrivateGD(
        1.0, tau=0.02, table=gradient.Tabulation(records=_BIG, datasets=128))),
    "repeated_risk_minimization(T)": ("T", lambda: prediction.repeated_risk_minimization(_SQ, [0.0], T=_BIG)),
    "repeated_risk_minimization(samples)": ("samples", lambda: prediction.repeated_risk_minimization(
        _SQ, [0.0], T=3, samples=_BIG)),
    "repeated_risk_minimization(trials)": ("trials", lambda: prediction.repeated_risk_minimization(
        _SQ, [0.0], T=3, samples=10, trials=_BIG)),
    "repeated_gradient_descent(T)": ("T", lambda: prediction.repeated_gradient_descent(_SQ, [0.0], T=_BIG, step=1.0)),
    "repeated_gradient_descent(samples)": ("samples", lambda: prediction.repeated_gradient_descent(
        _SQ, [0.0], T=2, step=1.0, samples=_BIG, trials=2)),
    "GaussianClients.example(N)": ("N", lambda: federated.GaussianClients.example(N=_BIG)),
    "GaussianClients.example(d)": ("d", lambda: federated.GaussianClients.example(N=3, d=_BIG)),
    "p_fedavg(T)": ("T", lambda: federated.p_fedavg(_CLIENTS, T=_BIG)),
    "p_fedavg(trials)": ("trials", lambda: federated.p_fedavg(_CLIENTS, T=3, trials=_BIG)),
    "fbi_rrm(rounds)": ("rounds", lambda: bilevel.fbi_rrm(_BILEVEL, rounds=_BIG)),
    "BilevelRegression.synthetic(M)": ("M", lambda: bilevel.BilevelRegression.synthetic(M=_BIG, n=5, d=2)),
    "BilevelRegression.synthetic(n)": ("n", lambda: bilevel.BilevelRegression.synthetic(M=2, n=_BIG, d=2)),
    "BilevelRegression.synthetic(d)": ("d", lambda: bilevel.BilevelRegression.synthetic(M=2, n=5, d=_BIG)),
    "theorem3_check(sizes)": ("sizes", lambda: experiments.theorem3_check(
        gaussian.GaussianMean(1.0, tau=0.02, d=3, R=10.0), Memoryless(q=0.3, r=0.6), sizes=[2, _BIG], trials=2)),
    # d is the mechanism's now: refused where the mechanism is built, before the check runs
    "theorem3_check(d)": ("d", lambda: experiments.theorem3_check(
        gaussian.GaussianMean(1.0, tau=0.02, d=_BIG, R=10.0), Memoryless(q=0.3, r=0.6), sizes=[2, 10], trials=2)),
}


@pytest.mark.parametrize("key", sorted(OVERSIZED))
def test_a_size_of_1e12_is_refused_by_name_before_any_allocation(key):
    # numpy's "Unable to allocate 7 TiB" (a MemoryError) before; now a ValueError naming the size
    name, call = OVERSIZED[key]
    with pytest.raises(ValueError, match=rf"^{name} (is too large|must (be|hold) (an )?integers?)"):
        call()


def test_check_array_size_names_the_largest_factor():
    from perfpriv._validate import check_array_size

    check_array_size("x", n=10**4, d=10**4)                   # 0.8 GB: allowed
    with pytest.raises(ValueError, match="^d is too large"):
        check_array_size("x", n=3, d=10**12)
    with pytest.raises(ValueError, match="^n is too large"):
        check_array_size("x", n=10**6, d=10**4)
