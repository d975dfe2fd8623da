"""Property tests (hypothesis) over the public API of perfpriv.

For random *valid* inputs every output is finite (or the documented
infinite limit) and inside its mathematical range: probabilities in [0, 1],
β in [0, 1/2], growth factors in [1 − q, 1 + r], lower <= upper bounds, the
Rényi bound above the exact tail, leak probabilities monotone in τ, γ, s and
n where the theory says so. For random *invalid* inputs (NaN, ±inf, negative
sizes, probabilities outside [0, 1], wrong shapes, non-positive-definite Σ)
a ValueError/TypeError naming the parameter. Warnings are errors in this
suite, so no RuntimeWarning may escape either.

Every test fixes its example budget and derandomizes, so the suite is
deterministic and fast (a few seconds on two cores).
"""

import math
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st
from hypothesis.configuration import set_hypothesis_home_dir

# Hypothesis caches files under ./.hypothesis by default; with the repository's
# norecursedirs that directory makes the hypothesis plugin warn at collection
# (an error under filterwarnings = error). Keep its storage out of the checkout.
set_hypothesis_home_dir(Path(tempfile.gettempdir()) / "perfpriv-hypothesis")

from perfpriv import bernoulli, dynamics, engine, gaussian, keyed, leakage
from perfpriv.behaviour import Memoryless
from perfpriv.engine import Policy
from perfpriv.gaussian import GaussianMean

SETTINGS = dict(deadline=None, derandomize=True, database=None, suppress_health_check=[HealthCheck.too_slow])
FAST = settings(max_examples=100, **SETTINGS)
SLOW = settings(max_examples=30, **SETTINGS)


def log_uniform(lo, hi):
    """Positive floats spread over the decades [lo, hi] (hypothesis shrinks towards lo)."""
    return st.floats(math.log10(lo), math.log10(hi)).map(lambda e: 10.0**e)


probs = st.floats(0.0, 1.0)
gammas = log_uniform(1e-6, 1e6)
taus = log_uniform(1e-10, 1e3)
ns = st.one_of(st.integers(2, 10**9).map(float), log_uniform(2.0, 1e9))
ss = st.one_of(st.just(0.0), log_uniform(1e-6, 1e3))
epsilons = st.one_of(log_uniform(1e-8, 700.0), st.just(math.inf))
small_d = st.integers(1, 12)
statistics = st.sampled_from(["paper", "exact"])


def in_unit(x):
    x = np.asarray(x)
    return bool(np.all((x >= 0.0) & (x <= 1.0)))


# ----------------------------------------------------------- Bernoulli model


@FAST
@given(eps=epsilons)
def test_beta_is_in_zero_half_and_increasing(eps):
    beta = bernoulli.beta_from_epsilon(eps)
    assert 0.0 <= beta <= 0.5
    assert bernoulli.beta_from_epsilon(eps / 2) <= beta
    back = bernoulli.epsilon_from_beta(beta)
    assert back >= 0.0 and (back == math.inf or math.isfinite(back))


@FAST
@given(beta=st.floats(0.0, 0.5), q=probs, r=probs, rule=st.sampled_from(bernoulli.RULES))
def test_bernoulli_growth_factor_lies_in_one_minus_q_one_plus_r(beta, q, r, rule):
    C = bernoulli.growth_factor(beta, q=q, r=r, rule=rule)
    assert 1 - q - 1e-15 <= C <= 1 + r + 1e-15
    # C decreases in β (more leaks)
    assert bernoulli.growth_factor(beta / 2, q=q, r=r, rule=rule) >= C - 1e-15


@FAST
@given(q=probs, r=probs, rule=st.sampled_from(bernoulli.RULES))
def test_critical_beta_keeps_the_population_and_is_in_range(q, r, rule):
    beta_c = bernoulli.critical_beta(q=q, r=r, rule=rule)
    assert 0.0 <= beta_c <= 0.5
    eps_c = bernoulli.critical_epsilon(q=q, r=r, rule=rule)
    assert eps_c >= 0.0 and not math.isnan(eps_c)
    if bernoulli.growth_factor(0.0, q=q, r=r, rule=rule) >= 1:  # some β survives: β_c does
        assert bernoulli.growth_factor(beta_c, q=q, r=r, rule=rule) >= 1 - 1e-12


@FAST
@given(mu=probs, beta=st.floats(1e-6, 0.5), n=log_uniform(1.0, 1e9))
def test_estimator_variance_is_positive_and_at_most_one_over_sixteen_beta_squared_n(mu, beta, n):
    v = bernoulli.estimator_variance(mu, beta, n)
    assert 0.0 <= v <= 1.0 / (16 * beta**2 * n) * (1 + 1e-12)


