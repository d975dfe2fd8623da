"""perfpriv.gaussian: clipping, the Gaussian mechanism (eq. 6), Lemma 3, and
Algorithm 1 (fast simulator against the one-user-at-a-time reference, Lemma 8)."""

import math

import mpmath
import numpy as np
import pytest
from scipy import stats

from perfpriv import dynamics, engine
from perfpriv import gaussian as G
from perfpriv import leakage as L
from perfpriv.behaviour import Memoryless
from perfpriv.engine import Policy

Z_TOL = 4.5  # tolerance in Monte Carlo standard errors
SIGMA3 = np.array([[2.0, 0.6, 0.0], [0.6, 1.0, -0.3], [0.0, -0.3, 0.5]])


# ------------------------------------------------------------- mechanism


def test_clip_projects_long_rows_onto_the_sphere_and_keeps_short_rows():
    z = np.array([[3.0, 4.0], [0.3, 0.4], [0.0, 0.0], [-6.0, 8.0]])
    out = G.clip(z, 2.0)
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), [2.0, 0.5, 0.0, 2.0])
    np.testing.assert_allclose(out[0], [1.2, 1.6])
    np.testing.assert_array_equal(out[1:3], z[1:3])
    np.testing.assert_array_equal(z[0], [3.0, 4.0])  # input untouched


def test_clip_handles_batches_of_datasets():
    z = np.random.default_rng(0).standard_normal((4, 5, 3)) * 3
    out = G.clip(z, 1.0)
    assert out.shape == z.shape and np.all(np.linalg.norm(out, axis=-1) <= 1.0 + 1e-12)


def test_zcdp_calibration_and_its_inverse():
    assert G.gamma_from_rho(0.5, 3.0) == pytest.approx(np.sqrt(2 * 9 / 0.5))
    rho = np.array([0.01, 0.5, 4.0])
    np.testing.assert_allclose(G.rho_from_gamma(G.gamma_from_rho(rho, 2.0), 2.0), rho)
    # ρ-zCDP of the Gaussian mechanism with sensitivity Δ = 2R and noise γ: ρ = Δ²/(2γ²)
    assert G.rho_from_gamma(4.0, 3.0) == pytest.approx((2 * 3.0) ** 2 / (2 * 4.0**2))


def test_sample_records_has_the_requested_mean_and_covariance_and_is_seeded():
    mu = np.array([1.0, -2.0, 0.5])
    Z = G.sample_records(40_000, d=3, mu=mu, Sigma=SIGMA3, seed=1)
    assert Z.shape == (40_000, 3)
    se_mean = np.sqrt(np.diag(SIGMA3) / len(Z))
    assert np.all(np.abs(Z.mean(axis=0) - mu) < Z_TOL * se_mean)
    # entrywise covariance: se of a sample covariance ≈ sqrt((Σ_ii Σ_jj + Σ_ij²)/n)
    se_cov = np.sqrt((np.outer(np.diag(SIGMA3), np.diag(SIGMA3)) + SIGMA3**2) / len(Z))
    assert np.all(np.abs(np.cov(Z.T) - SIGMA3) < Z_TOL * se_cov)
    np.testing.assert_array_equal(G.sample_records(5, d=3, seed=7), G.sample_records(5, d=3, seed=7))


def test_release_is_the_clipped_mean_plus_noise_of_variance_gamma2_over_n():
    Z = G.sample_records(25, d=4, seed=2) * 3
    R, gamma = 2.0, 1.5
    rng = np.random.default_rng(3)
    etas = []
    for _ in range(1500):
        o, eta = G.release(Z, gamma, R, rng)
        etas.append(eta)
    np.testing.assert_allclose(o - eta, G.clip(Z, R).mean(axis=0), atol=1e-12)
    etas = np.array(etas).ravel()
    var = gamma**2 / 25
    assert abs(etas.var() - var) < Z_TOL * var * np.sqrt(2 / etas.size)
    assert stats.kstest(etas, "norm", args=(0, np.sqrt(var))).pvalue > 1e-3


