"""Richer behaviours (issue 17): memory, heterogeneous users, budget-aware users, contagion.

What is checked, for each of LeakCount, Heterogeneous, BudgetAware and Contagion, with both mechanisms:

* at its neutral setting it *is* the paper's Memoryless: number for number in the mean field (to rounding)
  and in simulation (the same draws from the same seed; several equal classes of Heterogeneous: in law);
* the engine agrees in law with the independent agent-by-agent reference (``engine.simulate_agents``);
* the mean field agrees with the simulated mean population within standard errors;
* the theory of a constant leak probability (long-run growth factor, critical leak probability,
  reproduction number) agrees with the mean-field recursion the engine runs;
* the bugs found in review stay fixed.

Law tests compare means with Z = 4.5 (standard errors from the trials, fixed seeds) and assert their
own power: 4.5 standard errors of the difference are below 5% of the compared value.
"""

import dataclasses

import numpy as np
import pytest

from perfpriv import bernoulli, engine, gaussian, keyed, optimize, sweep
from perfpriv.behaviour import BudgetAware, Contagion, Heterogeneous, LeakCount, Memoryless

Z = 4.5
POWER = 0.05
GAUSS = dict(tau=0.02, d=12, R=10.0)


def _mechanisms(eps=0.3, gamma=1.0):
    return {"rr": bernoulli.RandomizedResponse(eps), "gaussian": gaussian.GaussianMean(gamma, **GAUSS)}


def _z_means(a, b, *, power_at=-1):
    """Largest |Z| between the per-round means of two (trials, T+1) samples, and the test's power check."""
    ma, mb = a.mean(axis=0), b.mean(axis=0)
    sa = a.std(axis=0, ddof=1) / np.sqrt(a.shape[0])
    sb = b.std(axis=0, ddof=1) / np.sqrt(b.shape[0])
    se = np.sqrt(sa**2 + sb**2)
    z = np.where(se > 0, np.abs(ma - mb) / np.where(se > 0, se, 1.0), np.where(ma == mb, 0.0, np.inf))
    assert Z * se[power_at] < POWER * abs(mb[power_at]), "the test could miss a 5% error: more trials"
    return float(z.max())


# ----------------------------------------------------------------- neutral settings
NEUTRAL_EXACT = {
    "LeakCount(k=1)": lambda q, r, rule: LeakCount(k=1, q=q, r=r, rule=rule),
    "Contagion(kappa=0)": lambda q, r, rule: Contagion(q=q, r=r, kappa=0.0, rule=rule),
    "Heterogeneous(one class)": lambda q, r, rule: Heterogeneous(q=[q], weights=[1.0], r=r, rule=rule),
    "BudgetAware(inf)": lambda q, r, rule: BudgetAware(tolerance=np.inf, q=q, r=r, rule=rule),
    "BudgetAware(inf, two classes)": lambda q, r, rule: BudgetAware(tolerance=[np.inf, np.inf], weights=[1, 3],
                                                                    q=q, r=r, rule=rule),
}


@pytest.mark.parametrize("name", list(NEUTRAL_EXACT))
@pytest.mark.parametrize("mech", ["rr", "gaussian"])
@pytest.mark.parametrize("rule", ["leak", "agnostic"])
def test_neutral_setting_simulates_memoryless_number_for_number(name, mech, rule):
    # the cap binds (recruits turned away) and the floor brings back collapsed runs
    mechanism = {"rr": bernoulli.RandomizedResponse([0.2, 1.0, np.inf]),
                 "gaussian": gaussian.GaussianMean([0.05, 0.5, 3.0], **GAUSS)}[mech]
    q, r = (0.3, 0.7) if rule == "leak" else (0.8, 0.5)
    kw = dict(T=20, n0=150, trials=15, seed=11, policy=Policy(cap=300))
    base = engine.simulate(mechanism, Memoryless(q=q, r=r, rule=rule), **kw)
    run = engine.simulate(mechanism, NEUTRAL_EXACT[name](q, r, rule), **kw)
    assert np.any(base.population == 300) and np.any(base.population == 1)   # both bounds were used
    np.testing.assert_array_equal(run.population, base.population)
    np.testing.assert_array_equal(run.sq_error, base.sq_error)
    np.testing.assert_array_equal(run.leaked, base.leaked)


NEUTRAL_ALL = {
    "LeakCount(k=1)": lambda rule: LeakCount(k=1, q=0.4, r=0.5, rule=rule),
    "Contagion(kappa=0)": lambda rule: Contagion(q=0.4, r=0.5, kappa=0.0, rule=rule),
    "Heterogeneous(one class)": lambda rule: Heterogeneous(q=[0.4], weights=[1.0], r=0.5, rule=rule),
    "Heterogeneous(equal classes)": lambda rule: Heterogeneous(q=[0.4, 0.4, 0.4], weights=[1, 2, 3], r=0.5,
                                                               rule=rule),
    "BudgetAware(inf)": lambda rule: BudgetAware(tolerance=np.inf, r=0.5, q=0.4, rule=rule),
    "BudgetAware(inf, two classes)": lambda rule: BudgetAware(tolerance=[np.inf, np.inf], weights=[1, 3], r=0.5,
                                                              q=0.4, rule=rule),
}