@SLOW
@given(eps=st.lists(epsilons, min_size=1, max_size=3), q=probs, r=probs, n0=st.integers(1, 50),
       cap=st.integers(50, 200), seed=st.integers(0, 2**32))
def test_bernoulli_simulation_stays_between_floor_and_cap_with_finite_errors(eps, q, r, n0, cap, seed):
    run = engine.simulate(bernoulli.RandomizedResponse(eps), Memoryless(q=q, r=r), T=4, n0=n0, trials=2, policy=Policy(cap=cap), seed=seed)
    assert run.population.min() >= 1 and run.population.max() <= cap
    assert np.isfinite(run.sq_error).all() and in_unit(run.truth)


@FAST
@given(eps=epsilons, q=probs, r=probs, T=st.integers(1, 50), n0=st.integers(1, 1000))
def test_bernoulli_mean_field_stays_in_floor_cap_and_errors_are_finite(eps, q, r, T, n0):
    N = bernoulli.mean_field(eps, q=q, r=r, T=T, n0=n0, cap=20000).population
    assert np.all((N >= 1) & (N <= 20000))
    err = bernoulli.mean_field(eps, q=q, r=r, T=T, n0=n0).sq_error
    assert np.all(np.isfinite(err) & (err >= 0))


# ------------------------------------------------------------- leakage


@FAST
@given(s=ss, n=ns, gamma=gammas, tau=taus)
def test_paper_leak_probability_is_a_probability_monotone_in_every_argument(s, n, gamma, tau):
    p = leakage.leak_probability(s, n, gamma, tau=tau)
    assert in_unit(p)
    assert leakage.leak_probability(s, n, gamma, tau=2 * tau) <= p          # τ ↑ ⇒ fewer leaks
    assert leakage.leak_probability(s, n, 2 * gamma, tau=tau) <= p          # more noise ⇒ fewer
    assert leakage.leak_probability(2 * s, n, gamma, tau=tau) >= p          # farther record ⇒ more
    logp = leakage.log_leak_probability(s, n, gamma, tau=tau)
    assert logp <= 0.0 and not math.isnan(logp)
    if p > 1e-300:
        assert math.exp(logp) == pytest.approx(p, rel=1e-12)


@FAST
@given(s=ss, n=st.integers(2, 10**6).map(float), gamma=log_uniform(1e-3, 1e3), tau=taus, d=small_d)
def test_exact_leak_probability_is_a_probability_decreasing_in_tau(s, n, gamma, tau, d):
    p = leakage.leak_probability(s, n, gamma, tau=tau, statistic="exact", d=d)
    assert in_unit(p)
    # (the noncentral χ² cdf is accurate to ~1e-11 relative: monotonicity up to that)
    assert leakage.leak_probability(s, n, gamma, tau=2 * tau, statistic="exact", d=d) <= p * (1 + 1e-9) + 1e-300
    # Unlike the paper's statistic, the exact one is NOT monotone in s: when τ < c a
    # record at the mean leaks through the variance change alone, and moving it away
    # can lower that (n = 1944, γ = 1, τ = 1e-7, d = 1: 0.68266 at s = 0, 0.54501 at s = 0.1).


@FAST
@given(s=ss, n=ns, gamma=gammas, tau=taus, alpha=log_uniform(1.0 + 1e-9, 1e6))
def test_renyi_bound_is_a_probability_above_the_exact_tail(s, n, gamma, tau, alpha):
    exact = leakage.leak_probability(s, n, gamma, tau=tau)
    best = leakage.renyi_tail_bound(s, n, gamma, tau=tau)
    fixed = leakage.renyi_tail_bound(s, n, gamma, tau=tau, alpha=alpha)
    assert in_unit(best) and in_unit(fixed)
    assert best >= exact * (1 - 1e-9) - 1e-300
    assert fixed >= exact * (1 - 1e-9) - 1e-300
    order = leakage.optimal_renyi_order(s, n, gamma, tau=tau)
    assert order >= 0.5
    assert leakage.renyi_divergence(s, n, gamma, alpha) >= 0.0


@FAST
@given(s=ss, n=ns, gamma=gammas, d=small_d, statistic=statistics)
def test_llr_moments_are_finite_with_positive_variance(s, n, gamma, d, statistic):
    m = leakage.llr_moments(s, n, gamma, statistic=statistic, d=d)
    assert not math.isnan(m.mean) and m.var >= 0.0
    if statistic == "paper":
        assert m.var == pytest.approx(2 * m.mean, rel=1e-12) and m.mean >= 0.0


