"""perfpriv.leakage against independent truth: direct log densities, Monte Carlo,
numerical integration, and the closed forms of the paper (Lemmas 4-8, 11, Remark 1)."""

import math
import numpy as np
import pytest
from scipy import integrate, stats

from perfpriv import leakage as L

Z_TOL = 4.5  # tolerance in Monte Carlo standard errors


def _dataset(n=8, d=3, seed=0, scale=1.0):
    return np.random.default_rng(seed).standard_normal((n, d)) * scale


def _direct_llr(Z, o, gamma, R, statistic):
    """Λ of every record from scipy's multivariate normal log densities (eq. 8)."""
    n, d = Z.shape
    norms = np.linalg.norm(Z, axis=1, keepdims=True)
    Zc = Z * np.minimum(1.0, R / norms)
    mean_in = Zc.mean(axis=0)
    var_out = gamma**2 / n if statistic == "paper" else gamma**2 / (n - 1)
    out = []
    for j in range(n):
        mean_out = np.delete(Zc, j, axis=0).mean(axis=0)
        out.append(stats.multivariate_normal(mean_in, gamma**2 / n * np.eye(d)).logpdf(o)
                   - stats.multivariate_normal(mean_out, var_out * np.eye(d)).logpdf(o))
    return np.array(out)


# ------------------------------------------------------------------ Λ itself


@pytest.mark.parametrize("statistic", ["paper", "exact"])
def test_llr_equals_direct_log_density_ratio_with_clipping(statistic):
    Z = _dataset(n=9, d=4, seed=1, scale=2.0)  # some rows exceed R = 3 and are clipped
    R, gamma = 3.0, 0.8
    assert (np.linalg.norm(Z, axis=1) > R).any()
    rng = np.random.default_rng(2)
    for _ in range(3):
        eta = rng.standard_normal(4) * gamma / 3.0
        norms = np.linalg.norm(Z, axis=1, keepdims=True)
        o = (Z * np.minimum(1.0, R / norms)).mean(axis=0) + eta
        got = L.log_likelihood_ratio(Z, eta, gamma, R, statistic=statistic)
        np.testing.assert_allclose(got, _direct_llr(Z, o, gamma, R, statistic), rtol=1e-9, atol=1e-11)


def test_exact_llr_differs_from_paper_llr_by_the_counterfactual_variance():
    Z = _dataset(n=6, d=5, seed=3)
    eta = np.zeros(5)
    paper = L.log_likelihood_ratio(Z, eta, 1.0, 10.0)
    exact = L.log_likelihood_ratio(Z, eta, 1.0, 10.0, statistic="exact")
    s2 = L.record_deviations(Z, 10.0) ** 2
    # with η = 0: paper = n s²/(2(n−1)²γ²), exact = (d/2) log(n/(n−1)) + s²/(2(n−1)γ²)
    np.testing.assert_allclose(paper, 6 * s2 / (2 * 25))
    np.testing.assert_allclose(exact, 2.5 * np.log(6 / 5) + s2 / 10)


def _noise_draws(Z, gamma, R, draws, seed, statistic):
    n, d = Z.shape
    rng = np.random.default_rng(seed)
    etas = rng.standard_normal((draws, d)) * gamma / np.sqrt(n)
    return np.array([L.log_likelihood_ratio(Z, e, gamma, R, statistic=statistic)[0] for e in etas])


def test_paper_llr_given_the_dataset_is_normal_with_mean_a_and_variance_2a():
    Z = _dataset(n=10, d=3, seed=4)
    gamma, R = 0.5, 10.0
    lam = _noise_draws(Z, gamma, R, 3000, 5, "paper")
    s = L.record_deviations(Z, R)[0]
    m = L.llr_moments(s, 10, gamma)
    assert m.var == pytest.approx(2 * m.mean)
    assert stats.kstest(lam, "norm", args=(m.mean, np.sqrt(m.var))).pvalue > 1e-3
    assert abs(lam.mean() - m.mean) < Z_TOL * np.sqrt(m.var / lam.size)


@pytest.mark.parametrize("statistic", ["paper", "exact"])
def test_leak_probability_matches_the_empirical_tail_of_llr(statistic):
    Z = _dataset(n=7, d=3, seed=6)
    gamma, R = 0.6, 10.0
    lam = _noise_draws(Z, gamma, R, 4000, 7, statistic)
    s = L.record_deviations(Z, R)[0]
    m = L.llr_moments(s, 7, gamma, statistic=statistic, d=3)
    assert abs(lam.mean() - m.mean) < Z_TOL * lam.std() / np.sqrt(lam.size)
    assert abs(lam.var() - m.var) < Z_TOL * m.var * np.sqrt(2.0 / lam.size) * 2
    for tau in (0.05, 0.3, 1.0):
        p = L.leak_probability(s, 7, gamma, tau=tau, statistic=statistic, d=3)
        emp = np.mean(lam > tau)
        assert abs(emp - p) < Z_TOL * np.sqrt(p * (1 - p) / lam.size) + 1e-12


