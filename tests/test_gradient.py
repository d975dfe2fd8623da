"""perfpriv.gradient: private gradient descent, its zCDP cost, utility and per-record accounting.

Independent truths: finite differences of the loss, the transcript's likelihood
ratio from scipy's Gaussian densities, Monte Carlo over the noise (tolerances
from standard errors), the exact linear-Gaussian recursion of the quadratic
case, paper 001's bound, and the step-by-step reference simulator.
"""

import math

import numpy as np
import pytest
from scipy import stats

from perfpriv import engine
from perfpriv import gradient as GD
from perfpriv.behaviour import Memoryless
from perfpriv.engine import Policy

Z_TOL = 4.5


def _logistic_data(n, d, seed, theta_norm=1.5):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    theta = theta_norm * rng.standard_normal(d) / math.sqrt(d)
    y = np.where(rng.random(n) < 1 / (1 + np.exp(-X @ theta)), 1.0, -1.0)
    return X, y


def _squared_data(n, d, seed):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    return X, X @ np.ones(d) + rng.standard_normal(n)


# ----------------------------------------------------------------- losses
@pytest.mark.parametrize("loss", ["logistic", "squared"])
def test_per_example_gradients_match_finite_differences(loss):
    X, y = _logistic_data(6, 3, 0) if loss == "logistic" else _squared_data(6, 3, 0)
    theta = np.array([0.3, -0.5, 0.8])
    G = GD.per_example_gradients(theta, X, y, loss=loss)
    h = 1e-6
    for i in range(6):
        f = lambda t: GD.objective(t, X[i:i + 1], y[i:i + 1], loss=loss, lam=0.0)  # noqa: E731
        fd = [(f(theta + h * e) - f(theta - h * e)) / (2 * h) for e in np.eye(3)]
        np.testing.assert_allclose(G[i], fd, rtol=1e-6, atol=1e-8)


def test_minimize_objective_has_zero_gradient_and_respects_the_ball():
    X, y = _logistic_data(200, 4, 1, theta_norm=4.0)
    star = GD.minimize_objective(X, y, loss="logistic", lam=0.5)
    grad = GD.per_example_gradients(star, X, y, loss="logistic").sum(0) + 0.5 * star
    assert np.max(np.abs(grad)) < 1e-8
    ball = GD.minimize_objective(X, y, loss="logistic", lam=0.5, radius=0.5)
    assert np.linalg.norm(ball) == pytest.approx(0.5, abs=1e-12)
    # on the sphere the gradient points inwards along θ (KKT)
    g = GD.per_example_gradients(ball, X, y, loss="logistic").sum(0) + 0.5 * ball
    cos = -g @ ball / (np.linalg.norm(g) * 0.5)
    assert cos > 1 - 1e-6


# ---------------------------------------------------------------- privacy
def test_zcdp_cost_composes_over_steps_and_inverts():
    assert GD.zcdp_cost(1, clip=2.0, sigma=4.0) == pytest.approx(4.0 / 32.0)
    assert GD.zcdp_cost(50, clip=2.0, sigma=4.0) == pytest.approx(50 * 4.0 / 32.0)
    sigma = GD.sigma_for_rho(0.3, steps=40, clip=1.5)
    assert GD.zcdp_cost(40, clip=1.5, sigma=sigma) == pytest.approx(0.3)
    assert GD.sigma_for_rho(np.inf, steps=10, clip=1.0) == 0.0


def test_each_record_is_at_most_as_exposed_as_the_worst_case():
    X, y = _logistic_data(100, 3, 2)
    run = GD.noisy_gd(X, y, GD.Training(loss="logistic", lam=1.0, clip=0.5, steps=30, step_size=0.01), rho=2.0, seed=3)
    assert np.all(run.mu <= math.sqrt(2 * run.rho) * (1 + 1e-12))
    # records that were clipped at every step reach the worst case exactly
    always = run.clipped == 30
    assert always.any()
    np.testing.assert_allclose(run.mu[always], math.sqrt(2 * run.rho), rtol=1e-12)


