"""perfpriv.performative: closed forms against definitions, simulators against exact moments and references."""

import itertools
import math

import numpy as np
import pytest
from scipy import integrate, optimize, stats

from perfpriv import bernoulli, behaviour, engine, leakage
from perfpriv.performative import bilevel, federated, participation, prediction, stateful
from perfpriv.performative.federated import GaussianClients, StepRule
from perfpriv.engine import Policy


# ------------------------------------------------------------------ helpers
def sigma_point_mean(f, mean, cov):
    """E f(z) for z ~ N(mean, cov) by the 2k sigma points mean ± sqrt(k) L e_j (exact for cubics)."""
    k = mean.size
    L = np.linalg.cholesky(cov)
    pts = [mean + s * math.sqrt(k) * L[:, j] for j in range(k) for s in (1.0, -1.0)]
    return sum(f(z) for z in pts) / (2 * k)


def loss_from_definition(prob):
    """ℓ(θ; z) = ½θᵀHθ − θᵀBz + ½zᵀCz, written out."""
    return lambda th, z: 0.5 * th @ prob.H @ th - th @ prob.B @ z + 0.5 * z @ prob.C @ z


def random_problem(seed, p=2, scale=0.3, C_zero=False):
    g = np.random.default_rng(seed)
    Q = g.standard_normal((p, p))
    H = Q @ Q.T + p * np.eye(p)
    B = np.eye(p) + 0.3 * g.standard_normal((p, p))
    C = np.zeros((p, p)) if C_zero else np.eye(p) + 0.1 * np.diag(g.random(p))
    A = scale * g.standard_normal((p, p))
    S = g.standard_normal((p, p))
    return prediction.PerformativeProblem(H, B, C, g.standard_normal(p), A, S @ S.T + np.eye(p))


# --------------------------------------------------------------- prediction
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_best_response_minimizes_the_decoupled_risk_of_the_definition(seed):
    prob = random_problem(seed)
    loss = loss_from_definition(prob)
    deployed = np.array([0.7, -0.4])
    mean = prob.m + prob.A @ deployed
    dr = lambda th: sigma_point_mean(lambda z: loss(th, z), mean, prob.Sigma)  # noqa: E731
    found = optimize.minimize(dr, np.zeros(2), method="BFGS", options={"gtol": 1e-10}).x
    np.testing.assert_allclose(prob.best_response(deployed), found, atol=1e-6)
    assert prob.decoupled_risk(found, deployed) == pytest.approx(dr(found), rel=1e-10)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_stable_point_is_a_fixed_point_and_optimal_point_minimizes_the_performative_risk(seed):
    prob = random_problem(seed, C_zero=seed == 2)
    loss = loss_from_definition(prob)
    ps = prob.stable_point()
    dr = lambda th: sigma_point_mean(lambda z: loss(th, z), prob.m + prob.A @ ps, prob.Sigma)  # noqa: E731
    np.testing.assert_allclose(optimize.minimize(dr, np.zeros(2), method="BFGS", options={"gtol": 1e-10}).x,
                               ps, atol=1e-6)
    pr = lambda th: sigma_point_mean(lambda z: loss(th, z), prob.m + prob.A @ th, prob.Sigma)  # noqa: E731
    found = optimize.minimize(pr, np.zeros(2), method="BFGS", options={"gtol": 1e-10}).x
    np.testing.assert_allclose(prob.optimal_point(), found, atol=1e-6)


def test_linear_loss_separates_stability_from_optimality_and_squared_loss_does_not():
    m, a = 1.5, 0.3
    lin = prediction.PerformativeProblem.linear(m=m, A=a)
    sq = prediction.PerformativeProblem.squared(m=m, A=a)
    assert lin.stable_point()[0] == pytest.approx(m / (1 - a))
    assert lin.optimal_point()[0] == pytest.approx(m / (1 - 2 * a))
    assert sq.stable_point()[0] == pytest.approx(sq.optimal_point()[0])
    assert lin.performative_risk(lin.optimal_point()) < lin.performative_risk(lin.stable_point())


def test_sensitivity_is_the_wasserstein_distance_of_the_map():
    prob = prediction.PerformativeProblem.squared(m=0.5, A=0.7, Sigma=2.0)
    g = np.random.default_rng(3)
    x = 0.5 + 0.7 * 0.0 + math.sqrt(2.0) * g.standard_normal(100_000)
    y = 0.5 + 0.7 * 1.0 + math.sqrt(2.0) * g.standard_normal(100_000)
    w1 = stats.wasserstein_distance(x, y)
    assert prob.sensitivity == pytest.approx(0.7)
    assert abs(w1 - prob.sensitivity) < 0.02   # sampling error ~0.005; a 5% error is 0.035


def test_rrm_contracts_at_its_factor_below_one_and_diverges_above():
    prob = prediction.PerformativeProblem.squared(m=1.0, A=0.6)
    path = prediction.repeated_risk_minimization(prob, [0.0], T=20)
    ratios = path.distance[1:] / path.distance[:-1]
    np.testing.assert_allclose(ratios, prob.rrm_factor, rtol=1e-9)
    assert prob.rrm_factor == pytest.approx(0.6) == pytest.approx(prob.rrm_bound)   # tight for the squared loss
    hot = prediction.PerformativeProblem.squared(m=1.0, A=1.1)
    with pytest.raises(ValueError, match="no attracting stable point"):
        hot.stable_point()
    fixed = hot.stable_point(attracting=False)
    assert fixed[0] == pytest.approx(1.0 / (1 - 1.1))
    np.testing.assert_allclose(hot.best_response(fixed), fixed)
    away = prediction.repeated_risk_minimization(hot, fixed + 1e-3, T=30)
    assert away.distance[-1] > 1e-3 * 1.1**29


@pytest.mark.parametrize("seed", range(6))
def test_rrm_and_rgd_bounds_hold_on_random_problems(seed):
    prob = random_problem(seed, scale=0.05)
    assert prob.rrm_factor <= prob.rrm_bound + 1e-12
    g, b, e = prob.strong_convexity, prob.smoothness, prob.sensitivity
    assert e < g / b
    step = (g - e * b) / (b**2 * (1 + e) ** 2)
    assert prob.rgd_factor(step) <= prob.rgd_bound(step) + 1e-12 < 1.0
    path = prediction.repeated_gradient_descent(prob, np.ones(2), T=200, step=step)
    assert path.distance[-1] <= prob.rgd_factor(step) ** 200 * path.distance[0] * (1 + 1e-9) + 1e-12


