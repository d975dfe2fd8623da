"""Tests of perfpriv.bernoulli against definitions, exact laws and Monte Carlo.

Monte Carlo checks use fixed seeds and tolerances of Z standard errors
(Z = 4.5: a correct implementation fails with probability ~1e-5 per check).
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from scipy import integrate, stats

from perfpriv import bernoulli as B
from perfpriv import engine
from perfpriv.behaviour import Memoryless
from perfpriv.engine import Policy

Z = 4.5
P_MIN = 1e-3  # two-sample tests: reject equality in distribution below this p-value


def zscore(estimate, truth, se):
    return np.abs(np.asarray(estimate) - truth) / np.asarray(se)


# ---------------------------------------------------------------------------
# Lemma 1: beta <-> epsilon and the LDP ratio
# ---------------------------------------------------------------------------
EPS_GRID = np.array([0.0, 1e-8, 1e-3, 0.1, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0])


def test_beta_from_epsilon_gives_likelihood_ratio_exp_epsilon():
    eps = EPS_GRID[EPS_GRID <= 20]
    beta = B.beta_from_epsilon(eps)
    # the definition of eps-LDP for RR: P(keep) / P(flip) = e^eps (Lemma 1's proof)
    ratio = (0.5 + beta) / (0.5 - beta)
    np.testing.assert_allclose(np.log(ratio), eps, rtol=1e-9, atol=1e-15)


def test_beta_from_epsilon_accurate_to_ulps_against_mpmath_up_to_700():
    mpmath.mp.dps = 50
    for eps in [1e-12, 1e-6, 0.01, 0.3, 1.0, 7.0, 30.0, 40.0, 100.0, 400.0, 700.0]:
        exact = mpmath.tanh(mpmath.mpf(eps) / 2) / 2
        got = B.beta_from_epsilon(eps)
        assert abs(mpmath.mpf(got) - exact) <= 4 * np.spacing(float(exact)), eps


def test_beta_from_epsilon_inf_is_one_half_and_zero_is_zero():
    assert B.beta_from_epsilon(np.inf) == 0.5
    assert B.beta_from_epsilon(0.0) == 0.0
    out = B.beta_from_epsilon(np.array([0.0, np.inf]))
    assert out.shape == (2,) and out.tolist() == [0.0, 0.5]


def test_epsilon_from_beta_inverts_beta_from_epsilon():
    eps = np.array([0.0, 1e-6, 0.01, 0.5, 1.0, 3.0, 10.0, 20.0])
    back = B.epsilon_from_beta(B.beta_from_epsilon(eps))
    np.testing.assert_allclose(back, eps, rtol=1e-7, atol=1e-12)
    assert B.epsilon_from_beta(0.5) == np.inf
    assert isinstance(B.epsilon_from_beta(0.25), float)


def test_ldp_ratio_exact_from_mechanism_definition():
    # P(Y=y | X=x) = P(keep) if y == x else P(flip); the worst ratio over y is e^eps
    for eps in [0.1, 1.0, 4.0]:
        keep = B.leak_probability(B.beta_from_epsilon(eps))
        p = {(x, y): keep if x == y else 1 - keep for x in (0, 1) for y in (0, 1)}
        for y in (0, 1):
            ratio = p[(1, y)] / p[(0, y)]
            assert np.isclose(max(ratio, 1 / ratio), np.exp(eps), rtol=1e-12)


@pytest.mark.parametrize("eps", [0.5, 2.0])
def test_ldp_ratio_empirical_equals_exp_epsilon(eps):
    beta = B.beta_from_epsilon(eps)
    n = 200_000
    rng = np.random.default_rng(11)
    y1 = B.privatize(np.ones(n, dtype=int), beta, rng)
    y0 = B.privatize(np.zeros(n, dtype=int), beta, rng)
    p1, p0 = y1.mean(), y0.mean()  # P(Y=1|X=1), P(Y=1|X=0)
    log_ratio = np.log(p1) - np.log(p0)
    # delta method: Var(log p_hat) = (1 - p) / (n p)
    se = np.sqrt((1 - p1) / (n * p1) + (1 - p0) / (n * p0))
    assert zscore(log_ratio, eps, se) < Z


def test_privatize_keeps_with_probability_one_half_plus_beta():
    beta, n = 0.2, 100_000
    x = np.random.default_rng(3).integers(0, 2, size=n)
    y, kept = B.privatize(x, beta, rng=4, return_kept=True)
    assert np.array_equal(kept, y == x)
    p = 0.5 + beta
    assert zscore(kept.mean(), p, np.sqrt(p * (1 - p) / n)) < Z


def test_privatize_at_beta_one_half_is_identity_and_seeded():
    x = np.array([0, 1, 1, 0, 1])
    assert np.array_equal(B.privatize(x, 0.5, rng=0), x)
    x = np.random.default_rng(0).integers(0, 2, size=50)
    assert np.array_equal(B.privatize(x, 0.1, rng=5), B.privatize(x, 0.1, rng=5))


def test_privatize_rejects_non_binary_input():
    with pytest.raises(ValueError, match="x"):
        B.privatize([0, 2], 0.1, rng=0)
    with pytest.raises(ValueError, match="beta"):
        B.privatize([0, 1], 0.7, rng=0)


# ---------------------------------------------------------------------------
# eq. 1, Lemma 10 and the exact variance
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("mu,eps", [(0.3, 0.5), (0.9, 2.0), (0.5, np.inf)])
def test_estimator_unbiased_and_variance_matches_monte_carlo(mu, eps):
    beta = B.beta_from_epsilon(eps)
    reps, n = 20_000, 40
    rng = np.random.default_rng(21)
    x = (rng.random((reps, n)) < mu).astype(int)
    y = B.privatize(x, beta, rng)
    est = B.estimate_mean(y, beta, axis=1)
    var = B.estimator_variance(mu, beta, n)
    # unbiasedness (Lemma 10)
    assert zscore(est.mean(), mu, est.std(ddof=1) / np.sqrt(reps)) < Z
    # variance: se of the sample variance from the fourth central moment
    c = est - est.mean()
    s2 = np.mean(c**2)
    se_s2 = np.sqrt((np.mean(c**4) - s2**2) / reps)
    assert zscore(s2, var, se_s2) < Z


def test_estimator_variance_equals_exact_binomial_computation():
    for mu, beta, n in [(0.2, 0.1, 7), (0.7, 0.35, 30), (1.0, 0.05, 3), (0.5, 0.5, 11)]:
        nu = 2 * beta * mu + 0.5 - beta
        s = np.arange(n + 1)
        pmf = stats.binom.pmf(s, n, nu)
        est = (s / n - 0.5 + beta) / (2 * beta)
        mean = np.sum(pmf * est)
        var = np.sum(pmf * (est - mean) ** 2)
        assert np.isclose(mean, mu, rtol=1e-12, atol=1e-12)
        assert np.isclose(B.estimator_variance(mu, beta, n), var, rtol=1e-10)


def test_estimator_variance_without_privacy_is_bernoulli_variance_over_n():
    mu = np.linspace(0, 1, 11)
    np.testing.assert_allclose(B.estimator_variance(mu, 0.5, 25), mu * (1 - mu) / 25, atol=1e-15)


def test_estimate_mean_undefined_at_beta_zero():
    with pytest.raises(ValueError, match="beta"):
        B.estimate_mean([0, 1, 1], 0.0)
    with pytest.raises(ValueError, match="beta"):
        B.estimator_variance(0.5, 0.0, 10)
    with pytest.raises(ValueError, match="y"):
        B.estimate_mean([0, 3], 0.2)


# ---------------------------------------------------------------------------
# Lemma 2, eq. 4, appendix B, Theorem 1
# ---------------------------------------------------------------------------
def test_growth_factor_eq4_form_equals_balance_form_and_broadcasts():
    beta = np.linspace(0, 0.5, 6)[:, None, None]
    q = np.linspace(0, 1, 5)[None, :, None]
    r = np.linspace(0, 1, 4)[None, None, :]
    c = B.growth_factor(beta, q=q, r=r)
    assert c.shape == (6, 5, 4)
    np.testing.assert_allclose(c, 1 + (r - q) / 2 - beta * (q + r), atol=1e-15)
    ca = B.growth_factor(beta, q=q, r=r, rule="agnostic")
    np.testing.assert_allclose(ca, 1 - q * (0.5 + beta) + r, atol=1e-15)


def _one_round_moments(beta, q, r, n, rule):
    """Exact mean and variance of N_1 - N_0 = A - D given N_0 = n (no clip)."""
    keep = 0.5 + beta
    a = keep * q  # a user leaks and leaves
    if rule == "leak":
        b = (1 - keep) * r  # a user is not leaked and recruits (disjoint from a)
        mean = n * (b - a)
        var = n * (a * (1 - a) + b * (1 - b) + 2 * a * b)  # multinomial counts
    else:
        mean = n * (r - a)
        var = n * (a * (1 - a) + r * (1 - r))  # independent binomials
    return mean, var


@pytest.mark.parametrize("rule", ["leak", "agnostic"])
@pytest.mark.parametrize("eps", [0.3, 2.0, np.inf])
def test_one_round_expected_growth_is_growth_factor_times_population(rule, eps):
    q, r, n0, trials = 0.35, 0.55, 5000, 4000
    run = engine.simulate(B.RandomizedResponse(eps), Memoryless(q=q, r=r, rule=rule), T=1, n0=n0, trials=trials, policy=Policy(cap=10**7), seed=7)
    n1 = run.population[:, 1].astype(float)
    beta = B.beta_from_epsilon(eps)
    c = B.growth_factor(beta, q=q, r=r, rule=rule)
    assert zscore(n1.mean(), c * n0, n1.std(ddof=1) / np.sqrt(trials)) < Z
    # the fast simulator also has the exact one-round variance of the agent model
    _, var = _one_round_moments(beta, q, r, n0, rule)
    d = n1 - n1.mean()
    se_var = np.sqrt((np.mean(d**4) - np.mean(d**2) ** 2) / trials)
    assert zscore(np.mean(d**2), var, se_var) < Z


def test_expected_population_after_several_rounds_is_c_power_t():
    # E[N_t] = C^t n0 exactly while neither bound binds (the conditional mean is linear)
    q, r, n0, T, trials = 0.4, 0.5, 3000, 6, 3000
    for rule in ("leak", "agnostic"):
        run = engine.simulate(B.RandomizedResponse(1.0), Memoryless(q=q, r=r, rule=rule), T=T, n0=n0, trials=trials, policy=Policy(cap=10**7), seed=8)
        assert run.population.min() > 1
        mf = B.mean_field(1.0, q=q, r=r, T=T, n0=n0, rule=rule, cap=10**7).population
        pop = run.population.astype(float)
        se = pop.std(axis=0, ddof=1) / np.sqrt(trials)
        assert np.all(zscore(pop.mean(axis=0)[1:], mf[1:], se[1:]) < Z)


@pytest.mark.parametrize("rule", ["leak", "agnostic"])
def test_agent_simulator_one_round_growth_is_growth_factor(rule):
    q, r, n0, trials = 0.35, 0.55, 300, 400
    run = engine.simulate_agents(B.RandomizedResponse(0.8), Memoryless(q=q, r=r, rule=rule), T=1, n0=n0,
                                 trials=trials, policy=Policy(cap=10**6), seed=3)
    n1 = run.population[:, 1].astype(float)
    c = B.growth_factor(B.beta_from_epsilon(0.8), q=q, r=r, rule=rule)
    assert zscore(n1.mean(), c * n0, n1.std(ddof=1) / np.sqrt(trials)) < Z


@pytest.mark.parametrize("rule", ["leak", "agnostic"])
def test_error_of_round_t_is_driven_by_population_before_the_round(rule):
    # timing convention: E[sq_error_t | N_{t-1}] = E_mu[Var] / N_{t-1} exactly
    # (eq. 1 is unbiased; the law of mu_t does not depend on N).  The residuals are
    # martingale differences, so their pooled mean has the usual standard error.
    eps, q, r = 1.0, 0.6, 0.3  # a fast-shrinking population: N_t differs from N_{t-1}
    run = B.simulate(eps, q=q, r=r, T=8, n0=400, trials=2000, rule=rule, seed=12)
    per_user = B.mean_field(eps, q=0.0, r=0.0, T=1, n0=1).sq_error[0]  # E_mu[Var] with N = 1
    pop = run.population.astype(float)
    res = run.sq_error - per_user / pop[:, :-1]
    assert abs(res.mean()) < Z * res.std(ddof=1) / np.sqrt(res.size)
    # the same check with N_t in place of N_{t-1} is rejected
    wrong = run.sq_error - per_user / pop[:, 1:]
    assert abs(wrong.mean()) > Z * wrong.std(ddof=1) / np.sqrt(wrong.size)


def test_critical_beta_makes_growth_factor_one_and_above_it_shrinks():
    q = np.array([0.05, 0.1, 0.3, 0.45, 0.2])
    r = np.array([0.9, 0.5, 0.6, 0.5, 0.2])
    bc = B.critical_beta(q=q, r=r)
    np.testing.assert_allclose(B.growth_factor(bc, q=q, r=r), 1.0, atol=1e-12)
    assert np.all(B.growth_factor(np.minimum(bc + 1e-3, 0.5), q=q, r=r) < 1)
    inside = bc > 1e-3
    assert np.all(B.growth_factor(bc[inside] - 1e-3, q=q[inside], r=r[inside]) > 1)


def test_leak_model_collapses_at_every_privacy_level_when_q_exceeds_r():
    # the paper's claim after Theorem 1: q > r => C(beta) < 1 for all beta
    qs, rs = np.meshgrid(np.linspace(0, 1, 41), np.linspace(0, 1, 41), indexing="ij")
    sel = qs > rs
    beta = np.linspace(0, 0.5, 51)[:, None]
    c = B.growth_factor(beta, q=qs[sel][None, :], r=rs[sel][None, :])
    assert np.all(c < 1)
    assert np.all(B.critical_beta(q=qs[sel], r=rs[sel]) == 0)
    # ... and without privacy (beta = 1/2) the leak model shrinks as soon as q > 0
    assert np.all(B.growth_factor(0.5, q=qs[qs > 0], r=rs[qs > 0]) < 1)


def test_critical_beta_when_nobody_moves_is_one_half():
    assert B.critical_beta(q=0.0, r=0.0) == 0.5
    assert B.critical_epsilon(q=0.0, r=0.0) == np.inf
    beta = np.linspace(0, 0.5, 11)
    np.testing.assert_allclose(B.growth_factor(beta, q=0.0, r=0.0), 1.0)
    # continuity: q -> 0 at fixed r > 0 gives beta_c -> 1/2
    assert B.critical_beta(q=1e-12, r=0.3) == pytest.approx(0.5)


def test_agnostic_threshold_is_r_over_q_minus_one_half_clipped():
    q = np.array([0.6, 0.6, 0.6, 0.6, 0.0, 0.3])
    r = np.array([0.1, 0.3, 0.4, 0.7, 0.2, 0.0])
    bc = B.critical_beta(q=q, r=r, rule="agnostic")
    np.testing.assert_allclose(bc, [0.0, 0.0, 1 / 6, 0.5, 0.5, 0.0])
    # where the threshold is interior, C(beta_c) = 1 and C shrinks past it
    i = 2
    assert B.growth_factor(bc[i], q=q[i], r=r[i], rule="agnostic") == pytest.approx(1.0)
    assert B.growth_factor(bc[i] + 1e-3, q=q[i], r=r[i], rule="agnostic") < 1
    # unlike the leak model, q > r does not force collapse when r >= q/2
    assert B.growth_factor(0.0, q=0.6, r=0.4, rule="agnostic") > 1


def test_critical_epsilon_matches_closed_form():
    # beta_c = 1/6 for (q, r) = (0.3, 0.6): eps_c = log((1/2 + 1/6) / (1/2 - 1/6)) = log 2
    assert B.critical_epsilon(q=0.3, r=0.6) == pytest.approx(np.log(2), rel=1e-12)
    assert B.critical_epsilon(q=0.6, r=0.3) == 0.0
    assert B.critical_epsilon(q=0.0, r=0.4) == np.inf
    out = B.critical_epsilon(q=np.array([0.3, 0.6]), r=np.array([0.6, 0.3]))
    assert out.shape == (2,)


# ---------------------------------------------------------------------------
# simulate
# ---------------------------------------------------------------------------
def test_simulate_shapes_timing_and_bounds():
    run = engine.simulate(B.RandomizedResponse(1.0), Memoryless(q=0.3, r=0.6), T=12, n0=40, trials=5, policy=Policy(cap=60), seed=0)
    assert run.population.shape == (5, 13)
    assert run.estimate.shape == run.truth.shape == run.sq_error.shape == (5, 12)
    assert np.all(run.population[:, 0] == 40)
    assert run.population.min() >= 1 and run.population.max() <= 60
    np.testing.assert_allclose(run.sq_error, (run.estimate - run.truth) ** 2)
    assert np.all((run.truth >= 0) & (run.truth <= 1))
    grid = B.simulate([0.5, 1.0, np.inf], q=0.3, r=0.6, T=12, n0=40, trials=5, seed=0)
    assert grid.population.shape == (3, 5, 13) and grid.sq_error.shape == (3, 5, 12)
    assert grid.moving_average(4).shape == (3, 12)
    assert grid.mean_population.shape == (3, 13)


def test_simulate_population_hits_cap_and_floor():
    grow = engine.simulate(B.RandomizedResponse(0.1), Memoryless(q=0.0, r=1.0), T=20, n0=10, trials=3, policy=Policy(cap=500), seed=1)
    assert np.all(grow.population[:, -1] == 500)
    die = B.simulate(np.inf, q=1.0, r=0.0, T=3, n0=10, trials=3, seed=1)
    assert np.all(die.population[:, 1:] == 1)


def test_simulate_same_seed_same_numbers_and_other_seed_differs():
    kw = dict(T=15, n0=30, trials=4)
    a = B.simulate([0.5, 3.0], q=0.3, r=0.6, seed=123, **kw)
    b = B.simulate([0.5, 3.0], q=0.3, r=0.6, seed=123, **kw)
    c = B.simulate([0.5, 3.0], q=0.3, r=0.6, seed=124, **kw)
    for name in ("population", "estimate", "truth", "sq_error"):
        assert np.array_equal(getattr(a, name), getattr(b, name))
    assert not np.array_equal(a.estimate, c.estimate)
    # a Generator in the same state gives the same numbers too
    g1 = B.simulate(1.0, q=0.3, r=0.6, seed=np.random.default_rng(9), **kw)
    g2 = B.simulate(1.0, q=0.3, r=0.6, seed=np.random.default_rng(9), **kw)
    assert np.array_equal(g1.population, g2.population)


def test_simulate_epsilon_grid_equals_one_epsilon_at_a_time():
    eps = [0.05, 0.7, 2.0, np.inf]
    kw = dict(T=25, n0=60, trials=6, seed=42)
    for rule in ("leak", "agnostic"):
        grid = B.simulate(eps, q=0.3, r=0.6, rule=rule, **kw)
        for i, e in enumerate(eps):
            alone = B.simulate(e, q=0.3, r=0.6, rule=rule, **kw)
            for name in ("population", "estimate", "truth", "sq_error"):
                assert np.array_equal(getattr(grid, name)[i], getattr(alone, name)), (e, name)
    # adding values to the grid does not change the others
    bigger = B.simulate([0.3] + eps, q=0.3, r=0.6, **kw)
    grid = B.simulate(eps, q=0.3, r=0.6, **kw)
    assert np.array_equal(bigger.population[1:], grid.population)


def test_simulate_truth_path_is_shared_across_epsilon_and_follows_mu_law():
    run = engine.simulate(B.RandomizedResponse([0.5, 1.0], mu=(0.5, 1.0)), Memoryless(q=0.2, r=0.3), T=200, n0=20,
                          trials=50, seed=3)
    assert np.array_equal(run.truth[0], run.truth[1])
    t = run.truth[0].ravel()
    assert t.min() >= 0.5 and t.max() <= 1.0
    assert stats.kstest(t, stats.uniform(0.5, 0.5).cdf, method="asymp").pvalue > P_MIN
    const = engine.simulate(B.RandomizedResponse(1.0, mu=0.25), Memoryless(q=0.2, r=0.3), T=5, n0=20, trials=2, seed=3)
    assert np.all(const.truth == 0.25)


def test_simulate_at_epsilon_inf_reports_true_bits_and_nobody_is_recruited():
    run = B.simulate(np.inf, q=0.3, r=0.6, T=30, n0=200, trials=20, seed=5)
    assert run.level == np.inf and B.beta_from_epsilon(run.level) == 0.5
    assert np.all(np.diff(run.population, axis=-1) <= 0)  # everyone leaks: no recruit
    assert np.all(np.isfinite(run.sq_error))
    assert np.all((run.estimate >= 0) & (run.estimate <= 1))  # estimate = sample mean of X
    # q = 0: nobody leaves either
    still = B.simulate(np.inf, q=0.0, r=0.9, T=10, n0=50, trials=3, seed=5)
    assert np.all(still.population == 50)


def test_mean_squared_error_at_fixed_population_matches_mean_field_error():
    # q = r = 0 keeps N_t = n0, where the mean-field error is exact
    n0, T, trials = 30, 50, 400
    for eps, mu in [(0.8, (0.0, 1.0)), (2.5, (0.5, 1.0)), (np.inf, 0.3)]:
        run = engine.simulate(B.RandomizedResponse(eps, mu=mu), Memoryless(q=0.0, r=0.0), T=T, n0=n0, trials=trials,
                              seed=17)
        assert np.all(run.population == n0)
        mf = B.mean_field(eps, q=0.0, r=0.0, T=T, n0=n0, mu=mu).sq_error
        assert np.allclose(mf, mf[0])
        sq = run.sq_error.ravel()  # independent across rounds and trials
        assert zscore(sq.mean(), mf[0], sq.std(ddof=1) / np.sqrt(sq.size)) < Z


def test_mean_field_error_averages_variance_over_uniform_mu_law():
    for a, b in [(0.0, 1.0), (0.5, 1.0), (0.1, 0.3)]:
        for eps in [0.2, 1.0, np.inf]:
            beta = B.beta_from_epsilon(eps)
            avg, _ = integrate.quad(lambda m: B.estimator_variance(m, beta, 100), a, b)
            mf = B.mean_field(eps, q=0.0, r=0.0, T=1, n0=100, mu=(a, b)).sq_error
            assert mf[0] == pytest.approx(avg / (b - a), rel=1e-10)


def test_mean_field_population_follows_growth_factor_with_clip():
    mf = B.mean_field([0.1, np.inf], q=0.3, r=0.6, T=60, n0=400, cap=5000).population
    assert mf.shape == (2, 61)
    c = B.growth_factor(B.beta_from_epsilon(0.1), q=0.3, r=0.6)
    assert mf[0, 1] == pytest.approx(400 * c)
    assert mf[0, -1] == 5000  # grows to the cap
    assert mf[1, -1] == 1.0  # no privacy: shrinks to the floor (C = 1 - q)
    # array q, r are cells (leading axes), a 1-D epsilon a grid of levels (next axis)
    grid = B.mean_field(np.array([0.5, 1.0, 2.0]), q=np.array([0.2, 0.4]), r=0.5, T=4, n0=10).sq_error
    assert grid.shape == (2, 3, 4)
    for i, q in enumerate([0.2, 0.4]):
        for j, eps in enumerate([0.5, 1.0, 2.0]):
            np.testing.assert_array_equal(grid[i, j], B.mean_field(eps, q=q, r=0.5, T=4, n0=10).sq_error)


def test_moving_average_is_trailing_mean_with_shrinking_start():
    run = B.simulate([0.5, 2.0], q=0.3, r=0.6, T=20, n0=30, trials=3, seed=2)
    m = run.mean_sq_error
    for w in (1, 4, 15, 50):
        ma = run.moving_average(w)
        expected = np.stack([[m[k, max(0, t - w + 1):t + 1].mean() for t in range(20)]
                             for k in range(2)])
        np.testing.assert_allclose(ma, expected, rtol=1e-12)
    with pytest.raises(ValueError, match="window"):
        run.moving_average(0)


def test_clip_estimate_keeps_estimates_in_unit_interval():
    run = B.simulate(0.2, q=0.3, r=0.6, T=10, n0=20, trials=10, seed=4)
    assert run.estimate.min() < 0 or run.estimate.max() > 1  # eq. 1 is not clipped
    clipped = engine.simulate(B.RandomizedResponse(0.2, clip_estimate=True), Memoryless(q=0.3, r=0.6), T=10, n0=20,
                              trials=10, seed=4)
    assert np.array_equal(clipped.estimate, np.clip(run.estimate, 0, 1))


# ---------------------------------------------------------------------------
# simulate vs the agent reference engine.simulate_agents (equal in distribution)
# ---------------------------------------------------------------------------
def _compare(fast, slow):
    """p-values of two-sample tests on N_T and on the final squared error."""
    p = []
    for a, b in [(fast.population[:, -1], slow.population[:, -1]),
                 (fast.sq_error[:, -1], slow.sq_error[:, -1])]:
        a, b = a.astype(float), b.astype(float)
        p.append(stats.ks_2samp(a, b, method="asymp").pvalue)
        z = (a.mean() - b.mean()) / np.sqrt(a.var(ddof=1) / a.size + b.var(ddof=1) / b.size)
        p.append(2 * stats.norm.sf(abs(z)))
    return p


@pytest.mark.parametrize("rule,eps,q,r", [("leak", 1.0, 0.3, 0.6), ("leak", np.inf, 0.2, 0.5),
                                           ("agnostic", 0.5, 0.6, 0.3)])
def test_fast_simulator_and_agent_simulator_agree_in_distribution(rule, eps, q, r):
    mech, users = B.RandomizedResponse(eps, mu=(0.0, 1.0)), Memoryless(q=q, r=r, rule=rule)
    kw = dict(T=10, n0=50, trials=400, policy=Policy(cap=400))
    fast = engine.simulate(mech, users, seed=100, **kw)
    slow = engine.simulate_agents(mech, users, seed=200, **kw)
    assert min(_compare(fast, slow)) > P_MIN


def test_two_sample_check_detects_a_wrong_growth_rule():
    # power check of the test above: the other growth rule must be rejected
    mech, kw = B.RandomizedResponse(1.0, mu=(0.0, 1.0)), dict(T=10, n0=50, trials=100, policy=Policy(cap=150))
    fast = engine.simulate(mech, Memoryless(q=0.3, r=0.6, rule="leak"), seed=100, **kw)
    wrong = engine.simulate_agents(mech, Memoryless(q=0.3, r=0.6, rule="agnostic"), seed=200, **kw)
    assert min(_compare(fast, wrong)) < P_MIN


def test_simulate_agents_is_seeded_and_takes_one_level_only():
    users, kw = Memoryless(q=0.3, r=0.6), dict(T=4, n0=15, trials=3, seed=8)
    a = engine.simulate_agents(B.RandomizedResponse(0.5), users, **kw)
    b = engine.simulate_agents(B.RandomizedResponse(0.5), users, **kw)
    assert np.array_equal(a.population, b.population) and np.array_equal(a.estimate, b.estimate)
    c = engine.simulate_agents(B.RandomizedResponse(0.5), users, **dict(kw, seed=9))
    assert not np.array_equal(a.estimate, c.estimate)
    assert a.method == "agents"
    with pytest.raises(ValueError, match="^epsilon must be one privacy level"):
        engine.simulate_agents(B.RandomizedResponse([0.5, np.inf]), users, **kw)


# ---------------------------------------------------------------------------
# validation
# ---------------------------------------------------------------------------
GOOD = dict(epsilon=1.0, q=0.3, r=0.6, T=5, n0=10, trials=2, rule="leak", cap=100)
BAD = [
    ("epsilon", -0.5), ("epsilon", np.nan), ("epsilon", 0.0), ("epsilon", -np.inf),
    ("q", -0.1), ("q", 1.2), ("q", np.nan), ("r", -0.01), ("r", 1.5),
    ("T", 0), ("n0", 0), ("trials", 0), ("cap", 9), ("rule", "other"),
]


@pytest.mark.parametrize("name,value", BAD)
def test_simulators_reject_bad_input_naming_the_parameter(name, value):
    # (the agent reference takes the objects, whose constructors check epsilon, q, r and rule; its own T, n0,
    # trials and policy checks are test_agents')
    args = dict(GOOD, **{name: value})
    eps, q, r = args.pop("epsilon"), args.pop("q"), args.pop("r")
    with pytest.raises(ValueError, match=name):
        engine.simulate(B.RandomizedResponse(eps), Memoryless(q=q, r=r, rule=args.pop("rule", "leak")), seed=0,
                        policy=Policy(cap=args.pop("cap")), **args)


@pytest.mark.parametrize("name,value", [b for b in BAD if b[0] not in ("trials",)])
def test_mean_field_functions_reject_bad_input(name, value):
    args = dict(GOOD, **{name: value})
    args.pop("trials")
    eps, q, r = args.pop("epsilon"), args.pop("q"), args.pop("r")
    if not (name == "epsilon" and value == 0.0):  # the population is defined at eps = 0
        with pytest.raises(ValueError, match=name):
            B.mean_field(eps, q=q, r=r, **args).population
    with pytest.raises(ValueError, match=name):
        B.mean_field(eps, q=q, r=r, **args).sq_error


def test_formulas_reject_bad_input_naming_the_parameter():
    with pytest.raises(ValueError, match="epsilon"):
        B.beta_from_epsilon(-1.0)
    with pytest.raises(ValueError, match="epsilon"):
        B.beta_from_epsilon(np.nan)
    with pytest.raises(ValueError, match="beta"):
        B.epsilon_from_beta(0.6)
    with pytest.raises(ValueError, match="beta"):
        B.growth_factor(-0.1, q=0.3, r=0.6)
    with pytest.raises(ValueError, match="q"):
        B.growth_factor(0.1, q=1.3, r=0.6)
    with pytest.raises(ValueError, match="r"):
        B.critical_beta(q=0.3, r=-0.6)
    with pytest.raises(ValueError, match="rule"):
        B.critical_epsilon(q=0.3, r=0.6, rule="leaky")
    with pytest.raises(ValueError, match="mu"):
        B.RandomizedResponse(1.0, mu=(0.2, 0.5, 0.7))
    with pytest.raises(ValueError, match="seed"):
        B.simulate(1.0, q=0.3, r=0.6, T=2, n0=5, seed=-3)


def test_the_authors_curve_script_floors_at_one_never_stops_and_clips():
    # a dying setting of Fig. 1: under the map script the runs die and are charged 10 a round; under the
    # curve script (what experiments.curve_runs runs for Figs. 1 and 6 under conventions="authors") they keep one user and run on
    kw = dict(q=0.6, r=0.3, T=200, n0=400, trials=5, seed=4)
    maps = engine.simulate(B.RandomizedResponse(1.0), Memoryless(q=0.6, r=0.3), T=200, n0=400, trials=5, seed=4,
                           conventions="authors")
    script = B.curve_script_options("authors")
    curves = engine.simulate(B.RandomizedResponse(1.0, clip_estimate=script["clip_estimate"]), Memoryless(q=0.6, r=0.3),
                             T=200, n0=400, trials=5, policy=script["policy"], conventions=script["conventions"], seed=4)
    assert not maps.alive[..., -1].any() and np.all(maps.sq_error[..., -1] == 10.0)
    assert curves.alive.all() and np.all(curves.population >= 1)
    est = curves.details["estimate"]
    assert np.all((0.0 <= est) & (est <= 1.0)) and curves.sq_error[..., -1].max() < 1.0
    assert B.curve_script_options("paper") == {"conventions": "paper", "policy": Policy(cap=20000)}
    with pytest.raises(ValueError, match="conventions"):
        B.curve_script_options("author")


# ------------- critical budgets and variances at the ends of the double range (mpmath at 60 digits)


@pytest.mark.usefixtures("mp60")
@pytest.mark.parametrize("q", [1e-300, 1e-17, 1e-16, 1e-8, 0.1, 0.3, 0.4999])
def test_critical_epsilon_is_ln_r_over_q(q):
    # leak model: β_c = (r − q)/(2(q + r)), so ε_c = 2 artanh(2β_c) = ln(r/q)
    r = 0.5
    want = float(mpmath.log(mpmath.mpf(r) / mpmath.mpf(q)))
    assert B.critical_epsilon(q=q, r=r) == pytest.approx(want, rel=1e-14)


@pytest.mark.usefixtures("mp60")
@pytest.mark.parametrize("q, r", [(0.6, 0.4), (0.6, 0.31), (1e-300, 0.6e-300), (0.5, 0.25 + 1e-12)])
def test_critical_epsilon_agnostic_is_ln_r_over_q_minus_r(q, r):
    # agnostic model: β_c = r/q − 1/2, so ε_c = ln(r/(q − r)) for q/2 < r < q
    want = float(mpmath.log(mpmath.mpf(r) / (mpmath.mpf(q) - mpmath.mpf(r))))
    assert B.critical_epsilon(q=q, r=r, rule="agnostic") == pytest.approx(want, rel=1e-10)


def test_critical_epsilon_edge_cases_unchanged():
    assert B.critical_epsilon(q=0.0, r=0.5) == math.inf
    assert B.critical_epsilon(q=0.0, r=0.0) == math.inf
    assert B.critical_epsilon(q=0.6, r=0.3) == 0.0
    assert B.critical_epsilon(q=0.6, r=0.3, rule="agnostic") == 0.0
    assert B.critical_epsilon(q=0.6, r=0.6, rule="agnostic") == math.inf
    np.testing.assert_allclose(B.critical_epsilon(q=[1e-17, 0.3], r=0.5),
                               [math.log(0.5e17), math.log(0.5 / 0.3)], rtol=1e-14)


@pytest.mark.usefixtures("mp60")
@pytest.mark.parametrize("beta", [1e-300, 1e-160, 1e-140, 1e-100, 0.1, 0.5])
def test_estimator_variance_at_tiny_beta(beta):
    # Var = ν(1 − ν)/(4β²n), ν = 1/2 + β(2μ − 1): exact at 60 digits (inf beyond the doubles)
    b, m = mpmath.mpf(beta), mpmath.mpf("0.3")
    nu = mpmath.mpf(1) / 2 + b * (2 * m - 1)
    want = nu * (1 - nu) / (4 * b**2 * 10)
    got = B.estimator_variance(mu=0.3, beta=beta, n=10)
    if want > 1.7e308:
        assert got == math.inf
    else:
        assert got == pytest.approx(float(want), rel=1e-13)


def test_a_vanishing_budget_gives_infinite_or_bounded_errors_never_nan():
    run = engine.simulate(B.RandomizedResponse(1e-300), Memoryless(q=0.3, r=0.6), T=3, n0=10, trials=2, policy=Policy(cap=100), seed=0)
    # ε → 0: the debiased estimate is ±inf (error inf) unless exactly half the answers are 1,
    # when it is 1/2 (error (1/2 − μ)² <= 1/4); never NaN
    err = run.sq_error[run.alive]
    assert np.all(np.isposinf(err) | (err <= 0.25)) and np.isposinf(err).any()


def test_randomized_response_at_zero_budget_has_an_infinite_error():
    # ε = 0 (β = 0): every answer is a fair coin, the debiased estimate has infinite variance; the
    # small-β branch used to put β = 1 there and returned 1/16 − s2/4 over n, a finite (even negative) error
    mech = B.RandomizedResponse([1.0])         # the error of any budget, the mechanism's levels aside
    err = mech.expected_error(100, np.array([0.0, 1e-300, 1.0]))
    assert err[0] == np.inf and err[1] == np.inf
    assert 0 < err[2] < np.inf
    e, de_dn, de_deps = mech.expected_error_grad(100, 0.0)
    assert e == np.inf and de_dn == -np.inf and de_deps == -np.inf


def test_estimate_mean_checks_its_axis_by_name():
    y = np.array([[1, 0, 1, 1], [0, 0, 1, 0], [1, 1, 1, 0]])
    np.testing.assert_allclose(B.estimate_mean(y, 0.25, axis=1.0), B.estimate_mean(y, 0.25, axis=1), rtol=0)
    np.testing.assert_allclose(B.estimate_mean(y, 0.5, axis=-2), y.mean(axis=0), rtol=1e-15)
    for bad in (2, -3, 1.5):            # was numpy's AxisError / TypeError
        with pytest.raises(ValueError, match=r"^axis must be an integer in \[-2, 1\]"):
            B.estimate_mean(y, 0.25, axis=bad)
    with pytest.raises(TypeError, match=r"^axis must be an integer"):
        B.estimate_mean(y, 0.25, axis="a")