def test_realized_llr_is_the_transcript_likelihood_ratio_from_the_gaussian_densities():
    """Rerun the same GD step by step, with the same noise, and sum log-density differences."""
    X, y = _logistic_data(12, 2, 4)
    lam, C, T, eta = 1.0, 0.4, 6, 0.05
    rng = np.random.default_rng(9)
    run = GD.noisy_gd(X, y, GD.Training(loss="logistic", lam=lam, clip=C, steps=T, step_size=eta), sigma=0.7, seed=rng)
    xi = np.random.default_rng(9).standard_normal((1, T, 2))[0]
    theta = np.zeros(2)
    llr = np.zeros(12)
    for t in range(T):
        G = GD.per_example_gradients(theta, X, y, loss="logistic")
        norms = np.linalg.norm(G, axis=1, keepdims=True)
        G = G * np.minimum(1.0, C / norms)
        S = G.sum(0)
        released = S + 0.7 * xi[t]
        dens = stats.multivariate_normal(S, 0.49 * np.eye(2)).logpdf(released)
        for i in range(12):
            llr[i] += dens - stats.multivariate_normal(S - G[i], 0.49 * np.eye(2)).logpdf(released)
        theta = theta - eta * (released + lam * theta)
    np.testing.assert_allclose(run.llr, llr, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(run.theta, theta, rtol=1e-12)


def test_llr_is_exactly_gaussian_when_every_gradient_of_the_record_is_clipped():
    X, y = _logistic_data(40, 3, 5)
    chk = GD.simulate_transcripts(X, y, GD.Training(loss="logistic", lam=1.0, clip=0.05, steps=15, step_size=0.05),
                                  index=0, runs=40_000, rho=0.5, seed=6)
    assert chk.clipped_fraction == 1.0
    mu = math.sqrt(2 * 0.5)
    np.testing.assert_allclose(chk.mu, mu, rtol=1e-12)          # the norms do not depend on the noise
    z = chk.standardized()
    assert stats.kstest(z, "norm").pvalue > 1e-3
    for tau in (0.02, 0.3, 1.0):
        freq, se = chk.leak_frequency(tau=tau)
        assert abs(freq - GD.gdp_leak_probability(mu, tau=tau)) < Z_TOL * se
        assert Z_TOL * se < 0.05 * freq                          # resolves a 5% error


def _data_bounded(n, d, seed):
    X, y = _logistic_data(n, d, seed, theta_norm=2.0)
    return X / np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True) / 4.0), y


def test_gaussian_accounting_is_close_when_the_path_barely_depends_on_the_noise():
    # 1024 records, steps 2/n: the noise moves the iterates little, the record's gradients
    # are almost those of the noiseless path, and Λ is close to N(μ²/2, μ²) with the run's μ
    X, y = _data_bounded(1024, 5, 1)
    chk = GD.simulate_transcripts(X, y, GD.Training(loss="logistic", lam=1.0, clip=2.0, steps=20, step_size=2.0 / 1024),
                                  index=0, runs=3000, rho=0.1, seed=2)
    assert chk.clipped_fraction == 0.0 and chk.mu.std() > 0
    freq, se = chk.leak_frequency(tau=0.02)
    assert abs(freq - chk.predicted(tau=0.02)) < 0.02 and se < 0.01


def test_gaussian_accounting_is_off_when_the_noise_drives_the_path():
    # 20 records: each step's noise moves θ a lot, later gradients of the record depend on it,
    # and the frequency of Λ > τ is far from the Gaussian prediction with the run's own μ
    X, y = _data_bounded(20, 5, 1)
    chk = GD.simulate_transcripts(X, y, GD.Training(loss="logistic", lam=1.0, clip=2.0, steps=20, step_size=2.0 / 20),
                                  index=0, runs=20_000, rho=0.1, seed=2)
    assert chk.clipped_fraction == 0.0
    freq, se = chk.leak_frequency(tau=0.02)
    assert freq - chk.predicted(tau=0.02) > 0.05 + Z_TOL * se


def test_gdp_leak_probability_is_lemma_7():
    mu = np.array([0.0, 0.1, 1.0, 3.0, np.inf])
    out = GD.gdp_leak_probability(mu, tau=0.2)
    np.testing.assert_allclose(out[1:4], stats.norm.sf(0.2 / mu[1:4] - mu[1:4] / 2), rtol=1e-12)
    assert out[0] == 0.0 and out[-1] == 1.0