def test_stochastic_rrm_has_the_stationary_law_of_its_ar1_recursion():
    # θ_{t+1} = m + εθ_t + σ z̄: stationary mean m/(1 − ε), variance σ²/(n(1 − ε²))
    m, eps, s2, n = 1.0, 0.5, 4.0, 10
    prob = prediction.PerformativeProblem.squared(m=m, A=eps, Sigma=s2)
    path = prediction.repeated_risk_minimization(prob, [0.0], T=30, samples=n, trials=4000, seed=5)
    last = path.theta[:, -1, 0]
    var = s2 / (n * (1 - eps**2))
    assert abs(last.mean() - m / (1 - eps)) < 4 * math.sqrt(var / last.size)
    assert abs(last.var(ddof=1) / var - 1) < 4 * math.sqrt(2 / (last.size - 1))


def test_prediction_bad_input():
    with pytest.raises(ValueError, match="H must be positive definite"):
        prediction.PerformativeProblem(-np.eye(1), 1, 1, 0.0, 0.5, 1.0)
    with pytest.raises(ValueError, match="A must have shape"):
        prediction.PerformativeProblem(np.eye(2), np.eye(2), np.eye(2), [0.0, 0.0], np.eye(3), 1.0)
    with pytest.raises(ValueError, match="Sigma must be a positive"):
        prediction.PerformativeProblem.squared(m=0.0, A=0.5, Sigma=0.0)
    prob = prediction.PerformativeProblem.squared(m=0.0, A=0.5)
    with pytest.raises(ValueError, match="step"):
        prediction.repeated_gradient_descent(prob, [0.0], T=3, step=0.0)
    with pytest.raises(ValueError, match="T must be"):
        prediction.repeated_risk_minimization(prob, [0.0], T=0)
    with pytest.raises(ValueError, match="theta0"):
        prediction.repeated_risk_minimization(prob, [0.0, 1.0], T=3)
    with pytest.raises(ValueError, match="no unique minimizer"):
        prediction.PerformativeProblem.linear(m=1.0, A=0.6).optimal_point()


# ---------------------------------------------------------------- federated
def test_stable_point_minimizes_the_weighted_decoupled_objective():
    m, eps, p = np.array([1.0, 4.0, -2.0]), np.array([0.2, 0.9, 0.4]), np.array([0.5, 0.3, 0.2])
    ps = federated.stable_point(m, eps, p)
    objective = lambda th: sum(p[i] * sigma_point_mean(lambda z: 0.5 * float((th[0] - z[0]) ** 2),  # noqa: E731
                                                      np.array([m[i] + eps[i] * ps]), np.eye(1))
                               for i in range(3))
    assert optimize.minimize(objective, [0.0]).x[0] == pytest.approx(ps, abs=1e-6)
    assert ps == pytest.approx((p @ m) / (1 - p @ eps))


@pytest.mark.parametrize("eps_bar", [1.0, 1.3])
def test_no_stable_point_for_average_sensitivity_at_or_above_one(eps_bar):
    with pytest.raises(ValueError, match="eps_bar = sum"):
        federated.stable_point([1.0, 1.0], [eps_bar - 0.2, eps_bar + 0.2])
    clients = GaussianClients.example(N=4, eps_mean=eps_bar)
    with pytest.raises(ValueError, match="eps_bar"):
        federated.p_fedavg(clients, T=10, trials=2, seed=0)
    with pytest.raises(ValueError, match="eps_bar"):
        federated.expected_distance(clients, T=10)


def test_example_clients_have_the_requested_weighted_moments():
    p = np.array([0.1, 0.2, 0.3, 0.4])
    c = GaussianClients.example(N=4, m_mean=10.0, m_sd=2.0, eps_mean=0.9, eps_sd=0.05, p=p, seed=3)
    assert p @ c.m[:, 0] == pytest.approx(10.0) and p @ c.eps == pytest.approx(0.9)
    assert math.sqrt(p @ (c.m[:, 0] - 10) ** 2) == pytest.approx(2.0)
    assert math.sqrt(p @ (c.eps - 0.9) ** 2) == pytest.approx(0.05)
    theta = c.stable_point[0]
    cov = p @ ((c.m[:, 0] - 10) * (c.eps - 0.9))
    assert c.dissimilarity() == pytest.approx(4.0 + 2 * cov * theta + 0.05**2 * theta**2)


@pytest.mark.parametrize("scheme,K,uniform,scaled", [("full", None, False, False), ("I", 3, False, False),
                                                      ("II", 3, True, False), ("II", 3, False, True)])
def test_simulator_matches_the_exact_moments(scheme, K, uniform, scaled):
    p = None if uniform else np.array([0.3, 0.25, 0.15, 0.1, 0.1, 0.1])
    c = GaussianClients.example(N=6, m_mean=2.0, m_sd=1.0, eps_mean=0.5, eps_sd=0.3, p=p, sigma=1.0, seed=1)
    fedavg = federated.FedAvg(E=3, scheme=scheme, K=K, steps=0.15, scaled=scaled)
    exact = federated.expected_distance(c, fedavg, T=40)
    run = federated.p_fedavg(c, fedavg, T=40, trials=20000, seed=11)
    for t in (3, 10, 21, 40):
        assert abs(run.mean_sq_distance[t] - exact.sq_distance[t]) < 4.5 * run.se[t], t
        np.testing.assert_allclose(run.theta[:, t].mean(axis=0), exact.mean[t],
                                   atol=4.5 * run.theta[:, t].std(axis=0).max() / math.sqrt(run.trials))


def test_constant_steps_leave_the_stationary_variance_of_the_averaged_recursion():
    # homogeneous clients, full participation: θ̄ ← aθ̄ + ηm + ησ ξ̄, Var ξ̄ = Σp²
    p = np.array([0.4, 0.3, 0.2, 0.1])
    c = GaussianClients.example(N=4, m_mean=1.0, eps_mean=0.5, p=p, sigma=2.0)
    eta = 0.1
    a = 1 - eta * (1 - 0.5)
    floor = eta**2 * 4.0 * (p @ p) / (1 - a**2)
    mom = federated.expected_distance(c, federated.FedAvg(E=1, steps=eta), T=3000)
    assert mom.sq_distance[-1] == pytest.approx(floor, rel=1e-9)