@pytest.mark.parametrize("name", list(NEUTRAL_ALL))
@pytest.mark.parametrize("rule", ["leak", "agnostic"])
def test_neutral_setting_is_memoryless_in_the_mean_field(name, rule):
    for mechanism in (bernoulli.RandomizedResponse([0.2, 1.0, np.inf]),
                      gaussian.GaussianMean([0.05, 0.5, 3.0], **GAUSS)):
        for cap, floor in ((300, 1), (None, None), (20000, 0)):
            kw = dict(T=25, n0=150, cap=cap, floor=floor)
            base = engine.mean_field(mechanism, Memoryless(q=0.4, r=0.5, rule=rule), **kw)
            path = engine.mean_field(mechanism, NEUTRAL_ALL[name](rule), **kw)
            # the same numbers up to the order of floating-point operations
            np.testing.assert_allclose(path.population, base.population, rtol=1e-12, atol=1e-9)
            np.testing.assert_allclose(path.sq_error, base.sq_error, rtol=1e-12)
            np.testing.assert_allclose(path.leak_probability, base.leak_probability, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("mech", ["rr", "gaussian"])
@pytest.mark.parametrize("users", [Heterogeneous(q=[0.4, 0.4], weights=[1, 2], r=0.5),
                                   Heterogeneous(q=[0.4, 0.4, 0.4], weights=[1, 1, 1], r=0.5)],
                         ids=["hetero-equal-2", "hetero-equal-3"])
def test_neutral_setting_is_memoryless_in_law(mech, users):
    # equal classes draw their departures class by class (their own streams): the same law, other numbers
    mechanism = _mechanisms(eps=0.3, gamma=0.8)[mech]
    kw = dict(T=10, n0=200, policy=Policy(cap=600))
    trials = 1500 if mech == "rr" else 600
    base = engine.simulate(mechanism, Memoryless(q=0.4, r=0.5), trials=trials, seed=21, **kw)
    run = engine.simulate(mechanism, users, trials=trials, seed=22, **kw)
    assert _z_means(run.population, base.population) < Z
    assert _z_means(run.leaked.astype(float), base.leaked.astype(float)) < Z


# ----------------------------------------------------------------- agents
AGENT_CASES = {
    "memory": LeakCount(k=3, q=0.5, r=0.6),
    "memory-agnostic": LeakCount(k=2, q=0.8, r=0.3, rule="agnostic"),
    "heterogeneous": Heterogeneous(q=[0.9, 0.3, 0.05], weights=[0.3, 0.3, 0.4], r=0.6),
    "contagion": Contagion(q=0.2, r=0.8, kappa=1.0),
}
AGENT_TRIALS = {"contagion": 800}          # its population varies most (coefficient of variation 0.2)
AGENT_SIZES, AGENT_BOUNDS = dict(T=6, n0=150), dict(cap=500, floor=1)


def _budget(mech):
    # tolerances of a few rounds at the mechanism's cost (RR: epsilon = 0.3; Gaussian: rho = 2R^2/gamma^2 = 556)
    if mech == "rr":
        return BudgetAware(tolerance=[0.7, 2.0], weights=[0.3, 0.7], r=0.6, q=0.2)
    return BudgetAware(tolerance=[1200.0, 3500.0], weights=[0.3, 0.7], r=0.6, q=0.2)


@pytest.mark.parametrize("case", list(AGENT_CASES) + ["budget"])
@pytest.mark.parametrize("mech", ["rr", "gaussian"])
def test_engine_agrees_in_law_with_the_agent_reference(case, mech):
    users = _budget(mech) if case == "budget" else AGENT_CASES[case]
    mechanism = _mechanisms(eps=0.3, gamma=0.6)[mech]
    agents = engine.simulate_agents(mechanism, users, trials=AGENT_TRIALS.get(case, 400), seed=31,
                                    policy=Policy(**AGENT_BOUNDS), **AGENT_SIZES)
    run = engine.simulate(mechanism, users, trials=3000, seed=32, policy=Policy(**AGENT_BOUNDS), **AGENT_SIZES)
    assert 0 < run.population[:, -1].mean() < 500          # neither extinct nor pinned at the cap
    assert _z_means(agents.population.astype(float), run.population.astype(float)) < Z
    assert _z_means(agents.leaked.astype(float), run.leaked.astype(float)) < Z


def test_agent_reference_sees_a_5_percent_change():
    # the comparison has the power it claims: a 5% larger recruiting rate is detected
    users, other = LeakCount(k=3, q=0.5, r=0.6), LeakCount(k=3, q=0.5, r=0.63)
    agents = engine.simulate_agents(bernoulli.RandomizedResponse(0.3), other, trials=400, seed=31,
                                    policy=Policy(**AGENT_BOUNDS), **AGENT_SIZES)
    run = engine.simulate(bernoulli.RandomizedResponse(0.3), users, trials=3000, seed=32, policy=Policy(**AGENT_BOUNDS),
                          **AGENT_SIZES)
    assert _z_means(agents.population.astype(float), run.population.astype(float)) > Z


# ----------------------------------------------------------------- mean field vs simulation
MF_CASES = {
    "memory": LeakCount(k=3, q=0.5, r=0.6),
    "heterogeneous": Heterogeneous(q=[0.9, 0.1], weights=[0.5, 0.5], r=0.6),
    "contagion": Contagion(q=0.3, r=0.6, kappa=1.0),
}


@pytest.mark.parametrize("case", list(MF_CASES) + ["budget"])
@pytest.mark.parametrize("mech", ["rr", "gaussian"])
def test_mean_field_matches_simulation_within_standard_errors(case, mech):
    if case == "budget":
        users = BudgetAware(tolerance=[1.0, 2.0] if mech == "rr" else [1000.0, 2000.0], weights=[0.3, 0.7],
                            r=0.6, q=0.2)
    else:
        users = MF_CASES[case]
    # no cap and no floor: for randomized response (a constant leak probability) the mean field of the
    # linear behaviours is the exact expectation; Contagion and the Gaussian p(N) are nonlinear, with a
    # bias of order 1/N, below the standard errors at these sizes
    mechanism = {"rr": bernoulli.RandomizedResponse(0.3, mu=0.5),
                 "gaussian": gaussian.GaussianMean(1.0, **GAUSS)}[mech]
    T, n0, trials = (10, 1000, 2000) if mech == "rr" else (6, 500, 400)
    run = engine.simulate(mechanism, users, T=T, n0=n0, trials=trials, seed=41, policy=Policy(cap=None, floor=0))
    path = engine.mean_field(mechanism, users, T=T, n0=n0, cap=None, floor=None)
    mean = run.population.mean(axis=0)
    se = run.population.std(axis=0, ddof=1) / np.sqrt(trials)
    assert np.all(np.abs(mean - path.population) <= Z * se + 1e-9)
    assert Z * se[-1] < POWER * path.population[-1]


# ----------------------------------------------------------------- theory
THEORY_CASES = [
    Memoryless(q=0.3, r=0.5), Memoryless(q=0.3, r=0.5, rule="agnostic"),
    LeakCount(k=3, q=0.6, r=0.3), LeakCount(k=2, q=0.9, r=0.2, rule="agnostic"),
    Heterogeneous(q=[0.9, 0.1], weights=[0.5, 0.5], r=0.3), Heterogeneous(q=[0.8, 0.4, 0.2], weights=[1, 1, 2], r=0.2,
                                                                        rule="agnostic"),
    BudgetAware(tolerance=[3.0, 10.0], weights=[0.3, 0.7], r=0.4, q=0.2), BudgetAware(tolerance=4.0, r=0.3,
                                                                                        rule="agnostic"),
    Contagion(q=0.2, r=0.5, kappa=1.0), Contagion(q=0.2, r=0.3, kappa=1.5, rule="agnostic"),
]


@pytest.mark.parametrize("users", THEORY_CASES, ids=repr)
@pytest.mark.parametrize("eps", [0.3, 0.8, 3.0])
def test_growth_factor_is_the_long_run_rate_of_the_mean_field(users, eps):
    mechanism = bernoulli.RandomizedResponse(eps)
    p = float(mechanism.leak_probability(100, eps))
    # a huge start so that a shrinking path does not underflow before the growth has settled
    path = engine.mean_field(mechanism, users, T=300, n0=1e200, cap=None, floor=None)
    pop = path.population
    assert np.all(np.isfinite(pop)) and pop[-1] > 1e-250
    realized = pop[-1] / pop[-2]
    assert realized == pytest.approx(users.growth_factor(p, cost=eps), rel=1e-7)
    # survival iff R0 >= 1 iff p <= p_c (renewal argument)
    grows = users.growth_factor(p, cost=eps) >= 1
    assert grows == (users.reproduction_number(p, cost=eps) >= 1)
    assert grows == (p <= users.critical_leak_probability(cost=eps))


@pytest.mark.parametrize("users", THEORY_CASES, ids=repr)
def test_critical_leak_probability_is_where_growth_crosses_one(users):
    pc = users.critical_leak_probability(cost=0.5)
    ps = np.linspace(0.0, 1.0, 201)
    growth = np.array([users.growth_factor(p, cost=0.5) for p in ps])
    assert np.all(np.diff(growth) <= 1e-12)           # more leaks, less growth
    if 0 < pc < 1:
        assert users.growth_factor(pc, cost=0.5) == pytest.approx(1.0, abs=1e-9)
    assert np.all(growth[ps < pc - 1e-9] >= 1 - 1e-12) and np.all(growth[ps > pc + 1e-9] < 1 + 1e-12)


def test_closed_forms_of_the_thresholds():
    # memory: the paper's threshold with q replaced by 1/m, m = k - 1 + 1/q (expected leaks survived)
    lc = LeakCount(k=4, q=0.5, r=0.3)
    m = 3 + 2.0
    assert lc.critical_leak_probability() == pytest.approx(0.3 * m / (1 + 0.3 * m))
    assert lc.critical_leak_probability() == pytest.approx(Memoryless(q=lc.effective_q(), r=0.3)
                                                           .critical_leak_probability())
    assert lc.expected_stay(0.5) == pytest.approx(m / 0.5)
    # heterogeneous: the recruits' weighted harmonic mean sensitivity
    h = Heterogeneous(q=[0.9, 0.3, 0.1], weights=[0.2, 0.3, 0.5], r=0.4)
    H = 0.2 / 0.9 + 0.3 / 0.3 + 0.5 / 0.1
    assert h.effective_q() == pytest.approx(1 / H)
    assert h.critical_leak_probability() == pytest.approx(0.4 * H / (1 + 0.4 * H))
    assert h.effective_q() < np.dot(h.weights, h.q)      # harmonic < arithmetic: spread helps
    # drifting mix: the long-run shares are proportional to w_j / (lambda - 1 + q_j p)
    lam, p = h.growth_factor(0.6), 0.6
    mix = h.weights / (lam - 1 + h.q * p)
    np.testing.assert_allclose(h.stationary_mix(0.6), mix / mix.sum(), rtol=1e-10)
    # budget, q = 0: p_c = 1 - 1/(r Lbar) with L = floor(b / c) + 1
    b = BudgetAware(tolerance=[2.5, 7.0], weights=[0.5, 0.5], r=0.4)
    np.testing.assert_array_equal(b.lifetimes(1.0), [3.0, 8.0])
    assert b.critical_leak_probability(1.0) == pytest.approx(1 - 1 / (0.4 * 5.5), abs=1e-12)
    assert b.lifetimes(np.inf).tolist() == [1.0, 1.0] and b.lifetimes(0.0).tolist() == [np.inf, np.inf]
    # contagion: smaller root of r kappa p^2 - (r + r kappa + q) p + r = 0
    c = Contagion(q=0.2, r=0.5, kappa=1.0)
    roots = np.roots([0.5 * 1.0, -(0.5 + 0.5 + 0.2), 0.5])
    assert c.critical_leak_probability() == pytest.approx(min(roots.real))
    assert Contagion(q=0.2, r=0.5, kappa=0.0).critical_leak_probability() == pytest.approx(0.5 / 0.7)
    assert c.stationary_leave_probability(0.5) == pytest.approx(0.2 / 0.5)
    assert Contagion(q=0.2, r=0.5, kappa=3.0).stationary_leave_probability(0.5) == 1.0   # runs away
    assert Contagion(q=0.0, r=0.5, kappa=3.0).stationary_leave_probability(0.5) == 0.0


def test_budget_threshold_with_q_zero_matches_a_bisection_on_lifetime():
    b = BudgetAware(tolerance=2.5, r=0.4)            # L = 3 at cost 1: R0 = 0.4 (1 - p) 3
    assert b.critical_leak_probability(1.0) == pytest.approx(1 - 1 / 1.2, abs=1e-12)
    assert b.reproduction_number(0.0, 1.0) == pytest.approx(1.2)
    assert b.critical_leak_probability(3.0) == 0.0      # L = 1: R0 = 0.4 (1 - p) < 1 always


# ----------------------------------------------------------------- bugs found in review
def test_budget_no_privacy_recruits_leave_after_one_round():
    # epsilon = inf costs inf: every user leaves after her first round, recruits too (an inf x 0
    # product in the cost of not-yet-present cohorts made later recruits immortal)
    users = BudgetAware(tolerance=2.5, r=0.5, rule="agnostic")
    rr = bernoulli.RandomizedResponse(np.inf)
    path = engine.mean_field(rr, users, T=6, n0=100, cap=None, floor=None)
    np.testing.assert_allclose(path.population, 100 * 0.5 ** np.arange(7))
    run = engine.simulate(rr, users, T=6, n0=100, trials=400, seed=3, policy=Policy(cap=None, floor=0))
    mean, se = run.population.mean(axis=0), run.population.std(axis=0, ddof=1) / np.sqrt(400)
    assert np.all(np.abs(mean - path.population) <= Z * se + 1e-9)


def test_mean_field_does_not_stop_at_an_unchanged_population_of_a_typed_state():
    # the population stays at 100 for two rounds while the users' leak counts (or spending) change;
    # the mean field used to take that for a fixed point and repeat it
    rr = bernoulli.RandomizedResponse(1.0)
    path = engine.mean_field(rr, LeakCount(k=3, q=1.0, r=0.0), T=6, n0=100.0)
    assert path.population[3] < 70
    path = engine.mean_field(rr, BudgetAware(tolerance=2.5, r=0.0), T=6, n0=100.0)
    np.testing.assert_allclose(path.population, [100, 100, 100, 1, 1, 1, 1])
    # one-type behaviours still stop at a genuine fixed point (the cap)
    fixed = engine.mean_field(rr, Memoryless(q=0.0, r=0.5), T=80, n0=100.0)
    assert fixed.population[-1] == 20000


def test_cells_with_parameters_of_different_ndim_line_up_with_the_cell_axes():
    # q of shape (3,) and r of shape (2, 1) give 2 x 3 cells (every behaviour takes cell arrays, so that
    # the searches batch them); each cell is the behaviour of its own (q, r), with the cell's own key
    q, r = np.array([0.1, 0.4, 0.7]), np.array([[0.3], [0.8]])
    mech = bernoulli.RandomizedResponse([0.5, 1.0, 2.0])
    for make in (lambda q, r: Memoryless(q=q, r=r), lambda q, r: LeakCount(k=2, q=q, r=r),
                 lambda q, r: Contagion(q=q, r=r, kappa=0.5),
                 lambda q, r: BudgetAware(tolerance=4.0, q=q, r=r),
                 lambda q, r: Heterogeneous(q=np.stack(np.broadcast_arrays(q, q / 2), -1), weights=[1, 1], r=r)):
        users = make(q, r)
        assert users.shape == (2, 3)
        run = engine.simulate(mech, users, T=6, n0=50, trials=3, seed=7)
        path = engine.mean_field(mech, users, T=6, n0=50)
        for i in range(2):
            for j in range(3):
                one = make(q[j], r[i, 0])
                # the engine keys a cell by its coordinates (the cell's q and r): the same key alone
                key = keyed.cell_key(7, *(np.broadcast_to(c, (2, 3))[i, j] for c in users.cell_coordinates()))
                np.testing.assert_array_equal(engine.simulate(mech, one, T=6, n0=50, trials=3, seed=key).population,
                                              run.population[i, j])
                np.testing.assert_allclose(engine.mean_field(mech, one, T=6, n0=50).population,
                                           path.population[i, j], rtol=1e-13)


def test_floored_user_class_follows_the_recruits_law():
    # a platform floored at one user regains a fresh user whose class is drawn as a recruit's
    users = Heterogeneous(q=[1.0, 1.0], weights=[0.3, 0.7], r=0.0)
    rr = bernoulli.RandomizedResponse(np.inf)     # everyone leaks and leaves every round
    run = engine.simulate(rr, users, T=1, n0=10, trials=1, seed=1, policy=Policy(floor=1))
    assert run.population[0, -1] == 1
    state = users.initial_state(10, (4000,))
    keys = keyed.root_key(5).child(np.arange(4000))
    new = users.step(state, np.full(4000, 10), keys, {"floor": 1, "cap": None})
    share = new[:, 1].mean()
    assert new.sum(axis=1).tolist() == [1] * 4000
    assert abs(share - 0.7) < Z * np.sqrt(0.21 / 4000)


# ----------------------------------------------------------------- searches with a behaviour
def test_searches_default_unchanged_and_callable_reproduces_it():
    Q, R = np.meshgrid([0.2, 0.6], [0.3, 0.7], indexing="ij")
    eps = [0.1, 0.5, 2.0, np.inf]
    rr = bernoulli.RandomizedResponse(eps, mu=(0.5, 1.0))
    kw = dict(T=20, n0=100, trials=5, seed=3, options=sweep.Execution(progress=False))
    base = optimize.optimal_epsilon(rr, Memoryless(q=Q, r=R), **kw)
    same = optimize.optimal_epsilon(rr, _leakcount_one(Q, R), **kw)
    np.testing.assert_array_equal(base.values, same.values)
    mf = optimize.mean_field_optimal_epsilon(rr, Memoryless(q=Q, r=R), T=20, n0=100)
    mf2 = optimize.mean_field_optimal_epsilon(rr, _leakcount_one(Q, R), T=20, n0=100)
    np.testing.assert_allclose(mf.values, mf2.values, rtol=1e-12)
    gkw = dict(T=5, n0=50, trials=3, seed=4, options=sweep.Execution(progress=False))
    gmech = gaussian.GaussianMean([0.3, 1.0], tau=0.02, d=12, R=10.0)
    g = optimize.optimal_gamma_empirical(gmech, Memoryless(q=Q, r=R), **gkw)
    g2 = optimize.optimal_gamma_empirical(gmech, _leakcount_one(Q, R), **gkw)
    np.testing.assert_array_equal(g.values, g2.values)
    grid = gaussian.GaussianMean(np.geomspace(1e-2, 1e3, 9), tau=0.02, d=12, R=10.0)
    tkw = dict(T=5, n0=50, objective="mean_field")
    t = optimize.optimal_gamma(grid, Memoryless(q=Q, r=R), **tkw)
    t2 = optimize.optimal_gamma(grid, _leakcount_one(Q, R), **tkw)
    np.testing.assert_allclose(t.values, t2.values, rtol=1e-12)      # the objective, to rounding
    np.testing.assert_allclose(t.gamma, t2.gamma, rtol=1e-6)         # its minimizer, to the search's tolerance
    # a richer behaviour changes the answer
    t3 = optimize.optimal_gamma(grid, _leakcount_three(Q, R), **tkw)
    assert not np.allclose(t.values, t3.values)


def _leakcount_one(q, r):
    return LeakCount(k=1, q=q, r=r)


def _leakcount_three(q, r):
    return LeakCount(k=3, q=q, r=r)


def test_search_behaviour_argument_is_checked():
    # the simulated searches take the users themselves (was: behaviour=, a callable (q, r) -> Behaviour):
    # what is not a Behaviour -- a number, the old callable -- is refused by naming users
    rr1, g1 = bernoulli.RandomizedResponse([1.0]), gaussian.GaussianMean([1.0], tau=0.02, d=12, R=10.0)
    for users in (3, _leakcount_one):
        with pytest.raises(TypeError, match="^users must be a perfpriv.behaviour.Behaviour"):
            optimize.optimal_epsilon(rr1, users, T=5, n0=10)
        with pytest.raises(TypeError, match="^users must be a perfpriv.behaviour.Behaviour"):
            optimize.optimal_gamma_empirical(g1, users, T=5, n0=10, trials=2)
    # and the rule is the users' own (was: rule= and behaviour= were exclusive): LeakCount(k=1) with the
    # agnostic rule is Memoryless with the agnostic rule, number for number
    rr2 = bernoulli.RandomizedResponse([0.5, np.inf])
    agn = optimize.optimal_epsilon(rr2, LeakCount(k=1, q=0.3, r=0.6, rule="agnostic"), T=5, n0=10, trials=3, seed=1)
    mem = optimize.optimal_epsilon(rr2, Memoryless(q=0.3, r=0.6, rule="agnostic"), T=5, n0=10, trials=3, seed=1)
    leak = optimize.optimal_epsilon(rr2, Memoryless(q=0.3, r=0.6), T=5, n0=10, trials=3, seed=1)
    assert agn.settings["rule"] == mem.settings["rule"] == "agnostic" and leak.settings["rule"] == "leak"
    np.testing.assert_array_equal(agn.values, mem.values)
    assert not np.array_equal(agn.values, leak.values)
    # the theory searches take the Behaviour itself: Lemma 9's bound (the default objective) and Theorem 2's
    # γ_c refuse a richer behaviour by naming users, the mean field takes it
    gm = gaussian.GaussianMean(tau=0.02, d=12, R=10.0)
    for kw in (dict(), dict(objective="bound"), dict(objective="mean_field", constrained=True)):
        with pytest.raises(ValueError, match="^users must be the paper's"):
            optimize.optimal_gamma(gm, _leakcount_one(0.3, 0.6), T=5, n0=50, **kw)
    assert np.isfinite(optimize.optimal_gamma(gm, _leakcount_one(0.3, 0.6), T=5, n0=50, objective="mean_field").gamma)
    # what is not a Behaviour (the old callable, or what one returned) is refused by naming users
    for users in ("users", _leakcount_one, (0.3, 0.6)):
        with pytest.raises(TypeError, match="^users must be a perfpriv.behaviour.Behaviour"):
            optimize.mean_field_optimal_epsilon(bernoulli.RandomizedResponse([1.0]), users, T=5, n0=10)
        with pytest.raises(TypeError, match="^users must be a perfpriv.behaviour.Behaviour"):
            optimize.optimal_gamma(gm, users, T=5, n0=50, objective="mean_field")
    # the users' cells are the search's cells (there is no second (q, r) grid for them to disagree with)
    cells = optimize.mean_field_optimal_epsilon(bernoulli.RandomizedResponse([1.0, np.inf]),
                                                LeakCount(k=2, q=[0.3, 0.4], r=[0.6, 0.6]), T=5, n0=10)
    assert cells.epsilon.shape == (2,) and cells.values.shape == (2, 2)


# ----------------------------------------------------------------- arguments
@pytest.mark.parametrize("make, name", [
    (lambda: LeakCount(k=0, q=0.3, r=0.5), "k"),
    (lambda: LeakCount(k=2, q=1.3, r=0.5), "q"),
    (lambda: Heterogeneous(q=[0.3, 0.5], weights=[1.0], r=0.5), "weights"),
    (lambda: Heterogeneous(q=[0.3, 0.5], weights=[0.0, 0.0], r=0.5), "weights"),
    (lambda: Heterogeneous(q=[0.3, -0.1], weights=[1, 1], r=0.5), "q"),
    (lambda: BudgetAware(tolerance=0.0, r=0.5), "tolerance"),
    (lambda: BudgetAware(tolerance=[1.0, 2.0], weights=[1, 2, 3], r=0.5), "weights"),
    (lambda: BudgetAware(tolerance=1.0, r=0.5, q=2.0), "q"),
    (lambda: Contagion(q=0.3, r=0.5, kappa=-1.0), "kappa"),
    (lambda: Contagion(q=0.3, r=0.5, kappa=1.0, rule="viral"), "rule"),
    (lambda: BudgetAware(tolerance=1.0, r=0.5).growth_factor(0.5), "cost"),
])
def test_bad_arguments_name_the_parameter(make, name):
    with pytest.raises(ValueError, match=name):
        make()


def test_budget_needs_a_privacy_cost_and_a_horizon():
    users = BudgetAware(tolerance=1.0, r=0.5)
    with pytest.raises(ValueError, match="horizon"):
        users.initial_state(10, ())
    with pytest.raises(ValueError, match="cost"):
        users.mean_field_step(users.mean_field_state(10.0, (), T=3), 0.5, {"t": 1})


@pytest.mark.parametrize("T", [10**12, 1e12])
def test_budget_state_of_an_impossible_horizon_is_refused_naming_T(T):
    # a state of (classes + 1) x (T + 1) counts: refused up front, not numpy's "Unable to allocate"
    users = BudgetAware(tolerance=[1.0, 2.0], r=0.5)
    for make in (users.initial_state, users.mean_field_state):
        with pytest.raises(ValueError, match=r"^T is too large"):
            make(10, (), T=T)
    with pytest.raises(ValueError, match="T"):
        users.initial_state(10, (), T=0)
    assert users.initial_state(10, (2,), T=3).shape == (2, 3, 4)


# ----------------------------------------------------------------- perfpriv.feedback (chapter 08's experiments)
from perfpriv import dynamics, feedback  # noqa: E402
from perfpriv.engine import Policy


def test_families_build_their_behaviours_and_reduce_to_the_paper():
    Q, R = np.meshgrid([0.2, 0.7], [0.3, 0.9], indexing="ij")
    rr = bernoulli.RandomizedResponse([0.5, 2.0])
    base = engine.mean_field(rr, feedback.family("paper")(Q, R), T=15, n0=100)
    for name, neutral in (("memory", 1), ("heterogeneous", 0.0), ("budget", np.inf), ("contagion", 0.0)):
        fam = feedback.family(name, neutral)
        assert fam.neutral == feedback.family("paper") and fam(Q, R).shape == Q.shape
        path = engine.mean_field(rr, fam(Q, R), T=15, n0=100)
        np.testing.assert_allclose(path.population, base.population, rtol=1e-12)
    np.testing.assert_allclose(feedback.two_classes(q=Q, spread=0.6).mean(axis=-1), Q)
    assert np.all((feedback.two_classes(q=Q, spread=1.0) >= 0) & (feedback.two_classes(q=Q, spread=1.0) <= 1))
    assert feedback.family("contagion", 1.5).label == "contagion (κ = 1.5)"


@pytest.mark.parametrize("make, name", [
    (lambda: feedback.family("viral", 1.0), "family"),
    (lambda: feedback.family("memory"), "k"),
    (lambda: feedback.family("memory", 0), "k"),
    (lambda: feedback.family("heterogeneous", 1.5), "spread"),
    (lambda: feedback.family("budget", -1.0), "tolerance"),
    (lambda: feedback.family("contagion", -0.1), "kappa"),
    (lambda: feedback.family("paper", 3), "paper"),
    (lambda: feedback.family("memory", 2, rule="viral"), "rule"),
    (lambda: feedback.summary([], []), "one entry"),
])
def test_feedback_arguments_are_checked(make, name):
    with pytest.raises(ValueError, match=name):
        make()


def test_critical_levels_of_the_paper_and_of_memory_match_the_closed_forms():
    Q, R = np.meshgrid([0.1, 0.3, 0.6], [0.2, 0.5, 0.9], indexing="ij")
    np.testing.assert_allclose(feedback.critical_epsilon(feedback.family("paper"), q=Q, r=R),
                               bernoulli.critical_epsilon(q=Q, r=R), rtol=1e-12)
    qe = Q / (1 + 2 * Q)
    np.testing.assert_allclose(feedback.critical_epsilon(feedback.family("memory", 3), q=Q, r=R),
                               bernoulli.critical_epsilon(q=qe, r=R), rtol=1e-12)
    # the Gaussian threshold under a family's users: dynamics.exact_critical_gamma on the family's behaviour
    mech = gaussian.GaussianMean(1.0, **GAUSS)
    g = dynamics.exact_critical_gamma(mech, feedback.family("paper")(Q, R), n=500)
    np.testing.assert_allclose(g, dynamics.exact_critical_gamma(mech, Memoryless(q=Q, r=R), n=500), rtol=1e-9)
    g = dynamics.exact_critical_gamma(mech, feedback.family("memory", 3)(Q, R), n=500)
    np.testing.assert_allclose(g, dynamics.exact_critical_gamma(mech, Memoryless(q=qe, r=R), n=500), rtol=1e-9)
    # contagion: randomized response can save the population iff q < r (1 - kappa / 2)
    eps = feedback.critical_epsilon(feedback.family("contagion", 0.8), q=Q, r=R)
    np.testing.assert_array_equal(eps > 0, Q < R * (1 - 0.4))


def test_budget_thresholds_are_where_the_reproduction_number_crosses_one():
    fam = feedback.family("budget", 5.0)
    users = fam(0.2, 0.7)
    eps_c = feedback.critical_epsilon(fam, q=0.2, r=0.7)
    r0 = [users.reproduction_number(0.5 + float(bernoulli.beta_from_epsilon(e)), cost=e)
          for e in (eps_c * (1 - 1e-6), eps_c * (1 + 1e-6))]
    assert 0 < eps_c < np.inf and r0[0] >= 1 > r0[1]
    # no privacy is fatal for them (eps = inf costs inf): eps_c is finite even for q = 0, agnostic rule
    assert np.isfinite(feedback.critical_epsilon(feedback.family("budget", 5.0, rule="agnostic"), q=0.0, r=0.7))
    fam_g = feedback.family("budget", 1000.0)
    mech = gaussian.GaussianMean(1.0, **GAUSS)
    g_c = dynamics.exact_critical_gamma(mech, fam_g(0.2, 0.7), n=300, bracket=(1e-4, 1e4))
    u = fam_g(0.2, 0.7)
    r0 = [u.reproduction_number(float(mech.leak_probability(300.0, g)), cost=mech.privacy_cost(g))
          for g in (g_c * (1 + 1e-4), g_c * (1 - 1e-4))]
    assert r0[0] >= 1 > r0[1]
    paper = dynamics.exact_critical_gamma(mech, feedback.family("paper")(0.2, 0.7), n=300, bracket=(1e-4, 1e4))
    assert g_c > paper                                         # budget-aware users need more noise


def test_trajectories_effective_q_of_the_paper_is_q():
    tr = feedback.trajectories(feedback.family("paper"), bernoulli.RandomizedResponse([0.4, 2.0]), q=0.3, r=0.6, T=12,
                               n0=2000, trials=200, seed=5)
    theory, simulated = tr.effective_q
    np.testing.assert_allclose(theory, 0.3, rtol=1e-12)
    np.testing.assert_allclose(tr.long_run_q, 0.3, rtol=1e-12)
    assert np.max(np.abs(simulated - 0.3)) < 0.03
    np.testing.assert_array_equal(tr.simulated, tr.simulated_paper)      # the same users, the same seed


def test_maps_and_summary_are_consistent_with_the_searches():
    qs, rs = [0.2, 0.7], [0.3, 0.9]
    fam = feedback.family("memory", 2)
    m = feedback.epsilon_map(fam, bernoulli.RandomizedResponse([0.2, 1.0], mu=(0.5, 1.0)), qs, rs, T=15, n0=100,
                             trials=8, seed=2)
    Q, R = np.meshgrid(qs, rs, indexing="ij")
    mf = optimize.mean_field_optimal_epsilon(bernoulli.RandomizedResponse([0.2, 1.0, np.inf], mu=(0.5, 1.0)),
                                             fam(Q, R), T=15, n0=100)
    np.testing.assert_allclose(m.theory_none, mf.values[..., -1])
    assert np.isinf(m.levels[m.none]) and m.values.shape == (2, 2, 3)
    np.testing.assert_array_equal(m.pays_theory, np.isfinite(m.theory))
    assert not np.any(m.confirmed & ~m.pays_theory)
    # z judges the map (a field of the result, 3 by default): another z re-reads the same numbers
    assert m.z == 3.0 and np.array_equal(m.pays_simulated, m.advantage > 3.0 * m.advantage_se)
    m0 = dataclasses.replace(m, z=0.0)
    assert m0.values is m.values and np.array_equal(m0.pays_simulated, m.advantage > 0)
    g = feedback.gamma_map(fam, gaussian.GaussianMean([0.5, 1.5], **GAUSS), qs, rs, T=4, n0=50, trials=4, seed=3)
    assert g.levels[g.none] == feedback.NO_PRIVACY_GAMMA and g.values.shape == (2, 2, 3)
    rr = bernoulli.RandomizedResponse([0.2, 1.0], mu=(0.5, 1.0))
    paper = feedback.epsilon_map(feedback.family("paper"), rr, qs, rs, T=15, n0=100, trials=8, seed=2)
    s = feedback.summary([paper, m], [None, g])
    assert s.cells == 4 and s.gaussian_theory[0] == -1 and s.gaussian_theory[1] == int(g.pays_theory.sum())
    assert s.bernoulli_theory[1] == int(m.pays_theory.sum()) and np.isnan(s.gamma_ratio[1])
    assert "memory (k = 2)" in s.table()
    with pytest.raises(ValueError, match="same number of cells"):
        feedback.summary([paper, feedback.epsilon_map(fam, bernoulli.RandomizedResponse([1.0], mu=(0.5, 1.0)), [0.2],
                                                      rs, T=5, n0=50, trials=2, seed=1)])


def test_compare_gaussian_at_a_neutral_setting_gives_the_paper():
    res = feedback.compare_gaussian(feedback.family("contagion", 0.0),
                                    gaussian.GaussianMean([0.3, 1.0, 3.0], tau=0.02, d=12, R=10.0), q=0.3, r=0.6, T=5,
                                    n0=60, trials=3)
    np.testing.assert_allclose(res.error, res.error_paper, rtol=1e-12)
    np.testing.assert_array_equal(res.simulated, res.simulated_paper)
    assert res.gamma_star == res.gamma_star_paper


def test_chapter_08_self_checks_hold_their_computed_answers():
    from perfpriv import exercises
    ids = exercises.exercise_ids("ch08")
    assert len(ids) == 10
    for i in ids:
        e = exercises.EXERCISES[i]
        value = e.compute()
        assert abs(value - e.answer) <= e.atol + e.rtol * abs(e.answer), i
        assert exercises.check(i, value, quiet=True)


@pytest.mark.parametrize("name, parameter", [("memory", 3), ("heterogeneous", 0.8), ("budget", 2000.0),
                                             ("contagion", 1.0)])
def test_feedback_explorer_draws_every_behaviour(name, parameter):
    from perfpriv import widgets
    fig = widgets.draw_feedback(feedback.family(name, parameter), gaussian.GaussianMean(tau=0.02, d=12, R=10.0),
                                q=0.3, r=0.6, T=4, n0=40, trials=3)
    assert len(fig.axes) == 2
    ax = fig.axes[0]
    assert len(ax.get_lines()) >= 4 and ax.get_xscale() == "log"


def test_feedback_figures_draw():
    from perfpriv import plots
    tr = feedback.trajectories(feedback.family("memory", 2), bernoulli.RandomizedResponse([0.5, np.inf]), q=0.3,
                               r=0.6, T=5, n0=100, trials=5, seed=1)
    assert len(plots.figure_effective_q([tr]).axes) == 1
    assert len(plots.figure_feedback_paths(tr).axes) == 1
    curves = {"memory": (feedback.family("memory", 1), [1, 2, 3], feedback.threshold_curve("memory", [1, 2, 3], q=0.3, r=0.6))}
    assert len(plots.figure_thresholds(curves, paper=0.69).axes) == 1
    m = feedback.epsilon_map(feedback.family("memory", 2), bernoulli.RandomizedResponse([0.5], mu=(0.5, 1.0)),
                             [0.2, 0.7], [0.3, 0.9], T=5, n0=50, trials=3, seed=1)
    fig = plots.figure_feedback_maps([m, m])
    assert len(fig.axes) == 5                                  # 2 x 2 panels and the colour bar
    with pytest.raises(ValueError, match="maps"):
        plots.figure_feedback_maps([])