# ---------------------------------------------------------------- utility
@pytest.mark.parametrize("schedule", ["constant", "strongly_convex"])
def test_quadratic_expected_excess_matches_monte_carlo(schedule):
    X, y = _squared_data(30, 3, 8)
    lam, sigma, T = 2.0, 3.0, 25
    # no gradient is clipped at C = 1e9 (checked on every run below), which the exact excess assumes
    training = GD.Training(loss="squared", lam=lam, clip=1e9, steps=T, schedule=schedule,
                           step_size=0.02 if schedule == "constant" else None,
                           strong_convexity=None if schedule == "constant" else lam + np.linalg.eigvalsh(X.T @ X)[0])
    exact = GD.quadratic_expected_excess(X, y, training, sigma=sigma)
    star = GD.minimize_objective(X, y, loss="squared", lam=lam)
    J_star = GD.objective(star, X, y, loss="squared", lam=lam)
    # K runs per call: full-batch GD on the block-diagonal stack of K copies of (X, y) is K independent runs on
    # (X, y) -- the objective, each record's gradient, the penalty and the isotropic noise all split by block --
    # so one call gives K iid draws of the excess (320 calls, 8000 draws, instead of 6000 calls, one draw each:
    # 4.5 se = 0.042 and 0.043 of the exact value, was 0.048 and 0.050; 0.041-0.043 and |z| <= 1.7 with the seeds
    # 2-5). Checked here: the formula splits (K times the exact value) and so does the noiseless run (K copies of
    # the run on (X, y)); the noise is iid over the coordinates, hence over the blocks
    K = 25
    Xk, yk = np.kron(np.eye(K), X), np.tile(y, K)
    assert GD.quadratic_expected_excess(Xk, yk, training, sigma=sigma) == pytest.approx(K * exact, rel=1e-12)
    np.testing.assert_allclose(GD.noisy_gd(Xk, yk, training, sigma=0.0).theta.reshape(K, -1),
                               np.tile(GD.noisy_gd(X, y, training, sigma=0.0).theta, (K, 1)),
                               rtol=1e-12, atol=1e-14)
    rng = np.random.default_rng(1)
    thetas = []
    for _ in range(320):
        run = GD.noisy_gd(Xk, yk, training, sigma=sigma, seed=rng)
        assert run.clipped.sum() == 0
        thetas.append(run.theta.reshape(K, -1))
    thetas = np.concatenate(thetas)
    # J(θ) = ½‖y − Xθ‖² + (λ/2)‖θ‖² of every draw at once (checked against GD.objective on the first ones)
    excess = 0.5 * ((y - thetas @ X.T) ** 2).sum(axis=1) + 0.5 * lam * (thetas ** 2).sum(axis=1) - J_star
    np.testing.assert_allclose(excess[:K], [GD.objective(th, X, y, loss="squared", lam=lam) - J_star
                                            for th in thetas[:K]], rtol=1e-10)
    se = excess.std(ddof=1) / math.sqrt(excess.size)
    assert abs(excess.mean() - exact) < Z_TOL * se
    assert Z_TOL * se < 0.05 * exact


def test_quadratic_expected_excess_without_noise_is_the_deterministic_run():
    X, y = _squared_data(20, 3, 2)
    training = GD.Training(loss="squared", lam=1.0, clip=1e9, steps=7, step_size=0.03)
    run = GD.noisy_gd(X, y, training, sigma=0.0, seed=0)
    star = GD.minimize_objective(X, y, loss="squared", lam=1.0)
    gap = GD.objective(run.theta, X, y, loss="squared", lam=1.0) - GD.objective(star, X, y, loss="squared", lam=1.0)
    assert GD.quadratic_expected_excess(X, y, training, sigma=0.0) == pytest.approx(gap, rel=1e-9)


def test_paper_001_bound_holds_for_projected_private_gd():
    n, d, B, lam = 100, 3, 2.0, 1.0
    X, y = _logistic_data(n, d, 3)
    X = X / np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True) / 2.0)   # ‖x‖ <= 2: L = 2
    L = 2.0
    star = GD.minimize_objective(X, y, loss="logistic", lam=lam, radius=B)
    J_star = GD.objective(star, X, y, loss="logistic", lam=lam)
    rng = np.random.default_rng(4)
    # 20 runs per setting (was 60): the check is one-sided, mean + 3 se <= LJSB, and a smaller sample only widens
    # the 3 se margin, i.e. makes it stricter; a true mean at or above LJSB still fails it with probability
    # > 0.998 at any size. With 20 runs mean + 3 se = 0.57, 0.072, 0.051 against LJSB = 430, 408, 84 (60 runs:
    # 0.60, 0.078, 0.072), 0.0018 of LJSB at most, also with the seeds 5 and 6; the smallest excess, which checks
    # that no run beats J*, stays >= 8e-4 >> 1e-9. (The bounds are 3 orders of magnitude above the excess: no
    # sample size makes this a 5% check of their constants.)
    for rho, T in [(0.5, 200), (5.0, 200), (5.0, 1000)]:
        training = GD.Training(loss="logistic", lam=lam, clip=L, steps=T, schedule="strongly_convex", radius=B)
        excess = np.array([GD.objective(GD.noisy_gd(X, y, training, rho=rho, seed=rng).theta,
                                        X, y, loss="logistic", lam=lam) - J_star for _ in range(20)])
        sigma2 = GD.sigma_for_rho(rho, steps=T, clip=L) ** 2
        ljsb = 2 * ((n * L + lam * B) ** 2 + d * sigma2) / (lam * (T + 1))    # the SGD bound it rests on
        bound = GD.utility_bound(n, lipschitz=L, lam=lam, radius=B, d=d, rho=rho, steps=T)
        assert np.all(excess >= -1e-9)
        assert excess.mean() + 3 * excess.std(ddof=1) / math.sqrt(excess.size) <= ljsb <= bound