def test_decaying_steps_give_the_one_over_t_rate():
    c = GaussianClients.example(N=10, m_mean=10.0, m_sd=1.0, eps_mean=0.9, eps_sd=0.02)
    for scheme, K in (("full", None), ("I", 5), ("II", 5)):
        mom = federated.expected_distance(c, federated.FedAvg(E=5, scheme=scheme, K=K), T=32000)
        g = mom.steps.offset
        scaled = [mom.sq_distance[t] * (t + g) for t in (8000, 16000, 32000)]
        assert abs(scaled[2] / scaled[1] - 1) < 0.05 and abs(scaled[1] / scaled[0] - 1) < 0.2
        # and the constant is not zero: the error is Θ(1/t), not faster
        assert scaled[2] > 0.5 * scaled[1]


def test_homogeneous_clients_make_the_number_of_local_steps_irrelevant():
    c = GaussianClients.example(N=8, m_mean=2.0, eps_mean=0.7, sigma=1.0)
    steps = StepRule.decaying(4.0, 30.0)
    for scheme, K in (("full", None), ("I", 3), ("II", 3)):
        ref = federated.expected_distance(c, federated.FedAvg(E=1, scheme=scheme, K=K, steps=steps), T=600).sq_distance
        for E in (2, 5, 10, 50):
            other = federated.expected_distance(c, federated.FedAvg(E=E, scheme=scheme, K=K, steps=steps), T=600).sq_distance
            np.testing.assert_allclose(other[::E * 2][1:], ref[::E * 2][1:], rtol=1e-9)
    # heterogeneous data: E matters once clients are sampled
    het = GaussianClients.example(N=8, m_mean=2.0, m_sd=1.0, eps_mean=0.7, sigma=1.0)
    one = federated.expected_distance(het, federated.FedAvg(E=1, scheme="I", K=3, steps=steps), T=600).sq_distance[-1]
    ten = federated.expected_distance(het, federated.FedAvg(E=10, scheme="I", K=3, steps=steps), T=600).sq_distance[-1]
    assert abs(ten / one - 1) > 0.05


def test_data_heterogeneity_costs_nothing_under_full_participation():
    steps = StepRule.decaying(4.0, 30.0)
    base = GaussianClients.example(N=8, m_mean=2.0, eps_mean=0.7)
    data = GaussianClients.example(N=8, m_mean=2.0, m_sd=3.0, eps_mean=0.7)
    shift = GaussianClients.example(N=8, m_mean=2.0, eps_mean=0.7, eps_sd=0.2)
    d0, d1, d2 = (federated.expected_distance(c, federated.FedAvg(E=5, steps=steps), T=500).sq_distance for c in (base, data, shift))
    np.testing.assert_allclose(d1, d0, rtol=1e-9)
    assert np.max(np.abs(d2[50:] / d0[50:] - 1)) > 0.05


def test_scheme_two_beats_scheme_one_with_equal_weights():
    c = GaussianClients.example(N=10, m_mean=2.0, m_sd=1.0, eps_mean=0.6, eps_sd=0.1)
    for K in (2, 5, 9):
        one = federated.expected_distance(c, federated.FedAvg(E=4, scheme="I", K=K), T=400).sq_distance
        two = federated.expected_distance(c, federated.FedAvg(E=4, scheme="II", K=K), T=400).sq_distance
        assert np.all(two[4::4] <= one[4::4] * (1 + 1e-12))
    full = federated.expected_distance(c, federated.FedAvg(E=4), T=400).sq_distance
    np.testing.assert_allclose(federated.expected_distance(c, federated.FedAvg(E=4, scheme="II", K=10), T=400).sq_distance, full,
                               rtol=1e-9)


def test_aggregation_weights_have_the_moments_the_recursion_uses():
    # enumerate every K-subset (scheme II) and every ordered K-draw (scheme I) of N = 4 clients
    N, K = 4, 2
    p = np.array([0.4, 0.3, 0.2, 0.1])
    c = GaussianClients(np.zeros((N, 1)), np.zeros(N), p, 0.0)
    W1 = np.zeros((N, N))
    for draw in itertools.product(range(N), repeat=K):
        w = np.bincount(draw, minlength=N) / K
        W1 += np.prod(p[list(draw)]) * np.outer(w, w)
    W2 = np.zeros((N, N))
    subsets = list(itertools.combinations(range(N), K))
    for sub in subsets:
        w = np.zeros(N)
        w[list(sub)] = 1.0 / K
        W2 += np.outer(w, w) / len(subsets)
    # one noiseless step of size 1 puts client i at c_i m_i; one aggregation then gives E y² = jumpᵀ W jump
    for scheme, W, scaled in (("I", W1, False), ("II", W2, True)):
        x0 = np.array([1.0, -2.0, 3.0, 0.5])
        cl = GaussianClients(x0[:, None], np.zeros(N), p, 0.0)   # m_i = x0, eps = 0: one step of size 1 lands on m
        mom = federated.expected_distance(cl, federated.FedAvg(E=1, scheme=scheme, K=K, steps=1.0, scaled=scaled), T=1)
        # steps=1, eps=0, sigma=0: every client jumps to c_i m_i (c_i = 1, or p_i N when scaled)
        jump = x0 * (p * N if scaled else 1.0)
        wbar = np.full(N, 1.0 / N) if scaled else p     # E w of the scheme (both sum to one in expectation)
        second = jump @ W @ jump
        expected = second - 2 * cl.stable_point[0] * (wbar @ jump) + cl.stable_point[0] ** 2
        assert mom.sq_distance[1] == pytest.approx(expected, rel=1e-12)


def test_federated_bad_input():
    c = GaussianClients.example(N=5, eps_mean=0.5, p=[0.3, 0.3, 0.2, 0.1, 0.1])
    with pytest.raises(ValueError, match="p_i = 1/N"):
        federated.p_fedavg(c, federated.FedAvg(scheme="II", K=2), T=5, trials=2)
    with pytest.raises(ValueError, match="needs K"):
        federated.expected_distance(c, federated.FedAvg(scheme="I"), T=5)
    with pytest.raises(ValueError, match="K \\(the number"):
        federated.expected_distance(c, federated.FedAvg(K=3), T=5)
    with pytest.raises(ValueError, match="K must be"):
        federated.expected_distance(GaussianClients.example(N=5, eps_mean=0.5), federated.FedAvg(scheme="II", K=6), T=5)
    with pytest.raises(ValueError, match="scaled=True"):
        federated.expected_distance(c, federated.FedAvg(scheme="I", K=2, scaled=True), T=5)
    with pytest.raises(ValueError, match="p must sum to 1"):
        federated.stable_point([1.0, 2.0], [0.1, 0.2], [0.5, 0.6])
    with pytest.raises(ValueError, match="eps must hold one"):
        federated.stable_point([1.0, 2.0], [0.1, 0.2, 0.3])
    with pytest.raises(TypeError, match="steps must be"):
        federated.p_fedavg(c, federated.FedAvg(steps="fast"), T=5, trials=2)
    with pytest.raises(ValueError, match="beta"):
        StepRule.decaying(-1.0, 2.0)
    with pytest.raises(ValueError, match="scheme must be one of"):
        federated.p_fedavg(c, federated.FedAvg(scheme="III"), T=5, trials=2)