@FAST
@given(mu=st.floats(0.0, 50.0), fpr=st.floats(1e-12, 1 - 1e-12))
def test_gdp_threshold_and_roc_curve_are_consistent(mu, fpr):
    tpr = leakage.roc_curve(mu, fpr)
    assert in_unit(tpr) and tpr >= fpr * (1 - 1e-9)  # the optimal test beats guessing
    tau = leakage.threshold_for_fpr(mu, fpr)
    assert not math.isnan(tau)


@FAST
@given(n=ns, gamma=gammas, R=log_uniform(1e-3, 1e3), s=ss)
def test_worst_case_gdp_mu_bounds_every_record_inside_the_ball(n, gamma, R, s):
    assume(s <= 2 * R * (n - 1) / n)
    assert leakage.gdp_mu(s, n, gamma) <= leakage.worst_case_gdp_mu(n, gamma, R) * (1 + 1e-12)


@SLOW
@given(n=log_uniform(2.0, 1e9), gamma=gammas, tau=taus, d=small_d, statistic=statistics)
def test_marginal_leak_probability_is_a_probability_decreasing_in_gamma(n, gamma, tau, d, statistic):
    kw = dict(d=d, R=1e3, statistic=statistic, method="quadrature")
    p = leakage.marginal_leak_probability(n, [gamma, 2 * gamma], tau=tau, **kw).p
    assert in_unit(p)
    if statistic == "paper":
        assert p[1] <= p[0] + 1e-12
    assert leakage.marginal_leak_probability(n, gamma, tau=2 * tau, **kw).p <= p[0] + 1e-12


@SLOW
@given(seed=st.integers(0, 2**32), n=st.integers(2, 30), d=st.integers(1, 4), gamma=log_uniform(1e-2, 1e2),
       statistic=statistics)
def test_log_likelihood_ratio_is_finite_for_released_noise(seed, n, d, gamma, statistic):
    Z = gaussian.sample_records(n, d=d, seed=seed)
    o, eta = gaussian.release(Z, gamma, 3.0, rng=seed)
    lam = leakage.log_likelihood_ratio(Z, eta, gamma, 3.0, statistic=statistic)
    assert lam.shape == (n,) and np.isfinite(lam).all()
    assert np.all(leakage.record_deviations(Z, 3.0) <= 2 * 3.0 + 1e-12)


# ---------------------------------------------------------------- dynamics

QUAD = dict(d=6, R=1e3, leak_method="quadrature")


def mech(tau, **model):
    """The Gaussian mechanism at threshold ``tau`` (its level is not used: the calls give gamma)."""
    return GaussianMean(1.0, tau=tau, **model)


@SLOW
@given(gamma=gammas, tau=log_uniform(1e-3, 10.0), q=probs, r=probs, n=log_uniform(1.0, 1e9))
def test_gaussian_growth_factor_lies_in_one_minus_q_one_plus_r(gamma, tau, q, r, n):
    C = dynamics.growth_factor(mech(tau, **QUAD), Memoryless(q=q, r=r), n=n, gamma=gamma)
    assert 1 - q - 1e-12 <= C <= 1 + r + 1e-12


@FAST
@given(q=probs, r=probs, tau=taus, n=log_uniform(1.0 + 1e-6, 1e9), R=log_uniform(1e-3, 1e3))
def test_critical_gamma_is_nonnegative_and_decreasing_in_q_over_r(q, r, tau, n, R):
    g = dynamics.critical_gamma(mech(tau, d=3, R=R), Memoryless(q=q, r=r), n=n)
    assert g >= 0.0 and not math.isnan(g)
    assert dynamics.critical_gamma(mech(tau, d=3, R=R), Memoryless(q=q / 2, r=r), n=n) <= g * (1 + 1e-12)


@FAST
@given(q=probs, r=probs)
@example(q=0.0, r=2.220446049250313e-16)  # once rounded to 0.9999999999999998 < 1
def test_kappa_is_at_least_one(q, r):
    k = dynamics.kappa(Memoryless(q=q, r=r))
    assert k >= 1.0 - 1e-15 and not math.isnan(k)


@SLOW
@given(gamma=gammas, tau=log_uniform(1e-3, 10.0), q=probs, r=probs, n=log_uniform(1.0, 1e6))
@example(gamma=1.0, tau=1.0, q=0.0, r=2.220446049250313e-16, n=1.0)
def test_error_bounds_are_ordered(gamma, tau, q, r, n):
    b = dynamics.error_bounds(mech(tau, **QUAD), Memoryless(q=q, r=r), n_prev=n, gamma=gamma)
    assert 0.0 < b.lower <= b.upper
    assert b.kappa >= 1.0