def test_exact_leak_probability_matches_vectorized_monte_carlo_over_many_settings():
    rng = np.random.default_rng(8)
    for n, d, s, gamma, tau in [(2, 1, 0.5, 0.3, 0.05), (5, 4, 2.0, 1.0, 0.1), (50, 12, 3.0, 0.2, 0.02),
                                (20, 12, 0.0, 1.0, 0.01), (1000, 3, 1.0, 0.05, 0.5)]:
        dev = np.zeros(d)
        dev[0] = s
        eta = rng.standard_normal((200_000, d)) * gamma / np.sqrt(n)
        delta = dev / (n - 1)
        lam = (0.5 * d * np.log(n / (n - 1)) - n * (eta**2).sum(1) / (2 * gamma**2)
               + (n - 1) * ((eta + delta) ** 2).sum(1) / (2 * gamma**2))
        emp = np.mean(lam > tau)
        p = L.leak_probability(s, n, gamma, tau=tau, statistic="exact", d=d)
        assert abs(emp - p) < Z_TOL * np.sqrt(max(p * (1 - p), 1e-6) / lam.size), (n, d, s, emp, p)


def test_leak_probability_stays_accurate_far_in_the_tail():
    # arg = τ/μ' − μ'/2 large: ndtr keeps relative accuracy where 1 − Φ would be 0
    s, n, gamma, tau = 0.5, 100, 1.0, 1.0  # arg ≈ 19.8, p ≈ 1e-87
    mu = L.gdp_mu(s, n, gamma)
    p = L.leak_probability(s, n, gamma, tau=tau)
    assert p > 0
    assert np.log(p) == pytest.approx(stats.norm.logsf(tau / mu - mu / 2), rel=1e-10)


def test_record_at_the_mean_never_leaks_under_the_paper_statistic_but_can_under_the_exact_one():
    assert L.leak_probability(0.0, 50, 1.0, tau=0.01) == 0.0
    n, d, tau = 20, 12, 0.01
    c = 6 * np.log(20 / 19)
    assert c > tau
    p = L.leak_probability(0.0, n, 1.0, tau=tau, statistic="exact", d=d)
    assert p == pytest.approx(stats.chi2.cdf(2 * n * (c - tau), d), rel=1e-10)
    assert L.leak_probability(0.0, 1000, 1.0, tau=0.01, statistic="exact", d=d) == 0.0  # τ > c


def test_leak_probability_broadcasts_and_increases_with_the_deviation():
    s = np.linspace(0, 5, 11)
    p = L.leak_probability(s[:, None], 30, np.array([0.5, 1.0, 2.0]), tau=0.1)
    assert p.shape == (11, 3)
    assert np.all(np.diff(p, axis=0) >= 0) and np.all(np.diff(p, axis=1) <= 0)


# ------------------------------------------------------------------- Rényi


@pytest.mark.parametrize("alpha", [1.5, 2.0, 5.0])
def test_renyi_divergence_matches_numerical_integration_of_the_definition(alpha):
    s, n, gamma = 2.5, 12, 0.7
    # the two Gaussians differ only along z − μ_z: 1-D N(s/(n−1), γ²/n) vs N(0, γ²/n)
    sd = gamma / np.sqrt(n)
    shift = s / (n - 1)
    p_in, p_out = stats.norm(shift, sd), stats.norm(0, sd)
    integrand = lambda x: np.exp(alpha * p_in.logpdf(x) + (1 - alpha) * p_out.logpdf(x))
    val = integrate.quad(integrand, -40 * sd, 40 * sd + shift * alpha, epsabs=0, epsrel=1e-12, limit=200)[0]
    assert L.renyi_divergence(s, n, gamma, alpha) == pytest.approx(np.log(val) / (alpha - 1), rel=1e-8)


def test_renyi_tail_bound_is_at_least_the_exact_tail_for_every_valid_order():
    s = np.array([0.1, 1.0, 3.0, 8.0])[:, None, None, None]
    n = np.array([5, 100])[None, :, None, None]
    gamma = np.array([0.3, 1.0])[None, None, :, None]
    tau = np.array([0.01, 0.2, 2.0])[None, None, None, :]
    exact = L.leak_probability(s, n, gamma, tau=tau)
    for alpha in [1.001, 1.1, 1.5, 2, 3, 10, 100]:
        assert np.all(L.renyi_tail_bound(s, n, gamma, tau=tau, alpha=alpha) >= exact - 1e-15)
    assert np.all(L.renyi_tail_bound(s, n, gamma, tau=tau) >= exact - 1e-15)