# -------------------------------------------------------------- mechanism
def _compare(a, b):
    se = math.sqrt(a.var(ddof=1) / a.size + b.var(ddof=1) / b.size)
    return abs(a.mean() - b.mean()) / se if se > 0 else 0.0


@pytest.mark.parametrize("loss", ["logistic", "squared"])
def test_engine_agrees_with_the_step_by_step_reference(loss):
    # the squared loss has curvature up to x_bound^2 per record: a smaller step keeps N = 1 contracting
    step = {} if loss == "logistic" else dict(step_size=1.0, step_offset=17.0)
    mechanism = dict(loss=loss, steps=4, data=GD.GDData(d=3), **step)
    # trials balanced for the cost: the engine costs ~1.8 ms a trial here, the reference ~1.3 ms, so 2000 + 400
    # spent most of the time where it least reduced the standard error. 650 + 690 trials: 1/650 + 1/690 = 0.00299
    # <= 1/2000 + 1/400 = 0.00300 (the two laws have one variance when they agree), so the expected se, and with it
    # each 4.5 se tolerance, is not larger, for half the work; |z| <= 1.5 (2.1 once in 24) with seeds 3-8
    fast = engine.simulate(GD.PrivateGD(0.5, tau=0.02, **mechanism), Memoryless(q=0.5, r=0.3), T=2, n0=12,
                           trials=650, seed=1)
    slow = engine.simulate_agents(GD.PrivateGD(0.5, tau=0.02, **mechanism), Memoryless(q=0.5, r=0.3), T=2,
                                  n0=12, trials=690, seed=2)
    for t in range(2):
        assert _compare(fast.population[:, t + 1].astype(float), slow.population[:, t + 1].astype(float)) < Z_TOL
    assert _compare(fast.leaked[:, 0].astype(float), slow.leaked[:, 0].astype(float)) < Z_TOL
    assert _compare(fast.sq_error[:, 0], slow.sq_error[:, 0]) < Z_TOL


def test_no_privacy_leaks_every_record():
    run = engine.simulate(GD.PrivateGD(np.inf, tau=0.02), Memoryless(q=1.0, r=0.0), T=1, n0=50, trials=3, seed=0)
    assert np.all(run.leaked[:, 0] == 50) and np.all(run.population[:, 1] == 1)


def test_mean_field_table_matches_a_simulated_round():
    # a precise table (many Monte Carlo runs), so that its own error is negligible
    mech = GD.PrivateGD(np.array([0.1, 1.0]), tau=0.02, table=GD.Tabulation(records=8000, datasets=400))
    n0 = 64
    run = engine.simulate(mech, Memoryless(q=0.0, r=0.0), T=1, n0=n0, trials=1500, seed=5)
    frac = run.leaked[..., 0] / n0
    err = run.sq_error[..., 0]
    p = mech.leak_probability(n0, mech.levels.values)
    e = mech.expected_error(n0, mech.levels.values)
    for j in range(2):
        se_p = frac[j].std(ddof=1) / math.sqrt(frac.shape[1])
        se_e = err[j].std(ddof=1) / math.sqrt(err.shape[1])
        assert abs(frac[j].mean() - p[j]) < Z_TOL * se_p + 0.01
        assert abs(err[j].mean() - e[j]) < Z_TOL * se_e + 0.03 * e[j]


def test_a_budget_gives_the_same_run_alone_or_in_a_grid():
    kw = dict(T=3, n0=30, trials=3, seed=9)
    users = Memoryless(q=0.4, r=0.4)
    alone = engine.simulate(GD.PrivateGD(1.0, tau=0.02), users, **kw)
    grid = engine.simulate(GD.PrivateGD([0.1, 1.0], tau=0.02), users, **kw)
    np.testing.assert_array_equal(grid.population[1], alone.population)
    np.testing.assert_allclose(grid.sq_error[1], alone.sq_error, rtol=1e-12)