def test_lemma3_expected_mahalanobis_error_by_simulation():
    n, gamma, mu = 40, 2.0, np.array([0.5, 0.0, -1.0])
    # q = r = 0 keeps N = n: every round is an independent release of a fresh dataset
    run = engine.simulate(G.GaussianMean(gamma, tau=0.1, d=3, R=1e6, mu=mu, Sigma=SIGMA3), Memoryless(q=0.0, r=0.0),
                          T=4, n0=n, trials=800, seed=4)
    errs = run.sq_error.ravel()
    truth = G.mahalanobis_error(gamma, n, SIGMA3)
    assert truth == pytest.approx((gamma**2 * np.trace(np.linalg.inv(SIGMA3)) + 3) / n)
    assert abs(errs.mean() - truth) < Z_TOL * errs.std() / np.sqrt(errs.size)


def test_release_error_is_the_squared_mahalanobis_of_a_direct_computation():
    mu = np.array([0.5, 0.0, -1.0])
    rng = np.random.default_rng(40)
    Z = G.sample_records(40, d=3, mu=mu, Sigma=SIGMA3, seed=41)
    o, eta = G.release(Z, 2.0, 1e6, rng)
    diff = Z.mean(axis=0) + eta - mu
    assert G.squared_mahalanobis(o, mu, SIGMA3) == pytest.approx(diff @ np.linalg.solve(SIGMA3, diff))


def test_mahalanobis_error_broadcasts_and_identity_needs_d():
    out = G.mahalanobis_error(np.array([1.0, 2.0]), np.array([[10], [100]]), d=3)
    np.testing.assert_allclose(out, [[0.6, 1.5], [0.06, 0.15]])
    with pytest.raises(ValueError, match="^d"):
        G.mahalanobis_error(1.0, 10)


def test_squared_mahalanobis_matches_the_explicit_inverse():
    o = np.random.default_rng(5).standard_normal((6, 3))
    mu = np.array([0.1, 0.2, 0.3])
    expect = np.einsum("ij,jk,ik->i", o - mu, np.linalg.inv(SIGMA3), o - mu)
    np.testing.assert_allclose(G.squared_mahalanobis(o, mu, SIGMA3), expect)


def test_clip_probability_is_exact_when_isotropic_and_an_upper_bound_otherwise():
    rng = np.random.default_rng(6)
    g = rng.standard_normal((200_000, 3))
    mu = np.array([0.5, 0.0, 0.0])
    emp = np.mean(np.linalg.norm(mu + 1.3 * g, axis=1) > 3.0)
    p = G.clip_probability(3, 3.0, mu, 1.69 * np.eye(3))
    assert abs(emp - p) < Z_TOL * np.sqrt(p * (1 - p) / g.shape[0])
    emp_aniso = np.mean(np.linalg.norm(g @ np.linalg.cholesky(SIGMA3).T, axis=1) > 2.5)
    assert G.clip_probability(3, 2.5, None, SIGMA3) >= emp_aniso


# ------------------------------------------------------------- Algorithm 1


@pytest.mark.parametrize("statistic", ["paper", "exact"])
def test_lemma8_expected_next_population(statistic):
    n0, gamma, tau, q, r = 60, 0.8, 0.05, 0.4, 0.3
    run = engine.simulate(G.GaussianMean(gamma, tau=tau, d=3, R=50.0, statistic=statistic), Memoryless(q=q, r=r), T=1,
                          n0=n0, trials=4000, seed=7)
    p = L.marginal_leak_probability(n0, gamma, tau=tau, d=3, R=50.0, statistic=statistic)
    assert p.method == "quadrature"
    n1 = run.population[:, 1]
    assert abs(n1.mean() - n0 * (1 + r - (q + r) * p.p)) < Z_TOL * n1.std() / np.sqrt(n1.size)
    lf = run.leak_fraction[:, 0]
    assert abs(lf.mean() - p.p) < Z_TOL * lf.std() / np.sqrt(lf.size)


def test_lemma8_with_clipping_against_monte_carlo_leak_probability():
    n0, gamma, tau, q, r, R = 40, 0.5, 0.05, 0.5, 0.2, 1.0
    run = engine.simulate(G.GaussianMean(gamma, tau=tau, d=3, R=R, mu=[0.5, 0, 0]), Memoryless(q=q, r=r), T=1, n0=n0,
                          trials=4000, seed=8)
    p = L.marginal_leak_probability(n0, gamma, tau=tau, d=3, R=R, mu=[0.5, 0, 0], method=L.Integration(samples=40_000, seed=9))
    assert p.method == "montecarlo"
    n1 = run.population[:, 1]
    se = np.hypot(n1.std() / np.sqrt(n1.size), n0 * (q + r) * p.se)
    assert abs(n1.mean() - n0 * (1 + r - (q + r) * p.p)) < Z_TOL * se