def test_optimal_order_gives_eq10_and_minimizes_the_bound():
    s, n, gamma, tau = 1.0, 10, 1.0, 0.5
    a = L.llr_moments(s, n, gamma).mean
    alpha_star = L.optimal_renyi_order(s, n, gamma, tau=tau)
    assert alpha_star == pytest.approx(0.5 + tau * gamma**2 * (n - 1) ** 2 / (n * s**2))
    best = L.renyi_tail_bound(s, n, gamma, tau=tau)
    assert best == pytest.approx(np.exp(-((tau - a) ** 2) / (4 * a)))
    assert best == pytest.approx(L.renyi_tail_bound(s, n, gamma, tau=tau, alpha=alpha_star))
    grid = np.linspace(1.0001, 50, 2000)
    assert np.all(L.renyi_tail_bound(s, n, gamma, tau=tau, alpha=grid) >= best - 1e-12)


def test_optimized_bound_is_one_where_it_does_not_apply_and_zero_at_the_mean():
    s, n, gamma = 5.0, 10, 0.5  # a ≈ 0.62
    a = L.llr_moments(s, n, gamma).mean
    assert L.renyi_tail_bound(s, n, gamma, tau=a * 0.9) == 1.0
    assert L.optimal_renyi_order(s, n, gamma, tau=a * 0.9) <= 1
    assert L.renyi_tail_bound(0.0, n, gamma, tau=0.1) == 0.0
    assert L.optimal_renyi_order(0.0, n, gamma, tau=0.1) == np.inf


# --------------------------------------------------------------- Gaussian DP


def test_gdp_mu_reproduces_the_law_of_lemma_6():
    s, n, gamma = 2.0, 30, 0.4
    mu = L.gdp_mu(s, n, gamma)
    m = L.llr_moments(s, n, gamma)
    assert m.mean == pytest.approx(mu**2 / 2) and m.var == pytest.approx(mu**2)


def test_fpr_threshold_gives_the_requested_false_positive_rate_under_the_null():
    Z = _dataset(n=10, d=3, seed=9)
    gamma, R = 0.5, 10.0
    n = 10
    Zc = Z
    mean_in = Zc.mean(axis=0)
    mean_out = Zc[1:].mean(axis=0)  # record 0 absent
    s = L.record_deviations(Z, R)[0]
    rng = np.random.default_rng(10)
    o = mean_out + rng.standard_normal((20_000, 3)) * gamma / np.sqrt(n)
    lam0 = np.array([L.log_likelihood_ratio(Z, x - mean_in, gamma, R)[0] for x in o[:4000]])
    mu = L.gdp_mu(s, n, gamma)
    for fpr in (0.01, 0.1, 0.3):
        tau = L.threshold_for_fpr(mu, fpr)
        emp = np.mean(lam0 > tau)
        assert abs(emp - fpr) < Z_TOL * np.sqrt(fpr * (1 - fpr) / lam0.size)


def test_roc_curve_is_the_power_of_the_gdp_pair_and_of_the_membership_test():
    mu = np.array([0.5, 1.0, 2.0])[:, None]
    fpr = np.array([0.01, 0.05, 0.2])[None, :]
    tpr = L.roc_curve(mu, fpr)
    # GDP pair N(0,1) vs N(μ,1): reject when x > Φ̄⁻¹(ν)
    x = np.random.default_rng(11).standard_normal(200_000)
    for i in range(3):
        for j in range(3):
            emp = np.mean(x + mu[i, 0] > stats.norm.isf(fpr[0, j]))
            assert abs(emp - tpr[i, j]) < Z_TOL * np.sqrt(tpr[i, j] * (1 - tpr[i, j]) / x.size)
    # the same power is Lemma 7 at the threshold of Remark 1 (where that threshold is > 0)
    s, n, gamma = 3.0, 10, 1.0
    m = L.gdp_mu(s, n, gamma)
    tau = L.threshold_for_fpr(m, 0.05)
    assert tau > 0
    assert L.leak_probability(s, n, gamma, tau=tau) == pytest.approx(L.roc_curve(m, 0.05), rel=1e-12)
    assert L.roc_curve(0.0, 0.3) == pytest.approx(0.3)


def test_worst_case_gdp_mu_is_attained_by_an_antipodal_dataset_and_bounds_random_ones():
    n, gamma, R = 8, 0.7, 2.0
    Z = np.tile([-R, 0.0], (n, 1))
    Z[0] = [R, 0.0]
    s = L.record_deviations(Z, R)[0]
    assert L.gdp_mu(s, n, gamma) == pytest.approx(L.worst_case_gdp_mu(n, gamma, R))
    Zr = _dataset(n=n, d=2, seed=12, scale=5.0)
    assert np.all(L.gdp_mu(L.record_deviations(Zr, R), n, gamma) <= L.worst_case_gdp_mu(n, gamma, R) + 1e-12)


