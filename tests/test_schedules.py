"""Tests of perfpriv.schedules and of the schedule support of the simulators."""

import itertools

import numpy as np
import pytest

from perfpriv import bernoulli as B
from perfpriv import dynamics, optimize
from perfpriv import gaussian as G
from perfpriv import schedules as S

Z = 4.5  # z-score tolerance of Monte Carlo comparisons
DATA = dict(d=12, R=10.0)
TAU = 0.02


# --------------------------------------------------------------------------
# the simulators accept schedules
# --------------------------------------------------------------------------
def test_gaussian_constant_schedule_reproduces_constant_gamma_draw_for_draw():
    a = G.simulate(2.0, TAU, 0.3, 0.6, T=4, n0=60, trials=3, seed=5, **DATA)
    b = G.simulate(np.full(4, 2.0), TAU, 0.3, 0.6, T=4, n0=60, trials=3, seed=5, **DATA)
    assert np.array_equal(a.population, b.population) and np.array_equal(a.error, b.error)
    a = G.simulate_agents(2.0, TAU, 0.3, 0.6, T=2, n0=8, trials=2, seed=5, d=2, R=10.0)
    b = G.simulate_agents([2.0, 2.0], TAU, 0.3, 0.6, T=2, n0=8, trials=2, seed=5, d=2, R=10.0)
    assert np.array_equal(a.population, b.population) and np.array_equal(a.error, b.error)


def test_gaussian_schedule_uses_gamma_t_in_round_t():
    # with no leaving/recruiting the population is constant, and round t's error has mean
    # (gamma_t^2 d + d) / n0 (Lemma 3): a large gamma in round 2 only must show in round 2 only
    g = np.array([0.1, 20.0, 0.1])
    run = G.simulate(g, TAU, 0.0, 0.0, T=3, n0=50, trials=400, seed=2, **DATA)
    mean = run.error.mean(axis=0)
    se = run.error.std(axis=0, ddof=1) / np.sqrt(400)
    expected = G.mahalanobis_error(g, 50, d=12)
    assert np.all(np.abs(mean - expected) < Z * se)


def test_bernoulli_constant_schedule_reproduces_constant_epsilon_and_grid():
    a = B.simulate([0.5, 2.0], 0.3, 0.6, T=12, n0=80, trials=4, seed=9)
    b = B.simulate(np.repeat([[0.5], [2.0]], 12, axis=1), 0.3, 0.6, T=12, n0=80, trials=4, seed=9,
                   per_round=True)
    assert np.array_equal(a.population, b.population) and np.array_equal(a.sq_error, b.sq_error)
    c = B.simulate(np.full(12, 2.0), 0.3, 0.6, T=12, n0=80, trials=4, seed=9, per_round=True)
    assert np.array_equal(c.sq_error, a.sq_error[1]) and c.epsilon.shape == (12,)
    m1 = B.mean_field_error(0.5, 0.3, 0.6, T=12, n0=80)
    m2 = B.mean_field_error(np.full(12, 0.5), 0.3, 0.6, T=12, n0=80, per_round=True)
    assert np.array_equal(m1, m2)


def test_bernoulli_agents_accept_a_schedule():
    a = B.simulate_agents(1.0, 0.3, 0.6, T=3, n0=10, trials=2, seed=1)
    b = B.simulate_agents([1.0] * 3, 0.3, 0.6, T=3, n0=10, trials=2, seed=1, per_round=True)
    assert np.array_equal(a.sq_error, b.sq_error)
    c = B.simulate_agents([0.5, 1.0, 3.0], 0.3, 0.6, T=3, n0=10, trials=2, seed=1, per_round=True)
    assert c.population.shape == (2, 4)


def test_bernoulli_schedule_mean_field_population_uses_eps_t_in_round_t():
    eps = np.array([np.inf, 0.5])
    pop = B.mean_field_population(eps, 0.3, 0.6, T=2, n0=100, per_round=True)
    c1 = B.growth_factor(0.5, 0.3, 0.6)
    c2 = B.growth_factor(B.beta_from_epsilon(0.5), 0.3, 0.6)
    assert np.allclose(pop, [100, 100 * c1, 100 * c1 * c2], rtol=1e-14)