@pytest.mark.parametrize("statistic, gamma, tau, Sigma", [
    ("paper", 2.0, 0.02, None),
    ("exact", 2.0, 0.02, SIGMA3),  # here τ < (d/2)log(n/(n−1)): the two statistics differ a lot
    ("paper", 0.3, 0.1, SIGMA3),
])
def test_fast_simulator_and_agent_reference_agree_in_distribution(statistic, gamma, tau, Sigma):
    mech = G.GaussianMean(gamma, tau=tau, d=3, R=3.0, mu=[0.2, 0.0, 0.0], Sigma=Sigma, statistic=statistic)
    users, kw = Memoryless(q=0.4, r=0.3), dict(T=5, n0=30, trials=400)
    fast = engine.simulate(mech, users, seed=10, **kw)
    slow = engine.simulate_agents(mech, users, seed=11, **kw)
    for a, b in [(fast.population[:, -1], slow.population[:, -1]), (fast.sq_error[:, -1], slow.sq_error[:, -1]),
                 (fast.sq_error[:, 0], slow.sq_error[:, 0]), (fast.leak_fraction[:, 0], slow.leak_fraction[:, 0])]:
        assert stats.ks_2samp(a, b).pvalue > 1e-3
        se = np.hypot(a.std(), b.std()) / np.sqrt(a.size)
        assert abs(a.mean() - b.mean()) < Z_TOL * se


def test_default_floor_keeps_one_user_so_every_round_has_a_release():
    # conventions="paper": the population is floored at 1 (Theorem 3), nothing collapses
    run = G.simulate(0.05, tau=0.01, q=1.0, r=0.0, T=6, n0=5, d=2, R=5.0, trials=50, seed=12)
    assert run.floor == 1 and run.population.min() == 1 and np.all(run.alive)
    assert np.all(run.population[:, 1:] == 1)  # everyone leaks at tiny noise and leaves for sure


@pytest.mark.parametrize("collapse", ["repeat", "floor"])
def test_floor_zero_collapse_is_recorded_with_alive_mask_and_scored_by_the_rule(collapse):
    run = engine.simulate(G.GaussianMean(0.05, tau=0.01, d=2, R=5.0), Memoryless(q=1.0, r=0.0), T=6, n0=5, trials=50, seed=12, policy=Policy(floor=0, collapse=collapse))
    assert np.all(run.collapsed)  # everyone leaks at tiny noise and leaves for sure
    assert not np.isnan(run.sq_error).any()
    np.testing.assert_array_equal(run.alive, run.population[:, :-1] > 0)
    one_user = G.mahalanobis_error(0.05, 1, d=2)
    for i in range(run.population.shape[0]):
        dead = np.flatnonzero(~run.alive[i])
        assert dead.size and dead[0] >= 1
        first = dead[0]
        expect = run.sq_error[i, first - 1] if collapse == "repeat" else one_user
        np.testing.assert_allclose(run.sq_error[i, first:], expect, rtol=1e-15)
        assert np.all(run.leak_fraction[i, first:] == 0) and np.all(run.leaked[i, first:] == 0)
        assert np.all(run.population[i, first:] == 0)


@pytest.mark.parametrize("sim", [engine.simulate, engine.simulate_agents])
def test_a_lone_user_counts_as_leaked(sim):
    q = 0.3
    mech, users = G.GaussianMean(1.0, tau=0.1, d=2, R=5.0), Memoryless(q=q, r=0.9)
    # floor=0 so that a departure is visible (the default floor of 1 would refill it)
    run = sim(mech, users, T=1, n0=1, trials=1500, seed=13, policy=Policy(floor=0))
    assert np.all(run.leak_fraction[:, 0] == 1.0)
    n1 = run.population[:, 1]
    assert set(np.unique(n1)) <= {0, 1}  # a leaked user never recruits
    assert abs(np.mean(n1 == 0) - q) < Z_TOL * np.sqrt(q * (1 - q) / n1.size)
    floored = sim(mech, users, T=1, n0=1, trials=50, seed=13)
    assert np.all(floored.population == 1) and np.all(floored.leaked == 1)