# ----------------------------------------------------------------- bilevel
def local_solution_from_definition(prob, i, deployed):
    """argmin_x F_i(x), with y*(x) from its own least-squares problem, by numerical minimization."""
    b = prob.b[i] + prob.eps_c[i] * prob.A[i] @ deployed
    dd = prob.dd[i] + prob.eps_d[i] * prob.C[i] @ deployed
    n, d = prob.n, prob.d

    def y_star(x):
        # min_y (1/n)‖dd − C y‖² + (λ_y/2)‖y − x‖² as one stacked least-squares problem
        M = np.vstack([prob.C[i] / math.sqrt(n), math.sqrt(prob.lam_y / 2) * np.eye(d)])
        rhs = np.concatenate([dd / math.sqrt(n), math.sqrt(prob.lam_y / 2) * x])
        return np.linalg.lstsq(M, rhs, rcond=None)[0]

    F = lambda x: np.mean((b - prob.A[i] @ x) ** 2) + 0.5 * prob.lam_x * np.sum((x - y_star(x)) ** 2)  # noqa: E731
    return optimize.minimize(F, np.zeros(d), method="BFGS", options={"gtol": 1e-11}).x


def test_local_solutions_minimize_the_bilevel_objective_of_the_definition():
    prob = bilevel.BilevelRegression.synthetic(M=3, n=20, d=3, eps_c=0.4, eps_d=1.5, lam_x=0.5, lam_y=0.3, seed=2)
    deployed = np.array([0.3, -0.2, 0.5])
    sol = prob.local_solutions(deployed)
    for i in range(3):
        np.testing.assert_allclose(sol[i], local_solution_from_definition(prob, i, deployed), atol=1e-5)


def test_jacobian_is_the_derivative_of_the_rrm_map():
    prob = bilevel.BilevelRegression.synthetic(eps_c=[0.1 * i for i in range(10)], eps_d=2.0, lam_x=1.0, lam_y=0.5)
    x = np.random.default_rng(0).standard_normal(prob.d)
    h = 1e-5
    fd = np.array([(prob.rrm_map(x + h * e) - prob.rrm_map(x - h * e)) / (2 * h) for e in np.eye(prob.d)]).T
    np.testing.assert_allclose(prob.jacobian, fd, atol=1e-8)


def test_equal_sensitivities_give_the_average_as_the_exact_rate():
    eps = np.linspace(0.2, 1.4, 10)
    prob = bilevel.BilevelRegression.synthetic(eps_c=eps, eps_d=eps, lam_x=0.7, lam_y=2.0, seed=4)
    np.testing.assert_allclose(prob.jacobian, np.mean(eps) * np.eye(prob.d), atol=1e-12)


@pytest.mark.parametrize("lam", [1e-3, 1.0])
def test_fbi_rrm_converges_below_the_threshold_and_diverges_above(lam):
    base = bilevel.BilevelRegression.synthetic(eps_c=0.3, eps_d=2.0, lam_x=lam, lam_y=lam, seed=1)
    s = base.threshold()
    below = base.with_sensitivities(0.95 * s * base.eps_c, 0.95 * s * base.eps_d)
    above = base.with_sensitivities(1.05 * s * base.eps_c, 1.05 * s * base.eps_d)
    pb, pa = bilevel.fbi_rrm(below, rounds=300), bilevel.fbi_rrm(above, rounds=300)
    assert pb.gap[-1] < 1e-4 * pb.gap[0]
    assert pa.gap[-1] > 1e2 * pa.gap[0]
    assert pb.rate(50) == pytest.approx(below.spectral_radius, rel=1e-3)
    assert below.spectral_radius == pytest.approx(0.95) and above.spectral_radius == pytest.approx(1.05)
    assert base.bound_threshold() <= s
    with pytest.raises(ValueError, match="no attracting stable point"):
        above.stable_point()
    np.testing.assert_allclose(below.rrm_map(below.stable_point()), below.stable_point(), atol=1e-9)


def test_bilevel_bad_input():
    with pytest.raises(ValueError, match="A must have shape"):
        bilevel.BilevelRegression(np.zeros((3, 4)), np.zeros(3), np.zeros((3, 4)), np.zeros(3), eps_c=0.1,
                                  eps_d=0.1, lam_x=1.0, lam_y=1.0)
    with pytest.raises(ValueError, match="eps_c"):
        bilevel.BilevelRegression.synthetic(eps_c=-0.1)
    with pytest.raises(ValueError, match="lam_x"):
        bilevel.BilevelRegression.synthetic(lam_x=0.0)
    prob = bilevel.BilevelRegression.synthetic()
    with pytest.raises(ValueError, match="x0"):
        bilevel.fbi_rrm(prob, np.zeros(3), rounds=3)
    with pytest.raises(ValueError, match="rounds"):
        bilevel.fbi_rrm(prob, rounds=0)


# ---------------------------------------------------------------- stateful
def test_the_only_stable_privacy_level_is_no_privacy():
    eps = np.array([0.2, 0.4, 0.7, 1.0, 2.0, 5.0, np.inf])
    q, r, T, n0 = 0.3, 0.6, 40, 400
    res = stateful.level_response(bernoulli.RandomizedResponse(eps), behaviour.Memoryless(q=q, r=r), T=T, n0=n0)
    assert np.all(res.best_response == eps.size - 1)
    assert res.stable.tolist() == [np.inf]
    # independent recomputation: populations from Lemma 2's growth factor, errors by integrating eq. 1's variance
    pops = []
    for e in eps:
        N = float(n0)
        C = bernoulli.growth_factor(bernoulli.beta_from_epsilon(e), q=q, r=r)
        for _ in range(T):
            N = min(max(N * C, 1.0), 20000.0)
        pops.append(N)
    np.testing.assert_allclose(res.population, pops, rtol=1e-9)
    err = [integrate.quad(lambda mu: bernoulli.estimator_variance(mu, bernoulli.beta_from_epsilon(e), N), 0, 1)[0]
           for e, N in zip(eps, pops)]
    np.testing.assert_allclose(res.performative_risk, err, rtol=1e-7)
    assert res.optimal == eps[int(np.argmin(err))] and np.isfinite(res.optimal)


