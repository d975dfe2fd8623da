"""perfpriv.engine: the one performative loop and the one mean-field recursion.

* batch invariance: a (cell, level, trial) run is bit-identical alone and in any
  batch of cells, levels and trials, for both mechanisms and both Gaussian draws;
* common random numbers across levels (shared truth path; the Gaussian error is an
  exact quadratic in γ of shared draws);
* schedules, policy presets and overrides, collapse scoring against its definitions,
  ``record="final"``;
* ``mean_field`` against an explicit recursion and against ``simulate`` means (Z
  standard errors), the adjoint gradient against central finite differences;
* result objects: short repr, frozen, ``eq=False``.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from perfpriv import behaviour, bernoulli, engine, gaussian, keyed, leakage
from perfpriv.behaviour import Memoryless
from perfpriv.bernoulli import RandomizedResponse
from perfpriv.engine import Schedule
from perfpriv.gaussian import GaussianMean
from perfpriv.engine import Policy

Z = 4.5
FIELDS = ("population", "sq_error", "leaked", "alive")


def gauss(level, draw="projected", **kw):
    return GaussianMean(level, tau=0.05, d=3, R=30.0, draw=draw, **kw)


MECHANISMS = {
    "rr": lambda level: RandomizedResponse(level),
    "gauss-projected": lambda level: gauss(level, "projected"),
    "gauss-records": lambda level: gauss(level, "records"),
}
LEVELS = {"rr": [0.3, 1.0, np.inf], "gauss-projected": [0.3, 1.0, 4.0], "gauss-records": [0.3, 1.0, 4.0]}


def same(a, b, index_a=(), index_b=()):
    for name in FIELDS:
        np.testing.assert_array_equal(getattr(a, name)[index_a], getattr(b, name)[index_b], err_msg=name)
    for name in a.details:
        np.testing.assert_array_equal(a.details[name][index_a], b.details[name][index_b], err_msg=name)


# ------------------------------------------------------------ batch invariance
@pytest.mark.parametrize("kind", MECHANISMS)
def test_a_level_gives_identical_numbers_alone_and_in_a_grid(kind):
    make, levels = MECHANISMS[kind], LEVELS[kind]
    kw = dict(T=6, n0=40, trials=4, seed=3)
    beh = Memoryless(q=0.3, r=0.5)
    grid = engine.simulate(make(levels), beh, **kw)
    assert grid.population.shape == (3, 4, 7)
    for i, level in enumerate(levels):
        same(grid, engine.simulate(make(level), beh, **kw), (i,))
    # a bigger grid, in another order, does not change them either
    other = engine.simulate(make([levels[2], 2.5, levels[0]]), beh, **kw)
    same(grid, other, (0,), (2,))
    same(grid, other, (2,), (0,))


@pytest.mark.parametrize("kind", MECHANISMS)
def test_a_trial_gives_identical_numbers_in_a_batch_of_any_size(kind):
    make = MECHANISMS[kind]
    beh = Memoryless(q=0.3, r=0.5)
    few = engine.simulate(make(1.0), beh, T=6, n0=40, trials=2, seed=4)
    many = engine.simulate(make(1.0), beh, T=6, n0=40, trials=7, seed=4)
    same(few, many, (), (slice(0, 2),))
    assert not np.array_equal(many.sq_error[0], many.sq_error[1])  # trials differ from each other


@pytest.mark.parametrize("kind", MECHANISMS)
def test_a_cell_gives_identical_numbers_alone_and_in_a_batch_of_cells(kind):
    make, levels = MECHANISMS[kind], LEVELS[kind]
    q = np.array([0.1, 0.5, 0.9])
    r = np.array([0.6, 0.2, 0.4])
    keys = keyed.Key(*np.broadcast_arrays(*[np.array([getattr(keyed.cell_key(9, a, b), w) for a, b in zip(q, r)])
                                               for w in ("a", "b")]))
    batch = engine.simulate(make(levels), Memoryless(q=q, r=r), T=5, n0=30, trials=3, seed=keys)
    assert batch.population.shape == (3, 3, 3, 6)
    for j in range(3):
        alone = engine.simulate(make(levels[1]), Memoryless(q=q[j], r=r[j]), T=5, n0=30, trials=2,
                                seed=keyed.cell_key(9, q[j], r[j]))
        same(batch, alone, (j, 1, slice(0, 2)))
    # one integer seed: cell j is keyed by its own coordinates (q_j, r_j), wherever it sits
    plain = engine.simulate(make(levels), Memoryless(q=q, r=r), T=5, n0=30, trials=3, seed=9)
    for j in range(3):
        same(plain, engine.simulate(make(levels), Memoryless(q=q[j], r=r[j]), T=5, n0=30, trials=3,
                                    seed=keyed.cell_key(9, q[j], r[j])), (j,))
    shuffled = engine.simulate(make(levels), Memoryless(q=q[::-1], r=r[::-1]), T=5, n0=30, trials=3, seed=9)
    same(plain, shuffled, (0,), (2,))


def test_seed_keys_must_match_the_cell_shape():
    with pytest.raises(ValueError, match="one key per cell"):
        engine.simulate(RandomizedResponse(1.0), Memoryless(q=[0.1, 0.2], r=0.5), T=2, n0=5,
                        seed=keyed.root_key(1).child(np.arange(3)))


# ------------------------------------------------------ common random numbers
def test_levels_share_the_truth_path_and_the_leak_draws():
    run = engine.simulate(RandomizedResponse([0.2, 1.0, 5.0]), Memoryless(q=0.0, r=0.0), T=30, n0=50, trials=20,
                          seed=5)
    np.testing.assert_array_equal(run.truth[0], run.truth[1])
    np.testing.assert_array_equal(run.truth[0], run.truth[2])
    # the leak count is one binomial of the same stream at growing keep probabilities: positively
    # correlated across levels (independent streams would give correlation 0, se 1/sqrt(600))
    k = run.leaked.reshape(3, -1).astype(float)
    assert np.corrcoef(k[0], k[1])[0, 1] > Z / math.sqrt(k.shape[1])


@pytest.mark.parametrize("draw", ["projected", "records"])
def test_gaussian_errors_across_levels_are_one_quadratic_in_gamma_of_shared_draws(draw):
    # with q = r = 0 every level keeps N = n0, and ‖ḡ + (γ/√N)ξ‖² is a quadratic in γ with the
    # same coefficients for every γ: three levels determine a fourth exactly
    gam = np.array([0.5, 1.0, 2.0, 3.5])
    run = engine.simulate(gauss(gam, draw), Memoryless(q=0.0, r=0.0), T=4, n0=25, trials=5, seed=6)
    e = run.sq_error.reshape(4, -1)
    V = np.vander(gam[:3], 3)
    coef = np.linalg.solve(V, e[:3])
    np.testing.assert_allclose(np.vander(gam[3:], 3) @ coef, e[3:], rtol=1e-9)
    # and a different seed breaks it (the check has teeth)
    other = engine.simulate(gauss(gam[3:], draw), Memoryless(q=0.0, r=0.0), T=4, n0=25, trials=5, seed=7)
    assert not np.allclose(np.vander(gam[3:], 3) @ coef, other.sq_error.reshape(1, -1), rtol=1e-3)


# ------------------------------------------------------------------ schedules
@pytest.mark.parametrize("kind", MECHANISMS)
def test_a_constant_schedule_equals_the_constant_level(kind):
    make = MECHANISMS[kind]
    beh = Memoryless(q=0.3, r=0.5)
    kw = dict(T=5, n0=40, trials=3, seed=8)
    const = engine.simulate(make(1.0), beh, **kw)
    sched = engine.simulate(make(Schedule([1.0] * 5)), beh, **kw)
    same(const, sched)
    # a grid of schedules: row l equals schedule l alone
    rows = np.array([[1.0] * 5, [0.5, 1.0, 2.0, 4.0, 4.0]])
    grid = engine.simulate(make(Schedule(rows)), beh, **kw)
    assert grid.population.shape == (2, 3, 6)
    same(grid, const, (0,))
    same(grid, engine.simulate(make(Schedule(rows[1])), beh, **kw), (1,))
    mf_const = engine.mean_field(make(1.0), beh, T=5, n0=40)
    mf_sched = engine.mean_field(make(Schedule([1.0] * 5)), beh, T=5, n0=40)
    np.testing.assert_array_equal(mf_const.population, mf_sched.population)
    np.testing.assert_array_equal(mf_const.sq_error, mf_sched.sq_error)


def test_a_schedule_is_used_round_by_round():
    # the mean field's round t uses level t: the population path is the product of the rounds' C
    eps = np.array([0.2, 3.0, 0.5, np.inf])
    path = engine.mean_field(RandomizedResponse(Schedule(eps)), Memoryless(q=0.3, r=0.6), T=4, n0=100, cap=None)
    C = bernoulli.growth_factor(bernoulli.beta_from_epsilon(eps), q=0.3, r=0.6)
    np.testing.assert_allclose(path.population, 100 * np.r_[1, np.cumprod(C)], rtol=1e-14)


def test_schedules_must_cover_the_horizon_and_plain_2d_levels_are_refused():
    with pytest.raises(ValueError, match="one level per round, T=4"):
        engine.simulate(RandomizedResponse(Schedule([1.0, 2.0])), Memoryless(q=0.3, r=0.6), T=4, n0=10)
    with pytest.raises(ValueError, match="Schedule"):
        RandomizedResponse([[1.0, 2.0]])
    with pytest.raises(ValueError, match="values of a Schedule must have shape"):
        Schedule(np.ones((2, 2, 2)))
    assert repr(Schedule([4.0, 1.0])) == "Schedule([4.0, 1.0])"
    assert Schedule(np.ones((3, 7))).T == 7


# ---------------------------------------------------------------------- policy
def test_policy_presets_of_both_conventions_and_mechanisms():
    rr, g = RandomizedResponse(1.0), gauss(1.0)
    preset = lambda mech, conventions: Policy().resolve(mech, conventions, n0=10)   # noqa: E731
    assert preset(rr, "paper") == Policy(cap=20000, floor=1, stop=0, collapse="floor", penalty=0.0)
    assert preset(rr, "authors") == Policy(cap=20000, floor=0, stop=0, collapse="penalty", penalty=10.0)
    assert preset(g, "paper") == Policy(20000, 1, 0, "floor", 0.0)
    assert preset(g, "authors") == Policy(20000, 1, 1, "ran", 0.0)
    # an unset field is the preset's, a set one is kept
    assert Policy(cap=None, penalty=2.0).resolve(rr, "authors", n0=10) == Policy(None, 0, 0, "penalty", 2.0)
    assert Policy().describe() == {} and Policy(stop=1).describe() == {"stop": 1}
    assert repr(Policy(cap=None, floor=0)) == "Policy(cap=None, floor=0)"
    # the mechanisms' open options follow the conventions too
    assert rr.resolved("authors").clip_estimate is True and rr.resolved("paper").clip_estimate is False
    assert g.resolved("authors").statistic == "exact" and g.resolved("paper").statistic == "paper"
    assert gauss(1.0, statistic="paper").resolved("authors").statistic == "paper"  # explicit wins


def test_policy_overrides_take_precedence_over_the_preset():
    g = gauss(1.0)
    pol = Policy(cap=None, floor=0, stop=0, collapse="penalty", penalty=3.0).resolve(g, "authors", n0=10)
    assert pol == Policy(cap=None, floor=0, stop=0, collapse="penalty", penalty=3.0)
    run = engine.simulate(g, Memoryless(q=0.3, r=0.6), T=2, n0=10, conventions="authors", policy=Policy(floor=0),
                          seed=0)
    assert run.policy.floor == 0 and run.policy.stop == 1 and run.policy.collapse == "ran"
    assert run.conventions == "authors" and run.mechanism.statistic == "exact"


def test_a_capped_population_never_exceeds_the_cap_and_cap_none_lets_it_grow():
    beh = Memoryless(q=0.0, r=1.0)
    capped = engine.simulate(RandomizedResponse(1.0), beh, T=14, n0=10, trials=2, policy=Policy(cap=100), seed=1)
    assert capped.population.max() == 100 and np.all(capped.population[:, -1] == 100)
    free = engine.simulate(RandomizedResponse(1.0), beh, T=14, n0=10, trials=2, policy=Policy(cap=None), seed=1)
    assert free.population.max() > 100 and free.cap is None


def _dead_run(collapse, penalty=0.0):
    """A Gaussian run whose trials die at various rounds (q = 1, floor 0)."""
    return engine.simulate(GaussianMean([0.05, 0.2], tau=0.01, d=2, R=30.0), Memoryless(q=0.85, r=0.05),
                           T=8, n0=6, trials=40, policy=Policy(floor=0, collapse=collapse, penalty=penalty), seed=12)


@pytest.mark.parametrize("collapse", engine.COLLAPSE)
def test_collapse_scoring_rules_follow_their_definitions(collapse):
    run = _dead_run(collapse, penalty=7.5)
    raw = _dead_run("repeat")  # the same draws: errors of the rounds that ran are identical
    alive = run.alive
    assert (~alive).any() and alive[..., 0].all() and not alive[..., -1].all()
    np.testing.assert_array_equal(run.sq_error[alive], raw.sq_error[alive])
    gam = np.array([0.05, 0.2])
    for i, j in np.ndindex(alive.shape[:2]):
        a, e = alive[i, j], run.sq_error[i, j]
        if a.all():
            continue
        first = int(np.argmin(a))
        assert not a[first:].any()  # a stopped trial stays stopped
        if collapse == "floor":
            expect = gaussian.mahalanobis_error(gam[i], 1, d=2)  # the expected error of a one-user release
        elif collapse == "repeat":
            expect = e[first - 1]
        elif collapse == "ran":
            expect = e[:first].mean()                            # the mean over the rounds it ran
        else:
            expect = 7.5
        np.testing.assert_allclose(e[first:], expect, rtol=1e-14)
        if collapse == "ran":
            assert e.sum() == pytest.approx(e[:first].mean() * len(e), rel=1e-12)  # mean times T


def test_floor_scoring_of_a_schedule_uses_each_round_s_level():
    sched = Schedule([0.05, 0.05, 0.3, 1.0, 2.0, 3.0])
    run = engine.simulate(GaussianMean(sched, tau=0.01, d=2, R=30.0), Memoryless(q=1.0, r=0.0), T=6, n0=3,
                          trials=5, policy=Policy(floor=0), seed=1)
    dead = ~run.alive
    assert dead[:, -1].all()
    levels = np.broadcast_to(sched.values, run.sq_error.shape)
    np.testing.assert_allclose(run.sq_error[dead], gaussian.mahalanobis_error(levels[dead], 1, d=2), rtol=1e-14)


def test_stop_ends_trials_at_or_below_it_and_leaks_nothing_afterwards():
    run = engine.simulate(gauss(0.05), Memoryless(q=1.0, r=0.0), T=6, n0=20, trials=10, policy=Policy(stop=3), seed=2)
    for k in range(10):
        stopped = np.flatnonzero(run.population[k, :-1] <= 3)
        if stopped.size:
            t = stopped[0]
            assert not run.alive[k, t:].any() and np.all(run.leaked[k, t:] == 0)
            assert np.all(run.population[k, t:] == run.population[k, t])
    with pytest.raises(ValueError, match="stop must be below n0"):
        engine.simulate(gauss(1.0), Memoryless(q=0.3, r=0.6), T=2, n0=3, policy=Policy(stop=3))


@pytest.mark.parametrize("kind", MECHANISMS)
def test_record_final_gives_the_same_populations_and_last_error(kind):
    make = MECHANISMS[kind]
    beh = Memoryless(q=0.3, r=0.5)
    kw = dict(T=6, n0=40, trials=4, seed=9)
    full = engine.simulate(make(LEVELS[kind]), beh, **kw)
    final = engine.simulate(make(LEVELS[kind]), beh, record="final", **kw)
    for name in ("population", "leaked", "alive"):
        np.testing.assert_array_equal(getattr(full, name), getattr(final, name))
    np.testing.assert_array_equal(full.sq_error[..., -1], final.sq_error[..., -1])
    assert np.all(final.sq_error[..., :-1] == 0)


# ------------------------------------------------------------------ mean field
@pytest.mark.parametrize("rule", ["leak", "agnostic"])
@pytest.mark.parametrize("rounds", ["algorithm", "paper"])
def test_randomized_response_mean_field_is_the_explicit_recursion(rule, rounds):
    eps, q, r, T, n0, cap = np.array([0.1, 1.0, np.inf]), 0.3, 0.6, 40, 50.0, 3000.0
    path = engine.mean_field(RandomizedResponse(eps, mu=(0.2, 0.9)), Memoryless(q=q, r=r, rule=rule), T=T, n0=n0,
                             cap=cap, floor=1, rounds=rounds)
    beta = 0.5 * np.tanh(eps / 2)
    keep = 0.5 + beta
    C = 1 - q * keep + (r * (1 - keep) if rule == "leak" else r)
    s2 = ((2 * 0.9 - 1) ** 3 - (2 * 0.2 - 1) ** 3) / (6 * (0.9 - 0.2))  # E[(2μ − 1)²], μ ~ U(0.2, 0.9)
    N = np.empty((3, T + 1))
    N[:, 0] = n0
    for t in range(1, T + 1):
        N[:, t] = np.clip(N[:, t - 1] * C, 1, cap)
    used = N[:, :-1] if rounds == "algorithm" else N[:, 1:]
    err = (0.25 - beta[:, None] ** 2 * s2) / (4 * beta[:, None] ** 2) / used
    np.testing.assert_allclose(path.population, N, rtol=1e-13)
    np.testing.assert_allclose(path.sq_error, err, rtol=1e-8)
    np.testing.assert_allclose(path.leak_probability, np.broadcast_to(keep[:, None], (3, T)), rtol=1e-15)
    np.testing.assert_allclose(path.cumulative_error, err.sum(axis=1), rtol=1e-8)


@pytest.mark.parametrize("statistic", ["paper", "exact"])
@pytest.mark.parametrize("rounds", ["algorithm", "paper"])
def test_gaussian_mean_field_is_the_explicit_recursion(statistic, rounds):
    gam, tau, q, r, T, n0, d, R = 0.8, 0.05, 0.4, 0.5, 8, 60.0, 3, 30.0
    mech = GaussianMean(gam, tau=tau, d=d, R=R, statistic=statistic)
    path = engine.mean_field(mech, Memoryless(q=q, r=r), T=T, n0=n0, cap=150.0, rounds=rounds)
    N, P = [n0], []
    for _ in range(T):
        p = leakage.marginal_leak_probability(N[-1], gam, tau=tau, d=d, R=R, statistic=statistic,
                                              method="quadrature").p
        P.append(p)
        N.append(min(max(N[-1] * (1 + r - (q + r) * p), 1.0), 150.0))
    N = np.array(N)
    used = N[:-1] if rounds == "algorithm" else N[1:]
    np.testing.assert_allclose(path.population, N, rtol=1e-12)
    np.testing.assert_allclose(path.leak_probability, P, rtol=1e-12)
    np.testing.assert_allclose(path.sq_error, (gam**2 * d + d) / used, rtol=1e-12)
    assert path.growth_factor.shape == (T,)


def test_gaussian_leak_probability_is_one_for_a_lone_user_and_linear_up_to_two():
    mech = gauss(1.0)
    p2 = leakage.marginal_leak_probability(2, 1.0, tau=0.05, d=3, R=30.0).p
    np.testing.assert_allclose(mech.leak_probability(np.array([1.0, 1.25, 2.0, np.inf]), 1.0),
                               [1.0, 0.75 + 0.25 * p2, p2, 0.0], rtol=1e-12)


def test_bernoulli_mean_field_is_the_mean_of_simulate_within_standard_errors():
    # no bound binds: E[N_t] = N_0 C^t exactly, and the mean field is exact
    mech, beh = RandomizedResponse([0.5, 2.0]), Memoryless(q=0.4, r=0.5)
    run = engine.simulate(mech, beh, T=6, n0=2000, trials=600, policy=Policy(cap=None), seed=10)
    path = engine.mean_field(mech, beh, T=6, n0=2000, cap=None)
    pop = run.population.astype(float)
    se = pop.std(axis=1, ddof=1) / math.sqrt(600)
    assert np.all(np.abs(pop.mean(axis=1)[:, 1:] - path.population[:, 1:]) < Z * se[:, 1:])
    # the mean field's error at N_{t-1} is exact in the first round (N_0 is not random)
    e1 = run.sq_error[:, :, 0]
    assert np.all(np.abs(e1.mean(axis=1) - path.sq_error[:, 0]) < Z * e1.std(axis=1, ddof=1) / math.sqrt(600))


@pytest.mark.parametrize("draw", ["projected", "records"])
def test_gaussian_mean_field_first_round_is_the_mean_of_simulate(draw):
    mech, beh = gauss([0.4, 1.5], draw), Memoryless(q=0.4, r=0.5)
    run = engine.simulate(mech, beh, T=1, n0=80, trials=3000, seed=11)
    path = engine.mean_field(mech, beh, T=1, n0=80)
    n1 = run.population[..., 1].astype(float)
    se = n1.std(axis=1, ddof=1) / math.sqrt(n1.shape[1])
    assert np.all(np.abs(n1.mean(axis=1) - path.population[:, 1]) < Z * se)
    lf = run.leak_fraction[..., 0]
    assert np.all(np.abs(lf.mean(axis=1) - path.leak_probability[:, 0]) < Z * lf.std(axis=1, ddof=1) / math.sqrt(3000))
    e = run.sq_error[..., 0]
    assert np.all(np.abs(e.mean(axis=1) - path.sq_error[:, 0]) < Z * e.std(axis=1, ddof=1) / math.sqrt(3000))


def test_mean_field_accepts_an_injected_leak_probability_only():
    calls = []

    def p_const(n, level):
        calls.append(np.shape(n))
        return np.full(np.broadcast_shapes(np.shape(n), np.shape(level)), 0.25)

    path = engine.mean_field(gauss(1.0), Memoryless(q=0.4, r=0.2), T=3, n0=100, leak_probability=p_const, cap=None)
    np.testing.assert_allclose(path.population, 100 * (1 + 0.2 - 0.6 * 0.25) ** np.arange(4), rtol=1e-14)
    assert len(calls) == 3
    with pytest.raises(TypeError, match="leak_probability"):
        engine.mean_field(gauss(1.0), Memoryless(q=0.4, r=0.2), T=3, n0=100, leak_probability=0.25)


# -------------------------------------------------------------------- adjoint
def _fd_gradient(make, values, beh, h=1e-5, **kw):
    """Central differences of cumulative_error in log level_t, round by round."""
    out = np.empty(values.size)
    for t in range(values.size):
        up, dn = values.copy(), values.copy()
        up[t] *= math.exp(h)
        dn[t] *= math.exp(-h)
        f_up = engine.mean_field(make(Schedule(up)), beh, **kw).cumulative_error
        f_dn = engine.mean_field(make(Schedule(dn)), beh, **kw).cumulative_error
        out[t] = (f_up - f_dn) / (2 * h)
    return out


ADJOINT_CASES = {
    "rr": (lambda s: RandomizedResponse(s), np.array([0.3, 0.8, 1.5, 0.5, 2.0, 1.0])),
    "gauss": (lambda s: GaussianMean(s, tau=0.05, d=3, R=30.0), np.array([0.6, 1.0, 2.0, 0.8, 3.0, 1.5])),
}


@pytest.mark.parametrize("kind", ADJOINT_CASES)
@pytest.mark.parametrize("rounds", ["algorithm", "paper"])
@pytest.mark.parametrize("rule", ["leak", "agnostic"])
def test_adjoint_gradient_equals_central_differences_of_the_cumulative_error(kind, rounds, rule):
    make, values = ADJOINT_CASES[kind]
    beh = Memoryless(q=0.35, r=0.45, rule=rule)
    kw = dict(T=values.size, n0=80, cap=None, floor=None, rounds=rounds)
    path = engine.mean_field(make(Schedule(values)), beh, gradient=True, **kw)
    fd = _fd_gradient(make, values, beh, **kw)
    np.testing.assert_allclose(path.gradient, fd, rtol=2e-5, atol=1e-9 * np.abs(fd).max())
    assert np.all(path.gradient != 0)
    # the forward pass with gradient=True is the plain recursion
    plain = engine.mean_field(make(Schedule(values)), beh, **kw)
    np.testing.assert_allclose(path.cumulative_error, plain.cumulative_error, rtol=1e-14)


def test_adjoint_gradient_stops_at_a_binding_cap():
    # once the cap binds, a round's level no longer moves later populations: only its own error
    values = np.array([2.0, 2.0, 2.0, 2.0])
    beh = Memoryless(q=0.0, r=1.0)
    kw = dict(T=4, n0=100, cap=150.0, rounds="algorithm")
    path = engine.mean_field(GaussianMean(Schedule(values), tau=0.05, d=3, R=30.0), beh, gradient=True, **kw)
    fd = _fd_gradient(lambda s: GaussianMean(s, tau=0.05, d=3, R=30.0), values, beh, **kw)
    np.testing.assert_allclose(path.gradient, fd, rtol=1e-5)


def test_gradient_of_a_grid_of_schedules_has_one_row_per_schedule():
    rows = np.array([[0.5, 1.0, 2.0], [2.0, 1.0, 0.5]])
    path = engine.mean_field(RandomizedResponse(Schedule(rows)), Memoryless(q=0.3, r=0.6), T=3, n0=50,
                             gradient=True)
    assert path.gradient.shape == (2, 3)
    for i in range(2):
        alone = engine.mean_field(RandomizedResponse(Schedule(rows[i])), Memoryless(q=0.3, r=0.6), T=3, n0=50,
                                  gradient=True)
        np.testing.assert_allclose(path.gradient[i], alone.gradient, rtol=1e-14)


# ---------------------------------------------------------------- the results
def test_results_are_frozen_compare_by_identity_and_have_a_short_repr():
    run = engine.simulate(RandomizedResponse(np.geomspace(0.1, 10, 30)), Memoryless(q=0.3, r=0.6), T=50, n0=100,
                          trials=10, seed=1)
    path = engine.mean_field(gauss(np.geomspace(0.2, 20, 30)), Memoryless(q=np.linspace(0, 1, 5), r=0.6),
                             T=20, n0=100)
    for res in (run, path):
        text = repr(res)
        assert "\n" not in text and len(text) < 400, text
        assert res == res and not (res == dataclasses.replace(res))  # eq=False: identity, never raises
        with pytest.raises(dataclasses.FrozenInstanceError):
            res.population = None
    assert "population=<int64 (30, 10, 51)>" in repr(run)
    # provenance
    assert (run.T, run.n0, run.trials, run.seed, run.conventions, run.cap, run.floor) == (50, 100, 10, 1, "paper",
                                                                                          20000, 1)
    assert np.allclose(run.level, np.geomspace(0.1, 10, 30)) and run.method == "engine"
    assert path.population.shape == (5, 30, 21) and (path.T, path.n0, path.rounds) == (20, 100, "algorithm")


def test_run_views_are_the_documented_reductions():
    run = engine.simulate(RandomizedResponse([0.5, 2.0]), Memoryless(q=0.3, r=0.6), T=7, n0=30, trials=5, seed=2)
    np.testing.assert_array_equal(run.mean_population, run.population.mean(axis=-2))
    np.testing.assert_array_equal(run.cumulative_error, run.sq_error.sum(axis=-1))
    np.testing.assert_array_equal(run.leak_fraction, run.leaked / run.population[..., :-1])
    np.testing.assert_array_equal(run.collapsed, ~run.alive[..., -1])
    with pytest.raises(AttributeError, match="records no 'estimate'"):
        engine.simulate(gauss(1.0), Memoryless(q=0.3, r=0.6), T=2, n0=10, seed=0).estimate


def test_a_call_that_would_record_too_much_is_refused_before_allocating():
    with pytest.raises(ValueError, match="simulate fewer"):
        engine.simulate(RandomizedResponse(np.linspace(0.1, 5, 1000)), Memoryless(q=0.3, r=0.6), T=1000, n0=10,
                        trials=1000)


def test_engine_checks_its_ingredients():
    with pytest.raises(TypeError, match="mechanism must be a perfpriv mechanism"):
        engine.simulate("rr", Memoryless(q=0.3, r=0.6), T=2, n0=10)
    with pytest.raises(TypeError, match="behaviour must be a perfpriv behaviour"):
        engine.mean_field(RandomizedResponse(1.0), "memoryless", T=2, n0=10)


class _Tally(engine.Mechanism):
    """A stateful toy: the state counts the rounds a trial ran plus the leaks it saw; each round a
    user leaks with probability 1 / (2 + state) and the round's error is the state before it."""

    name = "tally"
    level_name = "level"
    stateful = True

    def __init__(self, level=(1.0, 2.0)):
        self.levels = engine.make_levels(level, "level", low=0.0)

    def initial_state(self, batch):
        return np.zeros(batch + (1,))

    def advance(self, state, n, level, keys, live, t, need_error=True):
        s = state[..., 0]
        p = np.broadcast_to(1.0 / (2.0 + s * level), np.shape(s))
        leaked = keyed.binomial(keys.child("leak"), np.broadcast_to(n, p.shape), p)
        out = engine.RoundOutcome(sq_error=s.copy(), leaked=leaked, details={})
        return out, (s + 1.0 + leaked)[..., None]

    def leak_probability(self, n, level):
        raise AssertionError("not used")

    def expected_error(self, n, level):
        return np.zeros(np.broadcast_shapes(np.shape(n), np.shape(level)))