@pytest.mark.parametrize("call, name", [
    (lambda: G.simulate([1.0, 2.0], TAU, 0.3, 0.6, T=3, n0=10, **DATA), "gamma"),
    (lambda: G.simulate([1.0, -2.0], TAU, 0.3, 0.6, T=2, n0=10, **DATA), "gamma"),
    (lambda: B.simulate([1.0, 2.0], 0.3, 0.6, T=3, n0=10, per_round=True), "epsilon"),
    (lambda: B.simulate([[1.0, 2.0]], 0.3, 0.6, T=2, n0=10), "epsilon"),
    (lambda: B.mean_field_error([1.0, 2.0], 0.3, 0.6, T=3, n0=10, per_round=True), "epsilon"),
])
def test_simulators_reject_a_schedule_of_the_wrong_length(call, name):
    with pytest.raises(ValueError, match=name):
        call()


# --------------------------------------------------------------------------
# the Gaussian regret
# --------------------------------------------------------------------------
@pytest.mark.parametrize("gamma, q, r, n0", [(0.3, 0.3, 0.6, 200), (2.0, 0.5, 0.2, 200),
                                             (1.0, 0.1, 0.9, 15000)])  # the last one hits the cap
def test_constant_schedule_regret_equals_dynamics_mean_field_cumulative_error_exactly(gamma, q, r, n0):
    T = 8
    mine = S.mean_field_regret(np.full(T, gamma), q, r, TAU, n0=n0, **DATA)
    theirs = dynamics.mean_field_cumulative_error(gamma, TAU, q, r, T=T, n0=n0, rounds="algorithm", **DATA)
    assert mine == theirs


def test_best_constant_matches_optimize_optimal_gamma_mean_field_with_algorithm_rounds():
    T, n0 = 6, 200
    res = S.optimal_schedule(0.3, 0.6, TAU, T=T, n0=n0, starts="constant", polish=0, **DATA)
    ref = optimize.optimal_gamma(0.3, 0.6, TAU, T=T, n0=n0, objective="mean_field", rounds="algorithm", **DATA)
    assert res.constant == ref.gamma
    assert res.constant_regret == pytest.approx(ref.value, rel=1e-12)


def test_batch_of_schedules_equals_one_by_one():
    g = np.array([[2.0, 1.0, 0.5], [0.5, 0.5, 0.5], [0.1, 3.0, 1.0]])
    batch = S.mean_field_regret(g, 0.3, 0.6, TAU, n0=200, **DATA)
    single = [S.mean_field_regret(row, 0.3, 0.6, TAU, n0=200, **DATA) for row in g]
    assert np.allclose(batch, single, rtol=1e-13, atol=0)


def test_adjoint_gradient_matches_central_differences_of_the_exact_regret():
    pb = S._problem(0.3, 0.6, TAU, 200, 12, 10.0, None, None, "paper", 20000, 1, "auto", None, None)
    u = np.log([3.0, 1.5, 0.8, 0.4])
    value, grad = S._value_and_grad(u, pb)
    assert value == pytest.approx(S._regret(np.exp(u), pb)[0], rel=1e-13)
    h = 1e-5
    fd = [(S._regret(np.exp(u + h * e), pb)[0] - S._regret(np.exp(u - h * e), pb)[0]) / (2 * h)
          for e in np.eye(4)]
    assert np.allclose(grad, fd, rtol=1e-5, atol=1e-9)


@pytest.mark.parametrize("q, r, tau", [(0.3, 0.6, 0.02), (0.7, 0.2, 0.02), (0.1, 0.9, 0.2)])
def test_optimal_schedules_never_do_worse_than_the_best_constant(q, r, tau):
    T = 4
    res = S.optimal_schedule(q, r, tau, T=T, n0=200, **DATA)
    assert res.regret <= res.constant_regret
    for fam in (S.optimal_two_phase, S.optimal_geometric):
        out = fam(q, r, tau, T=T, n0=200, **DATA)
        assert out.regret <= out.constant_regret
        assert res.regret <= out.regret * (1 + 1e-9)  # the free schedule contains both families


def test_reported_regret_is_mean_field_regret_of_the_reported_schedule():
    res = S.optimal_schedule(0.3, 0.6, TAU, T=5, n0=200, seed=3, **DATA)
    assert res.regret == S.mean_field_regret(res.gamma, 0.3, 0.6, TAU, n0=200, seed=3, **DATA)
    assert res.population.shape == (6,) and res.population[0] == 200
    two = S.optimal_two_phase(0.3, 0.6, TAU, T=5, n0=200, **DATA)
    assert np.array_equal(two.gamma, S.two_phase(two.params["first"], two.params["then"],
                                                 two.params["switch"], 5))