def test_level_response_bad_input():
    with pytest.raises(ValueError, match="1-D grid"):
        stateful.level_response(bernoulli.RandomizedResponse(1.0), behaviour.Memoryless(q=0.3, r=0.6), T=5, n0=10)
    with pytest.raises(ValueError, match="scalar parameters"):
        stateful.level_response(bernoulli.RandomizedResponse([1.0, 2.0]), behaviour.Memoryless(q=[0.3, 0.4], r=0.6),
                                T=5, n0=10)
    from perfpriv.gaussian import GaussianMean     # a mechanism built without a level has no grid to respond to
    with pytest.raises(ValueError, match=r"^the mechanism's gamma must be a 1-D grid .*got None"):
        stateful.level_response(GaussianMean(tau=0.02, d=3, R=8.0), behaviour.Memoryless(q=0.3, r=0.6), T=5, n0=10)


# ------------------------------------------------------------ participation
Law, FedAvg = participation.ClientLaw, federated.FedAvg
SMALL = dict(tau=0.3, R=5.0, clients=Law(m=1.0, m_sd=1.0, eps=0.5, eps_sd=0.3), fedavg=FedAvg(E=2, steps=0.2))


@pytest.mark.parametrize("gamma", [0.3, 1.0])
def test_engine_mechanism_agrees_with_the_agent_reference(gamma):
    mech = participation.PrivateFederatedRound(gamma, **SMALL)
    users, loop = behaviour.Memoryless(q=0.5, r=0.3), dict(T=8, n0=15, policy=Policy(cap=40))
    agents = engine.simulate_agents(mech, users, trials=300, seed=2, **loop)
    fast = engine.simulate(mech, users, trials=3000, seed=3, **loop)
    checks = [(agents.population[:, -1], fast.population[:, -1]), (agents.sq_error[:, -1], fast.sq_error[:, -1]),
              (agents.leak_fraction.mean(axis=1), fast.leak_fraction.mean(axis=1)),
              (agents.details["theta"][:, -1], fast.details["theta"][:, -1])]
    for a, f in checks:
        se = math.hypot(a.std(ddof=1) / math.sqrt(a.size), f.std(ddof=1) / math.sqrt(f.size))
        assert abs(a.mean() - f.mean()) < 4 * se + 1e-12


def test_model_error_follows_its_exact_second_moment_recursion():
    # q = r = 0: n clients every round; E = 1, no clipping: e' = a e + h·noise, Var = (s_m² + σ² + γ² + s_ε² θ²)/n
    n, gamma, h, eps, m, sm, se_, sig, T = 30, 0.8, 0.4, 0.5, 1.0, 1.0, 0.3, 1.0, 12
    law = Law(m=m, m_sd=sm, eps=eps, eps_sd=se_, sigma=sig)
    mech = participation.PrivateFederatedRound(gamma, tau=0.3, R=1e4, clients=law, fedavg=FedAvg(E=1, steps=h))
    run = engine.simulate(mech, behaviour.Memoryless(q=0.0, r=0.0), T=T, n0=n, trials=6000, seed=4)
    ps, a = m / (1 - eps), 1 - h * (1 - eps)
    e1, e2 = -ps, ps**2
    for t in range(T):
        theta2 = e2 + 2 * ps * e1 + ps**2
        e2 = a**2 * e2 + h**2 * (sm**2 + sig**2 + gamma**2 + se_**2 * theta2) / n
        e1 = a * e1
        sq = run.sq_error[:, t]
        assert abs(sq.mean() - e2) < 4 * sq.std(ddof=1) / math.sqrt(sq.size), t


def test_leak_probability_is_the_books_at_standardized_noise():
    gam = np.array([0.5, 1.0, 2.0])
    for theta0 in (0.0, 4.0):
        law = Law(m=1.0, m_sd=1.0, eps=0.5, eps_sd=0.3)
        run = engine.simulate(participation.PrivateFederatedRound(gam, tau=0.3, R=1e6, clients=law,
                                                                  fedavg=FedAvg(E=1, steps=0.5), theta0=theta0),
                              behaviour.Memoryless(q=0.0, r=0.0), T=1, n0=40, trials=3000, seed=6)
        mech = run.mechanism
        lf = run.leak_fraction[..., 0]
        p = mech.leak_probability_at(theta0, 40, gam)
        assert np.all(np.abs(lf.mean(axis=1) - p) < 4 * lf.std(axis=1, ddof=1) / math.sqrt(lf.shape[1]))
        v = mech.record_spread(theta0)
        direct = leakage.marginal_leak_probability(40, gam / math.sqrt(v), tau=0.3, d=1, R=1e3).p
        np.testing.assert_allclose(p, direct)


def test_survival_threshold_sets_the_growth_factor_to_one_and_scales_with_the_spread():
    mech = participation.PrivateFederatedRound(1.0, tau=0.3, R=10.0, clients=Law(m=2.0, eps=0.8, eps_sd=0.3))
    gc = mech.survival_threshold([0.0, 10.0], n=100, q=0.5, r=0.2)
    p = mech.leak_probability_at(np.array([0.0, 10.0]), 100, gc)
    np.testing.assert_allclose(1 + 0.2 - 0.7 * p, 1.0, atol=1e-9)
    assert gc[1] / gc[0] == pytest.approx(math.sqrt(mech.record_spread(10.0) / mech.record_spread(0.0)))
    with pytest.raises(ValueError, match="r must be > 0"):
        mech.survival_threshold(0.0, n=100, q=0.5, r=0.0)
    with pytest.raises(ValueError, match="E=1"):
        participation.PrivateFederatedRound(1.0, tau=0.3, R=10.0, fedavg=FedAvg(E=3)).survival_threshold(
            0.0, n=50, q=0.5, r=0.2)