def test_a_stateful_mechanism_state_is_threaded_round_by_round_and_frozen_once_a_trial_stops():
    run = engine.simulate(_Tally(), Memoryless(q=0.9, r=0.05), T=12, n0=6, trials=40, seed=3,
                          policy=Policy(stop=1, floor=0, collapse="repeat"))
    ran = run.alive.sum(axis=-1)
    assert 0 < ran.min() < 12 and ran.max() == 12      # some trials stop early, some run to the end
    # the final state counts every round run plus every leak seen -- and nothing after a stop
    np.testing.assert_array_equal(run.mechanism_state[..., 0], ran + run.leaked.sum(axis=-1))
    # the error of round t is the state before it: the running count up to round t - 1
    before = np.concatenate([np.zeros(run.leaked.shape[:-1] + (1,)),
                             np.cumsum(run.alive + run.leaked, axis=-1)[..., :-1]], axis=-1)
    np.testing.assert_array_equal(np.where(run.alive, run.sq_error, 0.0), np.where(run.alive, before, 0.0))
    # the state drives the draws: level 2 makes leaks rarer than level 1 once state > 0
    assert run.leaked[1].sum() < run.leaked[0].sum()
    # a level alone gives its row of the grid (state and all)
    alone = engine.simulate(_Tally(2.0), Memoryless(q=0.9, r=0.05), T=12, n0=6, trials=40, seed=3,
                            policy=Policy(stop=1, floor=0, collapse="repeat"))
    np.testing.assert_array_equal(alone.mechanism_state, run.mechanism_state[1])
    with pytest.raises(ValueError, match="does not follow mechanism states"):
        engine.mean_field(_Tally(), Memoryless(q=0.9, r=0.05), T=3, n0=6)


