"""The agent-by-agent reference ``engine.simulate_agents`` against independent truth.

The reference is the oracle the compiled loop is tested against (test_inlaw, test_bernoulli, test_gaussian,
test_behaviour_rich, test_kernels, ...); here it is checked itself:

* degenerate cases computed by hand: with ε = inf every answer of randomized response is true and every
  user leaks, so q = 1 empties the platform in one round, a fixed μ is estimated without error, and the
  typed behaviours' users leave exactly when their rule says (k-th leak, tolerance, class, contagion);
* closed forms in law: the leak count of randomized response is Binomial(N, 1/2 + β), the estimate's mean
  squared error is Lemma 10's, one round's growth is 1 + r - (q + r) p (Lemma 2); means within 4.5 standard
  errors of the trials;
* the population policy: cap, floor, stop and each collapse scoring;
* the stateful mechanism's state is threaded; seeding; bad input is refused by name.
"""

import numpy as np
import pytest

from perfpriv import bernoulli, behaviour, engine, gaussian
from perfpriv.engine import Policy, simulate_agents
from perfpriv.performative.federated import FedAvg
from perfpriv.performative.participation import ClientLaw, PrivateFederatedRound

Z = 4.5


def _rr(eps, **kw):
    return bernoulli.RandomizedResponse(eps, **kw)


def _within(samples, expected):
    samples = np.asarray(samples, float)
    se = samples.std(ddof=1) / np.sqrt(samples.size)
    assert abs(samples.mean() - expected) <= Z * se, (samples.mean(), expected, se)


# ------------------------------------------------------------------ hand-computed cases
def test_with_q_one_and_no_privacy_every_user_leaks_and_leaves():
    run = simulate_agents(_rr(np.inf), behaviour.Memoryless(q=1.0, r=0.7), T=3, n0=12, trials=3,
                          policy=Policy(floor=0), seed=0)
    assert run.leaked[:, 0].tolist() == [12, 12, 12]           # every report is true: every user leaks
    assert run.population.tolist() == [[12, 0, 0, 0]] * 3      # ... and leaves; nobody recruits (leak rule)
    assert run.alive.tolist() == [[True, False, False]] * 3     # a dead population stops (stop = 0)
    assert run.method == "agents"


@pytest.mark.parametrize("mu", [0.0, 1.0])
def test_with_no_privacy_a_fixed_mean_is_estimated_without_error(mu):
    run = simulate_agents(_rr(np.inf, mu=mu), behaviour.Memoryless(q=0.0, r=0.0), T=3, n0=9, trials=2, seed=1)
    assert np.all(run.estimate == mu) and np.all(run.truth == mu) and np.all(run.sq_error == 0.0)
    assert np.all(run.population == 9)


def test_agnostic_users_who_all_recruit_double_until_the_cap():
    run = simulate_agents(_rr(0.5), behaviour.Memoryless(q=0.0, r=1.0, rule="agnostic"), T=4, n0=5, trials=2,
                          policy=Policy(cap=30), seed=2)
    assert run.population.tolist() == [[5, 10, 20, 30, 30]] * 2
    leak_rule = simulate_agents(_rr(np.inf), behaviour.Memoryless(q=0.0, r=1.0), T=3, n0=5, trials=2, seed=2)
    assert np.all(leak_rule.population == 5)                   # every user leaked: nobody recruits


def test_leak_count_users_leave_at_their_k_th_leak():
    run = simulate_agents(_rr(np.inf), behaviour.LeakCount(k=3, q=1.0, r=0.0), T=4, n0=8, trials=2,
                          policy=Policy(floor=0), seed=3)
    assert run.population.tolist() == [[8, 8, 8, 0, 0]] * 2


def test_budget_aware_users_leave_once_their_spending_passes_their_tolerance():
    # tolerance 2.5 at a cost of 1 per round: floor(2.5/1) + 1 = 3 rounds (the class's doctest)
    users = behaviour.BudgetAware(tolerance=[2.5, 10.0], weights=[0.5, 0.5], r=0.0)
    run = simulate_agents(_rr(1.0), users, T=5, n0=10, trials=2, policy=Policy(floor=0), seed=4)
    assert run.population.tolist() == [[10, 10, 10, 5, 5, 5]] * 2