# -------------------------------------------------------------- bad input
@pytest.mark.parametrize("call,match", [
    (lambda: GD.per_example_gradients([0.0], [[1.0]], [0.5], loss="logistic"), "labels in"),
    (lambda: GD.per_example_gradients([0.0], [[1.0]], [1.0], loss="hinge"), "loss must be one of"),
    (lambda: GD.noisy_gd([[1.0]], [1.0], GD.Training(loss="squared", lam=1.0, clip=1.0, steps=3, step_size=0.1)),
     "exactly one of sigma"),
    (lambda: GD.Training(loss="squared", lam=1.0, clip=1.0, steps=3), "step_size"),
    (lambda: GD.Training(loss="squared", lam=0.0, clip=1.0, steps=3, step_size=0.1), "lam must be"),
    (lambda: GD.noisy_gd([[1.0]], [1.0], dict(loss="squared", lam=1.0, clip=1.0, steps=3, step_size=0.1), rho=1.0),
     "training must be a perfpriv.gradient.Training"),
    (lambda: GD.quadratic_expected_excess([[1.0]], [1.0], GD.Training(loss="logistic", lam=1.0, clip=1.0, steps=3,
                                                                      step_size=0.1), sigma=0.0),
     "loss='squared'"),
    (lambda: GD.quadratic_expected_excess([[1.0]], [1.0], GD.Training(loss="squared", lam=1.0, clip=1.0, steps=3,
                                                                      step_size=0.1, radius=2.0), sigma=0.0),
     "without projection"),
    (lambda: GD.utility_check([1.0], dict(n=10, d=2), runs=2), "data must be a perfpriv.gradient.UtilityData"),
    (lambda: GD.zcdp_cost(0, clip=1.0, sigma=1.0), "steps must be"),
    (lambda: GD.sigma_for_rho(-1.0, steps=1, clip=1.0), "rho must be"),
    (lambda: GD.utility_bound(10, lipschitz=1.0, lam=1.0, radius=1.0, d=2, rho=1.0, steps=5, strong_convexity=0.5),
     "strong_convexity must be"),
    (lambda: GD.simulate_transcripts([[1.0], [2.0]], [1.0, -1.0], GD.Training(loss="logistic", lam=1.0, clip=1.0,
                                                                                steps=2, step_size=0.1),
                                     index=5, runs=10, rho=1.0), "index must be"),
    (lambda: GD.PrivateGD(0.0, tau=0.02), "rho must be"),
    (lambda: engine.simulate_agents(GD.PrivateGD(np.inf, tau=0.02), Memoryless(q=0.5, r=0.5), T=1, n0=5, trials=1),
     "finite rho"),
])
def test_bad_input_is_refused_with_a_message_naming_the_parameter(call, match):
    with pytest.raises((ValueError, TypeError), match=match):
        call()


# ------------------------------------------------------------ experiments
def test_utility_check_reports_the_exact_excess_and_the_bounds():
    quad = GD.utility_check([3.0, 300.0], loss="squared", runs=300, seed=1)
    assert np.all(quad.clipped_fraction < 1e-5)
    assert np.all(np.abs(quad.simulated - quad.exact) < Z_TOL * quad.se)
    logi = GD.utility_check([1.0], GD.UtilityData(), loss="logistic", lam=10.0, steps=200, runs=40, seed=2)
    assert logi.exact is None and np.all(logi.simulated <= logi.ljsb) and np.all(logi.ljsb <= logi.bound)


def test_long_run_without_feedback_repeats_the_first_round():
    res = GD.long_run_utility(GD.PrivateGD([0.1, 1.0, np.inf], tau=0.02), Memoryless(q=[0.0, 0.5], r=[0.0, 0.3]),
                              T=4, n0=64, policy=Policy(cap=500))
    assert res.behaviours == [(0.0, 0.0), (0.5, 0.3)] and res.cap == 500
    np.testing.assert_array_equal(res.population[0], 64.0)
    mech = GD.PrivateGD([0.1, 1.0, np.inf], tau=0.02)
    np.testing.assert_allclose(res.mean_field[0], 4 * mech.expected_error(64, [0.1, 1.0, np.inf]), rtol=1e-12)
    assert np.isinf(res.best_mean_field[0])
    with pytest.raises(AttributeError, match="no simulation"):
        res.best_simulated


def test_figures_of_private_gd_draw():
    plots = pytest.importorskip("perfpriv.plots", reason="the plots package imports modules mid-migration",
                                exc_type=ImportError)
    from matplotlib.figure import Figure

    X, y = _logistic_data(60, 3, 0)
    training = GD.Training(loss="logistic", lam=1.0, clip=1.0, steps=5, step_size=0.02)
    run = GD.noisy_gd(X, y, training, rho=1.0, seed=0)
    chk = GD.simulate_transcripts(X, y, training, index=0, runs=50, rho=1.0, seed=1)
    util = GD.utility_check([1.0, 10.0], runs=20, seed=0)
    lr = GD.long_run_utility(GD.PrivateGD([0.1, np.inf], tau=0.02), Memoryless(q=0.0, r=0.0), T=2, n0=30, trials=2,
                             policy=Policy(cap=100), seed=0)
    for fig in (plots.figure_individual_privacy(run, tau=0.02), plots.figure_transcript_checks([chk], ["a"], tau=0.02),
                plots.figure_gd_utility([util]), plots.figure_long_run_utility(lr)):
        assert isinstance(fig, Figure)