def test_a_stateful_mechanism_returning_a_wrong_state_shape_is_refused():
    class Bad(_Tally):
        def advance(self, state, n, level, keys, live, t, need_error=True):
            out, new = super().advance(state, n, level, keys, live, t, need_error)
            return out, new[..., 0]

    with pytest.raises(ValueError, match="returned a state of shape"):
        engine.simulate(Bad(), Memoryless(q=0.5, r=0.5), T=2, n0=4, trials=2, seed=0)


def test_an_oversized_run_is_refused_naming_T_and_its_sizes():
    with pytest.raises(ValueError, match=r"T=1000000000000, cells=1, levels=2, trials=3: this call would record"):
        engine.simulate(RandomizedResponse([1.0, 2.0]), Memoryless(q=0.3, r=0.6), T=10**12, n0=5, trials=3, seed=0)


def test_the_agent_reference_takes_a_generator_seed_and_survives_a_vanishing_epsilon():
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        run = engine.simulate_agents(RandomizedResponse(1e-300), Memoryless(q=0.3, r=0.6), T=2, n0=5, trials=2,
                                     seed=np.random.default_rng(1))
    assert np.all(np.isinf(run.sq_error))
    with pytest.raises(ValueError, match="T=3, trials=1000000000000"):
        engine.simulate_agents(RandomizedResponse(1.0), Memoryless(q=0.3, r=0.6), T=3, n0=10, trials=10**12, seed=0)