def test_heterogeneous_classes_split_by_largest_remainder_and_leave_by_class():
    users = behaviour.Heterogeneous(q=[1.0, 0.0], weights=[0.35, 0.65], r=0.0)
    assert users.agent_model().initial_classes(10) == [0] * 4 + [1] * 6     # 3.5 and 6.5: ties to class 0
    run = simulate_agents(_rr(np.inf), users, T=3, n0=10, trials=2, seed=5)
    assert run.population.tolist() == [[10, 6, 6, 6]] * 2


def test_contagion_makes_the_next_round_jumpier():
    # q_2 = min(1, q + kappa D_1 / N_0) = 1 as soon as one user left in round 1
    run = simulate_agents(_rr(np.inf), behaviour.Contagion(q=0.5, r=0.0, kappa=100.0), T=2, n0=20, trials=50,
                          policy=Policy(floor=0), seed=6)
    assert np.all(run.population[:, 1] < 20) and np.all(run.population[:, 2] == 0)
    _within(run.population[:, 1], 10.0)                                     # round 1: Binomial(20, 1/2) stay


def test_a_lone_gaussian_user_leaks():
    run = simulate_agents(gaussian.GaussianMean(1e3, tau=0.02, d=2, R=10.0), behaviour.Memoryless(q=0.0, r=0.0),
                          T=3, n0=1, trials=2, seed=7)
    assert np.all(run.leaked == 1) and np.all(run.population == 1)


# ------------------------------------------------------------------ closed forms, in law
def test_randomized_response_leaks_and_errors_follow_their_closed_forms():
    eps, n, trials = 0.8, 40, 600
    mech = _rr(eps)
    run = simulate_agents(mech, behaviour.Memoryless(q=0.0, r=0.0), T=1, n0=n, trials=trials, seed=8)
    p = 0.5 + float(bernoulli.beta_from_epsilon(eps))
    _within(run.leaked[:, 0], n * p)                                         # Binomial(N, 1/2 + beta)
    _within((run.leaked[:, 0] - n * p) ** 2, n * p * (1 - p))                # its variance
    _within(run.sq_error[:, 0], float(mech.expected_error(n, eps)))          # Lemma 10, mu ~ U(0, 1)
    _within(run.estimate[:, 0] - run.truth[:, 0], 0.0)                       # eq. 1 is unbiased


@pytest.mark.parametrize("rule", ["leak", "agnostic"])
def test_one_round_grows_by_lemma_2(rule):
    eps, q, r, n = 0.5, 0.3, 0.6, 50
    users = behaviour.Memoryless(q=q, r=r, rule=rule)
    run = simulate_agents(_rr(eps), users, T=1, n0=n, trials=600, policy=Policy(cap=None), seed=9)
    p = 0.5 + float(bernoulli.beta_from_epsilon(eps))
    _within(run.population[:, 1], n * float(users.growth_factor(p)))


# ------------------------------------------------------------------ the policy
def test_the_cap_turns_recruits_away_and_the_floor_brings_a_fresh_user():
    grow = simulate_agents(_rr(0.5), behaviour.Memoryless(q=0.0, r=0.9, rule="agnostic"), T=6, n0=20, trials=3,
                           policy=Policy(cap=25), seed=10)
    assert grow.population.max() == 25 and np.all(grow.population[:, -1] == 25)
    floor = simulate_agents(_rr(np.inf), behaviour.Memoryless(q=1.0, r=0.0), T=3, n0=6, trials=2,
                            policy=Policy(floor=1), seed=10)
    assert floor.population.tolist() == [[6, 1, 1, 1]] * 2 and np.all(floor.alive)


@pytest.mark.parametrize("collapse", ["floor", "repeat", "ran", "penalty"])
def test_a_stopped_trial_makes_no_release_and_is_scored_by_the_collapse_rule(collapse):
    # 6 users who all leave after round 1, floored at 1, stopped at N <= 1
    users = behaviour.Memoryless(q=1.0, r=0.0)
    run = simulate_agents(_rr(np.inf, mu=0.5), users, T=4, n0=6, trials=2,
                          policy=Policy(floor=1, stop=1, collapse=collapse, penalty=7.0), seed=11)
    assert run.population.tolist() == [[6, 1, 1, 1, 1]] * 2
    assert run.alive.tolist() == [[True, False, False, False]] * 2
    assert np.all(run.leaked[:, 1:] == 0)
    first = run.sq_error[:, :1]
    expected = {"floor": np.broadcast_to(float(_rr(np.inf, mu=0.5).one_record_error(np.inf)), (2, 3)),
                "repeat": np.repeat(first, 3, axis=1), "ran": np.repeat(first, 3, axis=1),
                "penalty": np.full((2, 3), 7.0)}[collapse]
    np.testing.assert_allclose(run.sq_error[:, 1:], expected)