# ------------------------------------------------------------- data model
@pytest.mark.parametrize("loss", ["logistic", "squared"])
def test_sample_data_draws_the_documented_model(loss):
    mech = GD.PrivateGD(1.0, tau=0.02, data=GD.GDData(d=3, x_bound=1.5, theta_norm=2.0, noise_sd=0.7), loss=loss)
    n = 200_000
    X, y, theta = mech.sample_data(n, seed=3)
    # the draw order the docstring states: the records' normals (n, d + 1), then theta's direction
    rng = np.random.default_rng(3)
    G = rng.standard_normal((n, 4))
    direction = rng.standard_normal(3)
    np.testing.assert_allclose(theta, 2.0 * direction / np.linalg.norm(direction), rtol=1e-12)
    norms = np.linalg.norm(G[:, :3], axis=1, keepdims=True)
    np.testing.assert_allclose(X, G[:, :3] * np.minimum(1.0, 1.5 / norms), rtol=1e-12)
    z = X @ theta
    if loss == "logistic":
        assert set(np.unique(y)) == {-1.0, 1.0}
        resid = y - np.tanh(z / 2)          # E[y | x] = 2 sigma(z) - 1 = tanh(z / 2)
    else:
        resid = y - z
        assert abs(resid.std() / 0.7 - 1) < 0.01
    # no bias and no slope left: a 5% error in the link's scale gives a slope many standard errors off
    for w in (np.ones(n), z):
        m = resid * w
        assert abs(m.mean()) < Z_TOL * m.std() / math.sqrt(n)
    if loss == "logistic":
        wrong = y - np.tanh(1.05 * z / 2)
        assert abs((wrong * z).mean()) > Z_TOL * (wrong * z).std() / math.sqrt(n)
    a, b, c = mech.sample_data(5, seed=4), mech.sample_data(5, seed=4), mech.sample_data(5, seed=5)
    np.testing.assert_array_equal(a[0], b[0])
    assert not np.array_equal(a[0], c[0])
    with pytest.raises(ValueError, match="n must be"):
        mech.sample_data(0)


# ------------------------------------------------------- the retraining step
def _noiseless_step(theta, X, y, *, eta, lam, clip):
    """One noiseless step of the retraining task, from the definition (logistic loss, clipped gradients)."""
    out = np.empty_like(theta)
    for b in range(theta.shape[0]):
        g = np.zeros(theta.shape[1])
        for x, label in zip(X, y):
            gi = -label * x / (1.0 + math.exp(label * float(x @ theta[b])))
            norm = np.linalg.norm(gi)
            g += gi * min(1.0, clip / norm) if norm > 0 else gi
        out[b] = theta[b] - eta * (g + lam * theta[b])
    return out


def _largest_step_ratio(mech, N, eta, datasets, seed):
    """Largest ‖F(a) − F(b)‖/‖a − b‖ of the noiseless step F over datasets of the model and pairs of points."""
    rng = np.random.default_rng(seed)
    worst = 0.0
    for _ in range(datasets):
        X, y, _ = mech.sample_data(N, seed=rng)
        a = 3.0 * rng.standard_normal((40, mech.d))
        b = a + rng.standard_normal((40, mech.d)) * rng.choice([1e-3, 0.1, 2.0], size=(40, 1))
        fa = _noiseless_step(a, X, y, eta=eta, lam=mech.lam, clip=mech.clip)
        fb = _noiseless_step(b, X, y, eta=eta, lam=mech.lam, clip=mech.clip)
        worst = max(worst, float(np.max(np.linalg.norm(fa - fb, axis=1) / np.linalg.norm(a - b, axis=1))))
    return worst


@pytest.mark.parametrize("N", [1, 2, 3])
def test_retraining_step_contracts_at_small_populations(N):
    mech = GD.PrivateGD(1.0, tau=0.02)
    assert mech.eta(N) == pytest.approx(2.0 / (N + 5))
    worst = _largest_step_ratio(mech, N, mech.eta(N), datasets=30, seed=10 + N)
    assert worst < 0.95
    if N == 1:
        # at N = 1 for every record: the Hessian of the clipped objective lies in [lam, lam + x_bound^2/4] = [1, 5]
        assert worst <= 2.0 / 3.0 + 1e-9
        # the former step 2/N does not contract there: the penalty alone gives |1 - 2 lam| = 1
        assert _largest_step_ratio(mech, 1, 2.0, datasets=5, seed=1) >= 1.0 - 1e-9