def test_independent_levels_key_a_level_by_its_value_and_keep_each_levels_law():
    users = Memoryless(q=np.array([0.3, 0.7]), r=0.6)
    grid = engine.simulate(RandomizedResponse([0.5, 2.0, 8.0]), users, T=10, n0=100, trials=4, seed=1,
                           common_numbers=False)
    alone = engine.simulate(RandomizedResponse(2.0), users, T=10, n0=100, trials=4, seed=1, common_numbers=False)
    assert np.array_equal(alone.population, grid.population[:, 1])
    shared = engine.simulate(RandomizedResponse([0.5, 2.0, 8.0]), users, T=10, n0=100, trials=4, seed=1)
    assert not np.array_equal(shared.population, grid.population)
    # the same law: final populations of 400 trials at one level, independent vs shared draws
    kw = dict(T=8, n0=200, trials=400, seed=5)
    a = engine.simulate(RandomizedResponse([1.0, 3.0]), Memoryless(q=0.5, r=0.4), common_numbers=False, **kw)
    b = engine.simulate(RandomizedResponse([1.0, 3.0]), Memoryless(q=0.5, r=0.4), **kw)
    fa, fb = a.population[..., -1].astype(float), b.population[..., -1].astype(float)
    se = np.hypot(fa.std(axis=-1, ddof=1), fb.std(axis=-1, ddof=1)) / np.sqrt(400)
    assert np.all(np.abs(fa.mean(axis=-1) - fb.mean(axis=-1)) < 4.5 * se)
    with pytest.raises(TypeError, match="common_numbers"):
        engine.simulate(RandomizedResponse(1.0), users, T=2, n0=5, common_numbers="no")