# ------------------------------------------------- marginal leak probability


def _chi_integral(n, gamma, tau, d, statistic):
    """p_τ by adaptive quadrature of Lemma 7 over the χ_d law of s (independent of L._quadrature)."""
    scale = np.sqrt((n - 1) / n)
    f = lambda v: L.leak_probability(scale * v, n, gamma, tau=tau, statistic=statistic, d=d) * stats.chi.pdf(v, d)
    edges = np.linspace(stats.chi.ppf(1e-14, d), stats.chi.isf(1e-14, d), 25)
    return sum(integrate.quad(f, a, b, epsabs=1e-13, epsrel=1e-11)[0] for a, b in zip(edges[:-1], edges[1:]))


@pytest.mark.parametrize("statistic", ["paper", "exact"])
@pytest.mark.parametrize("n, d, gamma, tau", [(2, 1, 0.3, 0.01), (20, 12, 1.0, 0.01), (1000, 12, 0.5, 0.02),
                                              (20000, 3, 0.05, 0.2), (7, 2, 5.0, 1.0)])
def test_quadrature_equals_direct_integration_of_lemma_7(statistic, n, d, gamma, tau):
    got = L.marginal_leak_probability(n, gamma, tau=tau, d=d, R=1e3, statistic=statistic, method="quadrature")
    assert got.se == 0.0 and got.method == "quadrature"
    assert got.p == pytest.approx(_chi_integral(n, gamma, tau, d, statistic), abs=1e-9)


@pytest.mark.parametrize("statistic", ["paper", "exact"])
@pytest.mark.parametrize("n, d", [(20, 3), (100, 12)])
def test_quadrature_matches_monte_carlo_over_datasets(statistic, n, d):
    gammas = np.array([0.3, 1.0, 3.0])
    quad = L.marginal_leak_probability(n, gammas, tau=0.02, d=d, R=50.0, statistic=statistic)
    mc = L.marginal_leak_probability(n, gammas, tau=0.02, d=d, R=50.0, statistic=statistic, method=L.Integration("montecarlo", samples=40_000, seed=13))
    assert quad.method == "quadrature" and mc.method == "montecarlo"
    assert np.all(mc.se > 0)
    assert np.all(np.abs(mc.p - quad.p) < Z_TOL * mc.se)


def test_quadrature_scales_with_an_isotropic_variance_and_ignores_the_mean():
    base = L.marginal_leak_probability(50, 2.0, tau=0.05, d=4, R=100.0)
    scaled = L.marginal_leak_probability(50, 1.0, tau=0.05, d=4, R=100.0, Sigma=0.25 * np.eye(4), mu=[3, 0, 0, 0])
    assert scaled.method == "quadrature"
    assert scaled.p == pytest.approx(base.p, rel=1e-10)  # only σ/γ matters


def test_quadrature_is_vectorized_over_n_gamma_tau_and_monotone():
    n = np.array([10, 100, 1000])[:, None, None]
    gamma = np.geomspace(0.2, 20, 5)[None, :, None]
    tau = np.array([0.01, 0.1])[None, None, :]
    res = L.marginal_leak_probability(n, gamma, tau=tau, d=12, R=10.0)
    assert res.p.shape == (3, 5, 2) and res.se.shape == (3, 5, 2)
    assert np.all(np.diff(res.p, axis=1) < 0)  # more noise, fewer leaks
    assert np.all(np.diff(res.p, axis=2) < 0)
    one = L.marginal_leak_probability(100, gamma[0, 3, 0], tau=0.1, d=12, R=10.0)
    assert one.p == pytest.approx(res.p[1, 3, 1], rel=1e-12)


def test_exact_statistic_leaks_at_any_noise_level_in_small_populations():
    d, tau = 12, 0.02
    n_star = 1 / (1 - np.exp(-2 * tau / d))  # c > τ below this size
    for n in (100, 300, 301, 1000):
        floor = L.leak_probability(0.0, n, 1.0, tau=tau, statistic="exact", d=d)
        far = L.marginal_leak_probability(n, 1e5, tau=tau, d=d, R=10.0, statistic="exact").p
        assert far == pytest.approx(floor, abs=1e-6)
        assert (floor > 0) == (n < n_star)
        assert L.marginal_leak_probability(n, 1e5, tau=tau, d=d, R=10.0).p < 1e-6  # paper statistic vanishes


@pytest.mark.parametrize("statistic", ["paper", "exact"])
def test_quadrature_accepts_real_population_sizes_for_mean_field_use(statistic):
    p = L.marginal_leak_probability(np.array([100.0, 100.5, 101.0]), 1.0, tau=0.05, d=12, R=10.0,
                                    statistic=statistic).p
    assert min(p[0], p[2]) < p[1] < max(p[0], p[2])