@pytest.mark.parametrize("T, points", [(2, 41), (3, 15)])
def test_optimal_schedule_matches_brute_force_on_a_tiny_horizon(T, points):
    q, r, n0 = 0.3, 0.6, 200
    grid = np.geomspace(0.02, 20.0, points)
    sched = np.array(list(itertools.product(grid, repeat=T)))
    brute = S.mean_field_regret(sched, q, r, TAU, n0=n0, **DATA)
    res = S.optimal_schedule(q, r, TAU, T=T, n0=n0, **DATA)
    assert res.regret <= brute.min() * (1 + 1e-9)
    # and it is the same optimum: the brute-force minimizer is within one grid step of it
    best = sched[np.argmin(brute)]
    step = np.log(grid[1] / grid[0])
    inside = (res.gamma > grid[0]) & (res.gamma < grid[-1])
    assert np.all(np.abs(np.log(best[inside] / res.gamma[inside])) <= step)


def test_optimal_schedule_spends_noise_first_in_the_growth_regime():
    res = S.optimal_schedule(0.3, 0.6, TAU, T=6, n0=200, **DATA)
    assert np.all(np.diff(res.gamma) <= 1e-9 * res.gamma[:-1])  # non-increasing noise
    assert res.gamma[0] > res.constant > res.gamma[-1]
    assert res.gain > 0.01


def test_mean_field_regret_matches_simulated_regret_of_algorithm_1():
    # Growth regime with a large population, where the mean field is accurate: the Jensen gap
    # E[1/N] - 1/E[N] is of relative order Var(N)/E[N]^2 (about 0.3% here), so the tolerance is
    # 4.5 standard errors plus a documented 1% allowance for the mean-field approximation.
    q, r, n0, T, trials = 0.3, 0.6, 1000, 4, 120
    g = S.two_phase(2.0, 0.5, 2, T)
    run = G.simulate(g, TAU, q, r, T=T, n0=n0, trials=trials, seed=11, **DATA)
    reg = run.error.sum(axis=1)
    se = reg.std(ddof=1) / np.sqrt(trials)
    mf = S.mean_field_regret(g, q, r, TAU, n0=n0, **DATA)
    assert abs(reg.mean() - mf) < Z * se + 0.01 * mf


# --------------------------------------------------------------------------
# the Bernoulli regret
# --------------------------------------------------------------------------
def test_bernoulli_regret_of_a_constant_is_the_sum_of_mean_field_errors():
    eps = np.full(15, 0.7)
    assert S.bernoulli_regret(eps, 0.3, 0.6, n0=100) == B.mean_field_error(0.7, 0.3, 0.6, T=15, n0=100).sum()


def test_bernoulli_regret_matches_simulation():
    eps = S.two_phase(0.5, 2.0, 5, 10)
    run = B.simulate(eps, 0.3, 0.6, T=10, n0=2000, trials=1500, seed=3, per_round=True)
    reg = run.sq_error.sum(axis=-1)
    se = reg.std(ddof=1) / np.sqrt(reg.size)
    mf = S.bernoulli_regret(eps, 0.3, 0.6, n0=2000)
    assert abs(reg.mean() - mf) < Z * se + 0.01 * mf


def test_epsilon_schedules_never_do_worse_than_the_best_constant_and_beat_brute_force():
    for q, r in ((0.3, 0.6), (0.6, 0.3), (0.05, 0.05)):
        res = S.optimal_epsilon_schedule(q, r, T=12, n0=100)
        assert res.regret <= res.constant_regret
        for fam in (S.optimal_epsilon_two_phase, S.optimal_epsilon_geometric):
            assert fam(q, r, T=12, n0=100).regret <= res.constant_regret
    grid = np.geomspace(0.02, 40.0, 60)
    sched = np.array(list(itertools.product(grid, repeat=2)))
    brute = S.bernoulli_regret(sched, 0.3, 0.6, n0=100)
    assert S.optimal_epsilon_schedule(0.3, 0.6, T=2, n0=100).regret <= brute.min() * (1 + 1e-9)


def test_epsilon_schedule_protects_first_then_spends_the_budget():
    res = S.optimal_epsilon_schedule(0.3, 0.6, T=20, n0=100)
    assert res.epsilon[0] < res.constant < res.epsilon[-1]
    assert res.gain > 0.05
    with pytest.raises(AttributeError):
        res.gamma