def test_a_level_alone_equals_its_row_in_a_grid_and_the_given_mechanism_keeps_no_state():
    law = dict(tau=0.3, R=5.0, clients=Law(m_sd=1.0, eps_sd=0.2), fedavg=FedAvg(E=2))
    kw = dict(T=6, n0=12, policy=Policy(cap=30), trials=5, seed=9)
    users = behaviour.Memoryless(q=0.5, r=0.3)
    grid = engine.simulate(participation.PrivateFederatedRound([0.4, 1.5], **law), users, **kw)
    alone = engine.simulate(participation.PrivateFederatedRound(1.5, **law), users, **kw)
    np.testing.assert_array_equal(grid.population[1], alone.population)
    np.testing.assert_array_equal(grid.sq_error[1], alone.sq_error)
    mech = participation.PrivateFederatedRound([0.4, 1.5], tau=0.3, R=5.0)
    run = engine.simulate(mech, behaviour.Memoryless(q=0.5, r=0.3), T=4, n0=10, trials=3, seed=1)
    assert run.mechanism_state.shape == (2, 3, 1)
    np.testing.assert_allclose(run.mechanism_state[..., 0], run.details["theta"][..., -1])


def test_stateful_mechanism_refuses_what_it_cannot_do():
    mech = participation.PrivateFederatedRound(1.0, tau=0.3, R=5.0)
    with pytest.raises(ValueError, match="does not follow mechanism states"):
        engine.mean_field(mech, behaviour.Memoryless(q=0.5, r=0.3), T=3, n0=10)
    from perfpriv import keyed
    keys = keyed.root_key(0).child(np.arange(2))[None, :]
    with pytest.raises(ValueError, match="run it through"):
        mech.draw_round(np.full((1, 2), 5), np.ones((1, 1)), keys, np.ones((1, 2), bool), 1)
    with pytest.raises(ValueError, match="depends on its state"):
        mech.expected_error(np.full(2, 5.0), 1.0)


def test_participation_bad_input():
    for eps in (1.0, -1.0, 1.5):        # no stable point (1.0) or one that repels retraining (|eps| >= 1)
        with pytest.raises(ValueError, match=r"^eps must be in \(-1, 1\)"):
            participation.ClientLaw(eps=eps)
    with pytest.raises(ValueError, match="E must be"):
        FedAvg(E=0)
    with pytest.raises(ValueError, match="gamma"):
        participation.PrivateFederatedRound(0.0, tau=0.3, R=5.0)
    with pytest.raises(TypeError, match="unexpected keyword argument 'Q'"):
        participation.PrivateFederatedRound(1.0, tau=0.3, R=5.0, Q=1)
    with pytest.raises(TypeError, match="steps must be"):
        FedAvg(steps="big")
    # the grouped settings arrive as their objects: the old keywords are unknown, other objects refused by name
    with pytest.raises(TypeError, match="unexpected keyword argument 'eps'"):
        participation.PrivateFederatedRound(1.0, tau=0.3, R=5.0, eps=0.5)
    for clients in (None, {"eps": 0.5}, GaussianClients.example(N=3)):
        with pytest.raises(TypeError, match="^clients must be a perfpriv.performative.ClientLaw"):
            participation.PrivateFederatedRound(1.0, tau=0.3, R=5.0, clients=clients)
    for fedavg in (None, 2, {"E": 2}):
        with pytest.raises(TypeError, match="^fedavg must be a perfpriv.performative.FedAvg"):
            participation.PrivateFederatedRound(1.0, tau=0.3, R=5.0, fedavg=fedavg)
    for fedavg in (FedAvg(scheme="I", K=3), FedAvg(scheme="II", K=3, scaled=True)):
        with pytest.raises(ValueError, match="^fedavg must have scheme 'full'"):
            participation.PrivateFederatedRound(1.0, tau=0.3, R=5.0, fedavg=fedavg)
    with pytest.raises(ValueError, match=r"^m must be a number or a vector of d=2 coordinates"):
        participation.PrivateFederatedRound(1.0, tau=0.3, R=5.0, clients=Law(m=[1.0, 2.0, 3.0]), d=2)


def test_the_grouped_form_builds_the_mechanism_of_the_old_keywords():
    # issue 31: m, m_sd, eps, eps_sd, sigma became a ClientLaw and E, step, batch a FedAvg. The numbers below were
    # recorded from PrivateFederatedRound(..., m=[2.0, -1.0], m_sd=0.7, eps=0.6, eps_sd=0.2, sigma=1.5, E=3,
    # step=StepRule.decaying(1.0, 4.0), batch=2, theta0=[1.0, 0.5], d=2, statistic="exact") before the change
    mech = participation.PrivateFederatedRound(
        [0.5, 2.0], tau=0.3, R=10.0, clients=Law(m=[2.0, -1.0], m_sd=0.7, eps=0.6, eps_sd=0.2, sigma=1.5),
        fedavg=FedAvg(E=3, steps=StepRule.decaying(1.0, 4.0), batch=2), theta0=[1.0, 0.5], d=2, statistic="exact")
    run = engine.simulate(mech, behaviour.Memoryless(q=0.3, r=0.2), T=6, n0=20, trials=3, policy=Policy(cap=60),
                          seed=7)
    assert float(run.sq_error.sum()) == 338.3593100604853
    assert float(run.details["theta"].sum()) == 96.27637721226829
    assert run.population.tolist() == [[[20, 18, 17, 16, 18, 19, 17], [20, 22, 27, 28, 29, 32, 34],
                                        [20, 22, 21, 24, 23, 23, 25]],
                                       [[20, 22, 25, 26, 31, 32, 37], [20, 25, 30, 37, 45, 58, 60],
                                        [20, 23, 26, 33, 40, 46, 55]]]
    # the defaults: the old PrivateFederatedRound(1.0, tau=0.5, R=20.0) (m=1, m_sd=1, eps=0.5, E=1, step 0.5)
    default = participation.PrivateFederatedRound(1.0, tau=0.5, R=20.0)
    run = engine.simulate(default, behaviour.Memoryless(q=0.3, r=0.2), T=6, n0=20, trials=3, policy=Policy(cap=60),
                          seed=7)
    assert float(run.sq_error.sum()) == 17.934280706241058 and int(run.population.sum()) == 677
    assert default.fedavg == FedAvg(E=1, steps=0.5, batch=1) and default.clients == Law()
    # options() rebuilds the mechanism, with the steps it filled in
    again = participation.PrivateFederatedRound([0.5, 2.0], **mech.options())
    assert again.options() == mech.options() and repr(again) == repr(mech)


