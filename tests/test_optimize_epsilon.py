"""Tests of the ε* searches of perfpriv.optimize (paper Figs. 2 and 7).

Truth: the argmin of the reported objective, the mean-field error of
perfpriv.bernoulli (its own tests pin it), independent runs of
perfpriv.engine.simulate (in distribution, and number for number under the
documented keying of a cell), and the paper's qualitative claims, asserted
beyond Monte Carlo error.
"""

from __future__ import annotations

import numpy as np
import pytest

from perfpriv import bernoulli as B
from perfpriv import engine, keyed, sweep
from perfpriv import optimize as O
from perfpriv.behaviour import Heterogeneous, LeakCount, Memoryless
from perfpriv.engine import Policy, Schedule

Z = 4.5
EPS = np.array([0.05, 0.15, 0.4, 1.0, 2.5, 6.0, np.inf])


def rr(epsilons=EPS, mu=(0.5, 1.0), clip_estimate=None):
    """The mechanism of a search: its levels are the grid of budgets; mu=(0.5, 1.0) is the paper's (and the old
    simulated search's default; RandomizedResponse's own default is (0, 1))."""
    return B.RandomizedResponse(epsilons, mu=mu, clip_estimate=clip_estimate)


def test_one_public_home_in_optimize():
    import perfpriv

    for name in ("optimal_epsilon", "mean_field_optimal_epsilon", "EpsilonOptimum"):
        assert name in O.__all__ and hasattr(O, name)
    assert "epsilon_search" not in perfpriv.__all__