def test_retraining_step_contracts_for_a_record_on_the_clipping_sphere():
    # the adversarial lone record: ||x|| = x_bound, at the margin z = 0 where the logistic curvature is 1/4
    mech = GD.PrivateGD(1.0, tau=0.02)
    x = np.zeros((1, mech.d))
    x[0, 0] = mech.x_bound
    eps = 1e-6
    a, b = np.zeros((1, mech.d)), np.zeros((1, mech.d))
    b[0, 0] = eps
    for label in (-1.0, 1.0):
        fa = _noiseless_step(a, x, np.array([label]), eta=mech.eta(1), lam=mech.lam, clip=np.inf)
        fb = _noiseless_step(b, x, np.array([label]), eta=mech.eta(1), lam=mech.lam, clip=np.inf)
        ratio = np.linalg.norm(fa - fb) / eps
        assert abs(ratio - 2.0 / 3.0) < 1e-5        # |1 - (1/3)(1 + 16/4)| = 2/3: the bound is attained


def test_noiseless_retraining_error_stays_bounded_at_one_user():
    # with the stable step a lone user's noiseless fit errs like predicting 0 (||theta||^2 = 4), not hundreds
    mech = GD.PrivateGD(np.inf, tau=0.02)
    run = engine.simulate(mech, Memoryless(q=0.0, r=0.0), T=1, n0=1, trials=400, seed=3)
    assert run.sq_error[:, 0].mean() < 2 * mech.theta_norm ** 2


def test_private_gd_rejects_a_step_that_does_not_contract_at_one_user():
    with pytest.raises(ValueError, match="step_offset must make the step at N = 1 contract"):
        GD.PrivateGD(1.0, tau=0.02, step_offset=0.0)          # the former 2/N
    with pytest.raises(ValueError, match="step_offset"):
        GD.PrivateGD(1.0, tau=0.02, loss="squared")           # curvature up to x_bound^2 = 16
    with pytest.raises(ValueError, match="step_offset must be"):
        GD.PrivateGD(1.0, tau=0.02, step_offset=-1.0)


def test_strongly_convex_average_is_the_cited_one():
    # Lacoste-Julien et al.: x_t (t = 1..K) is where step 2/(mu(t + 1)) is taken; output sum 2t x_t/(K(K + 1))
    X, y = _logistic_data(20, 3, 5)
    lam, K = 2.0, 6
    run = GD.noisy_gd(X, y, GD.Training(loss="logistic", lam=lam, clip=1e9, steps=K, schedule="strongly_convex"),
                      sigma=0.0, seed=0)
    x, avg = np.zeros(3), np.zeros(3)
    for t in range(1, K + 1):
        avg += 2.0 * t * x / (K * (K + 1))
        g = GD.per_example_gradients(x, X, y, loss="logistic").sum(0)
        x = x - 2.0 / (lam * (t + 1)) * (g + lam * x)
    np.testing.assert_allclose(run.theta, avg, rtol=1e-12, atol=1e-15)
    assert not np.allclose(run.theta, avg + 2.0 * K * (x - np.zeros(3)) / (K * (K + 1)))


# ------------------------------------------------------- (epsilon, delta)
def _gaussian_delta(eps, mu):
    """Exact delta(eps) of the Gaussian mechanism with mu = sensitivity/sigma (Balle and Wang 2018, Thm 8)."""
    # the second term in log space: e^eps overflows at large budgets
    return stats.norm.cdf(-eps / mu + mu / 2) - math.exp(eps + stats.norm.logcdf(-eps / mu - mu / 2))


@pytest.mark.parametrize("rho", [0.01, 1.0, 200.0, 5000.0])
def test_zcdp_to_dp_is_valid_for_the_gaussian_mechanism(rho):
    # a rho-zCDP Gaussian mechanism has mu = sqrt(2 rho); its exact delta at the converted epsilon is below delta
    for delta in (1e-5, 1e-3):
        eps = GD.zcdp_to_dp(rho, delta=delta)
        assert eps == pytest.approx(rho + 2 * math.sqrt(rho * math.log(1 / delta)), rel=1e-12)
        assert _gaussian_delta(eps, math.sqrt(2 * rho)) <= delta
        # and not absurdly loose: half the epsilon already fails for the small budgets
        if rho <= 1.0:
            assert _gaussian_delta(eps / 4, math.sqrt(2 * rho)) > delta