@SLOW
@given(gamma=log_uniform(1e-2, 1e2), tau=log_uniform(1e-3, 1.0), q=probs, r=probs, T=st.integers(1, 30),
       n0=st.integers(2, 5000), cap=st.one_of(st.none(), st.just(20000.0)))
def test_mean_field_population_and_cumulative_bound_are_in_range(gamma, tau, q, r, T, n0, cap):
    users = Memoryless(q=q, r=r)
    N = engine.mean_field(GaussianMean(gamma, tau=tau, **QUAD), users, T=T, n0=n0, cap=cap).population
    assert N[0] == n0 and np.all(N >= 1) and not np.isnan(N).any()
    if cap is not None:
        assert np.all(N <= cap)
    bound = dynamics.cumulative_error_bound(mech(tau, **QUAD), users, T=T, n0=n0, gamma=gamma)
    assert bound > 0.0 and not math.isnan(bound)
    # with C_1 fixed the bound is the sum over T rounds: between T e/N0 max(C,1)^-T and T e/N0 min(C,1)^-T
    C = dynamics.growth_factor(mech(tau, **QUAD), users, n=n0, gamma=gamma)
    per_round = gaussian.mahalanobis_error(gamma, n0, d=QUAD["d"])
    if C > 0:
        with np.errstate(over="ignore"):
            assert bound >= T * per_round * min(1.0, C ** (-T)) * (1 - 1e-9)
            assert bound <= T * per_round * max(1.0, C ** (-T)) * (1 + 1e-9)


@FAST
@given(gamma=gammas, n=log_uniform(1.0, 1e12), R=log_uniform(1e-2, 1e3), delta=st.floats(1e-12, 0.999))
def test_pac_radius_is_positive_decreasing_in_n_and_increasing_in_gamma(gamma, n, R, delta):
    m = mech(0.02, d=3, R=R)
    rad = dynamics.pac_radius(m, n, gamma=gamma, delta=delta)
    assert rad > 0.0 and math.isfinite(rad)
    assert dynamics.pac_radius(m, 2 * n, gamma=gamma, delta=delta) <= rad
    assert dynamics.pac_radius(m, n, gamma=2 * gamma, delta=delta) >= rad


@FAST
@given(x=st.floats(allow_nan=False), y=st.floats(allow_nan=False))
def test_coordinate_keys_identify_values_at_the_grid_resolution(x, y):
    kx, ky = keyed.coordinate_key(x), keyed.coordinate_key(y)
    assert isinstance(kx, int) and kx >= 0
    if abs(x - y) > 1e-8 * max(1.0, abs(x)) and max(abs(x), abs(y)) < 1e6:
        assert kx != ky
    if x == y:
        assert kx == ky


# ----------------------------------------------------------- Gaussian model


@FAST
@given(z=st.lists(st.floats(-1e6, 1e6), min_size=1, max_size=5), R=log_uniform(1e-3, 1e3))
def test_clip_never_exceeds_the_radius(z, R):
    out = gaussian.clip(z, R)
    assert np.linalg.norm(out) <= R * (1 + 1e-12) or np.allclose(out, z)


@FAST
@given(gamma=log_uniform(1e-100, 1e100), R=log_uniform(1e-3, 1e3))
def test_zcdp_conversion_round_trips(gamma, R):
    rho = gaussian.rho_from_gamma(gamma, R)
    assert rho >= 0.0
    if 0.0 < rho < math.inf:
        assert gaussian.gamma_from_rho(rho, R) == pytest.approx(gamma, rel=1e-12)


@FAST
@given(d=small_d, R=log_uniform(1e-2, 1e2), shift=st.floats(0.0, 5.0))
def test_clip_probability_is_a_probability(d, R, shift):
    mu = np.full(d, shift / math.sqrt(d))
    assert in_unit(gaussian.clip_probability(d, R, mu=mu))


# --------------------------------------------------------- invalid inputs

not_finite = st.sampled_from([math.nan, math.inf, -math.inf])
negative = st.floats(max_value=-1e-300, allow_infinity=True, allow_nan=False)
outside_unit = st.one_of(st.floats(min_value=1.0 + 1e-12, allow_nan=False), negative, st.just(math.nan))