def test_auto_uses_monte_carlo_when_clipping_or_anisotropy_matter():
    clipped = L.marginal_leak_probability(20, 1.0, tau=0.05, d=3, R=1.0, method=L.Integration(samples=2000, seed=1))
    assert clipped.method == "montecarlo" and clipped.se > 0
    aniso = L.marginal_leak_probability(20, 1.0, tau=0.05, d=2, R=50.0, Sigma=[[2.0, 0.5], [0.5, 1.0]],
                                        method=L.Integration(samples=2000, seed=1))
    assert aniso.method == "montecarlo"
    with pytest.raises(ValueError, match="quadrature"):
        L.marginal_leak_probability(20, 1.0, tau=0.05, d=3, R=1.0, method="quadrature")
    # clipping shrinks deviations, hence fewer leaks than the unclipped value
    unclipped = L.marginal_leak_probability(20, 1.0, tau=0.05, d=3, R=1e3)
    assert clipped.p < unclipped.p - Z_TOL * clipped.se


def test_monte_carlo_is_reproducible_with_a_seed():
    a = L.marginal_leak_probability(30, [0.5, 2.0], tau=0.1, d=3, R=1.5, method=L.Integration(samples=3000, seed=42))
    b = L.marginal_leak_probability(30, [0.5, 2.0], tau=0.1, d=3, R=1.5, method=L.Integration(samples=3000, seed=42))
    c = L.marginal_leak_probability(30, [0.5, 2.0], tau=0.1, d=3, R=1.5, method=L.Integration(samples=3000, seed=43))
    np.testing.assert_array_equal(a.p, b.p)
    assert not np.array_equal(a.p, c.p)


# ------------------------------------------------------------------ inputs


@pytest.mark.parametrize("call, name", [
    (lambda: L.leak_probability(1.0, 10, 0.0, tau=0.1), "gamma"),
    (lambda: L.leak_probability(1.0, 10, -1.0, tau=0.1), "gamma"),
    (lambda: L.leak_probability(1.0, 10, 1.0, tau=0.0), "tau"),
    (lambda: L.leak_probability(1.0, 1, 1.0, tau=0.1), "n"),
    (lambda: L.leak_probability(-1.0, 10, 1.0, tau=0.1), "s"),
    (lambda: L.leak_probability(np.nan, 10, 1.0, tau=0.1), "s"),
    (lambda: L.leak_probability(1.0, 10, [1.0, np.nan], tau=0.1), "gamma"),
    (lambda: L.leak_probability(1.0, 10, 1.0, tau=0.1, statistic="exact"), "d"),
    (lambda: L.leak_probability(1.0, 10, 1.0, tau=0.1, statistic="other"), "statistic"),
    (lambda: L.renyi_divergence(1.0, 10, 1.0, 1.0), "alpha"),
    (lambda: L.renyi_tail_bound(1.0, 10, 1.0, tau=0.1, alpha=0.5), "alpha"),
    (lambda: L.threshold_for_fpr(1.0, 0.0), "fpr"),
    (lambda: L.roc_curve(1.0, 1.0), "fpr"),
    (lambda: L.roc_curve(-1.0, 0.5), "mu"),
    (lambda: L.worst_case_gdp_mu(10, 1.0, 0.0), "R"),
    (lambda: L.log_likelihood_ratio([[1.0, 2.0]], [0.0, 0.0], 1.0, 1.0), "Z"),
    (lambda: L.log_likelihood_ratio([[1.0, 2.0], [0.0, 1.0]], [0.0], 1.0, 1.0), "eta"),
    (lambda: L.log_likelihood_ratio([[1.0, np.nan], [0.0, 1.0]], [0.0, 0.0], 1.0, 1.0), "Z"),
    (lambda: L.log_likelihood_ratio([[1.0, 2.0], [0.0, 1.0]], [0.0, 0.0], 1.0, -1.0), "R"),
    (lambda: L.marginal_leak_probability(10, 1.0, tau=0.1, d=0, R=1.0), "d"),
    (lambda: L.marginal_leak_probability(10, 1.0, tau=0.1, d=2, R=0.0), "R"),
    (lambda: L.marginal_leak_probability(10, 1.0, tau=0.1, d=2, R=1.0, Sigma=[[1.0, 2.0], [2.0, 1.0]]), "Sigma"),
    (lambda: L.marginal_leak_probability(10, 1.0, tau=0.1, d=2, R=1.0, mu=[0.0, np.nan]), "mu"),
    (lambda: L.marginal_leak_probability(10, 1.0, tau=0.1, d=2, R=1.0, method="magic"), "method"),
    (lambda: L.marginal_leak_probability(10.5, 1.0, tau=0.1, d=2, R=0.5, method="montecarlo"), "n"),
])
def test_bad_input_raises_value_error_naming_the_parameter(call, name):
    with pytest.raises(ValueError, match=rf"^{name}\b"):
        call()