def test_a_gaussian_population_too_large_for_memory_is_refused_by_name():
    mech = GaussianMean(2.0, tau=0.02, d=12, R=10.0)
    with pytest.raises(ValueError, match=r"n0=1000000000000: GaussianMean draws numbers for every record"):
        engine.simulate(mech, Memoryless(q=0.3, r=0.6), T=2, n0=10**12, policy=Policy(cap=None), seed=0)
    with pytest.raises(ValueError, match=r"cap=1000000000: "):
        engine.simulate(mech, Memoryless(q=0.3, r=0.6), T=2, n0=100, policy=Policy(cap=10**9), seed=0)


def test_levels_at_takes_a_round_number_within_the_schedule():
    constant = engine.make_levels([1.0, 2.0], "gamma", low=0)
    schedule = engine.make_levels(Schedule([1.0, 2.0, 3.0]), "gamma", low=0)
    np.testing.assert_array_equal(schedule.at(2.0), [2.0])             # an integral float is a round number
    np.testing.assert_array_equal(constant.at(7), [1.0, 2.0])
    for levels, t, match in ((schedule, 0, r"t must be an integer in \[1, 3\]"),
                             (schedule, 4, r"t must be an integer in \[1, 3\]"),   # was numpy's IndexError
                             (schedule, 1.5, r"t must be an integer in \[1, 3\]"),
                             (constant, 0, r"t must be an integer >= 1")):          # was the levels, silently
        with pytest.raises(ValueError, match=match):
            levels.at(t)
    with pytest.raises(TypeError, match=r"^t must be an integer"):
        schedule.at("a")