def test_population_respects_the_cap():
    run = engine.simulate(G.GaussianMean(50.0, tau=1.0, d=2, R=5.0), Memoryless(q=0.1, r=1.0), T=4, n0=80, trials=3, policy=Policy(cap=100), seed=14)
    assert run.population.max() == 100
    assert np.all(run.population[:, 1:] <= 100)


def test_same_seed_same_run_and_different_seed_different_run():
    kw = dict(T=3, n0=50, d=3, R=4.0, trials=4)
    a = G.simulate(1.0, tau=0.05, q=0.3, r=0.6, seed=15, **kw)
    b = G.simulate(1.0, tau=0.05, q=0.3, r=0.6, seed=15, **kw)
    c = G.simulate(1.0, tau=0.05, q=0.3, r=0.6, seed=16, **kw)
    np.testing.assert_array_equal(a.population, b.population)
    np.testing.assert_array_equal(a.sq_error, b.sq_error)
    assert not np.array_equal(a.sq_error, c.sq_error)
    model = (G.GaussianMean(1.0, tau=0.05, d=3, R=4.0), Memoryless(q=0.3, r=0.6))
    ag = engine.simulate_agents(*model, T=3, n0=50, trials=4, seed=15)
    again = engine.simulate_agents(*model, T=3, n0=50, trials=4, seed=15)
    np.testing.assert_array_equal(ag.population, again.population)


def test_simulate_error_matches_lemma3_when_nothing_is_clipped():
    run = G.simulate(3.0, tau=0.05, q=0.0, r=0.0, T=2, n0=200, d=4, R=100.0, trials=1500, seed=17)
    err = run.sq_error[:, 0]
    truth = G.mahalanobis_error(3.0, 200, d=4)
    assert abs(err.mean() - truth) < Z_TOL * err.std() / np.sqrt(err.size)


# ------------------------------------------------------------------ inputs


@pytest.mark.parametrize("call, name", [
    (lambda: G.clip([[1.0, 2.0]], 0.0), "R"),
    (lambda: G.clip([[1.0, np.nan]], 1.0), "z"),
    (lambda: G.gamma_from_rho(0.0, 1.0), "rho"),
    (lambda: G.rho_from_gamma(-1.0, 1.0), "gamma"),
    (lambda: G.sample_records(5, d=0), "d"),
    (lambda: G.sample_records(5, d=2, Sigma=[[1.0, 0.0], [0.0, -1.0]]), "Sigma"),
    (lambda: G.sample_records(5, d=2, Sigma=[[1.0, 0.5], [0.0, 1.0]]), "Sigma"),
    (lambda: G.sample_records(5, d=2, mu=[np.nan, 0.0]), "mu"),
    (lambda: G.release([[1.0, 2.0]], 0.0, 1.0), "gamma"),
    (lambda: G.release([[1.0, 2.0]], 1.0, np.nan), "R"),
    (lambda: G.mahalanobis_error(1.0, 0.5, d=2), "n"),
    (lambda: G.simulate(0.0, tau=0.1, q=0.3, r=0.6, T=2, n0=10, d=2, R=1.0), "gamma"),
    (lambda: G.simulate(1.0, tau=0.0, q=0.3, r=0.6, T=2, n0=10, d=2, R=1.0), "tau"),
    (lambda: G.simulate(1.0, tau=0.1, q=1.3, r=0.6, T=2, n0=10, d=2, R=1.0), "q"),
    (lambda: G.simulate(1.0, tau=0.1, q=0.3, r=np.nan, T=2, n0=10, d=2, R=1.0), "r"),
    (lambda: G.simulate(1.0, tau=0.1, q=0.3, r=0.6, T=0, n0=10, d=2, R=1.0), "T"),
    (lambda: G.simulate(1.0, tau=0.1, q=0.3, r=0.6, T=2, n0=0, d=2, R=1.0), "n0"),
    (lambda: engine.simulate(G.GaussianMean(1.0, tau=0.1, d=2, R=1.0), Memoryless(q=0.3, r=0.6), T=2, n0=10, policy=Policy(cap=5)), "cap"),
    (lambda: G.simulate(1.0, tau=0.1, q=0.3, r=0.6, T=2, n0=10, d=0, R=1.0), "d"),
    (lambda: G.simulate(1.0, tau=0.1, q=0.3, r=0.6, T=2, n0=10, d=2, R=-1.0), "R"),
    (lambda: G.GaussianMean(1.0, tau=0.1, d=2, R=1.0, statistic="x"), "statistic"),
    (lambda: G.GaussianMean(1.0, tau=0.1, d=2, R=1.0, Sigma=np.eye(3)), "Sigma"),
])
def test_bad_input_raises_value_error_naming_the_parameter(call, name):
    with pytest.raises(ValueError, match=rf"^{name}\b"):
        call()