# ------------------------------------------- the coefficients of Λ (one place of eq. 8)
def _log_isotropic_normal(x, mean, var):
    diff = x - mean
    return -0.5 * x.size * np.log(2 * np.pi * var) - 0.5 * float(diff @ diff) / var


@pytest.mark.parametrize("statistic", ["paper", "exact"])
@pytest.mark.parametrize("n, d, gamma", [(2, 1, 0.3), (5, 3, 1.0), (50, 12, 2.5), (1000, 4, 0.05)])
def test_llr_coefficients_give_the_log_density_ratio_of_the_definition(statistic, n, d, gamma):
    # Λ(o | z) = log N(o; mean(Z), γ²/n) − log N(o; mean(Z \ z), γ²/n or γ²/(n − 1)), record by record
    rng = np.random.default_rng(n + d)
    Z = rng.standard_normal((n, d))
    eta = rng.standard_normal(d) * gamma / np.sqrt(n)
    mean = Z.mean(axis=0)
    o = mean + eta
    A, B, C = L.llr_coefficients(float(eta @ eta), n, gamma, d, statistic)
    var_out = gamma**2 / n if statistic == "paper" else gamma**2 / (n - 1)
    for j in range(n):
        mean_out = (Z.sum(axis=0) - Z[j]) / (n - 1)
        lam = _log_isotropic_normal(o, mean, gamma**2 / n) - _log_isotropic_normal(o, mean_out, var_out)
        dev = Z[j] - mean
        got = A * float(dev @ dev) + B * float(dev @ eta) + C
        assert got == pytest.approx(lam, rel=1e-9, abs=1e-9 * max(1.0, abs(lam)))


def test_exact_llr_offset_is_half_d_log_n_over_n_minus_one_to_ulps():
    import mpmath
    mpmath.mp.dps = 40
    for n, d in [(2, 1), (3, 12), (1000, 12), (1e9, 3), (1e15, 2)]:
        exact = mpmath.mpf(d) / 2 * mpmath.log(mpmath.mpf(n) / (mpmath.mpf(n) - 1))
        assert float(L.exact_llr_offset(n, d)) == pytest.approx(float(exact), rel=1e-14)
    assert float(L.exact_llr_offset(1000, 12)) == pytest.approx(6 * np.log(1000 / 999), rel=1e-12)


# ------------------------------------------ the exact statistic's far tail (log space)


def _mp_exact_log_leak(s, n, gamma, tau, d):
    """log P(Λ_exact > τ | Z) at 50 digits: the Poisson mixture of central χ² cdfs.

    W = n‖η − (n−1)δ‖²/γ² ~ χ²_d(λ), λ = n s²/γ², and a leak is W < x with
    x = 2n(c − τ) + n² s²/((n−1)γ²), c = (d/2) log(n/(n−1)) (the definition, in mpmath);
    P(W < x) = Σ_j Pois(j; λ/2) P(χ²_{d+2j} < x).
    """
    import mpmath as mp
    with mp.workdps(50):
        s, n, gamma, tau = (mp.mpf(v) for v in (s, n, gamma, tau))
        c = mp.mpf(d) / 2 * mp.log(n / (n - 1))
        lam = n * s**2 / gamma**2
        x = 2 * n * (c - tau) + n**2 * s**2 / ((n - 1) * gamma**2)
        if x <= 0:
            return -mp.inf
        terms, j = [], 0
        while True:
            t = (-lam / 2 + j * mp.log(lam / 2) - mp.loggamma(j + 1)
                 + mp.log(mp.gammainc(mp.mpf(d) / 2 + j, 0, x / 2, regularized=True)))
            terms.append(t)
            j += 1
            if j > 5 and j > mp.sqrt(lam * x) / 2 and t < max(terms) - 120:
                break
        top = max(terms)
        return top + mp.log(mp.fsum(mp.exp(t - top) for t in terms))


# (s, n, γ, τ, d): leak probabilities from about 1e-1 down to 1e-274, the issue's example first
_FAR_TAIL = [(0.1, 1000, 0.1, 0.5, 1), (0.1, 1000, 0.1, 0.5, 2), (0.1, 1000, 0.1, 0.5, 12),
             (0.1184, 1000, 0.1, 0.7, 1), (0.1184, 1000, 0.1, 0.7, 3), (0.1185, 1000, 0.1, 0.7, 12),
             (0.06, 1000, 0.1, 0.15, 2), (0.08, 1000, 0.1, 0.3, 5), (0.09, 1000, 0.1, 0.4, 1),
             (3.0, 50, 1.0, 4.0, 12), (1.0, 10, 0.2, 1.2, 2)]