@FAST
@given(bad=st.one_of(not_finite, negative, st.just(0.0)), which=st.sampled_from(["gamma", "tau"]))
def test_nonpositive_or_nonfinite_gamma_and_tau_are_rejected(bad, which):
    kwargs = dict(s=1.0, n=10, gamma=1.0, tau=0.5)
    kwargs[which] = bad
    with pytest.raises(ValueError, match=which):
        leakage.leak_probability(**kwargs)
    with pytest.raises(ValueError, match=which):     # an explicit gamma; tau: the mechanism's constructor
        dynamics.growth_factor(mech(kwargs["tau"], **QUAD), Memoryless(q=0.3, r=0.6), n=100, gamma=kwargs["gamma"])
    with pytest.raises(ValueError, match=which):     # the mechanism's level (the functions' default gamma)
        GaussianMean(kwargs["gamma"], tau=kwargs["tau"], **QUAD)


@FAST
@given(bad=outside_unit, which=st.sampled_from(["q", "r"]))
def test_probabilities_outside_the_unit_interval_are_rejected_everywhere(bad, which):
    qr = {"q": 0.3, "r": 0.6, which: bad}
    for call in (lambda: bernoulli.growth_factor(0.1, q=qr["q"], r=qr["r"]),
                 lambda: bernoulli.critical_beta(q=qr["q"], r=qr["r"]),
                 # dynamics' users: the behaviour's constructor refuses them
                 lambda: dynamics.kappa(Memoryless(q=qr["q"], r=qr["r"])),
                 lambda: dynamics.critical_gamma(mech(0.02, d=3, R=10.0), Memoryless(q=qr["q"], r=qr["r"]), n=100),
                 lambda: dynamics.cumulative_error_bound(mech(0.02, **QUAD), Memoryless(q=qr["q"], r=qr["r"]), T=2,
                                                         n0=10)):
        with pytest.raises(ValueError, match=rf"{which} must be .*\[0, 1\]"):
            call()


@FAST
@given(n=st.one_of(st.integers(-10**6, 1), st.floats(-1e6, 1.999)), )
def test_population_sizes_below_two_are_rejected_by_lemma_7(n):
    with pytest.raises((ValueError, TypeError), match="n must"):
        leakage.leak_probability(1.0, n, 1.0, tau=0.5)


@FAST
@given(T=st.one_of(st.integers(-10**6, 0), st.floats(0.5, 100.0).filter(lambda x: x != int(x))),
       which=st.sampled_from(["T", "n0", "trials"]))
def test_nonpositive_or_fractional_sizes_are_rejected(T, which):
    kw = dict(T=3, n0=10, trials=2)
    kw[which] = T
    with pytest.raises(ValueError, match=f"{which} must be an integer"):
        engine.simulate(bernoulli.RandomizedResponse(1.0), Memoryless(q=0.3, r=0.6), policy=Policy(cap=100), seed=0, **kw)


@FAST
@given(eig=st.lists(st.floats(-5.0, 5.0), min_size=2, max_size=4), seed=st.integers(0, 1000))
def test_covariances_that_are_not_positive_definite_are_rejected(eig, seed):
    assume(min(eig) <= 0.0)
    d = len(eig)
    Q, _ = np.linalg.qr(np.random.default_rng(seed).standard_normal((d, d)))
    Sigma = Q @ np.diag(eig) @ Q.T
    Sigma = (Sigma + Sigma.T) / 2
    with pytest.raises(ValueError, match="Sigma must be symmetric positive definite"):
        leakage.marginal_leak_probability(100, 1.0, tau=0.02, d=d, R=10.0, Sigma=Sigma, method=leakage.Integration(seed=0))
    with pytest.raises(ValueError, match="Sigma must be symmetric positive definite"):
        GaussianMean(1.0, tau=0.02, d=d, R=10.0, Sigma=Sigma)


@FAST
@given(shape=st.sampled_from([(2,), (3, 2), (2, 2, 2)]))
def test_wrong_shapes_of_mu_and_sigma_are_rejected(shape):
    with pytest.raises(ValueError, match="mu must be a vector of length d=3"):
        leakage.marginal_leak_probability(100, 1.0, tau=0.02, d=3, R=10.0, mu=np.zeros(shape), method=leakage.Integration(seed=0))
    with pytest.raises(ValueError, match="Sigma must be a 3x3 matrix"):
        dynamics.growth_factor(mech(0.02, d=3, R=10.0, Sigma=np.ones(shape)), Memoryless(q=0.3, r=0.6), n=100)


@FAST
@given(bad=st.one_of(not_finite, st.floats(max_value=-1e-300, allow_nan=False, allow_infinity=False)))
def test_invalid_epsilon_is_rejected_but_infinity_is_the_non_private_baseline(bad):
    if bad == math.inf:
        assert bernoulli.beta_from_epsilon(bad) == 0.5
        return
    with pytest.raises(ValueError, match="epsilon"):
        bernoulli.beta_from_epsilon(bad)