def test_stationary_error_is_the_limit_of_the_recursion_and_of_the_simulation():
    n, h, eps, m, sm, se_, sig = 40, 0.5, 0.6, 1.0, 1.0, 0.3, 1.0
    law = Law(m=m, m_sd=sm, eps=eps, eps_sd=se_, sigma=sig)
    mech = participation.PrivateFederatedRound(1.0, tau=0.3, R=1e4, clients=law, fedavg=FedAvg(E=1, steps=h))
    gam = np.array([0.5, 2.0])
    ps, a = m / (1 - eps), 1 - h * (1 - eps)
    for g, formula in zip(gam, mech.stationary_error(n, gam)):
        e1, e2 = 0.0, 1.0                        # iterate the exact second-moment recursion to its limit
        for _ in range(2000):
            theta2 = e2 + 2 * ps * e1 + ps**2
            e2 = a**2 * e2 + h**2 * (sm**2 + sig**2 + g**2 + se_**2 * theta2) / n
            e1 = a * e1
        assert formula == pytest.approx(e2, rel=1e-10)
    run = engine.simulate(participation.PrivateFederatedRound(gam, tau=0.3, R=1e4, clients=law,
                                                              fedavg=FedAvg(E=1, steps=h), theta0=ps),
                          behaviour.Memoryless(q=0.0, r=0.0), T=60, n0=n, trials=3000, seed=8)
    last = run.sq_error[..., -1]
    assert np.all(np.abs(last.mean(axis=1) - mech.stationary_error(n, gam))
                  < 4 * last.std(axis=1, ddof=1) / math.sqrt(last.shape[1]))
    with pytest.raises(ValueError, match="no stationary law"):
        participation.PrivateFederatedRound(1.0, tau=0.3, R=5.0, clients=Law(eps=0.5),
                                            fedavg=FedAvg(steps=5.0)).stationary_error(10, 1.0)
    with pytest.raises(ValueError, match="constant step"):
        participation.PrivateFederatedRound(1.0, tau=0.3, R=5.0, fedavg=FedAvg(steps=StepRule.decaying(1.0, 2.0))
                                            ).stationary_error(10, 1.0)


# ------------------------------------------------------------ faces
def _faces():
    """perfpriv.plots and perfpriv.widgets (skipped while sibling modules they import are mid-migration)."""
    plots = pytest.importorskip("perfpriv.plots", exc_type=ImportError)
    widgets = pytest.importorskip("perfpriv.widgets", exc_type=ImportError)
    return plots, widgets


def test_every_figure_returns_a_figure_and_refuses_empty_input():
    plots, _ = _faces()
    from matplotlib.figure import Figure

    sq = prediction.PerformativeProblem.squared(m=1.0, A=0.5)
    lin = prediction.PerformativeProblem.linear(m=1.0, A=0.3)
    paths = {"rrm": prediction.repeated_risk_minimization(sq, [0.0], T=5)}
    level = stateful.level_response(bernoulli.RandomizedResponse([0.3, 1.0, 3.0]), behaviour.Memoryless(q=0.3, r=0.6),
                                    T=10, n0=100)
    c = GaussianClients.example(N=5, m_mean=1.0, eps_mean=0.5)
    mom = {"full": federated.expected_distance(c, T=50)}
    runs = {"full": federated.p_fedavg(c, T=50, trials=5, seed=0)}
    prob = bilevel.BilevelRegression.synthetic(M=3, n=10, d=2, eps_c=0.5, eps_d=0.5)
    part = {"a": engine.simulate(participation.PrivateFederatedRound([0.5, 2.0], tau=0.3, R=10.0,
                                                                     fedavg=FedAvg(E=1, steps=0.5)),
                                 behaviour.Memoryless(q=0.5, r=0.2), T=25, n0=20, trials=3, policy=Policy(cap=50),
                                 seed=0)}
    figs = [plots.figure_retraining(paths, lin), plots.figure_level_response(level, deployed=[0]),
            plots.figure_fedavg_convergence(mom, runs), plots.figure_fedavg_factors({"E": ([1, 2], {"x": [1.0, 0.5]})}),
            plots.figure_bilevel({"p": bilevel.fbi_rrm(prob, rounds=5)}, prob, eps_c=np.linspace(0, 2, 5),
                                 eps_d=np.linspace(0, 2, 5)),
            plots.figure_participation(part, show=[0, 1], last=5)]
    assert all(isinstance(f, Figure) for f in figs)
    for fn, args in ((plots.figure_retraining, ({}, lin)), (plots.figure_fedavg_convergence, ({},)),
                     (plots.figure_fedavg_factors, ({},)), (plots.figure_participation, ({},))):
        with pytest.raises(ValueError, match="non-empty"):
            fn(*args)
    with pytest.raises(ValueError, match="paths_of"):
        plots.figure_participation(part, paths_of="b")


def test_explorer_draws_its_default_and_reports_its_values():
    _, widgets = _faces()
    from matplotlib.figure import Figure

    mech = participation.PrivateFederatedRound(0.3, tau=0.3, R=10.0, clients=Law(m=2.0, m_sd=1.0, eps=0.8, eps_sd=0.3),
                                               fedavg=FedAvg(steps=0.5))
    assert isinstance(widgets.draw_participation(mech, behaviour.Memoryless(q=0.5, r=0.2), trials=2, T=10), Figure)
    with pytest.raises(ValueError, match="one noise scale"):
        widgets.draw_participation(participation.PrivateFederatedRound([0.3, 1.0], tau=0.3, R=10.0),
                                   behaviour.Memoryless(q=0.5, r=0.2))
    with pytest.raises(TypeError, match="users must be"):
        widgets.draw_participation(mech, behaviour.LeakCount(k=2, q=0.5, r=0.2))
    with pytest.raises(ValueError, match="users must hold one q"):
        widgets.draw_participation(mech, behaviour.Memoryless(q=[0.5, 0.3], r=0.2))
    ex = widgets.participation_explorer()
    assert repr(ex).startswith("<Private federated rounds explorer: gamma=0.6")