@pytest.mark.parametrize("s, n, gamma, tau, d", _FAR_TAIL)
def test_exact_leak_probability_and_its_log_match_mpmath_far_below_the_old_underflow(s, n, gamma, tau, d):
    import mpmath as mp
    truth = _mp_exact_log_leak(s, n, gamma, tau, d)
    log_p = L.log_leak_probability(s, n, gamma, tau=tau, statistic="exact", d=d)
    # the inputs' own rounding moves log p by ~1e-15 |log p| (d log p / d log s is ~ |log p|)
    assert log_p == pytest.approx(float(truth), rel=1e-14, abs=1e-13)
    p = L.leak_probability(s, n, gamma, tau=tau, statistic="exact", d=d)
    assert p == pytest.approx(float(mp.exp(truth)), rel=1e-12)
    assert p > 0


def test_issue_example_of_the_exact_leak_probability_is_9_29e_minus_201():
    p = L.leak_probability(0.1, 1000, 0.1, tau=0.5, statistic="exact", d=1)
    assert p == pytest.approx(9.2892293e-201, rel=1e-7)
    assert L.log_leak_probability(0.1, 1000, 0.1, tau=0.5, statistic="exact", d=1) == pytest.approx(-460.59075, abs=1e-5)


def test_exact_leak_probability_down_to_1e_minus_300_along_a_grid_of_s():
    # d = 1: P(W < x) = Φ(√x − √λ) − Φ(−√x − √λ), in mpmath; s walks p from 1e-20 to below 1e-300
    import mpmath as mp
    n, gamma, tau = 1000, 0.1, 0.9
    s = np.linspace(0.1342, 0.17, 12)
    got = L.log_leak_probability(s, n, gamma, tau=tau, statistic="exact", d=1)
    with mp.workdps(50):
        for si, gi in zip(s, got):
            S, N, G, T = (mp.mpf(float(v)) for v in (si, n, gamma, tau))
            lam = N * S**2 / G**2
            x = 2 * N * (mp.log(N / (N - 1)) / 2 - T) + N**2 * S**2 / ((N - 1) * G**2)
            true = mp.log(mp.ncdf(mp.sqrt(x) - mp.sqrt(lam)) - mp.ncdf(-mp.sqrt(x) - mp.sqrt(lam)))
            assert gi == pytest.approx(float(true), rel=1e-14, abs=1e-13)
    assert got.min() < np.log(1e-300) < got.max()
    p = L.leak_probability(s, n, gamma, tau=tau, statistic="exact", d=1)
    keep = got > np.log(1e-300)
    np.testing.assert_allclose(np.log(p[keep]), got[keep], rtol=0, atol=1e-12)


@pytest.mark.parametrize("lam, gap", [(1e5, 1.55e4), (1e8, 4.9e5), (1e13, 1.55e8)])
def test_exact_log_leak_with_a_huge_noncentrality_matches_mpmath_quadrature(lam, gap):
    # d = 3: V ~ χ²_2 has density e^{−v/2}/2, so P(W < x) = ∫_0^x e^{−v/2}/2 [Φ(√(x−v) − √λ) − Φ(−√(x−v) − √λ)] dv
    import mpmath as mp
    n, gamma, tau, d = 1e6, 1.0, None, 3
    s = math.sqrt(lam * gamma**2 / n)
    # τ chosen so that x = λ − gap (up to the offset c): x − λ = 2n(c − τ) + λ/(n − 1)
    c = float(L.exact_llr_offset(n, d))
    tau = c + (gap + lam / (n - 1)) / (2 * n)
    got = L.log_leak_probability(s, n, gamma, tau=tau, statistic="exact", d=d)
    with mp.workdps(40):
        S, N, G, T = (mp.mpf(v) for v in (s, n, gamma, tau))
        Lam = N * S**2 / G**2
        x = 2 * N * (mp.mpf(d) / 2 * mp.log(N / (N - 1)) - T) + N**2 * S**2 / ((N - 1) * G**2)
        f = lambda v: mp.exp(-v / 2) / 2 * (mp.ncdf(mp.sqrt(x - v) - mp.sqrt(Lam)) - mp.ncdf(-mp.sqrt(x - v) - mp.sqrt(Lam)))
        true = mp.log(mp.quad(f, mp.linspace(0, 200, 41)))  # beyond v = 200 the density is < e^-100
    assert float(true) < np.log(1e-90)  # the log-space branch
    assert got == pytest.approx(float(true), rel=1e-11, abs=1e-10)


def test_exact_log_leak_is_minus_inf_only_where_the_threshold_cannot_be_reached():
    # x <= 0 (s small, τ large): no noise can push Λ above τ
    assert L.log_leak_probability(0.05, 1000, 0.1, tau=0.5, statistic="exact", d=5) == -np.inf
    assert L.leak_probability(0.05, 1000, 0.1, tau=0.5, statistic="exact", d=5) == 0.0