def test_zcdp_to_dp_table_and_the_direction_of_the_condition():
    eps = [GD.zcdp_to_dp(r, delta=1e-5) for r in (1.0, 200.0, 5000.0)]
    assert np.allclose(eps, [7.8, 296.0, 5480.0], rtol=2e-3)
    L = math.log(1e5)
    for target in (0.5, 1.0, 5.0, 2.3 * L):
        # rho <= eps^2/(8 log(1/delta)) meets the target (for eps <= 4(2 - sqrt 2) log(1/delta)) ...
        assert GD.zcdp_to_dp(target**2 / (8 * L), delta=1e-5) <= target
        # ... while a rho above it does not: the reversed inequality promises nothing
        assert GD.zcdp_to_dp(4 * target**2 / (8 * L), delta=1e-5) > target
    assert GD.zcdp_to_dp(np.inf, delta=1e-5) == np.inf
    with pytest.raises(ValueError, match="delta"):
        GD.zcdp_to_dp(1.0, delta=1.0)
    with pytest.raises(ValueError, match="rho"):
        GD.zcdp_to_dp(-1.0, delta=1e-5)


def test_replace_one_cost_is_the_gaussian_mechanism_at_twice_the_sensitivity():
    # replace-one: the clipped sum moves by up to 2C; Renyi divergence alpha (2C)^2/(2 sigma^2) per step
    K, C, sigma = 30, 1.5, 4.0
    assert GD.zcdp_cost(K, clip=C, sigma=sigma, adjacency="replace") == pytest.approx(K * (2 * C) ** 2 / (2 * sigma**2))
    assert GD.zcdp_cost(K, clip=C, sigma=sigma) == pytest.approx(K * C**2 / (2 * sigma**2))
    with pytest.raises(ValueError, match="adjacency"):
        GD.zcdp_cost(K, clip=C, sigma=sigma, adjacency="swap")


# ------------------------------------------------------------- issue 31: the objects of the constructor
def test_the_object_form_builds_the_mechanism_the_flat_arguments_built():
    # issue 31: the data model and the mean-field table are objects now (GDData, Tabulation). The numbers below
    # are those of the former flat call PrivateGD([1.0], tau=0.02, d=2, loss="squared", lam=2.0, clip=1.0,
    # steps=4, step_size=0.5, step_offset=3.0, x_bound=1.5, theta_norm=1.0, noise_sd=0.7, table_records=100,
    # table_runs=3, table_seed=7): the same mechanism, number for number
    data = GD.GDData(d=2, x_bound=1.5, theta_norm=1.0, noise_sd=0.7)
    table = GD.Tabulation(records=100, datasets=3, seed=7)
    mech = GD.PrivateGD([1.0], tau=0.02, data=data, loss="squared", lam=2.0, clip=1.0, steps=4, step_size=0.5,
                        step_offset=3.0, table=table)
    assert mech.options() == dict(tau=0.02, data=data, loss="squared", lam=2.0, clip=1.0, steps=4, step_size=0.5,
                                  step_offset=3.0, table=table)
    assert GD.PrivateGD([0.5], **mech.options()).options() == mech.options()      # options() rebuild it
    assert (mech.d, mech.x_bound, mech.theta_norm, mech.noise_sd, mech.table_records, mech.table_runs,
            mech.table_seed) == (2, 1.5, 1.0, 0.7, 100, 3, 7)
    users = Memoryless(q=0.4, r=0.3)
    run = engine.simulate(mech, users, T=2, n0=12, trials=2, seed=1)
    np.testing.assert_allclose(run.sq_error, [[[0.24101504529493087, 0.3905036094906295],
                                               [0.45121050614213004, 0.1612851218486619]]], rtol=1e-12)
    np.testing.assert_array_equal(run.leaked, [[[3, 5], [10, 5]]])
    mf = engine.mean_field(mech, users, T=3, n0=40)
    np.testing.assert_allclose(mf.cumulative_error, [0.7151845639953078], rtol=1e-12)


def test_the_defaults_of_the_data_and_the_table_are_the_former_ones():
    mech = GD.PrivateGD(1.0, tau=0.02)
    assert mech.data == GD.GDData(d=5, x_bound=4.0, theta_norm=2.0, noise_sd=1.0)
    assert mech.table == GD.Tabulation(records=8000, datasets=128, seed=0)
    with pytest.raises(TypeError, match="data must be a perfpriv.gradient.GDData"):
        GD.PrivateGD(1.0, tau=0.02, data=dict(d=3))
    with pytest.raises(TypeError, match="table must be a perfpriv.gradient.Tabulation"):
        GD.PrivateGD(1.0, tau=0.02, table=(8000, 128))
    with pytest.raises(ValueError, match="step_offset must make the step at N = 1 contract.*data.x_bound=10"):
        GD.PrivateGD(1.0, tau=0.02, data=GD.GDData(x_bound=10.0))       # lam + x_bound^2/4 = 26: 2/6 * 26 > 2