def test_compare_schedules_pairs_the_runs_and_reports_mean_field_regrets():
    sched = {"constant": np.full(3, 1.0), "same": np.full(3, 1.0), "decay": [2.0, 1.0, 0.5]}
    cmp = S.compare_schedules(sched, 0.3, 0.6, TAU, n0=80, trials=6, seed=4, **DATA)
    assert cmp.difference[1] == 0.0 and cmp.difference_se[1] == 0.0   # same schedule, same draws
    assert cmp.mean_field[2] == S.mean_field_regret([2.0, 1.0, 0.5], 0.3, 0.6, TAU, n0=80, **DATA)
    run = G.simulate(np.full(3, 1.0), TAU, 0.3, 0.6, T=3, n0=80, trials=6, seed=4, **DATA)
    assert cmp.simulated[0] == run.error.sum(axis=1).mean()  # nobody collapses: both conventions agree


def test_compare_schedules_charges_collapsed_rounds_the_one_record_error_like_the_mean_field():
    # q = 1, r = 0 and tiny noise: everyone leaks and leaves in round 1, the next rounds are collapsed
    sched = {"tiny": np.full(4, 0.01), "decay": [0.01, 0.02, 0.04, 0.08]}
    kw = dict(n0=5, trials=8, seed=5, d=3, R=50.0)
    floor = S.compare_schedules(sched, 1.0, 0.0, TAU, **kw)
    repeat = S.compare_schedules(sched, 1.0, 0.0, TAU, collapse="repeat", **kw)
    for k, g in enumerate(sched.values()):
        run = G.simulate(np.asarray(g, float), TAU, 1.0, 0.0, T=4, trials=8, seed=5, n0=5, d=3, R=50.0)
        assert np.all(run.population[:, 1] == 0)
        first = run.error[:, 0].mean()
        later = (np.asarray(g, float)[1:] ** 2 * 3 + 3).sum()  # (γ_t² Tr I + d) for t = 2..4
        assert floor.simulated[k] == pytest.approx(first + later, rel=1e-12)
        assert repeat.simulated[k] == pytest.approx(4 * first, rel=1e-12)
        # the mean field floors the population at one user: the same charge after round 1
        g0 = float(np.asarray(g, float)[0])
        assert floor.mean_field[k] == pytest.approx((g0**2 * 3 + 3) / 5 + later, rel=1e-6)


# --------------------------------------------------------------------------
# bad input
# --------------------------------------------------------------------------
@pytest.mark.parametrize("call, name", [
    (lambda: S.mean_field_regret(1.0, 0.3, 0.6, TAU, n0=100, **DATA), "gammas"),
    (lambda: S.mean_field_regret([1.0, 0.0], 0.3, 0.6, TAU, n0=100, **DATA), "gammas"),
    (lambda: S.mean_field_regret([1.0], 1.3, 0.6, TAU, n0=100, **DATA), "q"),
    (lambda: S.mean_field_regret([1.0], 0.3, 0.6, 0.0, n0=100, **DATA), "tau"),
    (lambda: S.mean_field_regret([1.0], 0.3, 0.6, TAU, n0=1, **DATA), "n0"),
    (lambda: S.optimal_schedule(0.3, 0.6, TAU, T=0, n0=100, **DATA), "T"),
    (lambda: S.optimal_schedule(0.3, 0.6, TAU, T=3, n0=100, starts="best", **DATA), "starts"),
    (lambda: S.optimal_schedule(0.3, 0.6, TAU, T=3, n0=100, bracket=(2, 1), **DATA), "bracket"),
    (lambda: S.optimal_two_phase(0.3, 0.6, TAU, T=3, n0=100, switches=[5], **DATA), "switches"),
    (lambda: S.two_phase(1.0, 2.0, 4, 3), "switch"),
    (lambda: S.geometric(1.0, -0.5, 3), "ratio"),
    (lambda: S.bernoulli_regret([1.0, -1.0], 0.3, 0.6, n0=10), "epsilons"),
    (lambda: S.bernoulli_regret(1.0, 0.3, 0.6, n0=10), "epsilons"),
    (lambda: S.optimal_epsilon_schedule(0.3, 0.6, T=3, n0=10, model="other"), "model"),
    (lambda: S.gain_map([0.3], [0.6], T=3, n0=100, d=12, R=10.0, model="gaussian"), "tau"),
    (lambda: S.compare_schedules({"a": [1.0, 1.0]}, 0.3, 0.6, TAU, n0=50, reference="b", **DATA), "reference"),
    (lambda: S.compare_schedules({"a": [1.0, 1.0]}, 0.3, 0.6, TAU, n0=50, collapse="ran", **DATA), "collapse"),
])
def test_bad_input_raises_value_error_naming_the_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()