def test_the_agent_reference_takes_integral_d_a_generator_seed_and_refuses_oversized_runs():
    users, kw = Memoryless(q=0.3, r=0.6), dict(T=2, n0=10, trials=2)
    run = engine.simulate_agents(G.GaussianMean(1.0, tau=0.02, d=3.0, R=10.0), users, seed=np.random.default_rng(0),
                                 **kw)
    assert run.population.shape == (2, 3)
    with pytest.raises(ValueError, match="T=2, trials=1000000000000"):
        engine.simulate_agents(G.GaussianMean(1.0, tau=0.02, d=3, R=10.0), users, seed=0, **dict(kw, trials=10**12))


def test_draw_rounds_refuses_a_live_mask_that_is_not_boolean():
    from perfpriv import keyed, projected
    keys = keyed.root_key(0).child(np.arange(2))
    with pytest.raises(TypeError, match="live"):
        projected.draw_rounds([100, 100], 2.0, keys, tau=0.02, d=12, live="x")


# -------------------------- clipping at extreme means; isotropic data never builds a d x d identity


def _ref_clip_d3(m, rho):
    """P(‖m e₁ + g‖ > ρ), g ~ N(0, I₃), in closed form at 60 digits.

    The radial density of a noncentral χ₃ is (r/m)(φ(r − m) − φ(r + m)), whose
    integral gives Φ̄(ρ − m) + Φ̄(ρ + m) + (φ(ρ − m) − φ(ρ + m))/m.
    """
    m, rho = mpmath.mpf(m), mpmath.mpf(rho)
    phi = lambda x: mpmath.npdf(x)
    return (1 - mpmath.ncdf(rho - m)) + (1 - mpmath.ncdf(rho + m)) + (phi(rho - m) - phi(rho + m)) / m


def _ref_clip_d1(m, rho):
    m, rho = mpmath.mpf(m), mpmath.mpf(rho)
    return (1 - mpmath.ncdf(rho - m)) + (1 - mpmath.ncdf(rho + m))


@pytest.mark.usefixtures("mp60")
@pytest.mark.parametrize("m", [0.5, 10.0, 999.0, 1001.0, 1e5, 1e10, 1e12, 1e16, 1e100])
@pytest.mark.parametrize("offset", [-3.0, -1.0, 0.0, 1.0, 3.0])
def test_clip_probability_matches_the_closed_form_of_the_noncentral_chi_tail(m, offset):
    rho = m + offset
    if rho <= 0 or rho - m != offset:  # not representable at this magnitude
        pytest.skip("offset below the spacing of doubles at this m")
    for d, ref in ((3, _ref_clip_d3), (1, _ref_clip_d1)):
        got = G.clip_probability(d, rho, mu=[m] + [0.0] * (d - 1))
        want = float(ref(m, rho))
        assert math.isfinite(got) and 0.0 <= got <= 1.0
        assert got == pytest.approx(want, rel=1e-9, abs=1e-15), (d, m, rho)


@pytest.mark.parametrize("m", [1e10, 1e200])
def test_clip_probability_far_from_the_ball_is_one_not_nan(m):
    # issue 16: scipy's noncentral χ² tail returns NaN here, which made method="auto" neglect clipping
    assert G.clip_probability(3, 10.0, mu=[m, 0, 0]) == 1.0
    assert G.clip_probability(3, 10.0, mu=[m, 0, 0], Sigma=4.0 * np.eye(3)) == 1.0