def test_the_stateful_mechanism_carries_its_model_across_rounds():
    mech = PrivateFederatedRound(1.0, tau=0.5, R=20.0, clients=ClientLaw(m=1.0, m_sd=1.0, eps=0.5, sigma=1.0),
                                 fedavg=FedAvg(E=1, steps=0.5))
    run = simulate_agents(mech, behaviour.Memoryless(q=0.5, r=0.2), T=4, n0=6, trials=2, seed=12)
    assert run.mechanism_state.shape == (2, mech.d)
    np.testing.assert_array_equal(run.mechanism_state[:, 0], run.details["theta"][:, -1])
    assert np.all(np.diff(run.details["theta"], axis=1) != 0)          # the model moves every round


# ------------------------------------------------------------------ seeding and validation
def test_the_same_seed_gives_the_same_run_and_another_seed_another():
    kw = dict(T=3, n0=15, trials=2)
    users = behaviour.Memoryless(q=0.3, r=0.6)
    a, b = (simulate_agents(_rr(0.5), users, seed=13, **kw) for _ in range(2))
    assert np.array_equal(a.population, b.population) and np.array_equal(a.sq_error, b.sq_error)
    c = simulate_agents(_rr(0.5), users, seed=14, **kw)
    assert not np.array_equal(a.sq_error, c.sq_error)
    g1, g2 = (simulate_agents(_rr(0.5), users, seed=np.random.default_rng(3), **kw) for _ in range(2))
    assert np.array_equal(g1.sq_error, g2.sq_error)


@pytest.mark.parametrize("call, match", [
    (lambda: simulate_agents(_rr([0.5, 1.0]), behaviour.Memoryless(q=0.3, r=0.6), T=2, n0=5, trials=1),
     "^epsilon must be one privacy level"),
    (lambda: simulate_agents(_rr(0.5), behaviour.Memoryless(q=[0.3, 0.4], r=0.6), T=2, n0=5, trials=1),
     "^behaviour must have scalar parameters"),
    (lambda: simulate_agents(_rr(0.5), behaviour.Memoryless(q=0.3, r=0.6), T=0, n0=5, trials=1), "^T "),
    (lambda: simulate_agents(_rr(0.5), behaviour.Memoryless(q=0.3, r=0.6), T=2, n0=0, trials=1), "^n0 "),
    (lambda: simulate_agents(_rr(0.5), behaviour.Memoryless(q=0.3, r=0.6), T=2, n0=5, trials=0), "^trials "),
    (lambda: simulate_agents(_rr(0.5), behaviour.Memoryless(q=0.3, r=0.6), T=2, n0=5, trials=1,
                             policy=Policy(cap=3)), "cap"),
    (lambda: simulate_agents(_rr(0.5), behaviour.Memoryless(q=0.3, r=0.6), T=2, n0=5, trials=1,
                             conventions="both"), "^conventions "),
    (lambda: simulate_agents(_rr(0.5), behaviour.Memoryless(q=0.3, r=0.6), T=2, n0=5, trials=1, seed=-1),
     "^seed "),
    (lambda: _rr(0.5).agent_round(5, -1.0, np.random.default_rng(0)), "^epsilon "),
    (lambda: _rr(0.5).agent_round(0, 1.0, np.random.default_rng(0)), "^n "),
])
def test_bad_input_is_refused_naming_the_parameter(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_parts_that_are_not_a_mechanism_and_a_behaviour_are_refused():
    with pytest.raises(TypeError, match="^mechanism must be"):
        simulate_agents("rr", behaviour.Memoryless(q=0.3, r=0.6), T=2, n0=5, trials=1)
    with pytest.raises(TypeError, match="^behaviour must be"):
        simulate_agents(_rr(0.5), None, T=2, n0=5, trials=1)