class _AwayOneRound(behaviour.Behaviour):
    """Leaked users leave for one round and then all come back; nobody joins. State (active, away)."""

    types = 2

    def step(self, state, leaked, keys, context=None):
        return np.stack([state[..., 0] - leaked + state[..., 1], leaked], axis=-1)

    def population(self, state):
        return state[..., 0]

    def bound(self, state, floor, cap, keys=None):
        return state

    def mean_field_step(self, state, p, context=None):
        return state

    mean_field_bound = bound


class _AwayCounted(_AwayOneRound):
    def remaining(self, state):
        return state[..., 0] + state[..., 1]


def test_the_stop_rule_reads_the_users_who_may_come_back():
    # under randomized response at eps = inf every user leaks: the active users alternate 10, 0, 10, 0, ...
    rr = bernoulli.RandomizedResponse(np.inf)
    policy = Policy(floor=0, stop=0)
    counted = engine.simulate(rr, _AwayCounted(), T=4, n0=10, trials=2, seed=1, policy=policy)
    assert counted.population.tolist() == [[10, 0, 10, 0, 10]] * 2
    assert counted.alive.all()                              # the away users keep the run going
    plain = engine.simulate(rr, _AwayOneRound(), T=4, n0=10, trials=2, seed=1, policy=policy)
    assert plain.alive.tolist() == [[True, False, False, False]] * 2     # the default: the population only
    assert plain.population.tolist() == [[10, 0, 0, 0, 0]] * 2