@pytest.mark.usefixtures("mp60")
def test_clip_probability_isotropic_scale_and_high_dimension():
    # σ² I with σ = 2: the same as the standard case at R/σ and ‖μ‖/σ
    got = G.clip_probability(3, 2.0 * 1e6, mu=[2.0 * (1e6 - 1), 0, 0], Sigma=4.0 * np.eye(3))
    assert got == pytest.approx(float(_ref_clip_d3(1e6 - 1, 1e6)), rel=1e-9)
    # d = 50 at a large mean: ‖z‖² = (m + g₁)² + χ²₄₉, the reference by mpmath quadrature
    m, rho, d = 1e4, 1e4 + 0.5, 50
    got = G.clip_probability(d, rho, mu=[m] + [0.0] * (d - 1))

    def cond(w):
        root = mpmath.sqrt(rho**2 - w)
        return (1 - mpmath.ncdf(root - m)) + mpmath.ncdf(-root - m)

    k = mpmath.mpf(d - 1) / 2
    dens = lambda w: w ** (k - 1) * mpmath.exp(-w / 2) / (2**k * mpmath.gamma(k))
    want = mpmath.quad(lambda w: cond(w) * dens(w), [0, 20, 49, 80, 200])
    assert got == pytest.approx(float(want), rel=1e-8)


def test_a_clip_probability_far_from_the_ball_selects_no_shortcut():
    # all records clip to (nearly) one point R e₁: the clipped mean is that point, no record leaks
    mu = [1e10, 0.0, 0.0]
    res = L.marginal_leak_probability(100, 1.0, tau=0.02, d=3, R=10.0, mu=mu, method=L.Integration(samples=2000, seed=0))
    assert res.method == "montecarlo" and res.p == 0.0
    # then C = (1 - p q)(1 + r (1 - p)) = 1 + r exactly
    mech = G.GaussianMean(1.0, tau=0.02, d=3, R=10.0, mu=mu, leak_method=L.Integration(samples=2000, seed=0))
    g = dynamics.growth_factor(mech, Memoryless(q=0.3, r=0.6), n=100)
    assert g == pytest.approx(1.6, abs=1e-12)
    assert G.GaussianMean(1.0, tau=0.02, d=3, R=10.0, mu=mu).draw_method == "records"


def test_isotropic_records_never_build_a_d_by_d_identity():
    import tracemalloc
    d = 100_000  # an identity would take 80 GB
    tracemalloc.start()
    try:
        Z = G.sample_records(5, d=d, seed=0)
        p = G.clip_probability(10_000, 10.0)
        mech = G.GaussianMean(1.0, tau=0.02, d=d, R=1e3)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert Z.shape == (5, d) and p == 1.0 and mech._sigma2 == 1.0
    assert peak < 50e6, peak
    # the same records as with the identity given explicitly (small d)
    np.testing.assert_array_equal(G.sample_records(4, d=3, seed=1),
                                  G.sample_records(4, d=3, Sigma=np.eye(3), seed=1))
    assert G.GaussianMean(1.0, tau=0.02, d=3, R=5.0).Sigma.tolist() == np.eye(3).tolist()


def test_records_too_large_for_memory_are_refused_up_front():
    with pytest.raises(ValueError, match="n is too large"):
        G.sample_records(10**6, d=10**5)


def test_the_agent_reference_never_builds_sigma_for_isotropic_data():
    # the agent reference at d = 100000 built np.linalg.cholesky(np.eye(d)), a 75 GiB identity
    import tracemalloc

    tracemalloc.start()
    try:
        run = engine.simulate_agents(G.GaussianMean(1.0, tau=0.02, d=100_000, R=10.0, draw="records"),
                                     Memoryless(q=0.3, r=0.6), T=2, n0=5, trials=1, seed=0)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert np.all(np.isfinite(run.sq_error)) and peak < 200 * 2**20
    with pytest.raises(ValueError, match="d is too large"):     # what no run can hold is refused up front
        engine.simulate_agents(G.GaussianMean(1.0, tau=0.02, d=10**6, R=10.0, draw="records"),
                               Memoryless(q=0.3, r=0.6), T=5, n0=1000, trials=1, seed=0)


def test_expected_error_is_inf_without_a_warning_where_it_exceeds_every_double():
    # the documented edges of Lemma 3's error: n = 0, and gamma^2 Tr Sigma^-1 past the largest double
    import warnings
    mech = G.GaussianMean(1.0, tau=0.02, d=12, R=10.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        err = mech.expected_error(np.array([100.0, 0.0, 100.0]), np.array([1e300, 1.0, 1e150]))
    assert np.isinf(err[0]) and np.isinf(err[1])
    assert err[2] == pytest.approx((1e300 * 12 + 12) / 100, rel=1e-12)