def test_fbi_rrm_sufficient_bound_is_exact_in_dimension_one_and_for_isotropic_designs_and_strict_otherwise():
    # the bound sums per-client norms; rho(J) is the spectral radius of the exact Jacobian (eigenvalues)
    general = bilevel.BilevelRegression.synthetic(d=5, eps_c=0.5, eps_d=3.0, lam_x=1.0, lam_y=1.0, seed=0)
    assert general.bound_threshold() < 0.99 * general.threshold()
    for seed in range(3):
        line = bilevel.BilevelRegression.synthetic(d=1, eps_c=0.5, eps_d=3.0, lam_x=1.0, lam_y=1.0, seed=seed)
        assert line.bound_threshold() == pytest.approx(line.threshold(), rel=1e-9)
    rng = np.random.default_rng(3)
    iso = [np.linalg.qr(rng.standard_normal((50, 4)))[0] * np.sqrt(50) * s for s in (1.0, 0.5, 2.0, 1.5)]
    prob = bilevel.BilevelRegression(np.stack(iso[:2]), rng.standard_normal((2, 50)), np.stack(iso[2:]),
                                rng.standard_normal((2, 50)), eps_c=0.7, eps_d=2.0, lam_x=0.5, lam_y=2.0)
    assert np.allclose(prob.jacobian, prob.jacobian[0, 0] * np.eye(4), atol=1e-12)   # isotropic: J a multiple of I
    assert prob.bound_threshold() == pytest.approx(prob.threshold(), rel=1e-9)


def test_flags_are_booleans_not_truthy_values():
    # a string 'False' is truthy: it must be refused, never read as True
    from perfpriv import regression
    from perfpriv.performative import federated
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(20, 3)), rng.normal(size=20)
    with pytest.raises(TypeError, match="keep_penalty"):
        regression.leave_one_out(X, y, lam=1.0, keep_penalty="False")
    clients = federated.GaussianClients.example(seed=0)
    with pytest.raises(TypeError, match="scaled"):
        federated.StepRule.default(clients, 1, scaled=0)
    with pytest.raises(ValueError, match="E"):
        federated.StepRule.default(clients, float("nan"))
    with pytest.raises(TypeError, match="scaled"):
        federated.p_fedavg(clients, federated.FedAvg(scaled=0), T=3)


def test_survival_threshold_at_extreme_thresholds_is_zero_or_infinite():
    spread = Law(m=2.0, eps=0.8, eps_sd=0.3)
    # was scipy's "f(a) and f(b) must have different signs" from a fixed bracket [1e-4, 1e4] of the noise
    mech = participation.PrivateFederatedRound(0.6, tau=1e300, R=10.0, clients=spread)
    assert mech.survival_threshold([0.0, 10.0], n=50, q=0.5, r=0.2).tolist() == [0.0, 0.0]    # nobody ever leaks
    mech = participation.PrivateFederatedRound(0.6, tau=1e-300, R=10.0, clients=spread)
    assert mech.survival_threshold(0.0, n=50, q=0.5, r=0.2) == np.inf                        # everybody leaks
    # a threshold outside the old bracket is found by widening it: the growth factor is 1 there
    mech = participation.PrivateFederatedRound(0.6, tau=1e-7, R=10.0, clients=spread)
    g = mech.survival_threshold(0.0, n=50, q=0.5, r=0.2)
    u = g / math.sqrt(float(mech.record_spread(0.0)))
    assert u > 1e4
    p = leakage.marginal_leak_probability(50, u, tau=1e-7, d=1, R=1e3 * (1 + u), statistic="paper",
                                          method="quadrature").p
    assert float(p) == pytest.approx(0.2 / 0.7, rel=1e-6)


def test_risks_of_huge_models_are_the_exact_values_rounded_not_inf_minus_inf():
    # was NaN (inf - inf) from about 1e154 on. Linear problem, A = 1/2: PR(θ) = ½θ² − θ(m + θ/2) = −mθ, whose
    # two large terms cancel exactly; squared problem: PR = ½((1 − A)θ − m)² + ½, beyond the largest double
    linear = prediction.PerformativeProblem.linear(m=[2.0], A=0.5)
    np.testing.assert_array_equal(linear.performative_risk([[1e200], [3.0], [-1e300]]), [-2e200, -6.0, 2e300])
    squared = prediction.PerformativeProblem.squared(m=[1.0], A=0.5)
    assert squared.performative_risk([1e300]) == np.inf and squared.performative_risk([-1e300]) == np.inf
    # linear: DR(θ; θ') = ½θ² − θ(m + θ'/2) = −mθ + ½θ(θ − θ'), exact in fractions at θ = 1e160 and θ' the next
    # double above it (about -8e303, while each term is near 1e320)
    from fractions import Fraction
    deployed = float(np.nextafter(1e160, np.inf))
    th, dep = Fraction(1e160), Fraction(deployed)
    exact = th * th / 2 - th * (2 + dep / 2)
    assert linear.decoupled_risk([1e160], [deployed]) == float(exact) and -1e304 < float(exact) < -1e303
    assert squared.performative_risk([0.75]) == pytest.approx(0.5 * (0.5 * 0.75 - 1.0) ** 2 + 0.5, rel=1e-15)


def test_the_federated_rounds_advance_refuses_what_no_engine_passes_by_name():
    # issue 32: advance checked nothing: n = -1 was numpy's "repeats may not contain negative values",
    # n = 1e12 a 7 TiB allocation error, gamma = NaN blamed the steps, keys = 0 an AttributeError, live = 'x'
    # and t = 0 passed silently, a NaN state "overflowed"
    from perfpriv import keyed
    from perfpriv.performative.participation import PrivateFederatedRound
    mech = PrivateFederatedRound(1.0, tau=0.3, R=10.0).resolved("paper")
    state, keys, live, n = mech.initial_state((3,)), keyed.root_key(0).child(np.arange(3)), np.ones(3, bool), \
        np.array([10, 10, 10])
    for args, kind, match in (((state, np.array([10, -1, 10]), 1.0, keys, live, 1), ValueError, "^n must hold"),
                              ((state, np.array([10, 10**12, 10]), 1.0, keys, live, 1), ValueError, "^n is too large"),
                              ((state, n, np.nan, keys, live, 1), ValueError, "^gamma must be"),
                              ((state, n, 1.0, 0, live, 1), TypeError, "^keys must be"),
                              ((state, n, 1.0, keys, "x", 1), TypeError, "^live must be"),
                              ((state, n, 1.0, keys, live, 0), ValueError, "^t must be"),
                              (("x", n, 1.0, keys, live, 1), ValueError, "^state must be the deployed models"),
                              ((np.zeros((3, 5)), n, 1.0, keys, live, 1), ValueError, "^state must be the deployed"),
                              ((state * np.nan, n, 1.0, keys, live, 1), ValueError, "^state must hold finite")):
        with pytest.raises(kind, match=match):
            mech.advance(*args)
    first = mech.advance(state, n, 1.0, keys, live, 1)
    again = mech.advance(state, n, 1.0, keys, live, 1)
    np.testing.assert_array_equal(first[0].sq_error, again[0].sq_error)
    np.testing.assert_array_equal(first[1], again[1])