def test_a_behaviour_that_counts_away_users_runs_round_by_round():
    # the compiled loop's stop reads the population, so a behaviour overriding remaining runs in the
    # round-by-round loop, which gives the compiled loop's numbers (here nothing is ever away)
    class Counted(behaviour.Memoryless):
        def remaining(self, state):
            return self.population(state) + 1

    rr = bernoulli.RandomizedResponse([0.5, 2.0])
    a = engine.simulate(rr, Counted(q=0.3, r=0.6), T=5, n0=50, trials=3, seed=2)
    b = engine.simulate(rr, behaviour.Memoryless(q=0.3, r=0.6), T=5, n0=50, trials=3, seed=2)
    assert np.array_equal(a.population, b.population) and np.array_equal(a.sq_error, b.sq_error)


@pytest.mark.parametrize("run", [
    lambda m, u: engine.simulate(m, u, T=2, n0=10, trials=2, seed=0),
    lambda m, u: engine.simulate_agents(m, u, T=2, n0=10, trials=2, seed=0),
    lambda m, u: engine.mean_field(m, u, T=2, n0=10),
], ids=["simulate", "simulate_agents", "mean_field"])
def test_a_mechanism_built_without_a_level_is_refused_naming_it_before_any_work(run):
    # GaussianMean(gamma=None) describes the model only (thresholds and searches choose gamma)
    bare = GaussianMean(tau=0.02, d=3, R=8.0)
    assert repr(bare).startswith("GaussianMean(gamma=None,")
    with pytest.raises(ValueError, match=r"^mechanism: GaussianMean was built without a privacy level; give it "
                                         r"its gamma"):
        run(bare, Memoryless(q=0.3, r=0.6))