def test_result_is_frozen_compared_by_identity_and_has_a_short_repr():
    import dataclasses

    res = O.optimal_epsilon(rr(), Memoryless(q=0.3, r=0.6), T=5, n0=20, trials=2, seed=0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        res.epsilon = 1.0
    same = O.optimal_epsilon(rr(), Memoryless(q=0.3, r=0.6), T=5, n0=20, trials=2, seed=0)
    assert res != same and res == res
    assert "\n" not in repr(res) and len(repr(res)) < 200 and repr(res).startswith("EpsilonOptimum(")
    assert res.settings["seed"] == 0 and res.settings["T"] == 5


def test_scalar_and_grid_shapes():
    res = O.optimal_epsilon(rr(), Memoryless(q=0.3, r=0.6), T=30, n0=50, trials=4, seed=0)
    assert isinstance(res.epsilon, float)
    assert res.values.shape == res.se.shape == (EPS.size,)
    assert np.array_equal(res.epsilons, EPS)
    assert res.epsilon == EPS[res.index]
    q, r = np.meshgrid([0.1, 0.5, 0.9], [0.2, 0.8], indexing="ij")
    grid = O.optimal_epsilon(rr(), Memoryless(q=q, r=r), T=30, n0=50, trials=4, seed=0)
    assert grid.epsilon.shape == (3, 2) and grid.values.shape == (3, 2, EPS.size)
    assert np.all(grid.epsilon == EPS[grid.index])
    mf = O.mean_field_optimal_epsilon(rr(), Memoryless(q=q, r=r), T=30, n0=50)
    assert mf.epsilon.shape == (3, 2) and np.all(mf.se == 0)


def test_optimum_is_the_argmin_of_the_reported_errors():
    res = O.optimal_epsilon(rr(), Memoryless(q=[0.2, 0.7], r=[0.8, 0.3]), T=40, n0=80, trials=5, seed=1)
    for k in range(2):
        assert res.epsilon[k] == EPS[np.argmin(res.values[k])]


def test_same_seed_same_result_other_seed_differs():
    kw = dict(T=40, n0=80, trials=5)
    a = O.optimal_epsilon(rr(), Memoryless(q=0.3, r=0.6), seed=5, **kw)
    b = O.optimal_epsilon(rr(), Memoryless(q=0.3, r=0.6), seed=5, **kw)
    c = O.optimal_epsilon(rr(), Memoryless(q=0.3, r=0.6), seed=6, **kw)
    assert np.array_equal(a.values, b.values) and a.epsilon == b.epsilon
    assert not np.array_equal(a.values, c.values)


def test_cell_result_does_not_depend_on_the_rest_of_the_grid():
    kw = dict(T=40, n0=80, trials=5, seed=9)
    q = np.array([[0.1, 0.4], [0.7, 0.25]])
    r = np.array([[0.9, 0.5], [0.2, 0.6]])
    grid = O.optimal_epsilon(rr(), Memoryless(q=q, r=r), **kw)
    for cell in np.ndindex(q.shape):
        alone = O.optimal_epsilon(rr(), Memoryless(q=q[cell], r=r[cell]), **kw)
        assert np.array_equal(grid.values[cell], alone.values)
    flipped = O.optimal_epsilon(rr(), Memoryless(q=q[::-1, ::-1], r=r[::-1, ::-1]), **kw)
    assert np.array_equal(flipped.values[::-1, ::-1], grid.values)


def test_errors_equal_in_distribution_to_simulate_final_round_error():
    # optimal_epsilon computes only the last round's error (record="final"); its mean final error
    # must agree with that of independent full runs of simulate (difference-of-means z-test)
    eps, q, r, T, n0, trials = [0.4, 2.0], 0.3, 0.6, 30, 100, 800
    res = O.optimal_epsilon(rr(eps), Memoryless(q=q, r=r), T=T, n0=n0, trials=trials, seed=3)
    run = engine.simulate(rr(eps), Memoryless(q=q, r=r), T=T, n0=n0, trials=trials, seed=4)
    final = run.sq_error[..., -1]
    se = np.sqrt(res.se**2 + final.var(axis=-1, ddof=1) / trials)
    assert np.all(zscore(res.values, final.mean(axis=-1), se) < Z)


def zscore(a, b, se):
    return np.abs(np.asarray(a) - np.asarray(b)) / np.asarray(se)


def test_finite_epsilon_wins_when_r_much_larger_than_q():
    # leak model, r >> q: a finite epsilon grows the population to the cap while
    # eps = inf (everybody leaks, nobody recruits) shrinks it: the paper's §3 claim
    res = O.optimal_epsilon(rr(), Memoryless(q=0.1, r=0.9), trials=100, seed=0)
    assert np.isfinite(res.epsilon)
    i = res.index
    gap = res.values[-1] - res.values[i]
    assert gap > Z * np.hypot(res.se[-1], res.se[i])
    # the mean-field prediction picks the same grid point here
    assert O.mean_field_optimal_epsilon(rr(), Memoryless(q=0.1, r=0.9)).epsilon == res.epsilon


def test_optimal_epsilon_falls_as_the_leaving_rate_rises():
    # the paper's claim (Fig. 2): where eps* is finite it decreases with q
    eps = np.geomspace(0.02, 20, 25)
    qs = np.array([0.1, 0.3, 0.5, 0.7])
    mf = O.mean_field_optimal_epsilon(rr(eps), Memoryless(q=qs, r=0.9))
    assert np.all(np.diff(mf.epsilon) < 0)
    sim = O.optimal_epsilon(rr(eps), Memoryless(q=qs, r=np.full(4, 0.9)), trials=10, seed=2)
    assert sim.epsilon[0] > sim.epsilon[-1]


def test_agnostic_model_prefers_no_privacy_when_r_exceeds_q():
    # appendix B: recruits do not depend on leaks, the population fills the cap anyway
    eps = np.array([0.1, 0.5, 1.0, 2.0, np.inf])
    res = O.optimal_epsilon(rr(eps), Memoryless(q=0.1, r=0.5, rule="agnostic"), trials=200, seed=0)
    assert res.epsilon == np.inf
    # eps = inf beats every eps <= 1 by more than Z standard errors
    gap = res.values[:3] - res.values[-1]
    assert np.all(gap > Z * np.hypot(res.se[:3], res.se[-1]))
    assert O.mean_field_optimal_epsilon(rr(eps), Memoryless(q=0.1, r=0.5, rule="agnostic")).epsilon == np.inf


def test_clip_estimate_bounds_the_error_as_in_the_authors_code():
    eps = np.array([0.01, 0.1, 1.0])
    kw = dict(T=20, n0=50, trials=20, seed=4)
    raw = O.optimal_epsilon(rr(eps), Memoryless(q=0.6, r=0.3), **kw)
    clipped = O.optimal_epsilon(rr(eps, clip_estimate=True), Memoryless(q=0.6, r=0.3), **kw)
    assert raw.values[0] > 1  # eq. 1 at eps = 0.01 from a few users: huge variance
    assert np.all(clipped.values <= 1) and np.all(clipped.values <= raw.values)


def test_mean_field_optimum_is_argmin_of_mean_field_error():
    q, r = np.array([0.2, 0.5]), np.array([0.7, 0.9])
    res = O.mean_field_optimal_epsilon(rr(mu=(0.0, 1.0)), Memoryless(q=q, r=r, rule="leak"), T=50, n0=100)
    errs = B.mean_field(EPS, q=q, r=r, T=50, n0=100, mu=(0.0, 1.0)).sq_error[..., -1]
    np.testing.assert_allclose(res.values, errs)
    assert np.array_equal(res.epsilon, EPS[np.argmin(errs, axis=-1)])


def test_epsilon_inf_alone_works():
    res = O.optimal_epsilon(rr([np.inf]), Memoryless(q=0.2, r=0.2), T=10, n0=20, trials=3, seed=0)
    assert res.epsilon == np.inf and np.all(np.isfinite(res.values))
    one = O.optimal_epsilon(rr([np.inf]), Memoryless(q=0.2, r=0.2), T=10, n0=20, trials=1, seed=0)
    assert np.isposinf(one.se).all()                  # one run resolves nothing (perfpriv._stats.mean_se)


@pytest.mark.parametrize("kwargs,name", [
    (dict(epsilons=[-1.0, 1.0]), "epsilon"),
    (dict(epsilons=[np.nan]), "epsilon"),
    (dict(epsilons=[0.0, 1.0]), "epsilon"),
    (dict(epsilons=[]), "epsilon"),
    (dict(epsilons=[[1.0, 2.0]]), "epsilon"),
    (dict(q=1.5), "q"),
    (dict(r=-0.2), "r"),
    (dict(T=0), "T"),
    (dict(n0=0), "n0"),
    (dict(trials=0), "trials"),
    (dict(cap=5), "cap"),
    (dict(rule="other"), "rule"),
])
def test_bad_input_raises_value_error_naming_the_parameter(kwargs, name):
    # the budgets are the mechanism's (named as it names them, "epsilon"), the cells and the rule the users'
    # (checked where they enter), the cap the policy's (checked by the search against n0)
    args = dict(q=0.3, r=0.6, epsilons=[0.5, 1.0], T=5, n0=10, trials=2, cap=100, rule="leak")
    args.update(kwargs)
    q, r, eps, cap, rule = (args.pop(k) for k in ("q", "r", "epsilons", "cap", "rule"))
    with pytest.raises(ValueError, match=name):  # a simulated search takes the cap in its Policy
        O.optimal_epsilon(rr(eps), Memoryless(q=q, r=r, rule=rule), seed=0, policy=Policy(cap=cap), **args)
    if name == "trials":  # the mean-field search has no trials
        return
    args.pop("trials")
    with pytest.raises(ValueError, match=name):  # the budgets, cells and cap are checked where they enter
        O.mean_field_optimal_epsilon(rr(eps), Memoryless(q=q, r=r, rule=rule), policy=Policy(cap=cap), **args)


def _simulated(mechanism, users, **kw):
    return O.optimal_epsilon(mechanism, users, trials=2, seed=0, **kw)


SEARCHES = {"simulation": _simulated, "mean_field": O.mean_field_optimal_epsilon}


@pytest.mark.parametrize("search", SEARCHES)
@pytest.mark.parametrize("mechanism", [None, [0.5, 1.0], 1.0, "rr"])
def test_searches_refuse_a_mechanism_that_is_not_randomized_response(mechanism, search):
    # was optimal_epsilon(epsilons=...): a grid of numbers is no mechanism now
    from perfpriv.gaussian import GaussianMean

    mechanism = GaussianMean([0.5, 1.0, 2.0], tau=0.02, d=3, R=10.0) if mechanism == "rr" else mechanism
    with pytest.raises(TypeError, match=r"^mechanism must be a perfpriv\.bernoulli\.RandomizedResponse"):
        SEARCHES[search](mechanism, Memoryless(q=0.3, r=0.6), T=5, n0=10)


@pytest.mark.parametrize("search", SEARCHES)
@pytest.mark.parametrize("users", [None, (0.3, 0.6), dict(q=0.3, r=0.6), lambda q, r: Memoryless(q=q, r=r)])
def test_searches_refuse_users_that_are_not_a_behaviour(users, search):
    # was optimal_epsilon(q=..., r=..., behaviour=callable): the old behaviour callable (q, r) -> Behaviour is
    # refused too: the Behaviour itself is the map
    with pytest.raises(TypeError, match=r"^users must be a perfpriv\.behaviour\.Behaviour"):
        SEARCHES[search](rr(), users, T=5, n0=10)


@pytest.mark.parametrize("search", SEARCHES)
def test_searches_refuse_a_mechanism_without_a_grid_of_budgets(search):
    import copy

    cases = [(rr(Schedule([0.5, 1.0, 2.0])), "a schedule"),
             (rr(engine.PerCell(np.array([0.5, 2.0]))), "levels per cell")]
    bare = copy.copy(rr([1.0]))
    bare.levels = None                     # a mechanism without levels (no public constructor makes one)
    cases.append((bare, "no level"))
    for mech, kind in cases:
        # engine.level_grid's message (it said "must hold the budgets to search ... no budget" before the
        # searches shared engine.level_grid)
        with pytest.raises(ValueError, match=rf"^mechanism must hold the epsilon values to run.*{kind}"):
            SEARCHES[search](mech, Memoryless(q=[0.3, 0.4], r=0.6), T=3, n0=10)


@pytest.mark.parametrize("options", [dict(chunk=1), 2, "sequential", sweep.map_grid])
def test_simulated_search_refuses_options_that_are_not_an_execution(options):
    # was chunk=, n_jobs=, progress=, on_cells= on the search itself
    with pytest.raises(TypeError, match=r"^options must be a perfpriv\.sweep\.Execution"):
        O.optimal_epsilon(rr(), Memoryless(q=0.3, r=0.6), T=3, n0=10, trials=2, seed=0, options=options)


def test_mean_field_search_takes_the_policy_and_any_behaviour_and_records_them():
    users = Memoryless(q=[0.2, 0.6], r=0.7, rule="agnostic")
    res = O.mean_field_optimal_epsilon(rr(mu=(0.0, 1.0)), users, T=12, n0=60, policy=Policy(cap=80, floor=0))
    path = B.mean_field(EPS, q=[0.2, 0.6], r=0.7, T=12, n0=60, rule="agnostic", mu=(0.0, 1.0), cap=80, floor=0)
    np.testing.assert_array_equal(res.values, path.sq_error[..., -1])
    assert res.settings == dict(T=12, n0=60, rule="agnostic", mu=(0.0, 1.0), cap=80, floor=0, users=users)
    default = O.mean_field_optimal_epsilon(rr(), Memoryless(q=0.3, r=0.6), T=5, n0=50)
    assert default.settings["cap"] == 20000 and default.settings["floor"] == 1 and default.settings["rule"] == "leak"
    with pytest.raises(ValueError, match="cap must be >= n0"):
        O.mean_field_optimal_epsilon(rr(), Memoryless(q=0.3, r=0.6), T=5, n0=50, policy=Policy(cap=10))
    with pytest.raises(TypeError, match="policy"):
        O.mean_field_optimal_epsilon(rr(), Memoryless(q=0.3, r=0.6), T=5, n0=50, policy=dict(cap=100))
    leaky = O.mean_field_optimal_epsilon(rr(), LeakCount(k=3, q=0.3, r=0.6), T=5, n0=50)
    assert leaky.settings["users"].k == 3 and not np.array_equal(leaky.values, default.values)


def test_simulated_search_records_its_mechanism_and_users_in_the_settings():
    users = Memoryless(q=[0.2, 0.6], r=0.7, rule="agnostic")
    res = O.optimal_epsilon(rr(mu=(0.0, 1.0), clip_estimate=True), users, T=4, n0=30, trials=2, seed=3,
                            policy=Policy(cap=200))
    assert res.settings["users"] is users and res.settings["rule"] == "agnostic"
    assert res.settings["mu"] == (0.0, 1.0) and res.settings["clip_estimate"] is True
    assert res.settings["seed"] == 3 and res.settings["trials"] == 2
    with pytest.raises(TypeError, match="policy"):
        O.optimal_epsilon(rr(), users, T=4, n0=30, trials=2, seed=3, policy=dict(cap=200))


def test_q_and_r_of_different_shapes_that_do_not_broadcast_are_rejected():
    with pytest.raises(ValueError) as info:
        O.optimal_epsilon(rr(), Memoryless(q=[0.1, 0.2], r=[0.1, 0.2, 0.3]), T=5, n0=10, seed=0)
    import re

    assert re.search(r"\bq\b", str(info.value)) and re.search(r"\br\b", str(info.value)), str(info.value)


# ---------------------------------------------------------------- sweep layer
TINY = dict(T=15, n0=40, trials=3, seed=21)
Q_TINY, R_TINY = np.meshgrid([0.2, 0.6], [0.3, 0.8, 0.5], indexing="ij")


def test_a_cell_is_simulate_with_the_key_of_its_coordinates_number_for_number():
    # the documented contract: a cell's numbers are those of engine.simulate with the cell's key
    res = O.optimal_epsilon(rr(), Memoryless(q=0.6, r=0.8), **TINY)
    run = engine.simulate(rr(), Memoryless(q=0.6, r=0.8), T=15, n0=40, trials=3, seed=keyed.cell_key(21, 0.6, 0.8))
    final = run.sq_error[..., -1]
    assert np.array_equal(res.values, final.mean(axis=-1))
    assert np.allclose(res.se, final.std(axis=-1, ddof=1) / np.sqrt(3), rtol=1e-12, atol=0)


def test_a_one_cell_map_is_keyed_like_that_cell_of_a_larger_map():
    # optimal_epsilon(mech, Memoryless(q=0.3, r=0.6)) is the (0.3, 0.6) cell of any map holding it, wherever it
    # sits there -- a one-cell map is keyed by its coordinates, not by the root seed alone
    kw = dict(T=12, n0=40, trials=3, seed=13)
    one = O.optimal_epsilon(rr(), Memoryless(q=0.3, r=0.6), **kw)
    q, r = np.meshgrid([0.1, 0.3, 0.8], [0.2, 0.6], indexing="ij")
    big = O.optimal_epsilon(rr(), Memoryless(q=q, r=r), **kw)
    assert np.array_equal(big.values[1, 1], one.values) and np.array_equal(big.se[1, 1], one.se)
    assert big.epsilon[1, 1] == one.epsilon
    # an int seed and its root key are one seed; the cell's numbers are not those of the root key itself
    root = O.optimal_epsilon(rr(), Memoryless(q=0.3, r=0.6), **dict(kw, seed=keyed.root_key(13)))
    assert np.array_equal(root.values, one.values)
    bare = engine.simulate(rr(), Memoryless(q=0.3, r=0.6), T=12, n0=40, trials=3, seed=keyed.root_key(13))
    assert not np.array_equal(bare.sq_error[..., -1].mean(axis=-1), one.values)


def test_authors_conventions_charge_a_dead_trial_ten_and_tie_at_the_first_epsilon():
    # q = 1, r = 0: everyone who leaks leaves, nobody joins -> every trial dies; the authors'
    # code floors at 0, stops the trial and charges 10: every epsilon ties, eps* = the first grid value
    res = O.optimal_epsilon(rr([0.5, 1.0, 5.0]), Memoryless(q=1.0, r=0.0), T=30, n0=20, trials=4, seed=0,
                            conventions="authors")
    assert np.all(res.values == 10.0) and res.epsilon == 0.5
    paper = O.optimal_epsilon(rr([0.5, 1.0, 5.0]), Memoryless(q=1.0, r=0.0), T=30, n0=20, trials=4, seed=0)
    assert np.all(paper.values < 10.0)


def test_bit_identical_for_one_and_two_jobs():
    users = Memoryless(q=Q_TINY, r=R_TINY)
    one = O.optimal_epsilon(rr(), users, options=sweep.Execution(n_jobs=1), **TINY)
    two = O.optimal_epsilon(rr(), users, options=sweep.Execution(n_jobs=2), **TINY)
    assert np.array_equal(one.values, two.values) and np.array_equal(one.se, two.se)
    assert np.array_equal(one.epsilon, two.epsilon)
    # paired (non-meshgrid) cells and any chunk give the same cell values
    paired = O.optimal_epsilon(rr(), Memoryless(q=Q_TINY[:, 0], r=R_TINY[:, 0]),
                               options=sweep.Execution(n_jobs=2, chunk=1), **TINY)
    assert np.array_equal(paired.values, one.values[:, 0])
    for chunk in (1, 4):
        assert np.array_equal(O.optimal_epsilon(rr(), users, options=sweep.Execution(chunk=chunk), **TINY).values,
                              one.values)


def test_the_execution_options_change_nothing_computed_and_on_cells_counts_every_cell():
    users = Memoryless(q=Q_TINY, r=R_TINY)
    plain = O.optimal_epsilon(rr(), users, **TINY)
    seen = []
    run = sweep.Execution(chunk=4, progress=False, description="mine", on_cells=seen.append)
    res = O.optimal_epsilon(rr(), users, options=run, **TINY)
    assert np.array_equal(res.values, plain.values) and np.array_equal(res.se, plain.se)
    assert sorted(seen) == [2, 4] and sum(seen) == Q_TINY.size       # 6 cells in chunks of 4


def test_a_key_array_as_seed_gives_each_cell_its_key():
    users = Memoryless(q=Q_TINY, r=R_TINY)
    keys = engine.cell_keys(21, users)
    assert keys.shape == Q_TINY.shape
    # the cells' own keys given explicitly: the numbers of the root seed
    assert np.array_equal(O.optimal_epsilon(rr(), users, **dict(TINY, seed=keys)).values,
                          O.optimal_epsilon(rr(), users, **TINY).values)
    # any keys: each cell is simulated with its key as given (not mixed with its coordinates)
    mine = keyed.root_key(5).child(np.arange(Q_TINY.size).reshape(Q_TINY.shape))
    res = O.optimal_epsilon(rr(), users, **dict(TINY, seed=mine))
    for cell in [(0, 0), (1, 2)]:
        run = engine.simulate(rr(), Memoryless(q=Q_TINY[cell], r=R_TINY[cell]), T=15, n0=40, trials=3,
                              seed=keyed.Key(mine.a[cell], mine.b[cell]))
        assert np.array_equal(res.values[cell], run.sq_error[..., -1].mean(axis=-1))
    for bad in (keyed.root_key(5).child(np.arange(Q_TINY.size)), keyed.root_key(5).child(np.arange(3))):
        with pytest.raises(ValueError, match="seed"):
            O.optimal_epsilon(rr(), users, **dict(TINY, seed=bad))


def test_users_without_coordinates_keep_the_old_numbers_with_the_keys_of_the_maps_q_and_r():
    # was optimal_epsilon(q=Q, r=R, behaviour=lambda q, r: Heterogeneous(...)): each cell keyed by its (q, r).
    # Heterogeneous reports no coordinates: seed=engine.cell_keys(seed, Memoryless(q=Q, r=R)) gives the old keys
    Q, R = np.meshgrid([0.2, 0.5], [0.4, 0.7], indexing="ij")
    users = Heterogeneous(q=np.stack([Q, Q / 2], axis=-1), weights=[0.4, 0.6], r=R)
    res = O.optimal_epsilon(rr(), users, T=10, n0=40, trials=3, seed=engine.cell_keys(17, Memoryless(q=Q, r=R)))
    assert res.values.shape == (2, 2, EPS.size)
    for cell in np.ndindex(Q.shape):
        alone = Heterogeneous(q=[Q[cell], Q[cell] / 2], weights=[0.4, 0.6], r=R[cell])
        run = engine.simulate(rr(), alone, T=10, n0=40, trials=3, seed=keyed.cell_key(17, Q[cell], R[cell]))
        assert np.array_equal(res.values[cell], run.sq_error[..., -1].mean(axis=-1))
    assert not np.array_equal(res.values[0, 0], res.values[1, 1])


def test_users_without_coordinates_are_searched_with_a_root_seed_as_each_cell_alone():
    # a cell's numbers are those it gets alone (perfpriv/optimize/_cells.py), also for users whose cells report
    # no coordinates (engine.cell_keys gives every such cell the root key)
    Q, R = np.meshgrid([0.2, 0.5], [0.4, 0.7], indexing="ij")
    users = Heterogeneous(q=np.stack([Q, Q / 2], axis=-1), weights=[0.4, 0.6], r=R)
    res = O.optimal_epsilon(rr(), users, T=10, n0=40, trials=3, seed=17)
    for cell in np.ndindex(Q.shape):
        alone = O.optimal_epsilon(rr(), Heterogeneous(q=[Q[cell], Q[cell] / 2], weights=[0.4, 0.6], r=R[cell]),
                                  T=10, n0=40, trials=3, seed=17)
        assert np.array_equal(res.values[cell], alone.values)


# ------------------------------------------------------------------------ sizes and infinite errors


def test_a_mean_field_too_long_to_record_is_refused_before_any_work():
    import tracemalloc

    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match="rounds"):
            O.mean_field_optimal_epsilon(rr([1.0]), Memoryless(q=0.3, r=0.6), T=10**9)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 50 * 2**20


def test_an_infinite_simulated_error_has_an_infinite_standard_error_not_a_warning():
    # optimize.optimal_epsilon(epsilons=1e-300, ...): std of +inf samples was inf - inf (RuntimeWarning, NaN)
    from perfpriv._stats import mean_se

    res = O.optimal_epsilon(rr(1e-300), Memoryless(q=0.3, r=0.6), T=5, n0=50, trials=2, seed=0,
                            options=sweep.Execution(progress=False))
    assert not np.isnan(res.values).any() and not np.isnan(res.se).any()
    assert np.all(np.isinf(res.se) | np.isfinite(res.values))
    mean, se = mean_se([[np.inf, 1.0], [1e300, 3e300], [1.0, 3.0]])
    assert mean.tolist() == [np.inf, 2e300, 2.0] and se.tolist() == [np.inf, 1e300, 1.0]