def test_exact_leak_log_space_branch_joins_the_direct_cdf_without_a_step():
    # scipy's cdf (above 1e-90) and the log-space integral (below) meet smoothly: across the
    # switch, consecutive steps of log p along a fine grid of s change by a few percent only
    s = np.linspace(0.11, 0.125, 400)
    p = L.log_leak_probability(s, 1000, 0.1, tau=0.5, statistic="exact", d=4)
    window = (p > np.log(1e-90) - 15) & (p < np.log(1e-90) + 15)
    assert (p[window] < np.log(1e-90)).any() and (p[window] > np.log(1e-90)).any()
    steps = np.diff(p[window])
    assert np.all(steps > 0)
    np.testing.assert_allclose(steps[1:] / steps[:-1], 1.0, atol=0.02)


# ------------------------------------------------------- llr_coefficients' checks


@pytest.mark.parametrize("kwargs, name", [
    (dict(n=1), "n"), (dict(n=0.5), "n"), (dict(n=np.nan), "n"), (dict(gamma=0.0), "gamma"),
    (dict(gamma=-1.0), "gamma"), (dict(eta_sq=-1.0), "eta_sq"), (dict(eta_sq=np.nan), "eta_sq"),
    (dict(d=0), "d"), (dict(d=2.5), "d"), (dict(statistic="xyz"), "statistic"), (dict(n=[2, 1]), "n"),
])
def test_llr_coefficients_refuses_bad_input_naming_the_parameter(kwargs, name):
    args = dict(eta_sq=1.0, n=10, gamma=1.0, d=2, statistic="exact") | kwargs
    with pytest.raises(ValueError, match=rf"^{name} "):
        L.llr_coefficients(args["eta_sq"], args["n"], args["gamma"], args["d"], args["statistic"])


@pytest.mark.parametrize("kwargs, name", [(dict(d=True), "d"), (dict(n="10"), "n"), (dict(statistic=1), "statistic")])
def test_llr_coefficients_refuses_wrong_types(kwargs, name):
    args = dict(eta_sq=1.0, n=10, gamma=1.0, d=2, statistic="exact") | kwargs
    with pytest.raises((TypeError, ValueError), match=rf"^{name} "):
        L.llr_coefficients(args["eta_sq"], args["n"], args["gamma"], args["d"], args["statistic"])


@pytest.mark.parametrize("statistic", ["paper", "exact"])
@pytest.mark.parametrize("gamma", [1e-300, 1e300])
def test_llr_coefficients_at_the_ends_of_gamma_are_values_without_warnings(statistic, gamma):
    A, B, C = L.llr_coefficients(0.0, 1e300, gamma, 3, statistic)
    for v in (A, B):
        assert not np.isnan(v) and float(v) == (np.inf if gamma < 1 else 0.0)
    assert np.isfinite(C)


@pytest.mark.parametrize("bad", [0, -1, 2.5, True, "3", np.nan])
@pytest.mark.parametrize("func", [L.leak_probability, L.log_leak_probability])
def test_d_is_checked_under_the_paper_statistic_too(func, bad):
    with pytest.raises((TypeError, ValueError), match=r"^d "):
        func(1.0, 10, 1.0, tau=0.5, statistic="paper", d=bad)
    assert func(1.0, 10, 1.0, tau=0.5, statistic="paper", d=3.0) == func(1.0, 10, 1.0, tau=0.5)


def test_llr_moments_checks_d_under_the_paper_statistic():
    with pytest.raises(ValueError, match=r"^d "):
        L.llr_moments(1.0, 10, 1.0, statistic="paper", d=0)


@pytest.mark.parametrize("statistic", ["paper", "exact"])
def test_many_quadrature_values_at_once_equal_the_values_one_by_one(statistic):
    # the quadrature works in blocks of rows (bounded memory for mean-field maps of thousands of cells):
    # every value must be the one computed alone, bit for bit, whatever the block it falls in
    from perfpriv import leakage
    rng = np.random.default_rng(4)
    n = np.rint(rng.uniform(2, 20000, 5000))
    gamma = rng.uniform(0.05, 30.0, 5000)
    together = leakage.marginal_leak_probability(n, gamma, tau=0.02, d=12, R=1e6, statistic=statistic).p
    picks = rng.choice(5000, size=40, replace=False)
    alone = [leakage.marginal_leak_probability(n[i], gamma[i], tau=0.02, d=12, R=1e6, statistic=statistic).p
             for i in picks]
    assert together.shape == (5000,) and np.array_equal(together[picks], alone)
    assert 0.01 < together.mean() < 0.99         # not all at a trivial limit
